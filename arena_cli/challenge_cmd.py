"""`arena challenge`: an unrated match of one of your bots against bots you choose."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
import uuid
from typing import TYPE_CHECKING, Any

import games
from arena_cli.author_cmd import add_author_access, bearer
from arena_cli.env import add_rules_option
from arena_cli.match_cmd import ask_again, print_match, summary
from ladder.records import MatchStatus

if TYPE_CHECKING:
    from cardarena_api.v1 import arena_pb2 as pb

ABORTED_TIMES = 3
"""How often a challenge whose match was aborted (its referee stopped) is asked for again."""
PROGRESS_EVERY_S = 30.0
"""How often a long wait says on stderr that it still waits."""


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `challenge` on the `arena` parser."""
    parser = commands.add_parser(
        "challenge",
        help="an unrated match of your bot against bots you choose",
        description="Challenge: play one of your bots (BOT) against the bots of --vs, unrated: "
        "the match is recorded with its replay, on each bot's record, and rates nobody. Each "
        "opponent must be online and, if another author's, accept challenges (`arena bot set "
        "BOT --challenges on|off`); one seat per bot, so --players is 1 + the opponents. "
        "Waits for the end and prints the result (asking again, with the same id, for a match "
        "the referee aborted). Your author's quotas bound challenges per hour and at once.",
    )
    parser.add_argument("bot", metavar="BOT", help="your bot: a name, name@version or bot id")
    parser.add_argument(
        "--vs",
        required=True,
        metavar="A,B,...",
        help="the opponents, comma-separated: names, name@version or bot ids",
    )
    parser.add_argument("--game", required=True, choices=games.names())
    parser.add_argument(
        "--duplicate", action="store_true", help="replay the deal with seats rotated, once per seat"
    )
    parser.add_argument(
        "--deadline-ms", type=int, default=0, help="per-move deadline (default: the referee's)"
    )
    add_rules_option(parser)
    parser.add_argument(
        "--id",
        help="the challenge's id (1..40 letters, digits, - or _; default a new one): asking "
        "again with the same id never plays twice",
    )
    parser.add_argument(
        "--no-wait", action="store_true", help="print the match once started, not at its end"
    )
    parser.add_argument("--json", action="store_true", help="print the match as JSON")
    add_author_access(parser)
    parser.set_defaults(run=run_challenge)


async def challenge(
    address: str, token: str | None, request: pb.ChallengeRequest, say: bool
) -> pb.Match:
    """Start the challenge, then (unless `request.wait` is off) wait for its match's end,
    asking again when a stopping replica says so or the match was aborted; `say`: tell
    stderr how the wait goes."""
    from bots.sdk import channel, metadata
    from cardarena_api.v1 import arena_pb2_grpc as pb_grpc

    wait = request.wait
    auth = metadata(token) if token else None
    async with channel(address) as chan:
        stub = pb_grpc.AuthorServiceStub(chan)
        request.wait = False
        match: pb.Match = await stub.Challenge(request, metadata=auth, timeout=30)
        if not wait:
            return match
        if say:
            print(f"match {match.match_id} started; waiting for its end", file=sys.stderr)
        request.wait = True
        telling = asyncio.create_task(_still_waiting(match.match_id, say))
        try:
            for _ in range(ABORTED_TIMES):
                match = await ask_again(lambda: stub.Challenge(request, metadata=auth))
                if match.status != MatchStatus.ABORTED:
                    break
                if say:
                    print(
                        f"match {match.match_id} was aborted ({match.reason}); asking again",
                        file=sys.stderr,
                    )
        finally:
            telling.cancel()
        return match


async def _still_waiting(match_id: str, say: bool) -> None:
    """Every PROGRESS_EVERY_S, a line on stderr: the match still runs."""
    began = time.monotonic()
    while say:
        await asyncio.sleep(PROGRESS_EVERY_S)
        print(
            f"match {match_id}: still playing ({time.monotonic() - began:.0f} s)",
            file=sys.stderr,
        )


def run_challenge(args: argparse.Namespace) -> int:
    """Challenge and print the match; exit 1 unless it finished (or started, --no-wait)."""
    from cardarena_api.v1 import arena_pb2 as pb
    from referee.wire_actions import option_message

    opponents = [bot.strip() for bot in args.vs.split(",") if bot.strip()]
    if not opponents:
        raise ValueError("--vs names 1 opponent or more")
    players = 1 + len(opponents)
    spec = games.get(args.game)
    spec.check_players(players)
    texts = games.parse_option_pairs(args.option)
    resolved = spec.resolve_options(texts, players)
    request = pb.ChallengeRequest(
        challenge_id=args.id or uuid.uuid4().hex[:16],
        bot=args.bot,
        opponents=opponents,
        game=args.game,
        duplicate=args.duplicate,
        deadline_ms=args.deadline_ms,
        option_values={name: option_message(resolved[name]) for name in texts},
        wait=not args.no_wait,
    )
    try:
        match = asyncio.run(challenge(args.referee, bearer(args), request, say=not args.json))
    except KeyboardInterrupt:
        print(
            f"stopped waiting; challenge {request.challenge_id} goes on on the referee "
            f"(arena challenge ... --id {request.challenge_id} asks for it again)",
            file=sys.stderr,
        )
        return 130
    data: dict[str, Any] = summary(match, [args.bot, *opponents])
    print_match(data, args.json)
    if args.no_wait:
        return 0 if match.status != MatchStatus.ABORTED else 1
    return 0 if match.status == MatchStatus.FINISHED else 1
