"""Who sits at which table on the continuous ladder: pure functions, no I/O.

Both rules take the bots free to play now and return disjoint tables of
`size` bot ids; the randomness comes from the `random.Random` passed in, and
the time from the caller.

`fewest_games_tables` -- the ladder's first rule (`ladder.continuous`): the
bots with the fewest rated games first, whatever their ratings. Fair, but in
a large field the best bots play many games against bots far below them,
whose result was all but certain.

`information_tables` -- tables that teach more, as Halite II's matchmaking
does (`python -m bench.ladder_sim` measures the difference):

1. Seeds. Every free bot is a seed in turn, in this order: first the
   overdue ones (never played, or not for `overdue_s`), longest waiting
   first; then the others by the uncertainty of their rating, largest
   first (a tie: longer wait first, then a key from the `random.Random`).
   So a new or doubtful bot is placed first, and no bot waits behind them
   for long.
2. Fill. A seed not yet seated draws its `size - 1` table mates at random
   from the `NEAR * (size - 1)` unseated bots nearest its rating within its
   window: |rating - seed's rating| <= `window_elo`, doubled for every
   `window_doubling_s` the seed has waited since it last played, and
   unbounded once it is overdue. A game between bots of like strength says
   most about their order; the draw keeps the tables mixing (always the
   very nearest would pit the same few bots against each other, and say
   little of how they stand against the rest); the widening window lets an
   outlier, nobody's near neighbour, still play every `overdue_s` or so.
3. Authors. A table never seats two bots of one author (author None: a bot
   of its own): of each other author only the nearest bot is a candidate.
4. Repeats. A draw that makes a table of `recent` is passed over for
   another from the same near bots; only when every draw is recent is one
   played again (a field as small as the table has nothing else to play).
5. Waiting. A seed whose window holds too few bots forms no table this
   time; its bots may still be table mates of later seeds.

Measured against the alternatives (`python -m bench.ladder_sim`, 128 bots, 4
seats, 16 fields, seed 1; Kendall tau of the fitted standings at 10 and 20
games per bot; a change as small as one extra refit moved tau at 10 by
0.008, so smaller differences are noise): this rule 0.783 and 0.843; its
draw from the 3 (4) times as many nearest 0.770 (0.777) and 0.841 (0.844);
random tables 0.762 and 0.833; mates drawn at random within 150 (300) Elo
of the seed 0.771 (0.768) and 0.834 (0.836), or within 1 (2) times the
error of the two bots' difference, where their intervals overlap, 0.767
(0.763) and 0.839 (0.842), or weighted by that overlap 0.771 and 0.840;
mates chosen greedily by the Fisher information of the table weighted by
the bots' posterior variances (E[p(1 - p)] times the sum of the two
variances, per pair) 0.771 and 0.836, drawn in proportion to its fourth
power 0.766 and 0.838; a table mixing the local and the global, on a
machine where this rule measured 0.770 and 0.847 in the same run, the seed
with one of its 2 nearest and two bots drawn from the whole field 0.760 and
0.830, with two of its 4 nearest and one from the field 0.770 and 0.837; on the
same machine, the draw that meets the fewest pairs of bots met in the recent
tables again (more mixing, still near), from the 2, 3, 4, 6 and 8 times as
many nearest, 0.769, 0.775, 0.777, 0.776 and 0.771 at 10 games (over 64
fields, from 4 times as many, 0.778 against this rule's 0.777). None
reached today's pairing and live Elo at 20 games (0.800), and none can by
much: a game between equals carries 1.54
times the Fisher information of one between random bots of this field
(mean p(1 - p) 0.162 against 0.25, at the luck's flattening 0.81), and the
fitted standings of today's random-like tables reach 0.800 at about 16
games, 1.6 times 10. Nor does knowing the truth help: seated by their true
ratings, the mates drawn from the 6 (12) nearest, the fit's tau at 10 games
was 0.10 (0.21); drawn within 200 (400) true Elo, 0.27 (0.65), and 0.66
within 200 with the prior fixed at 300 instead of learnt. Games among near
equals are coin flips that leave the field's order across windows unknown
(and the learnt spread too narrow), so the draw must keep mixing.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "NEAR",
    "Candidate",
    "MatchmakingConfig",
    "fewest_games_tables",
    "information_tables",
]

NEAR = 2
"""A seed's table mates are drawn from this many times as many of the bots nearest it."""


@dataclass(frozen=True)
class Candidate:
    """A bot free to play now.

    `rating` and `uncertainty` are on the Elo scale (the uncertainty a
    standard error); `last_played` is when it last played, in the caller's
    seconds (None: never; `ladder.continuous` gives its last match's end);
    `author` is its author's id (None: a bot with no author shares a table
    with anyone).
    """

    bot_id: str
    rating: float
    uncertainty: float
    last_played: float | None
    author: str | None = None


@dataclass(frozen=True)
class MatchmakingConfig:
    """How far a table may reach in rating, and when a wait turns a bot overdue.

    The defaults suit the ladder's pace: a tick every 30 s, matches of a few
    minutes. A bot waits at most about `overdue_s` plus a match between its
    games, so `overdue_s` of about two matches keeps every bot at half the
    mean games or more (`tests/ladder/test_matchmaking.py`).
    """

    window_elo: float = 100.0
    window_doubling_s: float = 60.0
    overdue_s: float = 600.0


def fewest_games_tables(
    eligible: Sequence[str], played: Mapping[str, int], size: int, rng: random.Random
) -> list[tuple[str, ...]]:
    """The ladder's first rule: fewest rated games first, `size` at a time.

    `eligible` is taken in the order given (the caller sorts it, so the same
    bots and `rng` give the same tables); `played` holds each bot's rated
    games (missing: none). A random key per bot breaks ties of games, and
    each table is seated in a random order; the bots left over when fewer
    than `size` remain wait.
    """
    keys = {bot: rng.random() for bot in eligible}
    order = sorted(eligible, key=lambda bot: (played.get(bot, 0), keys[bot]))
    tables = []
    for start in range(0, len(order) - size + 1, size):
        group = order[start : start + size]
        rng.shuffle(group)
        tables.append(tuple(group))
    return tables


def _waited(candidate: Candidate, now: float) -> float:
    """Seconds since the candidate last played (infinite if it never did)."""
    return math.inf if candidate.last_played is None else now - candidate.last_played


def _window(seed: Candidate, now: float, config: MatchmakingConfig) -> float:
    """How far from the seed's rating its table may reach, in Elo."""
    waited = _waited(seed, now)
    if waited >= config.overdue_s:
        return math.inf
    # Capped: past 2^512 the window reaches any rating, and 2^1024 would overflow.
    doublings = min(max(waited, 0.0) / config.window_doubling_s, 512.0)
    return config.window_elo * math.pow(2.0, doublings)


def _seed_order(
    candidates: Sequence[Candidate], now: float, rng: random.Random, config: MatchmakingConfig
) -> list[Candidate]:
    """The candidates in the order they become seeds (rule 1 of the module's docstring)."""
    keys = {candidate.bot_id: rng.random() for candidate in candidates}

    def priority(candidate: Candidate) -> tuple[bool, float, float, float]:
        waited = _waited(candidate, now)
        overdue = waited >= config.overdue_s
        first = -waited if overdue else -candidate.uncertainty
        return not overdue, first, -waited, keys[candidate.bot_id]

    return sorted(candidates, key=priority)


def _table_mates(
    seed: Candidate,
    unseated: Sequence[Candidate],
    needed: int,
    recent: Collection[frozenset[str]],
    window: float,
    rng: random.Random,
) -> tuple[Candidate, ...] | None:
    """The seed's table mates (rules 2 to 4); None if too few are near."""
    near: list[Candidate] = []
    authors = {seed.author}
    # `unseated` is in seed order, so a tie in distance goes to the more uncertain bot.
    for candidate in sorted(unseated, key=lambda c: abs(c.rating - seed.rating)):
        if abs(candidate.rating - seed.rating) > window:
            break
        if candidate.author is not None and candidate.author in authors:
            continue
        authors.add(candidate.author)
        near.append(candidate)
        if len(near) == NEAR * needed:
            break
    if len(near) < needed:
        return None
    draws = list(itertools.combinations(near, needed))
    rng.shuffle(draws)
    for draw in draws:
        if frozenset([seed.bot_id, *(c.bot_id for c in draw)]) not in recent:
            return draw
    return draws[0]


def information_tables(
    candidates: Sequence[Candidate],
    size: int,
    recent: Collection[frozenset[str]],
    now: float,
    rng: random.Random,
    config: MatchmakingConfig = MatchmakingConfig(),
) -> list[tuple[str, ...]]:
    """Disjoint tables of `size` bots that teach more (the rule of the module's docstring).

    `recent` holds the tables recently played, as sets of bot ids. Each
    table is seated in a random order, seed first before the shuffle; the
    tables come in the order their seeds were taken.
    """
    if size < 2:
        raise ValueError("a table needs at least two seats")
    if len({candidate.bot_id for candidate in candidates}) != len(candidates):
        raise ValueError("a bot is a candidate once")
    order = _seed_order(candidates, now, rng, config)
    seated: set[str] = set()
    tables: list[tuple[str, ...]] = []
    for seed in order:
        if seed.bot_id in seated:
            continue
        unseated = [c for c in order if c.bot_id not in seated and c.bot_id != seed.bot_id]
        mates = _table_mates(seed, unseated, size - 1, recent, _window(seed, now, config), rng)
        if mates is None:
            continue
        table = [seed.bot_id, *(c.bot_id for c in mates)]
        seated.update(table)
        rng.shuffle(table)
        tables.append(tuple(table))
    return tables
