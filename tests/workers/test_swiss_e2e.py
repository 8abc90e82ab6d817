"""A Swiss tournament played by a real `arena worker` against a real referee and bots.

Eight bots of Golden 10 at four players, two rounds of one-round games: the
first round seated by the draw, the second planned by the worker that
recorded the first round's last match (arena.next_round), the table stored
at the end and shown by `arena tournament show`.
"""

from __future__ import annotations

import json
from datetime import datetime
from itertools import combinations

from sqlalchemy import func, select

from ladder.models import ResultRow
from ladder.store import Store
from tests.support.ladder import check_order, plan_of
from tests.support.workers import Arena


def test_a_swiss_tournament_runs_through_the_workers(arena: Arena) -> None:
    bots = arena.bots(["rules", "random"] * 4, ["golden10"])
    arena.worker("--concurrency", "4")
    tournament_id = arena.cli(
        *("tournament", "create", "--game", "golden10", "--players", "4"),
        *("--bots", ",".join(bot.bot_id for bot in bots)),
        *("--format", "swiss", "--rounds", "2", "--option", "rounds=1"),
        *("--deadline-ms", "200", "--seed", "21", "--name", "swiss e2e"),
    ).strip()
    view = arena.wait_finished(tournament_id, 120)
    assert (view.format, view.rounds, view.round) == ("swiss", 2, 2)
    assert (view.matches_total, view.matches_finished) == (4, 4)
    check_order(view.table)
    assert sorted(line.bot_id for line in view.table) == sorted(bot.bot_id for bot in bots)
    assert {line.games for line in view.table} == {2 * 4}  # two duplicate matches of 4 games
    plan = plan_of(arena.store, tournament_id)
    assert [m.round for m in plan] == [1, 1, 2, 2]
    for number in (1, 2):
        seated = [bot for m in plan if m.round == number for bot in m.bot_ids]
        assert sorted(seated) == sorted(bot.bot_id for bot in bots)
    # Round 2 is planned from round 1's results: no table of round 1 meets again whole, and
    # its matches were recorded after every match of round 1.
    first = {frozenset(m.bot_ids) for m in plan if m.round == 1}
    assert not first & {frozenset(m.bot_ids) for m in plan if m.round == 2}
    at = recorded_at(arena.store, [m.match_id for m in plan])
    assert max(at[m.match_id] for m in plan[:2]) <= min(at[m.match_id] for m in plan[2:])

    out = arena.cli("tournament", "show", tournament_id)
    assert f"tournament {tournament_id} (swiss e2e), golden10-4p: finished" in out
    assert "Swiss: round 2 of 2" in out and "round 1:" in out and "round 2:" in out
    assert "95% interval" in out and "standing so far (" not in out  # finished: the table
    for line in view.table:
        assert line.bot in out
    shown = json.loads(arena.cli("tournament", "show", tournament_id, "--json"))
    assert [len(r["tables"]) for r in shown["pairings"]] == [2, 2]
    assert all(not r["byes"] for r in shown["pairings"])
    assert len(shown["table"]) == 8 and shown["standings"] == []
    # No pair meets three times: each round seats every bot once.
    pairs = [frozenset(p) for m in plan for p in combinations(m.bot_ids, 2)]
    assert max(pairs.count(pair) for pair in pairs) <= 2


def recorded_at(store: Store, match_ids: list[str]) -> dict[str, datetime]:
    """When each match's result was recorded."""
    with store.session() as session:
        return dict(
            session.execute(
                select(ResultRow.match_id, func.min(ResultRow.recorded_at))
                .where(ResultRow.match_id.in_(match_ids))
                .group_by(ResultRow.match_id)
            ).all()
        )
