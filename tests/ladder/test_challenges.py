"""Challenges in the store, on SQLite and PostgreSQL: the quotas per author (per hour,
with its reset; at once, released by every way a match stops running), the setting a
bot name's author chooses, and the unrated recording."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, update

from ladder import authors, recording
from ladder.challenges import AT_ONCE, PER_HOUR, ChallengeQuotas
from ladder.models import OPERATOR_AUTHOR, AuthorRow, RatingHistoryRow, RatingRow, ResultRow
from ladder.records import MatchRequest, MatchResult, MatchStatus
from ladder.store import Conflict, Lease, NotFound, NotOwner, QuotaExceeded, Store
from tests.support.ladder import count, fake_result

LEASE = Lease("replica-a", 60.0)


def challenge(match_id: str, bots: list[str], author_id: str | None) -> MatchRequest:
    return MatchRequest(
        id=match_id,
        game="golden10",
        players=len(bots),
        bot_ids=tuple(bots),
        seed=None,
        options={},
        duplicate=False,
        deadline_ms=1000,
        challenger=author_id,
    )


def counters(store: Store, author_id: str) -> tuple[int, int]:
    """The author's challenges this hour, and running now."""
    with store.session() as session:
        row = session.get(AuthorRow, author_id)
        assert row is not None
        return row.challenges_hour, row.challenges_running


def finish(store: Store, match_id: str, bots: list[str]) -> None:
    result = MatchResult.from_json(
        fake_result("golden10", bots, [[10 * n for n in range(len(bots))]])
    )
    store.finish_match(match_id, result, [])


@pytest.fixture
def two(store: Store) -> tuple[str, str, list[str]]:
    """Authors one and two; a bot of each."""
    one, _ = authors.create_author(store, "one")
    two, _ = authors.create_author(store, "two")
    a, _ = store.register_bot("alice", "1", ["golden10"], one.id)
    b, _ = store.register_bot("bob", "1", ["golden10"], two.id)
    return one.id, two.id, [a.id, b.id]


def test_challenges_per_hour_count_new_matches_and_reset(
    store: Store, two: tuple[str, str, list[str]]
) -> None:
    one, other, bots = two
    quotas = ChallengeQuotas(per_hour=2)
    assert store.create_match(challenge("c1", bots, one), LEASE, quotas)[1]
    # Asking again for the same challenge costs nothing.
    again, created = store.create_match(challenge("c1", bots, one), LEASE, quotas)
    assert not created and again.request.challenger == one
    assert store.create_match(challenge("c2", bots, one), LEASE, quotas)[1]
    assert counters(store, one) == (2, 2)
    with pytest.raises(QuotaExceeded) as refused:
        store.create_match(challenge("c3", bots, one), LEASE, quotas)
    assert refused.value.quota == PER_HOUR
    assert "'challenges per author per hour' (2) is used up; it resets at 20" in str(refused.value)
    resets = refused.value.resets_at
    assert resets is not None
    assert timedelta(minutes=59) < resets - datetime.now(UTC) <= timedelta(hours=1)
    with pytest.raises(NotFound):
        store.match("c3")  # refused: nothing stored, nothing counted
    assert counters(store, one) == (2, 2)
    # Another author counts alone; the operator has no quota; an existing id is free.
    assert store.create_match(challenge("d1", bots, other), LEASE, quotas)[1]
    for n in range(3):
        store.create_match(challenge(f"op{n}", bots, OPERATOR_AUTHOR), LEASE, quotas)
    assert not store.create_match(challenge("c2", bots, one), LEASE, quotas)[1]
    # Once the hour has ended, the next challenge begins a new one.
    with store.session() as session:
        session.execute(
            update(AuthorRow)
            .where(AuthorRow.id == one)
            .values(hour_until=datetime.now(UTC) - timedelta(seconds=1))
        )
    assert store.create_match(challenge("c3", bots, one), LEASE, quotas)[1]
    assert counters(store, one) == (1, 3)


def test_challenges_at_once_are_released_by_each_way_out_of_running(
    store: Store, two: tuple[str, str, list[str]]
) -> None:
    one, _, bots = two
    quotas = ChallengeQuotas(at_once=2)
    store.create_match(challenge("c1", bots, one), LEASE, quotas)
    store.create_match(challenge("c2", bots, one), LEASE, quotas)
    with pytest.raises(QuotaExceeded) as refused:
        store.create_match(challenge("c3", bots, one), LEASE, quotas)
    assert refused.value.quota == AT_ONCE
    assert str(refused.value) == (
        "the quota 'challenge matches per author at once' (2) is used up; it frees up when "
        "one of the author's challenges ends"
    )
    # A rated match counts for nobody.
    store.create_match(challenge("rated", bots, None), LEASE, quotas)
    finish(store, "rated", bots)
    assert counters(store, one)[1] == 2
    # Finished: one fewer. A finish that loses its race releases nothing.
    finish(store, "c1", bots)
    assert counters(store, one)[1] == 1
    with pytest.raises(Conflict, match="no longer"):
        finish(store, "c1", bots)
    assert counters(store, one)[1] == 1
    store.create_match(challenge("c3", bots, one), LEASE, quotas)
    # Aborted: one fewer; aborting it again changes nothing.
    store.abort_match("c2", "the referee stopped", LEASE.owner)
    store.abort_match("c2", "the referee stopped", LEASE.owner)
    assert counters(store, one)[1] == 1
    # Restarted: one more, within the quota; over it, the match stays aborted.
    assert store.restart_match("c2", LEASE, quotas)[1]
    assert counters(store, one)[1] == 2
    store.abort_match("c2", "again", LEASE.owner)
    store.create_match(challenge("c4", bots, one), LEASE, quotas)
    with pytest.raises(QuotaExceeded):
        store.restart_match("c2", LEASE, quotas)
    assert store.match("c2").status == MatchStatus.ABORTED
    assert counters(store, one)[1] == 2
    # Abandoned by their replica: every one of them released at once.
    assert sorted(store.abort_abandoned("gone", earlier_run_of=LEASE.owner)) == ["c3", "c4"]
    assert counters(store, one)[1] == 0
    assert store.restart_match("c2", LEASE, quotas)[1]
    assert counters(store, one)[1] == 1


def test_an_author_sets_whether_its_names_accept_challenges(
    store: Store, two: tuple[str, str, list[str]]
) -> None:
    one, other, _ = two
    store.register_bot("alice", "2", ["golden10"], one)
    owned = authors.owned_names(store, ["ALICE", "bob", "nobody"])
    assert set(owned) == {"ALICE", "bob"}
    assert owned["ALICE"].name == "alice" and owned["ALICE"].author.name == "one"
    assert owned["ALICE"].challenges and owned["bob"].challenges  # on by default
    assert authors.set_challenges(store, "Alice", one, False) == ("alice", False)
    assert not authors.owned_names(store, ["alice"])["alice"].challenges
    assert authors.set_challenges(store, "alice", one, None) == ("alice", False)
    with pytest.raises(NotOwner, match="belongs to the author 'one'"):
        authors.set_challenges(store, "alice", other, True)
    assert authors.set_challenges(store, "alice", None, True) == ("alice", True)
    with pytest.raises(NotFound, match="no bot is named 'nobody'"):
        authors.set_challenges(store, "nobody", one, True)


def test_a_challenge_is_recorded_unrated_and_is_no_ladder_match(
    store: Store, two: tuple[str, str, list[str]]
) -> None:
    one, _, bots = two
    store.create_match(challenge("ch", bots, one), LEASE)
    finish(store, "ch", bots)
    assert recording.record_match(store, "ch", practice_matches=1)
    with store.session() as session:
        rows = session.scalars(select(ResultRow).where(ResultRow.match_id == "ch")).all()
    assert len(rows) == 2 and all(row.practice and row.tournament_id is None for row in rows)
    assert count(store, RatingRow) == 0 and count(store, RatingHistoryRow) == 0
    # A ladder match after it is still the bots' first (practice, with 1 required).
    store.create_match(challenge("ladder", bots, None), LEASE)
    finish(store, "ladder", bots)
    assert recording.record_match(store, "ladder", practice_matches=1)
    assert count(store, RatingRow) == 0
    with store.session() as session:
        practice = session.scalars(select(ResultRow.practice).where(ResultRow.match_id == "ladder"))
        assert all(practice)
    # The next ladder match is rated: the challenge never counted as one.
    store.create_match(challenge("ladder2", bots, None), LEASE)
    finish(store, "ladder2", bots)
    assert recording.record_match(store, "ladder2", practice_matches=1)
    assert count(store, RatingRow) == 2
    # A finished challenge left unrecorded (its referee failed to) is swept; once.
    store.create_match(challenge("left", bots, one), LEASE)
    assert recording.record_challenges(store) == []
    finish(store, "left", bots)
    assert recording.record_challenges(store) == ["left"]
    assert recording.record_challenges(store) == []
    assert count(store, RatingRow) == 2 and count(store, RatingHistoryRow) == 2
