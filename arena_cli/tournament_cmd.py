"""`arena tournament create|start|show|list|cancel|los`: round robins and Swiss tournaments,
played by the workers.

The store, the ratings (scipy) and Celery are imported when a command runs,
so `arena --help` stays quick.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import games
from arena_cli.broker import add_broker, worker_settings
from arena_cli.columns import table
from arena_cli.db_cmd import open_store
from arena_cli.env import add_database, add_rules_option
from arena_cli.progress import progress, wanted
from ladder.records import TournamentStatus
from ladder.wording import plural, rating_cells

if TYPE_CHECKING:
    from ladder.queries import TournamentView
    from ladder.store import Store
    from ladder.swiss_rounds import RoundView, StandingLine

FORMATS = ("round_robin", "swiss")
SEEDINGS = ("draw", "rating")


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `tournament` and its commands on the `arena` parser."""
    parser = commands.add_parser(
        "tournament",
        help="create tournaments and show their tables",
        description="Round-robin and Swiss tournaments of duplicate matches, played by the "
        "workers.",
    )
    sub = parser.add_subparsers(dest="tournament_command", required=True, metavar="COMMAND")

    create = sub.add_parser(
        "create",
        help="create a round robin or a Swiss tournament and start it",
        description="Create a tournament. A round robin (the default): every combination of "
        "--players of the --bots plays one match. A Swiss tournament (--format swiss --rounds "
        "R): R rounds, each seating every bot at one table of --players (the remainder sits "
        "the round out, a bye), the first by a seeded draw or the ladder's ratings, each later "
        "one by the standing so far, with the fewest repeat meetings; it suits a field too "
        "large for a round robin. Matches are duplicate by default (the deal replayed with the "
        "seats rotated). Prints the tournament's id and hands it to the workers; with "
        "--schedule it is a template that beat runs at every tick of the cron schedule (UTC).",
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
        "--format",
        choices=FORMATS,
        default="round_robin",
        help="round_robin (every combination; the default) or swiss (rounds by standing)",
    )
    create.add_argument(
        "--rounds", type=int, metavar="R", help="a Swiss tournament's rounds (required with swiss)"
    )
    create.add_argument(
        "--seeding",
        choices=SEEDINGS,
        default="draw",
        help="a Swiss tournament's first round: a seeded draw (default) or by the bots' "
        "ratings on the ladder, best together",
    )
    create.add_argument(
        "--max-matches",
        type=int,
        default=200,
        metavar="N",
        help="a round robin: above this many combinations, play a balanced subset of N "
        "(default 200)",
    )
    add_database(create)
    add_broker(create)
    create.set_defaults(run=run_create)

    start = sub.add_parser(
        "start",
        help="hand a tournament's unrecorded matches to the workers again",
        description="Enqueue the tournament's matches that are not recorded yet (safe to repeat: "
        "a match is never played or counted twice).",
    )
    start.add_argument("id", help="the tournament id")
    add_database(start)
    add_broker(start)
    start.set_defaults(run=run_start)

    show = sub.add_parser(
        "show",
        help="a tournament's progress and table",
        description="A tournament's progress and, once finished, its table: maximum-likelihood "
        "(Plackett-Luce) ratings with 95% confidence intervals from all its games. A Swiss "
        "tournament's rounds with their tables and byes, and, while it runs, the standing so "
        "far that seats the next round.",
    )
    show.add_argument("id", help="the tournament id")
    show.add_argument("--json", action="store_true", help="print JSON")
    show.add_argument(
        "--watch",
        action="store_true",
        help="follow it until it ends (a progress bar on a terminal), then show it; Ctrl-C "
        "stops watching (the tournament goes on)",
    )
    show.add_argument(
        "--interval",
        type=float,
        default=2.0,
        metavar="S",
        help="with --watch, seconds between looks at the database (default 2)",
    )
    add_database(show)
    show.set_defaults(run=run_show)

    listing = sub.add_parser("list", help="tournaments, newest first")
    listing.add_argument("--json", action="store_true", help="print JSON")
    add_database(listing)
    listing.set_defaults(run=run_list)

    cancel = sub.add_parser(
        "cancel",
        help="stop a tournament: no more of its matches start",
        description="Cancel a running tournament (its matches not yet started are cancelled; "
        "those being played finish and are recorded) or a scheduled template (no more runs; "
        "see also `arena schedule`).",
    )
    cancel.add_argument("id", help="the tournament id")
    cancel.add_argument("--json", action="store_true", help="print JSON")
    add_database(cancel)
    cancel.set_defaults(run=run_cancel)

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


def _enqueue_round_robin(args: argparse.Namespace, tournament_id: str) -> None:
    from workers import make_app
    from workers.tasks import CREATE_ROUND_ROBIN

    app = make_app(settings=worker_settings(args, metrics_port=0))
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
    from ladder import tournaments
    from ladder.records import TournamentFormat
    from ladder.swiss import Seeding

    bots = [bot.strip() for bot in args.bots.split(",") if bot.strip()]
    swiss = args.format == TournamentFormat.SWISS
    if swiss and args.rounds is None:
        raise ValueError("a Swiss tournament needs --rounds R")
    if not swiss and args.rounds is not None:
        raise ValueError("--rounds is for a Swiss tournament (--format swiss)")
    store = open_store(args)
    try:
        tournament_id = tournaments.create_tournament(
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
            format=TournamentFormat(args.format),
            rounds=args.rounds or 1,
            seeding=Seeding(args.seeding),
        )
    finally:
        store.close()
    if args.schedule is None:
        _enqueue_round_robin(args, tournament_id)
    print(tournament_id)
    return 0


def _tournament_view(store: Store, tournament_id: str) -> TournamentView:
    """The tournament as shown; a clear error if there is none."""
    from ladder import queries
    from ladder.store import NotFound

    try:
        return queries.tournament(store, tournament_id)
    except NotFound as error:
        raise ValueError(str(error)) from None


def run_start(args: argparse.Namespace) -> int:
    """Enqueue create_round_robin for an existing tournament."""
    store = open_store(args)
    try:
        view = _tournament_view(store, args.id)
    finally:
        store.close()
    if view.status == TournamentStatus.SCHEDULED:
        raise ValueError(f"tournament {args.id} is a scheduled template: beat starts its runs")
    _enqueue_round_robin(args, args.id)
    print(args.id)
    return 0


def tournament_json(
    view: TournamentView,
    rounds: Sequence[RoundView] = (),
    standings: Sequence[StandingLine] = (),
) -> dict[str, Any]:
    """The JSON of `arena tournament show --json` (and of each of `list --json`, without a
    Swiss tournament's rounds and standing so far)."""
    return {
        "id": view.id,
        "name": view.name,
        "game": view.game,
        "players": view.players,
        "status": view.status,
        "schedule": view.schedule,
        "matches_total": view.matches_total,
        "matches_in_all": view.matches_in_all,
        "matches_finished": view.matches_finished,
        "matches_failed": view.matches_failed,
        "entrants": view.entrants,
        "duplicate": view.duplicate,
        "deadline_ms": view.deadline_ms,
        "options": view.options,
        "parent_id": view.parent_id,
        "format": view.format,
        "rounds": view.rounds,
        "round": view.round,
        "first_round": view.seeding,
        "pairings": [
            {
                "round": shown.number,
                "tables": [
                    {"match_id": match.match_id, "bots": match.bots, "status": match.status}
                    for match in shown.matches
                ],
                "byes": shown.byes,
            }
            for shown in rounds
        ],
        "standings": [
            {
                "bot": line.bot,
                "bot_id": line.bot_id,
                "rating": line.rating,
                "se": line.se,
                "games": line.games,
            }
            for line in standings
        ],
        "table": [
            {
                "bot": line.bot,
                "bot_id": line.bot_id,
                "rating": line.rating,
                "ci_low": line.ci_low,
                "ci_high": line.ci_high,
                "games": line.games,
                "measured": line.measured,
                "bound": line.bound,
                "reason": line.reason,
            }
            for line in view.table
        ],
        "created_at": view.created_at.isoformat(),
        "finished_at": view.finished_at.isoformat() if view.finished_at else None,
    }


def watch(args: argparse.Namespace, store: Store) -> tuple[TournamentView, bool]:
    """Follow tournament `args.id` until it is no longer running, or until Ctrl-C; the
    tournament as it was last seen, and whether it was interrupted."""
    from ladder import queries

    if not 0.1 <= args.interval <= 3600:
        raise ValueError(f"--interval must be 0.1..3600 seconds, got {args.interval:g}")
    view = queries.tournament(store, args.id)
    if view.status == TournamentStatus.SCHEDULED:
        raise ValueError(
            f"tournament {args.id} is a schedule: watch one of its runs (`arena tournament list`)"
        )
    shown = view.matches_finished
    total = view.matches_in_all
    bar = wanted(args.json)
    if not bar and not args.json:
        print(
            f"watching tournament {args.id} ({shown}/{total} recorded); Ctrl-C stops watching",
            file=sys.stderr,
            flush=True,
        )
    with progress(f"tournament {args.id}", total, bar) as advance:
        for _ in range(shown):
            advance()
        try:
            while view.status == TournamentStatus.RUNNING:
                time.sleep(args.interval)
                view = queries.tournament(store, args.id)
                for _ in range(view.matches_finished - shown):
                    advance()
                shown = view.matches_finished
        except KeyboardInterrupt:
            return view, True
    return view, False


def run_show(args: argparse.Namespace) -> int:
    """Print one tournament (after following it, with --watch)."""
    store = open_store(args)
    try:
        if args.watch:
            view, interrupted = watch(args, store)
            if interrupted:
                print("stopped watching; the tournament goes on", file=sys.stderr)
        else:
            view = _tournament_view(store, args.id)
        rounds, standings = _swiss_parts(store, view)
    finally:
        store.close()
    if args.json:
        print(json.dumps(tournament_json(view, rounds, standings)))
        return 0
    print(tournament_text(view, rounds, standings))
    return 0


def _swiss_parts(store: Store, view: TournamentView) -> tuple[list[RoundView], list[StandingLine]]:
    """A Swiss tournament's rounds, and its standing so far while it runs; none for a
    round robin."""
    from ladder import queries, swiss_rounds
    from ladder.records import TournamentFormat

    if view.format != TournamentFormat.SWISS:
        return [], []
    rounds = swiss_rounds.rounds(view, queries.tournament_matches(store, view.id))
    running = view.status == TournamentStatus.RUNNING
    return rounds, swiss_rounds.standings(store, view.id) if running else []


def tournament_text(
    view: TournamentView,
    rounds: Sequence[RoundView] = (),
    standings: Sequence[StandingLine] = (),
) -> str:
    """A tournament as `arena tournament show` prints it."""
    ladder = f"{view.game}-{view.players}p"
    lines = [f"tournament {view.id} ({view.name}), {ladder}: {view.status}"]
    if view.schedule:
        lines.append(f"  schedule: {view.schedule} (UTC)")
    if view.parent_id:
        lines.append(f"  a run of schedule {view.parent_id}")
    settings = [
        "duplicate" if view.duplicate else "not duplicate",
        f"deadline {view.deadline_ms} ms",
        *(f"{key}={value}" for key, value in sorted(view.options.items())),
    ]
    lines.append(f"  entrants: {', '.join(view.entrants)}")
    lines.append(f"  settings: {', '.join(settings)}")
    matches = f"  matches: {view.matches_finished}/{view.matches_in_all} recorded"
    if view.matches_failed:
        matches += f", {view.matches_failed} failed"
    lines.append(matches)
    if view.format == "swiss":
        first = "by a random draw" if view.seeding == "draw" else "by ladder rating"
        lines.append(
            f"  Swiss: round {view.round} of {view.rounds} (the first seated {first}, each "
            "later one by the standing so far)"
        )
    for shown in rounds:
        lines.append(f"  round {shown.number}:")
        cells = [(match.match_id, match.status, ", ".join(match.bots)) for match in shown.matches]
        lines.append(table(("match", "status", "bots, by seat"), cells, indent="    "))
        if shown.byes:
            lines.append(f"    bye: {', '.join(shown.byes)}")
    if standings:
        lines.append(
            "  standing so far (Plackett-Luce fit of the games recorded, the field's prior; "
            "it seats the next round):"
        )
        ranked = [
            (rank, line.bot, f"{line.rating:.0f}", f"±{line.se:.0f}", line.games)
            for rank, line in enumerate(standings, start=1)
        ]
        headers = ("#", "bot", "rating", "error", "games")
        lines.append(table(headers, ranked, right={0, 2, 3, 4}, indent="    "))
    if view.table:
        rows = [
            (
                rank,
                line.bot,
                *rating_cells(
                    line.rating, line.ci_low, line.ci_high, line.bound, line.reason, digits=1
                ),
                line.games,
            )
            for rank, line in enumerate(view.table, start=1)
        ]
        headers = ("#", "bot", "rating", "95% interval", "games")
        lines.append(table(headers, rows, right={0, 2, 3, 4}, indent="  "))
    return "\n".join(lines)


def run_list(args: argparse.Namespace) -> int:
    """Print the tournaments, newest first."""
    from ladder import queries

    store = open_store(args)
    try:
        views = queries.tournaments(store)
    finally:
        store.close()
    if args.json:
        print(json.dumps([tournament_json(view) for view in views]))
        return 0
    if not views:
        print("no tournaments yet (arena tournament create)")
        return 0
    rows = [
        (
            view.id,
            f"{view.game}-{view.players}p",
            view.status,
            f"{view.matches_finished}/{view.matches_in_all}",
            view.name,
        )
        for view in views
    ]
    print(table(("id", "ladder", "status", "matches", "name"), rows, right={3}))
    return 0


def cancel(args: argparse.Namespace, template_only: bool = False) -> int:
    """Cancel tournament (or template) `args.id` and say what that stopped."""
    from ladder import queries, tournaments
    from ladder.errors import LeagueError
    from ladder.store import NotFound

    store = open_store(args)
    try:
        view = queries.tournament(store, args.id)
        if template_only and view.schedule is None:
            raise ValueError(
                f"tournament {args.id} is not a schedule (`arena tournament cancel {args.id}`)"
            )
        cancelled = tournaments.cancel_tournament(store, args.id)
    except (NotFound, LeagueError) as error:
        raise ValueError(str(error)) from None
    finally:
        store.close()
    if args.json:
        print(json.dumps({"id": args.id, "cancelled_matches": cancelled}))
    elif view.schedule is not None:
        print(f"schedule {args.id} ({view.schedule}) cancelled: it starts no more runs")
    else:
        print(
            f"tournament {args.id} cancelled: {plural(len(cancelled), 'match', 'matches')} "
            "not started will not be played"
        )
    return 0


def run_cancel(args: argparse.Namespace) -> int:
    """Cancel a tournament or a template."""
    return cancel(args)


def run_los(args: argparse.Namespace) -> int:
    """Print A against B."""
    from ladder import tables
    from ladder.store import NotFound

    store = open_store(args)
    try:
        data = tables.tournament_los(store, args.id, args.a, args.b)
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
