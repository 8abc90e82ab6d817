"""Engine speed: random playouts of whole games, against a plain trick loop.

Prints one JSON line per game and player count:
{"game", "players", "games_per_s", "us_per_action", "baseline_us_per_action", "ratio", "slices"}
where the baseline is a deliberately plain pure-Python trick-taking loop
(4 players x 12 cards, follow suit, lists of tuples) timed in the same run.

Timing is this process's CPU time (`time.process_time`), not wall time, so
other processes' load (and a VM's steal time, where the kernel accounts for
it) counts for neither side. After one untimed game, each measurement runs
`--slices` engine slices, each between two baseline slices (baseline, engine,
baseline, engine, ..., baseline), all of about `--seconds / (2 * slices + 1)`
of CPU (an engine slice ends with a whole game), so a slow spell of the
machine slows an engine slice and the baselines either side of it alike.
Each engine slice's ratio is its microseconds per action over the mean of
those two baselines; "ratio" is the median of these, "us_per_action" and
"baseline_us_per_action" are the medians of the slices, and "games_per_s"
counts whole games over the engine's CPU time. The garbage collector runs
normally within a slice and is emptied (`gc.collect()`) before every slice,
engine or baseline, so no slice pays for another's garbage.

    python -m bench.engines [--seconds 6.2] [--slices 15] [--game goodge]
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import time
from collections.abc import Callable

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
    """Microseconds of CPU per action of the plain loop, run for about `seconds` of CPU.

    Every slice plays the same deals (its RNG starts from the same seed).
    """
    rng = random.Random(0)
    actions = 0
    gc.collect()
    start = time.process_time()
    while time.process_time() - start < seconds:
        for _ in range(20):
            actions += baseline_deal(rng)
    return (time.process_time() - start) * 1e6 / actions


def playout(state: games.State, rng: random.Random) -> int:
    """Play random legal actions to the end; returns the number of actions."""
    choice = rng.choice
    actions = 0
    # The spec first: a runtime protocol check costs about as much as dealing a round.
    if state.spec.simultaneous and isinstance(state, games.TickState):
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
    """Whole random playouts for about `seconds` of CPU: games, actions and CPU seconds.

    At least one game; the slice ends with the first game that ends past `seconds`.
    """
    new_game: Callable[[int, int], games.State] = games.get(name).new_game
    played = actions = 0
    gc.collect()
    start = time.process_time()
    while played == 0 or time.process_time() - start < seconds:
        actions += playout(new_game(players, rng.randrange(2**32)), rng)
        played += 1
    return played, actions, time.process_time() - start


def measure(name: str, players: int, seconds: float, slices: int) -> dict[str, float]:
    """`slices` engine slices, each between two baseline slices, in about `seconds` of CPU.

    The ratio is the median over the engine slices of each one's microseconds
    per action over the mean of the baselines just before and just after it.
    """
    rng = random.Random(players)
    part = seconds / (2 * slices + 1)
    time_game(name, players, 0.0, rng)  # warm-up: one game, not counted
    baseline_us = [time_baseline(part)]
    engine_us, ratios = [], []
    played = 0
    spent = 0.0
    for _ in range(slices):
        games_done, actions, elapsed = time_game(name, players, part, rng)
        baseline_us.append(time_baseline(part))
        engine_us.append(elapsed * 1e6 / actions)
        ratios.append(engine_us[-1] / statistics.mean(baseline_us[-2:]))
        played += games_done
        spent += elapsed
    return {
        "games_per_s": played / spent,
        "us_per_action": statistics.median(engine_us),
        "baseline_us_per_action": statistics.median(baseline_us),
        "ratio": statistics.median(ratios),
        "slices": slices,
    }


def main() -> None:
    """Print the JSON lines."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--seconds",
        type=float,
        default=6.2,
        help="CPU seconds per game and player count, engine and baseline slices together",
    )
    parser.add_argument("--slices", type=int, default=15, help="engine slices per measurement")
    parser.add_argument("--game", choices=games.names(), action="append", help="only this game")
    args = parser.parse_args()
    for name in args.game or games.names():
        spec = games.get(name)
        for players in range(spec.min_players, spec.max_players + 1):
            figures = measure(name, players, args.seconds, args.slices)
            line = {"game": name, "players": players}
            line.update({key: round(value, 3) for key, value in figures.items()})
            print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
