"""What `arena demo` runs: the processes, the bots, the tournaments and their progress.

`arena_cli.demo` is the command; this module does the work once its data
folder is ready.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import socket
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from arena_cli.env import env
from arena_cli.ladder_cmd import standings_text
from arena_cli.processes import free_port, processes, spawn, wait_serving
from arena_cli.tournament_cmd import tournament_text
from bots.sdk import register
from ladder import queries, tournaments
from ladder.records import TournamentStatus
from ladder.store import Store
from workers import WorkerSettings, make_app
from workers.tasks import CREATE_ROUND_ROBIN

BOTS = ("rules", "rules", "rules", "random", "random", "random")
LADDER_INTERVAL_S = "5"
"""With --serve, how often (seconds) the continuous ladder pairs the connected bots."""

# Goof plays two rounds here instead of five so the demo takes about two minutes.
TOURNAMENTS: tuple[tuple[str, int, dict[str, str]], ...] = (
    ("goodge", 4, {}),
    ("golden10", 5, {}),
    ("goof", 4, {"rounds": "2"}),
)


@dataclass(frozen=True)
class Ports:
    """Where the demo's processes listen."""

    referee: int
    referee_metrics: int
    worker_metrics: int
    web: int


def port_or_free(preferred: int) -> int:
    """`preferred` when nothing listens there, else any free port."""
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", preferred))
        except OSError:
            return free_port()
    return preferred


def run(args: argparse.Namespace, data: Path) -> int:
    """Run the demo in the prepared folder `data`; 0 when every tournament finished."""
    console = Console()
    database_url = env("DATABASE_URL") or f"sqlite:///{data / 'arena.db'}"
    broker_url = env("BROKER_URL")
    ports = Ports(
        referee=port_or_free(50051),
        referee_metrics=port_or_free(9101),
        worker_metrics=port_or_free(9102),
        web=port_or_free(8000),
    )
    referee = f"127.0.0.1:{ports.referee}"
    common = {"ARENA_DATABASE_URL": database_url, "ARENA_REFEREE": referee}
    if broker_url:
        common["ARENA_BROKER_URL"] = broker_url
    logs = data / "logs"
    try:
        return _run(args, console, data, logs, database_url, broker_url, ports, referee, common)
    except KeyboardInterrupt:
        console.print("interrupted: all demo processes stopped")
        return 130


def _run(
    args: argparse.Namespace,
    console: Console,
    data: Path,
    logs: Path,
    database_url: str,
    broker_url: str | None,
    ports: Ports,
    referee: str,
    common: dict[str, str],
) -> int:
    with processes() as started:
        console.print(f"[bold]Card Arena demo[/] — data in {data}, database {database_url}")
        started.append(
            spawn(
                ["referee", "--listen", referee, "--metrics-port", str(ports.referee_metrics)],
                logs / "referee.log",
                common,
            )
        )
        wait_serving(referee)
        console.print(f"  referee  grpc://{referee}  (metrics :{ports.referee_metrics})")
        started.append(
            spawn(
                ["worker", "--metrics-port", str(ports.worker_metrics)],
                logs / "worker.log",
                # Ladder ticks come only from beat, which runs with --serve.
                {**common, "ARENA_LADDER_INTERVAL_S": LADDER_INTERVAL_S},
            )
        )
        broker = broker_url.split("://", 1)[0] if broker_url else "embedded"
        console.print(f"  worker   Celery, {broker} broker (metrics :{ports.worker_metrics})")
        started.append(spawn(["web", "--port", str(ports.web)], logs / "web.log", common))
        console.print(f"  web      http://127.0.0.1:{ports.web}/")
        bot_ids = asyncio.run(_connect_bots(referee, started, logs, common))
        console.print(f"  bots     {len(bot_ids)} reference bots connected: {', '.join(BOTS)}")

        store = Store(database_url)
        try:
            tournament_ids = _create_tournaments(store, bot_ids, args, database_url, broker_url)
            finished = _follow(console, store, tournament_ids, args.timeout_s)
            console.print()
            for tournament_id in tournament_ids:
                console.print(tournament_text(queries.tournament(store, tournament_id)), "\n")
            tables = {lid: queries.standings(store, lid) for lid in queries.ladders(store)}
            console.print("[bold]Ladder standings[/] (live Elo)")
            console.print(standings_text(tables), "\n")
            recent = queries.recent_matches(store, limit=1)
        finally:
            store.close()
        if not finished:
            console.print(f"[red]the tournaments did not finish in {args.timeout_s:g} s[/]")
            return 1
        if not args.serve:
            # The pages stop with the demo: point at them only while they are up.
            console.print(
                "The demo stops here, and its web pages with it; `arena demo --serve` keeps "
                f"them up (the standings, replays) until Ctrl-C. Data: {data}"
            )
        else:
            console.print(f"Standings page: http://127.0.0.1:{ports.web}/")
            # The demo's bots are the operator's, as the web's play bot is: each may be
            # challenged, so a person can sit down against them at once.
            console.print(f"Play the bots:  http://127.0.0.1:{ports.web}/play")
            if recent:
                console.print(
                    f"A replay:       http://127.0.0.1:{ports.web}/matches/{recent[0].match_id}"
                )
            _serve(console, started, logs, common)
    console.print("all demo processes stopped")
    return 0


async def _connect_bots(
    referee: str,
    started: list[subprocess.Popen[bytes]],
    logs: Path,
    common: dict[str, str],
) -> list[str]:
    """Register the six bots and start one `arena bot run` process each."""
    run = uuid.uuid4().hex[:6]
    ids = []
    for number, kind in enumerate(BOTS, start=1):
        reply = await register(
            referee, f"{kind}-{number}", f"demo-{run}", ["goodge", "golden10", "goof"]
        )
        ids.append(reply.bot_id)
        started.append(
            spawn(
                ["bot", "run", kind, "--referee", referee, "--capacity", "8"],
                logs / f"bot-{kind}-{number}.log",
                {**common, "ARENA_BOT_TOKEN": reply.token},
            )
        )
    return ids


def _create_tournaments(
    store: Store,
    bot_ids: list[str],
    args: argparse.Namespace,
    database_url: str,
    broker_url: str | None,
) -> list[str]:
    """One duplicate round robin per demo ladder, handed to the workers."""
    app = make_app(
        settings=WorkerSettings.from_env(
            database_url=database_url, broker_url=broker_url, metrics_port=0
        )
    )
    ids = []
    try:
        for number, (game, players, options) in enumerate(TOURNAMENTS):
            tournament_id = tournaments.create_tournament(
                store,
                game,
                players,
                bot_ids,
                duplicate=True,
                deadline_ms=args.deadline_ms,
                name=f"demo {game}-{players}p",
                options=dict(options),
                # None: the tournament draws secret seeds, so no two demos deal alike.
                seed=None if args.seed is None else args.seed * 100 + number,
                max_matches=args.matches,
            )
            app.enqueue(CREATE_ROUND_ROBIN, tournament_id)
            ids.append(tournament_id)
    finally:
        app.close()
    return ids


def _follow(console: Console, store: Store, tournament_ids: list[str], timeout_s: float) -> bool:
    """Progress bars until every tournament has finished (or the time is up)."""
    deadline = time.monotonic() + timeout_s
    with Progress(
        TextColumn("{task.description:<14}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("matches"),
        TimeElapsedColumn(),
        console=console,
    ) as progress:
        bars = {}
        for tournament_id in tournament_ids:
            view = queries.tournament(store, tournament_id)
            bars[tournament_id] = progress.add_task(
                f"{view.game}-{view.players}p", total=view.matches_total
            )
        while time.monotonic() < deadline:
            views = [queries.tournament(store, tournament_id) for tournament_id in tournament_ids]
            for view in views:
                progress.update(bars[view.id], completed=view.matches_finished)
            if all(view.status == TournamentStatus.FINISHED for view in views):
                return True
            time.sleep(0.5)
    return False


def _serve(
    console: Console,
    started: list[subprocess.Popen[bytes]],
    logs: Path,
    common: dict[str, str],
) -> None:
    """Keep running with beat's continuous ladder until Ctrl-C or SIGTERM."""
    started.append(
        spawn(["beat"], logs / "beat.log", {**common, "ARENA_LADDER_INTERVAL_S": LADDER_INTERVAL_S})
    )
    console.print("Serving, continuous ladder on; Ctrl-C stops everything.")
    stop = {"now": False}

    def _stop(signum: int, frame: object) -> None:
        stop["now"] = True

    previous = signal.signal(signal.SIGTERM, _stop)
    try:
        while not stop["now"] and all(process.poll() is None for process in started):
            time.sleep(0.5)
    except KeyboardInterrupt:
        stop["now"] = True  # the user's Ctrl-C, which reached the children too
    finally:
        signal.signal(signal.SIGTERM, previous)
    gone = [" ".join(map(str, process.args)) for process in started if process.poll() is not None]  # type: ignore[arg-type]
    if gone and not stop["now"]:
        console.print(f"[red]a process stopped on its own: {gone[0]}; see {logs}[/]")
