"""ladder.tournaments on SQLite and PostgreSQL: creation, plans, scheduled runs, progress."""

from __future__ import annotations

import itertools
import secrets
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from ladder import queries, recording, schedules, tournaments
from ladder.errors import LeagueError
from ladder.models import TournamentRow
from ladder.records import PlanStatus, TournamentStatus
from ladder.store import NotFound, Store
from tests.support.ladder import count, plan_of, play, register


def test_create_tournament_plans_its_matches(store: Store) -> None:
    bots = [register(store, "rr") for _ in range(5)]
    names = [store.bot(b).name for b in bots]
    refs = [bots[0], names[1], f"{names[2]}@1", names[3], bots[4]]
    tid = tournaments.create_tournament(store, "goodge", 4, refs, deadline_ms=200, seed=5)
    view = queries.tournament(store, tid)
    assert (view.status, view.matches_total, view.matches_finished) == ("running", 5, 0)
    assert queries.tournament_status(store, tid) == TournamentStatus.RUNNING
    with pytest.raises(NotFound):
        queries.tournament_status(store, "nope")
    plan = plan_of(store, tid)
    assert [m.match_id for m in plan] == [f"{tid}-m{i:04d}" for i in range(1, 6)]
    assert sorted(tuple(sorted(m.bot_ids)) for m in plan) == sorted(
        itertools.combinations(sorted(bots), 4)
    )
    assert len({m.seed for m in plan}) == 5
    assert all(m.status == "planned" for m in plan)
    assert queries.ladders(store) == ["goodge-4p"]
    request = tournaments.planned_request(store, plan[0].match_id)
    assert request is not None
    assert (request.game, request.players, request.duplicate, request.deadline_ms) == (
        "goodge",
        4,
        True,
        200,
    )
    assert request.bot_ids == tuple(plan[0].bot_ids) and request.seed == plan[0].seed
    assert tournaments.pending_matches(store, tid) == [m.match_id for m in plan]
    assert tournaments.tournament_of(store, plan[0].match_id) == tid
    assert tournaments.tournament_of(store, "nope") is None
    assert tournaments.planned_request(store, "nope") is None


def test_create_tournament_refuses_bad_requests(store: Store) -> None:
    bots = [register(store, "bad") for _ in range(3)]
    golden_only = register(store, "g10", ["golden10"])
    cases: list[tuple[dict[str, Any], str]] = [
        ({"game": "chess"}, "no game"),
        ({"players": 9}, "played by"),
        ({"entrants": bots[:2]}, "at least 3"),
        ({"entrants": [*bots[:2], "ghost"]}, "no bot 'ghost'"),
        ({"entrants": [bots[0], bots[0], bots[1]]}, "twice"),
        ({"entrants": [*bots[:2], golden_only]}, "does not play goodge"),
        ({"schedule": "every day"}, "cron"),
        ({"options": {"colour": "red"}}, "no option"),
        ({"deadline_ms": 0}, "deadline_ms"),
    ]
    for change, message in cases:
        kwargs: dict[str, Any] = {"game": "goodge", "players": 3, "entrants": bots, **change}
        with pytest.raises(LeagueError, match=message):
            tournaments.create_tournament(store, **kwargs)
    assert count(store, TournamentRow) == 0


def test_scheduled_template_runs_once_per_minute(store: Store) -> None:
    bots = [register(store, "sch") for _ in range(3)]
    tid = tournaments.create_tournament(
        store, "golden10", 3, bots, schedule="*/10  *  * * *", name="nightly", seed=9
    )
    view = queries.tournament(store, tid)
    assert (view.status, view.schedule, view.matches_total) == ("scheduled", "*/10 * * * *", 0)
    with store.session() as session:
        template = session.get(TournamentRow, tid)
        assert template is not None
        created = template.created_at.replace(tzinfo=template.created_at.tzinfo or UTC)
    # The first due minute from the template's creation on.
    minute = created.replace(second=0, microsecond=0)
    while not schedules.is_due("*/10 * * * *", minute):
        minute += timedelta(minutes=1)
    assert tournaments.due_runs(store, minute + timedelta(seconds=30)) == [(tid, minute)]
    assert tournaments.due_runs(store, minute + timedelta(minutes=5)) == []
    assert tournaments.due_runs(store, minute - timedelta(days=1)) == []  # before it existed

    run = tournaments.start_scheduled_run(store, tid, minute + timedelta(seconds=30))
    assert run == schedules.scheduled_run_id(tid, minute)
    assert tournaments.start_scheduled_run(store, tid, minute) == run  # same minute, same run
    assert tournaments.due_runs(store, minute + timedelta(seconds=30)) == []
    runs = [v for v in queries.tournaments(store) if v.id != tid]
    assert [v.id for v in runs] == [run]
    with store.session() as session:
        row = session.get(TournamentRow, run)
        assert row is not None
        assert (row.parent_id, row.status, row.schedule) == (tid, "running", None)
        assert row.entrants == bots and row.name.startswith("nightly ")
    assert len(plan_of(store, run)) == 1
    assert queries.tournament(store, tid).status == "scheduled"
    # The next tick makes another run.
    later = minute + timedelta(minutes=10)
    assert tournaments.due_runs(store, later) == [(tid, later)]
    second = tournaments.start_scheduled_run(store, tid, later)
    assert second != run and len(plan_of(store, second)) == 1
    assert plan_of(store, second)[0].match_id != plan_of(store, run)[0].match_id
    with pytest.raises(LeagueError, match="no schedule"):
        tournaments.start_scheduled_run(store, run, later)


def test_the_deals_of_a_secret_chosen_seed_are_not_found_from_their_commitments(
    store: Store,
) -> None:
    """An operator's chosen seed kept secret keeps the deals secret while they are played:
    each match's seed, whose commitment every seat and watcher sees, is as wide as a drawn
    one, so trying seeds from a small range does not find it. The same chosen seed still
    deals the same cards."""
    bots = [register(store, "wide") for _ in range(4)]
    chosen = secrets.randbits(128)
    first = tournaments.create_tournament(store, "golden10", 3, bots, seed=chosen)
    again = tournaments.create_tournament(store, "golden10", 3, bots, seed=chosen)
    seeds = [plan.seed for plan in plan_of(store, first)]
    assert seeds == [plan.seed for plan in plan_of(store, again)]
    assert len(set(seeds)) == len(seeds)
    assert all(seed.bit_length() > 96 for seed in seeds), seeds  # 2^-32 chance each
    template = tournaments.create_tournament(
        store, "golden10", 3, bots, seed=chosen, schedule="*/10 * * * *"
    )
    minute = datetime(2026, 12, 7, 10, 0, tzinfo=UTC)
    run = tournaments.start_scheduled_run(store, template, minute)
    assert all(plan.seed.bit_length() > 96 for plan in plan_of(store, run))


def test_lost_matches_are_the_planned_ones_nobody_plays(store: Store) -> None:
    bots = [register(store, "lost") for _ in range(4)]
    tid = tournaments.create_tournament(store, "golden10", 3, bots, seed=7)
    recorded, failed, playing, waiting = tournaments.pending_matches(store, tid)
    play(store, recorded)
    assert recording.record_match(store, recorded)
    tournaments.mark_failed(store, failed)
    tournaments.mark_failed(store, recorded)  # a late failure of a recorded match's task
    statuses = {plan.match_id: plan.status for plan in plan_of(store, tid)}
    assert (statuses[recorded], statuses[failed]) == (PlanStatus.RECORDED, PlanStatus.FAILED)
    request = tournaments.planned_request(store, playing)
    assert request is not None
    store.create_match(request)  # the referee is playing it
    later = datetime.now(UTC) + timedelta(minutes=1)
    assert tournaments.lost_matches(store, later) == ([waiting], [])
    assert tournaments.lost_matches(store, later - timedelta(days=1)) == ([], [])  # too new
    complete = tournaments.create_tournament(store, "goof", 3, bots[:3], seed=8)
    (only,) = tournaments.pending_matches(store, complete)
    play(store, only)
    assert recording.record_match(store, only)
    assert tournaments.lost_matches(store, later) == ([waiting], [complete])


def test_cancelling_a_tournament_stops_its_unstarted_matches_and_keeps_the_rest(
    store: Store,
) -> None:
    bots = [register(store, "cx") for _ in range(4)]
    tid = tournaments.create_tournament(store, "golden10", 3, bots, seed=2, duplicate=False)
    recorded, running, *waiting = tournaments.pending_matches(store, tid)
    play(store, recorded)
    assert recording.record_match(store, recorded)
    # Started on the referee, not finished: it plays on and is recorded when it ends.
    store.create_match(tournaments.planned_request(store, running))  # type: ignore[arg-type]
    assert tournaments.cancel_tournament(store, tid) == waiting
    assert all(tournaments.is_cancelled(store, match_id) for match_id in waiting)
    assert not tournaments.is_cancelled(store, running)
    view = queries.tournament(store, tid)
    assert (view.status, view.matches_finished) == ("cancelled", 1)
    assert queries.tournament_status(store, tid) == TournamentStatus.CANCELLED
    assert tournaments.pending_matches(store, tid) == [running, *waiting]
    assert tournaments.lost_matches(store, datetime.now(UTC) + timedelta(days=1)) == ([], [])
    with pytest.raises(LeagueError, match="cancelled already"):
        tournaments.cancel_tournament(store, tid)


def test_a_cancelled_schedule_starts_no_more_runs(store: Store) -> None:
    bots = [register(store, "cs") for _ in range(3)]
    template = tournaments.create_tournament(store, "golden10", 3, bots, schedule="* * * * *")
    at = datetime.now(UTC) + timedelta(minutes=3)
    assert {template_id for template_id, _ in tournaments.due_runs(store, at)} == {template}
    assert tournaments.cancel_tournament(store, template) == []
    assert tournaments.due_runs(store, at) == []
    assert queries.tournament(store, template).status == "cancelled"
