"""Engine values to protobuf messages and back.

Cards and actions travel typed (and with their notation in `text`); each
observation travels as the game's typed message plus the engine's JSON, so
the Python SDK hands bots exactly what `arena play` hands them.

Building messages is the referee's hot path, so cards, plays and actions are
built once per notation and cached: the cached messages are shared and must
not be modified (assigning one into a field copies it).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from functools import cache, lru_cache
from typing import Any, assert_never

import orjson
from google.protobuf.message import Message

import games
from cardarena_api.v1 import arena_pb2 as pb
from cardarena_api.v1 import cards_pb2 as cards
from cardarena_api.v1.notation import (
    GOLDEN10_COLOURS,
    GOLDEN10_LETTERS,
    GOODGE_LETTERS,
    GOODGE_SUITS,
    GOOF_LETTERS,
    GOOF_SUITS,
)
from games import golden10, goodge, goof
from games.core import SeatEntry
from ladder.fairness import parse_seed
from ladder.records import (
    EventType,
    Forfeit,
    GameEnd,
    GameStart,
    Match,
    MatchEnd,
    MatchResult,
    MatchStatus,
    Notice,
    Replay,
    Strike,
)
from referee.channels import ActRequest
from referee.public import VIEW
from referee.sessions import Outgoing, Problem, Reconnect


def registration_problem(name: str, version: str, game_names: list[str]) -> str | None:
    """Why a registration is refused, or None."""
    if (
        not name
        or len(name) > 64
        or not name.replace("-", "").replace("_", "").replace(".", "").isalnum()
    ):
        return "name must be 1..64 letters, digits, '-', '_' or '.'"
    # Control and format characters (bidi overrides among them) could make a
    # name or version shown on the standings read as another bot's.
    if not version or len(version) > 64 or "@" in version or not version.isprintable():
        return "version must be 1..64 printable characters without '@' (no control or format characters)"
    if not game_names:
        return f"name the games the bot plays: {', '.join(games.names())}"
    unknown = [game for game in game_names if game not in games.names()]
    if unknown:
        return f"unknown games {', '.join(unknown)}; games are: {', '.join(games.names())}"
    return None


# Cards


@cache
def goodge_card(text: str) -> cards.GoodgeCard:
    """A Goodge card from its notation (`10S`, `CR`)."""
    card = goodge.CARD_INDEX[text]
    if card == goodge.CROWN:
        return cards.GoodgeCard(crown=True, text=text)
    suit = GOODGE_SUITS[goodge.SUITS[goodge.SUIT_OF[card]]]
    return cards.GoodgeCard(suit=suit, rank=goodge.RANK_OF[card], text=text)


@cache
def golden10_card(text: str) -> cards.Golden10Card:
    """A Golden 10 card from its notation (`14R`)."""
    card = golden10.TABLE.parse(text)
    colour = GOLDEN10_COLOURS[golden10.COLOURS[golden10.COLOUR_OF[card]]]
    return cards.Golden10Card(colour=colour, rank=golden10.RANK_OF[card], text=text)


@cache
def goof_card(card: int, owner: int) -> cards.GoofCard:
    """A Goof card: the engine's card number `card` from the deck of seat `owner`."""
    return cards.GoofCard(
        suit=GOOF_SUITS[goof.SUITS[goof.SUIT_OF[card]]],
        rank=goof.RANK_OF[card],
        owner=owner,
        text=goof.CARD_IDS[owner * goof.DECK + card],
    )


@cache
def goof_table_card(card_id: str) -> cards.GoofCard:
    """A Goof card from its id on the table (`7H@2`)."""
    return goof_card(*goof.card_of_id(card_id))


@cache
def goodge_play(seat: int, text: str) -> cards.GoodgePlay:
    """One card played to a Goodge trick."""
    return cards.GoodgePlay(seat=seat, card=goodge_card(text))


@cache
def golden10_play(seat: int, text: str) -> cards.Golden10Play:
    """One card played to a Golden 10 trick."""
    return cards.Golden10Play(seat=seat, card=golden10_card(text))


def _optional_goof_card(card_id: str | None) -> cards.GoofCard | None:
    return goof_table_card(card_id) if card_id else None


# Actions


def _goodge_action(text: str, seat: int) -> cards.Action:
    action = goodge.TABLE.parse(text)
    if action == goodge.PASS:
        return cards.Action(text=text, goodge=cards.GoodgeAction(pass_bid=True))
    bid = goodge.bid_value(action)
    if bid is not None:
        return cards.Action(text=text, goodge=cards.GoodgeAction(bid=bid))
    trump = goodge.named_trump(action)
    if trump is not None:
        return cards.Action(text=text, goodge=cards.GoodgeAction(trump=GOODGE_SUITS[trump]))
    return cards.Action(text=text, goodge=cards.GoodgeAction(card=goodge_card(text)))


def _golden10_action(text: str, seat: int) -> cards.Action:
    return cards.Action(text=text, golden10=cards.Golden10Action(card=golden10_card(text)))


def _goof_action(text: str, seat: int) -> cards.Action:
    play = goof.play_of(text)
    if play is None:
        if goof.TABLE.parse(text) == goof.TURN:
            return cards.Action(text=text, goof=cards.GoofAction(turn=True))
        return cards.Action(text=text, goof=cards.GoofAction(wait=True))
    card, pile = play
    message = cards.GoofPlay(card=goof_card(card, seat), new_pile=pile is None)
    if pile is not None:
        message.pile = pile
    return cards.Action(text=text, goof=cards.GoofAction(play=message))


_ACTIONS: dict[str, Callable[[str, int], cards.Action]] = {
    goodge.SPEC_NAME: _goodge_action,
    golden10.SPEC_NAME: _golden10_action,
    goof.SPEC_NAME: _goof_action,
}
"""Per game, the typed action for a notation played by a seat."""


@cache
def action_message(game: str, text: str, seat: int) -> cards.Action:
    """The typed action for notation `text`, played by `seat`."""
    return _ACTIONS[game](text, seat)


@cache
def _legal_entry(game: str, text: str, seat: int) -> bytes:
    """One legal action, encoded as an entry of `Act.legal` (see `_entry`)."""
    return _entry(pb.Act, "legal", [action_message(game, text, seat)])


def action_text(action: cards.Action, seat: int) -> str:
    """The notation of a typed action a bot at `seat` answered (its `text` wins when set).

    Typed fields that contradict each other or the seat (a Goof card from
    another seat's deck, a card whose `text` is not its suit and rank, the
    Crown with a suit, a new pile with a pile id) give the notation with what
    is wrong appended: no legal action reads so, and the strike says why.
    """
    if action.text:
        return action.text
    notation, wrong = _typed_action(action, seat)
    return f"{notation} ({wrong})" if wrong else notation


def _card_text_wrong(text: str, expected: str) -> str:
    return f"card text {text!r} is not {expected!r}" if text and text != expected else ""


def _typed_action(action: cards.Action, seat: int) -> tuple[str, str]:
    """The notation of a typed action, and what in it contradicts the rest ("" if nothing)."""
    which = action.WhichOneof("game")
    if which == "goodge":
        kind = action.goodge.WhichOneof("kind")
        if kind == "bid":
            return f"bid:{action.goodge.bid}", ""
        if kind == "pass_bid":
            return "pass", ""
        if kind == "trump":
            return "trump:" + GOODGE_LETTERS.get(action.goodge.trump, "?"), ""
        if kind == "card":
            card = action.goodge.card
            if card.crown:
                return "CR", "the Crown has no suit or rank" if card.suit or card.rank else ""
            notation = f"{card.rank}{GOODGE_LETTERS.get(card.suit, '?')}"
            return notation, _card_text_wrong(card.text, notation)
    elif which == "golden10":
        card10 = action.golden10.card
        notation = f"{card10.rank}{GOLDEN10_LETTERS.get(card10.colour, '?')}"
        return notation, _card_text_wrong(card10.text, notation)
    elif which == "goof":
        goof_kind = action.goof.WhichOneof("kind")
        if goof_kind in ("turn", "wait"):
            return str(goof_kind), ""
        if goof_kind == "play":
            play = action.goof.play
            rank = play.card.rank
            # Any number comes back as text, for the referee to refuse with it in the message.
            face = goof.RANKS[rank - 1] if 1 <= rank <= len(goof.RANKS) else str(rank)
            face += GOOF_LETTERS.get(play.card.suit, "?")
            notation = f"{face}>new" if play.new_pile else f"{face}>p{play.pile}"
            if play.card.owner != seat:
                return (
                    notation,
                    f"a card from the deck of seat {play.card.owner}, played by seat {seat}",
                )
            if play.new_pile and play.pile:
                return notation, f"a new pile and pile {play.pile} at once"
            return notation, _card_text_wrong(play.card.text, f"{face}@{seat}")
    return "", ""


# Observations


@lru_cache(maxsize=None, typed=True)  # typed: True and 1 are different values here
def option_value(value: object) -> cards.OptionValue:
    """A rules option's value, typed (shared: do not modify)."""
    if isinstance(value, bool):
        return cards.OptionValue(flag=value)
    if isinstance(value, int):
        return cards.OptionValue(number=value)
    if isinstance(value, str):
        return cards.OptionValue(text=value)
    raise TypeError(f"an option value is a bool, an int or a text, not {value!r}")


FINISHED_TRICKS = 65_536
"""Finished tricks kept as built messages (a few MB): a game's tricks are asked for again
in every later request of that game."""


TrickKey = tuple[Any, ...]
"""A finished trick, hashable: its leader, its winner, then each play as (seat, card)."""


def _trick_key(trick: goodge.GoodgeTrick | golden10.Golden10Trick) -> TrickKey:
    return (trick["leader"], trick["winner"], *(tuple(play) for play in trick["cards"]))


def _leader(plays: Sequence[SeatEntry]) -> int:
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


@cache
def _goodge_play_entry(seat: int, card: str) -> bytes:
    """A card of the trick being played."""
    trick = cards.GoodgeTrick(plays=[goodge_play(seat, card)])
    return cards.GoodgeObservation(trick=trick).SerializeToString()


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


@lru_cache(maxsize=None, typed=True)
def _goodge_option_entry(name: str, value: object) -> bytes:
    return _entry(cards.GoodgeObservation, "options", {name: option_message(value)})


def _goodge_detail(obs: goodge.GoodgeObservation) -> bytes:
    """The encoded typed form of a Goodge observation's own fields."""
    plays = obs["trick"]
    head = cards.GoodgeObservation(
        phase=obs["phase"],
        hand_sizes=obs["hand_sizes"],
        passed=obs["passed"],
        high_bid=obs["high_bid"] or 0,
        high_bidder=_or(obs["high_bidder"], -1),
        goodge=_or(obs["goodge"], -1),
        bid=obs["bid"] or 0,
        trump=GOODGE_SUITS[obs["trump"]] if obs["trump"] else cards.GOODGE_SUIT_UNSPECIFIED,
        stash_size=obs["stash_size"],
        stash_known=obs["stash"] is not None,
        # The trick being played: no winner yet, no points counted; its plays are entries.
        trick=cards.GoodgeTrick(leader=_leader(plays), winner=-1),
        lead_suit=GOODGE_SUITS[obs["lead_suit"]]
        if obs["lead_suit"]
        else cards.GOODGE_SUIT_UNSPECIFIED,
        taken=obs["taken"],
        tricks_won=obs["tricks_won"],
        target=obs["target"],
        to_act=_or(obs["to_act"], -1),
        last_round=_goodge_round_end(obs["last_round"]),
    )
    return b"".join(
        [
            head.SerializeToString(),
            *map(_goodge_hand_entry, obs["hand"]),
            *(_goodge_bid_entry(seat, bid) for seat, bid in obs["bids"]),
            *map(_goodge_stash_entry, obs["stash"] or ()),
            *(_goodge_trick_entry(_trick_key(trick), trick["points"]) for trick in obs["tricks"]),
            *(_goodge_play_entry(seat, card) for seat, card in plays),
            *(_goodge_option_entry(name, value) for name, value in obs["options"].items()),
        ]
    )


def _goodge_round_end(end: goodge.GoodgeRoundEnd | None) -> cards.GoodgeRoundEnd | None:
    if end is None:
        return None
    if end["redeal"]:
        return cards.GoodgeRoundEnd(
            round=end["round"], redeal=True, goodge=-1, deltas=end["deltas"]
        )
    return cards.GoodgeRoundEnd(
        round=end["round"],
        goodge=end["goodge"],
        bid=end["bid"],
        made=end["made"],
        points=end["points"],
        deltas=end["deltas"],
    )


# Golden 10


@cache
def _golden10_hand_entry(card: str) -> bytes:
    return _entry(cards.Golden10Observation, "hand", [golden10_card(card)])


@cache
def _golden10_play_entry(seat: int, card: str) -> bytes:
    """A card of the trick being played."""
    trick = cards.Golden10Trick(plays=[golden10_play(seat, card)])
    return cards.Golden10Observation(trick=trick).SerializeToString()


@lru_cache(maxsize=FINISHED_TRICKS)
def _golden10_trick_entry(key: TrickKey) -> bytes:
    """A finished trick, encoded once for every later request."""
    trick = cards.Golden10Trick(
        leader=key[0],
        winner=key[1],
        plays=[golden10_play(seat, card) for seat, card in key[2:]],
    )
    return _entry(cards.Golden10Observation, "tricks", [trick])


def _golden10_detail(obs: golden10.Golden10Observation) -> bytes:
    """The encoded typed form of a Golden 10 observation's own fields."""
    plays = obs["trick"]
    head = cards.Golden10Observation(
        phase=obs["phase"],
        hand_sizes=obs["hand_sizes"],
        led_colour=GOLDEN10_COLOURS[obs["led_colour"]]
        if obs["led_colour"]
        else cards.GOLDEN10_COLOUR_UNSPECIFIED,
        # The trick being played: no winner yet; its plays are entries.
        trick=cards.Golden10Trick(leader=_leader(plays), winner=-1),
        red_points_taken=obs["red_points_taken"],
        yellow10_taken_by=_or(obs["yellow10_taken_by"], -1),
        left_over_count=obs["left_over_count"],
        left_over_taker=_or(obs["left_over_taker"], -1),
        rounds=obs["rounds"],
        yellow10_floor=obs["yellow10_floor"],
        to_act=_or(obs["to_act"], -1),
        last_round=_golden10_round_end(obs["last_round"]),
    )
    return b"".join(
        [
            head.SerializeToString(),
            *map(_golden10_hand_entry, obs["hand"]),
            *(_golden10_trick_entry(_trick_key(trick)) for trick in obs["tricks"]),
            *(_golden10_play_entry(seat, card) for seat, card in plays),
        ]
    )


def _golden10_round_end(end: golden10.Golden10RoundEnd | None) -> cards.Golden10RoundEnd | None:
    if end is None:
        return None
    return cards.Golden10RoundEnd(
        round=end["round"],
        red_points=end["red_points"],
        yellow10=end["yellow10"],
        score_change=end["score_change"],
        scores=end["scores"],
    )


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
            *(_goof_move_entry(seat, action, ok) for seat, action, ok in obs["last_tick"]),
        ]
    )


_DETAILS: dict[str, Callable[[Any], bytes]] = {
    goodge.SPEC_NAME: _goodge_detail,
    golden10.SPEC_NAME: _golden10_detail,
    goof.SPEC_NAME: _goof_detail,
}
"""Per game, the encoded typed form of its observation's own fields (the engine's TypedDict)."""


def _observation_head(obs: dict[str, Any], with_json: bool) -> cards.Observation:
    """The fields every game's observation has (and its JSON if `with_json`)."""
    return cards.Observation(
        game=obs["game"],
        seat=obs["seat"],
        players=obs["players"],
        round=obs["round"],
        dealer=_or(obs.get("dealer"), -1),
        scores=obs["scores"],
        json=orjson.dumps(obs).decode() if with_json else "",
    )


def _parse_detail(message: cards.Observation, obs: dict[str, Any]) -> None:
    """Parse the game's own fields into `message` (in place: nothing is copied)."""
    getattr(message, obs["game"]).MergeFromString(_DETAILS[obs["game"]](obs))


def observation_message(obs: dict[str, Any], with_json: bool = False) -> cards.Observation:
    """The typed observation; the engine's JSON alongside if `with_json` (a session asked)."""
    message = _observation_head(obs, with_json)
    _parse_detail(message, obs)
    return message


def _or(value: int | None, default: int) -> int:
    return default if value is None else value


# Referee messages


def referee_message(
    message: Outgoing, with_json: bool = False, now: float = 0.0
) -> pb.RefereeMessage:
    """The wire form of what a session sends at `now` (Unix seconds): an Act carries what
    is left of its clock then, and its observation's JSON too if `with_json`."""
    if isinstance(message, Problem):
        return pb.RefereeMessage(
            error=pb.Error(message=message.message, request_id=message.request_id)
        )
    if isinstance(message, Reconnect):
        return pb.RefereeMessage(reconnect=pb.Reconnect(reason=message.reason))
    if isinstance(message, ActRequest):
        deadline_ms, time_bank_ms = message.clock_left(now)
        wrapped = pb.RefereeMessage(
            act=pb.Act(
                request_id=message.request_id,
                match_id=message.match_id,
                game_index=message.game_index,
                game=message.game,
                seat=message.seat,
                observation=_observation_head(message.observation, with_json),
                deadline_ms=deadline_ms,
                time_bank_ms=time_bank_ms,
                sent_at_ms=round(now * 1000),
            )
        )
        act = wrapped.act
        _parse_detail(act.observation, message.observation)
        act.MergeFromString(
            b"".join(_legal_entry(message.game, text, message.seat) for text in message.legal)
        )
        return wrapped
    return _notice_message(message)


def _notice_message(notice: Notice) -> pb.RefereeMessage:
    if isinstance(notice, GameStart):
        return pb.RefereeMessage(
            game_start=pb.GameStart(
                match_id=notice.match_id,
                game_index=notice.game_index,
                game=notice.game,
                seat=notice.seat,
                seats=notice.seats,
                options={key: json.dumps(value) for key, value in notice.options.items()},
                seed_commitment=notice.seed_commitment,
                option_values={key: option_message(value) for key, value in notice.options.items()},
            )
        )
    if isinstance(notice, GameEnd):
        return pb.RefereeMessage(
            game_end=pb.GameEnd(
                match_id=notice.match_id,
                game_index=notice.game_index,
                seat=notice.seat,
                scores=notice.scores,
                ranks=notice.ranks,
                rounds=notice.rounds,
            )
        )
    if isinstance(notice, MatchEnd):
        return pb.RefereeMessage(
            match_end=pb.MatchEnd(match_id=notice.match_id, result=result_message(notice.result))
        )
    if isinstance(notice, Strike):
        return pb.RefereeMessage(
            strike=pb.Strike(
                match_id=notice.match_id,
                game_index=notice.game_index,
                seat=notice.seat,
                reason=notice.reason,
                strikes=notice.strikes,
                max_strikes=notice.max_strikes,
            )
        )
    if isinstance(notice, Forfeit):
        return pb.RefereeMessage(forfeit=pb.Forfeit(match_id=notice.match_id, reason=notice.reason))
    assert_never(notice)


def result_message(result: MatchResult) -> pb.MatchResult:
    """A match result as a message (its `json` field the whole result, as stored)."""
    return pb.MatchResult(
        entries=entry_results(result),
        scores=result.scores,
        ranks=result.ranks,
        forfeits=result.forfeits,
        games=[
            pb.GameResult(
                seed=_int64_or_zero(game.seed),
                seed_decimal=str(game.seed),
                seats=game.seats,
                scores=game.scores,
                ranks=game.ranks,
                rounds=game.rounds,
            )
            for game in result.games
        ],
        json=json.dumps(result.to_json()),
    )


def entry_results(result: MatchResult) -> list[pb.EntryResult]:
    """One EntryResult per entry of the match's bots, in order (a bot entered twice has two).

    Strikes and forfeits are the bot's, so the entries of one bot share them.
    """
    entries = []
    for bot, score, rank in zip(result.bots, result.scores, result.ranks, strict=True):
        forfeited = bot in result.forfeits
        entries.append(
            pb.EntryResult(
                bot_id=bot,
                score=score,
                rank=rank,
                strikes=result.strikes.get(bot, 0),
                forfeited=forfeited,
                forfeit_reason=result.forfeit_reasons.get(bot, "") if forfeited else "",
            )
        )
    return entries


# Events


def _game_start_event(event: Mapping[str, Any]) -> pb.GameStartEvent:
    return pb.GameStartEvent(
        game_index=event["game_index"],
        seats=event["seats"],
        seed_commitment=event["seed_commitment"],
    )


def _action_event(event: Mapping[str, Any]) -> pb.ActionEvent:
    return pb.ActionEvent(
        game_index=event["game_index"],
        seat=event["seat"],
        action=event["action"],
        ms=event["ms"],  # None leaves it unset: a stand-in played
    )


def _tick_event(event: Mapping[str, Any]) -> pb.TickEvent:
    return pb.TickEvent(
        game_index=event["game_index"],
        moves=[
            pb.TickMove(seat=seat, action=action, took_effect=took, ms=ms)
            for seat, action, took, ms in event["moves"]
        ],
    )


def _strike_event(event: Mapping[str, Any]) -> pb.StrikeEvent:
    return pb.StrikeEvent(
        game_index=event["game_index"],
        seat=event["seat"],
        bot=event["bot"],
        reason=event.get("reason", ""),  # none in a public stream
        strikes=event["strikes"],
    )


def _forfeit_event(event: Mapping[str, Any]) -> pb.ForfeitEvent:
    return pb.ForfeitEvent(
        game_index=event["game_index"],
        seat=event["seat"],
        bot=event["bot"],
        reason=event.get("reason", ""),  # none in a public stream
    )


def _game_end_event(event: Mapping[str, Any]) -> pb.GameEndEvent:
    return pb.GameEndEvent(
        game_index=event["game_index"], scores=event["scores"], ranks=event["ranks"]
    )


def _match_end_event(event: Mapping[str, Any]) -> pb.MatchEndEvent:
    return pb.MatchEndEvent(result=result_message(MatchResult.from_json(event["result"])))


def _match_aborted_event(event: Mapping[str, Any]) -> pb.MatchAbortedEvent:
    return pb.MatchAbortedEvent(reason=event["reason"])


def _view_event(event: Mapping[str, Any]) -> pb.PublicViewEvent:
    # The typed observation reads a seat, a hand and the Stash: nobody's, none, unknown.
    nobodys = {"seat": -1, "hand": [], "stash": None, **event["view"]}
    return pb.PublicViewEvent(
        game_index=event["game_index"],
        step=event["step"],
        observation=observation_message(nobodys),
    )


_EVENTS: dict[str, Callable[[Mapping[str, Any]], Message]] = {
    EventType.GAME_START: _game_start_event,
    EventType.ACTION: _action_event,
    EventType.TICK: _tick_event,
    EventType.STRIKE: _strike_event,
    EventType.FORFEIT: _forfeit_event,
    EventType.GAME_END: _game_end_event,
    EventType.MATCH_END: _match_end_event,
    EventType.MATCH_ABORTED: _match_aborted_event,
    VIEW: _view_event,
}
"""Per event type, its typed message (the `MatchEvent.event` field named as the type)."""


def event_message(event: Mapping[str, Any]) -> pb.MatchEvent:
    """A referee event (`{"type": ..., ...}`) as a MatchEvent: its type, its JSON and
    the same event typed. An event of another type (`match_running`) has no typed form."""
    kind = str(event["type"])
    message = pb.MatchEvent(type=kind, json=json.dumps(event))
    if kind in _EVENTS:
        getattr(message, kind).CopyFrom(_EVENTS[kind](event))
    return message


# Options


def option_message(value: object) -> cards.OptionValue:
    """A resolved rules option's value in its one typed encoding (shared: do not modify).

    A bool is a flag, an int a number, a text a text; None (an option that is off)
    sets none of them; one value per seat (Goof's goof_pile) is the text "13,10,13".
    """
    if value is None:
        return _NO_OPTION
    if isinstance(value, list | tuple):
        return option_value(",".join(str(item) for item in value))
    return option_value(value)


_NO_OPTION = cards.OptionValue()


def option_python(value: cards.OptionValue) -> object:
    """The Python value of a typed option: the flag, number or text set, or None."""
    kind = value.WhichOneof("value")
    return None if kind is None else getattr(value, kind)


_OPTION_KINDS = {"flag": "a flag", "number": "a number", "text": "a text", None: "no value"}


def requested_options(request: pb.StartMatchRequest) -> dict[str, object]:
    """The rules options a StartMatch asks for: the texts of `options` and the typed
    values of `option_values`, as Python values for the game's checks (its
    `resolve_options`, which reads both).

    ValueError when an option is in both, or when a typed value is not of the kind
    the option takes (the kind GameStart.option_values gives it: "5" as a text for a
    number). A value the option refuses anyway is left to `resolve_options`, as are
    unknown options and games.
    """
    both = sorted(set(request.options) & set(request.option_values))
    if both:
        raise ValueError(
            f"option {both[0]} is given in both options and option_values; give it once"
        )
    typed = {name: option_python(value) for name, value in request.option_values.items()}
    if typed and request.game in games.names():
        known = {option.name: option for option in games.get(request.game).options}
        for name in sorted(typed):
            option = known.get(name)
            if option is None:
                continue
            try:
                resolved = option.coerce(typed[name], request.players)
            except ValueError:
                continue
            want = option_message(resolved).WhichOneof("value")
            given = request.option_values[name].WhichOneof("value")
            if given != want:
                raise ValueError(
                    f"option {name} takes {_OPTION_KINDS[want]} in option_values, "
                    f"not {_OPTION_KINDS[given]}"
                )
    return {**request.options, **typed}


def requested_seed(request: pb.StartMatchRequest) -> int | None:
    """The seed a StartMatch asks for, or None: the referee then draws a secret one."""
    if request.seed_decimal:
        return parse_seed(request.seed_decimal)
    if request.HasField("seed"):
        if request.seed < 0:
            raise ValueError(f"a seed is a number >= 0, not {request.seed}")
        return request.seed
    return None


def _int64_or_zero(seed: int) -> int:
    """The seed for the old int64 field: drawn 128-bit seeds do not fit, so 0."""
    return seed if seed < 2**63 else 0


def match_message(match: Match) -> pb.Match:
    """A stored match as a message: the seed's commitment always, the seed once finished."""
    message = pb.Match(
        match_id=match.request.id,
        status=match.status,
        game=match.request.game,
        bot_ids=match.request.bot_ids,
        reason=match.reason,
        seed_commitment=match.seed_commitment,
    )
    if match.status == MatchStatus.FINISHED:
        message.seed_decimal = str(match.seed)
    if match.result is not None:
        message.result.CopyFrom(result_message(match.result))
    return message


def replay_message(match_id: str, replays: Sequence[Replay]) -> pb.Replay:
    """A match's replays as a message."""
    return pb.Replay(
        match_id=match_id,
        games=[
            pb.GameReplay(
                game_index=replay.game_index,
                seats=replay.seats,
                log_json=json.dumps(replay.log),
                events_json=json.dumps(replay.events),
                events=[event_message(event) for event in replay.events],
            )
            for replay in replays
        ],
    )
