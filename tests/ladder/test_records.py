"""ladder.records: every record survives its JSON form; unknown kinds are refused."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ladder import records
from ladder.records import (
    Bot,
    Forfeit,
    GameEnd,
    GameResult,
    GameStart,
    Match,
    MatchEnd,
    MatchRequest,
    MatchResult,
    MatchStatus,
    Replay,
    Strike,
    notice_from_json,
    notice_to_json,
)

SEED = 285815032738012068024793795515352762551
RESULT = MatchResult(
    match_id="m1",
    game="golden10",
    bots=("a", "b", "c"),
    scores=(3, 1, 7),
    ranks=(2, 1, 3),
    forfeits=("c",),
    games=(GameResult(SEED, ("a", "b", "c"), (3, 1, 7), (2, 1, 3), 6),),
    forfeit_reasons={"c": "3 strikes"},
    strikes={"a": 0, "b": 1, "c": 3},
)


def test_records_survive_json() -> None:
    request = MatchRequest("m1", "golden10", 3, ("a", "b", "c"), SEED, {"rounds": 2}, True, 500)
    for record in (request, RESULT, Replay(0, ("a", "b"), {"moves": []}, [{"type": "game_end"}])):
        text = json.dumps(record.to_json())  # plain JSON: seeds as decimal text
        assert type(record).from_json(json.loads(text)) == record  # type: ignore[attr-defined]
    assert RESULT.to_json()["games"][0]["seed"] == str(SEED)
    unseeded = MatchRequest("L1", "goof", 2, ("a", "b"), None, {}, False, 0)
    assert MatchRequest.from_json(unseeded.to_json()) == unseeded
    bot = Bot("b1", "alice", "1", ("goodge", "goof"))
    assert Bot.from_json(json.loads(json.dumps(bot.to_json()))) == bot
    for match in (
        Match(request, MatchStatus.FINISHED, RESULT, ""),
        Match(unseeded, MatchStatus.ABORTED, None, "x"),
    ):
        assert Match.from_json(json.loads(json.dumps(match.to_json()))) == match


def test_results_stored_with_numeric_seeds_still_read() -> None:
    stored = RESULT.to_json()
    stored["games"][0]["seed"] = 7
    assert MatchResult.from_json(stored).games[0].seed == 7


@pytest.mark.parametrize(
    "notice",
    [
        GameStart("m1", 0, 2, "goof", ("a", "b", "c"), {"rounds": 1}, "ab" * 32),
        GameEnd("m1", 1, 0, (1, 2), (2, 1), 3),
        MatchEnd("m1", RESULT),
        Strike("m1", 0, 1, "late", 2, 3),
        Forfeit("m1", 0, 1, "3 strikes"),
    ],
    ids=lambda notice: str(notice.kind),
)
def test_notices_survive_json(notice: records.Notice) -> None:
    data = json.loads(json.dumps(notice_to_json(notice)))
    assert data["kind"] == notice.kind
    assert notice_from_json(data) == notice


def test_an_unknown_notice_kind_is_refused() -> None:
    with pytest.raises(ValueError):
        notice_from_json({"kind": "victory", "match_id": "m1"})


def test_statuses_are_the_stored_strings() -> None:
    assert [str(status) for status in MatchStatus] == ["running", "finished", "aborted"]
    request = MatchRequest("m1", "goof", 2, ("a", "b"), 5, {}, False, 0)
    match = Match(request, MatchStatus("finished"), RESULT, "")
    assert match.status == "finished" and match.seed == 5


def test_the_referees_runner_and_wire_need_no_sqlalchemy() -> None:
    code = (
        "import sys, referee.runner, referee.wire_actions, referee.wire_observations, referee.wire_results,"
        " referee.channels, referee.verify;"
        "assert 'sqlalchemy' not in sys.modules, 'sqlalchemy imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
