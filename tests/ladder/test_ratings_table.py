"""ladder.plackett_luce: the tournament table, in hand-worked cases and on simulated
tournaments (the order recovered, intervals that cover the truth).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ladder.elo import ELO_PER_NAT, Ranking
from ladder.plackett_luce import plackett_luce, table_line, table_order
from tests.support.ratings import simulate_game, to_elo

# --------------------------------------------------------------------------
# Tournament table: hand-worked cases
# --------------------------------------------------------------------------


def test_bradley_terry_by_hand() -> None:
    # A beats B 3 times of 4. The ML estimate has 3:1 odds: theta_A - theta_B
    # = ln 3, i.e. 400*log10(3) Elo, split evenly around 1500.
    # Information on d = theta_A - theta_B is 4 * 0.75 * 0.25 = 0.75, so
    # var(theta_A) = var(d/2) = 1/3 and se = sqrt(1/3) * 400/ln 10 Elo.
    games: list[Ranking] = [[(0, 1), (1, 2)], [(0, 1), (1, 2)], [(0, 1), (1, 2)], [(1, 1), (0, 2)]]
    fit = plackett_luce(2, games, prior_sd=None)
    a, b = fit.items
    assert a.rating == pytest.approx(1500 + 200 * math.log10(3), abs=1e-6)
    assert b.rating == pytest.approx(1500 - 200 * math.log10(3), abs=1e-6)
    se = math.sqrt(1 / 3) * 400 / math.log(10)
    assert a.se == pytest.approx(se, rel=1e-6)
    assert a.ci_low == pytest.approx(a.rating - 1.959964 * se, rel=1e-6)
    assert a.ci_high == pytest.approx(a.rating + 1.959964 * se, rel=1e-6)
    assert (a.games, b.games) == (4, 4)
    assert fit.converged
    # log L = 3 ln(3/4) + ln(1/4).
    assert fit.log_likelihood == pytest.approx(3 * math.log(0.75) + math.log(0.25))


def test_breslow_tie_likelihood_by_hand() -> None:
    # A two-player tie contributes w1*w2/(w1+w2)^2: at equal strengths 1/4.
    fit = plackett_luce(2, [[(0, 1), (1, 1)]], prior_sd=None)
    assert fit.ratings == pytest.approx([1500.0, 1500.0])
    assert fit.log_likelihood == pytest.approx(-2 * math.log(2))
    # Three players, two tied for first: w0*w1/(w0+w1+w2)^2 * (w2/w2) ...
    # and the winner over a tied last pair: w0/(sum) * w1*w2/(w1+w2)^2.
    # At theta = 0 these are 1/9 and 1/3 * 1/4; check the likelihood through a
    # fit whose optimum is theta = 0 by symmetry (each item in each role).
    games: list[Ranking] = []
    for a, b, c in [(0, 1, 2), (1, 2, 0), (2, 0, 1)]:
        games.append([(a, 1), (b, 1), (c, 3)])
        games.append([(a, 1), (b, 2), (c, 2)])
    fit = plackett_luce(3, games, prior_sd=None)
    assert fit.ratings == pytest.approx([1500.0] * 3, abs=1e-6)
    assert fit.log_likelihood == pytest.approx(3 * math.log(1 / 9) + 3 * math.log(1 / 12))


def test_table_shape_and_centring() -> None:
    rng = np.random.default_rng(1)
    games = [simulate_game(rng, [0.5, 0.0, -0.5, 0.2], [0, 1, 2, 3]) for _ in range(50)]
    fit = plackett_luce(4, games)
    assert len(fit.items) == 4
    assert min(fit.ratings) < 1500.0 < max(fit.ratings)
    for item in fit.items:
        assert item.ci_low < item.rating < item.ci_high
        assert item.games == 50
    wider = plackett_luce(4, games, confidence=0.99)
    assert (
        wider.items[0].ci_high - wider.items[0].ci_low > fit.items[0].ci_high - fit.items[0].ci_low
    )


def test_entrants_the_games_cannot_measure_get_a_bound_or_nothing() -> None:
    # Item 0 wins every game: no finite estimate exists, only a lower bound.
    # Item 3 never played: nothing at all. Neither depends on the prior.
    games: list[Ranking] = [[(0, 1), (1, 2), (2, 3)], [(0, 1), (2, 2), (1, 3)]] * 5
    fit = plackett_luce(4, games, clusters=list(range(10)))
    top, one, two, absent = fit.items
    assert (top.standing, two.standing, absent.standing) == ("above", "measured", "unmeasured")
    assert top.reason == "ahead of every measured entrant in all 10 of its games with them"
    assert top.ci_low == top.rating > max(one.rating, two.rating) and top.ci_high == math.inf
    assert absent.reason == "no games" and math.isnan(absent.rating)
    assert fit.weights[0] == fit.weights[3] == 0.0
    # The bound follows the games, not the prior: the prior_sd once drove the rating.
    for prior_sd in (500.0, 2000.0, None):
        other = plackett_luce(4, games, prior_sd=prior_sd, clusters=list(range(10)))
        assert other.items[0].rating == pytest.approx(top.rating, abs=1.0)
    # The bound is where the record had a 5% chance: prod over games of the
    # chance w / (w + w1 + w2) of finishing first (one game per cluster).
    w = [math.exp((rating - 1500) / ELO_PER_NAT) for rating in fit.ratings[:3]]
    assert (w[0] / sum(w)) ** 10 == pytest.approx(0.05, rel=1e-6)
    # Rotations of one deal may depend on each other in any way: a cluster
    # counts as its least likely game, so one deal of ten games bounds less.
    deal = plackett_luce(4, games, clusters=[0] * 10)
    assert deal.items[0].rating < top.rating
    # An item that only ever finished last gets an upper bound; one tie with
    # item 0 makes it measured.
    fit = plackett_luce(3, [*games, [(1, 1), (0, 1)]], prior_sd=None)
    assert all(item.standing == "measured" for item in fit.items)
    assert fit.ratings[0] == max(fit.ratings)
    last = plackett_luce(3, [[(0, 1), (1, 2), (2, 3)], [(1, 1), (0, 2), (2, 3)]])
    assert last.items[2].standing == "below" and last.items[2].ci_low == -math.inf
    assert last.items[2].reason == "behind every measured entrant in all 2 of its games with them"
    # Two items that never met: the second group has no comparison path.
    apart = plackett_luce(4, [[(0, 1), (1, 2)], [(1, 1), (0, 2)], [(2, 1), (3, 2)]])
    assert [(item.standing, item.reason) for item in apart.items[2:]] == [
        ("unmeasured", "no games against the measured entrants")
    ] * 2


def test_table_lines_say_what_is_measured() -> None:
    games: list[Ranking] = [[(0, 1), (1, 2), (2, 3)], [(1, 1), (0, 2), (2, 3)]] * 3
    fit = plackett_luce(4, games, clusters=[0, 0, 1, 1, 2, 2])
    lines = [table_line(item, 2) for item in sorted(fit.items, key=table_order)]
    assert [line["measured"] for line in lines] == [True, True, False, False]
    below, absent = lines[2:]
    assert below["bound"] == "below" and below["ci_low"] is None
    assert below["rating"] == below["ci_high"] is not None
    assert absent == {
        "rating": None,
        "ci_low": None,
        "ci_high": None,
        "games": 0,
        "measured": False,
        "bound": None,
        "reason": "no games",
    }
    assert lines[0]["bound"] is None and lines[0]["reason"] is None


def test_degenerate_inputs() -> None:
    assert plackett_luce(0, []).items == ()
    fit = plackett_luce(1, [[(0, 1)]])
    assert fit.ratings == [1500.0]
    # A game with one participant is no game.
    fit = plackett_luce(2, [[(0, 1)], [(0, 1), (1, 2)]])
    assert [item.games for item in fit.items] == [1, 1]
    with pytest.raises(ValueError, match="outside"):
        plackett_luce(2, [[(0, 1), (2, 2)]])
    with pytest.raises(ValueError, match="twice"):
        plackett_luce(2, [[(0, 1), (0, 2)]])
    with pytest.raises(ValueError):
        plackett_luce(2, [], prior_sd=0.0)
    with pytest.raises(ValueError):
        plackett_luce(2, [], confidence=1.0)


# --------------------------------------------------------------------------
# Tournament table on simulated tournaments
# --------------------------------------------------------------------------


def test_round_robin_recovers_order() -> None:
    rng = np.random.default_rng(3)
    true_elo = [1500 + step for step in (-375, -225, -75, 75, 225, 375)]
    theta = [(elo - 1500) / ELO_PER_NAT for elo in true_elo]
    games = [
        simulate_game(rng, theta, [a, b])
        for a in range(6)
        for b in range(a + 1, 6)
        for _ in range(60)
    ]
    fit = plackett_luce(6, games)
    assert list(np.argsort(fit.ratings)) == list(range(6))
    shift = np.mean(fit.ratings) - 1500  # the truth on the table's centre
    for truth, item in zip(true_elo, fit.items, strict=True):
        assert item.ci_low < truth + shift < item.ci_high
        assert item.games == 5 * 60


def test_a_hopeless_entrant_does_not_blur_the_others() -> None:
    # Entrant 0 is 1300 points below three close ones and nearly always
    # last: the data hardly measure it, and the prior alone holds its
    # rating. The others' intervals must stay as narrow as without it (with
    # the plain mean as the centre they were ten times wider).
    rng = np.random.default_rng(5)
    close = [0.0, 0.0, 60 / ELO_PER_NAT]
    theta = [-1300 / ELO_PER_NAT, *close]
    games = [simulate_game(rng, theta, [0, 1, 2, 3]) for _ in range(400)]
    with_it = plackett_luce(4, games)
    without = plackett_luce(
        3, [[(item - 1, rank) for item, rank in game if item] for game in games]
    )
    assert with_it.items[0].se > 5 * with_it.items[1].se
    for kept, alone in zip(with_it.items[1:], without.items, strict=True):
        assert kept.se == pytest.approx(alone.se, rel=0.25)
    differences = np.diff(with_it.ratings[1:])
    assert differences == pytest.approx(np.diff(without.ratings), abs=2.0)


def test_confidence_intervals_cover_about_95_percent() -> None:
    # 100 tournaments of 30 five-player games; the truth is centred, as the
    # table is, so each interval should hold its true rating 95% of the time.
    rng = np.random.default_rng(99)
    theta = [1.0, 0.5, 0.0, -0.5, -1.0]
    truth = to_elo(theta)
    covered = total = 0
    for _ in range(100):
        games = [simulate_game(rng, theta, [0, 1, 2, 3, 4]) for _ in range(30)]
        fit = plackett_luce(5, games)
        for true_rating, item in zip(truth, fit.items, strict=True):
            covered += item.ci_low <= true_rating <= item.ci_high
            total += 1
    assert 0.91 <= covered / total <= 0.99, covered / total
