"""End to end: a referee process, bot processes, matches over real gRPC on loopback.

Full matches of the three games (plain and duplicate), idempotent StartMatch,
hidden information in every message a bot receives, health and reflection.
Misbehaving bots are in test_e2e_faults.py.
"""

from __future__ import annotations

import json
import re
import uuid
from collections import defaultdict, deque
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
import pytest
from google.protobuf import json_format
from grpc_health.v1 import health_pb2
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)

import games
from bots.observations import observation_view
from cardarena_api.v1 import arena_pb2 as pb
from cardarena_api.v1 import cards_pb2 as cards
from tests.support.processes import wait_until
from tests.support.referee import (
    BotHandle,
    RefereeProc,
    check_complete,
    check_replay,
    match_ended,
    result_of,
)


@pytest.fixture(scope="module")
def pool(referee: RefereeProc) -> list[BotHandle]:
    """Reference bots in their own processes: rules, random, rules, random, random."""
    kinds = ["rules", "random", "rules", "random", "random"]
    handles = [referee.run_bot(kind, referee.register(kind), capacity=8) for kind in kinds]
    referee.wait_connected(handles)
    return handles


@pytest.fixture(scope="module")
def recorders(referee: RefereeProc) -> list[BotHandle]:
    """Four badbot.py processes in record mode: random play, every message written down."""
    handles = [
        referee.run_badbot("record", referee.register("recorder"), "--seed", str(i), wait=False)
        for i in range(4)
    ]
    referee.wait_connected(handles)
    return handles


# 1. Full matches ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("game", "players", "duplicate", "options"),
    [
        ("goodge", 4, False, []),
        ("goodge", 4, True, []),
        ("golden10", 5, True, []),
        ("golden10", 4, False, []),
        ("goof", 3, False, ["rounds=2"]),
        ("goof", 4, True, ["rounds=1"]),
    ],
    ids=lambda value: str(value) if not isinstance(value, list) else ",".join(value) or "-",
)
def test_full_match_between_bot_processes(
    referee: RefereeProc,
    pool: list[BotHandle],
    game: str,
    players: int,
    duplicate: bool,
    options: list[str],
) -> None:
    """`arena match run` plays a whole match of rules/random bot processes to a
    complete result, and GetReplay's logs rebuild every game's result."""
    seed = 1000 + players + 10 * duplicate
    entrants = pool[:players]
    summary = referee.cli_match(
        game, entrants, seed=seed, duplicate=duplicate, options=options, deadline_ms=1000
    )
    assert summary["status"] == "finished", summary
    assert summary["game"] == game
    bot_ids = [bot.bot_id for bot in entrants]
    check_complete(summary, game, bot_ids, seed=seed, duplicate=duplicate)

    match = referee.wait_match(summary["match_id"])
    result = result_of(match)
    for key in ("scores", "ranks", "forfeits", "games"):
        assert result[key] == summary[key]
    assert result["strikes"] == dict.fromkeys(bot_ids, 0)
    check_replay(referee, summary["match_id"], result)
    if duplicate:
        # Every rotation is the same deal: the same seed and options.
        logs = [json.loads(g.log_json) for g in referee.replay(summary["match_id"]).games]
        assert len({json.dumps([log["seed"], log["options"], log["deal"]]) for log in logs}) == 1


# 2. Idempotency ----------------------------------------------------------------------


def test_start_match_is_idempotent(
    referee: RefereeProc, pool: list[BotHandle], recorders: list[BotHandle]
) -> None:
    """StartMatch with one match_id, sent concurrently and again after the end,
    returns the same match and plays it once; other settings are ALREADY_EXISTS."""
    entrants = [recorders[0], *pool[1:4]]
    match_id = "idem-" + uuid.uuid4().hex[:8]
    request = pb.StartMatchRequest(
        match_id=match_id,
        game="golden10",
        players=4,
        bot_ids=[bot.bot_id for bot in entrants],
        seed=77,
        deadline_ms=1000,
        options={"rounds": "2"},
    )
    with ThreadPoolExecutor(8) as threads:
        replies = list(
            threads.map(lambda _: referee.matches.StartMatch(request, timeout=30), range(8))
        )
    assert {reply.match_id for reply in replies} == {match_id}
    assert all(reply.status in ("running", "finished") for reply in replies)

    finished = referee.wait_match(match_id)
    result = result_of(finished)
    again = referee.matches.StartMatch(request, timeout=30)
    assert again.status == "finished"
    assert json.loads(again.result.json) == result

    different = pb.StartMatchRequest()
    different.CopyFrom(request)
    different.seed = 78
    with pytest.raises(grpc.RpcError) as refused:
        referee.matches.StartMatch(different, timeout=30)
    assert refused.value.code() == grpc.StatusCode.ALREADY_EXISTS

    # Played once: one replay, one game_start event, and the recording bot was
    # told of one game start and one match end for this id.
    assert len(referee.replay(match_id).games) == 1
    events = list(referee.matches.WatchMatch(pb.GetMatchRequest(match_id=match_id), timeout=30))
    assert [e.type for e in events].count("game_start") == 1
    assert events[-1].type == "match_end"
    wait_until(lambda: match_ended(recorders[0], match_id), 15, "the recorder's match end")
    starts = [
        m for m in recorders[0].received("game_start") if m["game_start"]["match_id"] == match_id
    ]
    ends = [m for m in recorders[0].received("match_end") if m["match_end"]["match_id"] == match_id]
    assert len(starts) == 1 and len(ends) == 1
    assert referee.matches.GetMatch(pb.GetMatchRequest(match_id=match_id), timeout=10).status == (
        "finished"
    )


# 4. Hidden information -----------------------------------------------------------------

CARD_TOKEN = re.compile(r"[A-Za-z0-9@]+")


def strings_in(value: Any) -> Iterator[str]:
    """Every string value inside a JSON-like value (keys excluded); JSON texts opened."""
    if isinstance(value, str):
        yield value
        if value[:1] in "{[":
            try:
                inner = json.loads(value)
            except ValueError:
                return
            yield from strings_in(inner)
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)


def tokens_in(value: Any) -> set[str]:
    """Every string value, and every card-like word inside one (so "10S, 3D" counts)."""
    found: set[str] = set()
    for text in strings_in(value):
        found.add(text)
        found.update(CARD_TOKEN.findall(text))
    return found


def all_cards(state: games.State) -> set[str]:
    return {card for cards in state.zones().values() for card in cards}


@pytest.mark.parametrize(
    ("game", "options", "seed"),
    [("goodge", {}, 11), ("golden10", {}, 12), ("goof", {"rounds": "1"}, 13)],
    ids=["goodge", "golden10", "goof"],
)
def test_no_message_shows_a_seat_its_hidden_cards(
    referee: RefereeProc,
    recorders: list[BotHandle],
    game: str,
    options: dict[str, str],
    seed: int,
) -> None:
    """Replaying the match step by step, every Act a seat received carries that
    seat's observation at that moment, and no string in any message a bot
    received names a card hidden from its seat then; other messages name no card."""
    match_id = f"hidden-{game}-" + uuid.uuid4().hex[:8]
    match = referee.play(match_id, game, recorders, seed=seed, deadline_ms=1000, options=options)
    result = result_of(match)
    assert result["forfeits"] == [] and set(result["strikes"].values()) == {0}
    wait_until(lambda: all(match_ended(bot, match_id) for bot in recorders), 15, "every match end")
    seat_of = {bot.bot_id: seat for seat, bot in enumerate(recorders)}
    acts: dict[int, deque[dict[str, Any]]] = defaultdict(deque)
    others: list[tuple[int, dict[str, Any]]] = []
    for bot in recorders:
        for message in bot.received():
            body = next(iter(message.values()))
            if body.get("match_id") != match_id and "welcome" not in message:
                continue
            if "act" in message:
                assert body.get("seat", 0) == seat_of[bot.bot_id]
                acts[body.get("seat", 0)].append(body)
            else:
                others.append((seat_of[bot.bot_id], message))

    log = json.loads(referee.replay(match_id).games[0].log_json)
    spec = games.get(game)
    state = spec.new_game(log["players"], log["seed"], log["options"], log["deal"])
    universe = all_cards(state)
    checked = leaks_possible = 0

    def check_act(seat: int) -> None:
        nonlocal checked, leaks_possible
        assert acts[seat], f"seat {seat} was not asked at step {checked}"
        act = acts[seat].popleft()
        assert act.get("seat", 0) == seat
        assert json.loads(act["observation"]["json"]) == state.observation(seat)
        typed = json_format.ParseDict(act["observation"], cards.Observation())
        assert observation_view(typed) == state.observation(seat)
        assert [a["text"] for a in act["legal"]] == [str(a) for a in state.legal_actions(seat)]
        hidden = state.hidden_cards(seat)
        seen = tokens_in(act)
        leaked = seen & hidden
        assert not leaked, f"seat {seat} was shown hidden cards {sorted(leaked)}"
        checked += 1
        leaks_possible += bool(hidden) and bool(seen & universe)

    if spec.simultaneous:
        for tick in log["moves"]:
            to_act = state.to_act()
            assert sorted(seat for seat, _ in tick) == sorted(to_act)
            for seat in to_act:
                check_act(seat)
            state.apply_tick(dict(tick), [seat for seat, _ in tick])  # type: ignore[attr-defined]
    else:
        for seat, action in log["moves"]:
            assert state.to_act() == (seat,)
            check_act(seat)
            state.apply(seat, action)
    assert state.is_over()
    assert list(state.result().scores) == result["games"][0]["scores"]
    assert all(not queue for queue in acts.values()), "Acts with no step of the replay"
    # The check had teeth: seats saw cards (their own) while others' were hidden.
    assert checked > 50 and leaks_possible > 0.9 * checked
    starts = {seat: m["game_start"] for seat, m in others if "game_start" in m}
    assert sorted(starts) == list(range(len(recorders)))
    for seat, start in starts.items():
        assert start["game"] == game and start.get("seat", 0) == seat
        assert start["seats"] == [bot.bot_id for bot in recorders]
    for seat, message in others:
        named = tokens_in(message) & universe
        assert not named, f"seat {seat} got {list(message)} naming cards {sorted(named)}"


# 5. Health and reflection ----------------------------------------------------------------


def test_health_reports_serving(referee: RefereeProc) -> None:
    """The gRPC health service says SERVING for the server and each arena service."""
    for service in ("", "cardarena_api.v1.BotService", "cardarena_api.v1.RefereeService"):
        reply = referee.health.Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
        assert reply.status == health_pb2.HealthCheckResponse.SERVING, service
    with pytest.raises(grpc.RpcError) as unknown:
        referee.health.Check(health_pb2.HealthCheckRequest(service="no.such.Service"), timeout=5)
    assert unknown.value.code() == grpc.StatusCode.NOT_FOUND


def test_reflection_lists_the_arena_services(referee: RefereeProc) -> None:
    """Server reflection lists the arena services and describes their methods."""
    database = ProtoReflectionDescriptorDatabase(referee.channel)
    services = set(database.get_services())
    assert {
        "cardarena_api.v1.BotService",
        "cardarena_api.v1.RefereeService",
        "grpc.health.v1.Health",
    } <= services
    from google.protobuf.descriptor_pool import DescriptorPool

    described = DescriptorPool(database)
    referee_service = described.FindServiceByName("cardarena_api.v1.RefereeService")
    assert {m.name for m in referee_service.methods} >= {
        "StartMatch",
        "GetMatch",
        "WatchMatch",
        "GetReplay",
        "ListSessions",
    }
    session = described.FindServiceByName("cardarena_api.v1.BotService").FindMethodByName("Session")
    assert session.input_type.full_name == "cardarena_api.v1.BotMessage"
    act = described.FindMessageTypeByName("cardarena_api.v1.Act")
    observation = act.fields_by_name["observation"].message_type
    assert observation is not None
    assert observation.full_name == "cardarena_api.v1.Observation"
