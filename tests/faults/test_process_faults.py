"""Process faults during tournaments: each repeated, each reporting what was lost or counted
twice.

Every repetition plays a fresh tiny round robin (Golden 10, one round, 3 of 4 slow bots,
4 duplicate matches) on a whole arena of real processes (referee, worker, beat, web, bots,
a Redis server of the test's own), hits it with one fault while matches are being played,
and then counts what the store holds (`Ledger`): matches planned against recorded, results
and rating-history rows per match, games and replays per match, rating games added per
bot. The assertion message lists those counts for every repetition.

(a) a worker SIGKILLed mid-match; (b) the referee SIGKILLed mid-match and restarted;
(c) Redis shut down without saving and started again; (d) the SQLite database locked
(BEGIN EXCLUSIVE) for a few seconds while matches finish; (e) SIGTERM to the referee, a
worker, the web server and a bot: each exits 0 and says what it finished.

tests/workers/test_worker_e2e.py keeps its single-shot versions of (a) and (b) on Goodge
(with table and standings checks); these are the repeated, counting ones.
"""

from __future__ import annotations

import re
import sqlite3
import subprocess
import time
import urllib.request

from ladder.models import MatchRow
from tests.support.faults import GAME, FaultArena, Ledger, check_exact
from tests.support.processes import free_port, wait_exit, wait_until

REPEATS = 3
TERM_ROUNDS = 1  # (e): SIGTERM rounds over the four kinds of process
FINISH_S = 90.0
LOCK_S = 15.0
"""(d): the longest the database is held locked, half the referee's busy timeout."""


def test_worker_sigkilled_mid_match_records_each_match_once(fault_arena: FaultArena) -> None:
    """(a) SIGKILL the worker while it waits on matches; a new one takes the tasks over
    (Redis redelivers them after the 2 s visibility timeout). A task the worker had
    just taken off the queue when it died, before kombu noted it as unacknowledged,
    is not redelivered: beat's sweep hands that match back, as in production."""
    arena = fault_arena
    arena.beat()
    worker = arena.fault_worker("worker-0")
    reports: list[Ledger] = []
    for rep in range(REPEATS):
        tournament_id, before = arena.tournament(seed=100 + rep)
        playing = arena.wait_playing(tournament_id)
        worker.kill()
        worker.wait(10)
        started = set(arena.statuses(tournament_id))
        unrecorded = started - arena.recorded(sorted(started))
        worker = arena.fault_worker(f"worker-{rep + 1}")
        arena.wait_finished(tournament_id, FINISH_S)
        report = arena.ledger(tournament_id, before)
        report.notes.append(
            f"worker SIGKILLed while {len(playing)} played, {len(unrecorded)} started "
            "and unrecorded"
        )
        reports.append(report)
    check_exact(reports)


def test_referee_sigkilled_mid_match_aborts_and_replays(fault_arena: FaultArena) -> None:
    """(b) SIGKILL the referee mid-match and start it again: the matches it was playing are
    marked aborted, none of them was recorded, the worker asks again and they are played,
    each on a fresh deal (its bots saw part of the old one)."""
    arena = fault_arena
    arena.fault_worker("worker")
    reports: list[Ledger] = []
    for rep in range(REPEATS):
        tournament_id, before = arena.tournament(seed=200 + rep)
        arena.wait_playing(tournament_id)
        arena.referee.proc.kill()
        arena.referee.proc.wait(10)
        cut = [m for m, status in arena.statuses(tournament_id).items() if status == "running"]
        dealt = arena.per_match(tournament_id, MatchRow.seed)
        partial = arena.recorded(cut)
        arena.restart_referee()
        log = arena.referee.log.read_text(encoding="utf-8", errors="replace")
        marked = re.search(r"marked (\d+) matches aborted from an earlier run: (.*)", log)
        aborted = set(marked.group(2).strip().split(", ")) if marked else set()
        arena.wait_finished(tournament_id, FINISH_S)
        report = arena.ledger(tournament_id, before)
        report.notes.append(
            f"referee SIGKILLed while {len(cut)} played; {len(partial)} of those recorded "
            f"before the restart; restart marked aborted {sorted(aborted)}"
        )
        reports.append(report)
        assert not partial, f"matches recorded though the referee died playing them: {partial}"
        assert aborted == set(cut), f"aborted on restart {aborted}, playing at the kill {cut}"
        replayed = arena.per_match(tournament_id, MatchRow.seed)
        assert all(replayed[m] != dealt[m] for m in cut), "a match played again on its old deal"
        assert all(replayed[m] == dealt[m] for m in dealt if m not in cut)
    check_exact(reports)


def test_redis_restarted_without_saving_loses_no_match(fault_arena: FaultArena) -> None:
    """(c) Redis shut down (nosave) mid-tournament and started again a second later: the
    queued tasks are gone, the worker reconnects, beat's sweep enqueues the lost matches
    again, and the tournament finishes with every match recorded once. The same worker
    plays all the repetitions: nobody starts another."""
    arena = fault_arena
    # Two at a time, so some of the four matches wait in Redis when it goes down.
    worker = arena.fault_worker("worker", "--concurrency", "2")
    arena.beat()
    reports: list[Ledger] = []
    for rep in range(REPEATS):
        tournament_id, before = arena.tournament(seed=300 + rep)
        arena.wait_playing(tournament_id)
        keys = arena.redis.keys()
        started = set(arena.statuses(tournament_id))
        arena.redis.shutdown_nosave()
        time.sleep(1.0)
        arena.redis.start()
        sweeps_before = arena.log_text("worker").count("matches had no task")
        arena.wait_finished(tournament_id, FINISH_S)
        assert worker.poll() is None, arena.log_text("worker")
        report = arena.ledger(tournament_id, before)
        sweeps = arena.log_text("worker").count("matches had no task") - sweeps_before
        report.notes.append(
            f"Redis (holding {keys} keys) restarted with {len(started)} of "
            f"{report.planned} matches started; sweeps that re-enqueued: {sweeps}"
        )
        reports.append(report)
    check_exact(reports)


def test_database_locked_while_matches_finish(fault_arena: FaultArena) -> None:
    """(d) An exclusive lock on the SQLite database while matches end, held until a write of
    the worker has failed (LOCK_S at most): the referee's writes wait (its busy timeout is
    30 s); the worker's give up after 1 s, so its tasks fail and are retried with back-off;
    nothing twice, nothing lost."""
    arena = fault_arena
    arena.fault_worker("worker", env={"ARENA_SQLITE_BUSY_TIMEOUT_S": "1"})
    reports: list[Ledger] = []
    for rep in range(REPEATS):
        tournament_id, before = arena.tournament(seed=400 + rep)
        # Lock the moment the referee has written a match's end: the worker is about to record.
        wait_until(
            lambda tid=tournament_id: any(s == "finished" for s in arena.statuses(tid).values()),
            FINISH_S,
            f"a match of {tournament_id} to end",
            0.005,
        )
        locker = sqlite3.connect(arena.workdir / "arena.db", timeout=30, isolation_level=None)
        retried = arena.log_text("worker").count("retrying in")
        try:
            locker.execute("BEGIN EXCLUSIVE")
            # Until the worker has tried to write and given up (a loaded machine may take
            # longer than usual to get there), but well within the referee's 30 s; the
            # worker may have recorded this match just before the lock, and no other ends.
            until = time.monotonic() + LOCK_S
            while arena.log_text("worker").count("retrying in") == retried:
                if time.monotonic() > until:
                    break
                time.sleep(0.05)
            ended_meanwhile = sum(
                s != "running" for s in arena.statuses(tournament_id).values()
            )  # WAL: reads still work; the ends wait to be written
            locker.execute("ROLLBACK")
        finally:
            locker.close()
        arena.wait_finished(tournament_id, FINISH_S)
        report = arena.ledger(tournament_id, before)
        retries = arena.log_text("worker").count("retrying in")
        report.notes.append(
            f"database locked until the worker retried; {ended_meanwhile} matches shown "
            "ended meanwhile; "
            f"worker retries so far: {retries}"
        )
        reports.append(report)
    check_exact(reports)
    assert arena.log_text("worker").count("retrying in") > 0, (
        "the worker never had to retry: the lock did not make its database writes fail"
    )


def test_sigterm_to_each_process_is_clean_and_loses_no_result(fault_arena: FaultArena) -> None:
    """(e) SIGTERM, mid-tournament, to the referee, a worker, the web server and a bot (each
    in turn): exit status 0, a log line saying what it finished; after it comes back
    every match the referee had finished is recorded and the tournament finishes."""
    arena = fault_arena
    bot = arena.referee.run_bot("random", arena.referee.register("random", [GAME]))
    arena.referee.wait_connected([bot])
    # The tournament's entrants: three slow bots and `arena bot run random`.
    arena.handles = [*arena.handles[:3], bot]
    web_port = free_port()
    procs: dict[str, subprocess.Popen[bytes]] = {
        "worker": arena.fault_worker("worker-1"),
        "web": arena.web(web_port, "web-1"),
        "bot": bot.proc,  # type: ignore[dict-item]
    }
    starts = {"worker": 1, "web": 1, "bot": 1}
    reports: list[Ledger] = []
    for rep, kind in enumerate(["referee", "worker", "web", "bot"] * TERM_ROUNDS):
        tournament_id, before = arena.tournament(seed=500 + rep)
        arena.wait_playing(tournament_id)
        proc = arena.referee.proc if kind == "referee" else procs[kind]
        proc.terminate()
        status = wait_exit(proc, 40)
        finished = {m for m, s in arena.statuses(tournament_id).items() if s == "finished"}
        if kind == "referee":
            log = arena.referee.log.read_text(encoding="utf-8", errors="replace")
            said = re.findall(
                r"stopped: \d+ match(?:es)? played since the start; (?:of the \d+ match(?:es)? "
                r"running at the stop, \d+ finished \(.*\) and \d+ were aborted|none was running)",
                log,
            )
            arena.restart_referee()
        else:
            name = f"{kind}-{starts[kind]}" if kind != "bot" else f"bot-{bot.name}"
            log = arena.log_text(name)
            pattern = {
                "worker": r"[Ww]arm shutdown",
                "web": r"Finished server process",
                "bot": r"stopped: \d+ answers, \d+ matches ended",
            }[kind]
            said = re.findall(pattern, log)
            starts[kind] += 1
            if kind == "worker":
                procs[kind] = arena.fault_worker(f"worker-{starts[kind]}")
            elif kind == "web":
                procs[kind] = arena.web(web_port, f"web-{starts[kind]}")
            else:
                arena.referee.run_bot("random", bot)
                assert bot.proc is not None
                procs[kind] = bot.proc
        assert status == 0, f"{kind} exited with {status} on SIGTERM:\n{log[-3000:]}"
        assert said, f"{kind}: no log line saying what it finished:\n{log[-3000:]}"
        if kind == "web":
            page = wait_until(lambda: _get(f"http://127.0.0.1:{web_port}/metrics"), 30, "web")
            assert "arena" in page
        arena.wait_finished(tournament_id, FINISH_S)
        report = arena.ledger(tournament_id, before)
        lost = finished - arena.recorded(sorted(finished))
        report.notes.append(
            f"SIGTERM {kind}: exit {status}, said {said[-1]!r}; {len(finished)} finished on "
            f"the referee then, {len(lost)} of them unrecorded at the end"
        )
        reports.append(report)
        assert not lost, f"SIGTERM {kind}: finished matches never recorded: {lost}"
    check_exact(reports)


def _get(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=2) as reply:
            return str(reply.read().decode())
    except OSError:
        return ""
