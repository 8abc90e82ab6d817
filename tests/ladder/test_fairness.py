"""Secret seeds: drawn from `secrets`, never from ids, ticks or times; the commitment.

Tournaments, scheduled runs and ladder matches are planned twice with the
same ids, ticks and times: the seeds differ. With `secrets.randbits` swapped
for a counter, every seed planned is one of its values: `secrets` is where
they come from. A seed the operator chooses still gives the same deals.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import delete, select

from ladder import continuous, fairness, tournaments
from ladder.models import MatchRow, TournamentMatchRow, TournamentRow
from ladder.store import MatchRequest, Store

GAMES = ["goodge", "golden10", "goof"]
_names = itertools.count(1)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store(f"sqlite:///{tmp_path / 'arena.db'}")
    try:
        yield opened
    finally:
        opened.close()


def bots(store: Store, count: int) -> list[str]:
    return [store.register_bot(f"fair-{next(_names)}", "1", GAMES)[0].id for _ in range(count)]


def planned_seeds(store: Store, tournament_id: str) -> list[int]:
    with store.session() as session:
        return list(
            session.scalars(
                select(TournamentMatchRow.seed)
                .where(TournamentMatchRow.tournament_id == tournament_id)
                .order_by(TournamentMatchRow.number)
            )
        )


def forget(store: Store, tournament_id: str) -> None:
    """Remove a tournament and its plan, as if it had never been made."""
    with store.session() as session:
        session.execute(
            delete(TournamentMatchRow).where(TournamentMatchRow.tournament_id == tournament_id)
        )
        session.execute(delete(TournamentRow).where(TournamentRow.id == tournament_id))


def test_commitment_is_sha256_of_the_decimal_text() -> None:
    seed = 285815032738012068024793795515352762551
    assert fairness.commitment(seed) == hashlib.sha256(str(seed).encode()).hexdigest()
    assert fairness.parse_seed(str(seed)) == seed
    for bad in ["", "-1", "12a", "1e5", "٣", "1" * 81]:
        with pytest.raises(ValueError, match="decimal number"):
            fairness.parse_seed(bad)
    drawn = {fairness.draw_seed() for _ in range(64)}
    assert len(drawn) == 64 and max(drawn).bit_length() > 120


def test_seeds_come_from_secrets(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    counter = itertools.count(10**30)
    monkeypatch.setattr(fairness.secrets, "randbits", lambda bits: next(counter))
    entrants = bots(store, 5)
    tid = tournaments.create_tournament(store, "goodge", 4, entrants, deadline_ms=200)
    seeds = planned_seeds(store, tid)
    assert len(seeds) == 5 and all(10**30 < seed < 10**30 + 100 for seed in seeds)
    ladder = MatchRequest("L7-goodge-4p-0", "goodge", 4, tuple(entrants[:4]), None, {}, True, 0)
    match, created = store.create_match(ladder)
    assert created and 10**30 <= match.seed < 10**30 + 100


def test_tournaments_with_the_same_ids_get_new_seeds(store: Store) -> None:
    """Ids are not where the seeds come from: the same plan made again deals anew."""
    entrants = bots(store, 5)
    tid = tournaments.create_tournament(store, "golden10", 3, entrants)
    first = planned_seeds(store, tid)
    forget(store, tid)
    again = tournaments.create_tournament(store, "golden10", 3, entrants)
    assert len(first) == len(set(first)) == 10
    assert not set(first) & set(planned_seeds(store, again))
    assert min(first).bit_length() > 64  # 128 random bits: below 2**64 once in 2**64


def test_a_chosen_seed_still_gives_the_same_deals(tmp_path: Path) -> None:
    plans = []
    for name in ("a", "b"):
        store = Store(f"sqlite:///{tmp_path / name}.db")
        try:
            tid = tournaments.create_tournament(store, "golden10", 3, bots(store, 4), seed=5)
            plans.append(planned_seeds(store, tid))
        finally:
            store.close()
    assert plans[0] == plans[1] and len(set(plans[0])) == 4


def test_scheduled_runs_of_one_minute_get_new_seeds(store: Store) -> None:
    """The same template and the same minute twice: the run's seeds differ."""
    template = tournaments.create_tournament(
        store, "golden10", 3, bots(store, 4), schedule="* * * * *"
    )
    minute = datetime.now(UTC).replace(second=0, microsecond=0) + timedelta(minutes=1)
    run = tournaments.start_scheduled_run(store, template, minute)
    first = planned_seeds(store, run)
    assert tournaments.start_scheduled_run(store, template, minute) == run  # idempotent
    assert planned_seeds(store, run) == first
    forget(store, run)
    assert tournaments.start_scheduled_run(store, template, minute) == run
    assert len(first) == 4 and not set(first) & set(planned_seeds(store, run))


def test_ladder_ticks_carry_no_seed_and_each_match_gets_a_secret_one(store: Store) -> None:
    """A tick planned twice asks for the same matches without seeds; the store draws
    one when it first stores a match, keeps it when the tick is delivered again, and
    draws anew for the same id in another arena (or after the match is gone)."""
    entrants = bots(store, 4)
    forget(store, tournaments.create_tournament(store, "goof", 4, entrants))  # the ladder stays
    (request,) = continuous.plan_ladder_matches(store, "goof-4p", entrants, tick="42")
    assert request.seed is None
    stored, created = store.create_match(request)
    assert created and stored.seed.bit_length() > 64
    (again,) = continuous.plan_ladder_matches(store, "goof-4p", entrants, tick="42")
    redelivered, created = store.create_match(again)
    assert not created and redelivered.seed == stored.seed
    with store.session() as session:
        session.execute(delete(MatchRow).where(MatchRow.id == request.id))
    anew, created = store.create_match(again)
    assert created and anew.seed != stored.seed
    assert anew.seed_commitment == fairness.commitment(anew.seed)
