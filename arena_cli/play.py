"""`arena play` and `arena demo`: whole games in this process, no server."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import bots
import games
from arena_cli.env import add_rules_option
from bots.local import play_game
from ladder.wording import plural


@dataclass(frozen=True)
class PlayedGame:
    """A finished local game and who sat where."""

    bot_names: tuple[str, ...]
    state: games.State

    def summary(self) -> dict[str, Any]:
        """The JSON summary that `arena play --json` prints."""
        result = self.state.result()
        log = self.state.log()
        moves = log["moves"]
        actions = sum(len(tick) for tick in moves) if self.state.spec.simultaneous else len(moves)
        return {
            "game": self.state.spec.name,
            "players": self.state.players,
            "bots": list(self.bot_names),
            "seed": self.state.seed,
            "options": log["options"],
            "scores": list(result.scores),
            "ranks": list(result.ranks),
            "rounds": self.state.round,
            "actions": actions,
        }


TABLE_SIZE = 4
"""Seats when neither --players nor several --bots say: a table of four, within the game's range."""


def default_players(spec: games.GameSpec) -> int:
    """The table a game is played at when the command names no size."""
    return max(spec.min_players, min(spec.max_players, TABLE_SIZE))


def bot_names_for(
    names: Sequence[str], players: int | None, spec: games.GameSpec
) -> tuple[str, ...]:
    """One bot name per seat: a single name fills every seat (of the default table if
    --players is not given)."""
    if len(names) == 1:
        return tuple(names) * (players or default_players(spec))
    if players is None:
        players = len(names)
    if len(names) != players:
        raise ValueError(
            f"--bots names {plural(len(names), 'bot', 'bots')} for {players} players; give one per "
            "seat or one for all"
        )
    return tuple(names)


def play(
    game: str, names: Sequence[str], seed: int, options: dict[str, object] | None = None
) -> PlayedGame:
    """Play one game between reference bots; seat i's bot is seeded from `seed` and i."""
    players = [bots.load(name, seed * 1000 + seat) for seat, name in enumerate(names)]
    return PlayedGame(tuple(names), play_game(game, players, seed, options))


def table(played: PlayedGame) -> str:
    """A readable table of one game's result."""
    summary = played.summary()
    spec = games.get(summary["game"])
    lines = [
        f"{spec.title} — {summary['players']} players, seed {summary['seed']}, "
        f"{summary['rounds']} rounds, {summary['actions']} actions "
        f"({'highest' if spec.higher_is_better else 'lowest'} score wins)",
    ]
    width = max(10, *(len(name) for name in summary["bots"]))
    lines.append(f"  {'seat':>4}  {'bot':<{width}} {'score':>6}  {'rank':>4}")
    order = sorted(range(summary["players"]), key=lambda seat: (summary["ranks"][seat], seat))
    for seat in order:
        bot, score, rank = summary["bots"][seat], summary["scores"][seat], summary["ranks"][seat]
        lines.append(f"  {seat:>4}  {bot:<{width}} {score:>6}  {rank:>4}")
    return "\n".join(lines)


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `play` on the `arena` parser."""
    parser = commands.add_parser(
        "play",
        help="play one local game between reference bots (no server)",
        description="Play one full game in this process between reference bots and print the result.",
    )
    parser.add_argument("game", choices=games.names(), help="the game to play")
    parser.add_argument(
        "--players",
        type=int,
        help=f"number of players (default: one per --bots name, or {TABLE_SIZE} within the "
        "game's range for one name)",
    )
    parser.add_argument(
        "--bots",
        default="rules",
        help="comma-separated bots, one per seat or one for all: random, rules, search or "
        "module:Class (default rules at every seat)",
    )
    parser.add_argument(
        "--seed", type=int, default=1, help="seed of the deal and the bots (default 1)"
    )
    add_rules_option(parser)
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object instead of a table"
    )
    parser.add_argument(
        "--log", metavar="FILE", help="also write the game's event log (JSON) to FILE"
    )
    parser.set_defaults(run=run_play)


def run_play(args: argparse.Namespace) -> int:
    """Play the game that `args` describe and print it."""
    spec = games.get(args.game)
    names = bot_names_for(
        [name.strip() for name in args.bots.split(",") if name.strip()], args.players, spec
    )
    spec.check_players(len(names))
    options = spec.resolve_options(games.parse_option_pairs(args.option), len(names))
    played = play(args.game, names, args.seed, options)
    if args.log:
        with open(args.log, "w", encoding="utf-8") as out:
            json.dump(played.state.log(), out)
    print(json.dumps(played.summary()) if args.json else table(played))
    return 0
