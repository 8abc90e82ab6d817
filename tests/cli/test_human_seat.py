"""The person's seat: lines read from a real pipe, a seat played in a real local game."""

from __future__ import annotations

import contextlib
import io
import os
import re
from collections.abc import Iterator

import pytest

import games
from arena_cli.human_seat import Console, HumanSeat, SeatLeft
from arena_cli.play import play
from bots.local import turn_for


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    """A pipe: the end a console reads, the end a test writes (closed after the test)."""
    reader, writer = os.pipe()
    yield reader, writer
    for fd in (reader, writer):
        with contextlib.suppress(OSError):  # the test closed it to end the input
            os.close(fd)


def test_console_reads_lines_the_last_without_newline_then_end_of_input(
    pipe: tuple[int, int],
) -> None:
    reader, writer = pipe
    os.write(writer, "one\r\ntwo\nthré".encode())
    os.close(writer)
    console = Console(reader, io.StringIO())
    assert [console.read_line(None) for _ in range(3)] == ["one", "two", "thré"]
    with pytest.raises(EOFError):
        console.read_line(None)


def test_console_with_a_clock_returns_none_when_nothing_comes_then_the_line(
    pipe: tuple[int, int],
) -> None:
    reader, writer = pipe
    console = Console(reader, io.StringIO())
    assert console.read_line(0.05) is None
    os.write(writer, b"turn\n")
    assert console.read_line(30) == "turn"


def test_piped_input_is_echoed_after_the_prompt(pipe: tuple[int, int]) -> None:
    reader, writer = pipe
    out = io.StringIO()
    os.write(writer, b"3\n")
    assert Console(reader, out).ask("your move> ") == "3"
    assert out.getvalue() == "your move> 3\n"


def seat_for(game: str, players: int, reader: int, tick_s: float | None = None) -> HumanSeat:
    names = ["human", *["rules"] * (players - 1)]
    return HumanSeat(Console(reader, io.StringIO()), game, 0, names, tick_s)


def shown(seat: HumanSeat) -> str:
    out = seat.console.out
    assert isinstance(out, io.StringIO)
    return out.getvalue()


def test_a_goof_tick_with_no_answer_in_time_waits(pipe: tuple[int, int]) -> None:
    reader, _ = pipe
    state = games.get("goof").new_game(2, 1)
    seat = seat_for("goof", 2, reader, tick_s=0.05)
    assert seat.act(turn_for(state, 0)) == "wait"
    assert shown(seat).endswith("your move> \n(no move in 0.05 s: wait)\n")


def test_the_seat_asks_again_after_a_bad_line_and_a_question(pipe: tuple[int, int]) -> None:
    reader, writer = pipe
    state = games.get("golden10").new_game(3, 2)
    while state.to_act()[0] != 0:
        seat_now = state.to_act()[0]
        state.apply(seat_now, state.legal_actions(seat_now)[0])
    turn = turn_for(state, 0)
    os.write(writer, b"0\n?\n" + turn.legal[-1].lower().encode() + b"\n")
    seat = seat_for("golden10", 3, reader)
    assert seat.act(turn) == turn.legal[-1]
    text = shown(seat)
    assert text.startswith("Golden 10 · 3 players · you are seat 0; seat 1 rules, seat 2 rules")
    assert (
        f"your move> 0\nnot taken: there is no action 0: they are numbered 1 to {len(turn.legal)}\n"
        in text
    )
    assert "your move> ?\n  1) " in text


def test_end_of_input_leaves_the_seat(pipe: tuple[int, int]) -> None:
    reader, writer = pipe
    os.close(writer)
    state = games.get("golden10").new_game(3, 2)
    seat = seat_for("golden10", 3, reader)
    with pytest.raises(SeatLeft, match="end of input in round 1"):
        seat.act(turn_for(state, state.to_act()[0]))


def test_a_local_game_shows_the_bots_moves_but_never_the_goodges_discards(
    pipe: tuple[int, int],
) -> None:
    reader, writer = pipe
    # The person passes (at seed 1 a bot bids, so a bot is the Goodge), then plays the
    # first legal card each time.
    os.write(writer, b"pass\n" + b"1\n" * 40)
    names = ["human", "rules", "rules"]
    seat = HumanSeat(Console(reader, io.StringIO()), "goodge", 0, names)
    played = play("goodge", names, 1, {"max_rounds": 1}, seat)
    assert played.summary()["human_seat"] == 0 and played.summary()["bots"] == names
    text = shown(seat)
    assert "seat 1 (rules) bids " in text or "seat 2 (rules) bids " in text
    discards = [line for line in text.splitlines() if "discards" in line and "(rules)" in line]
    assert len(discards) == 3, text
    assert all(line.endswith(") discards a card face down") for line in discards)
    # The game again from its log, to learn what the bot discarded.
    log = played.state.log()
    again = games.get("goodge").new_game(3, log["seed"], log["options"])
    stash = []
    for mover, action in log["moves"]:
        if again.observation(mover)["phase"] == "discard":
            stash.append(str(action))
        again.apply(mover, action)
    assert len(stash) == 3 and not set(stash) & set(re.findall(r"\w+", text)), stash
    assert text.endswith("Game over.\n") and "Round 1: seat " in text
