"""One match, played through the engines and the seat channels.

A match is one game, or with duplicate rotation one game per seat
rotation on the same seed, so that every bot holds every position of the
same deal. Each move has a deadline and each bot a time bank for the whole
match; a late or illegal answer gets a legal default and a strike; too many
strikes, or a disconnect past the grace period, forfeits the match: the bot
is ranked last and a stand-in plays its seats to the end.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import random
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import games
from games.core import rank_scores
from ladder.fairness import commitment
from ladder.records import (
    EventType,
    Forfeit,
    GameEnd,
    GameResult,
    GameStart,
    MatchRequest,
    MatchResult,
    Replay,
    Strike,
    StrikeKind,
)
from ladder.wording import plural
from referee.channels import ActRequest, Answer, SeatChannel, SeatGone, SeatTimeout

Event = dict[str, Any]
"""A referee event as JSON: `{"type": ..., ...}` (see docs/protocol.md)."""


@dataclass(frozen=True)
class Limits:
    """The clocks and patience of a match."""

    time_bank_ms: int = 5_000
    max_strikes: int = 3


@dataclass
class BotRecord:
    """What the runner tracks of one bot during a match."""

    bank_ms: float
    strikes: int = 0
    forfeit: str | None = None


@dataclass(frozen=True)
class Choice:
    """The action played for a seat; `ms` is the bot's answer time if it chose."""

    action: str
    ms: float | None = None
    reached: float = math.inf
    """When the answer reached the referee, by the match's clock: when the seat was asked
    plus the bot's own time, so a relayed answer is placed as if the relay took no time."""

    @property
    def answered(self) -> bool:
        """True if the bot itself chose in time (not a default or stand-in)."""
        return self.ms is not None


@dataclass(frozen=True)
class GameOutcome:
    """One finished game of a match: who sat where and the engine's result."""

    seats: tuple[str, ...]
    result: games.Result
    rounds: int
    log: games.GameLog
    events: list[Event] = field(default_factory=list)


def rotation(bot_ids: Sequence[str], shift: int) -> tuple[str, ...]:
    """Seat order of rotation `shift`: entry i of `bot_ids` sits at seat i + shift."""
    n = len(bot_ids)
    return tuple(bot_ids[(seat - shift) % n] for seat in range(n))


def aggregate(
    request: MatchRequest,
    outcomes: Sequence[GameOutcome],
    forfeits: Sequence[str],
    forfeit_reasons: Mapping[str, str] | None = None,
    strikes: Mapping[str, int] | None = None,
) -> MatchResult:
    """The match result: per entry of `request.bot_ids`, scores summed over games.

    Ranks follow the totals (higher or lower is better, as the game says);
    forfeiting bots come after all others and share the last rank. The
    result reveals the seed.
    """
    if request.seed is None:
        raise ValueError(f"match {request.id} has no seed")
    n = request.players
    spec = games.get(request.game)
    totals = [0] * n
    for shift, outcome in enumerate(outcomes):
        for entry in range(n):
            totals[entry] += outcome.result.scores[(entry + shift) % n]
    playing = [entry for entry in range(n) if request.bot_ids[entry] not in forfeits]
    ranks = [0] * n
    standing = rank_scores([totals[e] for e in playing], spec.higher_is_better)
    for entry, rank in zip(playing, standing, strict=True):
        ranks[entry] = rank
    for entry in range(n):
        if request.bot_ids[entry] in forfeits:
            ranks[entry] = len(playing) + 1
    return MatchResult(
        match_id=request.id,
        game=request.game,
        bots=request.bot_ids,
        scores=tuple(totals),
        ranks=tuple(ranks),
        forfeits=tuple(sorted(set(forfeits))),
        games=tuple(
            GameResult(
                seed=request.seed,
                seats=outcome.seats,
                scores=outcome.result.scores,
                ranks=outcome.result.ranks,
                rounds=outcome.rounds,
            )
            for outcome in outcomes
        ),
        forfeit_reasons=dict(forfeit_reasons or {}),
        strikes=dict(strikes or {}),
    )


class MatchRunner:
    """Plays one match; `run()` returns its result and replays."""

    def __init__(
        self,
        request: MatchRequest,
        channels: Mapping[str, SeatChannel],
        limits: Limits,
        on_event: Callable[[Event], None] = lambda event: None,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        on_latency: Callable[[float, bool], None] = lambda seconds, relayed: None,
        on_strike: Callable[[StrikeKind], None] = lambda kind: None,
    ) -> None:
        if request.seed is None:
            raise ValueError(f"match {request.id} has no seed: the store draws it when storing")
        self.request = request
        self.seed = request.seed
        self.spec = games.get(request.game)
        self.options = self.spec.resolve_options(request.options, request.players)
        self._channels = channels
        self._limits = limits
        self._on_event = on_event
        self._on_latency = on_latency
        self._on_strike = on_strike
        self._clock = clock
        self._wall = wall
        self._bots = {bot: BotRecord(float(limits.time_bank_ms)) for bot in request.bot_ids}
        self._events: list[Event] = []
        # Request ids: a random prefix per match and a count, not a UUID per move. They
        # need only be unique: a bot can answer only the requests sent to it.
        self._request_prefix = uuid.uuid4().hex[:16] + "-"
        self._requests = itertools.count(1)

    @property
    def forfeits(self) -> list[str]:
        """Bots that have forfeited so far."""
        return [bot for bot, record in self._bots.items() if record.forfeit is not None]

    async def run(self) -> tuple[MatchResult, list[Replay]]:
        """Play every game of the match; the result and one replay per game.

        The bots hear the match's end from whoever stores the result, once it is stored
        (`referee.matches`): a result the store refuses is never announced.
        """
        shifts = range(self.request.players) if self.request.duplicate else range(1)
        outcomes = [
            await self._play_game(index, rotation(self.request.bot_ids, shift))
            for index, shift in enumerate(shifts)
        ]
        result = aggregate(
            self.request,
            outcomes,
            self.forfeits,
            forfeit_reasons={bot: r.forfeit for bot, r in self._bots.items() if r.forfeit},
            strikes={bot: r.strikes for bot, r in self._bots.items()},
        )
        replays = [
            Replay(index, outcome.seats, dict(outcome.log), outcome.events)
            for index, outcome in enumerate(outcomes)
        ]
        return result, replays

    def _emit(self, event: Event) -> None:
        self._events.append(event)
        self._on_event(event)

    async def _play_game(self, index: int, seats: tuple[str, ...]) -> GameOutcome:
        self._events = []
        state = self.spec.new_game(self.request.players, self.seed, self.options)
        stand_in = random.Random(f"{self.seed}:{index}")
        committed = commitment(self.seed)
        self._emit(
            {
                "type": EventType.GAME_START,
                "game_index": index,
                "seats": list(seats),
                "seed_commitment": committed,
            }
        )
        for seat, bot in enumerate(seats):
            await self._channels[bot].notify(
                GameStart(
                    self.request.id,
                    index,
                    seat,
                    game=self.request.game,
                    seats=seats,
                    options=self.options,
                    seed_commitment=committed,
                )
            )
        # Checked once: a Protocol isinstance check is too slow for every move.
        ticks = state if isinstance(state, games.TickState) and self.spec.simultaneous else None
        while not state.is_over():
            to_act = state.to_act()
            if ticks is not None:
                await self._play_tick(ticks, index, seats, to_act, stand_in)
            else:
                seat = to_act[0]
                choice = await self._ask(state, index, seat, seats[seat], stand_in)
                state.apply(seat, choice.action)
                self._emit(
                    {
                        "type": EventType.ACTION,
                        "game_index": index,
                        "seat": seat,
                        "action": choice.action,
                        "ms": choice.ms,
                    }
                )
        result = state.result()
        self._emit(
            {
                "type": EventType.GAME_END,
                "game_index": index,
                "scores": list(result.scores),
                "ranks": list(result.ranks),
            }
        )
        for seat, bot in enumerate(seats):
            await self._channels[bot].notify(
                GameEnd(
                    self.request.id,
                    index,
                    seat,
                    scores=result.scores,
                    ranks=result.ranks,
                    rounds=state.round,
                )
            )
        return GameOutcome(seats, result, state.round, state.log(), self._events)

    async def _play_tick(
        self,
        state: games.TickState,
        index: int,
        seats: tuple[str, ...],
        to_act: tuple[int, ...],
        stand_in: random.Random,
    ) -> None:
        """Ask every seat at once; resolve the tick in the order answers reached the
        referee (`Choice.reached`: the holding replica, for a relayed one)."""
        arrived: list[int] = []
        late: list[int] = []
        chosen: dict[int, Choice] = {}

        async def ask(seat: int) -> None:
            chosen[seat] = choice = await self._ask(state, index, seat, seats[seat], stand_in)
            (arrived if choice.answered else late).append(seat)

        asking = [asyncio.ensure_future(ask(seat)) for seat in to_act]
        try:
            await asyncio.gather(*asking)
        except BaseException:
            # A seat the tick cannot do without (the relay is down): the others stop too.
            for task in asking:
                task.cancel()
            raise
        # Stable: answers that reached it at once keep the order they came in.
        order = sorted(arrived, key=lambda seat: chosen[seat].reached) + sorted(late)
        outcome = state.apply_tick({seat: choice.action for seat, choice in chosen.items()}, order)
        self._emit(
            {
                "type": EventType.TICK,
                "game_index": index,
                "moves": [
                    [seat, str(action), took, chosen[seat].ms] for seat, action, took in outcome
                ],
            }
        )

    async def _ask(
        self, state: games.State, index: int, seat: int, bot: str, stand_in: random.Random
    ) -> Choice:
        """The action for `seat`: the bot's, or a stand-in's after a fault."""
        legal = [str(action) for action in state.legal_actions(seat)]
        record = self._bots[bot]
        if record.forfeit is not None:
            return Choice(stand_in.choice(legal))
        request = ActRequest(
            request_id=f"{self._request_prefix}{next(self._requests)}",
            match_id=self.request.id,
            game_index=index,
            game=self.request.game,
            seat=seat,
            players=self.request.players,
            observation=state.observation(seat),
            legal=tuple(legal),
            deadline_ms=self.request.deadline_ms,
            time_bank_ms=int(record.bank_ms),
            asked_at=self._wall(),
        )
        channel = self._channels[bot]
        started = self._clock()
        try:
            answer = await channel.act(request, (self.request.deadline_ms + record.bank_ms) / 1000)
        except SeatTimeout:
            record.bank_ms = 0
            await self._strike(
                bot,
                index,
                seat,
                StrikeKind.TIMEOUT,
                "no answer before the deadline and time bank ran out",
            )
            return Choice(stand_in.choice(legal))
        except SeatGone as gone:
            await self._forfeit(bot, index, seat, f"disconnected: {gone}")
            return Choice(stand_in.choice(legal))
        elapsed_s = self._clock() - started
        self._on_latency(elapsed_s, answer.relayed)
        took_s = elapsed_s if answer.bot_s is None else answer.bot_s
        over_ms = took_s * 1000 - self.request.deadline_ms
        if over_ms > 0:
            record.bank_ms = max(0.0, record.bank_ms - over_ms)
        action = self._read(answer, legal)
        if action is None:
            await self._strike(
                bot,
                index,
                seat,
                StrikeKind.ILLEGAL,
                f"illegal answer {_describe(answer)}; legal: {', '.join(legal)}",
            )
            return Choice(stand_in.choice(legal))
        return Choice(action, round(took_s * 1000, 3), started + took_s)

    @staticmethod
    def _read(answer: Answer, legal: list[str]) -> str | None:
        if answer.index is not None:
            return legal[answer.index] if 0 <= answer.index < len(legal) else None
        if answer.action is not None and answer.action in legal:
            return answer.action
        return None

    async def _strike(self, bot: str, index: int, seat: int, kind: StrikeKind, reason: str) -> None:
        record = self._bots[bot]
        record.strikes += 1
        self._on_strike(kind)
        self._emit(
            {
                "type": EventType.STRIKE,
                "game_index": index,
                "seat": seat,
                "bot": bot,
                "reason": reason,
                "strikes": record.strikes,
            }
        )
        await self._channels[bot].notify(
            Strike(
                self.request.id,
                index,
                seat,
                reason=reason,
                strikes=record.strikes,
                max_strikes=self._limits.max_strikes,
            )
        )
        if record.strikes >= self._limits.max_strikes:
            await self._forfeit(bot, index, seat, plural(record.strikes, "strike", "strikes"))

    async def _forfeit(self, bot: str, index: int, seat: int, reason: str) -> None:
        record = self._bots[bot]
        if record.forfeit is not None:
            return
        record.forfeit = reason
        self._emit(
            {
                "type": EventType.FORFEIT,
                "game_index": index,
                "seat": seat,
                "bot": bot,
                "reason": reason,
            }
        )
        await self._channels[bot].notify(Forfeit(self.request.id, index, seat, reason=reason))


def _describe(answer: Answer) -> str:
    if answer.index is not None:
        return f"index {answer.index}"
    if answer.action is not None:
        return repr(answer.action)
    return "(empty)"
