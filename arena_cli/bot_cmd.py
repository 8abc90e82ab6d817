"""`arena bot register` and `arena bot run`."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import signal
from typing import TYPE_CHECKING

import bots
import games
from arena_cli.env import add_admin_token, add_referee, env

if TYPE_CHECKING:
    from bots.sdk import BotRunner


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `bot register` and `bot run` on the `arena` parser."""
    parser = commands.add_parser("bot", help="register a bot, or run one against a referee")
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
    add_referee(reg)
    add_admin_token(reg)
    reg.set_defaults(run=run_register)

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
    add_referee(play)
    play.set_defaults(run=run_bot)


def run_register(args: argparse.Namespace) -> int:
    """Register and print the bot's id and token."""
    from bots.sdk import register  # grpc: loaded only to talk to the referee

    names = [name.strip() for name in args.games.split(",") if name.strip()]
    reply = asyncio.run(register(args.referee, args.name, args.version, names, args.admin_token))
    print(json.dumps({"bot_id": reply.bot_id, "token": reply.token}))
    return 0


def run_bot(args: argparse.Namespace) -> int:
    """Play until interrupted."""
    from bots.sdk import AuthError, BotRunner  # grpc: loaded only to talk to the referee

    if not args.token:
        raise ValueError("a bot needs its token: --token T or ARENA_BOT_TOKEN")
    if args.capacity < 1:
        raise ValueError("--capacity must be at least 1")
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    runner = BotRunner(bots.load(args.bot), args.referee, args.token, args.capacity)
    try:
        asyncio.run(_play(runner))
    except KeyboardInterrupt:
        pass
    except AuthError as error:
        raise ValueError(f"the referee refused the token: {error}") from None
    logging.getLogger("arena.bot").info(
        "stopped: %d answers, %d matches ended", runner.stats.answered, runner.stats.matches_ended
    )
    return 0


async def _play(runner: BotRunner) -> None:
    """Run the bot; SIGTERM (or Ctrl-C) ends its session and the process cleanly."""
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(signum, runner.stop)
    await runner.run()
