"""`arena match run`: play one match on a running referee."""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import uuid
from typing import Any

import games
from arena_cli.env import add_admin_token, add_referee, add_rules_option
from bots.sdk import channel, metadata
from cardarena_api.v1 import arena_pb2 as pb
from cardarena_api.v1 import arena_pb2_grpc as pb_grpc


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `match run` on the `arena` parser."""
    parser = commands.add_parser("match", help="play a match on a running referee")
    sub = parser.add_subparsers(dest="match_command", required=True, metavar="COMMAND")
    run = sub.add_parser(
        "run",
        help="play one match and print its result",
        description="Start one match on the referee, wait for it and print the result.",
    )
    run.add_argument("--game", required=True, choices=games.names())
    run.add_argument("--players", type=int, help="number of seats (default: one per --bots id)")
    run.add_argument("--bots", required=True, help="comma-separated bot ids, one per seat")
    run.add_argument(
        "--duplicate", action="store_true", help="replay the deal with seats rotated, once per seat"
    )
    run.add_argument(
        "--deadline-ms", type=int, default=1000, help="per-move deadline (default 1000)"
    )
    run.add_argument("--seed", type=int, help="seed of the deal (default random)")
    add_rules_option(run)
    run.add_argument(
        "--match-id", help="the match id (default a new one; the same id never plays twice)"
    )
    run.add_argument("--json", action="store_true", help="print the result as JSON")
    add_referee(run)
    add_admin_token(run)
    run.set_defaults(run=run_match)


async def play_match(
    address: str, request: pb.StartMatchRequest, admin_token: str | None
) -> pb.Match:
    """Start a match and wait for its end."""
    auth = metadata(admin_token) if admin_token else None
    async with channel(address) as chan:
        stub = pb_grpc.RefereeServiceStub(chan)
        await stub.StartMatch(request, metadata=auth, timeout=30)
        return await stub.GetMatch(
            pb.GetMatchRequest(match_id=request.match_id, wait=True), metadata=auth
        )


def summary(match: pb.Match) -> dict[str, Any]:
    """The JSON that `arena match run --json` prints."""
    result = json.loads(match.result.json) if match.result.json else {}
    return {
        "match_id": match.match_id,
        "game": match.game,
        "status": match.status,
        "bots": list(match.bot_ids),
        "scores": result.get("scores", []),
        "ranks": result.get("ranks", []),
        "forfeits": result.get("forfeits", []),
        "games": result.get("games", []),
        **({"reason": match.reason} if match.reason else {}),
    }


def run_match(args: argparse.Namespace) -> int:
    """Play and print; exit 1 unless the match finished."""
    bot_ids = [bot.strip() for bot in args.bots.split(",") if bot.strip()]
    players = args.players or len(bot_ids)
    games.get(args.game).check_players(players)
    if len(bot_ids) != players:
        raise ValueError(
            f"--bots gives {len(bot_ids)} bots for {players} players; give one per seat"
        )
    request = pb.StartMatchRequest(
        match_id=args.match_id or uuid.uuid4().hex,
        game=args.game,
        players=players,
        bot_ids=bot_ids,
        duplicate=args.duplicate,
        deadline_ms=args.deadline_ms,
        seed=args.seed if args.seed is not None else random.randrange(2**31),
        options=games.parse_option_pairs(args.option),
    )
    match = asyncio.run(play_match(args.referee, request, args.admin_token))
    data = summary(match)
    if args.json:
        print(json.dumps(data))
    else:
        print(f"match {data['match_id']} ({data['game']}): {data['status']}")
        order = sorted(
            range(len(data["bots"])),
            key=lambda entry: data["ranks"][entry] if data["ranks"] else entry,
        )
        for entry in order:
            bot = data["bots"][entry]
            if data["scores"]:
                mark = "  (forfeit)" if bot in data["forfeits"] else ""
                print(f"  {data['ranks'][entry]:>2}. {bot:<20} {data['scores'][entry]:>6}{mark}")
        if match.reason:
            print(f"  reason: {match.reason}")
    return 0 if match.status == "finished" else 1
