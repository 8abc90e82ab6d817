"""The tournament table's intervals with clusters (ladder.intervals through
ladder.plackett_luce): copies are not evidence, few deals widen the intervals by
Student's t, duplicate play cuts the variance of close pairs.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest
import scipy.stats  # type: ignore[import-untyped]

from ladder import plackett_luce as ratings
from ladder.elo import Ranking
from ladder.plackett_luce import duplicate_variance_ratios, plackett_luce


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
