"""The live rating of the ladder, and the Elo scale all its ratings are on: pure functions, no I/O.

`elo_update` -- after every match each player's rating moves by a
multiplayer Elo step: the game is split into all pairs of players, each
pair scored 1 / 0.5 / 0 by rank, and the step is scaled by 1/(N-1) so a
four-player game moves a rating about as much as one two-player game.

Ratings are on the Elo scale throughout (here, in `ladder.plackett_luce`
and in `ladder.pairwise`): a difference of D points means the stronger side
is expected to score 1/(1+10^(-D/400)) against the weaker.

A game result is given as a `Ranking`: one `(item, rank)` pair per
participant, rank 1 best, equal ranks tied (what `games.core.rank_scores`
produces). Items are numbered 0..n_items-1 by the caller.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "ELO_PER_NAT",
    "ELO_START",
    "PROVISIONAL_SE",
    "EloConfig",
    "Ranking",
    "elo_update",
    "expected_score",
    "is_provisional",
    "uncertain",
]


Ranking = Sequence[tuple[int, int]]
"""One game's result: `(item, rank)` per participant; rank 1 is best, equal ranks tie."""

ELO_START = 1500.0
"""Where every rating starts, and the centre of the tournament table."""

ELO_PER_NAT = 400.0 / math.log(10.0)
"""Elo points per unit of log-strength: exp(theta) odds equal 10^(elo/400) odds."""

PROVISIONAL_SE = 100.0
"""A standings rating whose standard error is above this (Elo) is provisional."""


@dataclass(frozen=True)
class EloConfig:
    """Parameters of the live multiplayer Elo.

    `k` is the step of an established player, `provisional_k` the larger step
    of a player with fewer than `provisional_games` games, so a new bot
    reaches its level quickly and an established one is not shaken by noise.
    """

    start: float = ELO_START
    k: float = 32.0
    provisional_k: float = 64.0
    provisional_games: int = 20


def expected_score(rating: float, opponent: float) -> float:
    """The expected score (win 1, draw 0.5, loss 0) of `rating` against `opponent`."""
    return 1.0 / (1.0 + math.pow(10.0, (opponent - rating) / 400.0))


def is_provisional(games_played: int, config: EloConfig = EloConfig()) -> bool:
    """Whether a player with `games_played` finished games is still provisional."""
    return games_played < config.provisional_games


def uncertain(se: float | None) -> bool:
    """Whether a standings rating is too uncertain to rank its bot with confidence (shown as
    provisional): its standard error is above `PROVISIONAL_SE`, or it has none yet."""
    return se is None or se > PROVISIONAL_SE


def elo_update(
    ratings: Sequence[float],
    ranks: Sequence[int],
    games_played: Sequence[int],
    config: EloConfig = EloConfig(),
) -> list[float]:
    """The rating changes (deltas, not new ratings) of one game's players.

    The three sequences run over the game's players in the same order:
    their ratings before the game, their ranks in it (1 best, equal ranks
    tie) and the games each had finished before this one. Every pair of
    players (i, j) scores S_ij = 1, 0.5 or 0 for i by rank, against the
    expectation E_ij = 1/(1+10^((R_j-R_i)/400)), and

        delta_i = K_i/(N-1) * sum_{j != i} (S_ij - E_ij)

    with K_i = `provisional_k` while player i has fewer than
    `provisional_games` games, else `k`. When all K_i are equal the deltas
    sum to zero, since S_ij + S_ji = E_ij + E_ji = 1.

    Deltas are returned rather than new ratings because the store records
    each match's rating changes alongside the match.
    """
    n = len(ratings)
    if len(ranks) != n or len(games_played) != n:
        raise ValueError("ratings, ranks and games_played must have the same length")
    if n < 2:
        # A game with nobody to beat says nothing about strength.
        return [0.0] * n
    deltas = []
    for i in range(n):
        total = 0.0
        for j in range(n):
            if j == i:
                continue
            if ranks[i] < ranks[j]:
                score = 1.0
            elif ranks[i] == ranks[j]:
                score = 0.5
            else:
                score = 0.0
            total += score - expected_score(ratings[i], ratings[j])
        k = config.provisional_k if is_provisional(games_played[i], config) else config.k
        deltas.append(k / (n - 1) * total)
    return deltas
