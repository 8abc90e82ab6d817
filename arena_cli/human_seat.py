"""A person's seat at a local game: a `bots.Bot` whose answers are typed in a terminal.

`HumanSeat.act` shows the seat's view (`arena_cli.human_view` draws it) and
reads a move from a file descriptor, a line at a time: from a terminal or from
piped input alike, so a game can be scripted. The other seats' bots are
wrapped (`HumanSeat.watching`) so that what they play is shown as it happens.

Goof is played in ticks: each tick the person has `tick_s` seconds to answer,
or waits (`wait`, the move that does nothing). With `tick_s` None there is no
clock and each tick takes the next line, which is how piped input is read.
"""

from __future__ import annotations

import os
import select
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TextIO

import games
from arena_cli import human_view
from bots.base import Bot, Turn

PROMPT = "your move> "
NO_ANSWER = "wait"
"""What a Goof seat plays when its tick runs out, or for an empty line: it does nothing."""


class SeatLeft(Exception):
    """The person stopped answering: the input ended before the game did."""


class Console:
    """The person's terminal: lines read from `fd` (unbuffered, so a clock can wait on
    it), text written to `out`."""

    def __init__(self, fd: int, out: TextIO) -> None:
        self.fd = fd
        self.out = out
        self._buffer = b""
        self._ended = False
        self._prompted = False
        self._echo = not os.isatty(fd)

    def say(self, lines: Iterable[str]) -> None:
        """Show `lines`, each on a line of its own."""
        self.end_line()
        for line in lines:
            self.out.write(line + "\n")
        self.out.flush()

    def end_line(self) -> None:
        """Close the prompt's line when nothing was typed after it (input ended, time ran out)."""
        if self._prompted:
            self._prompted = False
            self.out.write("\n")
            self.out.flush()

    def ask(self, prompt: str, timeout_s: float | None = None) -> str | None:
        """The next line typed after `prompt`, without its newline; None if `timeout_s`
        seconds pass first (None: no clock). Raises EOFError at the end of the input."""
        # A terminal echoes a line as it is typed: one typed before the prompt (or
        # piped input, never echoed) is written after it here, so the screen reads
        # the same either way.
        echo = self._echo or self.waiting()
        self._prompted = True
        self.out.write(prompt)
        self.out.flush()
        line = self.read_line(timeout_s)
        if line is not None:
            self._prompted = False
            if echo:
                self.out.write(line + "\n")
                self.out.flush()
        return line

    def waiting(self) -> bool:
        """Whether input is there to read already (a line typed ahead)."""
        return b"\n" in self._buffer or bool(select.select([self.fd], [], [], 0)[0])

    def read_line(self, timeout_s: float | None) -> str | None:
        """The next line of input; None after `timeout_s` seconds without one."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            end = self._buffer.find(b"\n")
            if end < 0 and self._ended:
                if not self._buffer:
                    raise EOFError
                end = len(self._buffer)  # the last line had no newline: it still counts
            if end >= 0:
                line, self._buffer = self._buffer[:end], self._buffer[end + 1 :]
                return line.decode("utf-8", "replace").rstrip("\r")
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                    return None
            chunk = os.read(self.fd, 4096)
            self._buffer += chunk
            self._ended = not chunk


class HumanSeat(Bot):
    """The seat a person plays: `act` shows the view and reads the move."""

    name = "human"

    def __init__(
        self,
        console: Console,
        game: str,
        seat: int,
        names: Sequence[str],
        tick_s: float | None = None,
    ) -> None:
        super().__init__(None)
        self.console = console
        self.spec = games.get(game)
        self.seat = seat
        self.names = tuple(names)
        self.tick_s = tick_s
        self.round = 1
        self._previous: Mapping[str, Any] | None = None
        self._introduced = False

    def show(self, lines: Iterable[str]) -> None:
        """Show `lines` to the person, after the introduction the first time."""
        if not self._introduced:
            self._introduced = True
            lines = [*human_view.intro(self.spec.name, self.names, self.seat), *lines]
        self.console.say(lines)

    def watching(self, seat: int, bot: Bot) -> Bot:
        """`bot`, playing `seat`, made to show the person each move it makes.

        In Goof every seat moves every tick: the person's next tick shows them
        all, as resolved, so the bot is left as it is.
        """
        return bot if self.spec.simultaneous else WatchedBot(self, seat, bot)

    def saw(self, seat: int, phase: str, action: str) -> None:
        """Show that `seat` played `action` (in `phase`, which says whether it was face down)."""
        what = human_view.describe(self.spec.name, phase, action)
        self.show([f"seat {seat} ({self.names[seat]}) {what}"])

    def finish(self, view: Mapping[str, Any]) -> None:
        """Show what happened since the person's last move, from the seat's final view."""
        self.show([*human_view.news(self._previous, view), "Game over."])

    def act(self, turn: Turn) -> str:
        """Show the table and read lines until one names a legal action (in Goof, until
        the tick's time runs out: then `wait`)."""
        view = turn.observation
        self.round = view["round"]
        self.show(
            [
                *human_view.news(self._previous, view),
                *human_view.table(view),
                *human_view.numbered(turn.legal),
            ]
        )
        self._previous = view
        default = NO_ANSWER if self.spec.simultaneous else None
        tick_s = self.tick_s if self.spec.simultaneous else None
        deadline = None if tick_s is None else time.monotonic() + tick_s
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                text = self.console.ask(PROMPT, left)
            except EOFError:
                self.console.end_line()
                raise SeatLeft(f"end of input in round {self.round}") from None
            if text is None:
                self.console.say([f"(no move in {tick_s:g} s: {NO_ANSWER})"])
                return NO_ANSWER
            entry = human_view.read_entry(text, turn.legal, view, default)
            if isinstance(entry, human_view.Move):
                return entry.action
            if isinstance(entry, human_view.ListActions):
                self.console.say(human_view.numbered(turn.legal))
            else:
                self.console.say([f"not taken: {entry.reason}"])


class WatchedBot(Bot):
    """A bot whose every move is shown to the person at the table as it is made."""

    def __init__(self, person: HumanSeat, seat: int, bot: Bot) -> None:
        super().__init__(None)
        self.person = person
        self.seat = seat
        self.bot = bot
        self.name = bot.name

    def act(self, turn: Turn) -> str:
        action = self.bot.act(turn)
        self.person.saw(self.seat, turn.observation["phase"], action)
        return action
