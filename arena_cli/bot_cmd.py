"""`arena bot register|token rotate|transfer|set|matches|run|list|retire`: bots on a
referee, and the registered bots."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import signal
from datetime import datetime
from typing import TYPE_CHECKING, Any

import bots
import games
from arena_cli.author_cmd import add_author_access, bearer, call
from arena_cli.columns import table
from arena_cli.db_cmd import open_store
from arena_cli.env import add_admin_token, add_database, add_referee, env

if TYPE_CHECKING:
    from bots.sdk import BotRunner
    from ladder.queries import BotLine


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `bot register|token|transfer|set|matches|run|list|retire` on the `arena` parser."""
    parser = commands.add_parser(
        "bot", help="register, run, list or retire bots", description="Bots and their versions."
    )
    sub = parser.add_subparsers(dest="bot_command", required=True, metavar="COMMAND")

    reg = sub.add_parser(
        "register",
        help="register a bot version; prints JSON {bot_id, token}",
        description='Register a bot version with the referee. Prints {"bot_id", "token"}: keep '
        "the token, it is shown only once.",
    )
    reg.add_argument("name", help="the bot's name (letters, digits, - _ .)")
    reg.add_argument("--version", default="1", help="the version of this bot (default 1)")
    reg.add_argument(
        "--games",
        default=",".join(games.names()),
        help=f"comma-separated games it plays (default all: {','.join(games.names())})",
    )
    add_author_access(reg)
    reg.set_defaults(run=run_register)

    token = sub.add_parser("token", help="a bot's token")
    token_sub = token.add_subparsers(dest="token_command", required=True, metavar="COMMAND")
    rotate = token_sub.add_parser(
        "rotate",
        help='a new token for a bot version; prints JSON {"bot_id", "token"}',
        description="Replace a bot version's token (its author's token or the admin token). "
        "The session opened with the old token ends at once, on every referee replica, and "
        "the old token is refused from then on. BOT is a name (its latest version), "
        "name@version or an id.",
    )
    rotate.add_argument("bot", metavar="BOT", help="name, name@version or bot id")
    add_author_access(rotate)
    rotate.set_defaults(run=run_rotate)

    transfer = sub.add_parser(
        "transfer",
        help="give a bot name to another author (admin)",
        description="Give a bot name, with every version and look-alike spelling of it, to "
        'another author (needs the admin token). Prints {"name", "author_id", "author"}.',
    )
    transfer.add_argument("name", help="the bot name")
    transfer.add_argument("author", help="the new owner: an author's name or id")
    add_referee(transfer)
    add_admin_token(transfer)
    transfer.set_defaults(run=run_transfer)

    settings = sub.add_parser(
        "set",
        help="whether a bot name accepts challenges",
        description="Set how a bot name (every version of it) takes part: whether other "
        "authors may challenge it (on by default). Needs its author's token or the admin "
        "token. BOT is a name in any spelling, name@version or an id.",
    )
    settings.add_argument("bot", metavar="BOT", help="name, name@version or bot id")
    settings.add_argument(
        "--challenges",
        required=True,
        choices=("on", "off"),
        help="on: other authors may challenge it; off: they are refused",
    )
    settings.add_argument("--json", action="store_true", help='print {"name", "challenges"}')
    add_author_access(settings)
    settings.set_defaults(run=run_set)

    matches = sub.add_parser(
        "matches",
        help="a bot's recent matches with every strike's reason and its answer times",
        description="Your bot's recent recorded matches, newest first: place, score, strikes "
        "and answer times at the referee (p50, p99, slowest) per match, a challenge marked "
        "'challenge by AUTHOR', then each strike and forfeit with its full reason on its own "
        "line. BOT is a name (every version of it), name@version or an id. Needs the bot's "
        "author's token or the admin token.",
    )
    matches.add_argument("bot", metavar="BOT", help="name, name@version or bot id")
    matches.add_argument(
        "--limit",
        type=int,
        default=20,
        metavar="N",
        help="matches to list (default 20, at most 200)",
    )
    matches.add_argument("--json", action="store_true", help="print the list as JSON")
    add_author_access(matches)
    matches.set_defaults(run=run_matches)

    play = sub.add_parser(
        "run",
        help="connect a bot to a referee and play its matches",
        description="Connect a bot and play every match the referee gives it, until Ctrl-C. "
        "BOT is a reference bot (random, rules) or module:Class of your own bots.Bot subclass.",
    )
    play.add_argument("bot", metavar="BOT", help="random, rules, or module:Class")
    play.add_argument(
        "--token",
        default=env("BOT_TOKEN"),
        help="the bot's token from `arena bot register` (env ARENA_BOT_TOKEN)",
    )
    play.add_argument("--capacity", type=int, default=4, help="matches at once (default 4)")
    play.add_argument(
        "--one-session",
        action="store_true",
        help="hold one session, not one on each replica of a referee tier (the tier then "
        "relays the moves of matches played on another replica)",
    )
    add_referee(play)
    play.set_defaults(run=run_bot)

    listing = sub.add_parser(
        "list",
        help="registered bots: versions, games, online state, last seen",
        description="Every registered bot version, by name: its games, whether it holds a "
        "session with a referee now, and when a referee last saw it. Retired versions only "
        "with --all.",
    )
    listing.add_argument("--all", action="store_true", help="include retired versions")
    listing.add_argument("--json", action="store_true", help="print JSON")
    add_database(listing)
    listing.set_defaults(run=run_list)

    retire = sub.add_parser(
        "retire",
        help="hide a bot version from standings and pairing, keeping its history",
        description="Retire a bot version: it leaves the standings, the continuous ladder's "
        "pairing and new tournaments; its matches, replays and rating history stay. BOT is a "
        "name (its latest version), name@version or an id.",
    )
    retire.add_argument("bot", metavar="BOT", help="name, name@version or bot id")
    retire.add_argument("--undo", action="store_true", help="bring a retired version back")
    add_database(retire)
    retire.set_defaults(run=run_retire)


def run_register(args: argparse.Namespace) -> int:
    """Register and print the bot's id and token."""
    from bots.sdk import register  # grpc: loaded only to talk to the referee

    names = [name.strip() for name in args.games.split(",") if name.strip()]
    reply = asyncio.run(register(args.referee, args.name, args.version, names, bearer(args)))
    print(json.dumps({"bot_id": reply.bot_id, "token": reply.token}))
    return 0


def run_rotate(args: argparse.Namespace) -> int:
    """Rotate a bot version's token and print the new one."""
    from cardarena_api.v1 import arena_pb2 as pb

    request = pb.RotateBotTokenRequest(bot=args.bot)
    reply = call(args.referee, bearer(args), "RotateBotToken", request)
    print(json.dumps({"bot_id": reply.bot_id, "token": reply.token}))
    return 0


def run_set(args: argparse.Namespace) -> int:
    """Set whether a bot name accepts challenges and say what it is now."""
    from cardarena_api.v1 import arena_pb2 as pb

    request = pb.SetBotRequest(bot=args.bot, challenges=args.challenges == "on")
    reply = call(args.referee, bearer(args), "SetBot", request)
    if args.json:
        print(json.dumps({"name": reply.name, "challenges": reply.challenges}))
    else:
        print(f"{reply.name} {'accepts' if reply.challenges else 'refuses'} challenges")
    return 0


def run_matches(args: argparse.Namespace) -> int:
    """Print a bot's recent matches as its author sees them."""
    from google.protobuf.json_format import MessageToDict

    from cardarena_api.v1 import arena_pb2 as pb

    request = pb.BotMatchesRequest(bot=args.bot, limit=args.limit)
    reply = call(args.referee, bearer(args), "BotMatches", request)
    if args.json:
        print(
            json.dumps(
                [
                    MessageToDict(
                        line,
                        preserving_proto_field_name=True,
                        always_print_fields_with_no_presence=True,
                    )
                    for line in reply.matches
                ]
            )
        )
        return 0
    if not reply.matches:
        print(f"no recorded matches of {args.bot} yet")
        return 0
    rows = [
        (
            line.match_id,
            line.game,
            f"{line.place}/{line.players}",
            line.score,
            line.strikes,
            # "-": it answered nothing itself (a stand-in played every move).
            *(
                (
                    f"{line.answer_p50_ms:.1f}",
                    f"{line.answer_p99_ms:.1f}",
                    f"{line.answer_max_ms:.1f}",
                )
                if line.answers
                else ("-", "-", "-")
            ),
            f"challenge by {line.challenger}" if line.challenge else "",
        )
        for line in reply.matches
    ]
    headers = ("match", "game", "place", "score", "strikes", "p50 ms", "p99 ms", "max ms", "")
    header, *lines = table(headers, rows, right={2, 3, 4, 5, 6, 7}).splitlines()
    print(header)
    for text, line in zip(lines, reply.matches, strict=True):
        print(text)
        for strike in line.strike_events:
            print(
                f"    strike {strike.strikes} (game {strike.game_index}, seat {strike.seat}): {strike.reason}"
            )
        if line.forfeited:
            print(f"    forfeit: {line.forfeit_reason}")
    return 0


def run_transfer(args: argparse.Namespace) -> int:
    """Give a bot name to another author and say to whom."""
    from cardarena_api.v1 import arena_pb2 as pb

    request = pb.TransferBotRequest(name=args.name, author=args.author)
    reply = call(args.referee, args.admin_token, "TransferBot", request)
    print(json.dumps({"name": reply.name, "author_id": reply.author_id, "author": reply.author}))
    return 0


def run_bot(args: argparse.Namespace) -> int:
    """Play until interrupted."""
    from bots.sdk import AuthError, BotRunner  # grpc: loaded only to talk to the referee
    from cardarena_api import event_loop

    if not args.token:
        raise ValueError("a bot needs its token: --token T or ARENA_BOT_TOKEN")
    if args.capacity < 1:
        raise ValueError("--capacity must be at least 1")
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    runner = BotRunner(
        bots.load(args.bot),
        args.referee,
        args.token,
        args.capacity,
        every_replica=not args.one_session,
    )
    try:
        event_loop.run(_play(runner))
    except KeyboardInterrupt:
        pass
    except AuthError as error:
        raise ValueError(f"the referee refused the token: {error}") from None
    logging.getLogger("arena.bot").info(
        "stopped: %d answers, %d matches ended", runner.stats.answered, runner.stats.matches_ended
    )
    return 0


def bot_json(line: BotLine) -> dict[str, Any]:
    """One line of `arena bot list --json`."""
    return {
        "id": line.id,
        "name": line.name,
        "version": line.version,
        "games": list(line.games),
        "online": line.online,
        "last_seen_at": line.last_seen_at.isoformat() if line.last_seen_at else None,
        "retired": line.retired,
        "created_at": line.created_at.isoformat(),
    }


def ago(moment: datetime | None, now: datetime) -> str:
    """`moment` as people read it in a table: "12 s ago", "3 h ago", "never"."""
    if moment is None:
        return "never"
    seconds = (now - moment).total_seconds()
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds // size:.0f} {unit} ago"
    return f"{max(seconds, 0):.0f} s ago"


def run_list(args: argparse.Namespace) -> int:
    """Print the registered bots."""
    from ladder import queries

    store = open_store(args)
    try:
        lines = queries.bot_lines(store, retired=args.all)
        now = store.database_now()  # the clock `last_seen_at` is by
    finally:
        store.close()
    if args.json:
        print(json.dumps([bot_json(line) for line in lines]))
        return 0
    if not lines:
        print("no bots registered yet (arena bot register NAME)")
        return 0
    rows = [
        (
            line.name,
            line.version,
            ",".join(line.games),
            "online" if line.online else "offline",
            ago(line.last_seen_at, now),
            line.id + ("  (retired)" if line.retired else ""),
        )
        for line in lines
    ]
    print(table(("name", "version", "games", "state", "last seen", "id"), rows))
    return 0


def run_retire(args: argparse.Namespace) -> int:
    """Retire (or bring back) one bot version."""
    from ladder import queries

    store = open_store(args)
    try:
        try:
            ref = queries.resolve_bot(store, args.bot)
        except queries.UnknownBot as error:
            raise ValueError(str(error)) from None
        store.retire_bot(ref.id, retired=not args.undo)
    finally:
        store.close()
    label = f"{ref.name}@{ref.version} ({ref.id})"
    if args.undo:
        print(f"{label} is back in the standings and pairing")
    else:
        print(f"retired {label}: left out of standings and pairing; its history stays")
    return 0


async def _play(runner: BotRunner) -> None:
    """Run the bot; SIGTERM (or Ctrl-C) ends its session and the process cleanly."""
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(signum, runner.stop)
    await runner.run()
