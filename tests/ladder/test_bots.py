"""Bots' presence, retirement and practice matches, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select, update

from ladder import continuous, queries, recording, tournaments
from ladder.errors import LeagueError
from ladder.models import BotRow, LadderRow, MatchRow, ResultRow
from ladder.store import MatchRequest, NotFound, Seen, Store
from tests.support.clock import host_clock_off
from tests.support.ladder import count, play, ratings_of, register


def test_presence_is_online_while_renewed_and_offline_once_stale(store: Store) -> None:
    bot = register(store, "seen")
    assert not queries.bot_line(store, bot).online
    assert queries.bot_line(store, bot).last_seen_at is None
    store.mark_seen({bot: "s1"}, Seen.OPENED)
    line = queries.bot_line(store, bot)
    assert line.online and line.last_seen_at is not None
    # A replica that died leaves `online` set: staleness alone makes the bot offline.
    stale = store.database_now() - timedelta(seconds=queries.PRESENCE_STALE_S + 1)
    with store.session() as session:
        session.execute(update(BotRow).where(BotRow.id == bot).values(last_seen_at=stale))
    assert not queries.bot_line(store, bot).online
    store.mark_seen({bot: "s1"}, Seen.RENEWED)
    assert queries.bot_line(store, bot).online
    store.mark_seen({bot: "s1"}, Seen.CLOSED)
    assert not queries.bot_line(store, bot).online


def test_presence_is_kept_by_the_database_clock_not_the_hosts(store: Store) -> None:
    """A referee whose clock runs ten minutes behind writes its bots' presence, and a web
    server whose clock runs ten minutes ahead reads it: the bots are online."""
    bot = register(store, "skewed")
    skew = timedelta(minutes=10)
    with host_clock_off(-skew):
        store.mark_seen({bot: "s1"}, Seen.OPENED)
    with host_clock_off(skew):
        assert queries.bot_line(store, bot).online
        assert [line.online for line in queries.bot_lines(store)] == [True]


def test_stored_moments_are_the_database_clocks_whatever_the_hosts_say(store: Store) -> None:
    """A referee and a worker whose clocks run an hour behind register, finish, record
    and retire: every moment stored is the database's now. (A version registered on a
    replica whose clock is behind would otherwise not be its name's latest, and a bot
    recorded by a worker behind would seem to have waited an hour for its next game.)"""
    with host_clock_off(-timedelta(hours=1)):
        bots = [register(store, "clock") for _ in range(3)]
        _ladder_match(store, "m-clock", bots)
        assert recording.record_match(store, "m-clock")
        store.retire_bot(bots[0])
    now = store.database_now()
    with store.session() as session:
        moments = [
            *session.scalars(select(BotRow.created_at).where(BotRow.id.in_(bots))),
            session.scalar(select(BotRow.retired_at).where(BotRow.id == bots[0])),
            *session.execute(
                select(MatchRow.created_at, MatchRow.finished_at).where(MatchRow.id == "m-clock")
            ).one(),
            *session.scalars(select(ResultRow.recorded_at).where(ResultRow.match_id == "m-clock")),
            session.scalar(select(LadderRow.created_at).where(LadderRow.id == "goof-3p")),
        ]
    assert len(moments) == 10
    assert all(abs(now - moment) < timedelta(minutes=1) for moment in moments), moments


def test_a_bot_that_moved_to_a_new_session_stays_online_when_the_old_one_closes(
    store: Store,
) -> None:
    """In a tier the old session may close after the new one opened (another replica
    found it half-open, or heard of its end late): the bot is online all along."""
    bot, other = register(store, "moved"), register(store, "stays")
    store.mark_seen({bot: "old", other: "o1"}, Seen.OPENED)
    store.mark_seen({bot: "new"}, Seen.OPENED)
    store.mark_seen({bot: "old", other: "o1"}, Seen.RENEWED)
    store.mark_seen({bot: "old"}, Seen.CLOSED)
    assert queries.bot_line(store, bot).online
    assert queries.bot_line(store, other).online
    # The new session is the bot's: its close is the bot's leaving.
    store.mark_seen({bot: "new"}, Seen.CLOSED)
    assert not queries.bot_line(store, bot).online
    # A renewal finds an offline bot online again (its opening's write was lost).
    store.mark_seen({bot: "old"}, Seen.RENEWED)
    assert queries.bot_line(store, bot).online


def test_bot_lines_name_versions_and_leave_retired_ones_out(store: Store) -> None:
    first, _ = store.register_bot("listed", "1", ["goodge"])
    second, _ = store.register_bot("listed", "2", ["goodge", "goof"])
    lines = queries.bot_lines(store)
    assert [(line.label, line.games) for line in lines] == [
        ("listed@2", ("goodge", "goof")),
        ("listed", ("goodge",)),
    ]
    assert store.retire_bot(second.id).id == second.id
    assert [line.id for line in queries.bot_lines(store)] == [first.id]
    assert [line.retired for line in queries.bot_lines(store, retired=True)] == [True, False]
    store.retire_bot(second.id, retired=False)
    assert len(queries.bot_lines(store)) == 2
    with pytest.raises(NotFound):
        store.retire_bot("b-nobody")


def test_a_name_resolves_to_its_newest_version_within_one_tick_of_the_clock(
    store: Store,
) -> None:
    """SQLite's clock counts milliseconds, so two versions registered in one tick of it
    would tie: a version registered when the clock reads no later than its predecessor's
    moment is still its name's latest."""
    first, _ = store.register_bot("ticks", "1", ["goof"])
    with store.session() as session:
        ahead = store.database_now() + timedelta(seconds=5)
        session.execute(update(BotRow).where(BotRow.id == first.id).values(created_at=ahead))
    second, _ = store.register_bot("ticks", "2", ["goof"])
    assert queries.resolve_bot(store, "ticks").id == second.id
    assert [line.label for line in queries.bot_lines(store)] == ["ticks@2", "ticks"]


def test_a_retired_bot_leaves_standings_pairing_and_new_tournaments(store: Store) -> None:
    bots = [register(store, "ret") for _ in range(4)]
    tid = tournaments.create_tournament(store, "goof", 3, bots[:3], seed=3, duplicate=False)
    (match_id,) = tournaments.pending_matches(store, tid)
    play(store, match_id)
    assert recording.record_match(store, match_id)
    retired = bots[0]
    store.retire_bot(retired)
    standing = [line.bot_id for line in queries.standings(store, "goof-3p")]
    assert retired not in standing and len(standing) == 2
    assert ratings_of(store, "goof-3p")[retired][1] == 1  # its history stays
    planned = continuous.plan_ladder_matches(store, "goof-3p", bots, tick="t")
    assert [set(request.bot_ids) for request in planned] == [set(bots[1:])]
    with pytest.raises(LeagueError, match="is retired"):
        tournaments.create_tournament(store, "goof", 3, bots[:3])


def _ladder_match(store: Store, match_id: str, bots: list[str]) -> None:
    """A continuous-ladder match (no tournament), played and finished."""
    store.create_match(
        MatchRequest(match_id, "goof", 3, tuple(bots), None, {}, duplicate=False, deadline_ms=0)
    )
    play(store, match_id)


def test_a_new_bots_first_ladder_matches_are_practice(store: Store) -> None:
    veterans = [register(store, "vet") for _ in range(2)]
    for number in range(2):
        _ladder_match(store, f"warm-{number}", [*veterans, register(store, "old")])
        assert recording.record_match(store, f"warm-{number}", practice_matches=0)
    rated_before = ratings_of(store, "goof-3p")
    newcomer = register(store, "new")
    for number in range(2):
        _ladder_match(store, f"new-{number}", [*veterans, newcomer])
        assert recording.record_match(store, f"new-{number}", practice_matches=2)
    # Practice: recorded and shown, nobody's rating moved.
    assert ratings_of(store, "goof-3p") == rated_before
    assert count(store, ResultRow, bot_id=newcomer, practice=True) == 2
    (line,) = queries.in_practice(store, "goof-3p")
    assert (line.bot_id, line.played) == (newcomer, 2)
    _ladder_match(store, "new-2", [*veterans, newcomer])
    assert recording.record_match(store, "new-2", practice_matches=2)
    after = ratings_of(store, "goof-3p")
    assert after[newcomer][1] == 1 and all(after[v][1] == rated_before[v][1] + 1 for v in veterans)
    assert queries.in_practice(store, "goof-3p") == []


def test_tournament_matches_are_rated_from_the_first(store: Store) -> None:
    bots = [register(store, "tour") for _ in range(3)]
    tid = tournaments.create_tournament(store, "goof", 3, bots, seed=5, duplicate=False)
    (match_id,) = tournaments.pending_matches(store, tid)
    play(store, match_id)
    assert recording.record_match(store, match_id, practice_matches=5)
    assert all(games == 1 for _, games in ratings_of(store, "goof-3p").values())
