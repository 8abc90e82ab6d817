"""Play whole games in this process, bots calling the engine directly.

This is what `arena play` and the tests use: no server, no network. Each
seat's bot sees exactly what a remote bot would: its observation and the
notations of its legal actions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import bots
import games
from bots.base import Bot, Turn


def turn_for(state: games.State, seat: int) -> Turn:
    """What `seat` is shown when asked to act."""
    return Turn(
        game=state.spec.name,
        seat=seat,
        players=state.players,
        view=state.observation(seat),
        legal=tuple(str(action) for action in state.legal_actions(seat)),
    )


def play_game(
    game: str,
    bots: Sequence[Bot],
    seed: int,
    options: Mapping[str, object] | None = None,
    deal: object = None,
) -> games.State:
    """Play one full game, seat i played by `bots[i]`; returns the final state.

    In a simultaneous game (Goof) every seat answers each tick and the tick
    is resolved in an order drawn from the game's seeded RNG.
    """
    spec = games.get(game)
    state = spec.new_game(len(bots), seed, options, deal)
    if isinstance(state, games.TickState) and spec.simultaneous:
        while not state.is_over():
            state.apply_tick(
                {seat: bots[seat].act(turn_for(state, seat)) for seat in state.to_act()}
            )
    else:
        while not state.is_over():
            seat = state.to_act()[0]
            state.apply(seat, bots[seat].act(turn_for(state, seat)))
    return state


def _entrant_bot(
    name: str, seed: int, search_budget_s: float | None, search_playouts: int | None
) -> Bot:
    bot = bots.load(name, seed, search_budget_s)
    if search_playouts is not None and isinstance(bot, bots.SearchBot):
        bot.playouts = search_playouts
    return bot


def play_rotations(
    game: str,
    entrants: Sequence[str],
    seed: int,
    options: Mapping[str, object] | None = None,
    search_budget_s: float | None = None,
    search_playouts: int | None = None,
) -> list[list[int]]:
    """One duplicate deal: the game of `seed` once per rotation of the seats.

    Entrant i sits in seat (i + shift) % players in rotation `shift`, so
    every entrant plays every position of the same cards. Returns, per
    rotation, the rank of each entrant (by entrant index). Entrant i's bot is
    seeded from `seed` and i, wherever it sits: seeded by seat, an entrant
    named twice made a rotation that swaps the two copies replay another
    rotation's game exactly. A search bot thinks `search_budget_s` per move
    (None: its default), or makes `search_playouts` draws per decision
    regardless of time (None: the clock decides).
    """
    players = len(entrants)
    out = []
    for shift in range(players):
        entrant_at = [(seat - shift) % players for seat in range(players)]
        lineup = [
            _entrant_bot(entrants[entrant], seed * 1000 + entrant, search_budget_s, search_playouts)
            for entrant in entrant_at
        ]
        ranks = play_game(game, lineup, seed, options).result().ranks
        by_entrant = [0] * players
        for seat, entrant in enumerate(entrant_at):
            by_entrant[entrant] = ranks[seat]
        out.append(by_entrant)
    return out
