"""referee.wire_actions, wire_observations and wire_results: engine values to typed protobuf messages and back, for every game."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from google.protobuf.descriptor import Descriptor

import games
from cardarena_api.v1 import arena_pb2 as pb
from cardarena_api.v1 import cards_pb2 as cards
from cardarena_api.v1.notation import GOLDEN10_LETTERS, GOODGE_LETTERS, GOOF_LETTERS
from ladder.records import Forfeit, GameEnd, GameStart, MatchEnd, MatchResult, Strike
from referee import wire_actions, wire_observations, wire_results
from referee.channels import ActRequest
from referee.sessions import Problem
from tests.support.acts import act_requests, states

# (game, players, options, seeds): whole games, played at random.
TABLES = [
    ("goodge", 3, {"max_rounds": 3}, (1, 2)),
    ("goodge", 4, {"max_rounds": 3, "one_high": False}, (3, 4)),
    ("golden10", 3, {"rounds": 2}, (1, 2)),
    ("golden10", 7, {"rounds": 1}, (3,)),
    ("goof", 2, {"rounds": 1, "goof_pile": 4}, (1, 2)),
    ("goof", 4, {"rounds": 1, "goof_pile": 3, "max_ticks": 400}, (3,)),
]
IDS = [f"{game}-{players}p-{'-'.join(map(str, seeds))}" for game, players, _, seeds in TABLES]

GOOF_FACES = {1: "A", 11: "J", 12: "Q", 13: "K"}


# Actions


@pytest.mark.parametrize(("game", "players", "options", "seeds"), TABLES, ids=IDS)
def test_every_legal_action_round_trips_through_its_typed_form(
    game: str, players: int, options: dict[str, Any], seeds: tuple[int, ...]
) -> None:
    kinds: Counter[str] = Counter()
    for seed in seeds:
        for state in states(game, players, options, seed):
            for seat in state.to_act():
                for action in state.legal_actions(seat):
                    text = str(action)
                    message = wire_actions.action_message(game, text, seat)
                    assert message.text == text
                    assert message.WhichOneof("game") == game
                    typed = cards.Action()
                    typed.CopyFrom(message)
                    typed.ClearField("text")
                    assert wire_actions.action_text(typed, seat) == text, typed
                    # What a bot sends is bytes on the wire: parse it back too.
                    sent = cards.Action.FromString(typed.SerializeToString())
                    assert wire_actions.action_text(sent, seat) == text
                    kinds[_kind(message)] += 1
                    _check_action_fields(message, text, seat)
    expected = {
        "goodge": {"bid", "pass_bid", "trump", "card"},
        "golden10": {"card"},
        "goof": {"play", "turn", "wait"},
    }[game]
    assert set(kinds) == expected, kinds


def _kind(action: cards.Action) -> str:
    detail = getattr(action, action.WhichOneof("game") or "")
    return "card" if detail.DESCRIPTOR.name == "Golden10Action" else detail.WhichOneof("kind")


def _check_action_fields(action: cards.Action, text: str, seat: int) -> None:
    if action.HasField("goodge"):
        goodge = action.goodge
        kind = goodge.WhichOneof("kind")
        if kind == "bid":
            assert text == f"bid:{goodge.bid}" and 50 <= goodge.bid <= 250
        elif kind == "pass_bid":
            assert text == "pass" and goodge.pass_bid
        elif kind == "trump":
            assert text == f"trump:{GOODGE_LETTERS[goodge.trump]}"
        else:
            assert goodge_card_text(goodge.card) == text == goodge.card.text
    elif action.HasField("golden10"):
        assert golden10_card_text(action.golden10.card) == text == action.golden10.card.text
    else:
        goof = action.goof
        kind = goof.WhichOneof("kind")
        if kind == "play":
            play = goof.play
            assert play.card.owner == seat
            assert play.card.text == f"{text.split('>')[0]}@{seat}" == goof_card_text(play.card)
            assert text.endswith(">new") if play.new_pile else text.endswith(f">p{play.pile}")
        else:
            assert text == kind and getattr(goof, kind)


def test_action_text_prefers_the_text_and_is_empty_for_an_empty_action() -> None:
    typed = cards.Action()
    typed.CopyFrom(wire_actions.action_message("goodge", "bid:55", 0))  # cached: never modify it
    typed.text = "pass"
    assert wire_actions.action_text(typed, 0) == "pass"
    assert wire_actions.action_text(cards.Action(), 0) == ""
    assert wire_actions.action_text(cards.Action(goodge=cards.GoodgeAction()), 0) == ""


# Cards


def goodge_card_text(card: cards.GoodgeCard) -> str:
    return "CR" if card.crown else f"{card.rank}{GOODGE_LETTERS[card.suit]}"


def golden10_card_text(card: cards.Golden10Card) -> str:
    return f"{card.rank}{GOLDEN10_LETTERS[card.colour]}"


def goof_card_text(card: cards.GoofCard) -> str:
    face = GOOF_FACES.get(card.rank, str(card.rank))
    return f"{face}{GOOF_LETTERS[card.suit]}@{card.owner}"


def goodge_cards(items: Any) -> list[str]:
    texts = [card.text for card in items]
    assert [goodge_card_text(card) for card in items] == texts
    return texts


def golden10_cards(items: Any) -> list[str]:
    texts = [card.text for card in items]
    assert [golden10_card_text(card) for card in items] == texts
    return texts


def goof_cards(items: Any) -> list[str]:
    texts = [card.text for card in items]
    assert [goof_card_text(card) for card in items] == texts
    return texts


# Observations


@pytest.mark.parametrize(("game", "players", "options", "seeds"), TABLES, ids=IDS)
def test_observations_convert_and_agree_with_the_json(
    game: str, players: int, options: dict[str, Any], seeds: tuple[int, ...]
) -> None:
    seen: Counter[str] = Counter()
    for seed in seeds:
        for step, state in enumerate(states(game, players, options, seed)):
            if game == "goof" and step % 5 and not state.is_over():
                continue  # Goof ticks are many and alike
            for seat in range(players):
                obs = state.observation(seat)
                message = wire_observations.observation_message(obs, with_json=True)
                assert json.loads(message.json) == obs
                assert message.WhichOneof("detail") == game
                assert (message.game, message.seat, message.players) == (game, seat, players)
                assert message.round == obs["round"]
                assert message.dealer == (-1 if obs.get("dealer") is None else obs["dealer"])
                assert list(message.scores) == obs["scores"]
                parsed = cards.Observation.FromString(message.SerializeToString())
                assert parsed == message
                seen.update(CHECKS[game](getattr(message, game), obs))
    assert set(seen) >= COVERAGE[game], seen


def _or(value: int | None) -> int:
    return -1 if value is None else value


def check_goodge(typed: cards.GoodgeObservation, obs: dict[str, Any]) -> list[str]:
    assert typed.phase == obs["phase"]
    assert goodge_cards(typed.hand) == obs["hand"]
    assert list(typed.hand_sizes) == obs["hand_sizes"]
    assert [(b.seat, b.bid) for b in typed.bids] == [
        (seat, 0 if bid == "pass" else int(bid.removeprefix("bid:"))) for seat, bid in obs["bids"]
    ]
    assert list(typed.passed) == obs["passed"]
    assert typed.high_bid == (obs["high_bid"] or 0)
    assert typed.high_bidder == _or(obs["high_bidder"])
    assert typed.goodge == _or(obs["goodge"])
    assert typed.bid == (obs["bid"] or 0)
    assert (GOODGE_LETTERS[typed.trump] if typed.trump else None) == obs["trump"]
    assert typed.stash_size == obs["stash_size"]
    assert typed.stash_known == (obs["stash"] is not None)
    assert goodge_cards(typed.stash) == (obs["stash"] or [])
    assert len(typed.tricks) == len(obs["tricks"])
    for trick, done in zip(typed.tricks, obs["tricks"], strict=True):
        assert (trick.leader, trick.winner, trick.points) == (
            done["leader"],
            done["winner"],
            done["points"],
        )
        assert [(p.seat, p.card.text) for p in trick.plays] == [tuple(c) for c in done["cards"]]
        goodge_cards([p.card for p in trick.plays])
    current = obs["trick"]
    assert [(p.seat, p.card.text) for p in typed.trick.plays] == [tuple(c) for c in current]
    assert typed.trick.leader == (current[0][0] if current else -1)
    assert typed.trick.winner == -1
    assert (GOODGE_LETTERS[typed.lead_suit] if typed.lead_suit else None) == obs["lead_suit"]
    assert list(typed.taken) == obs["taken"]
    assert list(typed.tricks_won) == obs["tricks_won"]
    assert typed.target == obs["target"]
    return [typed.phase] + (["stash"] if typed.stash else []) + (["trick"] if current else [])


def check_golden10(typed: cards.Golden10Observation, obs: dict[str, Any]) -> list[str]:
    assert typed.phase == obs["phase"]
    assert golden10_cards(typed.hand) == obs["hand"]
    assert list(typed.hand_sizes) == obs["hand_sizes"]
    led = obs["led_colour"]
    assert (GOLDEN10_LETTERS[typed.led_colour] if typed.led_colour else None) == led
    current = obs["trick"]
    assert [(p.seat, p.card.text) for p in typed.trick.plays] == [tuple(c) for c in current]
    assert typed.trick.leader == (current[0][0] if current else -1)
    assert typed.trick.winner == -1
    for trick, done in zip(typed.tricks, obs["tricks"], strict=True):
        assert (trick.leader, trick.winner) == (done["leader"], done["winner"])
        assert [(p.seat, p.card.text) for p in trick.plays] == [tuple(c) for c in done["cards"]]
        golden10_cards([p.card for p in trick.plays])
    assert len(typed.tricks) == len(obs["tricks"])
    assert list(typed.red_points_taken) == obs["red_points_taken"]
    assert typed.yellow10_taken_by == _or(obs["yellow10_taken_by"])
    assert typed.left_over_count == obs["left_over_count"]
    assert typed.left_over_taker == _or(obs["left_over_taker"])
    assert typed.rounds == obs["rounds"]
    assert typed.yellow10_floor == obs["yellow10_floor"]
    return [typed.phase] + (["yellow10"] if typed.yellow10_taken_by >= 0 else [])


def check_goof(typed: cards.GoofObservation, obs: dict[str, Any]) -> list[str]:
    assert typed.phase == obs["phase"]
    assert typed.tick == obs["tick"]
    assert len(typed.tableau) == len(obs["tableau"])
    seen = [typed.phase]
    for row, want in zip(typed.tableau, obs["tableau"], strict=True):
        assert (row.seat, row.goof_pile, row.stock, row.waste, row.area_cards, row.full_pass) == (
            want["seat"],
            want["goof_pile"],
            want["stock"],
            want["waste"],
            want["area_cards"],
            want["full_pass"],
        )
        assert goof_cards(row.line) == want["line"]
        for name in ("waste_top", "back_three"):
            if want[name] is None:
                assert not row.HasField(name)
            else:
                assert goof_cards([getattr(row, name)]) == [want[name]]
                seen.append(name)
    for pile, want in zip(typed.piles, obs["piles"], strict=True):
        assert (pile.id, GOOF_LETTERS[pile.suit], pile.top.text, pile.size) == (
            want["id"],
            want["suit"],
            want["top"],
            want["size"],
        )
        goof_cards([pile.top])
        seen.append("pile")
    assert len(typed.piles) == len(obs["piles"])
    assert list(typed.removed_piles) == obs["removed_piles"]
    assert typed.one_unders == obs["one_unders"]
    assert [(m.seat, m.action, m.took_effect) for m in typed.last_tick] == [
        tuple(move) for move in obs["last_tick"]
    ]
    return seen


CHECKS = {"goodge": check_goodge, "golden10": check_golden10, "goof": check_goof}
COVERAGE = {
    "goodge": {"bid", "discard", "trump", "play", "over", "stash", "trick"},
    "golden10": {"play", "over", "yellow10"},
    "goof": {"play", "over", "waste_top", "back_three", "pile"},
}


# Referee messages


def test_an_act_request_carries_typed_legal_actions_and_observation() -> None:
    state = games.get("goodge").new_game(4, 9, {})
    seat = state.to_act()[0]
    legal = tuple(str(action) for action in state.legal_actions(seat))
    request = ActRequest(
        request_id="r1",
        match_id="m1",
        game_index=2,
        game="goodge",
        seat=seat,
        players=4,
        observation=state.observation(seat),
        legal=legal,
        deadline_ms=300,
        time_bank_ms=1200,
    )
    assert not wire_results.referee_message(request).act.observation.json  # only when asked for
    message = wire_results.referee_message(request, with_json=True)
    assert message.WhichOneof("kind") == "act"
    act = message.act
    assert (act.request_id, act.match_id, act.game_index, act.game, act.seat) == (
        "r1",
        "m1",
        2,
        "goodge",
        seat,
    )
    assert (act.deadline_ms, act.time_bank_ms) == (300, 1200)
    assert tuple(action.text for action in act.legal) == legal
    assert json.loads(act.observation.json) == state.observation(seat)


@pytest.mark.parametrize(("game", "players", "options", "seeds"), TABLES[::2], ids=IDS[::2])
def test_the_act_a_session_writes_is_the_act_built_field_by_field(
    game: str, players: int, options: dict[str, Any], seeds: tuple[int, ...]
) -> None:
    """The encoded pieces an Act is joined from (`referee_bytes`) parse as the Act
    protobuf builds from the same request, with and without the JSON."""
    for request in act_requests(game, players, options, seeds[0]):
        seat, obs = request.seat, request.observation
        for with_json in (False, True):
            built = pb.RefereeMessage(
                act=pb.Act(
                    request_id=request.request_id,
                    match_id="m1",
                    game_index=1,
                    game=game,
                    seat=seat,
                    observation=wire_observations.observation_message(obs, with_json),
                    legal=[wire_actions.action_message(game, text, seat) for text in request.legal],
                    deadline_ms=300,
                    time_bank_ms=900,
                    sent_at_ms=1_000_000,
                )
            )
            written = wire_results.referee_bytes(request, with_json, now=1000.0)
            assert pb.RefereeMessage.FromString(written) == built


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at, shift = at + 1, shift + 7
        if byte < 0x80:
            return value, at


def singular_messages_in_parts(descriptor: Descriptor, data: bytes) -> list[str]:
    """The singular message fields that come more than once in `data` (an encoded
    `descriptor` message), at any depth: a parser that does not merge them (protobufjs,
    under the Node SDK) keeps only the last part."""
    seen: Counter[int] = Counter()
    found: list[str] = []
    at = 0
    while at < len(data):
        key, at = _varint(data, at)
        number, kind = key >> 3, key & 7
        if kind == 0:
            _, at = _varint(data, at)
            continue
        if kind in (1, 5):
            at += 8 if kind == 1 else 4
            continue
        assert kind == 2, kind
        size, at = _varint(data, at)
        payload, at = data[at : at + size], at + size
        field = descriptor.fields_by_number[number]
        if field.message_type is None:
            continue
        if not field.is_repeated:
            seen[number] += 1
            if seen[number] == 2:
                found.append(f"{descriptor.name}.{field.name}")
        found += singular_messages_in_parts(field.message_type, payload)
    return found


@pytest.mark.parametrize(("game", "players", "options", "seeds"), TABLES, ids=IDS)
def test_an_act_has_no_message_field_in_parts(
    game: str, players: int, options: dict[str, Any], seeds: tuple[int, ...]
) -> None:
    for request in act_requests(game, players, options, seeds[0]):
        written = wire_results.referee_bytes(request, with_json=True)
        assert singular_messages_in_parts(pb.RefereeMessage.DESCRIPTOR, written) == []


def test_notices_and_errors_have_their_messages() -> None:
    start = wire_results.referee_message(
        GameStart(
            "m1",
            1,
            2,
            game="golden10",
            seats=("a", "b", "c"),
            options={"rounds": 2},
            seed_commitment="ab" * 32,
        )
    )
    assert start.game_start.seats == ["a", "b", "c"]
    assert start.game_start.seed_commitment == "ab" * 32
    assert (start.game_start.game, start.game_start.seat) == ("golden10", 2)
    assert dict(start.game_start.options) == {"rounds": "2"}
    end = wire_results.referee_message(
        GameEnd("m1", 1, 2, scores=(1, 5, 0), ranks=(2, 3, 1), rounds=6)
    )
    assert (list(end.game_end.scores), list(end.game_end.ranks), end.game_end.rounds) == (
        [1, 5, 0],
        [2, 3, 1],
        6,
    )
    strike = wire_results.referee_message(
        Strike("m1", 0, 1, reason="late", strikes=2, max_strikes=3)
    )
    assert (strike.strike.reason, strike.strike.strikes, strike.strike.max_strikes) == (
        "late",
        2,
        3,
    )
    forfeit = wire_results.referee_message(Forfeit("m1", 0, 1, reason="3 strikes"))
    assert forfeit.forfeit.reason == "3 strikes"
    error = wire_results.referee_message(Problem("no open request 'x' for this bot", "x"))
    assert error == pb.RefereeMessage(
        error=pb.Error(message="no open request 'x' for this bot", request_id="x")
    )
    result = {
        "match_id": "m1",
        "game": "goof",
        "bots": ["a", "b"],
        "scores": [3, 1],
        "ranks": [2, 1],
        "forfeits": ["b"],
        "games": [
            {"seed": "5", "seats": ["a", "b"], "scores": [3, 1], "ranks": [2, 1], "rounds": 1}
        ],
        "forfeit_reasons": {"b": "3 strikes"},
        "strikes": {"a": 0, "b": 3},
    }
    end_of_match = wire_results.referee_message(MatchEnd("m1", MatchResult.from_json(result)))
    assert json.loads(end_of_match.match_end.result.json) == result
    assert list(end_of_match.match_end.result.forfeits) == ["b"]
    assert end_of_match.match_end.result.games[0].seed == 5
    assert end_of_match.match_end.result.games[0].seed_decimal == "5"
    for notice in (Forfeit("m1", 0, 1, reason="3 strikes"), Problem("no open request", "x")):
        encoded = wire_results.referee_bytes(notice)
        assert encoded == wire_results.referee_message(notice).SerializeToString()


def test_an_act_carries_what_is_left_of_its_clock_when_it_is_sent() -> None:
    state = games.get("golden10").new_game(3, 1)
    seat = state.to_act()[0]
    legal = tuple(str(action) for action in state.legal_actions(seat))
    request = ActRequest(
        "r1", "m1", 0, "golden10", seat, 3, state.observation(seat), legal, 300, 1200, 1000.0
    )
    first = wire_results.referee_message(request, now=1000.0).act
    assert (first.deadline_ms, first.time_bank_ms, first.sent_at_ms) == (300, 1200, 1_000_000)
    # Sent again after a reconnect: the move's own time goes first...
    again = wire_results.referee_message(request, now=1000.1).act
    assert (again.deadline_ms, again.time_bank_ms, again.sent_at_ms) == (200, 1200, 1_000_100)
    # ...then the bank pays for the overrun, down to nothing.
    late = wire_results.referee_message(request, now=1000.5).act
    assert (late.deadline_ms, late.time_bank_ms) == (0, 1000)
    assert request.clock_left(1010.0) == (0, 0)


def test_typed_fields_that_contradict_the_move_give_no_legal_notation() -> None:
    play = cards.Action()
    play.CopyFrom(wire_actions.action_message("goof", "7H>p3", 1))  # cached: never modify it
    play.ClearField("text")
    assert wire_actions.action_text(play, 1) == "7H>p3"
    assert (
        wire_actions.action_text(play, 2)
        == "7H>p3 (a card from the deck of seat 1, played by seat 2)"
    )
    play.goof.play.new_pile = True
    assert wire_actions.action_text(play, 1) == "7H>new (a new pile and pile 3 at once)"
    play.goof.play.new_pile = False
    play.goof.play.card.text = "8H@1"
    assert wire_actions.action_text(play, 1) == "7H>p3 (card text '8H@1' is not '7H@1')"
    crown = cards.Action(goodge=cards.GoodgeAction(card=cards.GoodgeCard(crown=True, rank=3)))
    assert wire_actions.action_text(crown, 0) == "CR (the Crown has no suit or rank)"
    ten = cards.Action(golden10=cards.Golden10Action(card=wire_actions.golden10_card("10Y")))
    assert wire_actions.action_text(ten, 0) == "10Y"
    ten.golden10.card.text = "10R"
    assert wire_actions.action_text(ten, 0) == "10Y (card text '10R' is not '10Y')"
