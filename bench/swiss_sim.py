"""Swiss or round robin for a large field: how well each orders it in a few rounds, and
games until the best bot's interval is clear.

A field of bots of known strength plays a tournament round by round; every
round seats every entrant once at tables of `seats` (the field is a multiple
of it), and each table plays one duplicate deal, every rotation of its seats
(`bench.coverage.simulate_deal`: a Plackett-Luce draw plus the luck of the
deal), as tournaments play. After each round the tournament table is fitted
as `ladder.tables` fits it (`ladder.plackett_luce.plackett_luce`, the deals
as clusters). After `ORDER_ROUNDS` rounds, the table's order is measured
against the truth (Kendall's tau, the true top 10's share of its top 10);
the run goes on until the true best bot's 95% interval is clear of the true
second's (its low end above the other's high end).

Formats:

* "swiss": `ladder.swiss.seat_round`, as a Swiss tournament seats its
  rounds: the first by a seeded draw, every later one by the table so far
  (the fit's order, `ladder.plackett_luce.table_order`), the fewest repeat
  meetings.
* "round_robin": the balanced round robin `arena tournament create` plans
  (`ladder.pairing.plan_round_robin`), its matches taken a round's worth
  (bots / seats) at a time in the order planned; the plan is greedy, fewest
  matches first, so every such prefix is balanced (one match apart at most).

The field's true ratings are normal around 1500 with the ladder simulation's
spread, and the best is then set `TOP_GAP` Elo above the second: a best bot
that stands out. Left to the draw, the first of 64 is 114 Elo ahead of the
second on average at a spread of 300 (the median 85), and at 100 Elo apart
neither format had most fields clear within 30 rounds (120 games per bot);
`bench.ladder_sim`'s near-ties, 25 Elo apart, would need intervals of
about +/-12 Elo, thousands of games each, which no tournament plays.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from bench.coverage import simulate_deal
from bench.order_measures import kendall_tau, top_share
from ladder.elo import ELO_PER_NAT, Ranking
from ladder.pairing import plan_round_robin
from ladder.plackett_luce import PLFit, plackett_luce, table_order
from ladder.swiss import meetings, round_rng, seat_round, standing_order

FORMATS = ("swiss", "round_robin")
BOTS = 64
"""The field of the issue's question."""
CAP_ROUNDS = 40
"""Rounds a run plays at most before it counts as never clear."""
TOP_GAP = 200.0
"""Elo between the best bot and the second (see the module's docstring)."""
ORDER_ROUNDS = 5
"""Rounds after which the table's order is measured: a Swiss tournament's few rounds."""
TOP = 10
"""The true best bots whose share of the table's best `TOP` is measured."""
SCREEN = 0.8
"""The share of the model's interval widths a table's intervals are screened at (`near_clear`)."""


def cleared(fit: PLFit, best: int, second: int) -> bool:
    """Whether the best bot's interval lies above the second's, clear of it."""
    return fit.items[best].ci_low > fit.items[second].ci_high


def near_clear(fit: PLFit, best: int, second: int) -> bool:
    """Whether the fit without clusters (games as independent) puts the two bots far
    enough apart that the table's own intervals might be clear.

    The table's cluster jackknife is the costly part of a fit (0.75 s for 480 deals of
    64 bots, the plain fit 0.05 s), so it is only run past this screen. Duplicate deals
    narrow the model's intervals (their rotations cancel luck: a variance ratio of about
    0.76, `bench.coverage`); a screen at `SCREEN` of the model's width lets through
    any table whose errors are up to that share of the model's. A bot the games only
    bound (one that won every game, say) is left to the table itself.
    """
    top, next_ = fit.items[best], fit.items[second]
    if top.standing != "measured" or next_.standing != "measured":
        return True
    return top.rating - next_.rating > SCREEN * (
        top.ci_high - top.rating + next_.ci_high - next_.rating
    )


@dataclass(frozen=True)
class TournamentRun:
    """What one tournament over one field showed.

    `kendall_tau` and `top10_share`: the table's order after `ORDER_ROUNDS`
    rounds against the truth; `games_to_clear`: games per bot until the true
    best bot's interval was clear of the second's, None if not within
    `CAP_ROUNDS` rounds.
    """

    kendall_tau: float
    top10_share: float
    games_to_clear: float | None


def play_tournament(
    form: str, bots: int, seats: int, spread: float, luck: float, seed: tuple[int, int]
) -> TournamentRun:
    """A tournament of `form` over a new field, measured (`TournamentRun`)."""
    rng = np.random.default_rng([*seed, 3])
    theta = rng.normal(0.0, spread / ELO_PER_NAT, size=bots)
    second, best = (int(bot) for bot in np.argsort(theta)[-2:])
    theta[best] = theta[second] + TOP_GAP / ELO_PER_NAT
    entrants = [str(bot) for bot in range(bots)]
    tournament_seed = int(rng.integers(2**31))
    per_round = bots // seats
    planned: list[tuple[str, ...]] = []
    if form == "round_robin":
        planned = plan_round_robin(entrants, seats, tournament_seed, per_round * CAP_ROUNDS)
    met: Counter[frozenset[str]] = Counter()
    byes: Counter[str] = Counter()
    rankings: list[Ranking] = []
    deals: list[int] = []
    standing = standing_order(entrants, dict.fromkeys(entrants, 0.0), round_rng(tournament_seed, 0))
    order: tuple[float, float] | None = None
    clear: float | None = None
    for number in range(CAP_ROUNDS):
        if form == "swiss":
            seating = seat_round(standing, seats, met, byes, round_rng(tournament_seed, number + 1))
            tables = list(seating.tables)
            byes.update(seating.byes)
        else:
            tables = planned[number * per_round : (number + 1) * per_round]
        met.update(meetings(tables))
        for names in tables:
            table = [int(bot) for bot in names]
            games = simulate_deal(rng, theta, table, luck)
            # One cluster per deal: its rotations share the luck of the cards.
            deals += [len(rankings) // seats] * len(games)
            rankings += games
        fit = plackett_luce(bots, rankings)
        standing = sorted(entrants, key=lambda bot: table_order(fit.items[int(bot)]))
        if number + 1 == ORDER_ROUNDS:
            # The table's places as scores: the first the highest.
            scores = np.empty(bots)
            scores[[int(bot) for bot in standing]] = -np.arange(bots, dtype=float)
            order = (kendall_tau(scores, theta), top_share(scores, theta, TOP))
        if (
            clear is None
            and near_clear(fit, best, second)
            and cleared(plackett_luce(bots, rankings, clusters=deals), best, second)
        ):
            clear = len(rankings) * seats / bots
        if order is not None and clear is not None:
            break
    assert order is not None, "CAP_ROUNDS is at least ORDER_ROUNDS"
    return TournamentRun(*order, clear)
