"""The tasks' logic in process, with a stand-in referee: retries, idempotence, beat's ticks.

The stand-in writes to the store what the referee would (the match and its
result), so `play_match` records real rows; nothing is sent to a broker
(`enqueue` is captured).
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import grpc
import pytest
from sqlalchemy import select
from sqlalchemy.exc import OperationalError

from cardarena_api.v1 import arena_pb2 as pb
from ladder import queries, recording, schedules, standings_fit, tables, tournaments
from ladder.models import LadderRow, MatchRow, RatingRow, TournamentMatchRow
from ladder.records import MatchResult, TournamentFormat, TournamentStatus
from ladder.store import MatchCancelled, MatchRequest, Store
from tests.support.clock import host_clock_off
from tests.support.ladder import fake_result, register
from tests.support.processes import REPO, clean_env
from workers import WorkerSettings, make_app, tasks
from workers.celery_app import ArenaCelery, Resources


class FakeRpcError(grpc.RpcError, grpc.Call):  # type: ignore[misc]
    def __init__(self, code: grpc.StatusCode) -> None:
        self._code = code

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return self._code.name


class StandInReferee:
    """Plays a match by writing its result to the store; aborts the first `aborts` asks."""

    def __init__(self, store: Store, aborts: int = 0) -> None:
        self.store = store
        self.aborts = aborts
        self.started: list[MatchRequest] = []
        self.free: list[pb.SessionInfo] = []

    def start(self, request: MatchRequest) -> pb.Match:
        self.started.append(request)
        try:
            match, _ = self.store.create_match(request)
        except MatchCancelled:
            raise FakeRpcError(grpc.StatusCode.FAILED_PRECONDITION) from None
        if self.aborts > 0:
            self.aborts -= 1
            self.store.abort_match(request.id, "the referee stopped")
            return pb.Match(match_id=request.id, status="aborted", reason="the referee stopped")
        if match.status == "aborted":
            self.store.restart_match(request.id)
        if self.store.match(request.id).status == "running":
            n = request.players
            per_game = [[10 * ((seat + g) % n) for seat in range(n)] for g in range(n)]
            result = fake_result(request.game, request.bot_ids, per_game)
            self.store.finish_match(request.id, MatchResult.from_json(result), [])
        return pb.Match(match_id=request.id, status="running")

    def wait(self, match_id: str, timeout_s: float) -> pb.Match:
        return pb.Match(match_id=match_id, status=self.store.match(match_id).status)

    def sessions(self) -> list[pb.SessionInfo]:
        return self.free

    def close(self) -> None:
        pass


@pytest.fixture
def app(tmp_path: Path) -> Iterator[ArenaCelery]:
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    settings = WorkerSettings(database_url=db, metrics_port=0, ladder_interval_s=10)
    app = make_app(settings=settings)
    store = Store(db)
    app._resources = Resources(os.getpid(), store, StandInReferee(store))  # type: ignore[arg-type]
    sent: list[tuple[str, tuple[Any, ...]]] = []
    app.enqueue = lambda task, *args: sent.append((task, args))  # type: ignore[method-assign]
    app.sent = sent  # type: ignore[attr-defined]
    try:
        yield app
    finally:
        store.close()
        app.close()


def referee_of(app: ArenaCelery) -> StandInReferee:
    referee = app.resources().referee
    assert isinstance(referee, StandInReferee)
    return referee


def test_no_app_at_import_and_a_lazy_one_for_celery_a(tmp_path: Path) -> None:
    code = (
        "import sys, workers\n"
        "assert workers._default is None, 'an app at import'\n"
        "assert 'celery' not in [m.split('.')[0] for m in sys.modules if m.startswith('celery.worker')]\n"
        "app = workers.app\n"
        "assert isinstance(app, workers.ArenaCelery) and workers.app is app\n"
        "assert app.settings.database_url.endswith('lazy.db')\n"
        "assert app._resources is None, 'no engine before a task needs one'\n"
        "print('ok')\n"
    )
    env = {**clean_env(), "ARENA_DATABASE_URL": f"sqlite:///{tmp_path / 'lazy.db'}"}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.stdout.strip() == "ok", done.stderr
    assert not (tmp_path / "lazy.db").exists()


def test_settings_defaults_and_embedded_broker(tmp_path: Path, monkeypatch: Any) -> None:
    for name in list(os.environ):
        if name.startswith("ARENA_"):
            monkeypatch.delenv(name)
    db = f"sqlite:///{tmp_path / 'data' / 'arena.db'}"
    settings = WorkerSettings.from_env(database_url=db)
    assert settings.embedded and settings.broker_url.startswith("filesystem://")
    assert settings.folder == tmp_path / "data" / ".arena"
    assert (
        settings.result_backend() == f"db+sqlite:///{tmp_path / 'data' / '.arena' / 'results.db'}"
    )
    assert (settings.referee, settings.metrics_port, settings.ladder_interval_s) == (
        "127.0.0.1:50051",
        9102,
        30.0,
    )
    app = make_app(settings=settings)
    try:
        conf = app.conf
        assert conf.task_acks_late and conf.task_reject_on_worker_lost
        assert conf.worker_prefetch_multiplier == 1 and conf.task_serializer == "json"
        options = conf.broker_transport_options
        assert Path(options["data_folder_in"]).is_dir()
        assert options["data_folder_in"] == options["data_folder_out"]
        assert set(conf.beat_schedule) == {"run-schedules", "ladder-tick", "sweep"}
        assert {name for name in app.tasks if name.startswith("arena.")} == {
            tasks.PLAY_MATCH,
            tasks.CREATE_ROUND_ROBIN,
            tasks.NEXT_ROUND,
            tasks.FINISH_TOURNAMENT,
            tasks.RUN_SCHEDULES,
            tasks.LADDER_TICK,
            tasks.SWEEP,
        }
    finally:
        app.close()

    monkeypatch.setenv("ARENA_BROKER_URL", "redis://127.0.0.1:6379/5")
    monkeypatch.setenv("ARENA_LADDER_INTERVAL_S", "0")
    monkeypatch.setenv("ARENA_REFEREE", "referee:50051")
    monkeypatch.setenv("ARENA_LADDER_OVERDUE_S", "900")
    monkeypatch.setenv("ARENA_LADDER_RECENT_MATCHES", "50")
    redis_settings = WorkerSettings.from_env(database_url=db)
    assert (settings.ladder_overdue_s, settings.ladder_recent_matches) == (600.0, 200)
    assert (redis_settings.ladder_overdue_s, redis_settings.ladder_recent_matches) == (900.0, 50)
    assert redis_settings.result_backend() == "redis://127.0.0.1:6379/5"
    assert redis_settings.referee == "referee:50051"
    options = redis_settings.transport_options()
    assert "visibility_timeout" in options
    # A worker killed mid-sweep holds the sweep's mutex no longer than one sweep.
    assert options["unacked_mutex_expire"] == options["unacked_restore_interval"] <= 10
    app = make_app(settings=redis_settings)
    try:
        # no ladder at interval 0
        assert set(app.conf.beat_schedule) == {"run-schedules", "sweep"}
    finally:
        app.close()


def test_retryable_errors() -> None:
    assert tasks.retryable(FakeRpcError(grpc.StatusCode.UNAVAILABLE))
    assert tasks.retryable(FakeRpcError(grpc.StatusCode.DEADLINE_EXCEEDED))
    assert not tasks.retryable(FakeRpcError(grpc.StatusCode.INVALID_ARGUMENT))
    assert tasks.retryable(OperationalError("select", {}, Exception("database is locked")))
    assert tasks.retryable(tasks.MatchAborted("again"))
    assert not tasks.retryable(ValueError("bad"))
    delays = [tasks.backoff_s(n) for n in range(12)]
    assert 1.5 < delays[0] < 2.5 and max(delays) <= tasks.MAX_BACKOFF_S * 1.2


def test_play_match_asks_again_after_an_abort_and_records_once(app: ArenaCelery) -> None:
    store = app.resources().store
    bots = [register(store, "t") for _ in range(3)]
    tid = tournaments.create_tournament(store, "golden10", 3, bots, seed=1)
    (match_id,) = tournaments.pending_matches(store, tid)
    referee = referee_of(app)
    referee.aborts = 2
    assert tasks.play_match(app, match_id) == "recorded"
    assert len(referee.started) == 3
    assert referee.started[0] == tournaments.planned_request(store, match_id)
    # Its last match recorded, the tournament is finished by the same task: no other is sent.
    assert app.sent == []  # type: ignore[attr-defined]
    assert queries.tournament_status(store, tid) == TournamentStatus.FINISHED
    assert queries.tournament(store, tid).table
    assert tasks.finish_tournament(app, tid) is True
    assert app.metrics.tournaments_finished._value.get() == 1
    assert app.metrics.matches_recorded.labels("golden10-3p")._value.get() == 1
    assert app.metrics.rating_updates.labels("golden10-3p")._value.get() == 3

    # Redelivered: nothing is asked of the referee, nothing counted twice.
    assert tasks.play_match(app, match_id) == "already recorded"
    assert len(referee.started) == 3
    assert app.metrics.matches_recorded.labels("golden10-3p")._value.get() == 1
    assert tasks.create_round_robin(app, tid) == 0
    assert tasks.play_match(app, "no-such-match") == "unknown"


def test_only_the_last_match_recorded_finishes_its_tournament(app: ArenaCelery) -> None:
    store = app.resources().store
    bots = [register(store, "t") for _ in range(4)]
    tid = tournaments.create_tournament(store, "golden10", 3, bots, seed=4)
    first, *others = tournaments.pending_matches(store, tid)
    assert tasks.play_match(app, first) == "recorded"
    assert queries.tournament_status(store, tid) == TournamentStatus.RUNNING
    for match_id in others:
        assert tasks.play_match(app, match_id) == "recorded"
    view = queries.tournament(store, tid)
    assert view.status == TournamentStatus.FINISHED and len(view.table) == len(bots)
    assert app.sent == []  # type: ignore[attr-defined]
    # A redelivered task finds the tournament finished and leaves its table as it is.
    assert tasks.play_match(app, first) == "already recorded"
    assert queries.tournament(store, tid).table == view.table
    assert app.metrics.tournaments_finished._value.get() == 1


def test_a_match_cancelled_just_after_the_worker_looked_is_not_played(
    app: ArenaCelery, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The operator cancels the tournament between the worker's look at the plan and its
    StartMatch: the referee refuses the match, and the task ends "cancelled" (no retry,
    not failed); nothing is stored, played or rated."""
    store = app.resources().store
    bots = [register(store, "t") for _ in range(3)]
    tid = tournaments.create_tournament(store, "goof", 3, bots, seed=2)
    (match_id,) = tournaments.pending_matches(store, tid)
    looked = tournaments.is_cancelled

    def cancelled_just_after(store: Store, match_id: str) -> bool:
        cancelled = looked(store, match_id)
        assert tournaments.cancel_tournament(store, tid) == [match_id]
        return cancelled

    monkeypatch.setattr(tournaments, "is_cancelled", cancelled_just_after)
    assert tasks.play_match(app, match_id) == "cancelled"
    with store.session() as session:
        assert session.get(MatchRow, match_id) is None
        plan = session.get(TournamentMatchRow, match_id)
        assert plan is not None and plan.status == "cancelled"
        assert session.scalars(select(RatingRow)).all() == []
    assert app.sent == []  # type: ignore[attr-defined]


def test_a_tournament_is_counted_finished_by_the_call_that_finished_it(
    app: ArenaCelery, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another worker finishes the tournament just before this one does: it is counted
    once, by that worker, not again here."""
    store = app.resources().store
    bots = [register(store, "t") for _ in range(3)]
    tid = tournaments.create_tournament(store, "goof", 3, bots, seed=3)
    (match_id,) = tournaments.pending_matches(store, tid)
    request = tournaments.planned_request(store, match_id)
    assert request is not None
    referee_of(app).start(request)
    assert recording.record_match(store, match_id)
    finish = tables.finish_tournament

    def another_worker_first(store: Store, tournament_id: str) -> object:
        assert finish(store, tournament_id)
        return finish(store, tournament_id)

    monkeypatch.setattr(tables, "finish_tournament", another_worker_first)
    assert tasks.finish_tournament(app, tid) is True
    assert app.metrics.tournaments_finished._value.get() == 0


def test_play_match_gives_up_when_the_referee_keeps_aborting(app: ArenaCelery) -> None:
    store = app.resources().store
    bots = [register(store, "t") for _ in range(3)]
    tid = tournaments.create_tournament(store, "goof", 3, bots, seed=2)
    (match_id,) = tournaments.pending_matches(store, tid)
    referee_of(app).aborts = tasks.ABORTS_PER_ATTEMPT
    with pytest.raises(tasks.MatchAborted):
        tasks.play_match(app, match_id)
    assert not recording.is_recorded(store, match_id)
    # The next attempt (Celery's retry) finds the referee playing again.
    assert tasks.play_match(app, match_id) == "recorded"


def test_create_round_robin_enqueues_the_unrecorded_matches(app: ArenaCelery) -> None:
    store = app.resources().store
    bots = [register(store, "t") for _ in range(4)]
    tid = tournaments.create_tournament(store, "golden10", 3, bots, seed=3)
    match_ids = tournaments.pending_matches(store, tid)
    assert tasks.play_match(app, match_ids[0]) == "recorded"
    app.sent.clear()  # type: ignore[attr-defined]
    assert tasks.create_round_robin(app, tid) == 3
    assert app.sent == [(tasks.PLAY_MATCH, (m,)) for m in match_ids[1:]]  # type: ignore[attr-defined]


def test_a_swiss_round_recorded_sends_the_next_rounds_planning_once(
    app: ArenaCelery, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Swiss tournament: the match that completes a round sends next_round, which plans
    the round and enqueues its matches; a second next_round (a race, a redelivery) does
    nothing; the last round's last match finishes the tournament."""
    store = app.resources().store
    sent = app.sent  # type: ignore[attr-defined]
    bots = [register(store, "t") for _ in range(8)]
    tid = tournaments.create_tournament(
        store, "golden10", 4, bots, seed=5, format=TournamentFormat.SWISS, rounds=2
    )
    first, last = tournaments.pending_matches(store, tid)
    assert tasks.play_match(app, first) == "recorded"
    assert sent == []
    assert tasks.play_match(app, last) == "recorded"
    assert sent == [(tasks.NEXT_ROUND, (tid,))]
    assert tasks.create_round_robin(app, tid) == 0  # nothing to play: the round is due
    assert sent[1:] == [(tasks.NEXT_ROUND, (tid,))]
    sent.clear()
    # A next_round lost on its way: the sweep, the queue empty, sends it again.
    monkeypatch.setattr(app, "settings", dataclasses.replace(app.settings, sweep_age_s=0))
    monkeypatch.setattr(tasks, "queue_length", lambda app: 0)
    assert tasks.sweep(app) == []
    assert sent == [(tasks.NEXT_ROUND, (tid,))]
    sent.clear()
    assert tasks.next_round(app, tid) == 2
    planned = tournaments.pending_matches(store, tid)
    assert sent == [(tasks.PLAY_MATCH, (m,)) for m in planned]
    assert tasks.next_round(app, tid) == 0
    assert len(sent) == 2
    sent.clear()
    for match_id in planned:
        assert tasks.play_match(app, match_id) == "recorded"
    assert sent == []
    view = queries.tournament(store, tid)
    assert (view.status, view.round, len(view.table)) == ("finished", 2, 8)


def test_run_schedules_starts_each_due_run_once(app: ArenaCelery) -> None:
    store = app.resources().store
    bots = [register(store, "t") for _ in range(3)]
    template = tournaments.create_tournament(store, "golden10", 3, bots, schedule="* * * * *")
    now = datetime.now(UTC).timestamp()
    started = tasks.run_schedules(app, now)
    minute = datetime.fromtimestamp(now, UTC)
    # This minute's run (and the previous minute's, if the template was made in it).
    assert started[-1] == schedules.scheduled_run_id(template, minute) and len(started) <= 2
    assert app.sent == [(tasks.CREATE_ROUND_ROBIN, (run,)) for run in started]  # type: ignore[attr-defined]
    # A second later, within the same minute (a second later may be the next minute, whose
    # run is due then: the test failed when its clock read hh:mm:59).
    later = min(now + 1, minute.replace(second=59, microsecond=0).timestamp())
    assert tasks.run_schedules(app, max(later, now)) == []
    assert queries.tournament(store, started[0]).matches_total == 1


def test_ladder_tick_pairs_free_bots_fairly(app: ArenaCelery) -> None:
    store = app.resources().store
    bots = [register(store, "t") for _ in range(7)]
    tournaments.create_tournament(store, "goof", 3, bots[:3], schedule="0 0 1 1 *")  # the ladder
    referee = referee_of(app)
    referee.free = [pb.SessionInfo(bot_id=b, capacity=2, busy=0) for b in bots[:6]]
    referee.free.append(pb.SessionInfo(bot_id=bots[6], capacity=1, busy=1))  # busy: left out
    started = tasks.ladder_tick(app, "abc123")
    assert started == ["Labc123-goof-3p-0", "Labc123-goof-3p-1"]
    assert {b for r in referee.started for b in r.bot_ids} == set(bots[:6])
    assert app.sent == [(tasks.PLAY_MATCH, (m,)) for m in started]  # type: ignore[attr-defined]
    for match_id in started:
        assert tasks.play_match(app, match_id) == "recorded"
        assert tournaments.tournament_of(store, match_id) is None
    # New bots: their first ladder matches are practice, rating nobody.
    assert queries.standings(store, "goof-3p") == []
    practice = queries.in_practice(store, "goof-3p")
    assert sorted(line.bot_id for line in practice) == sorted(bots[:6])
    assert {line.played for line in practice} == {1}
    assert queries.recent_matches(store)[0].tournament_id is None

    app.settings = WorkerSettings(database_url=app.settings.database_url, ladder_interval_s=0)
    assert tasks.ladder_tick(app, "def456") == []


class RefusingConnection:
    """A broker connection whose channel answers every queue declaration with `error`."""

    def __init__(self, error: Exception) -> None:
        self.error = error
        self.default_channel = self

    def __enter__(self) -> RefusingConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def queue_declare(self, queue: str, passive: bool = False) -> None:
        raise self.error


def test_queue_length_knows_a_missing_queue_by_its_reply_code(
    app: ArenaCelery, monkeypatch: pytest.MonkeyPatch
) -> None:
    from amqp.exceptions import NotFound, PreconditionFailed
    from kombu import Connection

    # kombu's virtual transports (Redis, the embedded broker) refuse a passive declaration
    # of a missing queue with a ChannelError whose reply code is the text "404".
    memory = Connection("memory://")
    channel = memory.default_channel
    monkeypatch.setattr(channel, "_has_queue", lambda queue, **_: False)
    monkeypatch.setattr(app, "connection_for_write", lambda: memory)
    assert tasks.queue_length(app) == 0
    # py-amqp (RabbitMQ) raises NotFound, code 404.
    missing = NotFound("NOT_FOUND - no queue 'arena'", (50, 10), "Channel.queue_declare")
    monkeypatch.setattr(app, "connection_for_write", lambda: RefusingConnection(missing))
    assert tasks.queue_length(app) == 0
    # Any other refusal is not an empty queue, whatever its text says.
    other = PreconditionFailed("PRECONDITION_FAILED - NOT_FOUND", (50, 10), "Channel.queue_declare")
    monkeypatch.setattr(app, "connection_for_write", lambda: RefusingConnection(other))
    assert tasks.queue_length(app) is None


def test_play_match_refits_the_ladder_and_the_sweep_repairs_a_failed_refit(
    app: ArenaCelery, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    store = app.resources().store
    bots = [register(store, "fit") for _ in range(4)]
    tid = tournaments.create_tournament(store, "golden10", 3, bots, seed=6)
    first, *others = tournaments.pending_matches(store, tid)

    def unreachable(store: Store, ladder: str) -> bool:
        raise OperationalError("UPDATE ladders", {}, Exception("the database went away"))

    # The refit fails after the result is recorded: logged, the result stays.
    monkeypatch.setattr(standings_fit, "refresh_fit", unreachable)
    assert tasks.play_match(app, first) == "recorded"
    assert "golden10-3p: the standings were not refitted" in caplog.text
    assert all(line.se is None for line in queries.standings(store, "golden10-3p"))
    monkeypatch.undo()
    # The sweep finds the ladder's fit missing and makes it.
    tasks.sweep(app)
    assert all(line.se is not None for line in queries.standings(store, "golden10-3p"))

    # Each match recorded refits the ladder: its fit is newer after each.
    def fitted_at() -> datetime | None:
        with store.session() as session:
            return session.scalar(select(LadderRow.fitted_at).where(LadderRow.id == "golden10-3p"))

    for match_id in others:
        before = fitted_at()
        assert tasks.play_match(app, match_id) == "recorded"
        after = fitted_at()
        assert before is not None and after is not None and after > before
    games = standings_fit.ladder_games(store, "golden10-3p")
    assert len(games.rankings) == 4 * 3 and games.bots == sorted(bots)
    lines = queries.standings(store, "golden10-3p")  # the stand-in deals every bot alike
    assert all(line.se is not None for line in lines)

    # A ladder match with a new bot is practice: the rated games, and the fit, stay as they
    # were, so it is not refitted.
    request = MatchRequest(
        "ladder-practice", "golden10", 3, (register(store, "new"), *bots[:2]), None, {}, True, 0
    )
    store.create_match(request)
    before = fitted_at()
    assert tasks.play_match(app, request.id) == "recorded"
    assert not standings_fit.rated(store, request.id) and standings_fit.rated(store, others[0])
    assert fitted_at() == before


def test_a_worker_whose_clock_runs_ahead_takes_no_fresh_match_for_lost(
    app: ArenaCelery, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sweep judges a tournament's age by the database's clock: on a worker whose own
    clock runs an hour ahead, a tournament planned a moment ago has lost nothing."""
    store = app.resources().store
    bots = [register(store, "fresh") for _ in range(3)]
    tournaments.create_tournament(store, "goof", 3, bots, seed=2, duplicate=False)
    monkeypatch.setattr(tasks, "queue_length", lambda app: 0)
    with host_clock_off(timedelta(hours=1)):
        assert tasks.sweep(app) == []
    assert app.sent == []  # type: ignore[attr-defined]
