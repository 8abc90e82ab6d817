"""ladder.ladder_fit: the ladder's Plackett-Luce standings with uncertainty (no database)."""

from __future__ import annotations

import math
import random

import pytest

from ladder.elo import ELO_PER_NAT, ELO_START, PROVISIONAL_SE, Ranking
from ladder.ladder_fit import FIELD_SD, MIN_FIELD_SD, LadderRating, fit_ladder
from ladder.plackett_luce import plackett_luce


def games_of(strengths: list[float], count: int, seats: int, seed: int) -> list[Ranking]:
    """`count` Plackett-Luce games at random tables of bots with these Elo strengths."""
    rng = random.Random(seed)
    games: list[Ranking] = []
    for _ in range(count):
        table = rng.sample(range(len(strengths)), seats)
        noisy = {
            bot: strengths[bot] / ELO_PER_NAT - math.log(-math.log(rng.random())) for bot in table
        }
        order = sorted(table, key=lambda bot: -noisy[bot])
        games.append([(bot, place + 1) for place, bot in enumerate(order)])
    return games


def test_the_fit_orders_the_field_and_its_errors_shrink_with_games() -> None:
    strengths = [-300.0, -100.0, 0.0, 100.0, 300.0, 0.0]
    games = games_of(strengths, 600, 4, seed=1)
    few = fit_ladder(6, games[:30])
    many = fit_ladder(6, games)
    assert many.converged
    ratings = many.ratings
    assert ratings[0] < ratings[1] < ratings[3] < ratings[4]
    assert sum(ratings) / 6 == pytest.approx(ELO_START)
    assert all(m.se < f.se for m, f in zip(many.bots, few.bots, strict=True))
    assert sum(bot.games for bot in many.bots) == 600 * 4


def test_differences_are_the_tournament_tables_under_the_same_prior() -> None:
    # One model: only the centre differs (the table's is weighted by information).
    games = games_of([-200.0, -50.0, 50.0, 200.0, 120.0], 200, 3, seed=2)
    ladder = fit_ladder(5, games, prior_sd=250.0)
    table = plackett_luce(5, games, prior_sd=250.0)
    for a in range(5):
        assert ladder.ratings[a] - ladder.ratings[0] == pytest.approx(
            table.ratings[a] - table.ratings[0], abs=1e-6
        )


def test_every_bot_gets_a_finite_rating_even_after_winning_every_game() -> None:
    # Bot 0 won all its games: the tournament table can only bound it; the ladder's prior
    # gives it a rating and a wide error.
    won: Ranking = [(0, 1), (1, 2), (2, 3)]
    games: list[Ranking] = [won, won, won, [(1, 1), (2, 2), (3, 3)], [(3, 1), (1, 2), (2, 3)]]
    fit = fit_ladder(5, games)
    assert all(math.isfinite(bot.rating) and math.isfinite(bot.se) for bot in fit.bots)
    assert fit.ratings[0] == max(fit.ratings)
    # Bot 4 never played: the field's centre, about as uncertain as the prior.
    assert fit.bots[4].games == 0
    assert fit.bots[4].rating == pytest.approx(ELO_START, abs=20.0)
    assert fit.bots[4].se == pytest.approx(FIELD_SD, rel=0.15)
    assert fit.bots[4].provisional


def test_provisional_follows_the_error() -> None:
    assert LadderRating(1500.0, PROVISIONAL_SE + 1.0, 80).provisional
    assert not LadderRating(1500.0, PROVISIONAL_SE - 1.0, 3).provisional


def test_the_field_spread_learns_from_the_games() -> None:
    strengths = [(-1.5 + 3.0 * i / 39) * 200.0 for i in range(40)]
    games = games_of(strengths, 2000, 4, seed=3)
    prior = FIELD_SD
    for _ in range(30):
        prior = fit_ladder(40, games, prior_sd=prior).field_sd
    spread = math.sqrt(sum(s * s for s in strengths) / len(strengths))
    # The spread of what the games show, near the truth's (about 175 Elo here).
    assert 0.7 * spread < prior < 1.2 * spread
    assert fit_ladder(3, [], prior_sd=10.0).field_sd == MIN_FIELD_SD


def test_small_fields_and_bad_input() -> None:
    assert fit_ladder(0, []).bots == ()
    (alone,) = fit_ladder(1, [[(0, 1)]]).bots
    assert (alone.rating, alone.se, alone.games) == (ELO_START, 0.0, 0)
    with pytest.raises(ValueError, match="negative"):
        fit_ladder(-1, [])
    with pytest.raises(ValueError, match="positive"):
        fit_ladder(2, [], prior_sd=0.0)


def test_known_offsets_take_the_advantage_out_of_the_games() -> None:
    games = games_of([-100.0, 0.0, 50.0, 100.0, 0.0], 300, 3, seed=4)
    plain = fit_ladder(5, games)
    # An advantage every entry of a game shares says nothing about who is better.
    level = fit_ladder(5, games, offsets=[[0.7] * len(game) for game in games])
    for a, b in zip(plain.bots, level.bots, strict=True):
        assert (b.rating, b.se) == (pytest.approx(a.rating), pytest.approx(a.se))
    # Bot 0 sat in an advantaged seat in every game: knowing it, the fit rates it lower.
    favoured = [[1.0 if bot == 0 else 0.0 for bot, _ in game] for game in games]
    lucky = fit_ladder(5, games, offsets=favoured)
    assert lucky.ratings[0] < plain.ratings[0] - 100.0
    with pytest.raises(ValueError, match="one row per game"):
        fit_ladder(5, games, offsets=favoured[:-1])
    with pytest.raises(ValueError, match="one offset per entry"):
        fit_ladder(5, games, offsets=[[0.0], *favoured[1:]])
