"""A person's seat as text: a seat's view drawn in lines, and a typed move read.

Pure: every function takes an observation (the engine's per-seat view, as a
bot gets it) and returns lines or a value; `arena_cli.human_seat` does the
reading and writing. Cards are written as their notation (`7H`, `10Y`, `CR`,
`AS>new`), the text a person types and docs/bots.md uses; goof cards on the
table keep their owner (`7H@2`: seat 2's card).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import games
from games import golden10, goodge, goof
from ladder.wording import plural

WIDTH = 78
"""Lines of numbered actions are wrapped at this width."""

SUIT_NAMES: dict[str, dict[str, str]] = {
    "goodge": {**dict(zip(goodge.SUITS, goodge.SUIT_NAMES, strict=True)), "CR": "the Crown"},
    "golden10": dict(zip(golden10.COLOURS, golden10.COLOUR_NAMES, strict=True)),
    "goof": {"S": "Spades", "H": "Hearts", "D": "Diamonds", "C": "Clubs"},
}
"""Each game's suit (Golden 10: colour) letters and their names, in the order hands are sorted."""

GOODGE_PHASES = {
    "bid": "bidding",
    "discard": "the Goodge discards 3 cards face down as the Stash",
    "trump": "the Goodge names trump",
    "play": "tricks",
    "over": "game over",
}

EXAMPLES = {"goodge": "e.g. 7H, bid 55 or pass", "golden10": "e.g. 10Y", "goof": "e.g. AS>new"}
"""What an action's text looks like, per game, for the introduction."""

LEGENDS = {
    "goodge": "Cards: rank then suit, S Spades, D Diamonds, R Stars, H Hearts, C Clubs; "
    "CR the Crown. 1 ranks highest, then 10 down to 2 (with one_high=false: 10 to 1). "
    "Points: 1s 20, 5s 15, 10s 10, the Crown 25.",
    "golden10": "Cards: rank 1 (low) to 14 (high), then colour, R red, Y yellow, B black, "
    "G green. Each red card 1 point, red 5 5, red 10 10; the yellow 10 takes 10 off.",
    "goof": "Cards: A, 2-10, J, Q, K then suit, S, H, D, C; 7H@2 is seat 2's card. "
    "7H>p3 plays the 7H onto pile 3, AS>new starts a pile with an Ace. "
    "+1 per card of yours on the piles, -2 per card left in your goof pile.",
}


def seat_label(seat: int, you: int) -> str:
    """How a seat is named on the person's screen."""
    return "you" if seat == you else f"seat {seat}"


def by_seat(values: Sequence[object], you: int) -> str:
    """`you 5 · seat 1 12 · ...`: one value per seat."""
    return " · ".join(f"{seat_label(seat, you)} {value}" for seat, value in enumerate(values))


def signed(values: Sequence[int]) -> list[str]:
    """Score changes with their sign (`+3`, `-10`, `0`)."""
    return [f"{value:+d}" if value else "0" for value in values]


def intro(game: str, names: Sequence[str], you: int) -> list[str]:
    """What the person reads once, before anything else: who sits where and how to answer."""
    spec = games.get(game)
    others = ", ".join(f"seat {seat} {name}" for seat, name in enumerate(names) if seat != you)
    wins = "highest" if spec.higher_is_better else "lowest"
    answer = (
        f"Each tick, type a move's number or its text ({EXAMPLES[game]}); an empty line "
        "waits. ? lists the moves."
        if spec.simultaneous
        else f"Type an action's number or its text ({EXAMPLES[game]}); ? lists the actions again."
    )
    return [
        f"{spec.title} · {len(names)} players · you are seat {you}; {others} · {wins} total wins",
        LEGENDS[game],
        answer,
    ]


# -- what another seat did ------------------------------------------------------


def describe(game: str, phase: str, action: str) -> str:
    """What a seat did, in words, as everyone at the table saw it.

    A Goodge discard is face down, so it is never named.
    """
    if game == "goodge":
        if phase == "discard":
            return "discards a card face down"
        if action == "pass":
            return "passes"
        word, _, argument = action.partition(":")
        if word == "bid":
            return f"bids {argument}"
        if word == "trump":
            return f"names trump: {SUIT_NAMES['goodge'][argument]} ({argument})"
    return f"plays {action}"


def goof_move(action: str) -> str:
    """A Goof move in words: `7H onto pile 3`, `AS to a new pile`, `turn`, `wait`."""
    if action in ("turn", "wait"):
        return action
    card, _, target = action.partition(">")
    return f"{card} to a new pile" if target == "new" else f"{card} onto pile {target[1:]}"


# -- the table ------------------------------------------------------------------


def hand_line(game: str, hand: Sequence[str]) -> str:
    """`Your hand (5): Spades 3S 6S · Stars 1R · the Crown CR`, grouped in the game's suit order."""
    groups = []
    for suit, name in SUIT_NAMES[game].items():
        cards = [card for card in hand if card == suit or (card != "CR" and card[-1] == suit)]
        if cards:
            groups.append(f"{name} {' '.join(cards)}")
    return f"Your hand ({len(hand)}): " + (" · ".join(groups) or "empty")


def plays_line(plays: Sequence[Sequence[Any]], you: int) -> str:
    """`seat 1 7H, you 9H`: cards of a trick in play order."""
    return ", ".join(f"{seat_label(seat, you)} {card}" for seat, card in plays)


def table(view: Mapping[str, Any]) -> list[str]:
    """The seat's view as text: the public table, the scores, then its own cards."""
    game = view["game"]
    if game == "goodge":
        return goodge_table(cast(goodge.GoodgeObservation, view))
    if game == "golden10":
        return golden10_table(cast(golden10.Golden10Observation, view))
    return goof_table(cast(goof.GoofObservation, view))


def goodge_table(view: goodge.GoodgeObservation) -> list[str]:
    """A Goodge seat's view: the bidding or the contract, the tricks, its hand and Stash."""
    you = view["seat"]
    suits = SUIT_NAMES["goodge"]
    lines = [
        f"-- round {view['round']} · dealer {seat_label(view['dealer'], you)} · "
        f"{GOODGE_PHASES[view['phase']]} · first to {view['target']}, highest total wins",
        f"Scores: {by_seat(view['scores'], you)}",
    ]
    if view["phase"] == "bid" and view["bids"]:
        bids = ", ".join(
            f"{seat_label(seat, you)} {bid.replace(':', ' ')}" for seat, bid in view["bids"]
        )
        lines.append(f"Bids: {bids}")
    if view["goodge"] is not None:
        trump = view["trump"]
        lines.append(
            f"The Goodge: {seat_label(view['goodge'], you)} at {view['bid']} · trump "
            + (f"{suits[trump]} ({trump})" if trump else "not named yet")
            + f" · Stash {plural(view['stash_size'], 'card', 'cards')}"
        )
    if view["tricks"]:
        last = view["tricks"][-1]
        lines.append(
            f"Last trick: {plays_line(last['cards'], you)} -> "
            f"{seat_label(last['winner'], you)} (+{last['points']})"
        )
        lines.append(
            f"Points taken: {by_seat(view['taken'], you)}; tricks {by_seat(view['tricks_won'], you)}"
        )
    if view["trick"]:
        lead = view["lead_suit"]
        lead_text = f" (lead {suits[lead]})" if lead else ""
        lines.append(f"Trick: {plays_line(view['trick'], you)}{lead_text}")
    lines.append(hand_line("goodge", view["hand"]))
    if view["stash"] and view["goodge"] == you:
        lines.append(f"Your Stash: {' '.join(view['stash'])}")
    return lines


def golden10_table(view: golden10.Golden10Observation) -> list[str]:
    """A Golden 10 seat's view: the round's points so far, the tricks, its hand."""
    you = view["seat"]
    colours = SUIT_NAMES["golden10"]
    taker = view["yellow10_taken_by"]
    left_over = view["left_over_count"]
    lines = [
        f"-- round {view['round']} of {view['rounds']} · dealer {seat_label(view['dealer'], you)}"
        " · lowest total wins",
        f"Scores: {by_seat(view['scores'], you)}",
        f"This round: red points {by_seat(view['red_points_taken'], you)} · yellow 10 "
        + ("not taken yet" if taker is None else f"taken by {seat_label(taker, you)}"),
    ]
    if left_over:
        left_taker = view["left_over_taker"]
        lines.append(
            f"{plural(left_over, 'card', 'cards')} set aside: "
            + (
                "the first trick's winner takes them"
                if left_taker is None
                else f"{seat_label(left_taker, you)} took them"
            )
        )
    if view["tricks"]:
        last = view["tricks"][-1]
        lines.append(
            f"Last trick: {plays_line(last['cards'], you)} -> {seat_label(last['winner'], you)}"
        )
    if view["trick"]:
        led = view["led_colour"]
        led_text = f" (led {colours[led]})" if led else ""
        lines.append(f"Trick: {plays_line(view['trick'], you)}{led_text}")
    lines.append(hand_line("golden10", view["hand"]))
    return lines


def own_card(card: str | None) -> str:
    """A card of the seat's own tableau, without the owner mark every one of them has."""
    return "none" if card is None else card.partition("@")[0]


def tableau_line(side: goof.GoofTableau, you: int) -> str:
    """One seat's side of the Goof table."""
    waste = own_card(side["waste_top"])
    if side["back_three"]:
        waste += f" (back three {own_card(side['back_three'])})"
    who = "You" if side["seat"] == you else f"seat {side['seat']}"
    return (
        f"{who}: goof pile {side['goof_pile']} · line {' '.join(map(own_card, side['line']))}"
        f" · waste {waste} · stock {side['stock']}"
    )


def goof_table(view: goof.GoofObservation) -> list[str]:
    """A Goof tick: the piles, what happened last tick, every tableau (the person's last)."""
    you = view["seat"]
    piles = " · ".join(f"p{pile['id']} {pile['top']}" for pile in view["piles"])
    lines = [
        f"-- round {view['round']} · tick {view['tick']} · scores {by_seat(view['scores'], you)}",
        f"Piles: {piles or 'none yet'}",
    ]
    if view["last_tick"]:
        moves = ", ".join(
            f"{seat_label(seat, you)}: {goof_move(action)}" + ("" if took else " (too late)")
            for seat, action, took in view["last_tick"]
            if action != "wait"
        )
        lines.append(f"Last tick: {moves or 'everyone waited'}")
    sides = sorted(view["tableau"], key=lambda side: side["seat"] == you)
    lines.extend(tableau_line(side, you) for side in sides)
    return lines


# -- news: what happened since the seat's last turn ------------------------------


def news(previous: Mapping[str, Any] | None, view: Mapping[str, Any]) -> list[str]:
    """The rounds scored since `previous` (the view of the seat's last turn)."""
    game = view["game"]
    you = view["seat"]
    if game == "goof":
        seen = len(previous["past_rounds"]) if previous else 0
        return [
            goof_round_line(seen + number + 1, past, you)
            for number, past in enumerate(view["past_rounds"][seen:])
        ]
    last = view["last_round"]
    if last is None or (previous is not None and previous["last_round"] == last):
        return []
    if game == "goodge":
        return [goodge_round_line(last, view["scores"], you)]
    return [golden10_round_line(cast(golden10.Golden10RoundEnd, last), you)]


def goodge_round_line(last: goodge.GoodgeRoundEnd, scores: Sequence[int], you: int) -> str:
    """How a Goodge round was scored, in one line."""
    if last["redeal"]:
        return f"Round {last['round']}: everyone passed; the cards are dealt again."
    goodge_seat = seat_label(last["goodge"], you)
    outcome = "made it" if last["made"] else "went down"
    return (
        f"Round {last['round']}: {goodge_seat} bid {last['bid']} and {outcome}"
        f" (took {last['points'][last['goodge']]}); changes "
        f"{by_seat(signed(last['deltas']), you)}; totals {by_seat(scores, you)}"
    )


def golden10_round_line(last: golden10.Golden10RoundEnd, you: int) -> str:
    """How a Golden 10 round was scored, in one line."""
    return (
        f"Round {last['round']}: red points {by_seat(last['red_points'], you)}; yellow 10 to "
        f"{seat_label(last['yellow10'], you)}; changes {by_seat(signed(last['score_change']), you)}"
        f"; totals {by_seat(last['scores'], you)}"
    )


def goof_round_line(number: int, past: goof.GoofPastRound, you: int) -> str:
    """How a Goof round ended and was scored, in one line."""
    caller = past["goof"]
    ended = (
        f"{seat_label(caller, you)} called Goof"
        if caller is not None
        else f"nobody called Goof ({past['end'].replace('_', ' ')})"
    )
    return f"Round {number}: {ended}; round scores {by_seat(signed(past['scores']), you)}"


# -- the legal actions and what the person types ---------------------------------


def numbered(legal: Sequence[str], width: int = WIDTH) -> list[str]:
    """The legal actions numbered from 1, several to a line."""
    cells = [f"{number:>3}) {action}" for number, action in enumerate(legal, 1)]
    cell_width = max(len(cell) for cell in cells) + 2
    per_line = max(1, width // cell_width)
    return [
        "".join(cell.ljust(cell_width) for cell in cells[start : start + per_line]).rstrip()
        for start in range(0, len(cells), per_line)
    ]


@dataclass(frozen=True)
class Move:
    """An entry that names a legal action: `action` is its notation."""

    action: str


@dataclass(frozen=True)
class ListActions:
    """`?`: show the legal actions again."""


@dataclass(frozen=True)
class Refusal:
    """An entry that names no legal action; `reason` says why, in one line."""

    reason: str


Entry = Move | ListActions | Refusal


def notation(text: str) -> str:
    """The action notation a typed text means: case and blanks as the engines write them.

    `7h` -> `7H`, `bid 55` -> `bid:55`, `Trump r` -> `trump:R`, `as > new` -> `AS>new`.
    """
    text = re.sub(r"\s*([:>])\s*", r"\1", text.strip().lower())
    text = re.sub(r"\s+", ":", text)
    card, arrow, target = text.partition(">")
    if arrow:
        return f"{card.upper()}>{target}"
    word, colon, argument = text.partition(":")
    if colon:
        return f"{word}:{argument.upper()}"
    return text if text in ("pass", "turn", "wait") else text.upper()


def read_entry(
    text: str, legal: Sequence[str], view: Mapping[str, Any], default: str | None = None
) -> Entry:
    """What the person's line means: a legal action (by number or text), `?`, or a refusal.

    An empty line is `default` when there is one (Goof's `wait`).
    """
    entry = text.strip()
    if entry == "?":
        return ListActions()
    if not entry:
        if default is not None:
            return Move(default)
        return Refusal(f"type an action's number (1 to {len(legal)}) or its text; ? lists them")
    if entry.isdigit():
        number = int(entry)
        if 1 <= number <= len(legal):
            return Move(legal[number - 1])
        return Refusal(f"there is no action {number}: they are numbered 1 to {len(legal)}")
    action = notation(entry)
    if action in legal:
        return Move(action)
    try:
        games.get(view["game"]).parse_action(action)
    except games.IllegalAction:
        return Refusal(f"{entry!r} is neither an action's number nor its text; ? lists them")
    return Refusal(f"{why_not(action, legal, view)}; ? lists the legal actions")


def why_not(action: str, legal: Sequence[str], view: Mapping[str, Any]) -> str:
    """Why `action`, an action of the game, is not one of `legal` now."""
    game = view["game"]
    if game == "goof":
        card, _, target = action.partition(">")
        where = "start a new pile" if target == "new" else f"go onto pile {target[1:]}"
        return (
            f"{card} cannot {where} now (a card of your goof line or your waste top, "
            "an Ace to a new pile, the next card of its suit onto a pile)"
        )
    phase = view["phase"]
    if action.startswith("bid:"):
        bids = [bid for bid in legal if bid.startswith("bid:")]
        return f"the lowest bid now is {bids[0][4:]}" if bids else f"no bidding now ({phase})"
    if action == "pass" or action.startswith("trump:"):
        return f"{action} is not allowed now ({phase})"
    if action not in view["hand"]:
        return f"you do not hold {action}"
    if phase in ("bid", "trump"):
        return "the bidding is on: bid or pass" if phase == "bid" else "name the trump suit first"
    lead = view.get("lead_suit") or view.get("led_colour")
    if lead:
        return f"{action} does not follow {SUIT_NAMES[game][lead]}, and you can follow it"
    return f"{action} is not allowed now"
