"""Engine speed: random playouts of whole games, against a plain trick loop.

Prints one JSON line per game and player count:
{"game", "players", "games_per_s", "us_per_action", "baseline_us_per_action", "ratio"}
where the baseline is a deliberately plain pure-Python trick-taking loop
(4 players x 12 cards, follow suit, lists of tuples) timed in the same run.

    python bench/engines.py [--seconds 2] [--game goodge]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time

import games


def baseline_deal(rng: random.Random) -> int:
    """One deal of a plain trick game: 4 x 12 cards, follow suit; returns actions."""
    deck = [(suit, rank) for suit in range(4) for rank in range(12)]
    rng.shuffle(deck)
    hands = [deck[i * 12 : (i + 1) * 12] for i in range(4)]
    leader = 0
    taken = [0, 0, 0, 0]
    for _ in range(12):
        trick: list[tuple[int, tuple[int, int]]] = []
        for offset in range(4):
            seat = (leader + offset) % 4
            hand = hands[seat]
            if trick:
                lead_suit = trick[0][1][0]
                legal = [card for card in hand if card[0] == lead_suit] or hand
            else:
                legal = hand
            card = rng.choice(legal)
            hand.remove(card)
            trick.append((seat, card))
        lead_suit = trick[0][1][0]
        leader = max((c for c in trick if c[1][0] == lead_suit), key=lambda c: c[1][1])[0]
        taken[leader] += 1
    return 48


def time_baseline(seconds: float) -> float:
    """Microseconds per action of the plain loop."""
    rng = random.Random(0)
    actions = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(20):
            actions += baseline_deal(rng)
    return (time.perf_counter() - start) * 1e6 / actions


def playout(state: games.State, rng: random.Random) -> int:
    """Play random legal actions to the end; returns the number of actions."""
    choice = rng.choice
    actions = 0
    if isinstance(state, games.TickState) and state.spec.simultaneous:
        while not state.is_over():
            seats = state.to_act()
            state.apply_tick({seat: choice(state.legal_actions(seat)) for seat in seats})
            actions += len(seats)
        return actions
    legal_actions = state.legal_actions
    apply = state.apply
    to_act = state.to_act
    while not state.is_over():
        seat = to_act()[0]
        apply(seat, choice(legal_actions(seat)))
        actions += 1
    return actions


def time_game(
    name: str, players: int, seconds: float, rng: random.Random
) -> tuple[int, int, float]:
    """Whole random playouts for about `seconds`: games, actions and elapsed seconds."""
    spec = games.get(name)
    played = actions = 0
    start = time.perf_counter()
    while played == 0 or time.perf_counter() - start < seconds:
        actions += playout(spec.new_game(players, rng.randrange(2**32)), rng)
        played += 1
    return played, actions, time.perf_counter() - start


def measure(name: str, players: int, seconds: float, slices: int = 5) -> dict[str, float]:
    """Engine and baseline timed in alternating slices; medians, so a busy moment hurts neither."""
    rng = random.Random(players)
    engine_us, baseline_us = [], []
    played = 0
    elapsed = 0.0
    for _ in range(slices):
        baseline_us.append(time_baseline(seconds / slices / 2))
        games_done, actions, spent = time_game(name, players, seconds / slices, rng)
        engine_us.append(spent * 1e6 / actions)
        played += games_done
        elapsed += spent
    engine = statistics.median(engine_us)
    baseline = statistics.median(baseline_us)
    return {
        "games_per_s": played / elapsed,
        "us_per_action": engine,
        "baseline_us_per_action": baseline,
        "ratio": engine / baseline,
    }


def main() -> None:
    """Print the JSON lines."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    parser.add_argument("--game", choices=games.names(), action="append", help="only this game")
    args = parser.parse_args()
    for name in args.game or games.names():
        spec = games.get(name)
        for players in range(spec.min_players, spec.max_players + 1):
            figures = measure(name, players, args.seconds)
            line = {"game": name, "players": players}
            line.update({key: round(value, 3) for key, value in figures.items()})
            print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
