"""Recording a finished match, exactly once: results, games, seats and rating changes.

The referee writes the `MatchRow` of a match it played; `record_match`
turns it into the ladder's rows in one transaction, at most once per match
id, so a redelivered or duplicated task changes nothing. A challenge
(`ladder.challenges`) is recorded unrated: on its bots' records, rating nobody.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ladder import elo
from ladder.errors import LeagueError
from ladder.models import (
    GameRow,
    LadderRow,
    MatchRow,
    RatingHistoryRow,
    RatingRow,
    ResultRow,
    SeatRow,
    TournamentMatchRow,
)
from ladder.queries import ladder_id
from ladder.records import MatchStatus, PlanStatus
from ladder.store import Store

ELO = elo.EloConfig()
"""The live Elo's parameters (start 1500, provisional K below 20 games)."""

RECORD_ATTEMPTS = 3


class NotFinished(ValueError):
    """A match that the referee has not finished (yet): nothing to record."""


def ensure_ladder(store: Store, game: str, players: int) -> str:
    """The ladder of `game` at `players` players, created if it is new."""
    lid = ladder_id(game, players)
    with store.session() as session:
        if session.get(LadderRow, lid) is not None:
            return lid
    try:
        with store.session() as session:
            session.add(
                LadderRow(
                    id=lid, game=game, players=players, created_at=store.database_now(session)
                )
            )
    except IntegrityError:
        pass  # created by someone else at the same moment
    return lid


def is_recorded(store: Store, match_id: str) -> bool:
    """Whether the match's result has been recorded."""
    with store.session() as session:
        return _recorded(session, match_id)


def _recorded(session: Session, match_id: str) -> bool:
    return (
        session.scalar(select(ResultRow.entry).where(ResultRow.match_id == match_id).limit(1))
        is not None
    )


def record_match(store: Store, match_id: str, practice_matches: int = 0) -> bool:
    """Record a finished match: results, games, seats and rating changes; True if now.

    A ladder match (of no tournament) is practice while any of its bots has
    fewer than `practice_matches` ladder matches recorded on this ladder: its
    results are kept (`practice`) but nobody's rating changes, so a new bot's
    first games, bugs and all, move no one's rating. A challenge is recorded
    the same way, always, and counts as none of those ladder matches.

    All of it is one transaction, done at most once per match id: when the
    match is already recorded nothing is written and the answer is False,
    and a recorder that loses a race (its insert collides) rolls back
    everything it wrote and answers False too. Recorders of one ladder take
    its row lock first, so they are serialised (on SQLite the first write
    takes the database's write lock) and read each other's committed ratings.
    """
    match = store.match(match_id)
    if match.status != MatchStatus.FINISHED or match.result is None:
        raise NotFinished(f"match {match_id} is {match.status}, not finished")
    request = match.request
    if len(set(request.bot_ids)) != len(request.bot_ids):
        raise LeagueError(f"match {match_id} seats one bot twice; it cannot be rated")
    lid = ensure_ladder(store, request.game, request.players)
    for attempt in range(RECORD_ATTEMPTS):
        try:
            with store.session() as session:
                # The database's clock: the ladder's tick reads how long each bot waited by it.
                now = store.database_now(session)
                return _record(session, match_id, lid, practice_matches, now)
        except IntegrityError:
            if is_recorded(store, match_id):
                return False
            if attempt == RECORD_ATTEMPTS - 1:
                raise
    return False  # pragma: no cover - the loop returns or raises


def record_challenges(store: Store) -> list[str]:
    """Record the finished challenges whose recording by the referee failed; their ids.

    The referee records a challenge as soon as it has stored its result (no
    worker task asks for it); the workers' sweep calls this for the ones a
    failure left behind.
    """
    with store.session() as session:
        left = list(
            session.scalars(
                select(MatchRow.id).where(
                    MatchRow.challenger_id.is_not(None),
                    MatchRow.status == MatchStatus.FINISHED,
                    ~select(ResultRow.entry).where(ResultRow.match_id == MatchRow.id).exists(),
                )
            )
        )
    return [match_id for match_id in left if record_match(store, match_id)]


def _record(
    session: Session, match_id: str, lid: str, practice_matches: int, now: datetime
) -> bool:
    # The ladder's row lock first: this statement also opens the write
    # transaction on SQLite, before anything is read.
    session.execute(
        update(LadderRow)
        .where(LadderRow.id == lid)
        .values(players=LadderRow.players)
        .execution_options(synchronize_session=False)
    )
    if _recorded(session, match_id):
        return False
    match = session.get(MatchRow, match_id)
    assert match is not None and match.result is not None
    result = match.result
    bots: list[str] = list(result["bots"])
    ranks: list[int] = [int(rank) for rank in result["ranks"]]
    scores: list[int] = [int(score) for score in result["scores"]]
    forfeits = set(result.get("forfeits", []))
    planned = session.get(TournamentMatchRow, match_id)
    tournament_id = None if planned is None else planned.tournament_id
    practice = match.challenger_id is not None or (
        tournament_id is None and _in_practice(session, lid, bots, practice_matches)
    )
    for entry, bot in enumerate(bots):
        session.add(
            ResultRow(
                match_id=match_id,
                entry=entry,
                bot_id=bot,
                ladder_id=lid,
                tournament_id=tournament_id,
                score=scores[entry],
                rank=ranks[entry],
                forfeit=bot in forfeits,
                practice=practice,
                recorded_at=now,
            )
        )
    for index, game in enumerate(result.get("games", [])):
        session.add(
            GameRow(
                match_id=match_id,
                game_index=index,
                seed=int(game["seed"]),
                rounds=int(game["rounds"]),
            )
        )
        for seat, bot in enumerate(game["seats"]):
            session.add(
                SeatRow(
                    match_id=match_id,
                    game_index=index,
                    seat=seat,
                    bot_id=bot,
                    score=int(game["scores"][seat]),
                    rank=int(game["ranks"][seat]),
                )
            )
    if not practice:
        _rate(session, match_id, lid, bots, ranks, now)
    if planned is not None:
        # Fenced: a cancelled plan's match is never stored, so never recorded; should one be
        # (a database from before that fence), the cancel its operator was told of stands.
        session.execute(
            update(TournamentMatchRow)
            .where(
                TournamentMatchRow.match_id == match_id,
                TournamentMatchRow.status != PlanStatus.CANCELLED,
            )
            .values(status=PlanStatus.RECORDED)
            .execution_options(synchronize_session=False)
        )
    session.flush()
    return True


def _in_practice(session: Session, lid: str, bots: list[str], practice_matches: int) -> bool:
    """Whether one of `bots` has fewer than `practice_matches` ladder matches on `lid`
    (challenges are not ladder matches)."""
    if practice_matches <= 0:
        return False
    played = dict(
        session.execute(
            select(ResultRow.bot_id, func.count())
            .join(MatchRow, MatchRow.id == ResultRow.match_id)
            .where(
                ResultRow.ladder_id == lid,
                ResultRow.tournament_id.is_(None),
                MatchRow.challenger_id.is_(None),
                ResultRow.bot_id.in_(bots),
            )
            .group_by(ResultRow.bot_id)
        ).all()
    )
    return any(played.get(bot, 0) < practice_matches for bot in bots)


def _rate(
    session: Session, match_id: str, lid: str, bots: list[str], ranks: list[int], now: datetime
) -> None:
    """The live Elo update of the match's bots on ladder `lid`, with its history."""
    rows = []
    for bot in bots:
        rating = session.get(RatingRow, (lid, bot))
        if rating is None:
            rating = RatingRow(ladder_id=lid, bot_id=bot, rating=ELO.start, games=0, updated_at=now)
            session.add(rating)
        rows.append(rating)
    deltas = elo.elo_update([row.rating for row in rows], ranks, [row.games for row in rows], ELO)
    for row, delta in zip(rows, deltas, strict=True):
        before = row.rating
        row.rating = before + delta
        row.games += 1
        row.updated_at = now
        session.add(
            RatingHistoryRow(
                ladder_id=lid,
                bot_id=row.bot_id,
                match_id=match_id,
                rating_before=before,
                rating_after=row.rating,
                games=row.games,
                at=now,
            )
        )
