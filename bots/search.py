"""The `search` reference bot: determinized Monte Carlo for Goodge and Golden 10.

For each decision the bot repeatedly draws the hidden cards to fit all it
has seen (`games.sampling.determinize`), and for every legal action plays
that action on a copy of the drawn state and then the rest of the ROUND with
a fast rule-of-thumb playout policy. It answers the action with the best
average round outcome for its seat, over as many draws as its time budget
allows (the same draws serve every action, so they are compared fairly):

- Golden 10: the fewest red points taken in the round (the yellow 10 counts -10);
- Goodge: the seat's score change in the round minus the others' average;
- when the round ends the game, the seat's final place first (`RANK_WEIGHT`).

It keeps the `rules` bot's choice unless another action is ahead of it by
more than one standard error of the draw-by-draw difference: with few draws
the averages are noisy, and the rules are sound.

Goodge bidding: the bot plays the round out as the Goodge at the lowest bid
allowed, many times, and bids when the average score change that bid would
bring beats what a defender takes in the same games by a margin; else it
passes. In Goof it plays like the `racer` bot.

`time_budget_s` (default 0.2 s, or the environment variable
ARENA_SEARCH_BUDGET_S) bounds the thinking per move, and so does half the
move's deadline when the referee gives one (`turn.deadline_s`); the bot
stops drawing at 80% of that. `playouts` (default None: the clock decides)
fixes the number of draws per decision instead and ignores time and
deadlines: the bot is then deterministic given its seed, whatever the
machine's load, which is what a reproducible strength measurement needs
(`arena compare --search-playouts N`). Live play keeps the clock.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar, cast

from bots import racer
from bots.base import Bot, Turn
from bots.rules import RulesBot
from games import golden10, goodge, goof, sampling
from games.core import Action

DEFAULT_BUDGET_S = 0.2
BUDGET_ENV = "ARENA_SEARCH_BUDGET_S"
USE_OF_BUDGET = 0.8
"""The share of the budget spent drawing; the rest is margin for the answer."""
SHARE_OF_DEADLINE = 0.5
"""At most this share of the move's deadline is budget: the answer must also travel."""
BID_MARGIN = 10.0
"""Points by which bidding must beat defending, on average, for the bot to bid."""
MIN_BID_DRAWS = 16
"""Draws made to judge a bid even when the budget is spent (a bid is rarer than a play)."""
CONFIDENCE = 1.0
"""Standard errors by which a searched action must beat the rules bot's choice."""
EPSILON = 0.1
"""How often a playout move is random instead of the rule of thumb."""
RANK_WEIGHT = {golden10.SPEC_NAME: 30.0, goodge.SPEC_NAME: 250.0}
"""What a place in the final standings is worth, in the game's points, when the
round being searched ends the game: about a whole round's points, so the place
comes first and the points break ties. Tables rank bots by place, not points."""


def _budget_from_env() -> float:
    text = os.environ.get(BUDGET_ENV, "").strip()
    if not text:
        return DEFAULT_BUDGET_S
    value = float(text)
    if not value > 0:
        raise ValueError(f"{BUDGET_ENV} must be a positive number of seconds, got {text!r}")
    return value


# --------------------------------------------------------------------------
# Golden 10 playouts
# --------------------------------------------------------------------------

_G10_POINTS = golden10.CARD_POINTS
_G10_RANK = golden10.RANK_OF
_G10_COLOUR = golden10.COLOUR_OF
_YELLOW_10 = golden10.YELLOW_10


def _golden10_move(legal: list[Action], trick: list[int], players: int, rng: random.Random) -> int:
    """Duck under the trick's best card, else shed points; lead low."""
    if len(legal) == 1:
        return legal[0]
    if rng.random() < EPSILON:
        return rng.choice(legal)
    if not trick:
        return min(legal, key=lambda c: (_G10_RANK[c], _G10_POINTS[c]))
    if _G10_COLOUR[legal[0]] != _G10_COLOUR[trick[0]]:
        # Void: shed the costliest card, keeping the yellow 10.
        return max(legal, key=lambda c: (c != _YELLOW_10, _G10_POINTS[c], _G10_RANK[c]))
    best = trick[golden10.best_in_trick(trick)]
    below = [c for c in legal if c < best]
    if below:
        return max(below, key=lambda c: (_G10_POINTS[c], c))
    points = sum(_G10_POINTS[c] for c in trick)
    if len(trick) == players - 1 or (points == 0 and _YELLOW_10 not in legal):
        return max(legal)
    if _YELLOW_10 in legal and len(trick) == players - 1:
        return _YELLOW_10
    return min(legal)


def _golden10_playout(
    state: golden10.Golden10State, trick: list[int], seat: int, rng: random.Random, final: bool
) -> float:
    """Play the round out; the seat's round score (red points, the yellow 10 -10), negated.

    The red points of a round are a fixed sum, so the seat's own share is what
    matters. The floor at 0 is left out on purpose: it flattens the outcome
    and in a small trial made the search weaker. In the `final` round the
    seat's place in the final standings counts too (`_standing`).
    """
    players = state.players
    start = state.round
    while state.round == start and not state.is_over():
        who = state.to_act()[0]
        card = _golden10_move(state.legal_actions(who), trick, players, rng)
        state.apply(who, card)
        trick.append(card)
        if len(trick) == players:
            trick.clear()
    last = state.last_round
    assert last is not None
    value = -float(golden10.round_score(last["red_points"][seat], last["yellow10"] == seat))
    if final:
        value += RANK_WEIGHT[golden10.SPEC_NAME] * _standing(last["scores"], seat, lower_wins=True)
    return value


# --------------------------------------------------------------------------
# Goodge playouts
# --------------------------------------------------------------------------

_G_SUIT = goodge.SUIT_OF
_G_POINTS = goodge.POINTS
_CROWN = goodge.CROWN


class _GoodgeContext:
    """What a Goodge playout tracks itself: discards owed, trump, the trick so far."""

    __slots__ = ("discards_left", "planned_trump", "strength", "trick", "trump")

    def __init__(
        self, strength: tuple[int, ...], trump: int, trick: list[int], discards: int
    ) -> None:
        self.strength = strength
        self.trump = trump
        self.planned_trump = trump
        self.trick = trick
        self.discards_left = discards

    def copy(self) -> _GoodgeContext:
        ctx = _GoodgeContext(self.strength, self.trump, self.trick[:], self.discards_left)
        ctx.planned_trump = self.planned_trump
        return ctx

    def power(self, card: int, lead: int) -> int:
        """How well `card` does in a trick led in `lead`: -1 when it cannot win."""
        return goodge.trick_power(card, self.trump, lead, self.strength)

    def after(self, card: int, players: int) -> None:
        """Note that `card` was discarded or played."""
        if self.discards_left > 0:
            self.discards_left -= 1
            return
        self.trick.append(card)
        if len(self.trick) == players:
            self.trick.clear()


def _best_trump(hand: list[Action], strength: tuple[int, ...]) -> int:
    """The Goodge's trump in playouts: most cards, then the strongest ones."""
    score = [0] * 5
    for card in hand:
        if card != _CROWN:
            score[_G_SUIT[card]] += 10 + strength[card]
    return max(range(5), key=lambda suit: score[suit])


def _goodge_discard(legal: list[Action], ctx: _GoodgeContext) -> Action:
    if ctx.planned_trump < 0:
        ctx.planned_trump = _best_trump(legal, ctx.strength)
    trump = ctx.planned_trump
    strength = ctx.strength

    def keep(card: int) -> tuple[int, int, int]:
        if card == _CROWN or _G_SUIT[card] == trump:
            return (2, 0, 0)
        return (1 if _G_POINTS[card] else 0, strength[card], card)

    return min(legal, key=keep)


def _goodge_play(
    legal: list[Action], ctx: _GoodgeContext, players: int, rng: random.Random
) -> Action:
    """Win tricks worth it with the cheapest winner, else throw the least valuable card."""
    if len(legal) == 1:
        return legal[0]
    if rng.random() < EPSILON:
        return rng.choice(legal)
    trick = ctx.trick
    strength = ctx.strength
    if not trick:
        # Lead a top card of a side suit if we hold one, else a low card.
        tops = [c for c in legal if c != _CROWN and strength[c] >= 10 and _G_SUIT[c] != ctx.trump]
        if tops:
            return rng.choice(tops)
        return min(legal, key=lambda c: (_G_POINTS[c], ctx.power(c, _G_SUIT[c]), c))
    lead = goodge.lead_suit(trick[0], ctx.trump)
    win = max(ctx.power(c, lead) for c in trick)
    points = sum(_G_POINTS[c] for c in trick)
    winners = [c for c in legal if ctx.power(c, lead) > win]
    last = len(trick) == players - 1
    if winners and (points >= 10 or last):
        cheap = [c for c in winners if c != _CROWN] or winners
        if last:
            return max(cheap, key=lambda c: (_G_POINTS[c], -ctx.power(c, lead)))
        return min(cheap, key=lambda c: ctx.power(c, lead))
    # Throw the least valuable card, trumps and the Crown last.
    return min(
        legal,
        key=lambda c: (_G_POINTS[c], ctx.power(c, lead) > goodge.TRUMP_POWER, strength[c], c),
    )


def _goodge_playout(
    state: goodge.GoodgeState, ctx: _GoodgeContext, rng: random.Random
) -> list[int]:
    """Play the round out from after the bidding; every seat's score change."""
    players = state.players
    before = state.scores[:]
    start = state.round
    trumps = goodge.TABLE.actions[goodge.FIRST_TRUMP : goodge.FIRST_TRUMP + 5]
    while state.round == start and not state.is_over():
        who = state.to_act()[0]
        legal = state.legal_actions(who)
        first = legal[0]
        if first >= goodge.FIRST_TRUMP:
            if ctx.planned_trump < 0:
                ctx.planned_trump = rng.randrange(5)
            ctx.trump = ctx.planned_trump
            state.apply(who, trumps[ctx.trump])
            continue
        if first >= goodge.FIRST_BID:
            state.apply(who, legal[-1])  # pass (only when asked to evaluate a bid)
            continue
        if ctx.discards_left > 0:
            card = _goodge_discard(legal, ctx)
        else:
            card = _goodge_play(legal, ctx, players, rng)
        state.apply(who, card)
        ctx.after(card, players)
    return [a - b for a, b in zip(state.scores, before, strict=True)]


def _standing(totals: Sequence[float], seat: int, lower_wins: bool) -> float:
    """The share of the other seats that `seat` finishes ahead of: 1 first, 0 last, ties half."""
    mine = totals[seat]
    beaten = 0.0
    for other, total in enumerate(totals):
        if other == seat:
            continue
        if total == mine:
            beaten += 0.5
        elif (total > mine) == lower_wins:
            beaten += 1.0
    return beaten / (len(totals) - 1)


def _relative(deltas: list[int], seat: int) -> float:
    """The seat's score change minus the average of the others'."""
    others = (sum(deltas) - deltas[seat]) / (len(deltas) - 1)
    return deltas[seat] - others


def _goodge_context(observation: goodge.GoodgeObservation) -> _GoodgeContext:
    strength = goodge.strength_table(goodge.GoodgeOptions.of(observation["options"]).one_high)
    trump = goodge.SUITS.index(observation["trump"]) if observation["trump"] else -1
    trick = [goodge.CARD_INDEX[name] for _, name in observation["trick"]]
    discarding = observation["phase"] == "discard"
    discards = goodge.STASH_SIZE - observation["stash_size"] if discarding else 0
    return _GoodgeContext(strength, trump, trick, discards)


_Drawn = TypeVar("_Drawn", goodge.GoodgeState, golden10.Golden10State)


def _draw(observation: Mapping[str, Any], rng: random.Random, kind: type[_Drawn]) -> _Drawn:
    """A state with the hidden cards drawn to fit the observation (`games.sampling`)."""
    state = sampling.determinize(observation, rng)
    assert isinstance(state, kind)
    return state


def _pick(values: list[list[float]], preferred: int) -> int:
    """The action with the best average, if it beats the rules bot's choice clearly.

    Every action was tried on the same draws, so each is compared with the
    preferred one draw by draw: it must be ahead by more than `CONFIDENCE`
    standard errors of that paired difference; otherwise the rules bot's
    choice stands (a search on few draws is noisy, and the rules are sound).
    """
    samples = len(values[preferred])
    base = values[preferred]
    best = preferred
    best_mean = 0.0
    for i, row in enumerate(values):
        if i == preferred:
            continue
        diffs = [a - b for a, b in zip(row, base, strict=True)]
        mean = sum(diffs) / samples
        if mean <= best_mean:
            continue
        if samples > 1:
            var = sum((d - mean) ** 2 for d in diffs) / (samples - 1)
            if mean <= CONFIDENCE * (var / samples) ** 0.5:
                continue
        elif samples == 1:
            continue
        best, best_mean = i, mean
    return best


# --------------------------------------------------------------------------
# The bot
# --------------------------------------------------------------------------


class SearchBot(Bot):
    """Determinized Monte Carlo search over the rest of the round (module docstring)."""

    name = "search"

    def __init__(
        self,
        seed: int | None = None,
        time_budget_s: float | None = None,
        playouts: int | None = None,
    ) -> None:
        super().__init__(seed)
        if playouts is not None and playouts < 1:
            raise ValueError(f"playouts must be at least 1, got {playouts}")
        self.time_budget_s = _budget_from_env() if time_budget_s is None else time_budget_s
        self.playouts = playouts
        self._rules = RulesBot(seed)
        self._bid_cache: dict[tuple[int, int, tuple[str, ...]], list[tuple[float, float]]] = {}
        self.samples_last_move = 0

    def act(self, turn: Turn) -> str:
        if turn.game == goof.SPEC_NAME:
            return racer.choose(turn, self.rng)
        if len(turn.legal) == 1:
            return turn.legal[0]
        budget = self.time_budget_s
        if turn.deadline_s is not None:
            budget = min(budget, SHARE_OF_DEADLINE * turn.deadline_s)
        deadline = time.perf_counter() + USE_OF_BUDGET * budget
        # The engine (or the referee, from it) built the observation: the game's own type.
        if turn.game == goodge.SPEC_NAME:
            goodge_view = cast(goodge.GoodgeObservation, turn.observation)
            if goodge_view["phase"] == "bid":
                return self._bid(turn, goodge_view, deadline)
            totals = self._search_goodge(turn, goodge_view, deadline)
        elif turn.game == golden10.SPEC_NAME:
            golden10_view = cast(golden10.Golden10Observation, turn.observation)
            totals = self._search_golden10(turn, golden10_view, deadline)
        else:
            return self._rules.act(turn)
        return turn.legal[_pick(totals, turn.legal.index(self._rules.act(turn)))]

    def _enough(self, samples: int, deadline: float) -> bool:
        if self.playouts is not None:
            return samples >= self.playouts
        return samples > 0 and time.perf_counter() >= deadline

    def _search_goodge(
        self, turn: Turn, observation: goodge.GoodgeObservation, deadline: float
    ) -> list[list[float]]:
        """Per legal action, its value in each draw (after the bidding)."""
        seat = turn.seat
        players = turn.players
        rng = self.rng
        samples = 0
        actions = [goodge.TABLE.parse(name) for name in turn.legal]
        totals: list[list[float]] = [[] for _ in actions]
        template = _goodge_context(observation)
        phase = observation["phase"]
        round_number = observation["round"]
        max_rounds = goodge.GoodgeOptions.of(observation["options"]).max_rounds
        while not self._enough(samples, deadline):
            root = _draw(observation, rng, goodge.GoodgeState)
            for i, action in enumerate(actions):
                ctx = template.copy()
                if phase == "trump":
                    ctx.trump = ctx.planned_trump = action - goodge.FIRST_TRUMP
                elif phase == "discard":
                    _goodge_discard(list(actions), ctx)  # plans the trump
                    ctx.after(action, players)
                else:
                    ctx.after(action, players)
                state = root.clone(this_round_only=True)
                state.apply(seat, action)
                value = _relative(_goodge_playout(state, ctx, rng), seat)
                if goodge.game_over(state.scores, round_number, max_rounds):
                    value += RANK_WEIGHT[goodge.SPEC_NAME] * _standing(
                        state.scores, seat, lower_wins=False
                    )
                totals[i].append(value)
            samples += 1
        self.samples_last_move = samples
        return totals

    def _search_golden10(
        self, turn: Turn, observation: golden10.Golden10Observation, deadline: float
    ) -> list[list[float]]:
        """Per legal card, its value in each draw."""
        seat = turn.seat
        players = turn.players
        rng = self.rng
        samples = 0
        cards = [golden10.TABLE.parse(name) for name in turn.legal]
        totals: list[list[float]] = [[] for _ in cards]
        base = [int(golden10.TABLE.parse(name)) for _, name in observation["trick"]]
        final = golden10.game_over(observation["round"], observation["rounds"])
        while not self._enough(samples, deadline):
            g10 = _draw(observation, rng, golden10.Golden10State)
            for i, card in enumerate(cards):
                trick = [*base, int(card)]
                if len(trick) == players:
                    trick = []
                copy = g10.clone(this_round_only=True)
                copy.apply(seat, card)
                totals[i].append(_golden10_playout(copy, trick, seat, rng, final))
            samples += 1
        self.samples_last_move = samples
        return totals

    def _bid(self, turn: Turn, observation: goodge.GoodgeObservation, deadline: float) -> str:
        bids = [
            (value, name) for name in turn.legal if (value := goodge.bid_value(name)) is not None
        ]
        if not bids:
            return "pass"
        value, lowest = bids[0]
        # The same hand is judged again at each raise: keep its draws for the round.
        key = (observation["round"], turn.seat, tuple(observation["hand"]))
        if key not in self._bid_cache:
            self._bid_cache = {key: []}
        draws = self._bid_cache[key]
        samples = 0
        # A fixed number of playouts is the whole budget, for bids too.
        while not self._enough(samples, deadline) or (
            self.playouts is None and len(draws) < MIN_BID_DRAWS
        ):
            draws.append(self._as_goodge(observation, turn.seat, lowest))
            samples += 1
        self.samples_last_move = samples
        # Bid when, on average, the contract at this bid brings more than a defender takes.
        gain = sum(taken if taken >= value else -value for taken, _ in draws) / len(draws)
        defend = sum(other for _, other in draws) / len(draws)
        return lowest if gain - defend >= BID_MARGIN else "pass"

    def _as_goodge(
        self, observation: goodge.GoodgeObservation, seat: int, bid: str
    ) -> tuple[float, float]:
        """One draw: the points the seat takes as Goodge at `bid`, and a defender's average."""
        state = _draw(observation, self.rng, goodge.GoodgeState).clone(this_round_only=True)
        state.apply(seat, bid)
        while state.legal_actions(state.to_act()[0])[0] >= goodge.FIRST_BID:
            state.apply(state.to_act()[0], "pass")
        strength = goodge.strength_table(goodge.GoodgeOptions.of(observation["options"]).one_high)
        ctx = _GoodgeContext(strength, -1, [], goodge.STASH_SIZE)
        _goodge_playout(state, ctx, self.rng)
        last = state.last_round
        assert last is not None and not last["redeal"], "a bid was made: the round is played"
        points = last["points"]
        others = (sum(points) - points[seat]) / (state.players - 1)
        return float(points[seat]), others
