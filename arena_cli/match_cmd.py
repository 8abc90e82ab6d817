"""`arena match run`, `arena match verify` and `arena match watch` (arena_cli.watch_cmd):
play a match on a running referee, check one, follow one."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

import games
from arena_cli import watch_cmd
from arena_cli.columns import table
from arena_cli.env import add_admin_token, add_referee, add_rules_option
from arena_cli.progress import Advance, progress, wanted
from ladder.fairness import parse_seed
from ladder.records import EventType, MatchStatus
from ladder.wording import bot_label, plural
from referee.verify import Mismatch, Published, PublishedGame, verify

if TYPE_CHECKING:
    # gRPC and the protocol's modules are loaded by the commands that talk to a
    # referee, not by `arena --help`.
    from cardarena_api.v1 import arena_pb2 as pb

WEB_TIMEOUT_S = 30.0


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `match run`, `match verify` and `match watch` on the `arena` parser."""
    parser = commands.add_parser("match", help="play a match on a running referee")
    sub = parser.add_subparsers(dest="match_command", required=True, metavar="COMMAND")
    run = sub.add_parser(
        "run",
        help="play one match and print its result",
        description="Start one match on the referee, wait for it and print the result.",
    )
    run.add_argument("--game", required=True, choices=games.names())
    run.add_argument("--players", type=int, help="number of seats (default: one per --bots id)")
    run.add_argument(
        "--bots",
        required=True,
        metavar="A,B,...",
        help="one bot per seat, comma-separated: a name, name@version or bot id of a bot "
        "connected to the referee",
    )
    run.add_argument(
        "--wait-for-bots",
        type=float,
        default=0.0,
        metavar="S",
        help="wait up to S seconds for the bots to connect (default: refuse at once, naming "
        "the ones that are not connected)",
    )
    run.add_argument(
        "--duplicate", action="store_true", help="replay the deal with seats rotated, once per seat"
    )
    run.add_argument(
        "--deadline-ms", type=int, default=1000, help="per-move deadline (default 1000)"
    )
    run.add_argument(
        "--seed",
        type=parse_seed,
        help="seed of the deal, made public by choosing it (default: a secret 128-bit seed "
        "the referee draws and reveals when the match ends)",
    )
    add_rules_option(run)
    run.add_argument(
        "--match-id", help="the match id (default a new one; the same id never plays twice)"
    )
    run.add_argument("--json", action="store_true", help="print the result as JSON")
    add_referee(run)
    add_admin_token(run)
    run.set_defaults(run=run_match)
    verify = sub.add_parser(
        "verify",
        help="check a finished match's deal and result",
        description=(
            "Fetch a finished match, check that sha256 of its revealed seed is the "
            "commitment every seat received at the start, replay every game from the seed "
            "and the recorded actions, and check the published scores and ranks. Exit 0 "
            "with one line of verdict, 1 with the first difference."
        ),
    )
    verify.add_argument("match_id", metavar="MATCH_ID")
    verify.add_argument(
        "--web",
        metavar="URL",
        help="fetch from the standings web at URL (e.g. http://127.0.0.1:8000) instead of the referee",
    )
    verify.add_argument("--json", action="store_true", help="print the verdict as JSON")
    add_referee(verify)
    verify.set_defaults(run=run_verify)
    watch_cmd.add_parser(sub)


class NotConnected(ValueError):
    """Bots of a match that hold no session with the referee."""


def seat_bots(refs: list[str], sessions: Sequence[pb.SessionInfo]) -> list[pb.SessionInfo]:
    """The connected bot each of `refs` names: its id, `name@version`, or its name (when
    one version of that name is connected). NotConnected names the refs that match none."""
    chosen, missing = [], []
    for ref in refs:
        found = (
            [s for s in sessions if s.bot_id == ref]
            or [s for s in sessions if f"{s.name}@{s.version}" == ref]
            or [s for s in sessions if s.name == ref]
        )
        if len(found) > 1:
            versions = ", ".join(f"{s.name}@{s.version}" for s in found)
            raise ValueError(
                f"{ref!r} names {len(found)} connected versions ({versions}): pick one"
            )
        if found:
            chosen.append(found[0])
        else:
            missing.append(ref)
    if missing:
        raise NotConnected(
            f"not connected to the referee: {', '.join(missing)} (start them with `arena bot "
            "run`, or give --wait-for-bots S)"
        )
    return chosen


async def connected_seats(
    stub: Any, refs: list[str], auth: Any, wait_s: float
) -> list[pb.SessionInfo]:
    """`seat_bots` against the referee's sessions, looking again for up to `wait_s`."""
    from cardarena_api.v1 import arena_pb2 as pb

    deadline = time.monotonic() + wait_s
    while True:
        reply = await stub.ListSessions(pb.ListSessionsRequest(), metadata=auth, timeout=30)
        try:
            return seat_bots(refs, reply.sessions)
        except NotConnected:
            if time.monotonic() >= deadline:
                raise
        await asyncio.sleep(min(0.5, max(deadline - time.monotonic(), 0.0)))


async def play_match(
    address: str,
    request: pb.StartMatchRequest,
    admin_token: str | None,
    wait_s: float = 0.0,
    show_progress: bool = False,
) -> tuple[pb.Match, list[str]]:
    """Find the bots, start the match and wait for its end; the match and the seats' names."""
    from bots.sdk import channel, metadata
    from cardarena_api.v1 import arena_pb2_grpc as pb_grpc

    auth = metadata(admin_token) if admin_token else None
    async with channel(address) as chan:
        stub = pb_grpc.RefereeServiceStub(chan)
        seats = await connected_seats(stub, list(request.bot_ids), auth, wait_s)
        request.ClearField("bot_ids")
        request.bot_ids.extend(seat.bot_id for seat in seats)
        names = [bot_label(seat.name, seat.version) if seat.name else seat.bot_id for seat in seats]
        await stub.StartMatch(request, metadata=auth, timeout=30)
        games_total = request.players if request.duplicate else 1
        with progress(f"{request.game} match", games_total, show_progress) as advance:
            follow = asyncio.create_task(_count_games(stub, request.match_id, auth, advance))
            try:
                match = await wait_match(stub, request.match_id, auth)
            finally:
                follow.cancel()
        return match, names


ASK_AGAIN_TIMES = 300
"""How often `wait_match` asks again on UNAVAILABLE (refused at once, a minute of it)."""
ASK_AGAIN_PAUSE_S = 0.2


async def ask_again(call: Callable[[], Awaitable[pb.Match]]) -> pb.Match:
    """`call()` (a wait for a match), asked again on UNAVAILABLE: a referee replica that
    stops answers "ask again", and the next call reaches another."""
    import grpc

    for _ in range(ASK_AGAIN_TIMES):
        try:
            return await call()
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.UNAVAILABLE:
                raise
        await asyncio.sleep(ASK_AGAIN_PAUSE_S)
    return await call()


async def wait_match(stub: Any, match_id: str, auth: Any) -> pb.Match:
    """GetMatch(wait), asked again on UNAVAILABLE."""
    from cardarena_api.v1 import arena_pb2 as pb

    request = pb.GetMatchRequest(match_id=match_id, wait=True)
    return await ask_again(lambda: stub.GetMatch(request, metadata=auth))


async def _count_games(stub: Any, match_id: str, auth: Any, advance: Advance) -> None:
    """Advance the bar at each game's end (progress only: a failure just stops it)."""
    import grpc

    from cardarena_api.v1 import arena_pb2 as pb

    try:
        async for event in stub.WatchMatch(pb.GetMatchRequest(match_id=match_id), metadata=auth):
            if event.type == EventType.GAME_END:
                advance()
    except grpc.RpcError:
        pass


def summary(match: pb.Match, names: Sequence[str] = ()) -> dict[str, Any]:
    """The JSON that `arena match run --json` prints. A challenge says "rated": false and
    who challenged; other matches say no "rated": a tournament or the ladder rates the
    ones it records."""
    result = json.loads(match.result.json) if match.result.json else {}
    return {
        "match_id": match.match_id,
        "game": match.game,
        "status": match.status,
        "bots": list(match.bot_ids),
        "names": list(names) or list(match.bot_ids),
        "scores": result.get("scores", []),
        "ranks": result.get("ranks", []),
        "forfeits": result.get("forfeits", []),
        "games": result.get("games", []),
        "seed_commitment": match.seed_commitment,
        "seed": match.seed_decimal or None,
        **({"reason": match.reason} if match.reason else {}),
        "challenge": match.challenge,
        **({"rated": False, "challenger": match.challenger} if match.challenge else {}),
    }


def run_match(args: argparse.Namespace) -> int:
    """Play and print; exit 1 unless the match finished."""
    bot_refs = [bot.strip() for bot in args.bots.split(",") if bot.strip()]
    players = args.players or len(bot_refs)
    games.get(args.game).check_players(players)
    if len(bot_refs) != players:
        raise ValueError(
            f"--bots gives {plural(len(bot_refs), 'bot', 'bots')} for {players} players; give one "
            "per seat"
        )
    if not 0 <= args.wait_for_bots <= 86400:
        raise ValueError(f"--wait-for-bots must be 0..86400 seconds, got {args.wait_for_bots:g}")
    from cardarena_api.v1 import arena_pb2 as pb

    request = pb.StartMatchRequest(
        match_id=args.match_id or uuid.uuid4().hex,
        game=args.game,
        players=players,
        bot_ids=bot_refs,
        duplicate=args.duplicate,
        deadline_ms=args.deadline_ms,
        seed_decimal="" if args.seed is None else str(args.seed),
        options=games.parse_option_pairs(args.option),
    )
    try:
        match, names = asyncio.run(
            play_match(
                args.referee, request, args.admin_token, args.wait_for_bots, wanted(args.json)
            )
        )
    except KeyboardInterrupt:
        print(
            f"stopped waiting; if it started, match {request.match_id} goes on on the referee "
            f"(its result: arena match verify {request.match_id})",
            file=sys.stderr,
        )
        return 130
    print_match(summary(match, names), args.json)
    return 0 if match.status == MatchStatus.FINISHED else 1


def print_match(data: dict[str, Any], as_json: bool) -> None:
    """A match's `summary`: as JSON, or its line and its table of places."""
    if as_json:
        print(json.dumps(data))
    else:
        challenge = f", a challenge by {data['challenger']}, unrated" if data["challenge"] else ""
        print(f"match {data['match_id']} ({data['game']}{challenge}): {data['status']}")
        if data["scores"]:
            order = sorted(range(len(data["bots"])), key=lambda entry: data["ranks"][entry])
            rows = [
                (
                    f"{data['ranks'][entry]}.",
                    data["names"][entry],
                    data["scores"][entry],
                    "forfeit" if data["bots"][entry] in data["forfeits"] else "",
                )
                for entry in order
            ]
            print(table(("#", "bot", "score", ""), rows, right={0, 2}, indent="  "))
        if data.get("reason"):
            print(f"  reason: {data['reason']}")


async def _from_referee(address: str, match_id: str) -> Published:
    """The match as the referee publishes it: GetMatch and GetReplay, no admin token."""
    from bots.sdk import channel
    from cardarena_api.v1 import arena_pb2 as pb
    from cardarena_api.v1 import arena_pb2_grpc as pb_grpc

    async with channel(address) as chan:
        stub = pb_grpc.RefereeServiceStub(chan)
        match = await stub.GetMatch(pb.GetMatchRequest(match_id=match_id), timeout=30)
        if match.status != MatchStatus.FINISHED:
            return _unfinished(match.match_id, match.game, match.status, match.bot_ids)
        replay = await stub.GetReplay(pb.GetMatchRequest(match_id=match_id), timeout=30)
    logs = {game.game_index: json.loads(game.log_json) for game in replay.games}
    result = match.result
    return Published(
        match_id=match.match_id,
        game=match.game,
        status=match.status,
        bot_ids=tuple(match.bot_ids),
        seed=match.seed_decimal,
        seed_commitment=match.seed_commitment,
        scores=tuple(result.scores),
        ranks=tuple(result.ranks),
        forfeits=tuple(result.forfeits),
        games=tuple(
            PublishedGame(
                seats=tuple(game.seats),
                scores=tuple(game.scores),
                ranks=tuple(game.ranks),
                rounds=game.rounds,
                seed=game.seed_decimal,
                log=logs.get(index, {}),
            )
            for index, game in enumerate(result.games)
        ),
    )


def _unfinished(match_id: str, game: str, status: str, bot_ids: Any) -> Published:
    return Published(match_id, game, status, tuple(bot_ids), "", "", (), (), (), ())


def _get_json(url: str) -> Any:
    """GET a JSON document; a web error is a ValueError naming the URL and the web's message."""
    try:
        with urllib.request.urlopen(url, timeout=WEB_TIMEOUT_S) as response:
            return json.load(response)
    except urllib.error.HTTPError as error:
        try:
            detail = json.load(error).get("detail", "")
        except ValueError:
            detail = ""
        raise ValueError(f"{url}: HTTP {error.code} {detail}".rstrip()) from None
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        raise ValueError(f"cannot reach {url}: {reason} (is the web running? see --web)") from None


def _from_web(base: str, match_id: str) -> Published:
    """The match as the standings web publishes it: /api/matches/ID and its logs."""
    root = base.rstrip("/") + "/api/matches/" + urllib.parse.quote(match_id, safe="")
    match = _get_json(root)
    if match["status"] != MatchStatus.FINISHED:
        bots = [entry["bot"]["id"] for entry in match["entries"]]
        return _unfinished(match["match_id"], match["game"], match["status"], bots)
    logs = {game["game_index"]: game["log"] for game in _get_json(root + "/logs")["games"]}
    entries = match["entries"]
    return Published(
        match_id=match["match_id"],
        game=match["game"],
        status=match["status"],
        bot_ids=tuple(entry["bot"]["id"] for entry in entries),
        seed=match["seed"] or "",
        seed_commitment=match["seed_commitment"],
        scores=tuple(entry["score"] for entry in entries),
        ranks=tuple(entry["rank"] for entry in entries),
        forfeits=tuple(entry["bot"]["id"] for entry in entries if entry["forfeit"]),
        games=tuple(
            PublishedGame(
                seats=tuple(game["seats"]),
                scores=tuple(game["scores"]),
                ranks=tuple(game["ranks"]),
                rounds=game["rounds"],
                seed=game["seed"],
                log=logs.get(game["index"], {}),
            )
            for game in match["games"]
        ),
    )


def run_verify(args: argparse.Namespace) -> int:
    """Check one finished match; exit 0 with the verdict, 1 with the first difference."""
    if args.web:
        published = _from_web(args.web, args.match_id)
    else:
        published = asyncio.run(_from_referee(args.referee, args.match_id))
    try:
        verdict, ok = verify(published), True
    except Mismatch as error:
        verdict, ok = f"match {args.match_id} does NOT verify: {error}", False
    if args.json:
        print(json.dumps({"match_id": args.match_id, "verified": ok, "verdict": verdict}))
    else:
        print(verdict)
    return 0 if ok else 1
