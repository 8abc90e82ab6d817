"""A store filled by actually playing: bots registered, matches run, results recorded.

Matches are played in this process by the referee's own `MatchRunner`
through seat channels that ask the reference bots (rules, random) — the
same engines, result dict and replays that a referee process writes — and
stored the way the referee stores them (`Store.create_match`, then
`Store.finish_match`). The ladder records them with `recording.record_match`,
fits the standings (`standings_fit.refresh_fit`) and computes tournament
tables with `tables.finish_tournament`. `fill`
builds it; `Arena` says what it holds.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field

from bots.base import Bot, Turn
from bots.random_bot import RandomBot
from bots.rules import RulesBot
from ladder import queries, recording, standings_fit, tables, tournaments
from ladder.records import Notice
from ladder.store import MatchRequest, Store
from referee.channels import ActRequest, Answer
from referee.runner import Limits, MatchRunner


class BotSeat:
    """A seat channel in this process: a reference bot answers every request at once."""

    def __init__(self, bot_id: str, bot: Bot) -> None:
        self.bot_id = bot_id
        self.bot = bot

    async def act(self, request: ActRequest, timeout_s: float) -> Answer:
        turn = Turn(
            game=request.game,
            seat=request.seat,
            players=request.players,
            view=request.observation,
            legal=request.legal,
        )
        return Answer(request.request_id, action=self.bot.act(turn))

    async def notify(self, notice: Notice) -> None:
        pass


def play_and_store(store: Store, request: MatchRequest, players: Mapping[str, Bot]) -> None:
    """Play `request` through the referee's runner and store it as the referee does."""
    store.create_match(request)
    play_stored(store, request.id, players)


def play_stored(store: Store, match_id: str, players: Mapping[str, Bot]) -> None:
    """Play the stored match `match_id` (with the seed the store holds) and store its result."""
    request = store.match(match_id).request
    channels = {bot_id: BotSeat(bot_id, players[bot_id]) for bot_id in request.bot_ids}
    result, replays = asyncio.run(MatchRunner(request, channels, Limits()).run())
    store.finish_match(match_id, result, replays)


@dataclass
class Arena:
    """What the filled store holds, by id."""

    url: str
    bots: dict[str, str] = field(default_factory=dict)  # name -> id
    goodge_matches: list[str] = field(default_factory=list)
    golden10_match: str = ""
    goof_match: str = ""
    running_match: str = ""
    aborted_match: str = ""
    tournament: str = ""
    open_tournament: str = ""
    unfitted_ladder: str = "goof-3p"
    """The ladder left as before its first fit: its standings are the live Elo, no error."""


SECRET_SEEDS = {
    "running_match": 203_622_411_956_304_981_733_216_871_059_428_310_377,
    "aborted_match": 118_907_436_221_580_096_487_655_032_794_106_512_923,
    "tournament": 297_165_803_449_021_376_618_204_557_930_862_145_011,
    "open_tournament": 161_484_290_577_816_342_093_771_608_245_339_770_469,
}
"""128-bit seeds, as drawn: no page may show the running match's, the aborted match's
(never published: it is played again on a fresh seed) or any tournament's. Fixed, so that every
run plays the same tournament; 39 digits never turn up in a page by chance."""


BOT_KINDS: dict[str, type[RulesBot] | type[RandomBot]] = {
    "ada": RulesBot,
    "bea": RulesBot,
    "cy": RandomBot,
    "dot": RandomBot,
}


def fill(url: str) -> Arena:
    """Register four bots and play: two duplicate Goodge matches, a Golden 10 and a
    Goof match on the ladder, a finished Golden 10 tournament, one open tournament,
    one match still running and one aborted."""
    store = Store(url)
    arena = Arena(url)
    try:
        players: dict[str, Bot] = {}
        for seed, (name, kind) in enumerate(BOT_KINDS.items()):
            bot, _token = store.register_bot(name, "1", ["goodge", "golden10", "goof"])
            arena.bots[name] = bot.id
            players[bot.id] = kind(seed=seed)
        ids = list(arena.bots.values())

        def ladder_match(
            match_id: str, game: str, bot_ids: list[str], seed: int, duplicate: bool
        ) -> str:
            request = MatchRequest(
                id=match_id,
                game=game,
                players=len(bot_ids),
                bot_ids=tuple(bot_ids),
                seed=seed,
                options={},
                duplicate=duplicate,
                deadline_ms=1000,
            )
            play_and_store(store, request, players)
            assert recording.record_match(store, match_id)
            return match_id

        arena.goodge_matches = [
            ladder_match("goodge-1", "goodge", ids, 11, True),
            ladder_match("goodge-2", "goodge", [ids[2], ids[0], ids[3], ids[1]], 12, True),
        ]
        arena.golden10_match = ladder_match("golden10-1", "golden10", ids, 21, False)
        arena.goof_match = ladder_match("goof-1", "goof", ids[:3], 31, False)

        arena.tournament = tournaments.create_tournament(
            store,
            "golden10",
            3,
            ids,
            duplicate=True,
            name="Golden 10 cup",
            seed=SECRET_SEEDS["tournament"],
        )
        for match_id in tournaments.pending_matches(store, arena.tournament):
            request = tournaments.planned_request(store, match_id)
            assert request is not None
            play_and_store(store, request, players)
            assert recording.record_match(store, match_id)
        assert tables.finish_tournament(store, arena.tournament)
        # The workers refit a ladder's standings after each result; once is the same here.
        for lid in queries.ladders(store):
            if lid != arena.unfitted_ladder:
                assert standings_fit.refresh_fit(store, lid)
        arena.open_tournament = tournaments.create_tournament(
            store,
            "goof",
            3,
            ids,
            duplicate=False,
            name="Goof open",
            seed=SECRET_SEEDS["open_tournament"],
        )

        running = MatchRequest(
            "still-playing", "goodge", 4, tuple(ids), SECRET_SEEDS["running_match"], {}, False, 1000
        )
        store.create_match(running)
        arena.running_match = running.id
        aborted = MatchRequest(
            "cut-short", "golden10", 4, tuple(ids), SECRET_SEEDS["aborted_match"], {}, False, 1000
        )
        store.create_match(aborted)
        store.abort_match(aborted.id, "the referee restarted during the match")
        arena.aborted_match = aborted.id
    finally:
        store.close()
    return arena
