"""Bots' registrations, cards and actions: typed action messages and the texts read
back from bots' typed answers (cached: shared messages, never modify them); rules
option values and the options and seed a start request asks for.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache, lru_cache

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
from ladder.fairness import parse_seed
from ladder.names import is_name


def registration_problem(name: str, version: str, game_names: list[str]) -> str | None:
    """Why a registration is refused, or None."""
    if not is_name(name, "-_."):
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
