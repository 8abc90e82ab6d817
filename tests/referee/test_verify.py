"""referee.verify on matches built here: a true match verifies; each kind of tampering is named."""

from __future__ import annotations

import random
import re
from dataclasses import replace

import pytest

import games
from ladder.fairness import commitment
from referee.verify import Mismatch, Published, PublishedGame, verify

SEED = 285815032738012068024793795515352762551
BOTS = ("a", "b", "c")


def played() -> Published:
    """One Golden 10 game of three random players from SEED, published as the referee would."""
    state = games.get("golden10").new_game(3, SEED, {"rounds": 1})
    rng = random.Random(1)
    while not state.is_over():
        seat = state.to_act()[0]
        state.apply(seat, rng.choice(state.legal_actions(seat)))
    result = state.result()
    game = PublishedGame(
        BOTS, result.scores, result.ranks, state.round, str(SEED), dict(state.log())
    )
    return Published(
        "m1", "golden10", "finished", BOTS, str(SEED), commitment(SEED),
        result.scores, result.ranks, (), (game,),
    )  # fmt: skip


def test_a_true_match_verifies() -> None:
    assert verify(played()).startswith("match m1 verified: sha256 of seed")


@pytest.mark.parametrize(
    ("tamper", "named"),
    [
        (lambda m: replace(m, status="running"), "is running"),
        (lambda m: replace(m, seed_commitment="0" * 64), "but the commitment given"),
        (
            lambda m: replace(m, games=(replace(m.games[0], seed=str(SEED + 1)),)),
            "its result names seed",
        ),
        (lambda m: replace(m, ranks=(m.ranks[1], m.ranks[0], m.ranks[2])), "ranks differ"),
        (
            lambda m: replace(m, games=(replace(m.games[0], rounds=2),)),
            "rounds (replayed, published) differ",
        ),
        (
            lambda m: replace(m, games=(replace(m.games[0], log={**m.games[0].log, "deal": []}),)),
            "its log has deal",
        ),
        (
            lambda m: replace(
                m,
                games=(
                    replace(
                        m.games[0], log={**m.games[0].log, "moves": m.games[0].log["moves"][:-1]}
                    ),
                ),
            ),
            "stop before the game is over",
        ),
    ],
    ids=["running", "commitment", "seed", "ranks", "rounds", "deal", "moves"],
)
def test_tampering_is_named(tamper, named: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(Mismatch, match=re.escape(named)):
        verify(tamper(played()))
