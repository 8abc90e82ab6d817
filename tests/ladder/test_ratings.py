"""ladder.ratings: live Elo, the Plackett-Luce tournament table and the A-vs-B tests.

The tournament table is checked against independent implementations: choix
(a third-party Plackett-Luce fitter) on tie-free data, and, with ties, an MM
algorithm and a Nelder-Mead fit of the Breslow likelihood written here from
the formula, sharing no code with the module.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

import choix
import numpy as np
import numpy.typing as npt
import pytest
import scipy.optimize  # type: ignore[import-untyped]
import scipy.stats  # type: ignore[import-untyped]
from hypothesis import given
from hypothesis import strategies as st

from ladder import plackett_luce as ratings
from ladder.elo import ELO_PER_NAT, EloConfig, Ranking, elo_update, expected_score, is_provisional
from ladder.pairwise import likelihood_of_superiority, pairwise_record, sprt
from ladder.plackett_luce import (
    PLFit,
    duplicate_variance_ratios,
    plackett_luce,
    table_line,
    table_order,
)

# Players with at least this many games use the ordinary K of 32.
ESTABLISHED = 100

# --------------------------------------------------------------------------
# Simulation helpers
# --------------------------------------------------------------------------


def simulate_game(
    rng: np.random.Generator,
    theta: Sequence[float] | npt.NDArray[np.float64],
    players: Sequence[int],
    tie_prob: float = 0.0,
) -> list[tuple[int, int]]:
    """One Plackett-Luce game among `players`, as (item, rank) pairs.

    Sorting theta + Gumbel noise draws a ranking from Plackett-Luce exactly.
    With `tie_prob`, each place is merged into the one above it with that
    chance, which makes ties (competition ranks: 1 + number strictly better).
    """
    noisy = [theta[p] + rng.gumbel() for p in players]
    order = [players[i] for i in np.argsort(noisy)[::-1]]
    result = []
    rank = 1
    for position, item in enumerate(order):
        if position > 0 and rng.random() >= tie_prob:
            rank = position + 1
        result.append((item, rank))
    return result


def to_elo(theta: Sequence[float] | npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Log-strengths on the Elo scale, their plain mean at 1500."""
    centred = np.asarray(theta, dtype=np.float64) - np.mean(theta)
    return np.asarray(1500.0 + ELO_PER_NAT * centred, dtype=np.float64)


def mean_centred(fit: PLFit) -> npt.NDArray[np.float64]:
    """The fit's ratings moved so that their plain mean is 1500, like `to_elo`.

    The table centres on an information-weighted mean; only differences are
    identified, so comparisons with other fits use the same centre.
    """
    ratings = np.asarray(fit.ratings, dtype=np.float64)
    return np.asarray(ratings - ratings.mean() + 1500.0, dtype=np.float64)


# --------------------------------------------------------------------------
# Live multiplayer Elo
# --------------------------------------------------------------------------


def test_expected_score() -> None:
    assert expected_score(1500, 1500) == 0.5
    assert expected_score(1900, 1500) == pytest.approx(10 / 11)
    assert expected_score(1500, 1900) == pytest.approx(1 / 11)


def test_two_equal_players_win_is_plus_minus_16() -> None:
    # K = 32, N - 1 = 1: the winner gets 32 * (1 - 0.5) = +16.
    deltas = elo_update([1500, 1500], [1, 2], [ESTABLISHED, ESTABLISHED])
    assert deltas == pytest.approx([16.0, -16.0])


def test_four_players_distinct_ratings_by_hand() -> None:
    # Ratings A 1800, B 1600, C 1400, D 1200; finish B, A, D, C.
    # Expected scores for a rating gap of 200 / 400 / 600:
    #   E200 = 1/(1+10^-0.5) = 0.7597469, E400 = 1/(1+10^-1) = 0.9090909,
    #   E600 = 1/(1+10^-1.5) = 0.9693466.
    # A: vs B 0-E200, vs C 1-E400, vs D 1-E600
    #    = -0.7597469 + 0.0909091 + 0.0306534 = -0.6381844
    # B: vs A 1-(1-E200), vs C 1-E200, vs D 1-E400
    #    = 0.7597469 + 0.2402531 + 0.0909091 = 1.0909091
    # C: vs A 0-(1-E400), vs B 0-(1-E200), vs D 0-E200
    #    = -0.0909091 - 0.2402531 - 0.7597469 = -1.0909091
    # D: vs A 0-(1-E600), vs B 0-(1-E400), vs C 1-(1-E200)
    #    = -0.0306534 - 0.0909091 + 0.7597469 = 0.6381844
    # Each sum times K/(N-1) = 32/3.
    deltas = elo_update([1800, 1600, 1400, 1200], [2, 1, 4, 3], [ESTABLISHED] * 4)
    expected = [32 / 3 * s for s in (-0.6381844, 1.0909091, -1.0909091, 0.6381844)]
    assert deltas == pytest.approx(expected, abs=1e-5)
    assert deltas == pytest.approx([-6.807300, 11.636364, -11.636364, 6.807300], abs=1e-5)


def test_ties_count_half() -> None:
    # Two equal players drawing: 0.5 - 0.5 = 0 each.
    assert elo_update([1500, 1500], [1, 1], [ESTABLISHED] * 2) == pytest.approx([0.0, 0.0])
    # Three equal players, A and B tie for first, C last. K/(N-1) = 16.
    # A: vs B 0.5-0.5, vs C 1-0.5 -> 16 * 0.5 = +8 (B likewise);
    # C: two losses at 0.5 expected -> 16 * -1 = -16.
    deltas = elo_update([1500, 1500, 1500], [1, 1, 3], [ESTABLISHED] * 3)
    assert deltas == pytest.approx([8.0, 8.0, -16.0])
    # A draw against a stronger player gains: 32 * (0.5 - 1/11).
    deltas = elo_update([1500, 1900], [1, 1], [ESTABLISHED] * 2)
    assert deltas == pytest.approx([32 * (0.5 - 1 / 11), -32 * (0.5 - 1 / 11)])


def test_provisional_player_moves_more() -> None:
    config = EloConfig()
    assert is_provisional(19, config)
    assert not is_provisional(20, config)
    # The new player (5 games) wins: K = 64 -> +32; the established one loses 16.
    deltas = elo_update([1500, 1500], [1, 2], [5, ESTABLISHED], config)
    assert deltas == pytest.approx([32.0, -16.0])
    # On the 20th game the player is established.
    deltas = elo_update([1500, 1500], [1, 2], [20, ESTABLISHED], config)
    assert deltas == pytest.approx([16.0, -16.0])


def test_custom_config() -> None:
    config = EloConfig(start=1000.0, k=10.0, provisional_k=40.0, provisional_games=3)
    assert config.start == 1000.0
    deltas = elo_update([1000, 1000, 1000], [3, 2, 1], [0, 3, 3], config)
    # K/(N-1): 20 for the provisional player, 5 for the others.
    assert deltas == pytest.approx([20 * -1.0, 5 * 0.0, 5 * 1.0])


def test_single_player_and_bad_lengths() -> None:
    assert elo_update([1500], [1], [0]) == [0.0]
    with pytest.raises(ValueError):
        elo_update([1500, 1500], [1], [0, 0])


@given(
    st.lists(
        st.tuples(st.floats(800, 2400), st.integers(1, 4)),
        min_size=2,
        max_size=6,
    )
)
def test_deltas_sum_to_zero_when_all_k_equal(players: list[tuple[float, int]]) -> None:
    ratings = [rating for rating, _rank in players]
    ranks = [rank for _rating, rank in players]
    deltas = elo_update(ratings, ranks, [ESTABLISHED] * len(players))
    assert sum(deltas) == pytest.approx(0.0, abs=1e-9)


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
# Tournament table against independent implementations
# --------------------------------------------------------------------------


def choix_data(games: Sequence[Ranking]) -> list[tuple[int, ...]]:
    """Tie-free (item, rank) games as choix rankings (items best first)."""
    return [tuple(item for item, _rank in sorted(game, key=lambda pair: pair[1])) for game in games]


def test_matches_choix_without_prior() -> None:
    rng = np.random.default_rng(2024)
    theta = rng.normal(0.0, 1.0, size=8)
    games = [
        simulate_game(rng, theta, list(rng.choice(8, size=4, replace=False))) for _ in range(300)
    ]
    fit = plackett_luce(8, games, prior_sd=None)
    reference = choix.opt_rankings(8, choix_data(games), alpha=0.0, method="BFGS", tol=1e-10)
    difference = np.abs(mean_centred(fit) - to_elo(reference)).max()
    assert difference < 0.5, difference


def test_matches_choix_with_the_same_prior() -> None:
    # A narrow prior (100 Elo) pulls the ratings in, the same way in both:
    # choix's penalty is alpha * sum(theta^2); ours is theta.theta / (2 s^2).
    rng = np.random.default_rng(7)
    theta = rng.normal(0.0, 1.5, size=6)
    games = [
        simulate_game(rng, theta, list(rng.choice(6, size=3, replace=False))) for _ in range(200)
    ]
    fit = plackett_luce(6, games, prior_sd=100.0)
    alpha = 0.5 * (ELO_PER_NAT / 100.0) ** 2
    reference = choix.opt_rankings(6, choix_data(games), alpha=alpha, tol=1e-12)
    difference = np.abs(mean_centred(fit) - to_elo(reference)).max()
    assert difference < 0.5, difference
    # The default prior is a numerical guard: it moves these ratings by a
    # small fraction of an Elo.
    guarded = mean_centred(plackett_luce(6, games))
    assert np.abs(guarded - mean_centred(plackett_luce(6, games, prior_sd=None))).max() < 0.5


def breslow_mm(n_items: int, games: Sequence[Ranking]) -> npt.NDArray[np.float64]:
    """Breslow-tied Plackett-Luce ML log-strengths by an MM algorithm (Hunter 2004).

    log L = sum_s [sum_{i in D_s} log w_i - |D_s| log sum_{j in R_s} w_j];
    minorising -log x by -log y - x/y + 1 at the current w gives the update
    w_i <- (#stages i is picked at) / sum_{s: i in R_s} |D_s| / sum_{R_s} w.
    """
    members: list[list[int]] = []
    sizes: list[int] = []
    picks = np.zeros(n_items)
    for game in games:
        by_rank: dict[int, list[int]] = {}
        for item, rank in game:
            by_rank.setdefault(rank, []).append(item)
        groups = [by_rank[rank] for rank in sorted(by_rank)]
        for k, group in enumerate(groups):
            rest = [item for later in groups[k:] for item in later]
            members.append(rest)
            sizes.append(len(group))
            for item in group:
                picks[item] += 1
    matrix = np.zeros((len(members), n_items))
    for s, rest in enumerate(members):
        matrix[s, rest] = 1.0
    d = np.array(sizes, dtype=float)
    w = np.ones(n_items)
    for _ in range(100_000):
        new = picks / (matrix.T @ (d / (matrix @ w)))
        new /= np.exp(np.mean(np.log(new)))
        if np.abs(np.log(new) - np.log(w)).max() < 1e-13:
            w = new
            break
        w = new
    return np.log(w)


def breslow_log_likelihood(
    theta: Sequence[float] | npt.NDArray[np.float64], games: Sequence[Ranking]
) -> float:
    """The Breslow-tied Plackett-Luce log-likelihood, straight from the formula."""
    total = 0.0
    for game in games:
        for item, rank in game:
            # Each member of a tied group D contributes w_i / sum_R w, which
            # multiplies out to prod_D w_i / (sum_R w)^|D|.
            remaining = [other for other, other_rank in game if other_rank >= rank]
            total += theta[item] - math.log(sum(math.exp(theta[j]) for j in remaining))
    return total


def test_matches_mm_algorithm_with_ties() -> None:
    rng = np.random.default_rng(11)
    theta = [0.8, 0.3, 0.0, -0.4, -0.9]
    games = [
        simulate_game(
            rng, theta, list(rng.choice(5, size=int(rng.integers(3, 6)), replace=False)), 0.25
        )
        for _ in range(300)
    ]
    assert sum(1 for game in games if len({rank for _item, rank in game}) < len(game)) > 100
    fit = plackett_luce(5, games, prior_sd=None)
    reference = breslow_mm(5, games)
    difference = np.abs(mean_centred(fit) - to_elo(reference)).max()
    assert difference < 0.5, difference
    # Same optimum, same likelihood, computed independently.
    assert fit.log_likelihood == pytest.approx(breslow_log_likelihood(reference, games), abs=1e-6)


def test_matches_nelder_mead_with_ties() -> None:
    rng = np.random.default_rng(5)
    theta = [0.6, 0.0, -0.6]
    games = [simulate_game(rng, theta, [0, 1, 2], 0.3) for _ in range(40)]

    def negative(free: npt.NDArray[np.float64]) -> float:
        return -breslow_log_likelihood([free[0], free[1], -free[0] - free[1]], games)

    result = scipy.optimize.minimize(
        negative,
        [0.0, 0.0],
        method="Nelder-Mead",
        options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 10_000},
    )
    reference = [result.x[0], result.x[1], -result.x[0] - result.x[1]]
    fit = plackett_luce(3, games, prior_sd=None)
    difference = np.abs(mean_centred(fit) - to_elo(reference)).max()
    assert difference < 0.5, difference


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


# --------------------------------------------------------------------------
# A against B
# --------------------------------------------------------------------------


def test_pairwise_record() -> None:
    games: list[Ranking] = [
        [(0, 1), (1, 2), (2, 3)],  # 0 beats 1
        [(1, 1), (0, 2)],  # 1 beats 0
        [(2, 1), (0, 2), (1, 2)],  # 0 and 1 tie (both behind 2)
        [(0, 1), (2, 2)],  # 1 absent
        [(3, 1), (1, 2), (0, 3)],  # 1 beats 0
    ]
    assert pairwise_record(games, 0, 1) == (1, 1, 2)
    assert pairwise_record(games, 1, 0) == (2, 1, 1)
    assert pairwise_record(games, 0, 4) == (0, 0, 0)
    with pytest.raises(ValueError):
        pairwise_record(games, 1, 1)


def test_likelihood_of_superiority() -> None:
    # erf(10 / sqrt(20)) = erf(2.2360680) = 0.9984346 -> 0.5 * 1.9984346.
    assert likelihood_of_superiority(10, 0) == pytest.approx(0.9992173, abs=1e-7)
    assert likelihood_of_superiority(0, 10) == pytest.approx(1 - 0.9992173, abs=1e-7)
    assert likelihood_of_superiority(37, 37) == 0.5
    assert likelihood_of_superiority(0, 0) == 0.5
    # 60-40: erf(20 / sqrt(200)) = erf(1.4142136) = 0.9544997 -> 0.9772499.
    assert likelihood_of_superiority(60, 40) == pytest.approx(0.9772499, abs=1e-7)


def test_sprt_bounds_and_clear_cases() -> None:
    # W 600, D 200, L 400: N = 1200, s = 700/1200 = 0.5833333,
    # var = 650/1200 - s^2 = 0.5416667 - 0.3402778 = 0.2013889;
    # s0 = 0.5, s1 = 1/(1+10^(-10/400)) = 0.5143868;
    # LLR = 1200 * 0.0143868 * (1.1666667 - 1.0143868) / (2 * 0.2013889) = 6.5273.
    result = sprt(600, 200, 400)
    assert result.lower == pytest.approx(math.log(0.05 / 0.95))
    assert result.upper == pytest.approx(math.log(0.95 / 0.05))
    assert result.llr == pytest.approx(6.5273, abs=1e-3)
    assert result.decision == "H1"
    # Mirror image: 2s - s0 - s1 = 0.8333333 - 1.0143868 -> LLR = -7.7607.
    result = sprt(400, 200, 600)
    assert result.llr == pytest.approx(-7.7607, abs=1e-3)
    assert result.decision == "H0"


def test_sprt_continue_and_edges() -> None:
    assert sprt(12, 5, 10).decision == "continue"
    assert sprt(0, 0, 0).llr == 0.0
    assert sprt(0, 0, 0).decision == "continue"
    # Only wins: the variance is regularised, the verdict is clear.
    assert sprt(50, 0, 0).decision == "H1"
    # Tighter error rates widen the bounds.
    strict = sprt(600, 200, 400, alpha=0.01, beta=0.01)
    assert strict.upper == pytest.approx(math.log(0.99 / 0.01))
    with pytest.raises(ValueError):
        sprt(-1, 0, 0)


def test_clustered_intervals_do_not_count_copies_as_evidence() -> None:
    """Each game repeated four times in one cluster (like the rotations of one deal) must not
    make the interval narrower than the games alone, while the naive fit halves it."""
    rng = random.Random(11)
    strengths = [0.0, 0.4, 0.8, 1.2]
    base: list[list[tuple[int, int]]] = []
    for _ in range(60):
        order = sorted(range(4), key=lambda item: -(strengths[item] + rng.gauss(0, 1)))
        base.append([(item, place + 1) for place, item in enumerate(order)])
    single = plackett_luce(4, base, clusters=list(range(len(base))))
    copies = [game for game in base for _ in range(4)]
    labels = [number for number in range(len(base)) for _ in range(4)]
    naive = plackett_luce(4, copies)
    robust = plackett_luce(4, copies, clusters=labels)
    for one, many_naive, many_robust in zip(single.items, naive.items, robust.items, strict=True):
        assert many_robust.rating == pytest.approx(many_naive.rating)
        assert many_naive.se == pytest.approx(one.se / 2, rel=0.15)
        assert many_robust.se == pytest.approx(one.se, rel=0.05)


def test_clusters_need_one_label_per_ranking() -> None:
    games = [[(0, 1), (1, 2)], [(1, 1), (0, 2)], [(0, 1), (1, 2)]]
    with pytest.raises(ValueError, match="one label per ranking"):
        plackett_luce(2, games, clusters=[0, 1])


def duplicate_deals(
    rng: random.Random, strengths: Sequence[float], deals: int, luck: float
) -> tuple[list[Ranking], list[int]]:
    """Duplicate deals: every rotation of the seats, each seat's luck shared by the deal."""
    n = len(strengths)
    games: list[Ranking] = []
    clusters: list[int] = []
    for deal in range(deals):
        seat_luck = [rng.gauss(0.0, luck) for _ in range(n)]
        for shift in range(n):
            noisy = {
                item: strengths[item] + seat_luck[(item + shift) % n] + rng.gauss(0.0, 1.0)
                for item in range(n)
            }
            order = sorted(range(n), key=lambda item: -noisy[item])
            games.append([(item, place + 1) for place, item in enumerate(order)])
            clusters.append(deal)
    return games, clusters


def round_robins(
    rng: random.Random, clusters: int, items: int = 4
) -> tuple[list[Ranking], list[int]]:
    """`clusters` two-player round robins of `items`, coin-flip results.

    A two-player game's information is p(1 - p) whoever wins, so every
    cluster informs every rating exactly alike.
    """
    games: list[Ranking] = []
    labels: list[int] = []
    for cluster in range(clusters):
        for a in range(items):
            for b in range(a + 1, items):
                winner, loser = (a, b) if rng.random() < 0.5 else (b, a)
                games.append([(winner, 1), (loser, 2)])
                labels.append(cluster)
    return games, labels


def test_few_deals_widen_the_intervals_by_students_t() -> None:
    games, clusters = round_robins(random.Random(3), 3)
    fit = plackett_luce(4, games, clusters=clusters)
    # Three alike clusters: the spread comes from three cluster totals, t on 2 df.
    for item in fit.items:
        assert item.df == pytest.approx(2.0)
        assert item.ci_high - item.rating == pytest.approx(4.302653 * item.se, rel=1e-6)
    unclustered = plackett_luce(4, games)
    for item in unclustered.items:
        assert item.df is None
        assert item.ci_high - item.rating == pytest.approx(1.959964 * item.se, rel=1e-6)


def test_an_entrant_in_few_clusters_gets_the_degrees_of_freedom_of_those() -> None:
    """Item 4 plays only in clusters 0 and 1 of ten: its rating rests on two cluster
    totals, so about 2 df, not the 9 of the others, whose intervals stay near t(9)."""
    games, clusters = round_robins(random.Random(5), 10)
    # One win and one loss in each of its two clusters, so the games measure it.
    games += [[(4, 1), (0, 2)], [(1, 1), (4, 2)], [(4, 1), (1, 2)], [(0, 1), (4, 2)]]
    clusters += [0, 0, 1, 1]
    fit = plackett_luce(5, games, clusters=clusters)
    dfs = [item.df for item in fit.items]
    assert all(df is not None for df in dfs), dfs
    late = fit.items[4]
    assert late.df is not None and 1.5 < late.df <= 2.1, dfs
    assert all(df is not None and 7.0 < df <= 9.0 for df in dfs[:4]), dfs
    quantile = float(scipy.stats.t.ppf(0.975, late.df))
    assert late.ci_high - late.rating == pytest.approx(quantile * late.se)


def test_duplicate_play_cuts_the_variance_of_close_pairs() -> None:
    # Seat luck shared by the rotations of a deal cancels in the difference
    # of two close entrants; a far weaker one is last wherever it sits.
    rng = random.Random(8)
    games, clusters = duplicate_deals(rng, [0.0, 0.1, 0.2, -3.0], 150, 1.5)
    ratios = duplicate_variance_ratios(4, games, clusters)
    assert set(ratios) == {(a, b) for a in range(4) for b in range(a + 1, 4)}
    close = [ratios[(0, 1)], ratios[(0, 2)], ratios[(1, 2)]]
    assert max(close) < 0.8, close
    lopsided = [ratios[(0, 3)], ratios[(1, 3)], ratios[(2, 3)]]
    assert min(lopsided) > max(close), (close, lopsided)
    # Independent games (every game its own cluster) save nothing.
    alone = duplicate_variance_ratios(4, games, list(range(len(games))))
    assert all(ratio == pytest.approx(1.0) for ratio in alone.values())


def test_a_lone_measured_bot_is_the_reference_not_a_zero_width_interval() -> None:
    from ladder.wording import rating_cells

    # Every game in the same strict order: no two bots reach each other, one is kept
    # as the reference and the others are bounded against it.
    rankings = [[(0, 1), (1, 2), (2, 3)] for _ in range(6)]
    fit = ratings.plackett_luce(3, rankings, clusters=[g // 3 for g in range(6)])
    lone = [item for item in fit.items if item.standing == "measured"]
    assert len(lone) == 1 and lone[0].reason == ratings.ALONE
    line = ratings.table_line(lone[0], 2)
    assert line["measured"] and line["reason"] == ratings.ALONE
    assert rating_cells(
        line["rating"], line["ci_low"], line["ci_high"], line["bound"], line["reason"]
    ) == (f"{line['rating']:.0f}", ratings.ALONE)
    assert all(item.standing in ("above", "below") for item in fit.items if item not in lone)


def test_clusters_that_all_agree_fall_back_to_the_models_variance() -> None:
    # Each deal: one win each way. At the fit every deal's scores balance, so leaving
    # any deal out moves nothing: the jackknife sees no spread, the model still does.
    rankings = [[(0, 1), (1, 2)], [(1, 1), (0, 2)]] * 2
    fit = ratings.plackett_luce(2, rankings, clusters=[0, 0, 1, 1])
    for item in fit.items:
        assert item.standing == "measured" and item.se > 50 and item.df is None
        assert item.ci_low < item.rating < item.ci_high
