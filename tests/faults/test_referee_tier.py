"""A referee tier under faults: two replicas on one port, a worker, beat, slow bots spread
over both, a Redis of the test's own (the broker and the relay), one SQLite database.

Each test plays tiny duplicate round robins (Golden 10, 3 of 4 bots, 4 matches) through
the workers and counts what the store holds (`Ledger`): every planned match recorded
exactly once, whatever the fault.
(1) no fault: matches span both replicas, none forfeits;
(2) SIGKILL of a replica mid-tournament: its bots reconnect to the other, its matches are
    aborted once their lease expires and played again;
(3) SIGTERM of each replica in turn (a rolling restart): no match is aborted;
(4) Redis restarted empty mid-tournament: the registry is rebuilt from the live streams;
(5) a bot that leaves its replica mid-turn and reconnects to another answers the request
    sent again there, and is not struck;
(6) SIGTERM to `arena referee --processes 2` mid-match: the processes drain one at a time, no
    bot forfeits, and whoever waits on the match gets its result or "ask again";
(7) each replica paused (SIGSTOP) for a moment mid-tournament, a few times: no match is
    aborted, no bot struck;
(8) the relay's Redis silent mid-tournament (every connection to it frozen, as a network
    that drops its packets): no bot struck.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import signal
import threading
import time
import uuid
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import grpc
import pytest
import redis
from sqlalchemy import select

from cardarena_api.v1 import arena_pb2 as pb
from cardarena_api.v1 import arena_pb2_grpc as pb_grpc
from ladder.models import MatchRow
from referee.tier.registry import slots_key
from tests.support.faults import Ledger, check_exact
from tests.support.processes import ARENA, Processes, pause, wait_exit, wait_until
from tests.support.referee import launch_referee, result_of
from tests.support.services import RedisServer
from tests.support.tcp_proxy import TcpProxy
from tests.support.tier import REPLICAS, TierArena

FINISH_S = 120.0
PAUSES = 3
PAUSE_S = 0.6
"""Longer than a move's deadline (400 ms), shorter than a lease or a heartbeat's expiry."""


def arena_of(tmp_path: Path, redis: RedisServer, processes: bool) -> Iterator[TierArena]:
    procs = Processes(tmp_path)
    try:
        arena = TierArena(tmp_path, procs, redis, processes)
        try:
            yield arena
        finally:
            arena.close()
    finally:
        procs.close()


@pytest.fixture
def tier(tmp_path: Path, redis_server: RedisServer) -> Iterator[TierArena]:
    """Replicas A and B, processes of their own."""
    yield from arena_of(tmp_path, redis_server, processes=False)


@pytest.fixture
def relayed(tmp_path: Path, redis_server: RedisServer) -> Iterator[tuple[TierArena, TcpProxy]]:
    """Replicas A and B, which reach the relay's Redis through a proxy (the broker directly)."""
    with TcpProxy("127.0.0.1", redis_server.port) as proxy:
        procs = Processes(tmp_path)
        try:
            arena = TierArena(tmp_path, procs, redis_server, relay_port=proxy.port)
            try:
                yield arena, proxy
            finally:
                arena.close()
        finally:
            procs.close()


@pytest.fixture
def tier_processes(tmp_path: Path, redis_server: RedisServer) -> Iterator[TierArena]:
    """`arena referee --processes 2`: replicas R.0 and R.1."""
    yield from arena_of(tmp_path, redis_server, processes=True)


def results(arena: TierArena, match_ids: list[str]) -> dict[str, dict[str, Any]]:
    """Each finished match's result (empty for one without)."""
    with arena.store.session() as session:
        rows = session.execute(
            select(MatchRow.id, MatchRow.result).where(MatchRow.id.in_(match_ids))
        ).all()
    return {match_id: dict(result or {}) for match_id, result in rows}


def check_nobody_struck(arena: TierArena, tournament_id: str) -> None:
    """No match of the tournament recorded a strike or a forfeit."""
    played = results(arena, list(arena.planned(tournament_id)))
    assert all(not result["forfeits"] for result in played.values()), played
    assert all(set(result["strikes"].values()) == {0} for result in played.values()), played


def slots_held(arena: TierArena) -> int:
    """How many (bot, match) slots the relay's Redis holds, read from it directly."""
    client = redis.Redis(port=arena.redis.port, db=1)
    try:
        return sum(client.zcard(key) for key in client.scan_iter(slots_key("*")))
    finally:
        client.close()


def forfeits(arena: TierArena, match_ids: list[str]) -> dict[str, list[str]]:
    """The forfeits recorded in each finished match's result."""
    return {
        match_id: list(result.get("forfeits", []))
        for match_id, result in results(arena, match_ids).items()
    }


def test_a_round_robin_spans_both_processes_and_counts_each_match_once(
    tier_processes: TierArena,
) -> None:
    """`arena referee --processes 2 --relay URL`, a worker and bots spread over both
    processes: the matches have seats on both, none forfeits, each is counted once. Then
    a process killed is started again by the supervisor, and SIGTERM stops them all."""
    tier = tier_processes
    held = tier.spread_bots()
    tier.fault_worker("worker")
    tournament_id, before = tier.tournament(seed=1)
    tier.wait_finished(tournament_id, FINISH_S)
    report = tier.ledger(tournament_id, before)
    owners = tier.owners(tournament_id)
    spanning = [
        match_id
        for match_id, bots in tier.planned(tournament_id).items()
        if {held[bot] for bot in bots} == set(tier.names)
    ]
    report.notes.append(f"bots on {sorted(held.values())}; owners {sorted(owners.values())}")
    check_exact([report])
    assert spanning, f"no match had seats on both replicas: {held}"
    assert set(owners.values()) <= set(tier.names)
    assert forfeits(tier, list(owners)) == {match_id: [] for match_id in owners}

    log = tier.workdir / "referee.log"
    pids = re.findall(r"referee process 1 started \(pid (\d+)\)", log.read_text())
    os.kill(int(pids[-1]), signal.SIGKILL)
    wait_until(
        lambda: log.read_text().count("referee listening on") == 3, 60, "process 1 restarted"
    )
    assert "referee process 1 exited with -9; restarting it" in log.read_text()
    tier.supervisor.terminate()
    try:
        status = wait_exit(tier.supervisor, 60)
    except AssertionError:
        # A process that does not stop: have each log where its tasks wait (SIGUSR1).
        for pid in re.findall(r"referee process \d started \(pid (\d+)\)", log.read_text()):
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGUSR1)
        with contextlib.suppress(AssertionError):
            wait_until(lambda: " waits at:" in log.read_text(), 10, "the tasks' stacks")
        raise AssertionError(
            f"the tier did not stop in 60 s:\n{log.read_text()[-20000:]}"
        ) from None
    assert status == 0, log.read_text()
    text = log.read_text()
    idle = re.findall(r"stopped: \d+ match(?:es)? played since the start; none was running", text)
    assert len(idle) == 2 and "stopped (0)" in text, text


def match_status(arena: TierArena, match_id: str) -> str | None:
    with arena.store.session() as session:
        status = session.scalars(select(MatchRow.status).where(MatchRow.id == match_id)).first()
    return None if status is None else str(status)


class Waiter:
    """A caller of GetMatch(wait) on a connection of its own (the kernel picks its process)."""

    def __init__(self, address: str, match_id: str) -> None:
        self.channel = grpc.insecure_channel(
            address, options=[("grpc.use_local_subchannel_pool", 1)]
        )
        self.stub = pb_grpc.RefereeServiceStub(self.channel)
        self.outcome: pb.Match | grpc.RpcError | None = None
        grpc.channel_ready_future(self.channel).result(timeout=10)
        self._thread = threading.Thread(target=self._wait, args=(match_id,), daemon=True)
        self._thread.start()

    def _wait(self, match_id: str) -> None:
        try:
            self.outcome = self.stub.GetMatch(
                pb.GetMatchRequest(match_id=match_id, wait=True), timeout=FINISH_S
            )
        except grpc.RpcError as error:
            self.outcome = error

    def answer(self) -> str:
        """What the first answer said: the match's status, or the failed call's status."""
        self._thread.join(FINISH_S)
        self.channel.close()
        outcome = self.outcome
        if isinstance(outcome, pb.Match):
            return outcome.status
        assert isinstance(outcome, grpc.Call), outcome
        return f"{outcome.code().name}: {outcome.details()}"


def test_a_supervisor_stopped_mid_match_drains_its_processes_one_at_a_time(
    tier_processes: TierArena,
) -> None:
    """SIGTERM to `arena referee --processes 2` while a duplicate Golden 10 match of the 4 slow
    bots (spread over both processes) plays: one process drains (its bots move to the other,
    which still listens), then the last finishes its matches with its bots. Every process exits
    0, no bot forfeits or is struck, the match is recorded finished, `arena match run` prints
    it, and each other waiter gets the result or an UNAVAILABLE "ask again"."""
    tier = tier_processes
    tier.spread_bots()
    match_id = "drain-" + uuid.uuid4().hex[:8]
    bots = ",".join(tier.bot_ids)
    run = tier.spawn(
        "match-run",
        [*ARENA, "match", "run", "--game", "golden10", "--bots", bots, "--duplicate",
         "--deadline-ms", "2000", "--seed", "7", "--match-id", match_id,
         "--referee", tier.address, "--json"],
    )  # fmt: skip
    wait_until(lambda: match_status(tier, match_id) == "running", 30, "the match to start")
    waiters = [Waiter(tier.address, match_id) for _ in range(6)]
    log = tier.workdir / "referee.log"
    tier.supervisor.terminate()
    assert wait_exit(tier.supervisor, 180) == 0, log.read_text()
    text = log.read_text()
    assert "referee process 0 stopped (0)" in text and "referee process 1 stopped (0)" in text, text
    assert wait_exit(run, 30) == 0, tier.log_text("match-run")
    (line,) = [line for line in tier.log_text("match-run").splitlines() if line.startswith("{")]
    printed = json.loads(line)
    assert printed["status"] == "finished" and printed["forfeits"] == [], printed
    assert match_status(tier, match_id) == "finished", text
    with tier.store.session() as session:
        result = dict(session.scalars(select(MatchRow.result).where(MatchRow.id == match_id)).one())
    assert result["forfeits"] == [], json.dumps(result)
    assert set(result["strikes"].values()) == {0}, json.dumps(result)
    answers = [waiter.answer() for waiter in waiters]
    ask_again = "UNAVAILABLE: this referee replica is stopping; ask again"
    assert all(answer in ("finished", ask_again) for answer in answers), answers


def all_held_by(arena: TierArena, replica: str) -> bool:
    """Whether every bot's stream is held by `replica`."""
    held = arena.holders()
    return len(held) == len(arena.handles) and set(held.values()) == {replica}


def test_a_replica_killed_mid_tournament_loses_nothing(tier: TierArena) -> None:
    tier.spread_bots()
    tier.fault_worker("worker")
    tier.beat()
    reports: list[Ledger] = []
    for rep, victim in enumerate(REPLICAS):
        tournament_id, before = tier.tournament(seed=10 + rep)
        tier.wait_playing(tournament_id)
        tier.replicas[victim].kill()
        tier.replicas[victim].wait(10)
        survivor = next(name for name in REPLICAS if name != victim)
        # The dead replica's bots come back to the survivor within the grace period.
        wait_until(
            partial(all_held_by, tier, survivor),
            10,
            f"the bots to reconnect to {survivor}",
            0.1,
        )
        tier.wait_finished(tournament_id, FINISH_S)
        report = tier.ledger(tournament_id, before)
        report.notes.append(f"{victim} SIGKILLed mid-tournament")
        reports.append(report)
        tier.start_replica(victim)
    check_exact(reports)


def test_a_rolling_restart_aborts_no_match(tier: TierArena) -> None:
    tier.spread_bots()
    tier.fault_worker("worker")
    reports: list[Ledger] = []
    for rep, name in enumerate(REPLICAS):
        tournament_id, before = tier.tournament(seed=20 + rep)
        tier.wait_playing(tournament_id)
        proc = tier.replicas[name]
        proc.terminate()
        assert wait_exit(proc, 90) == 0, tier.replica_log(name)
        log = tier.replica_log(name)
        stopped = re.search(
            r"stopped: \d+ match(?:es)? played since the start; (?:of the \d+ match(?:es)? "
            r"running at the stop, (\d+) finished \(.*\) and (\d+) were aborted|none was running)",
            log,
        )
        assert stopped is not None, log
        tier.start_replica(name)
        tier.wait_finished(tournament_id, FINISH_S)
        report = tier.ledger(tournament_id, before)
        report.notes.append(f"{name} drained: {stopped.group(0)}")
        reports.append(report)
        assert stopped.group(2) in (None, "0"), log  # none aborted
        # Its bots moved to the other replica in time: none forfeited.
        played = list(tier.planned(tournament_id))
        assert forfeits(tier, played) == {match_id: [] for match_id in played}
    check_exact(reports)
    assert "asking again" not in tier.log_text("worker"), tier.log_text("worker")


def test_a_replica_paused_mid_tournament_aborts_no_match_and_strikes_no_bot(
    tier: TierArena,
) -> None:
    """Each replica in turn stands still for a moment, a few times, while its matches play
    (SIGSTOP, SIGCONT: a host starving it of CPU). The moves it holds or asks for come
    late, past their deadline by its clock and its peer's; the time it did not run is
    nobody's fault: no match is aborted, no bot struck."""
    tier.spread_bots()
    tier.fault_worker("worker")
    reports: list[Ledger] = []
    for rep, name in enumerate(REPLICAS):
        tournament_id, before = tier.tournament(seed=40 + rep)
        tier.wait_playing(tournament_id)
        for _ in range(PAUSES):
            pause(tier.replicas[name], PAUSE_S)
            time.sleep(PAUSE_S / 2)  # running between the pauses
        tier.wait_finished(tournament_id, FINISH_S)
        report = tier.ledger(tournament_id, before)
        report.notes.append(f"{name} paused {PAUSES} times for {PAUSE_S:g} s")
        reports.append(report)
        check_nobody_struck(tier, tournament_id)
    check_exact(reports)
    assert "asking again" not in tier.log_text("worker"), tier.log_text("worker")


def test_redis_restarted_mid_tournament_rebuilds_the_registry(tier: TierArena) -> None:
    """Relayed moves that Redis cannot carry before their deadline abort their match (the
    worker plays it again); same-replica seats play on. The one worker outlives the
    broker's loss with its tasks unacknowledged: nobody starts another."""
    tier.spread_bots()
    worker = tier.fault_worker("worker")
    tier.beat()
    tournament_id, before = tier.tournament(seed=30)
    tier.wait_playing(tournament_id)
    tier.redis.shutdown_nosave()
    tier.redis.start()
    # Every replica writes its part again within a heartbeat or so.
    wait_until(
        lambda: (
            len(tier.holders()) == len(tier.handles) and tier.live_replicas() == set(tier.names)
        ),
        30,
        "the registry to be rebuilt",
        0.2,
    )
    tier.wait_finished(tournament_id, FINISH_S)
    assert worker.poll() is None, tier.log_text("worker")
    report = tier.ledger(tournament_id, before)
    report.notes.append("Redis restarted empty mid-tournament; one worker throughout")
    check_exact([report])


class ManualBot:
    """A bot driven by the test: one session at a time, answers by hand."""

    def __init__(self, address: str, token: str) -> None:
        self.channel = grpc.insecure_channel(address)
        self.outgoing: queue.Queue[pb.BotMessage | None] = queue.Queue()
        self.outgoing.put(pb.BotMessage(hello=pb.Hello(capacity=1)))
        self.stream = pb_grpc.BotServiceStub(self.channel).Session(
            iter(self.outgoing.get, None), metadata=(("authorization", f"Bearer {token}"),)
        )
        self.received: queue.Queue[pb.RefereeMessage] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            for message in self.stream:
                self.received.put(message)
        except grpc.RpcError:
            pass

    def next_act(self) -> pb.Act:
        while True:
            message = self.received.get(timeout=30)
            if message.WhichOneof("kind") == "act":
                return message.act

    def answer(self, act: pb.Act) -> None:
        self.outgoing.put(pb.BotMessage(answer=pb.Answer(request_id=act.request_id, index=0)))

    def leave(self) -> None:
        self.stream.cancel()
        self.outgoing.put(None)
        self.channel.close()


def test_a_bot_that_moves_mid_turn_answers_the_request_sent_again(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    """Replicas A and B on ports of their own; the match runs on A (it holds two of the
    three seats); the manual bot, on A too, gets its first Act, drops its stream without
    answering and reconnects to B, where the same request comes again."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    relay = ("--relay", redis_server.url, "--lease-s", "5")
    procs = Processes(tmp_path)
    try:
        a = launch_referee(tmp_path / "a", procs, "--replica", "A", *relay)
        shared = f"sqlite:///{tmp_path / 'a' / 'arena.db'}"
        b = launch_referee(tmp_path / "b", procs, "--replica", "B", "--db", shared, *relay)
        others = [a.run_bot("random", a.register("tier")) for _ in range(2)]
        mover = a.register("mover")
        bot = ManualBot(a.address, mover.token)
        a.wait_connected([*others, mover])
        match_id = "moves-" + uuid.uuid4().hex[:8]
        a.start_match(match_id, "golden10", [mover, *others], seed=None, deadline_ms=5000)
        first = bot.next_act()
        bot.leave()
        bot = ManualBot(b.address, mover.token)
        again = bot.next_act()
        assert again.request_id == first.request_id
        bot.answer(again)

        def play_on() -> None:
            while True:
                try:
                    bot.answer(bot.next_act())
                except queue.Empty:
                    return

        threading.Thread(target=play_on, daemon=True).start()
        result = result_of(a.wait_match(match_id, FINISH_S))
        assert result["strikes"][mover.bot_id] == 0, json.dumps(result)
        assert result["forfeits"] == []
        bot.leave()
    finally:
        procs.close()


# 8 s is past the 6 s after which a replica asks its bots to move: a bot moved while
# Redis is silent was struck once, its new session published too late for a look-up.
@pytest.mark.parametrize("silent_s", [2.0, 8.0])
def test_a_relay_that_falls_silent_strikes_no_bot(
    relayed: tuple[TierArena, TcpProxy], silent_s: float
) -> None:
    """Nothing passes between the replicas and the relay for `silent_s`: less than the
    relay's socket timeout (5 s), its calls only wait; more, they fail. Either way no
    bot is struck for a move Redis did not carry; each match is recorded once."""
    tier, proxy = relayed
    tier.spread_bots(one_session=True)  # so that moves are relayed
    tier.fault_worker("worker")
    tournament_id, before = tier.tournament(seed=50)
    seats = sum(len(bots) for bots in tier.planned(tournament_id).values())
    # Every match holds its bots' slots: its moves are under way, some relayed.
    wait_until(lambda: slots_held(tier) == seats, 60, "every match to hold its slots", 0.01)
    proxy.freeze()
    time.sleep(silent_s)  # the fault's length, not a wait for something
    proxy.thaw()
    tier.wait_finished(tournament_id, FINISH_S)
    report = tier.ledger(tournament_id, before)
    report.notes.append(f"the relay silent for {silent_s:g} s")
    check_nobody_struck(tier, tournament_id)
    check_exact([report])
