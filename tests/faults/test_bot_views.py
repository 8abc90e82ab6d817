"""What an author sees of its own bot, on a tier of two referee replicas with real bots
over gRPC: alice (author one's) and carol (author two's) are badbot.py processes that
answer illegally twice each (two strikes), bob (two's) a bot that holds the match until
the test lets it go. Author one challenges with alice; while the match runs it watches
alice's seat (WatchSeat, and `arena match watch --seat-of`), then reads her matches
(BotMatches, `arena bot matches`). Nothing of another seat's hand and no other bot's
reason reaches the seat's stream; every refusal is one line naming what is wrong.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import grpc
import pytest

from bots.random_bot import RandomBot
from cardarena_api.v1 import arena_pb2 as pb
from cardarena_api.v1 import cards_pb2 as cards
from ladder.records import MatchRequest
from ladder.store import Lease
from referee import wire_results
from referee.runner import Limits, MatchRunner
from referee.seat_view import SEAT_VIEW, SeatProjector
from referee.server import Referee, start
from referee.settings import RefereeSettings
from referee.wire_observations import observation_message
from tests.support.aio import eventually, run
from tests.support.arena import BotSeat
from tests.support.authoring import ADMIN, Client, GatedBot, auth, online, refusal, tier
from tests.support.processes import ARENA, PYTHON, REPO, Processes, arena, clean_env
from tests.support.public import message_strings, states_by_step
from tests.support.referee import BADBOT
from tests.support.services import RedisServer

S = grpc.StatusCode
GAME = "golden10"
ONE_ROUND = {"rounds": cards.OptionValue(number=1)}


def badbot(procs: Processes, where: str, token: str, name: str) -> subprocess.Popen[bytes]:
    """badbot.py in `illegal` mode: its first two answers are illegal, then it plays legally."""
    record = procs.logs / f"record-{name}.jsonl"
    argv = [PYTHON, str(BADBOT), "--referee", where, "--token", token, "--mode", "illegal"]
    return procs.start(name, [*argv, "--record", str(record), "--max-seconds", "170"])


def check_seat_stream(
    events: list[pb.MatchEvent], replay: pb.Replay, bot: str, others: set[str]
) -> dict[str, list[Any]]:
    """The stream shows `bot`'s seat as an Act would, and nothing hidden from that seat:
    every event is checked against the cards the seat could not see at its step. Returns
    the seat views, the bot's own strikes' reasons and the others' strikes."""
    states = states_by_step(replay)
    assert events[0].type == "game_start" and events[-1].type == "match_end", events
    seen: dict[str, list[Any]] = {"views": [], "reasons": [], "others": []}
    game, step, seat = 0, 0, -1
    for event in events:
        data = json.loads(event.json)
        game = data.get("game_index", game)
        if event.type == "game_start":
            step, seat = 0, data["seats"].index(bot)
        elif event.type == SEAT_VIEW:
            step = data["step"]
            state = states[game][step]
            assert not state.is_over(), "an Act never carries a finished game's observation"
            assert (data["seat"], data["bot"]) == (seat, bot)
            assert data["view"] == json.loads(json.dumps(state.observation(seat)))
            assert event.seat_view.observation == observation_message(state.observation(seat))
            seen["views"].append(data)
        elif event.type == "action":
            assert data["seat"] == seat, f"another seat's move was shown: {data}"
        elif event.type == "tick":
            assert {move[0] for move in data["moves"]} == {seat}, f"another seat's move: {data}"
        elif event.type in ("strike", "forfeit"):
            typed = event.strike if event.type == "strike" else event.forfeit
            if data["bot"] == bot:
                assert typed.reason == data["reason"] != ""
                seen["reasons"].append(data["reason"])
            else:
                assert "reason" not in data and not typed.reason, data
                seen["others"].append(data)
        assert event.type != "view", "the public view is WatchPublic's"
        hidden = states[game][step].hidden_cards(seat)
        leaked = message_strings(event) & hidden
        assert not leaked, f"{event.type} at game {game} step {step} shows {sorted(leaked)}"
        assert not message_strings(event) & others, f"{event.type} names a token"
    assert seen["views"][0]["step"] == 0, "a view as the game starts"
    return seen


@pytest.mark.parametrize(("game", "players"), [("goodge", 4), ("golden10", 3), ("goof", 3)])
def test_each_seat_sees_its_own_view_and_nothing_hidden_from_it(game: str, players: int) -> None:
    """A duplicate match of random bots played by the referee's runner: each bot's seat
    projection, checked step by step against the cards hidden from its seat (a Goodge
    discard, another's hand, the Stash at the end of a deal the next rotation replays)."""
    bots = tuple(f"b{seat}" for seat in range(players))
    request = MatchRequest("m", game, players, bots, 11, {}, True, 1000)
    events: list[dict[str, Any]] = []
    channels = {bot: BotSeat(bot, RandomBot(seed=n)) for n, bot in enumerate(bots)}
    runner = MatchRunner(request, channels, Limits(), on_event=events.append)
    result, replays = asyncio.run(runner.run())
    events.append({"type": "match_end", "result": result.to_json()})
    replay = wire_results.replay_message("m", replays)
    for bot in bots:
        projector = SeatProjector(request, bot)
        shown = [
            wire_results.event_message(e) for event in events for e in projector.project(event)
        ]
        seen = check_seat_stream(shown, replay, bot, set())
        assert len(seen["views"]) >= players, "a view at each game's start at least"
        # A Goof seat has no hand: its cards lie face down, seen by nobody.
        assert game == "goof" or seen["views"][0]["view"]["hand"], "the seat's own hand"


async def watch(client: Client, token: str, match_id: str, bot: str) -> list[pb.MatchEvent]:
    request = pb.WatchSeatRequest(match_id=match_id, bot=bot)
    stream = client.authors.WatchSeat(request, metadata=auth(token), timeout=150)
    return [event async for event in stream]


async def read_all(call: grpc.aio.UnaryStreamCall[Any, pb.MatchEvent]) -> list[pb.MatchEvent]:
    """The events a stream gives after those read already, to its end."""
    events = []
    while (event := await call.read()) is not grpc.aio.EOF:
        assert isinstance(event, pb.MatchEvent)
        events.append(event)
    return events


def playing_replica(referees: list[Referee], match_id: str) -> Referee:
    (playing,) = [ref for ref in referees if match_id in ref.manager.running()]
    return playing


def test_an_author_watches_its_seat_and_reads_its_strikes(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    async def test() -> None:
        procs = Processes(tmp_path)
        async with tier(tmp_path, redis_server) as referees:
            a, b = Client(referees[0]), Client(referees[1])
            one, two = await a.author("one"), await b.author("two")
            alice, alice_token = await a.bot("alice", one, GAME)
            await a.bot("dave", one, GAME)
            carol, carol_token = await b.bot("carol", two, GAME)
            bob, bob_token = await b.bot("bob", two, GAME)
            held: GatedBot | None = None
            clis: list[subprocess.Popen[bytes]] = []
            try:
                badbot(procs, a.address, alice_token, "alice")
                badbot(procs, b.address, carol_token, "carol")
                held = GatedBot(a.address, bob_token)
                await online(a, alice, carol, bob)
                match = await a.challenge(
                    one, "alice", ["bob", "carol"], GAME, deadline_ms=60000, option_values=ONE_ROUND
                )
                match_id = match.match_id
                assert match.status == "running", match

                # Refused, each in one line: another author's token, a bot's token, a bot
                # with no seat in the match.
                said = await refusal(watch(a, two, match_id, "alice"), S.PERMISSION_DENIED)
                assert "belongs to the author 'one'" in said and "WatchSeat needs" in said, said
                said = await refusal(watch(a, alice_token, match_id, "alice"), S.PERMISSION_DENIED)
                assert "WatchSeat needs an author's token or the admin token" in said, said
                assert "a bot's token" in said, said
                said = await refusal(watch(a, one, match_id, "dave"), S.NOT_FOUND)
                assert said == f"bot dave has no seat in match {match_id}", said
                playing = playing_replica(referees, match_id)
                here, other = (a, b) if playing is referees[0] else (b, a)

                # The author watches alice's seat: by the call on the replica that plays the
                # match and on the other (through the relay), and by the CLI, both ways.
                watching = asyncio.create_task(watch(here, one, match_id, "ALICE"))
                # Begun before the match may end: a replica that does not play it gets its
                # events once the one that does has seen it watched (within a second).
                relay_call = other.authors.WatchSeat(
                    pb.WatchSeatRequest(match_id=match_id, bot="alice"),
                    metadata=auth(one),
                    timeout=150,
                )
                admin = asyncio.create_task(watch(here, ADMIN, match_id, alice))
                kinds = ("text", "json", "public")
                printed = {kind: tmp_path / f"watch-{kind}.out" for kind in kinds}
                for kind, out in printed.items():
                    argv = [*ARENA, "match", "watch", match_id, "--referee", here.address]
                    if kind != "public":
                        argv += ["--seat-of", "alice", "--author-token", one]
                    argv += ["--json"] if kind == "json" else []
                    with out.open("w") as file:
                        clis.append(
                            subprocess.Popen(
                                argv,
                                stdout=file,
                                stderr=subprocess.STDOUT,
                                env=clean_env(),
                                cwd=REPO,
                            )
                        )

                async def printing() -> bool:
                    return '"seat_view"' in printed["json"].read_text() and (
                        ": hand " in printed["text"].read_text()
                    )

                await eventually(printing, "both CLI watches printing the seat's view", 60)
                # The relayed watch's first event: the playing replica follows it from now on.
                first = await asyncio.wait_for(relay_call.read(), 60)
                assert isinstance(first, pb.MatchEvent) and first.type == "game_start"
                # A watcher that goes leaves nothing behind on the replica playing the match.
                # Told apart by identity, not by count: a watch that joins meanwhile is no leak.
                fed = playing.manager._watchers[match_id]
                before = list(fed)
                leaving = here.authors.WatchSeat(
                    pb.WatchSeatRequest(match_id=match_id, bot="alice"), metadata=auth(one)
                )
                assert (await leaving.read()).type == "game_start"
                joined = [queue for queue in fed if queue not in before]
                assert joined
                leaving.cancel()

                async def left() -> bool:
                    # Nothing else leaves before the match goes on: the one gone is the leaver's.
                    return sum(queue in fed for queue in joined) == len(joined) - 1

                await eventually(left, "the watcher that left forgotten", 30)
                held.gate.set()
                events = await watching
                by_admin = await admin
                relayed = [first, *await read_all(relay_call)]
                for cli in clis:
                    assert await asyncio.to_thread(cli.wait, 60) == 0
                finished = await here.matches.GetMatch(
                    pb.GetMatchRequest(match_id=match_id, wait=True), timeout=60
                )
                assert finished.status == "finished", finished
                replay = await here.matches.GetReplay(pb.GetMatchRequest(match_id=match_id))

                secrets = {alice_token, carol_token, bob_token, one, two}
                seen = check_seat_stream(events, replay, alice, secrets)
                assert len(seen["views"]) > 10 and seen["views"][0]["view"]["hand"]
                assert len(seen["reasons"]) == 2, seen["reasons"]
                assert all(reason.startswith("illegal answer") for reason in seen["reasons"])
                assert len(seen["others"]) == 2, "carol's strikes, without their reasons"
                assert [e.json for e in by_admin] == [e.json for e in events]
                assert [e.json for e in relayed] == [e.json for e in events]
                lines = printed["json"].read_text().splitlines()
                assert [json.loads(line) for line in lines] == [json.loads(e.json) for e in events]
                text = printed["text"].read_text()
                for reason in seen["reasons"]:
                    assert f": {reason}" in text, text
                assert text.splitlines()[-1].startswith("match ends: scores"), text
                public = printed["public"].read_text()
                assert " step " in public and '"hand"' not in public and ": hand " not in public
                assert not any(reason in public for reason in seen["reasons"]), public
                assert public.splitlines()[-1] == text.splitlines()[-1], public

                # Once it has ended: not running.
                said = await refusal(watch(here, one, match_id, "alice"), S.FAILED_PRECONDITION)
                assert said == f"match {match_id} is not running (finished)", said

                # Her matches: the challenge, recorded by the referee, with each reason.
                ask = pb.BotMatchesRequest(bot="alice")

                async def recorded() -> pb.BotMatchesReply | None:
                    reply = await a.authors.BotMatches(ask, metadata=auth(one), timeout=10)
                    return reply if reply.matches else None

                reply = await eventually(recorded, "the challenge recorded", 30)
                (line,) = reply.matches
                assert (line.match_id, line.game, line.bot_id) == (match_id, GAME, alice)
                assert (line.challenge, line.challenger) == (True, "one")
                assert line.strikes == 2 and not line.forfeited
                assert [s.reason for s in line.strike_events] == seen["reasons"]
                assert 0 < line.answer_p50_ms <= line.answer_p99_ms <= line.answer_max_ms
                assert line.answers > 10
                result = json.loads(finished.result.json)
                assert line.place == result["ranks"][0] and line.score == result["scores"][0]
                said = await refusal(
                    b.authors.BotMatches(ask, metadata=auth(two), timeout=10), S.PERMISSION_DENIED
                )
                assert said == (
                    "the bot name 'alice' belongs to the author 'one': BotMatches needs its "
                    "author's token or the admin token"
                ), said
                said = await refusal(
                    b.authors.BotMatches(ask, metadata=auth(alice_token), timeout=10),
                    S.PERMISSION_DENIED,
                )
                assert "BotMatches needs an author's token or the admin token" in said, said
                by_admin_reply = await b.authors.BotMatches(ask, metadata=auth(ADMIN), timeout=10)
                assert by_admin_reply == reply
                too_many = pb.BotMatchesRequest(bot="alice", limit=201)
                said = await refusal(
                    a.authors.BotMatches(too_many, metadata=auth(one), timeout=10),
                    S.INVALID_ARGUMENT,
                )
                assert said == "limit is 1..200 matches (0: 20)", said

                shown = await asyncio.to_thread(
                    arena, "bot", "matches", "alice", "--referee", a.address, "--author-token", one
                )
                assert shown.returncode == 0, shown.stderr
                assert "challenge by one" in shown.stdout and match_id in shown.stdout
                for number, reason in enumerate(seen["reasons"], start=1):
                    assert f"strike {number} (game 0, seat " in shown.stdout
                    assert f"): {reason}\n" in shown.stdout, shown.stdout
                listed = await asyncio.to_thread(
                    arena, "bot", "matches", "alice", "--json", "--referee", a.address,
                    "--author-token", one,
                )  # fmt: skip
                (shown_line,) = json.loads(listed.stdout)
                assert [s["reason"] for s in shown_line["strike_events"]] == seen["reasons"]
                refused = await asyncio.to_thread(
                    arena, "bot", "matches", "alice", "--referee", b.address, "--author-token", two
                )
                assert refused.returncode == 1 and not refused.stdout
                assert refused.stderr.count("\n") == 1, refused.stderr
                assert "PERMISSION_DENIED: the bot name 'alice' belongs" in refused.stderr
            finally:
                if held is not None:
                    held.gate.set()
                    held.task.cancel()
                for cli in clis:
                    Processes.stop(cli)
                procs.close()
                for client in (a, b):
                    await client.channel.close()

    run(test, 240)


def test_a_match_another_referee_plays_is_named(tmp_path: Path) -> None:
    """A referee outside any tier, sharing the database with another that plays the match
    (as its lease says), names that referee; once the match is over, it is not running."""

    async def test() -> None:
        settings = RefereeSettings(
            listen="127.0.0.1:0",
            database_url=f"sqlite:///{tmp_path / 'arena.db'}",
            metrics_port=None,
            admin_token=ADMIN,
            signup_mode="open",
            shutdown_grace_s=1,
        )
        referee = await start(settings)
        client = Client(referee)
        try:
            one = await client.author("one")
            bots = [(await client.bot(name, one, GAME))[0] for name in ("al", "bo", "cy")]
            request = MatchRequest("far", GAME, 3, tuple(bots), None, {}, False, 1000)
            await asyncio.to_thread(referee.store.create_match, request, Lease("faraway", 60))
            said = await refusal(watch(client, one, "far", "al"), S.FAILED_PRECONDITION)
            assert said.startswith("match far is played by the referee faraway: "), said
            await asyncio.to_thread(referee.store.abort_match, "far", "gone", "faraway")
            said = await refusal(watch(client, one, "far", "al"), S.FAILED_PRECONDITION)
            assert said == "match far is not running (aborted)", said
        finally:
            await client.channel.close()
            await referee.stop()

    run(test, 60)
