"""ladder.elo: the live multiplayer Elo."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ladder.elo import EloConfig, elo_update, expected_score, is_provisional

# Players with at least this many games use the ordinary K of 32.
ESTABLISHED = 100


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
