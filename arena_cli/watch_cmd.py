"""`arena match watch`: follow a match live, one line per event.

Without `--seat-of` the public stream (WatchPublic: anyone may watch, nothing of a
hand); with `--seat-of BOT` what that bot's seats see (WatchSeat: its author's token
or the admin token): its own view after each move, its own moves, strikes and
forfeits with their reasons.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import AsyncIterable
from typing import Any

from arena_cli.author_cmd import add_author_access, bearer
from ladder.records import EventType
from referee.public import VIEW
from referee.seat_view import SEAT_VIEW


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `match watch` on the `arena match` parser."""
    watch = sub.add_parser(
        "watch",
        help="follow a match live, one line per event",
        description="Follow a match from its start until it ends, one line per event. Without "
        "--seat-of: what anyone may see (the table after each move, no hand, no strike "
        "reason). With --seat-of BOT: what your bot's seats see, its own hand included, with "
        "its strike and forfeit reasons (needs the bot's author's token or the admin token).",
    )
    watch.add_argument("match_id", metavar="MATCH_ID")
    watch.add_argument(
        "--seat-of",
        metavar="BOT",
        help="watch this bot's seats: a name, name@version or bot id of yours",
    )
    watch.add_argument("--json", action="store_true", help="print each event as one JSON line")
    add_author_access(watch)
    watch.set_defaults(run=run_watch)


def run_watch(args: argparse.Namespace) -> int:
    """Print each event of the match as it comes; exit 0 once it has ended."""
    asyncio.run(_watch(args))
    return 0


async def _watch(args: argparse.Namespace) -> None:
    from bots.sdk import channel, metadata  # grpc: loaded only to talk to the referee
    from cardarena_api.v1 import arena_pb2 as pb
    from cardarena_api.v1 import arena_pb2_grpc as pb_grpc

    async with channel(args.referee) as chan:
        stream: AsyncIterable[pb.MatchEvent]
        if args.seat_of:
            token = bearer(args)
            request = pb.WatchSeatRequest(match_id=args.match_id, bot=args.seat_of)
            stream = pb_grpc.AuthorServiceStub(chan).WatchSeat(
                request, metadata=metadata(token) if token else None
            )
        else:
            stream = pb_grpc.RefereeServiceStub(chan).WatchPublic(
                pb.GetMatchRequest(match_id=args.match_id)
            )
        async for event in stream:
            print(event.json if args.json else event_line(json.loads(event.json)), flush=True)


def _cards(values: Any) -> str:
    return " ".join(str(value) for value in values) if values else "-"


def event_line(event: dict[str, Any]) -> str:
    """One event as a line people read."""
    kind = event["type"]
    game = f"game {event.get('game_index', 0)}"
    if kind == EventType.GAME_START:
        return f"{game} starts: seats {', '.join(event['seats'])}"
    if kind == SEAT_VIEW:
        view = {key: value for key, value in event["view"].items() if key != "hand"}
        return (
            f"{game} step {event['step']} seat {event['seat']}: hand {_cards(event['view'].get('hand'))}"
            f"; sees {json.dumps(view, separators=(',', ':'))}"
        )
    if kind == VIEW:
        return f"{game} step {event['step']}: {json.dumps(event['view'], separators=(',', ':'))}"
    if kind == EventType.ACTION:
        took = "" if event["ms"] is None else f" ({event['ms']:.1f} ms)"
        return f"{game} seat {event['seat']} plays {event['action']}{took}"
    if kind == EventType.TICK:
        moves = [
            f"seat {seat} {action}{'' if took else ' (no effect)'}"
            + ("" if ms is None else f" ({ms:.1f} ms)")
            for seat, action, took, ms in event["moves"]
        ]
        return f"{game} tick: {', '.join(moves)}"
    if kind == EventType.STRIKE:
        reason = f": {event['reason']}" if "reason" in event else ""
        return f"{game} seat {event['seat']} strike {event['strikes']} ({event['bot']}){reason}"
    if kind == EventType.FORFEIT:
        reason = f": {event['reason']}" if "reason" in event else ""
        return f"{game} seat {event['seat']} forfeits ({event['bot']}){reason}"
    if kind == EventType.GAME_END:
        return f"{game} ends: scores {_cards(event['scores'])}, ranks {_cards(event['ranks'])}"
    if kind == EventType.MATCH_END:
        result = event["result"]
        return f"match ends: scores {_cards(result['scores'])}, ranks {_cards(result['ranks'])}"
    return f"match {kind.removeprefix('match_')}: {event.get('reason', '')}"
