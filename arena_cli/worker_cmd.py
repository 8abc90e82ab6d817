"""`arena worker`, `arena beat`, `arena tournament ...` and `arena ladder`.

The scheduling half of the arena: Celery workers that ask the referee to
play tournaments' matches and record them, beat that starts scheduled
tournaments and the continuous ladder, and the commands that create
tournaments and show tables and standings. Heavy imports (Celery, the store)
happen when a command runs, so `arena --help` stays quick.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
from typing import TYPE_CHECKING, Any

import games
from arena_cli.env import (
    add_admin_token,
    add_database,
    add_env_option,
    add_referee,
    add_rules_option,
    env,
)

if TYPE_CHECKING:
    from ladder.store import Store

DEFAULT_METRICS_PORT = 9102
POOLS = ("threads", "prefork", "solo")


def _add_broker(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--broker",
        default=env("BROKER_URL"),
        metavar="URL",
        help="Celery broker, e.g. redis://host:6379/0 (env ARENA_BROKER_URL; default: the "
        "embedded filesystem transport in .arena/ beside the SQLite database, no server needed)",
    )


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `worker`, `beat`, `tournament` and `ladder` on the `arena` parser."""
    _add_worker(commands)
    _add_beat(commands)
    _add_tournament(commands)
    _add_ladder(commands)


# worker and beat --------------------------------------------------------------


def _add_worker(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "worker",
        help="run a Celery worker: plays tournaments' matches on the referee and records them",
        description="Run a Celery worker. It takes tasks from the broker (create a round robin, "
        "play a match, finish a tournament, beat's ticks), asks the referee to play, and records "
        "every result exactly once in the database, which it must share with the referee. "
        "SIGTERM stops it after the running tasks (unfinished ones are redelivered).",
    )
    add_env_option(
        parser,
        "--concurrency",
        "WORKER_CONCURRENCY",
        8,
        "tasks at once (a match task mostly waits)",
        int,
        metavar="N",
    )
    parser.add_argument(
        "--pool",
        choices=POOLS,
        default=env("WORKER_POOL", "threads"),
        help="threads (default), prefork (processes) or solo (one task at a time); "
        "env ARENA_WORKER_POOL",
    )
    add_database(parser)
    _add_broker(parser)
    add_referee(parser)
    add_admin_token(parser)
    add_env_option(
        parser,
        "--metrics-port",
        "WORKER_METRICS_PORT",
        DEFAULT_METRICS_PORT,
        "Prometheus /metrics port, 0 for none",
        int,
        metavar="PORT",
    )
    parser.add_argument("--loglevel", default="INFO", help="log level (default INFO)")
    parser.set_defaults(run=run_worker)


def _add_beat(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "beat",
        help="run Celery beat: scheduled tournaments and the continuous ladder",
        description="Run Celery beat (exactly one per arena). Every minute it starts the runs of "
        "scheduled tournaments that are due; every --ladder-interval-s seconds it pairs the "
        "connected bots that are free into ladder matches. Workers do the work.",
    )
    add_database(parser)
    _add_broker(parser)
    add_referee(parser)
    add_admin_token(parser)
    add_env_option(
        parser,
        "--ladder-interval-s",
        "LADDER_INTERVAL_S",
        30,
        "seconds between ladder ticks, 0 for no ladder",
        float,
        metavar="S",
    )
    parser.add_argument(
        "--schedule-file",
        metavar="PATH",
        help="beat's state file (default .arena/beat-schedule beside the database)",
    )
    parser.add_argument("--loglevel", default="INFO", help="log level (default INFO)")
    parser.set_defaults(run=run_beat)


def _settings(args: argparse.Namespace, **extra: Any) -> Any:
    from workers import WorkerSettings

    return WorkerSettings.from_env(
        database_url=args.db,
        broker_url=getattr(args, "broker", None),
        referee=getattr(args, "referee", None),
        admin_token=getattr(args, "admin_token", None),
        **extra,
    )


def run_worker(args: argparse.Namespace) -> int:
    """Run a worker until it is stopped."""
    from workers import make_app
    from workers.celery_app import QUEUE
    from workers.metrics import MULTIPROC_ENV

    if args.concurrency < 1:
        raise ValueError("--concurrency must be at least 1")
    created_dir = None
    if args.pool == "prefork" and args.metrics_port and not os.environ.get(MULTIPROC_ENV):
        # Prefork children count in files that the main process sums for /metrics.
        created_dir = tempfile.mkdtemp(prefix="arena-worker-metrics-")
        os.environ[MULTIPROC_ENV] = created_dir
    app = make_app(settings=_settings(args, metrics_port=args.metrics_port))
    argv = [
        "worker",
        f"--pool={args.pool}",
        f"--concurrency={args.concurrency}",
        f"--loglevel={args.loglevel}",
        f"--queues={QUEUE}",
        f"--hostname=arena-{os.getpid()}@%h",
        "--without-mingle",
        "--without-gossip",
    ]
    try:
        app.worker_main(argv)
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else 0
    finally:
        if created_dir is not None:
            shutil.rmtree(created_dir, ignore_errors=True)
    return 0  # pragma: no cover - worker_main always exits


def run_beat(args: argparse.Namespace) -> int:
    """Run beat until it is stopped."""
    from workers import make_app

    if args.ladder_interval_s < 0:
        raise ValueError("--ladder-interval-s must be 0 (off) or positive")
    settings = _settings(args, ladder_interval_s=args.ladder_interval_s, metrics_port=0)
    schedule = args.schedule_file
    if schedule is None:
        settings.folder.mkdir(parents=True, exist_ok=True)
        schedule = str(settings.folder / "beat-schedule")
    app = make_app(settings=settings)
    try:
        app.start(["beat", f"--loglevel={args.loglevel}", f"--schedule={schedule}"])
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else 0
    return 0  # pragma: no cover - start always exits


# tournaments ------------------------------------------------------------------


def _add_tournament(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "tournament",
        help="create tournaments and show their tables",
        description="Round-robin tournaments of duplicate matches, played by the workers.",
    )
    sub = parser.add_subparsers(dest="tournament_command", required=True, metavar="COMMAND")

    create = sub.add_parser(
        "create",
        help="create a round robin (every combination of --players bots) and start it",
        description="Create a round robin: every combination of --players of the --bots plays "
        "one match (duplicate by default: the deal replayed with the seats rotated). Prints the "
        "tournament's id and hands it to the workers; with --schedule it is a template that "
        "beat runs at every tick of the cron schedule (UTC).",
    )
    create.add_argument("--game", required=True, choices=games.names())
    create.add_argument("--players", type=int, required=True, help="seats in each match")
    create.add_argument(
        "--bots",
        required=True,
        metavar="A,B,C,...",
        help="comma-separated entrants: a name (its latest version), name@version or a bot id",
    )
    create.add_argument(
        "--duplicate",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="replay each deal with the seats rotated (default: on)",
    )
    create.add_argument(
        "--deadline-ms", type=int, default=500, help="per-move deadline (default 500)"
    )
    create.add_argument("--name", help="a name to show (default: the ladder and the date)")
    create.add_argument(
        "--schedule",
        metavar="CRON",
        help='run it on a cron schedule, UTC, e.g. "0 3 * * *" (a template: nothing runs now)',
    )
    create.add_argument("--seed", type=int, help="seed of the plan and the deals (default random)")
    add_rules_option(create)
    create.add_argument(
        "--max-matches",
        type=int,
        default=200,
        metavar="N",
        help="above this many combinations, play a balanced subset of N (default 200)",
    )
    add_database(create)
    _add_broker(create)
    create.set_defaults(run=run_create)

    start = sub.add_parser(
        "start",
        help="hand a tournament's unrecorded matches to the workers again",
        description="Enqueue the tournament's matches that are not recorded yet (safe to repeat: "
        "a match is never played or counted twice).",
    )
    start.add_argument("id", help="the tournament id")
    add_database(start)
    _add_broker(start)
    start.set_defaults(run=run_start)

    show = sub.add_parser(
        "show",
        help="a tournament's progress and table",
        description="A tournament's progress and, once finished, its table: maximum-likelihood "
        "(Plackett-Luce) ratings with 95%% confidence intervals from all its games.",
    )
    show.add_argument("id", help="the tournament id")
    show.add_argument("--json", action="store_true", help="print JSON")
    add_database(show)
    show.set_defaults(run=run_show)

    listing = sub.add_parser("list", help="tournaments, newest first")
    listing.add_argument("--json", action="store_true", help="print JSON")
    add_database(listing)
    listing.set_defaults(run=run_list)

    los = sub.add_parser(
        "los",
        help="is bot A stronger than bot B? (likelihood of superiority, SPRT)",
        description="A's wins, draws and losses against B in the tournament's games (a win is a "
        "better rank than B's), the likelihood of superiority, and an SPRT of elo0=0 vs elo1=10.",
    )
    los.add_argument("id", help="the tournament id")
    los.add_argument("a", help="bot A (name, name@version or id)")
    los.add_argument("b", help="bot B (name, name@version or id)")
    los.add_argument("--json", action="store_true", help="print JSON")
    add_database(los)
    los.set_defaults(run=run_los)


def _store(args: argparse.Namespace) -> Store:
    from sqlalchemy.exc import DBAPIError

    from ladder.store import Store

    try:
        return Store(args.db)
    except DBAPIError as error:
        raise ValueError(f"cannot open the database {args.db}: {error.orig}") from None


def _enqueue_round_robin(args: argparse.Namespace, tournament_id: str) -> None:
    from workers import make_app
    from workers.tasks import CREATE_ROUND_ROBIN

    app = make_app(settings=_settings(args, metrics_port=0))
    try:
        app.enqueue(CREATE_ROUND_ROBIN, tournament_id)
    except Exception as error:
        raise ValueError(
            f"tournament {tournament_id} was created, but its matches could not be handed to "
            f"the workers ({error}); fix the broker and run `arena tournament start "
            f"{tournament_id}`"
        ) from None
    finally:
        app.close()


def run_create(args: argparse.Namespace) -> int:
    """Create the tournament, print its id, hand it to the workers."""
    from ladder import league

    bots = [bot.strip() for bot in args.bots.split(",") if bot.strip()]
    store = _store(args)
    try:
        tournament_id = league.create_tournament(
            store,
            args.game,
            args.players,
            bots,
            duplicate=args.duplicate,
            deadline_ms=args.deadline_ms,
            name=args.name,
            schedule=args.schedule,
            options=games.parse_option_pairs(args.option),
            seed=args.seed,
            max_matches=args.max_matches,
        )
    finally:
        store.close()
    if args.schedule is None:
        _enqueue_round_robin(args, tournament_id)
    print(tournament_id)
    return 0


def _tournament_view(args: argparse.Namespace) -> Any:
    """The tournament `args.id` as shown; a clear error if there is none."""
    from ladder import queries
    from ladder.store import NotFound

    store = _store(args)
    try:
        return queries.tournament(store, args.id)
    except NotFound as error:
        raise ValueError(str(error)) from None
    finally:
        store.close()


def run_start(args: argparse.Namespace) -> int:
    """Enqueue create_round_robin for an existing tournament."""
    view = _tournament_view(args)
    if view.status == "scheduled":
        raise ValueError(f"tournament {args.id} is a scheduled template: beat starts its runs")
    _enqueue_round_robin(args, args.id)
    print(args.id)
    return 0


def tournament_json(view: Any) -> dict[str, Any]:
    """The JSON of `arena tournament show --json`."""
    return {
        "id": view.id,
        "name": view.name,
        "game": view.game,
        "players": view.players,
        "status": view.status,
        "schedule": view.schedule,
        "matches_total": view.matches_total,
        "matches_finished": view.matches_finished,
        "table": [
            {
                "bot": line.bot,
                "bot_id": line.bot_id,
                "rating": line.rating,
                "ci_low": line.ci_low,
                "ci_high": line.ci_high,
                "games": line.games,
            }
            for line in view.table
        ],
        "created_at": view.created_at.isoformat(),
        "finished_at": view.finished_at.isoformat() if view.finished_at else None,
    }


def run_show(args: argparse.Namespace) -> int:
    """Print one tournament."""
    view = _tournament_view(args)
    if args.json:
        print(json.dumps(tournament_json(view)))
        return 0
    print(tournament_text(view))
    return 0


def tournament_text(view: Any) -> str:
    """A tournament as `arena tournament show` prints it."""
    ladder = f"{view.game}-{view.players}p"
    lines = [f"tournament {view.id} ({view.name}), {ladder}: {view.status}"]
    if view.schedule:
        lines.append(f"  schedule: {view.schedule} (UTC)")
    lines.append(f"  matches: {view.matches_finished}/{view.matches_total} recorded")
    if view.table:
        width = max(len(line.bot) for line in view.table)
        lines.append(
            f"  {'#':>3}  {'bot':<{width}}  {'rating':>7}  {'95% interval':>17}  {'games':>5}"
        )
        for rank, line in enumerate(view.table, start=1):
            interval = f"[{line.ci_low:.0f}, {line.ci_high:.0f}]"
            lines.append(
                f"  {rank:>3}  {line.bot:<{width}}  {line.rating:>7.1f}  {interval:>17}  "
                f"{line.games:>5}"
            )
    return "\n".join(lines)


def run_list(args: argparse.Namespace) -> int:
    """Print the tournaments, newest first."""
    from ladder import queries

    store = _store(args)
    try:
        views = queries.tournaments(store)
    finally:
        store.close()
    if args.json:
        print(json.dumps([tournament_json(view) for view in views]))
        return 0
    for view in views:
        print(
            f"{view.id}  {view.game}-{view.players}p  {view.status:<9}  "
            f"{view.matches_finished}/{view.matches_total}  {view.name}"
        )
    return 0


def run_los(args: argparse.Namespace) -> int:
    """Print A against B."""
    from ladder import league
    from ladder.store import NotFound

    store = _store(args)
    try:
        data = league.tournament_los(store, args.id, args.a, args.b)
    except NotFound as error:
        raise ValueError(str(error)) from None
    finally:
        store.close()
    if args.json:
        print(json.dumps(data))
        return 0
    test = data["sprt"]
    print(
        f"{args.a} against {args.b} in {args.id}: {data['wins']} wins, {data['draws']} draws, "
        f"{data['losses']} losses"
    )
    print(f"  likelihood of superiority: {100 * data['los']:.1f}%")
    print(
        f"  SPRT elo0={test['elo0']:g} elo1={test['elo1']:g}: LLR {test['llr']:.2f} "
        f"in [{test['lower']:.2f}, {test['upper']:.2f}] -> {test['decision']}"
    )
    return 0


# ladder -----------------------------------------------------------------------


def _add_ladder(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "ladder",
        help="live Elo standings of a ladder (or of all ladders)",
        description="The live multiplayer Elo standings: one ladder per game and player count, "
        "e.g. goodge-4p. A rating is provisional until the bot has played 20 rated matches.",
    )
    parser.add_argument("ladder", nargs="?", help="a ladder id such as goodge-4p (default: all)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    add_database(parser)
    parser.set_defaults(run=run_ladder)


def run_ladder(args: argparse.Namespace) -> int:
    """Print standings."""
    from ladder import queries

    store = _store(args)
    try:
        known = queries.ladders(store)
        if args.ladder is not None and args.ladder not in known:
            raise ValueError(
                f"no ladder {args.ladder!r}; ladders are: {', '.join(known) or 'none yet'}"
            )
        chosen = [args.ladder] if args.ladder else known
        tables = {lid: queries.standings(store, lid) for lid in chosen}
    finally:
        store.close()
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "ladder": lid,
                        "rank": line.rank,
                        "bot": line.bot,
                        "bot_id": line.bot_id,
                        "version": line.version,
                        "rating": round(line.rating, 2),
                        "games": line.games,
                        "provisional": line.provisional,
                    }
                    for lid, lines in tables.items()
                    for line in lines
                ]
            )
        )
        return 0
    print(standings_text(tables))
    return 0


def standings_text(tables: dict[str, Any]) -> str:
    """Ladder standings as `arena ladder` prints them."""
    out = []
    for lid, lines in tables.items():
        out.append(f"{lid}:")
        if not lines:
            out.append("  (no rated bots yet)")
        width = max((len(f"{line.bot}@{line.version}") for line in lines), default=0)
        for line in lines:
            mark = "  (provisional)" if line.provisional else ""
            name = f"{line.bot}@{line.version}"
            out.append(
                f"  {line.rank:>3}. {name:<{width}}  {line.rating:>7.1f}  "
                f"{line.games:>4} matches{mark}"
            )
    return "\n".join(out) if out else "no ladders yet"
