"""The store: bots, matches and replays, in SQLite by default or PostgreSQL.

One `Store` per process, made by the caller from a database URL (no engine is
created at import time). Methods are short transactions; the asyncio referee
calls them through `asyncio.to_thread`.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import StrEnum
from pathlib import Path
from typing import Any, cast

from alembic import command
from alembic.config import Config
from sqlalchemy import (
    ColumnElement,
    String,
    bindparam,
    case,
    create_engine,
    event,
    func,
    literal,
    or_,
    select,
    type_coerce,
    update,
)
from sqlalchemy.engine import CursorResult, Engine, ExceptionContext
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import InstrumentedAttribute, Session, sessionmaker
from sqlalchemy.sql import Executable
from sqlalchemy.types import Interval

from ladder import challenges
from ladder.challenges import NO_QUOTAS, ChallengeQuotas
from ladder.errors import MatchCancelled, QuotaExceeded
from ladder.fairness import draw_seed
from ladder.json_text import json_text
from ladder.models import (
    OPERATOR_AUTHOR,
    AuthorRow,
    BotNameRow,
    BotRow,
    MatchRow,
    ReplayRow,
    TournamentMatchRow,
    UTCDateTime,
)
from ladder.names import name_key
from ladder.records import (
    Bot,
    Match,
    MatchRequest,
    MatchResult,
    MatchStatus,
    PlanStatus,
    Replay,
)
from ladder.settings import DEFAULT_DATABASE_URL, database_url

__all__ = [
    "DEFAULT_DATABASE_URL",
    "Bot",
    "Conflict",
    "Lease",
    "Match",
    "MatchCancelled",
    "MatchRequest",
    "NotFound",
    "NotOwner",
    "QuotaExceeded",
    "Quotas",
    "Replay",
    "Seen",
    "Store",
    "migrate",
]

MIGRATIONS = Path(__file__).with_name("migrations")

PRESENCE_RENEW_S = 30.0
"""How often a referee renews `last_seen_at` of the bots it holds a session with."""


class Seen(StrEnum):
    """What a referee saw of a bot's session (`Store.mark_seen`)."""

    OPENED = "opened"
    RENEWED = "renewed"
    """Still open, `PRESENCE_RENEW_S` after its opening or last renewal."""
    CLOSED = "closed"


class NotFound(LookupError):
    """A bot or match that the store does not have."""


class Conflict(ValueError):
    """A request that contradicts what the store already holds."""


class NotOwner(PermissionError):
    """A bot name that belongs to another author (`existing` is its spelling there)."""

    def __init__(self, name: str, existing: str, owner: str) -> None:
        same = "" if existing == name else f" (the same name as {existing!r})"
        super().__init__(f"the bot name {name!r}{same} belongs to the author {owner!r}")
        self.existing = existing
        self.owner = owner


@dataclass(frozen=True)
class Quotas:
    """What one author may register (0: no bound; the defaults are the referee's settings)."""

    names: int = 0
    """Bot names an author owns."""
    versions_per_day: int = 0
    """Versions of one name registered in a day (the day begins with its first)."""


DAY_S = 24 * 3600.0

BOT_TOKEN_PREFIX = "arena_"
AUTHOR_TOKEN_PREFIX = "author_"
"""Each kind of token has its own prefix: a leaked one is easy to spot and to name,
and none starts with "-" (a command line would read it as an option)."""


def new_token(prefix: str) -> str:
    """A new secret token of the kind `prefix` names."""
    return prefix + secrets.token_urlsafe(32)


@dataclass(frozen=True)
class Lease:
    """A referee replica's claim on the matches it plays: `seconds` long, renewed.

    A length, not a moment: the database's clock, the one every replica
    shares, says when a claim lapses (replicas' clocks differ).
    """

    owner: str
    seconds: float


def hash_token(token: str) -> str:
    """The stored form of a token."""
    return hashlib.sha256(token.encode()).hexdigest()


def rows_changed(session: Session, statement: Executable) -> int:
    """Run an UPDATE or DELETE; how many rows it changed (its fence's verdict)."""
    return int(cast("CursorResult[Any]", session.execute(statement)).rowcount)


def lock_rows(session: Session, column: InstrumentedAttribute[Any], *where: Any) -> int:
    """Take, until the transaction ends, the lock of the rows of `column`'s table that match
    `where`, by an UPDATE that sets `column` to itself; how many matched. The database
    checks `where` again once it holds a row's lock, so a writer that took it first and
    changed what `where` asks of the row leaves that row out."""
    return rows_changed(
        session,
        update(column.class_)
        .where(*where)
        .values({column.key: column})
        .execution_options(synchronize_session=False),
    )


def migrate(url: str) -> None:
    """Bring the database at `url` to the newest schema (Alembic upgrade head)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["url"] = database_url(url)
    command.upgrade(config, "head")


def sqlite_busy_timeout_s() -> float:
    """How long a SQLite write waits for a lock before failing (ARENA_SQLITE_BUSY_TIMEOUT_S, 30)."""
    return float(os.environ.get("ARENA_SQLITE_BUSY_TIMEOUT_S") or 30)


def make_engine(url: str) -> Engine:
    """An engine for `url` writing JSON columns with `json_text`; SQLite gets foreign keys
    and a busy timeout."""
    url = database_url(url)
    if url.startswith("sqlite"):
        engine = create_engine(
            url,
            connect_args={"timeout": sqlite_busy_timeout_s(), "check_same_thread": False},
            json_serializer=json_text,
        )

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(connection: Any, _record: Any) -> None:
            cursor = connection.cursor()
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.close()

        return engine
    engine = create_engine(url, pool_pre_ping=True, json_serializer=json_text)
    event.listen(engine, "handle_error", _masked_ping_failure)
    return engine


def _masked_ping_failure(context: ExceptionContext) -> None:
    """A pre-ping that a lost connection failed is a disconnect, whatever error hides it.

    psycopg's ping (SQLAlchemy's `do_ping`) restores autocommit in a `finally`: when the
    socket closes under the ping, the restore can raise ProgrammingError ("can't change
    'autocommit' now") over the OperationalError, which SQLAlchemy then takes for a bug,
    not a lost connection: a database that went away was a 500 instead of a 503, and the
    referee's INTERNAL instead of UNAVAILABLE. As a disconnect, the pool connects anew."""
    cause = context.original_exception.__context__
    if context.is_pre_ping and isinstance(cause, context.dialect.loaded_dbapi.OperationalError):
        context.is_disconnect = True


class Store:
    """Bots, matches and replays in one database."""

    def __init__(self, url: str = DEFAULT_DATABASE_URL, *, upgrade: bool = True) -> None:
        if upgrade:
            migrate(url)
        self.url = url
        self.engine = make_engine(url)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)

    def close(self) -> None:
        """Release the database connections."""
        self.engine.dispose()

    def ping(self) -> None:
        """One round trip to the database; raises its OperationalError if it is unavailable."""
        with self.engine.connect() as connection:
            connection.execute(select(1))

    @contextmanager
    def session(self) -> Iterator[Session]:
        """One transaction: committed on success, rolled back on error."""
        with self._sessions.begin() as session:
            yield session

    # Bots

    def register_bot(
        self,
        name: str,
        version: str,
        games: Sequence[str],
        author_id: str | None = None,
        quotas: Quotas | None = None,
    ) -> tuple[Bot, str]:
        """Register a bot version; returns it and its token (shown only now).

        A new name becomes `author_id`'s (None: the operator's); a version of a
        name that is another author's raises NotOwner. None registers a version of
        any name: the operator's call. An author over one of `quotas` gets
        QuotaExceeded (the operator has none).
        """
        token = new_token(BOT_TOKEN_PREFIX)
        row = BotRow(
            id="b" + uuid.uuid4().hex[:15],
            name=name,
            version=version,
            games=list(games),
            token_hash=hash_token(token),
        )
        key = name_key(name)
        quotas = quotas or Quotas()
        try:
            with self.session() as session:
                # The name's row first, fenced on its owner: registrations of one name (and
                # its transfer) take their turns, so each version's moment, read next, is
                # after every version committed before it.
                fence = [BotNameRow.name_key == key]
                if author_id is not None:
                    fence.append(BotNameRow.author_id == author_id)
                held = lock_rows(session, BotNameRow.name, *fence)
                row.created_at = self._newest_moment(session, name)
                if not held:
                    owned = session.get(BotNameRow, key)
                    if owned is not None:
                        owner = session.get(AuthorRow, owned.author_id)
                        raise NotOwner(name, owned.name, owner.name if owner else owned.author_id)
                    # Two authors claiming one new name at once: the key is the primary
                    # key, so one insert fails (IntegrityError, below) and that call is refused.
                    claimant = author_id or OPERATOR_AUTHOR
                    self._count_name(session, claimant, quotas.names if author_id else 0)
                    session.add(
                        BotNameRow(
                            name_key=key, name=name, author_id=claimant, created_at=row.created_at
                        )
                    )
                    session.flush()
                if author_id is not None and quotas.versions_per_day:
                    self._count_version(session, key, quotas.versions_per_day)
                session.add(row)
        except IntegrityError:
            raise Conflict(
                f"bot {name}@{version} is already registered, or its name was just taken"
            ) from None
        return _bot(row), token

    def _newest_moment(self, session: Session, name: str) -> datetime:
        """The database's now, or just after the newest version of `name` if that is not
        earlier: SQLite's clock counts milliseconds, and a name's latest version is the
        one registered last (`queries.resolve_bot`)."""
        now = self.database_now(session)
        newest: datetime | None = session.scalar(
            select(func.max(BotRow.created_at)).where(BotRow.name == name)
        )
        if newest is not None and now <= newest:
            return newest + timedelta(microseconds=1)
        return now

    @staticmethod
    def _count_name(session: Session, author_id: str, limit: int) -> None:
        """One more name for the author, within `limit` (0: no bound)."""
        fence = [AuthorRow.id == author_id]
        if limit:
            fence.append(AuthorRow.names < limit)
        counted = rows_changed(
            session, update(AuthorRow).where(*fence).values(names=AuthorRow.names + 1)
        )
        if counted != 1:
            raise QuotaExceeded("bot names per author", limit, None)

    def _count_version(self, session: Session, key: str, per_day: int) -> None:
        """One more version of the name today, within `per_day`; a day begins with the
        first version after the last day ended, by the database's clock."""
        now = self._database_now()
        over = or_(BotNameRow.day_until.is_(None), BotNameRow.day_until <= now)
        counted = rows_changed(
            session,
            update(BotNameRow)
            .where(BotNameRow.name_key == key, or_(over, BotNameRow.versions_today < per_day))
            .values(
                versions_today=case((over, 1), else_=BotNameRow.versions_today + 1),
                day_until=case((over, self._database_now(DAY_S)), else_=BotNameRow.day_until),
            )
            .execution_options(synchronize_session=False),
        )
        if counted != 1:
            resets = session.scalar(select(BotNameRow.day_until).where(BotNameRow.name_key == key))
            raise QuotaExceeded("versions per bot name per day", per_day, resets)

    def bot_by_token(self, token: str) -> Bot | None:
        """The bot whose token this is, or None."""
        wanted = hash_token(token)
        with self.session() as session:
            row = session.scalar(select(BotRow).where(BotRow.token_hash == wanted))
            # The index lookup is by hash; the final comparison is constant-time.
            if row is None or not hmac.compare_digest(row.token_hash, wanted):
                return None
            return _bot(row)

    def token_hashes(self, bot_ids: Sequence[str]) -> dict[str, str]:
        """The hash of each registered bot's current token, by bot id."""
        row = BotRow.__table__.c
        with self.session() as session:
            found = session.execute(select(row.id, row.token_hash).where(row.id.in_(list(bot_ids))))
            return {bot_id: token_hash for bot_id, token_hash in found}

    def bot(self, bot_id: str) -> Bot:
        """The bot with this id; raises NotFound."""
        with self.session() as session:
            row = session.get(BotRow, bot_id)
            if row is None:
                raise NotFound(f"no bot with id {bot_id!r}")
            return _bot(row)

    def mark_seen(self, sessions: Mapping[str, str], seen: Seen) -> None:
        """The referee saw these bots now (bot id -> the session it saw it by).

        The bot's presence is its newest session's: an opening makes the bot online by
        that session, and a closing makes it offline only if that session is still the
        bot's (in a tier the old session of a bot that moved may close after the new one
        opened). A renewal keeps the bot online, and makes its session the bot's again
        when the bot reads offline (a lost opening). Each bot is one conditional UPDATE.
        The moment is the database's: the readers judge it by that clock (`queries`).
        """
        if not sessions:
            return
        row = BotRow.__table__.c
        now = self._database_now()
        by_session = row.presence_session == bindparam("session")
        statement = update(BotRow).where(row.id == bindparam("bot"))
        if seen == Seen.CLOSED:
            statement = statement.where(by_session).values(last_seen_at=now, online=False)
        else:
            if seen == Seen.RENEWED:
                statement = statement.where(or_(by_session, row.online.is_(False)))
            statement = statement.values(
                last_seen_at=now, online=True, presence_session=bindparam("session")
            )
        with self.session() as session:
            session.connection().execute(
                statement, [{"bot": bot, "session": sid} for bot, sid in sessions.items()]
            )

    def retire_bot(self, bot_id: str, retired: bool = True) -> Bot:
        """Retire a bot version (or bring it back): it leaves the standings and pairing,
        its matches and ratings stay. Raises NotFound."""
        with self.session() as session:
            row = session.get(BotRow, bot_id)
            if row is None:
                raise NotFound(f"no bot with id {bot_id!r}")
            if retired and row.retired_at is None:
                row.retired_at = self._database_now()
            elif not retired:
                row.retired_at = None
            return _bot(row)

    def bots_by_id(self, bot_ids: Sequence[str]) -> dict[str, Bot]:
        """The registered bots among these ids, by id."""
        with self.session() as session:
            rows = session.scalars(select(BotRow).where(BotRow.id.in_(list(bot_ids))))
            return {row.id: _bot(row) for row in rows}

    def bots(self) -> list[Bot]:
        """Every registered bot version, oldest first."""
        with self.session() as session:
            return [
                _bot(row) for row in session.scalars(select(BotRow).order_by(BotRow.created_at))
            ]

    # Matches

    def create_match(
        self,
        request: MatchRequest,
        lease: Lease | None = None,
        quotas: ChallengeQuotas = NO_QUOTAS,
    ) -> tuple[Match, bool]:
        """Store a new match, or find the one with this id; True if new.

        Asking again with the same id and a different request is a Conflict;
        a request without a seed matches the stored one whatever seed was
        drawn for it, and so does any request once the match has been played
        again (`restart_match` deals it from a fresh seed: the caller's is the
        first attempt's). Two callers racing (several referee replicas) both get
        the one row. A new challenge counts against its author's `quotas`
        (QuotaExceeded, nothing stored); finding it again costs nothing. A
        tournament's match that its tournament cancelled first raises
        MatchCancelled, nothing stored.
        """
        try:
            return self._insert_match(request, lease, quotas), True
        except IntegrityError:
            existing, attempt = self._match_and_attempt(request.id)
            asked = (
                request
                if request.seed is not None and attempt == 1
                else replace(request, seed=existing.request.seed)
            )
            if existing.request != asked:
                raise Conflict(f"match {request.id!r} exists with other settings") from None
            return existing, False

    def _insert_match(
        self, request: MatchRequest, lease: Lease | None, quotas: ChallengeQuotas
    ) -> Match:
        with self.session() as session:
            self._start_plan(session, request.id)
            row = MatchRow(
                id=request.id,
                game=request.game,
                players=request.players,
                bot_ids=list(request.bot_ids),
                seed=draw_seed() if request.seed is None else request.seed,
                options=dict(request.options),
                duplicate=request.duplicate,
                deadline_ms=request.deadline_ms,
                challenger_id=request.challenger,
                status=MatchStatus.RUNNING,
                result=None,
                reason="",
                created_at=self._database_now(),
                owner=None if lease is None else lease.owner,
                lease_until=None if lease is None else self._database_now(lease.seconds),
            )
            session.add(row)
            if request.challenger is not None:
                # Its UPDATE flushes the insert first: a match that exists costs nothing.
                now, later = self._database_now(), self._database_now(challenges.HOUR_S)
                challenges.count_new(session, request.challenger, quotas, now, later)
        return _match(row)

    @staticmethod
    def _start_plan(session: Session, match_id: str) -> None:
        """Mark a tournament's plan of the match started, in the transaction that stores it.

        The plan's status is the fence a cancel (`ladder.tournaments.cancel_tournament`)
        moves the other way, from planned too: of the two, the first to take the plan's
        row wins, and the other's UPDATE matches no row. A plan cancelled first raises
        MatchCancelled. No plan (a ladder match, a challenge) or one started already (the
        match is stored: it is found again) lets the insert go on.
        """
        plan = TournamentMatchRow
        started = rows_changed(
            session,
            update(plan)
            .where(plan.match_id == match_id, plan.status == PlanStatus.PLANNED)
            .values(status=PlanStatus.STARTED)
            .execution_options(synchronize_session=False),
        )
        if started:
            return
        found = session.execute(
            select(plan.tournament_id, plan.status).where(plan.match_id == match_id)
        ).first()
        if found is not None and found.status == PlanStatus.CANCELLED:
            raise MatchCancelled(
                f"match {match_id} is not played: its tournament {found.tournament_id} was"
                " cancelled before any referee started it"
            )

    def database_now(self, session: Session | None = None) -> datetime:
        """The database's clock now: the one clock every worker and replica shares. Read in
        `session` when given (no second connection for a query that reads it too)."""
        if session is None:
            with self.session() as own:
                return self.database_now(own)
        now: datetime | None = session.scalar(select(self._database_now()))
        assert now is not None
        return now

    def _database_now(self, seconds: float = 0.0) -> ColumnElement[datetime]:
        """The database's now, `seconds` on: the one clock all replicas' leases share."""
        if self.engine.dialect.name == "sqlite":
            # In the text UTCDateTime stores on SQLite, with microseconds (strftime
            # gives milliseconds), so that stored moments and this one compare as text.
            moment = func.strftime(
                "%Y-%m-%d %H:%M:%f", "now", f"{seconds:+.3f} seconds", type_=String
            )
            return type_coerce(moment.concat("000"), UTCDateTime())
        return type_coerce(
            func.now() + literal(timedelta(seconds=seconds), Interval()), UTCDateTime()
        )

    def match(self, match_id: str) -> Match:
        """The match with this id; raises NotFound."""
        return self._match_and_attempt(match_id)[0]

    def _match_and_attempt(self, match_id: str) -> tuple[Match, int]:
        """The match with this id and how many times it was started; raises NotFound."""
        with self.session() as session:
            row = session.get(MatchRow, match_id)
            if row is None:
                raise NotFound(f"no match with id {match_id!r}")
            return _match(row), row.attempt

    def finish_match(
        self,
        match_id: str,
        result: MatchResult,
        replays: Sequence[Replay],
        owner: str | None = None,
    ) -> None:
        """Record a running match finished, with its replays, in one transaction.

        With `owner`, only while that replica still holds it: a replica whose
        lease lapsed (the match aborted, maybe played elsewhere) gets a Conflict
        instead of overwriting it. One conditional UPDATE decides, so a finish
        and an abort racing each other never both win.
        """
        with self.session() as session:
            finished = session.execute(
                update(MatchRow)
                .where(MatchRow.id == match_id, *_held(owner))
                .values(
                    status=MatchStatus.FINISHED,
                    result=result.to_json(),
                    finished_at=self._database_now(),
                )
                .returning(MatchRow.challenger_id)
                .execution_options(synchronize_session=False)
            ).first()
            if finished is None:
                row = session.get(MatchRow, match_id)
                if row is None:
                    raise NotFound(f"no match with id {match_id!r}")
                raise Conflict(
                    f"match {match_id!r} is no longer {owner or 'anyone'}'s to finish: it is"
                    f" {row.status} and held by {row.owner or 'nobody'}"
                )
            challenges.release(session, [finished.challenger_id])
            # Only now that the match is this call's: a lost race writes no replay.
            session.add_all(
                ReplayRow(
                    match_id=match_id,
                    game_index=replay.game_index,
                    seats=list(replay.seats),
                    log=replay.log,
                    events=replay.events,
                )
                for replay in replays
            )

    def abort_match(self, match_id: str, reason: str, owner: str | None = None) -> None:
        """Mark a running match aborted (nothing of it is counted).

        With `owner`, only while that replica holds it: another replica may
        have taken over the match once this one's lease lapsed. A match no
        longer running (or not held) is left as it is.
        """
        with self.session() as session:
            aborted = session.scalars(
                update(MatchRow)
                .where(MatchRow.id == match_id, *_held(owner))
                .values(status=MatchStatus.ABORTED, reason=reason, finished_at=self._database_now())
                .returning(MatchRow.challenger_id)
                .execution_options(synchronize_session=False)
            )
            challenges.release(session, aborted.all())

    def restart_match(
        self,
        match_id: str,
        lease: Lease | None = None,
        quotas: ChallengeQuotas = NO_QUOTAS,
    ) -> tuple[Match, bool]:
        """Set an aborted match running again (played from the start); True if this call did.

        It is dealt from a fresh secret seed: its bots saw part of the aborted attempt's
        deal (their hands, the cards played), which would be theirs to use on the same
        deal. One conditional UPDATE: of replicas racing to restart one match, one
        wins and the others find it running. A challenge counts as running
        again (QuotaExceeded: it stays aborted).
        """
        with self.session() as session:
            restarted = session.execute(
                update(MatchRow)
                .where(MatchRow.id == match_id, MatchRow.status == MatchStatus.ABORTED)
                .values(
                    status=MatchStatus.RUNNING,
                    seed=draw_seed(),
                    attempt=MatchRow.attempt + 1,
                    reason="",
                    owner=None if lease is None else lease.owner,
                    lease_until=None if lease is None else self._database_now(lease.seconds),
                    finished_at=None,
                )
                .returning(MatchRow.challenger_id)
                .execution_options(synchronize_session=False)
            ).first()
            won = restarted is not None
            if restarted is not None and restarted.challenger_id is not None:
                challenges.count_running(session, restarted.challenger_id, quotas.at_once)
        return self.match(match_id), won

    def renew_leases(self, lease: Lease, match_ids: Sequence[str]) -> set[str]:
        """Extend `lease.owner`'s claim on these matches, the ones it plays; those renewed.

        Only matches it still holds running are renewed: one missing from the
        answer is lost to this replica (aborted, maybe played elsewhere). A
        match it holds in the database but no longer plays is not renewed, so
        its lease runs out and a sweep aborts it.
        """
        if not match_ids:
            return set()
        with self.session() as session:
            renewed = session.scalars(
                update(MatchRow)
                .where(MatchRow.id.in_(list(match_ids)), *_held(lease.owner))
                .values(lease_until=self._database_now(lease.seconds))
                .returning(MatchRow.id)
                .execution_options(synchronize_session=False)
            )
            return set(renewed)

    def abort_abandoned(self, reason: str, earlier_run_of: str | None = None) -> list[str]:
        """Abort the running matches nobody plays any more; their ids.

        Those are the ones whose lease expired by the database's clock or that
        never had one, and, for a replica starting again under its name, its
        own from that earlier run (`earlier_run_of`). A live replica's
        matches, their leases renewed, are left alone.
        """
        # A claim sets the owner and the lease together: no lease means no owner.
        abandoned = or_(MatchRow.lease_until.is_(None), MatchRow.lease_until < self._database_now())
        if earlier_run_of is not None:
            abandoned = or_(abandoned, MatchRow.owner == earlier_run_of)
        with self.session() as session:
            aborted = session.execute(
                update(MatchRow)
                .where(MatchRow.status == MatchStatus.RUNNING, abandoned)
                .values(status=MatchStatus.ABORTED, reason=reason, finished_at=self._database_now())
                .returning(MatchRow.id, MatchRow.challenger_id)
                .execution_options(synchronize_session=False)
            ).all()
            challenges.release(session, [row.challenger_id for row in aborted])
            return [row.id for row in aborted]

    def replays(self, match_id: str) -> list[Replay]:
        """The replays of a match, in game order."""
        with self.session() as session:
            row = session.get(MatchRow, match_id)
            if row is None:
                raise NotFound(f"no match with id {match_id!r}")
            return [Replay(r.game_index, tuple(r.seats), r.log, r.events) for r in row.replays]


def _held(owner: str | None) -> list[ColumnElement[bool]]:
    """A match running, and held by `owner` unless None: the fence of every transition."""
    running = MatchRow.status == MatchStatus.RUNNING
    return [running] if owner is None else [running, MatchRow.owner == owner]


def _bot(row: BotRow) -> Bot:
    return Bot(row.id, row.name, row.version, tuple(row.games))


def _match(row: MatchRow) -> Match:
    request = MatchRequest(
        id=row.id,
        game=row.game,
        players=row.players,
        bot_ids=tuple(row.bot_ids),
        seed=row.seed,
        options=dict(row.options),
        duplicate=row.duplicate,
        deadline_ms=row.deadline_ms,
        challenger=row.challenger_id,
    )
    result = None if row.result is None else MatchResult.from_json(row.result)
    return Match(request, MatchStatus(row.status), result, row.reason)
