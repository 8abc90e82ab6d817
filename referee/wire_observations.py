"""The encoded observation entries of each game and observation messages, with
the legal actions of an Act request.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from functools import cache, lru_cache
from itertools import starmap
from typing import Any

import orjson
from google.protobuf.message import Message

from cardarena_api.v1 import arena_pb2 as pb
from cardarena_api.v1 import cards_pb2 as cards
from cardarena_api.v1.notation import (
    GOLDEN10_COLOURS,
    GOODGE_SUITS,
    GOOF_SUITS,
)
from games import golden10, goodge, goof
from games.core import SeatEntry
from referee.wire_actions import (
    _optional_goof_card,
    action_message,
    golden10_card,
    golden10_play,
    goodge_card,
    goodge_play,
    goof_table_card,
    option_message,
)


@cache
def _legal_entry(game: str, text: str, seat: int) -> bytes:
    """One legal action, encoded as an entry of `Act.legal` (see `_entry`)."""
    return _entry(pb.Act, "legal", [action_message(game, text, seat)])


FINISHED_TRICKS = 65_536
"""Finished tricks kept as built messages (a few MB): a game's tricks are asked for again
in every later request of that game."""


TrickKey = tuple[Any, ...]
"""A finished trick, hashable: its leader, its winner, then each play as (seat, card)."""


def _trick_key(trick: goodge.GoodgeTrick | golden10.Golden10Trick) -> TrickKey:
    return (trick["leader"], trick["winner"], *map(tuple, trick["cards"]))


def _open_plays(plays: Sequence[SeatEntry]) -> tuple[tuple[Any, ...], ...]:
    """The plays of the trick being played, hashable: its entry is encoded whole, once for
    each state of the trick. A message field may come in parts that a parser merges (a
    trick's leader, then its plays one entry each), but not every parser merges them:
    protobufjs, under the Node SDK, keeps the last part only."""
    return tuple(map(tuple, plays))


def _leader(plays: Sequence[Sequence[Any]]) -> int:
    """Who led the trick being played (-1 before its first card)."""
    return plays[0][0] if plays else -1


def _entry(message: Callable[..., Message], field: str, value: object) -> bytes:
    """`value` (a list of one item for a repeated field, a dict of one key for a map)
    encoded as the `field` of `message`: one entry.

    Encodings of one message type, joined, read as one message holding every
    entry (protobuf merges what is concatenated: repeated fields append, and
    a message field merges into the one before), so a hand, the bids or the
    trick history travel as a join of entries the library encoded once each,
    parsed into the request in one call instead of built field by field.
    """
    return message(**{field: value}).SerializeToString()


# Goodge


@cache
def _goodge_hand_entry(card: str) -> bytes:
    return _entry(cards.GoodgeObservation, "hand", [goodge_card(card)])


@cache
def _goodge_stash_entry(card: str) -> bytes:
    return _entry(cards.GoodgeObservation, "stash", [goodge_card(card)])


@cache
def _goodge_bid_entry(seat: int, bid: str) -> bytes:
    typed = cards.GoodgeBid(seat=seat, bid=goodge.bid_value(bid) or 0)  # a pass: 0
    return _entry(cards.GoodgeObservation, "bids", [typed])


@lru_cache(maxsize=FINISHED_TRICKS)
def _goodge_trick_entry(key: TrickKey, points: int) -> bytes:
    """A finished trick: it never changes, so it is encoded once for every later request."""
    trick = cards.GoodgeTrick(
        leader=key[0],
        winner=key[1],
        plays=[goodge_play(seat, card) for seat, card in key[2:]],
        points=points,
    )
    return _entry(cards.GoodgeObservation, "tricks", [trick])


@lru_cache(maxsize=1024, typed=True)
def _goodge_option_entries(options: tuple[tuple[str, object], ...]) -> bytes:
    """A match's rules options, all of them: the same in every request of the match. (An
    option's name fixes its value's type, so `True` and `1` never meet under one name.)"""
    return b"".join(
        _entry(cards.GoodgeObservation, "options", {name: option_message(value)})
        for name, value in options
    )


FIELD_ENTRIES = 65_536
"""Encoded single fields kept: a head field's value (a phase, the hand sizes, a seat) recurs
in request after request."""


@lru_cache(maxsize=FIELD_ENTRIES)
def _field(message: Callable[..., Message], name: str, value: Hashable) -> bytes:
    """One field of `message` set to `value` (a tuple for a repeated field), encoded once:
    an observation's head is a join of these, not a message built per request. (A field's
    type is fixed, so `True` and `1` never meet under one name.)"""
    return _entry(message, name, list(value) if isinstance(value, tuple) else value)


@lru_cache(maxsize=FIELD_ENTRIES)
def _open_trick(
    observation: Callable[..., Message],
    trick: Callable[..., Message],
    play: Callable[[int, str], Message],
    plays: tuple[tuple[Any, ...], ...],
) -> bytes:
    """The trick being played (an `observation`'s `trick`), its plays so far and no winner
    yet, as one entry: see `_open_plays`."""
    plays_so_far = [play(seat, card) for seat, card in plays]
    return _entry(observation, "trick", trick(leader=_leader(plays), winner=-1, plays=plays_so_far))


_GOODGE = cards.GoodgeObservation


def _goodge_detail(obs: goodge.GoodgeObservation) -> bytes:
    """The encoded typed form of a Goodge observation's own fields."""
    plays = obs["trick"]
    trump, lead = obs["trump"], obs["lead_suit"]
    return b"".join(
        [
            _field(_GOODGE, "phase", obs["phase"]),
            _field(_GOODGE, "hand_sizes", tuple(obs["hand_sizes"])),
            _field(_GOODGE, "passed", tuple(obs["passed"])),
            _field(_GOODGE, "high_bid", obs["high_bid"] or 0),
            _field(_GOODGE, "high_bidder", _or(obs["high_bidder"], -1)),
            _field(_GOODGE, "goodge", _or(obs["goodge"], -1)),
            _field(_GOODGE, "bid", obs["bid"] or 0),
            _field(
                _GOODGE, "trump", GOODGE_SUITS[trump] if trump else cards.GOODGE_SUIT_UNSPECIFIED
            ),
            _field(_GOODGE, "stash_size", obs["stash_size"]),
            _field(_GOODGE, "stash_known", obs["stash"] is not None),
            # The trick being played: no winner yet, no points counted; its plays are entries.
            _open_trick(_GOODGE, cards.GoodgeTrick, goodge_play, _open_plays(plays)),
            _field(
                _GOODGE, "lead_suit", GOODGE_SUITS[lead] if lead else cards.GOODGE_SUIT_UNSPECIFIED
            ),
            _field(_GOODGE, "taken", tuple(obs["taken"])),
            _field(_GOODGE, "tricks_won", tuple(obs["tricks_won"])),
            _field(_GOODGE, "target", obs["target"]),
            _field(_GOODGE, "to_act", _or(obs["to_act"], -1)),
            _goodge_round_end_entry(obs["last_round"]),
            *map(_goodge_hand_entry, obs["hand"]),
            *starmap(_goodge_bid_entry, obs["bids"]),
            *map(_goodge_stash_entry, obs["stash"] or ()),
            *(_goodge_trick_entry(_trick_key(trick), trick["points"]) for trick in obs["tricks"]),
            _goodge_option_entries(tuple(obs["options"].items())),
        ]
    )


def _goodge_round_end_entry(end: goodge.GoodgeRoundEnd | None) -> bytes:
    """The last round's scoring, the same in every request until the next round ends:
    encoded once per round (keyed by its values)."""
    if end is None:
        return b""
    if end["redeal"]:
        return _goodge_round_end_bytes(end["round"], True, -1, 0, False, (), tuple(end["deltas"]))
    return _goodge_round_end_bytes(
        end["round"],
        False,
        end["goodge"],
        end["bid"],
        end["made"],
        tuple(end["points"]),
        tuple(end["deltas"]),
    )


@lru_cache(maxsize=FIELD_ENTRIES)
def _goodge_round_end_bytes(
    round_: int,
    redeal: bool,
    goodge_seat: int,
    bid: int,
    made: bool,
    points: tuple[int, ...],
    deltas: tuple[int, ...],
) -> bytes:
    end = cards.GoodgeRoundEnd(
        round=round_,
        redeal=redeal,
        goodge=goodge_seat,
        bid=bid,
        made=made,
        points=points,
        deltas=deltas,
    )
    return _entry(_GOODGE, "last_round", end)


# Golden 10


@cache
def _golden10_hand_entry(card: str) -> bytes:
    return _entry(cards.Golden10Observation, "hand", [golden10_card(card)])


@lru_cache(maxsize=FINISHED_TRICKS)
def _golden10_trick_entry(key: TrickKey) -> bytes:
    """A finished trick, encoded once for every later request."""
    trick = cards.Golden10Trick(
        leader=key[0],
        winner=key[1],
        plays=[golden10_play(seat, card) for seat, card in key[2:]],
    )
    return _entry(cards.Golden10Observation, "tricks", [trick])


_GOLDEN10 = cards.Golden10Observation


def _golden10_detail(obs: golden10.Golden10Observation) -> bytes:
    """The encoded typed form of a Golden 10 observation's own fields."""
    plays = obs["trick"]
    led = obs["led_colour"]
    return b"".join(
        [
            _field(_GOLDEN10, "phase", obs["phase"]),
            _field(_GOLDEN10, "hand_sizes", tuple(obs["hand_sizes"])),
            _field(
                _GOLDEN10,
                "led_colour",
                GOLDEN10_COLOURS[led] if led else cards.GOLDEN10_COLOUR_UNSPECIFIED,
            ),
            # The trick being played: no winner yet; its plays are entries.
            _open_trick(_GOLDEN10, cards.Golden10Trick, golden10_play, _open_plays(plays)),
            _field(_GOLDEN10, "red_points_taken", tuple(obs["red_points_taken"])),
            _field(_GOLDEN10, "yellow10_taken_by", _or(obs["yellow10_taken_by"], -1)),
            _field(_GOLDEN10, "left_over_count", obs["left_over_count"]),
            _field(_GOLDEN10, "left_over_taker", _or(obs["left_over_taker"], -1)),
            _field(_GOLDEN10, "rounds", obs["rounds"]),
            _field(_GOLDEN10, "yellow10_floor", obs["yellow10_floor"]),
            _field(_GOLDEN10, "to_act", _or(obs["to_act"], -1)),
            _golden10_round_end_entry(obs["last_round"]),
            *map(_golden10_hand_entry, obs["hand"]),
            *map(_golden10_trick_entry, map(_trick_key, obs["tricks"])),
        ]
    )


def _golden10_round_end_entry(end: golden10.Golden10RoundEnd | None) -> bytes:
    """The last round's scoring, encoded once per round (keyed by its values)."""
    if end is None:
        return b""
    return _golden10_round_end_bytes(
        end["round"],
        tuple(end["red_points"]),
        end["yellow10"],
        tuple(end["score_change"]),
        tuple(end["scores"]),
    )


@lru_cache(maxsize=FIELD_ENTRIES)
def _golden10_round_end_bytes(
    round_: int,
    red_points: tuple[int, ...],
    yellow10: int,
    score_change: tuple[int, ...],
    scores: tuple[int, ...],
) -> bytes:
    end = cards.Golden10RoundEnd(
        round=round_,
        red_points=red_points,
        yellow10=yellow10,
        score_change=score_change,
        scores=scores,
    )
    return _entry(_GOLDEN10, "last_round", end)


# Goof


TABLEAUS = 65_536
"""Goof tableau rows kept encoded: every seat's observation of a tick shows every row,
and most rows do not change from one tick to the next."""


@lru_cache(maxsize=TABLEAUS)
def _goof_tableau_entry(
    seat: int,
    goof_pile: int,
    line: tuple[str, ...],
    stock: int,
    waste: int,
    waste_top: str | None,
    back_three: str | None,
    area_cards: int,
    full_pass: bool,
) -> bytes:
    row = cards.GoofTableau(
        seat=seat,
        goof_pile=goof_pile,
        line=[goof_table_card(card) for card in line],
        stock=stock,
        waste=waste,
        waste_top=_optional_goof_card(waste_top),
        back_three=_optional_goof_card(back_three),
        area_cards=area_cards,
        full_pass=full_pass,
    )
    return _entry(cards.GoofObservation, "tableau", [row])


@lru_cache(maxsize=TABLEAUS)
def _goof_pile_entry(pile: int, suit: str, top: str, size: int) -> bytes:
    typed = cards.GoofPile(id=pile, suit=GOOF_SUITS[suit], top=goof_table_card(top), size=size)
    return _entry(cards.GoofObservation, "piles", [typed])


@cache
def _goof_move_entry(seat: int, action: str, took_effect: bool) -> bytes:
    move = cards.GoofMove(seat=seat, action=action, took_effect=took_effect)
    return _entry(cards.GoofObservation, "last_tick", [move])


def _goof_detail(obs: goof.GoofObservation) -> bytes:
    """The encoded typed form of a Goof observation's own fields."""
    head = cards.GoofObservation(
        phase=obs["phase"],
        tick=obs["tick"],
        removed_piles=obs["removed_piles"],
        one_unders=obs["one_unders"],
        past_rounds=[
            cards.GoofPastRound(scores=past["scores"], goof=_or(past["goof"], -1), end=past["end"])
            for past in obs["past_rounds"]
        ],
    )
    return b"".join(
        [
            head.SerializeToString(),
            *(
                _goof_tableau_entry(
                    row["seat"],
                    row["goof_pile"],
                    tuple(row["line"]),
                    row["stock"],
                    row["waste"],
                    row["waste_top"],
                    row["back_three"],
                    row["area_cards"],
                    row["full_pass"],
                )
                for row in obs["tableau"]
            ),
            *(
                _goof_pile_entry(pile["id"], pile["suit"], pile["top"], pile["size"])
                for pile in obs["piles"]
            ),
            *starmap(_goof_move_entry, obs["last_tick"]),
        ]
    )


_DETAILS: dict[str, Callable[[Any], bytes]] = {
    goodge.SPEC_NAME: _goodge_detail,
    golden10.SPEC_NAME: _golden10_detail,
    goof.SPEC_NAME: _goof_detail,
}
"""Per game, the encoded typed form of its observation's own fields (the engine's TypedDict)."""


def _varint(value: int) -> bytes:
    """`value` (not negative) as a protobuf varint: seven bits a byte, the lowest first."""
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def length_delimited(number: int, payload: bytes) -> bytes:
    """Field `number` holding `payload` (an encoded message), as protobuf writes it: its
    key, its length, the payload. Joined to a message's other encoded fields, it parses as
    that message with the field set (fields may come in any order)."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


_DETAIL_NUMBERS = {
    game: cards.Observation.DESCRIPTOR.fields_by_name[game].number for game in _DETAILS
}
"""Per game, the number of its field in the `detail` oneof of an Observation."""


_JSON_NUMBER = cards.Observation.DESCRIPTOR.fields_by_name["json"].number


@lru_cache(maxsize=FIELD_ENTRIES)
def _head(
    game: str, seat: int, players: int, round_: int, dealer: int, scores: tuple[int, ...]
) -> bytes:
    """The fields every game's observation has, encoded once: they change once a round."""
    message = cards.Observation(
        game=game, seat=seat, players=players, round=round_, dealer=dealer, scores=scores
    )
    return message.SerializeToString()


def observation_bytes(obs: dict[str, Any], with_json: bool = False) -> bytes:
    """The typed observation, encoded; the engine's JSON alongside if `with_json` (a
    session asked). Its head (the fields every game has) and the game's own fields are
    joins of entries encoded once (`_head`, `_DETAILS`), put in as they are: parsing
    them into a message, for gRPC to serialize again, cost a move more than the joins
    themselves (docs/performance.md)."""
    game = obs["game"]
    head = _head(
        game,
        obs["seat"],
        obs["players"],
        obs["round"],
        _or(obs.get("dealer"), -1),
        tuple(obs["scores"]),
    )
    detail = length_delimited(_DETAIL_NUMBERS[game], _DETAILS[game](obs))
    if with_json:
        return head + detail + length_delimited(_JSON_NUMBER, orjson.dumps(obs))
    return head + detail


def observation_message(obs: dict[str, Any], with_json: bool = False) -> cards.Observation:
    """The typed observation (`observation_bytes`, parsed)."""
    return cards.Observation.FromString(observation_bytes(obs, with_json))


def _or(value: int | None, default: int) -> int:
    return default if value is None else value


# Referee messages
