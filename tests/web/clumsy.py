"""Bots that misbehave a known number of times, so pages have strikes and forfeits to show."""

from __future__ import annotations

from bots.base import Bot, Turn
from bots.rules import RulesBot
from ladder import recording
from ladder.store import MatchRequest, Store
from tests.support.arena import play_and_store

NONSENSE = "not-an-action"


class Clumsy(Bot):
    """Answers its first `bad` requests with an illegal action (a strike each), then plays
    by the rules."""

    def __init__(self, bad: int, seed: int = 0) -> None:
        super().__init__(seed)
        self.bad = bad
        self.rules = RulesBot(seed=seed)

    def act(self, turn: Turn) -> str:
        if self.bad > 0:
            self.bad -= 1
            return NONSENSE
        return self.rules.act(turn)


def register_clumsy(store: Store, strikes: dict[str, int]) -> dict[str, str]:
    """Register one Golden 10 bot per name, and play and record one match between them in
    which each strikes that many times (3 strikes forfeit); their ids by name."""
    ids = {name: store.register_bot(name, "1", ["golden10"])[0].id for name in strikes}
    players: dict[str, Bot] = {
        ids[name]: Clumsy(bad, seed) for seed, (name, bad) in enumerate(strikes.items())
    }
    match_id = "clumsy-" + "-".join(strikes)
    request = MatchRequest(match_id, "golden10", len(ids), tuple(ids.values()), 5, {}, False, 1000)
    play_and_store(store, request, players)
    assert recording.record_match(store, match_id)
    return ids
