"""ladder.tables on SQLite and PostgreSQL: the tournament table and head-to-head."""

from __future__ import annotations

import pytest

from ladder import plackett_luce, queries, recording, tables, tournaments
from ladder.errors import LeagueError
from ladder.models import TournamentRow
from ladder.store import Store
from tests.support.ladder import play, register


def test_finish_tournament_stores_the_table(store: Store) -> None:
    bots = [register(store, "fin") for _ in range(5)]
    strength = {bot: 10 * i for i, bot in enumerate(bots)}  # bots[-1] is strongest
    tid = tournaments.create_tournament(store, "goodge", 4, bots, seed=6)
    match_ids = tournaments.pending_matches(store, tid)
    for match_id in match_ids[:-1]:
        play(store, match_id, strength)
        assert recording.record_match(store, match_id)
    assert not tournaments.tournament_complete(store, tid)
    assert not tournaments.ready_to_finish(store, tid)
    assert tables.finish_tournament(store, tid) is tables.Finished.NOT
    assert queries.tournament(store, tid).status == "running"
    play(store, match_ids[-1], strength)
    assert recording.record_match(store, match_ids[-1])
    assert tournaments.ready_to_finish(store, tid)
    assert tables.finish_tournament(store, tid) is tables.Finished.NOW
    view = queries.tournament(store, tid)
    assert (view.status, view.matches_total, view.matches_finished) == ("finished", 5, 5)
    assert view.finished_at is not None
    with store.session() as session:
        row = session.get(TournamentRow, tid)
        assert row is not None and row.table is not None
        stored = row.table
    assert [set(line) for line in stored] == [
        {"bot_id", "rating", "ci_low", "ci_high", "games", "measured", "bound", "reason"}
    ] * 5
    # Every game puts the bots in the same strict order: no rating is finite.
    # One bot (the first entered, on a tie of group size and games) anchors
    # the table at 1500; each other is only known to be above it.
    anchor, *bounded = reversed(stored)
    assert (anchor["bot_id"], anchor["measured"], anchor["rating"]) == (bots[0], True, 1500.0)
    assert (anchor["bound"], anchor["reason"]) == (None, plackett_luce.ALONE)
    for line in bounded:
        assert (line["measured"], line["bound"], line["ci_high"]) == (False, "above", None)
        assert isinstance(line["rating"], float) and line["rating"] == line["ci_low"]
        assert line["reason"] == "ahead of every measured entrant in all 12 of its games with them"
    for line in stored:
        assert line["games"] == 16  # 4 duplicate matches of 4 games each
    # Idempotent.
    finished_at = view.finished_at
    assert tables.finish_tournament(store, tid) is tables.Finished.BEFORE
    again = queries.tournament(store, tid)
    assert again.finished_at == finished_at and again.table == view.table
    assert not tournaments.ready_to_finish(store, tid)

    los = tables.tournament_los(store, tid, bots[-1], store.bot(bots[0]).name)
    assert (los["a"], los["b"]) == (bots[-1], bots[0])
    assert (los["wins"], los["draws"], los["losses"]) == (12, 0, 0)  # 3 matches x 4 games
    assert los["los"] > 0.99
    assert los["sprt"]["decision"] in ("H0", "H1", "continue")
    with pytest.raises(LeagueError, match="different"):
        tables.tournament_los(store, tid, bots[0], bots[0])
    with pytest.raises(LeagueError, match="no bot"):
        tables.tournament_los(store, tid, bots[0], "ghost")
