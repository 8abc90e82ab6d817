"""ladder.continuous on SQLite and PostgreSQL: the continuous ladder's matches."""

from __future__ import annotations

from ladder import continuous, recording, tournaments
from ladder.models import LadderRow
from ladder.store import Store
from tests.support.ladder import play, register


def test_ladder_matches_pick_the_least_played_first(store: Store) -> None:
    bots = [register(store, "lad") for _ in range(6)]
    golden_only = register(store, "g10only", ["golden10"])
    tid = tournaments.create_tournament(store, "goof", 3, bots[:3], seed=1)
    (match_id,) = tournaments.pending_matches(store, tid)
    play(store, match_id)
    assert recording.record_match(store, match_id)  # bots[:3] have one game on goof-3p
    requests = continuous.plan_ladder_matches(
        store, "goof-3p", [*bots, golden_only], tick="42", deadline_ms=250
    )
    assert [r.id for r in requests] == ["L42-goof-3p-0", "L42-goof-3p-1"]
    assert set(requests[0].bot_ids) == set(bots[3:])  # never played: first
    assert set(requests[1].bot_ids) == set(bots[:3])
    assert all(r.game == "goof" and r.players == 3 and r.deadline_ms == 250 for r in requests)
    assert requests == continuous.plan_ladder_matches(
        store, "goof-3p", [*bots, golden_only], tick="42", deadline_ms=250
    )
    assert continuous.plan_ladder_matches(store, "goof-3p", bots[:2], tick="1") == []
    with store.session() as session:
        assert session.get(LadderRow, "goof-3p") is not None
