"""The arena's Celery tasks. Each takes ids, re-reads the state, and is idempotent.

- `arena.create_round_robin(tournament_id)`: enqueue `play_match` for every
  planned match not yet recorded (a round robin's, or a Swiss tournament's
  current round's).
- `arena.play_match(match_id)`: ask the referee to play it (idempotent by
  id; an aborted match is asked again), wait for its end, record it exactly
  once, refit its ladder's standings (`ladder.standings_fit`) when the
  match was rated, and finish its tournament (the table) when that
  completed it.
- `arena.next_round(tournament_id)`: plan a Swiss tournament's next round
  (`ladder.swiss_rounds`) and enqueue its matches; `play_match` sends it
  when the match it recorded was its round's last.
- `arena.finish_tournament(tournament_id)`: the maximum-likelihood table (for
  a tournament found complete other than by recording its last match).
- `arena.run_schedules()` (beat, every minute): start due scheduled runs.
- `arena.ladder_tick()` (beat, every ARENA_LADDER_INTERVAL_S): seat the
  connected bots that are free at ladder tables (`ladder.continuous`: by
  what each game would teach, the overdue first).
- `arena.sweep()` (beat, every ARENA_SWEEP_INTERVAL_S): when the queue is
  empty, enqueue `play_match` again for running tournaments' matches that
  are neither recorded nor playing, planned more than ARENA_SWEEP_AGE_S ago
  (their tasks were lost, e.g. by a broker restarted without its data), and
  `finish_tournament` for complete ones (`next_round` for a Swiss
  tournament whose recorded round is not its last). First, whatever the
  queue, it records the finished challenges that their referee failed to
  record, and refits the standings of ladders whose fit may miss a result.

Transient failures (the referee unreachable or slow, a database error, a
match aborted by a dying referee) are retried with exponential back-off, a
bounded number of times. A redelivered task (acks late: a worker died
mid-task) does the same work again and counts nothing twice.
"""

from __future__ import annotations

import logging
import random
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any, NoReturn

import grpc
from celery import Task
from celery.schedules import crontab
from kombu.exceptions import ChannelError
from sqlalchemy.exc import DBAPIError

from ladder import (
    continuous,
    queries,
    recording,
    standings_fit,
    swiss_rounds,
    tables,
    tournaments,
)
from ladder.errors import LeagueError
from ladder.matchmaking import MatchmakingConfig
from ladder.records import MatchStatus
from ladder.store import NotFound
from workers.celery_app import QUEUE, ArenaCelery
from workers.referee_client import RefereeCallFailed, is_transient, refused_as_cancelled
from workers.settings import WorkerSettings

log = logging.getLogger(__name__)

PLAY_MATCH = "arena.play_match"
CREATE_ROUND_ROBIN = "arena.create_round_robin"
NEXT_ROUND = "arena.next_round"
FINISH_TOURNAMENT = "arena.finish_tournament"
RUN_SCHEDULES = "arena.run_schedules"
LADDER_TICK = "arena.ladder_tick"
SWEEP = "arena.sweep"

ABORTS_PER_ATTEMPT = 3
"""How often one play_match attempt asks again for a match the referee aborted."""

MAX_BACKOFF_S = 300.0

AMQP_NOT_FOUND = 404
"""AMQP's reply code for a queue that does not exist."""


class MatchAborted(RuntimeError):
    """The referee kept aborting the match (it stopped or failed while playing)."""


class WrongDatabase(RuntimeError):
    """The referee played a match this worker's database does not hold."""


def backoff_s(retries: int) -> float:
    """Seconds before retry number `retries` + 1: 2, 4, 8, ... up to 300, with jitter."""
    return min(MAX_BACKOFF_S, 2.0 * (1 << min(retries, 16))) * random.uniform(0.8, 1.2)


def retryable(error: BaseException) -> bool:
    """Whether an error may go away if the task runs again later."""
    if isinstance(error, grpc.RpcError):
        return is_transient(error)
    if isinstance(error, RefereeCallFailed):
        return error.transient
    return isinstance(error, DBAPIError | MatchAborted | recording.NotFinished)


def play_match(app: ArenaCelery, match_id: str) -> str:
    """Play and record one match; what happened, in a word."""
    res = app.resources()
    store = res.store
    outcome = "already recorded"
    if tournaments.is_cancelled(store, match_id):
        log.info("match %s: its tournament was cancelled; not played", match_id)
        return "cancelled"
    if not recording.is_recorded(store, match_id):
        request = tournaments.planned_request(store, match_id)
        if request is None:
            log.error("match %s: no tournament plans it and the referee never started it", match_id)
            return "unknown"
        match = None
        for _ in range(ABORTS_PER_ATTEMPT):
            try:
                match = res.referee.start(request)
            except grpc.RpcError as error:
                # Cancelled since it was looked at above: the referee's store refused it.
                if not refused_as_cancelled(error):
                    raise
                log.info("match %s: its tournament was cancelled; not played", match_id)
                return "cancelled"
            if match.status == MatchStatus.RUNNING:
                match = res.referee.wait(match_id, app.settings.match_timeout_s)
            if match.status == MatchStatus.FINISHED:
                break
            log.warning("match %s %s (%s): asking again", match_id, match.status, match.reason)
        if match is None or match.status != MatchStatus.FINISHED:
            reason = "" if match is None else match.reason
            raise MatchAborted(f"match {match_id} did not finish: {reason}")
        try:
            recorded = recording.record_match(store, match_id, app.settings.ladder_practice_matches)
        except NotFound:
            raise WrongDatabase(
                f"the referee at {app.settings.referee} finished match {match_id}, but the "
                f"database {app.settings.database_url} does not hold it: workers and referee "
                "must share one database"
            ) from None
        if recorded:
            lid = queries.ladder_id(request.game, request.players)
            app.metrics.matches_recorded.labels(lid).inc()
            app.metrics.rating_updates.labels(lid).inc(request.players)
            outcome = "recorded"
            # A practice match leaves the rated games, and so the fit, as they were.
            if standings_fit.rated(store, match_id):
                refresh_standings(app, lid)
    tournament_id = tournaments.tournament_of(store, match_id)
    if tournament_id is not None and tournaments.ready_to_finish(store, tournament_id):
        # Here rather than in a task of its own: the table follows the last result at
        # once, not one more trip through the broker later (up to its polling interval).
        finish_tournament(app, tournament_id)
    elif tournament_id is not None and tournaments.round_due(store, tournament_id):
        app.enqueue(NEXT_ROUND, tournament_id)
    return outcome


def refresh_standings(app: ArenaCelery, lid: str) -> None:
    """Refit the ladder's standings (`ladder.standings_fit`) after a recorded result.

    Outside the recording's transaction: the result is safe whatever happens
    here. A failure is logged and not retried: the fit is of all the games,
    so the next result's refresh, or the sweep's, puts everything right.
    """
    try:
        standings_fit.refresh_fit(app.resources().store, lid)
    except Exception:
        log.exception("ladder %s: the standings were not refitted; the next refresh will", lid)


def create_round_robin(app: ArenaCelery, tournament_id: str) -> int:
    """Enqueue the tournament's matches that are not recorded; how many."""
    store = app.resources().store
    pending = tournaments.pending_matches(store, tournament_id)
    for match_id in pending:
        app.enqueue(PLAY_MATCH, match_id)
    if not pending and tournaments.ready_to_finish(store, tournament_id):
        app.enqueue(FINISH_TOURNAMENT, tournament_id)
    elif not pending and tournaments.round_due(store, tournament_id):
        app.enqueue(NEXT_ROUND, tournament_id)
    return len(pending)


def next_round(app: ArenaCelery, tournament_id: str) -> int:
    """Plan a Swiss tournament's next round and enqueue its matches; how many.

    Only the worker whose fenced UPDATE moved the round on enqueues them: a second
    `next_round` for the same round (two last matches recorded at once, a redelivered
    task) plans and enqueues nothing. Matches whose task was lost (the worker died
    between the two) are the sweep's.
    """
    planned = swiss_rounds.next_round(app.resources().store, tournament_id)
    for match_id in planned:
        app.enqueue(PLAY_MATCH, match_id)
    if planned:
        log.info("tournament %s: next round planned, %d matches", tournament_id, len(planned))
    return len(planned)


def finish_tournament(app: ArenaCelery, tournament_id: str) -> bool:
    """Store the tournament's table once every match is recorded; True once it is finished."""
    finished = tables.finish_tournament(app.resources().store, tournament_id)
    if finished == tables.Finished.NOW:
        app.metrics.tournaments_finished.inc()
    return bool(finished)


def run_schedules(app: ArenaCelery, now: float | None = None) -> list[str]:
    """Start the runs of scheduled templates that are due; their ids."""
    store = app.resources().store
    at = datetime.fromtimestamp(time.time() if now is None else now, UTC)
    started = []
    for template_id, minute in tournaments.due_runs(store, at):
        try:
            run_id = tournaments.start_scheduled_run(store, template_id, minute)
        except LeagueError as error:
            log.info("scheduled tournament %s: %s", template_id, error)  # cancelled meanwhile
            continue
        app.enqueue(CREATE_ROUND_ROBIN, run_id)
        started.append(run_id)
        log.info("scheduled tournament %s: started run %s", template_id, run_id)
    return started


def ladder_tick(app: ArenaCelery, tick: str) -> list[str]:
    """Start ladder matches between connected bots with a free slot; their ids.

    `tick` names this tick (the task's id, so a redelivered tick asks the
    referee for the same matches, which it plays once).
    """
    settings = app.settings
    if settings.ladder_interval_s <= 0:
        return []
    res = app.resources()
    try:
        sessions = res.referee.sessions()
    except grpc.RpcError as error:
        log.warning("ladder tick: cannot list the referee's sessions: %s", error)
        return []
    free = {s.bot_id: s.capacity - s.busy for s in sessions if s.capacity > s.busy}
    ladder_config = MatchmakingConfig(overdue_s=settings.ladder_overdue_s)
    started = []
    for lid in settings.ladders or tuple(queries.ladders(res.store)):
        candidates = [bot for bot, slots in free.items() if slots > 0]
        try:
            requests = continuous.plan_ladder_matches(
                res.store,
                lid,
                candidates,
                tick,
                duplicate=settings.ladder_duplicate,
                deadline_ms=settings.ladder_deadline_ms,
                config=ladder_config,
                recent_matches=settings.ladder_recent_matches,
            )
        except NotFound:
            log.warning("ladder tick: no ladder %s", lid)
            continue
        for request in requests:
            try:
                res.referee.start(request)
            except grpc.RpcError as error:
                log.warning("ladder tick: match %s not started: %s", request.id, error)
                continue
            for bot in request.bot_ids:
                free[bot] -= 1
            app.enqueue(PLAY_MATCH, request.id)
            started.append(request.id)
    return started


def queue_length(app: ArenaCelery) -> int | None:
    """Messages waiting in the arena's queue (None when the broker cannot say)."""
    try:
        with app.connection_for_write() as connection:
            channel: Any = connection.default_channel
            declared = channel.queue_declare(QUEUE, passive=True)
            return int(declared.message_count)
    except ChannelError as error:
        # py-amqp gives the reply code as a number, kombu's virtual transports
        # (Redis, the embedded broker) as the text "404".
        if str(error.reply_code) == str(AMQP_NOT_FOUND):
            return 0  # no such queue (e.g. a broker restarted empty): nothing waits
        log.warning("sweep: cannot count the queue: %s", error)
        return None
    except Exception as error:
        log.warning("sweep: cannot count the queue: %s", error)
        return None


def sweep(app: ArenaCelery) -> list[str]:
    """Enqueue again the matches whose tasks were lost (only when the queue is empty)."""
    store = app.resources().store
    recorded = recording.record_challenges(store)
    if recorded:
        log.warning("sweep: recorded %d challenges left unrecorded: %s", len(recorded), recorded)
    for lid in standings_fit.stale_ladders(store):
        refresh_standings(app, lid)
    if queue_length(app) != 0:
        return []
    # The database's clock, which the tournaments' creation was stored by.
    planned_before = store.database_now() - timedelta(seconds=app.settings.sweep_age_s)
    lost, complete = tournaments.lost_matches(store, planned_before)
    for match_id in lost:
        app.enqueue(PLAY_MATCH, match_id)
    for tournament_id in complete:
        due = tournaments.round_due(store, tournament_id)
        app.enqueue(NEXT_ROUND if due else FINISH_TOURNAMENT, tournament_id)
    if lost:
        log.warning("sweep: %d matches had no task; enqueued again: %s", len(lost), lost)
    return lost


def beat_schedule(settings: WorkerSettings) -> dict[str, dict[str, Any]]:
    """What beat sends when: every minute the schedules, and the ladder and sweep if on."""
    schedule: dict[str, dict[str, Any]] = {
        "run-schedules": {
            "task": RUN_SCHEDULES,
            "schedule": crontab(),
            "options": {"queue": QUEUE, "expires": 55},
        }
    }
    if settings.ladder_interval_s > 0:
        schedule["ladder-tick"] = {
            "task": LADDER_TICK,
            "schedule": settings.ladder_interval_s,
            "options": {"queue": QUEUE, "expires": settings.ladder_interval_s},
        }
    if settings.sweep_interval_s > 0:
        schedule["sweep"] = {
            "task": SWEEP,
            "schedule": settings.sweep_interval_s,
            "options": {"queue": QUEUE, "expires": settings.sweep_interval_s},
        }
    return schedule


def register(app: ArenaCelery) -> None:
    """Register the tasks on `app`, and beat's schedule of the periodic ones."""
    settings = app.settings
    app.conf.beat_schedule = beat_schedule(settings)

    def retry(task: Task[Any, Any], error: Exception) -> NoReturn:
        """Retry later with back-off if `error` may pass, else fail with it."""
        if isinstance(error, grpc.RpcError):
            # gRPC's exceptions do not survive the result backend's serialiser.
            error = RefereeCallFailed.of(error)
        if not retryable(error):
            raise error
        countdown = backoff_s(task.request.retries)
        log.warning("%s: %s; retrying in %.0f s", task.name, error, countdown)
        raise task.retry(exc=error, countdown=countdown, max_retries=settings.max_retries)

    @app.task(name=PLAY_MATCH, bind=True, shared=False)
    def play_match_task(self: Task[Any, Any], match_id: str) -> str:
        try:
            return play_match(app, match_id)
        except grpc.RpcError as error:
            code = error.code() if isinstance(error, grpc.Call) else None
            if code in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.ALREADY_EXISTS):
                # The referee refuses this match for good (e.g. a bot no longer plays the game).
                tournaments.mark_failed(app.resources().store, match_id)
                log.error("match %s refused by the referee: %s", match_id, error)
            retry(self, error)
        except Exception as error:
            retry(self, error)

    @app.task(name=CREATE_ROUND_ROBIN, bind=True, shared=False)
    def create_round_robin_task(self: Task[Any, Any], tournament_id: str) -> int:
        try:
            return create_round_robin(app, tournament_id)
        except Exception as error:
            retry(self, error)

    @app.task(name=NEXT_ROUND, bind=True, shared=False)
    def next_round_task(self: Task[Any, Any], tournament_id: str) -> int:
        try:
            return next_round(app, tournament_id)
        except Exception as error:
            retry(self, error)

    @app.task(name=FINISH_TOURNAMENT, bind=True, shared=False)
    def finish_tournament_task(self: Task[Any, Any], tournament_id: str) -> bool:
        try:
            return finish_tournament(app, tournament_id)
        except Exception as error:
            retry(self, error)

    @app.task(name=RUN_SCHEDULES, shared=False)
    def run_schedules_task() -> list[str]:
        return run_schedules(app)

    @app.task(name=SWEEP, shared=False)
    def sweep_task() -> list[str]:
        return sweep(app)

    @app.task(name=LADDER_TICK, bind=True, shared=False)
    def ladder_tick_task(self: Task[Any, Any]) -> list[str]:
        return ladder_tick(app, (self.request.id or uuid.uuid4().hex).replace("-", "")[:12])
