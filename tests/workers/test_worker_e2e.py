"""Tournaments played by real `arena worker` processes against a real referee and bots.

(a) the embedded broker (kombu filesystem transport, no server) with a
prefork worker; (b) Redis as broker and result backend with the default
threads worker: a five-bot Goodge round robin of duplicate matches, every
match recorded exactly once, and a redelivered play_match changing nothing;
(c) the workers' Redis transport alone, closed as Celery's consumer closes
a connection whose broker went away with a task unacknowledged.
"""

from __future__ import annotations

import contextlib
import json
import socket
import time
from pathlib import Path
from typing import Any

import pytest
from kombu import Consumer, Exchange, Queue
from kombu.common import ignore_errors
from kombu.message import Message
from sqlalchemy import func, select

from ladder import queries
from ladder.elo import PROVISIONAL_SE
from ladder.models import GameRow, MatchRow, RatingHistoryRow, RatingRow, ResultRow, SeatRow
from ladder.store import Store
from tests.support.ladder import check_order
from tests.support.metrics import metric, scrape
from tests.support.processes import ARENA, free_port, wait_until
from tests.support.referee import DEADLINE_MS, GRACE_S
from tests.support.services import RedisServer
from tests.support.workers import Arena
from workers import WorkerSettings, make_app
from workers.redis_broker import Transport
from workers.tasks import PLAY_MATCH, RUN_SCHEDULES


def counts(store: Store) -> dict[str, int]:
    with store.session() as session:
        return {
            model.__tablename__: int(session.scalar(select(func.count()).select_from(model)) or 0)
            for model in (ResultRow, RatingHistoryRow, RatingRow, GameRow, SeatRow)
        }


def snapshot(store: Store) -> dict[str, Any]:
    """Everything a second recording could change."""
    with store.session() as session:
        return {
            "ratings": sorted(
                (r.ladder_id, r.bot_id, r.rating, r.games)
                for r in session.scalars(select(RatingRow))
            ),
            "history": sorted(
                (h.bot_id, h.match_id, h.rating_before, h.rating_after)
                for h in session.scalars(select(RatingHistoryRow))
            ),
            "results": sorted(
                (r.match_id, r.entry, r.bot_id, r.score, r.rank)
                for r in session.scalars(select(ResultRow))
            ),
        }


def check_table(view: queries.TournamentView, bot_ids: list[str], games_each: int) -> None:
    assert view.status == "finished" and view.finished_at is not None
    assert view.matches_finished == view.matches_total
    assert sorted(line.bot_id for line in view.table) == sorted(bot_ids)
    check_order(view.table)
    for line in view.table:
        assert line.games == games_each


def test_embedded_broker_prefork_worker_plays_a_tournament(arena: Arena) -> None:
    """(a) No server: the filesystem transport, a prefork worker, 4 bots in Golden 10 3p."""
    bots = arena.bots(["rules", "random", "rules", "random"], ["golden10"])
    port = free_port()
    arena.worker("--pool", "prefork", "--concurrency", "2", "--metrics-port", str(port))
    out = arena.cli(
        "tournament",
        "create",
        "--game",
        "golden10",
        "--players",
        "3",
        "--bots",
        ",".join(bot.bot_id for bot in bots),
        "--deadline-ms",
        "200",
        "--seed",
        "5",
        "--name",
        "embedded",
    )
    tournament_id = out.strip()
    assert (arena.workdir / ".arena" / "broker" / "queue").is_dir()
    view = arena.wait_finished(tournament_id, 90)
    assert view.matches_total == 4  # C(4, 3) duplicate matches
    check_table(view, [bot.bot_id for bot in bots], games_each=3 * 3)
    assert counts(arena.store)["results"] == 4 * 3
    assert counts(arena.store)["rating_history"] == 4 * 3

    # The prefork children's counts, summed by the main process.
    def recorded() -> float:
        return metric(scrape(port), "arena_matches_recorded_total", ladder="golden10-3p")

    wait_until(lambda: recorded() == 4, 10, "the worker's metrics to count 4 matches")
    page = scrape(port)
    assert metric(page, "arena_rating_updates_total", ladder="golden10-3p") == 12
    assert metric(page, "arena_worker_tasks_total", task=PLAY_MATCH, state="SUCCESS") >= 4
    assert metric(page, "arena_worker_task_duration_seconds_count", task=PLAY_MATCH) >= 4

    # (c) The CLI's JSON on a real tournament.
    shown = json.loads(arena.cli("tournament", "show", tournament_id, "--json"))
    assert shown["id"] == tournament_id and shown["status"] == "finished"
    assert (shown["matches_total"], shown["matches_finished"]) == (4, 4)
    assert [set(line) >= {"bot", "rating", "ci_low", "ci_high", "games"} for line in shown["table"]]
    assert {line["bot"] for line in shown["table"]} == {bot.name for bot in bots}
    standings = json.loads(arena.cli("ladder", "golden10-3p", "--json"))
    assert [line["rank"] for line in standings] == [1, 2, 3, 4]
    assert all(line["games"] == 3 for line in standings)
    # The worker refitted the ladder after each match it recorded (its prefork children may
    # refit at once): every bot has the fit's rating and error, provisional by the error.
    assert all(line["se"] is not None for line in standings)
    assert all(line["provisional"] is (line["se"] > PROVISIONAL_SE) for line in standings)
    ratings = [line["rating"] for line in standings]
    assert ratings == sorted(ratings, reverse=True)
    with arena.store.session() as session:
        fitted = [r for r in session.scalars(select(RatingRow.fit_rating)) if r is not None]
    assert sorted(fitted, reverse=True) == pytest.approx(ratings, abs=0.01)  # JSON's rounding


def test_redis_round_robin_records_every_match_once(arena: Arena, redis_url: str) -> None:
    """(b) Redis broker and backend, a threads worker, five bots in Goodge 4p, duplicate."""
    bots = arena.bots(["rules", "random", "rules", "random", "rules"], ["goodge"])
    port = free_port()
    arena.worker("--metrics-port", str(port), broker=redis_url)
    tournament_id = arena.cli(
        "tournament",
        "create",
        "--game",
        "goodge",
        "--players",
        "4",
        "--bots",
        ",".join(bot.name for bot in bots),
        "--deadline-ms",
        "200",
        "--seed",
        "11",
        broker=redis_url,
    ).strip()
    view = arena.wait_finished(tournament_id, 100)
    assert view.matches_total == 5
    check_table(view, [bot.bot_id for bot in bots], games_each=4 * 4)
    assert counts(arena.store) == {
        "results": 5 * 4,
        "rating_history": 5 * 4,
        "ratings": 5,
        "games": 5 * 4,
        "seats": 5 * 4 * 4,
    }
    with arena.store.session() as session:
        per_match = dict(
            session.execute(
                select(RatingHistoryRow.match_id, func.count()).group_by(RatingHistoryRow.match_id)
            ).all()
        )
    assert sorted(per_match) == [f"{tournament_id}-m{n:04d}" for n in range(1, 6)]
    assert set(per_match.values()) == {4}
    standings = queries.standings(arena.store, "goodge-4p")
    assert sorted(s.games for s in standings) == [4] * 5

    # Send play_match again for a recorded match: it changes nothing.
    before = snapshot(arena.store)
    app = make_app(
        settings=WorkerSettings(
            database_url=arena.db, broker_url=redis_url, referee=arena.referee.address
        )
    )
    try:
        # Results are not stored unless asked for (nothing in the arena reads them).
        again = app.send_task(
            PLAY_MATCH, args=[f"{tournament_id}-m0003"], queue="arena", ignore_result=False
        )
        assert again.get(timeout=30) == "already recorded"
    finally:
        app.close()
    assert snapshot(arena.store) == before
    assert queries.tournament(arena.store, tournament_id).finished_at == view.finished_at
    page = scrape(port)
    assert metric(page, "arena_matches_recorded_total", ladder="goodge-4p") == 5
    assert metric(page, "arena_rating_updates_total", ladder="goodge-4p") == 20
    assert metric(page, "arena_worker_tasks_total", task=PLAY_MATCH, state="SUCCESS") == 6


def test_a_consumer_that_lost_redis_closes_and_acknowledges_afterwards(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    """(c) A consumer holding a task unacknowledged, waiting in BRPOP for more, with a fanout
    queue bound (remote control's) when Redis goes away: Celery collects the connection,
    then closes it once Redis is back. The close raises nothing but connection errors
    (anything else stops the worker, "Unrecoverable error"), and the task that was running
    acknowledges its message afterwards."""
    settings = WorkerSettings(
        database_url=f"sqlite:///{tmp_path / 'arena.db'}", broker_url=redis_server.url
    )
    app = make_app(settings=settings)
    tasks = Queue("arena", Exchange("arena"), "arena")
    with app.connection_for_write() as producer:
        producer.Producer().publish(
            {"task": 1}, exchange=tasks.exchange, routing_key="arena", declare=[tasks]
        )
    connection = app.connection_for_read()
    assert isinstance(connection.transport, Transport)
    received: list[Message] = []
    connection.Consumer(
        [tasks], callbacks=[lambda _, message: received.append(message)], prefetch_count=8
    ).consume()
    control = Queue("control", Exchange("control", type="fanout"), auto_delete=True)
    Consumer(connection.channel(), [control], no_ack=True).consume()

    def delivered() -> bool:
        with contextlib.suppress(socket.timeout):
            connection.drain_events(timeout=0.1)
        return bool(received)

    wait_until(delivered, 10, "the task to be delivered")
    # As the worker's event loop does while it has room for more tasks.
    connection.default_channel._brpop_start()
    redis_server.shutdown_nosave()
    with contextlib.suppress(Exception):  # as Celery's consumer does
        connection.collect(socket_timeout=1)
    redis_server.start()
    ignore_errors(connection, connection.close)
    received[0].ack()
    app.close()


def test_beat_runs_the_ladder_and_scheduled_tournaments(arena: Arena) -> None:
    """Beat's ladder ticks pair connected bots; run_schedules starts a template's run."""
    # The operator's reference bots: the ladder seats them together (one author's it would not).
    bots = arena.bots(["rules", "random", "rules", "random"], ["golden10"], operator=True)
    template = arena.cli(
        "tournament",
        "create",
        "--game",
        "golden10",
        "--players",
        "3",
        "--bots",
        ",".join(bot.bot_id for bot in bots[:3]),
        "--schedule",
        "* * * * *",
        "--deadline-ms",
        "200",
    ).strip()
    arena.worker("--metrics-port", "0")
    arena.procs.start(
        "beat",
        [
            *ARENA,
            "beat",
            "--db",
            arena.db,
            "--referee",
            arena.referee.address,
            "--ladder-interval-s",
            "1",
        ],
    )
    arena.worker_logs.append(arena.workdir / "beat.log")

    def ladder_matches() -> set[str]:
        with arena.store.session() as session:
            return set(
                session.scalars(select(ResultRow.match_id).where(ResultRow.tournament_id.is_(None)))
            )

    try:
        wait_until(lambda: len(ladder_matches()) >= 2, 60, "two ladder matches recorded")
    except AssertionError as error:
        raise AssertionError(f"{error}\n{arena.logs()}") from None
    assert all(m.startswith("L") and "-golden10-3p-" in m for m in ladder_matches())

    # The minute's run of the template (beat sends run_schedules on the minute; ask now).
    app = make_app(
        settings=WorkerSettings(
            database_url=arena.db, referee=arena.referee.address, metrics_port=0
        )
    )
    try:
        app.send_task(RUN_SCHEDULES, queue="arena")
    finally:
        app.close()

    def finished_run() -> str | None:
        for view in queries.tournaments(arena.store):
            if view.id.startswith(f"{template}-") and view.status == "finished":
                return view.id
        return None

    try:
        run = wait_until(finished_run, 60, "a finished run of the scheduled template")
    except AssertionError as error:
        raise AssertionError(f"{error}\n{arena.logs()}") from None
    view = queries.tournament(arena.store, run)
    check_table(view, [bot.bot_id for bot in bots[:3]], games_each=3)
    assert queries.tournament(arena.store, template).status == "scheduled"
    standings = queries.standings(arena.store, "golden10-3p")
    assert {s.bot_id for s in standings} <= {bot.bot_id for bot in bots}
    assert sum(s.games for s in standings) >= 3  # the run's match, rated
    # The bots' first ladder matches are practice (ARENA_LADDER_PRACTICE_MATCHES=3): kept,
    # rating nobody.
    with arena.store.session() as session:
        first = session.scalars(
            select(ResultRow)
            .where(ResultRow.tournament_id.is_(None))
            .order_by(ResultRow.recorded_at)
            .limit(3)
        ).all()
    assert len(first) == 3 and all(row.practice for row in first)


def test_a_worker_killed_mid_match_loses_nothing_and_counts_nothing_twice(
    arena: Arena, redis_url: str
) -> None:
    """SIGKILL a worker while its matches play; another worker takes the tasks over."""
    bots = arena.bots(["random", "rules", "random", "rules"], ["goodge"])
    fast_redelivery = {"ARENA_VISIBILITY_TIMEOUT_S": "2"}
    first = arena.worker(
        "--metrics-port", "0", broker=redis_url, name="worker-1", env=fast_redelivery
    )
    tournament_id = arena.cli(
        "tournament",
        "create",
        "--game",
        "goodge",
        "--players",
        "3",
        "--bots",
        ",".join(bot.bot_id for bot in bots),
        "--deadline-ms",
        "200",
        "--seed",
        "13",
        broker=redis_url,
    ).strip()

    def running() -> bool:
        with arena.store.session() as session:
            statuses = session.scalars(
                select(MatchRow.status).where(MatchRow.id.startswith(tournament_id))
            ).all()
        return "running" in statuses

    wait_until(running, 30, "a match of the tournament to be playing")
    first.kill()
    first.wait(10)
    # Redis hands the dead worker's unacknowledged tasks out again after the
    # visibility timeout; the second worker looks for them when it starts.
    time.sleep(2.5)
    arena.worker("--metrics-port", "0", broker=redis_url, name="worker-2", env=fast_redelivery)
    view = arena.wait_finished(tournament_id, 90)
    assert view.matches_total == 4
    check_table(view, [bot.bot_id for bot in bots], games_each=3 * 3)
    assert counts(arena.store) == {
        "results": 4 * 3,
        "rating_history": 4 * 3,
        "ratings": 4,
        "games": 4 * 3,
        "seats": 4 * 3 * 3,
    }
    assert sorted(s.games for s in queries.standings(arena.store, "goodge-3p")) == [3] * 4


def test_matches_aborted_by_a_stopping_referee_are_played_again(arena: Arena) -> None:
    """The referee dies mid-match and comes back (its matches marked aborted): the
    worker retries, asks again, and every match is recorded once."""
    bots = arena.bots(["random", "rules", "random", "rules"], ["goodge"])
    arena.worker("--metrics-port", "0")
    tournament_id = arena.cli(
        "tournament",
        "create",
        "--game",
        "goodge",
        "--players",
        "3",
        "--bots",
        ",".join(bot.bot_id for bot in bots),
        "--deadline-ms",
        "200",
        "--seed",
        "17",
    ).strip()

    def statuses() -> list[str]:
        with arena.store.session() as session:
            return list(
                session.scalars(
                    select(MatchRow.status).where(MatchRow.id.startswith(tournament_id))
                )
            )

    wait_until(lambda: "running" in statuses(), 30, "a match of the tournament to be playing")
    arena.referee.proc.kill()  # the referee dies mid-match
    arena.referee.proc.wait(10)
    playing = statuses().count("running")
    assert playing >= 1
    # The same referee comes back on the same address and database: it marks the
    # matches it was playing aborted, and plays them again when asked.
    arena.procs.start(
        "referee-2",
        [
            *ARENA,
            "referee",
            "--listen",
            arena.referee.address,
            "--db",
            arena.db,
            "--metrics-port",
            "0",
            "--deadline-ms",
            str(DEADLINE_MS),
            "--grace-s",
            str(GRACE_S),
            "--shutdown-grace-s",
            "1",
        ],
    )
    arena.worker_logs.append(arena.workdir / "referee-2.log")
    view = arena.wait_finished(tournament_id, 90)
    assert view.matches_total == 4
    assert statuses() == ["finished"] * 4
    log = (arena.workdir / "referee-2.log").read_text(encoding="utf-8", errors="replace")
    assert f"marked {playing} matches aborted" in log
    assert counts(arena.store)["results"] == 4 * 3
    assert counts(arena.store)["rating_history"] == 4 * 3
    assert sorted(s.games for s in queries.standings(arena.store, "goodge-3p")) == [3] * 4
