"""The protocol's suit and colour enums and the games' notation letters, both ways.

One table each, read by the referee when it builds messages and by the SDK
when it turns them back into the engines' observations.
"""

from __future__ import annotations

from cardarena_api.v1 import cards_pb2 as cards

GOODGE_SUITS = {
    "S": cards.GOODGE_SUIT_SPADES,
    "D": cards.GOODGE_SUIT_DIAMONDS,
    "R": cards.GOODGE_SUIT_STARS,
    "H": cards.GOODGE_SUIT_HEARTS,
    "C": cards.GOODGE_SUIT_CLUBS,
}
GOLDEN10_COLOURS = {
    "R": cards.GOLDEN10_COLOUR_RED,
    "Y": cards.GOLDEN10_COLOUR_YELLOW,
    "B": cards.GOLDEN10_COLOUR_BLACK,
    "G": cards.GOLDEN10_COLOUR_GREEN,
}
GOOF_SUITS = {
    "S": cards.GOOF_SUIT_SPADES,
    "H": cards.GOOF_SUIT_HEARTS,
    "D": cards.GOOF_SUIT_DIAMONDS,
    "C": cards.GOOF_SUIT_CLUBS,
}

GOODGE_LETTERS = {number: letter for letter, number in GOODGE_SUITS.items()}
GOLDEN10_LETTERS = {number: letter for letter, number in GOLDEN10_COLOURS.items()}
GOOF_LETTERS = {number: letter for letter, number in GOOF_SUITS.items()}
