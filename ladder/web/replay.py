"""Replay frames: a finished game's log stepped through the engine, frame by frame.

The log's moves are applied to a fresh `spec.new_game(players, seed, options,
deal)`; a frame is taken at each point worth showing:

- The Goodge Rules: the deal of each round, every bid or pass, every
  discard, the trump, the end of every trick, the scoring of each round.
- Golden 10: the deal, the end of every trick, the scoring of each round.
- Game of Goof: every tick (every n-th when a game has very many, always
  keeping the last tick of each round), and the scoring of each round.

Only for finished games: every card is shown face up, so this must never
run on a game still being played.

Each game has its renderer in `RENDERERS`, by the game's name; a test checks
that every game of `games.names()` has one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import games
from games import golden10, goodge, goof
from ladder.web.schemas import BotRefOut, FrameOut, PlayOut, SeatOut, ZoneOut

MAX_TICK_FRAMES = 500
"""At most about this many tick frames for one game of Goof."""


class Frames:
    """Collects the frames of one game."""

    def __init__(self, state: games.State, seats: Sequence[BotRefOut]) -> None:
        self.state = state
        self.seats = seats
        self.frames: list[FrameOut] = []
        self.move = 0
        self.sampled = False
        """True when only some of the ticks got a frame (Goof)."""

    def who(self, seat: int) -> str:
        """`seat 2 (alice)`."""
        return f"seat {seat} ({self.seats[seat].name})"

    def add(
        self,
        *,
        kind: str,
        title: str,
        text: str,
        seats: list[SeatOut],
        table: list[ZoneOut],
        info: dict[str, str],
        actor: int | None = None,
        plays: list[PlayOut] | None = None,
        winner: int | None = None,
        round_: int | None = None,
    ) -> None:
        self.frames.append(
            FrameOut(
                index=len(self.frames),
                move=self.move,
                round=self.state.round if round_ is None else round_,
                kind=kind,  # type: ignore[arg-type]
                title=title,
                text=text,
                actor=actor,
                plays=plays or [],
                winner=winner,
                seats=seats,
                table=table,
                info=info,
            )
        )

    def seat(self, seat: int, score: int, note: str, zones: list[ZoneOut]) -> SeatOut:
        bot = self.seats[seat]
        return SeatOut(seat=seat, bot_id=bot.id, bot=bot.name, score=score, note=note, zones=zones)


def zone(name: str, label: str, cards: Sequence[str], count: int | None = None) -> ZoneOut:
    """A zone showing `cards` (and holding `count` cards, if more than shown)."""
    return ZoneOut(
        name=name, label=label, cards=list(cards), count=len(cards) if count is None else count
    )


def build_frames(log: Mapping[str, Any], seats: Sequence[BotRefOut]) -> tuple[list[FrameOut], bool]:
    """The frames of the finished game of `log`; True if Goof ticks were sampled.

    Raises ValueError if the log does not replay (unknown game, illegal move).
    """
    spec = games.get(str(log["game"]))
    players = int(log["players"])
    if len(seats) != players:
        raise ValueError(f"the log has {players} seats but the replay names {len(seats)}")
    render = RENDERERS.get(spec.name)
    if render is None:
        raise ValueError(f"no replay viewer for {spec.name}")
    state = spec.new_game(players, int(log["seed"]), log.get("options"), log.get("deal"))
    frames = Frames(state, seats)
    render(frames, list(log["moves"]))
    if not state.is_over():
        raise ValueError("the log ends before the game does")
    return frames.frames, frames.sampled


# The Goodge Rules ---------------------------------------------------------------

_SUIT_NAMES = dict(zip(goodge.SUITS, goodge.SUIT_NAMES, strict=True))


def _goodge_view(
    frames: Frames,
    zones: Mapping[str, list[str]],
    obs: goodge.GoodgeObservation,
    minus: tuple[int, str] | None = None,
) -> tuple[list[SeatOut], list[ZoneOut], dict[str, str]]:
    """Seats, table and info of a Goodge state (`minus`: a card just played from a hand)."""
    seats = []
    for seat in range(frames.state.players):
        hand = [c for c in zones[f"hand:{seat}"] if minus is None or (seat, c) != minus]
        won = zones[f"won:{seat}"]
        notes = []
        if obs["dealer"] == seat:
            notes.append("dealer")
        if obs["goodge"] == seat:
            notes.append(f"Goodge, bid {obs['bid']}")
        if seat in obs["passed"] and obs["phase"] == "bid":
            notes.append("passed")
        notes.append(f"{obs['tricks_won'][seat]} tricks, {obs['taken'][seat]} pts taken")
        seats.append(
            frames.seat(
                seat,
                obs["scores"][seat],
                " · ".join(notes),
                [zone("hand", "hand", hand), zone("won", "won", won)],
            )
        )
    table = [zone("stash", "Stash", zones["stash"])]
    info = {"round": str(obs["round"]), "phase": str(obs["phase"])}
    if obs["high_bid"] is not None:
        info["high bid"] = f"{obs['high_bid']} by seat {obs['high_bidder']}"
    if obs["trump"]:
        info["trump"] = _SUIT_NAMES[obs["trump"]]
    info["target"] = str(obs["target"])
    return seats, table, info


def _goodge_action(text: str) -> str:
    bid = goodge.bid_value(text)
    if bid is not None:
        return f"bids {bid}"
    trump = goodge.named_trump(text)
    if trump is not None:
        return f"names {_SUIT_NAMES[trump]} trump"
    if goodge.TABLE.parse(text) == goodge.PASS:
        return "passes"
    return f"discards {text}"


def _goodge(frames: Frames, moves: list[Any]) -> None:
    state = frames.state
    assert isinstance(state, goodge.GoodgeState)
    n = state.players
    one_high = goodge.GoodgeOptions.of(state.options).one_high
    obs = state.observation(0)
    frames.add(
        kind="deal",
        title="Round 1: the deal",
        text=f"{frames.who(obs['dealer'])} deals",
        **_parts(_goodge_view(frames, state.zones(), obs)),
    )
    trick: list[tuple[int, str]] = []
    for seat, text in moves:
        before = state.observation(0)
        round_before = state.round
        if before["phase"] == "play":
            trick.append((seat, text))
            if len(trick) < n:
                state.apply(seat, text)
                frames.move += 1
                continue
            # The trick is complete: show it on the table before it is gathered.
            zones = state.zones()
            state.apply(seat, text)
            frames.move += 1
            winner = goodge.trick_winner(trick, before["trump"], one_high)
            points = sum(goodge.card_points(card) for _, card in trick)
            number = len(before["tricks"]) + 1
            seats, table, info = _goodge_view(frames, zones, before, minus=(seat, text))
            frames.add(
                kind="trick",
                title=f"Round {round_before}: trick {number}",
                text=f"{frames.who(seat)} plays {text}; {frames.who(winner)} takes the trick"
                f" ({points} pts)",
                actor=seat,
                plays=[PlayOut(seat=s, action=card) for s, card in trick],
                winner=winner,
                seats=seats,
                table=table,
                info=info,
                round_=round_before,
            )
            trick = []
        else:
            state.apply(seat, text)
            frames.move += 1
            after = state.observation(0)
            if state.round == round_before and not state.is_over():
                kind = before["phase"]
                frames.add(
                    kind=kind,
                    title=f"Round {round_before}: {'bidding' if kind == 'bid' else kind}",
                    text=f"{frames.who(seat)} {_goodge_action(text)}",
                    actor=seat,
                    plays=[PlayOut(seat=seat, action=text)],
                    **_parts(_goodge_view(frames, state.zones(), after)),
                )
        if state.round != round_before or state.is_over():
            _goodge_round(frames, round_before)


def _goodge_round(frames: Frames, number: int) -> None:
    state = frames.state
    assert isinstance(state, goodge.GoodgeState)
    obs = state.observation(0)
    last = obs["last_round"]
    assert last is not None, "a round was just scored"
    if last["redeal"]:
        text = "everyone passed: nobody scores"
    else:
        goodge_seat = last["goodge"]
        verdict = "makes" if last["made"] else "misses"
        text = (
            f"{frames.who(goodge_seat)} {verdict} the bid of {last['bid']} "
            f"with {last['points'][goodge_seat]} pts; changes "
            + ", ".join(f"{d:+d}" for d in last["deltas"])
        )
    over = state.is_over()
    seats, table, info = _goodge_view(frames, state.zones(), obs)
    info["scores"] = " / ".join(str(s) for s in obs["scores"])
    frames.add(
        kind="end" if over else "round",
        title=f"Round {number} scored" + (": game over" if over else f"; round {number + 1} dealt"),
        text=text,
        seats=seats,
        table=table,
        info=info,
        round_=number,
    )


def _parts(
    view: tuple[list[SeatOut], list[ZoneOut], dict[str, str]],
) -> dict[str, Any]:
    seats, table, info = view
    return {"seats": seats, "table": table, "info": info}


# Golden 10 ------------------------------------------------------------------------


def _golden10_view(
    frames: Frames,
    zones: Mapping[str, list[str]],
    obs: golden10.Golden10Observation,
    minus: tuple[int, str] | None = None,
) -> tuple[list[SeatOut], list[ZoneOut], dict[str, str]]:
    seats = []
    for seat in range(frames.state.players):
        hand = [c for c in zones[f"hand:{seat}"] if minus is None or (seat, c) != minus]
        notes = ["dealer"] if obs["dealer"] == seat else []
        notes.append(f"{obs['red_points_taken'][seat]} red pts taken")
        if obs["left_over_taker"] == seat:
            notes.append("took the set-aside cards")
        seats.append(
            frames.seat(
                seat,
                obs["scores"][seat],
                " · ".join(notes),
                [zone("hand", "hand", hand), zone("won", "won", zones[f"won:{seat}"])],
            )
        )
    table = [zone("left_over", "Set aside", zones["left_over"])]
    info = {"round": f"{obs['round']} of {obs['rounds']}", "goal": "lowest total wins"}
    return seats, table, info


def _golden10(frames: Frames, moves: list[Any]) -> None:
    state = frames.state
    assert isinstance(state, golden10.Golden10State)
    n = state.players
    obs = state.observation(0)
    frames.add(
        kind="deal",
        title="Round 1: the deal",
        text=f"{frames.who(obs['dealer'])} deals",
        **_parts(_golden10_view(frames, state.zones(), obs)),
    )
    trick: list[tuple[int, str]] = []
    for seat, text in moves:
        trick.append((seat, text))
        if len(trick) < n:
            state.apply(seat, text)
            frames.move += 1
            continue
        before = state.observation(0)
        round_before = state.round
        zones = state.zones()
        state.apply(seat, text)
        frames.move += 1
        winner = golden10.trick_winner(trick)
        seats, table, info = _golden10_view(frames, zones, before, minus=(seat, text))
        frames.add(
            kind="trick",
            title=f"Round {round_before}: trick {len(before['tricks']) + 1}",
            text=f"{frames.who(seat)} plays {text}; {frames.who(winner)} takes the trick",
            actor=seat,
            plays=[PlayOut(seat=s, action=card) for s, card in trick],
            winner=winner,
            seats=seats,
            table=table,
            info=info,
            round_=round_before,
        )
        trick = []
        if state.round != round_before or state.is_over():
            obs = state.observation(0)
            last = obs["last_round"]
            assert last is not None, "a round was just scored"
            over = state.is_over()
            seats, table, info = _golden10_view(frames, state.zones(), obs)
            info["scores"] = " / ".join(str(s) for s in obs["scores"])
            frames.add(
                kind="end" if over else "round",
                title=f"Round {round_before} scored"
                + (": game over" if over else f"; round {round_before + 1} dealt"),
                text=f"{frames.who(last['yellow10'])} took the yellow 10; changes "
                + ", ".join(f"{d:+d}" for d in last["score_change"]),
                seats=seats,
                table=table,
                info=info,
                round_=round_before,
            )


# Game of Goof -----------------------------------------------------------------------


def _goof_view(
    frames: Frames, state: goof.GoofState
) -> tuple[list[SeatOut], list[ZoneOut], dict[str, str]]:
    obs = state.observation(0)
    zones = state.zones()
    seats = []
    for spot in obs["tableau"]:
        seat = spot["seat"]
        goof_pile = zones[f"goof:{seat}"]
        waste = zones[f"waste:{seat}"]
        seats.append(
            frames.seat(
                seat,
                obs["scores"][seat],
                f"{spot['area_cards']} card{'' if spot['area_cards'] == 1 else 's'} in the area"
                " this round",
                [
                    zone("goof", "goof pile", goof_pile[:1], len(goof_pile)),
                    zone("line", "goof line", spot["line"]),
                    zone("stock", "stock", [], spot["stock"]),
                    zone("waste", "waste", waste[:1], len(waste)),
                ],
            )
        )
    table = [
        zone(f"pile:{p['id']}", f"pile {p['id']}", [p["top"]], p["size"]) for p in obs["piles"]
    ]
    info = {"round": str(obs["round"]), "tick": str(obs["tick"])}
    if obs["one_unders"]:
        info["one-unders"] = str(obs["one_unders"])
    return seats, table, info


def _goof(frames: Frames, ticks: list[Any]) -> None:
    state = frames.state
    assert isinstance(state, goof.GoofState)
    stride = max(1, math.ceil(len(ticks) / MAX_TICK_FRAMES))
    frames.add(
        kind="deal",
        title="Round 1: the deal",
        text="every player lays out a goof pile, a goof line and a stock",
        **_parts(_goof_view(frames, state)),
    )
    for number, tick in enumerate(ticks, start=1):
        round_before = state.round
        tick_before = state.observation(0)["tick"]
        order = [seat for seat, _ in tick]
        outcome = state.apply_tick({seat: action for seat, action in tick}, order)
        frames.move += 1
        ended = state.round != round_before or state.is_over()
        if number % stride and not ended:
            continue
        plays = [
            PlayOut(seat=seat, action=str(action), took=took) for seat, action, took in outcome
        ]
        moved = [p for p in plays if p.action not in ("wait", "turn")]
        text = "; ".join(
            f"{frames.who(p.seat)} plays {p.action}" + ("" if p.took else " (too late)")
            for p in moved
        )
        title = f"Round {round_before}: tick {tick_before + 1}"
        if not ended:
            frames.add(
                kind="tick",
                title=title,
                text=text or "nobody plays a card",
                plays=plays,
                **_parts(_goof_view(frames, state)),
            )
            continue
        obs = state.observation(0)
        end = obs["past_rounds"][-1]
        over = state.is_over()
        seats, table, info = _goof_view(frames, state)
        info["scores"] = " / ".join(str(s) for s in obs["scores"])
        why = {
            "goof": f"{frames.who(end['goof'])} calls Goof" if end["goof"] is not None else "",
            "stall": "the round stalled",
            "max_ticks": "the round ran out of ticks",
        }.get(end["end"], end["end"])
        frames.add(
            kind="end" if over else "round",
            title=f"{title}; round {round_before} scored"
            + (": game over" if over else f", round {round_before + 1} dealt"),
            text=(f"{text}; " if text else "")
            + f"{why}; round scores "
            + ", ".join(f"{s:+d}" for s in end["scores"]),
            plays=plays,
            seats=seats,
            table=table,
            info=info,
            round_=round_before,
        )
    frames.sampled = stride > 1


RENDERERS: dict[str, Callable[[Frames, list[Any]], None]] = {
    goodge.SPEC_NAME: _goodge,
    golden10.SPEC_NAME: _golden10,
    goof.SPEC_NAME: _goof,
}
"""Per game, what adds the frames of a whole game (the log's moves) to `Frames`."""
