"""Challenges in the store: an author's unrated matches, and the author's two quotas.

A challenge is a match one author asked for with one of its own bots against
chosen opponents (AuthorService.Challenge). Its `matches` row names that
author in `challenger_id`; a rated match (a tournament's, the ladder's, one
started with StartMatch) has None there.

How a challenge is told apart once recorded. The referee records a challenge
as soon as it has stored its result (`ladder.recording.record_match`; the
workers' sweep records one whose recording failed): `results`, `games` and
`seats` rows like any match, so it is on each bot's record, with its replay.
Its `results` rows have `practice` True (on the record, rating nobody) and
`tournament_id` None, as a new bot's practice matches on the ladder do; what
tells the two apart is the match: `matches.challenger_id` is not None for a
challenge (join `results.match_id` to `matches.id`). A challenge changes no
rating and no `rating_history`, and counts neither toward a bot's practice
matches nor toward the ladder's pairing (which orders bots by rated games).

The quotas, each one conditional UPDATE on the author's row (so they are per
author, whichever replica or client address the calls come from), the
operator's author exempt:

- challenges per hour: counted when a challenge's match is first stored, in
  the same transaction (asking again with the same challenge id, which finds
  the match, costs nothing); the hour begins with the first challenge after
  the last hour ended, by the database's clock;
- challenge matches running at once: `challenges_running` goes up when a
  challenge's match is stored running or restarted, and down in the same
  transaction as every change of that match out of running (finished,
  aborted, abandoned), in `ladder.store`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import ColumnElement, case, or_, select, update
from sqlalchemy.orm import Session

from ladder.errors import QuotaExceeded
from ladder.models import OPERATOR_AUTHOR, AuthorRow

HOUR_S = 3600.0
PER_HOUR = "challenges per author per hour"
AT_ONCE = "challenge matches per author at once"


@dataclass(frozen=True)
class ChallengeQuotas:
    """What one author may ask for (0: no bound; the defaults are the referee's settings)."""

    per_hour: int = 0
    """Challenges asked for in an hour (the hour begins with its first)."""
    at_once: int = 0
    """Challenge matches running at once."""


NO_QUOTAS = ChallengeQuotas()


def count_new(
    session: Session,
    author_id: str,
    quotas: ChallengeQuotas,
    now: ColumnElement[datetime],
    hour_later: ColumnElement[datetime],
) -> None:
    """A new challenge of the author's, stored in `session`'s transaction: one more this
    hour (`now` and `hour_later` are the database's clock) and one more running.

    QuotaExceeded when either is used up: the caller's transaction, the match's insert
    with it, is rolled back.
    """
    if author_id != OPERATOR_AUTHOR and quotas.per_hour:
        over = or_(AuthorRow.hour_until.is_(None), AuthorRow.hour_until <= now)
        counted = session.scalar(
            update(AuthorRow)
            .where(
                AuthorRow.id == author_id, or_(over, AuthorRow.challenges_hour < quotas.per_hour)
            )
            .values(
                challenges_hour=case((over, 1), else_=AuthorRow.challenges_hour + 1),
                hour_until=case((over, hour_later), else_=AuthorRow.hour_until),
            )
            .returning(AuthorRow.id)
            .execution_options(synchronize_session=False)
        )
        if counted is None:
            resets = session.scalar(select(AuthorRow.hour_until).where(AuthorRow.id == author_id))
            raise QuotaExceeded(PER_HOUR, quotas.per_hour, resets)
    count_running(session, author_id, quotas.at_once)


def count_running(session: Session, author_id: str, at_once: int) -> None:
    """One more of the author's challenge matches running, within `at_once` (0: no bound;
    the operator has none). QuotaExceeded when it is used up."""
    fence = [AuthorRow.id == author_id]
    if author_id != OPERATOR_AUTHOR and at_once:
        fence.append(AuthorRow.challenges_running < at_once)
    counted = session.scalar(
        update(AuthorRow)
        .where(*fence)
        .values(challenges_running=AuthorRow.challenges_running + 1)
        .returning(AuthorRow.id)
        .execution_options(synchronize_session=False)
    )
    if counted is None:
        raise QuotaExceeded(AT_ONCE, at_once, None, "one of the author's challenges ends")


def release(session: Session, challengers: Iterable[str | None]) -> None:
    """Matches that stopped running in `session`'s transaction, by their `challenger_id`:
    each challenge among them (not None) is one fewer running for its author."""
    for author_id, ended in Counter(c for c in challengers if c is not None).items():
        session.execute(
            update(AuthorRow)
            .where(AuthorRow.id == author_id)
            .values(challenges_running=AuthorRow.challenges_running - ended)
            .execution_options(synchronize_session=False)
        )
