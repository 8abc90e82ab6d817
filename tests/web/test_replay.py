"""Replay frames, checked against the engines: every card accounted for, every trick kept."""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any

import pytest

import games
from bots.local import play_game
from bots.random_bot import RandomBot
from bots.rules import RulesBot
from games import golden10, goodge
from ladder.web import replay
from ladder.web.replay import build_frames
from ladder.web.schemas import BotRefOut, FrameOut

DECK_SIZES = {"goodge": 51, "golden10": 56}


def seats(n: int) -> list[BotRefOut]:
    return [BotRefOut(id=f"b{i}", name=f"bot{i}", version="1") for i in range(n)]


def finished_log(
    game: str, players: int, seed: int, rules: bool = False, **options: Any
) -> tuple[dict[str, Any], games.State]:
    kind = RulesBot if rules else RandomBot
    state = play_game(game, [kind(seed=seed * 10 + i) for i in range(players)], seed, options)
    return dict(state.log()), state


def cards_of(frame: FrameOut) -> Counter[str]:
    """Every card the frame shows: seats' zones, table zones and the trick being shown."""
    shown: Counter[str] = Counter()
    for seat in frame.seats:
        for zone in seat.zones:
            shown.update(zone.cards)
    for zone in frame.table:
        shown.update(zone.cards)
    if frame.kind == "trick":
        shown.update(play.action for play in frame.plays)
    return shown


def play_moves(log: dict[str, Any]) -> list[tuple[int, str]]:
    """The card plays of a trick game's log (not bids, discards or trump calls), by the engine."""
    state = games.get(log["game"]).new_game(
        log["players"], log["seed"], log["options"], log["deal"]
    )
    plays = []
    for seat, action in log["moves"]:
        if state.observation(seat)["phase"] == "play":
            plays.append((seat, action))
        state.apply(seat, action)
    return plays


@pytest.mark.parametrize(
    ("game", "players", "seed", "rules", "options"),
    [
        ("goodge", 4, 1, True, {}),
        ("goodge", 3, 2, False, {"one_high": False}),
        ("goodge", 4, 3, False, {"all_pass": "redeal", "max_rounds": 8}),
        ("golden10", 4, 4, True, {}),
        ("golden10", 3, 5, False, {}),
        ("golden10", 7, 6, False, {}),
    ],
)
def test_trick_games_keep_every_card_and_every_trick(
    game: str, players: int, seed: int, rules: bool, options: dict[str, Any]
) -> None:
    log, final = finished_log(game, players, seed, rules, **options)
    frames, sampled = build_frames(log, seats(players))
    assert sampled is False
    assert frames[0].kind == "deal" and frames[-1].kind == "end"
    assert [f.index for f in frames] == list(range(len(frames)))
    # Every frame shows each card of the deck exactly once.
    for frame in frames:
        shown = cards_of(frame)
        assert sum(shown.values()) == DECK_SIZES[game], (frame.index, frame.title)
        assert max(shown.values()) == 1, (frame.index, frame.title)
    # The tricks, in order, are exactly the log's card plays.
    tricks = [f for f in frames if f.kind == "trick"]
    shown_plays = [(p.seat, p.action) for f in tricks for p in f.plays]
    assert shown_plays == play_moves(log)
    assert all(len(f.plays) == players for f in tricks)
    # The winner leads the next trick of the round.
    for this, after in itertools.pairwise(tricks):
        if this.round == after.round:
            assert after.plays[0].seat == this.winner
    # One scoring frame per round; the last one shows the final scores.
    scored = [f for f in frames if f.kind in ("round", "end")]
    assert len(scored) == final.round
    assert [seat.score for seat in frames[-1].seats] == list(final.result().scores)
    assert frames[-1].move == len(log["moves"])


def test_goodge_frames_show_bids_discards_and_trump() -> None:
    log, _ = finished_log("goodge", 4, 9, rules=True)
    frames, _ = build_frames(log, seats(4))
    kinds = Counter(f.kind for f in frames)
    assert kinds["bid"] > 0 and kinds["discard"] > 0 and kinds["trump"] > 0
    state = games.get("goodge").new_game(4, log["seed"], log["options"], log["deal"])
    for frame in frames[1:]:
        if frame.kind in ("bid", "discard", "trump"):
            seat, action = log["moves"][frame.move - 1]
            assert frame.actor == seat and [p.action for p in frame.plays] == [action]
    # The first bid frame is the first move of the game, shown with the state after it.
    first = frames[1]
    assert first.kind == "bid" and first.move == 1
    seat, action = log["moves"][0]
    state.apply(seat, action)
    assert [z.cards for z in first.seats[seat].zones if z.name == "hand"] == [
        state.zones()[f"hand:{seat}"]
    ]
    trump = next(f for f in frames if f.kind == "trump")
    assert "trump" in trump.info and trump.text.endswith("trump")


def test_goof_frames_sample_ticks_but_keep_round_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    log, final = finished_log("goof", 3, 7, rules=True)
    ticks = len(log["moves"])
    full, sampled = build_frames(log, seats(3))
    assert sampled is False or ticks > replay.MAX_TICK_FRAMES
    monkeypatch.setattr(replay, "MAX_TICK_FRAMES", 50)
    frames, sampled = build_frames(log, seats(3))
    assert sampled is True
    assert len(frames) <= 50 + 2 + 2 * final.round
    ends = [f for f in frames if f.kind in ("round", "end")]
    assert len(ends) == final.round == len([f for f in full if f.kind in ("round", "end")])
    assert frames[-1].kind == "end" and frames[-1].move == ticks
    assert [s.score for s in frames[-1].seats] == list(final.result().scores)
    moves = [f.move for f in frames]
    assert moves == sorted(moves)
    # A tick frame lists that tick's moves as the log has them.
    for frame in frames:
        if frame.kind == "tick":
            tick = log["moves"][frame.move - 1]
            assert [(p.seat, p.action) for p in frame.plays] == [tuple(m) for m in tick]


def test_goof_frames_show_every_card_of_every_deck() -> None:
    log, _ = finished_log("goof", 2, 3, rules=False, rounds=1)
    frames, _ = build_frames(log, seats(2))
    state = games.get("goof").new_game(2, log["seed"], log["options"], log["deal"])
    assert isinstance(state, games.TickState)
    for tick_no, tick in enumerate(log["moves"], start=1):
        state.apply_tick(dict(tick), [seat for seat, _ in tick])
        frame = next((f for f in frames if f.move == tick_no and f.kind == "tick"), None)
        if frame is None:
            continue
        obs = state.observation(0)
        for seat in frame.seats:
            zones = {z.name: z for z in seat.zones}
            spot = obs["tableau"][seat.seat]
            assert zones["line"].cards == spot["line"]
            assert zones["stock"].count == spot["stock"]
            assert zones["waste"].count == spot["waste"]
            assert zones["goof"].count == spot["goof_pile"]
        assert [(z.cards[0], z.count) for z in frame.table] == [
            (p["top"], p["size"]) for p in obs["piles"]
        ]


def test_trick_winners_match_the_engine() -> None:
    checked = 0
    for seed in range(12):
        for game in ("goodge", "golden10"):
            players = 3 + seed % 2
            options = {"one_high": bool(seed % 3)} if game == "goodge" else {}
            log, _ = finished_log(game, players, seed, **options)
            state = games.get(game).new_game(players, log["seed"], log["options"], log["deal"])
            trick: list[tuple[int, str]] = []
            for seat, action in log["moves"]:
                obs = state.observation(0)
                before = state.round
                state.apply(seat, action)
                if obs["phase"] != "play":
                    continue
                trick.append((seat, action))
                if len(trick) == players:
                    if game == "goodge":
                        winner = goodge.trick_winner(trick, obs["trump"], options["one_high"])
                    else:
                        winner = golden10.trick_winner(trick)
                    if state.round == before and not state.is_over():
                        assert state.to_act() == (winner,)
                        checked += 1
                    trick = []
    assert checked > 500


def test_logs_that_do_not_replay_are_errors() -> None:
    log, _ = finished_log("golden10", 4, 1)
    with pytest.raises(ValueError, match="seats"):
        build_frames(log, seats(3))
    cut = dict(log, moves=log["moves"][:-1])
    with pytest.raises(ValueError, match="ends before"):
        build_frames(cut, seats(4))
    with pytest.raises(ValueError):
        build_frames(dict(log, game="chess"), seats(4))
    with pytest.raises(ValueError):
        build_frames(dict(log, moves=[[0, "99Z"], *log["moves"]]), seats(4))
