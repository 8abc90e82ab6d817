"""A referee process for the end-to-end tests, and checks on what it answers.

The referee runs as `arena referee` (temp SQLite db, free port) with the
tests' short clocks; the bots as `arena bot run random|rules`, or
`badbot.py` (tests/support/badbot.py) for misbehaving and recording bots;
matches are started with `arena match run` or the RefereeService stub.
`check_complete`, `check_replay` and the others check a finished match's
result and replay.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import subprocess
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from cardarena_api.v1 import arena_pb2 as pb
from cardarena_api.v1 import arena_pb2_grpc as pb_grpc
from tests.support.processes import PYTHON, REPO, Processes, clean_env, free_port, wait_until

BADBOT = Path(__file__).with_name("badbot.py")
ALL_GAMES = ("goodge", "golden10", "goof")

# Referee settings shared by the e2e tests: short clocks so faults show quickly.
DEADLINE_MS = 200
TIME_BANK_MS = 300
GRACE_S = 2.0
MAX_STRIKES = 3
MAX_MESSAGE_BYTES = 256 * 1024  # the referee's default limit on a bot's message

_names = itertools.count(1)


@dataclass
class BotHandle:
    """A registered bot: its id and token, and the process playing it."""

    name: str
    bot_id: str
    token: str
    proc: subprocess.Popen[bytes] | None = None
    record: Path | None = None

    def records(self) -> list[dict[str, Any]]:
        """What a badbot process recorded so far (JSON lines)."""
        assert self.record is not None, f"{self.name} is not a badbot"
        if not self.record.exists():
            return []
        lines = self.record.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    def received(self, kind: str | None = None) -> list[dict[str, Any]]:
        """The RefereeMessages it received (as dicts), optionally of one kind."""
        messages = [r["message"] for r in self.records() if r["kind"] == "recv"]
        return [m for m in messages if kind is None or kind in m]


@dataclass
class RefereeProc:
    """A referee process and the clients a test uses to talk to it."""

    address: str
    proc: subprocess.Popen[bytes]
    log: Path
    workdir: Path
    procs: Processes
    channel: grpc.Channel = field(init=False)
    author_token: str | None = field(default=None, init=False)
    """The token of the author this test's bots are registered by (made when first needed)."""

    def __post_init__(self) -> None:
        self.channel = grpc.insecure_channel(self.address)
        self.bots = pb_grpc.BotServiceStub(self.channel)
        self.authors = pb_grpc.AuthorServiceStub(self.channel)
        self.matches = pb_grpc.RefereeServiceStub(self.channel)
        self.health = health_pb2_grpc.HealthStub(self.channel)

    def log_tail(self, lines: int = 40) -> str:
        text = self.log.read_text(encoding="utf-8", errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    # bots

    def author(self) -> tuple[tuple[str, str], ...]:
        """Call metadata with the token of this referee's test author (signed up openly)."""
        if self.author_token is None:
            request = pb.CreateAuthorRequest(name=f"tests-{next(_names)}")
            self.author_token = self.authors.CreateAuthor(request, timeout=10).token
        return (("authorization", f"Bearer {self.author_token}"),)

    def register(
        self, prefix: str = "bot", games: Sequence[str] = ALL_GAMES, *, operator: bool = False
    ) -> BotHandle:
        """Register a bot by this referee's test author, or (`operator`) by the operator, as
        the house's reference bots are (the test referees have no admin token: any call is
        the operator's). The ladder never seats two bots of one author together, but may
        the operator's."""
        name = f"{prefix}-{next(_names)}"
        reply = self.bots.Register(
            pb.RegisterRequest(name=name, version="1", games=list(games)),
            metadata=() if operator else self.author(),
            timeout=10,
        )
        return BotHandle(name, reply.bot_id, reply.token)

    def run_bot(
        self, kind: str, bot: BotHandle, capacity: int = 4, procs: Processes | None = None
    ) -> BotHandle:
        """Start `arena bot run KIND` for `bot` (a reference bot)."""
        bot.proc = (procs or self.procs).start(
            f"bot-{bot.name}",
            [
                PYTHON,
                "-m",
                "arena_cli.main",
                "bot",
                "run",
                kind,
                "--token",
                bot.token,
                "--referee",
                self.address,
                "--capacity",
                str(capacity),
            ],
        )
        return bot

    def run_badbot(
        self,
        mode: str,
        bot: BotHandle,
        *extra: str,
        wait: bool = True,
        procs: Processes | None = None,
    ) -> BotHandle:
        """Start `badbot.py --mode MODE` for `bot`, recording to a file."""
        bot.record = self.workdir / f"record-{bot.name}.jsonl"
        bot.proc = (procs or self.procs).start(
            f"badbot-{bot.name}",
            [
                PYTHON,
                str(BADBOT),
                "--referee",
                self.address,
                "--token",
                bot.token,
                "--mode",
                mode,
                "--record",
                str(bot.record),
                "--max-seconds",
                "90",
                *extra,
            ],
        )
        if wait and mode != "badtoken":
            self.wait_connected([bot])
        return bot

    def sessions(self) -> dict[str, pb.SessionInfo]:
        reply = self.matches.ListSessions(pb.ListSessionsRequest(), timeout=10)
        return {s.bot_id: s for s in reply.sessions}

    def wait_connected(self, bots: Sequence[BotHandle], timeout_s: float = 30.0) -> None:
        """Wait until every bot holds a session with this referee."""

        def connected() -> bool:
            for bot in bots:
                if bot.proc is not None and bot.proc.poll() is not None:
                    raise AssertionError(f"bot {bot.name} exited with {bot.proc.returncode}")
            return all(bot.bot_id in self.sessions() for bot in bots)

        wait_until(connected, timeout_s, f"bots {[b.name for b in bots]} to connect", 0.1)

    # matches

    def start_match(
        self,
        match_id: str,
        game: str,
        bots: Sequence[BotHandle],
        *,
        seed: int | None = 1,
        duplicate: bool = False,
        deadline_ms: int = 1000,
        options: dict[str, str] | None = None,
        metadata: Sequence[tuple[str, str]] | None = None,
    ) -> pb.Match:
        """StartMatch; `seed` None leaves the referee to draw a secret one."""
        return self.matches.StartMatch(
            pb.StartMatchRequest(
                match_id=match_id,
                game=game,
                players=len(bots),
                bot_ids=[bot.bot_id for bot in bots],
                duplicate=duplicate,
                deadline_ms=deadline_ms,
                seed=seed,
                options=options or {},
            ),
            metadata=metadata,
            timeout=30,
        )

    def match(self, match_id: str) -> pb.Match:
        """The match as it is now (GetMatch without waiting)."""
        return self.matches.GetMatch(pb.GetMatchRequest(match_id=match_id), timeout=10)

    def wait_match(self, match_id: str, timeout_s: float = 60.0) -> pb.Match:
        try:
            return self.matches.GetMatch(
                pb.GetMatchRequest(match_id=match_id, wait=True), timeout=timeout_s
            )
        except grpc.RpcError as error:
            raise AssertionError(
                f"match {match_id} did not end: {error}\n--- referee log:\n{self.log_tail()}"
            ) from None

    def play(self, match_id: str, game: str, bots: Sequence[BotHandle], **kwargs: Any) -> pb.Match:
        """Start a match through the stub and wait for its end."""
        self.start_match(match_id, game, bots, **kwargs)
        return self.wait_match(match_id)

    def cli_match(
        self,
        game: str,
        bots: Sequence[BotHandle],
        *,
        seed: int,
        duplicate: bool = False,
        deadline_ms: int = 1000,
        options: Sequence[str] = (),
        match_id: str | None = None,
        timeout_s: float = 90.0,
    ) -> dict[str, Any]:
        """`arena match run ... --json`: the match summary it prints."""
        argv = [
            PYTHON,
            "-m",
            "arena_cli.main",
            "match",
            "run",
            "--game",
            game,
            "--bots",
            ",".join(bot.bot_id for bot in bots),
            "--seed",
            str(seed),
            "--deadline-ms",
            str(deadline_ms),
            "--referee",
            self.address,
            "--wait-for-bots",
            "60",
            "--json",
        ]
        if duplicate:
            argv.append("--duplicate")
        if match_id:
            argv += ["--match-id", match_id]
        for option in options:
            argv += ["--option", option]
        done = subprocess.run(
            argv, cwd=REPO, env=clean_env(), capture_output=True, text=True, timeout=timeout_s
        )
        assert done.returncode == 0, (
            f"arena match run failed ({done.returncode}): {done.stdout}{done.stderr}\n"
            f"--- referee log:\n{self.log_tail()}"
        )
        return dict(json.loads(done.stdout))

    def replay(self, match_id: str) -> pb.Replay:
        return self.matches.GetReplay(pb.GetMatchRequest(match_id=match_id), timeout=30)


def referee_command(address: str, db: str, *extra: str) -> list[str]:
    """`arena referee` on `address` and `db` with the tests' clock and strike settings."""
    return [
        PYTHON,
        "-m",
        "arena_cli.main",
        "referee",
        "--listen",
        address,
        "--db",
        db,
        "--metrics-port",
        "0",
        "--deadline-ms",
        str(DEADLINE_MS),
        "--time-bank-ms",
        str(TIME_BANK_MS),
        "--grace-s",
        str(GRACE_S),
        "--max-strikes",
        str(MAX_STRIKES),
        "--shutdown-grace-s",
        "1",
        # One test author registers every bot of a module's referee: more than 10 names.
        "--names-per-author",
        "0",
        *extra,
    ]


@contextlib.contextmanager
def running_referee(workdir: Path, *extra: str) -> Iterator[RefereeProc]:
    """A referee (`launch_referee`) for the block; it and its clients closed at the end."""
    procs = Processes(workdir)
    try:
        ref = launch_referee(workdir, procs, *extra)
        yield ref
        ref.channel.close()
    finally:
        procs.close()


def launch_referee(
    workdir: Path, procs: Processes, *extra: str, db: str | None = None
) -> RefereeProc:
    """Start `arena referee` on a free loopback port, on `db` (by default a new SQLite
    database in `workdir`); wait until it serves."""
    port = free_port()
    address = f"127.0.0.1:{port}"
    db = db or f"sqlite:///{workdir / 'arena.db'}"
    proc = procs.start("referee", referee_command(address, db, *extra))
    referee = RefereeProc(address, proc, workdir / "referee.log", workdir, procs)

    def serving() -> bool:
        if proc.poll() is not None:
            raise AssertionError(f"referee exited ({proc.returncode}):\n{referee.log_tail()}")
        try:
            reply = referee.health.Check(health_pb2.HealthCheckRequest(service=""), timeout=1)
        except grpc.RpcError:
            return False
        return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)

    wait_until(serving, 30, "the referee to serve", 0.1)
    return referee


# Checks shared by the e2e tests -------------------------------------------------


def result_of(match: pb.Match) -> dict[str, Any]:
    """The full result dict of a finished match (MatchResult.json)."""
    assert match.status == "finished", f"match {match.match_id}: {match.status} {match.reason}"
    return dict(json.loads(match.result.json))


def rotated(bot_ids: Sequence[str], shift: int) -> list[str]:
    """Seats of rotation `shift`: entry i of the match sits at seat (i + shift) mod n."""
    n = len(bot_ids)
    seats = [""] * n
    for entry, bot in enumerate(bot_ids):
        seats[(entry + shift) % n] = bot
    return seats


def check_complete(
    result: dict[str, Any],
    game: str,
    bot_ids: Sequence[str],
    *,
    seed: int,
    duplicate: bool,
    forfeits: Sequence[str] = (),
) -> None:
    """A complete match result: every entry scored and ranked, one game per rotation.

    Duplicate games seat the bots rotated (each bot plays each seat once) on
    the same seed; totals are the sums of each bot's game scores; ranks
    follow the totals, and forfeiting bots come last.
    """
    import games
    from games.core import rank_scores

    n = len(bot_ids)
    spec = games.get(game)
    assert result["bots"] == list(bot_ids)
    assert sorted(result["forfeits"]) == sorted(set(forfeits))
    assert len(result["scores"]) == n and len(result["ranks"]) == n
    played = result["games"]
    assert len(played) == (n if duplicate else 1)
    totals = [0] * n
    for shift, one in enumerate(played):
        assert one["seed"] == str(seed)
        assert one["seats"] == rotated(bot_ids, shift)
        assert len(one["scores"]) == n
        assert list(one["ranks"]) == list(rank_scores(one["scores"], spec.higher_is_better))
        assert one["rounds"] >= 1
        for seat, bot in enumerate(one["seats"]):
            totals[list(bot_ids).index(bot)] += one["scores"][seat]
    if duplicate:
        for entry in range(n):
            held = {one["seats"].index(bot_ids[entry]) for one in played}
            assert held == set(range(n)), "each bot plays each seat once"
    assert result["scores"] == totals
    playing = [e for e in range(n) if bot_ids[e] not in forfeits]
    expected = rank_scores([totals[e] for e in playing], spec.higher_is_better)
    assert [result["ranks"][e] for e in playing] == list(expected)
    for entry in range(n):
        if bot_ids[entry] in forfeits:
            assert result["ranks"][entry] == len(playing) + 1
            assert all(result["ranks"][e] < result["ranks"][entry] for e in playing)


def replay_logs(
    referee: RefereeProc, match_id: str
) -> list[tuple[list[str], dict[str, Any], list[Any]]]:
    """GetReplay: (seats, engine log, referee events) per game, in game order."""
    reply = referee.replay(match_id)
    assert reply.match_id == match_id
    assert [g.game_index for g in reply.games] == list(range(len(reply.games)))
    return [(list(g.seats), json.loads(g.log_json), json.loads(g.events_json)) for g in reply.games]


def check_replay(referee: RefereeProc, match_id: str, result: dict[str, Any]) -> None:
    """GetReplay's logs rebuild, through games.replay, every game's result."""
    import games

    logs = replay_logs(referee, match_id)
    assert len(logs) == len(result["games"])
    for (seats, log, events), one in zip(logs, result["games"], strict=True):
        assert seats == one["seats"]
        assert log["game"] == result["game"] and str(log["seed"]) == one["seed"]
        state = games.replay(log)  # type: ignore[arg-type]
        assert state.is_over()
        assert list(state.result().scores) == one["scores"]
        assert list(state.result().ranks) == one["ranks"]
        assert state.round == one["rounds"]
        kinds = [event["type"] for event in events]
        assert kinds[0] == "game_start" and kinds[-1] == "game_end"
        assert events[-1]["scores"] == one["scores"]


def match_ended(bot: BotHandle, match_id: str) -> bool:
    """Whether the bot has received the MatchEnd of `match_id`."""
    return any(m["match_end"]["match_id"] == match_id for m in bot.received("match_end"))


def records_until(bot: BotHandle, check: Callable[[list[dict[str, Any]]], Any], what: str) -> Any:
    """Wait (bounded) until a badbot's records satisfy `check`; returns its value."""
    return wait_until(lambda: check(bot.records()), 15, f"{bot.name}: {what}", 0.05)
