"""`arena play`: whole games in this process, no server, a person at one seat if asked."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import bots
import games
from arena_cli.env import add_rules_option
from arena_cli.human_seat import Console, HumanSeat, SeatLeft
from bots.local import play_game
from ladder.wording import plural


@dataclass(frozen=True)
class PlayedGame:
    """A finished local game and who sat where."""

    bot_names: tuple[str, ...]
    state: games.State
    human_seat: int | None = None

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
            **({} if self.human_seat is None else {"human_seat": self.human_seat}),
        }


TABLE_SIZE = 4
"""Seats when neither --players nor several --bots say: a table of four, within the game's range."""


def default_players(spec: games.GameSpec) -> int:
    """The table a game is played at when the command names no size."""
    return max(spec.min_players, min(spec.max_players, TABLE_SIZE))


HUMAN = "human"
"""The name of the person's seat in the result."""
LEFT_STATUS = 3
"""The exit status when the person's input ends before the game does."""
INTERRUPTED_STATUS = 130
"""The exit status when the person stops the game with Ctrl-C (the shell's own for SIGINT)."""
TICK_S = 5.0
"""A person's time per Goof tick at a terminal, by default."""


def bot_names_for(
    names: Sequence[str], players: int | None, spec: games.GameSpec, human: bool = False
) -> tuple[str, ...]:
    """One bot name per seat the bots play (every seat but one with `human`): a single
    name fills them all (of the default table if --players is not given)."""
    if players is None:
        players = default_players(spec) if len(names) == 1 else len(names) + human
    seats = players - human
    if len(names) == 1:
        return tuple(names) * seats
    if len(names) != seats:
        beside = f"the {plural(seats, 'seat', 'seats')} beside yours of " if human else ""
        raise ValueError(
            f"--bots names {plural(len(names), 'bot', 'bots')} for {beside}{players} players; "
            "give one per seat or one for all"
        )
    return tuple(names)


def play(
    game: str,
    names: Sequence[str],
    seed: int,
    options: dict[str, object] | None = None,
    person: HumanSeat | None = None,
) -> PlayedGame:
    """Play one game between reference bots, the person at `person.seat` if given;
    seat i's bot is seeded from `seed` and i."""
    lineup: list[bots.Bot] = []
    for seat, name in enumerate(names):
        if person is not None and seat == person.seat:
            lineup.append(person)
            continue
        bot = bots.load(name, seed * 1000 + seat)
        lineup.append(bot if person is None else person.watching(seat, bot))
    state = play_game(game, lineup, seed, options)
    if person is not None:
        person.finish(state.observation(person.seat))
    return PlayedGame(tuple(names), state, None if person is None else person.seat)


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
        help="play one local game between reference bots, or against them (no server)",
        description="Play one full game in this process between reference bots and print the "
        "result. With --human you play one seat yourself, from the terminal or from piped "
        "input (one move per line).",
        epilog=f"With --human, end of input stops the game with exit status {LEFT_STATUS} and "
        f"Ctrl-C with {INTERRUPTED_STATUS}; neither prints a result.",
    )
    parser.add_argument("game", choices=games.names(), help="the game to play")
    parser.add_argument(
        "--players",
        type=int,
        help=f"number of players (default: one per --bots name, and you with --human; or "
        f"{TABLE_SIZE} within the game's range for one name)",
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
    parser.add_argument(
        "--human",
        action="store_true",
        help="play one seat yourself: you see your hand, the table and the legal actions "
        "numbered from 1, and type a number or the action's text (? lists them again); "
        "--bots then fills the other seats. With --json the table goes to stderr",
    )
    parser.add_argument(
        "--seat", type=int, metavar="N", help="with --human, the seat you play, from 0 (default 0)"
    )
    parser.add_argument(
        "--tick-s",
        type=float,
        metavar="SECONDS",
        help=f"with --human in Goof at a terminal, the seconds you have each tick before "
        f"you wait (default {TICK_S:g}); piped input has no clock: one line per tick, an "
        "empty line waits",
    )
    parser.set_defaults(run=run_play)


def run_play(args: argparse.Namespace) -> int:
    """Play the game that `args` describe and print it."""
    if not args.human and (args.seat is not None or args.tick_s is not None):
        raise ValueError("--seat and --tick-s are for --human")
    spec = games.get(args.game)
    names = bot_names_for(
        [name.strip() for name in args.bots.split(",") if name.strip()],
        args.players,
        spec,
        args.human,
    )
    person = None
    if args.human:
        names = seat_person(names, args.seat or 0)
        person = HumanSeat(
            Console(sys.stdin.fileno(), sys.stderr if args.json else sys.stdout),
            args.game,
            args.seat or 0,
            names,
            tick_s_for(args.tick_s, sys.stdin.isatty()),
        )
    spec.check_players(len(names))
    options = spec.resolve_options(games.parse_option_pairs(args.option), len(names))
    try:
        played = play(args.game, names, args.seed, options, person)
    except SeatLeft as left:
        return stopped(str(left), LEFT_STATUS)
    except KeyboardInterrupt:
        if person is None:
            raise
        person.console.end_line()
        return stopped(f"Ctrl-C in round {person.round}", INTERRUPTED_STATUS)
    if args.log:
        with open(args.log, "w", encoding="utf-8") as out:
            json.dump(played.state.log(), out)
    print(json.dumps(played.summary()) if args.json else table(played))
    return 0


def seat_person(bot_names: Sequence[str], seat: int) -> tuple[str, ...]:
    """Every seat's name: the person's (`HUMAN`) at `seat`, the bots' around it."""
    if not 0 <= seat <= len(bot_names):
        raise ValueError(
            f"--seat {seat} is not a seat of {len(bot_names) + 1} players (0 to {len(bot_names)})"
        )
    return (*bot_names[:seat], HUMAN, *bot_names[seat:])


def tick_s_for(tick_s: float | None, at_terminal: bool) -> float | None:
    """The person's time per Goof tick: --tick-s (or TICK_S) at a terminal; no clock
    for piped input, where each line is one tick's move."""
    if tick_s is not None and tick_s <= 0:
        raise ValueError(f"--tick-s must be above 0, got {tick_s:g}")
    return (tick_s or TICK_S) if at_terminal else None


def stopped(reason: str, status: int) -> int:
    """Say in one line that the person left the game unfinished; the exit status."""
    print(f"arena play: stopped by {reason}; the game is left unfinished", file=sys.stderr)
    return status
