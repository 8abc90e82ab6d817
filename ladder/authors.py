"""Authors, their tokens, the names they own, and invite codes, over the store.

Every change is one conditional UPDATE whose row count says whether it
happened (a code used up by another caller, a token rotated twice at once),
never a read, a check in Python and a write.
"""

from __future__ import annotations

import hmac
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from sqlalchemy import exists, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ladder.models import OPERATOR_AUTHOR, AuthorRow, BotNameRow, BotRow, InviteRow
from ladder.names import is_name, name_key
from ladder.records import Bot
from ladder.store import (
    AUTHOR_TOKEN_PREFIX,
    BOT_TOKEN_PREFIX,
    Conflict,
    NotFound,
    NotOwner,
    Store,
    hash_token,
    new_token,
    rows_changed,
)

INVITE_PREFIX = "invite_"


@dataclass(frozen=True)
class Author:
    """An author: its id and name."""

    id: str
    name: str


class InviteProblem(StrEnum):
    """Why an invite code was refused."""

    UNKNOWN = "this invite code is not one of this arena's"
    USED_UP = "this invite code has been used as often as it may"
    EXPIRED = "this invite code has expired"


class InviteRefused(PermissionError):
    """An invite code that cannot be used (`problem` says why)."""

    def __init__(self, problem: InviteProblem) -> None:
        super().__init__(problem.value)
        self.problem = problem


def author_problem(name: str) -> str | None:
    """Why an author name is refused, or None (the rules of a bot name)."""
    if not is_name(name, "-_"):
        return "an author name is 1..64 letters, digits, '-' or '_'"
    return None


def _author(row: AuthorRow) -> Author:
    return Author(row.id, row.name)


def create_author(
    store: Store, name: str, invite: str | None = None, now: datetime | None = None
) -> tuple[Author, str]:
    """A new author and its token (shown only now).

    With `invite`, one use of that code is taken in the same transaction
    (InviteRefused if it cannot be; a name refused gives the use back).
    Conflict if the name (or a look-alike of it) is taken. `now` is the database's clock
    unless given (the invite's expiry is by it).
    """
    now = now or store.database_now()
    token = new_token(AUTHOR_TOKEN_PREFIX)
    row = AuthorRow(
        id="a" + uuid.uuid4().hex[:15],
        name=name,
        name_key=name_key(name),
        token_hash=hash_token(token),
        created_at=now,
    )
    try:
        with store.session() as session:
            if invite is not None:
                _take_invite(session, invite, now)
            session.add(row)
    except IntegrityError:
        with store.session() as session:
            taken = session.scalar(select(AuthorRow.name).where(AuthorRow.name_key == row.name_key))
        same = "" if taken in (None, name) else f" (the same name as {taken!r})"
        raise Conflict(f"the author name {name!r}{same} is taken") from None
    return _author(row), token


def author_by_token(store: Store, token: str) -> Author | None:
    """The author whose token this is, or None."""
    wanted = hash_token(token)
    with store.session() as session:
        row = session.scalar(select(AuthorRow).where(AuthorRow.token_hash == wanted))
        if row is None or row.token_hash is None:
            return None
        return _author(row) if hmac.compare_digest(row.token_hash, wanted) else None


def find_author(store: Store, name_or_id: str) -> Author:
    """The author with this id or (look-alike) name; raises NotFound."""
    with store.session() as session:
        row = session.get(AuthorRow, name_or_id) or session.scalar(
            select(AuthorRow).where(AuthorRow.name_key == name_key(name_or_id))
        )
        if row is None:
            raise NotFound(f"no author named {name_or_id!r}")
        return _author(row)


def owner_of(store: Store, name: str) -> Author | None:
    """The author who owns the bot name `name` (any spelling of it), or None."""
    with store.session() as session:
        row = session.scalar(
            select(AuthorRow)
            .join(BotNameRow, BotNameRow.author_id == AuthorRow.id)
            .where(BotNameRow.name_key == name_key(name))
        )
        return None if row is None else _author(row)


@dataclass(frozen=True)
class Owned:
    """A bot name as its author set it: its owner, and whether it accepts challenges."""

    name: str
    author: Author
    challenges: bool


def owned_names(store: Store, names: Iterable[str]) -> dict[str, Owned]:
    """Each of `names` that is a bot name (any spelling), by the spelling given."""
    keys = {name: name_key(name) for name in names}
    with store.session() as session:
        rows = session.execute(
            select(BotNameRow, AuthorRow)
            .join(AuthorRow, AuthorRow.id == BotNameRow.author_id)
            .where(BotNameRow.name_key.in_(set(keys.values())))
        ).all()
    found = {row.name_key: Owned(row.name, _author(author), row.challenges) for row, author in rows}
    return {name: found[key] for name, key in keys.items() if key in found}


def set_challenges(
    store: Store, name: str, author_id: str | None, accepts: bool | None
) -> tuple[str, bool]:
    """Whether the bot name `name` (any spelling, every version) accepts challenges from
    other authors: set to `accepts` (None: left as it is) by its author `author_id` (None:
    the operator, any name). Its first spelling and the setting, after one conditional
    UPDATE. NotFound, or NotOwner for another author's name.
    """
    key = name_key(name)
    fence = [BotNameRow.name_key == key]
    if author_id is not None:
        fence.append(BotNameRow.author_id == author_id)
    value = BotNameRow.challenges if accepts is None else accepts
    with store.session() as session:
        row = session.execute(
            update(BotNameRow)
            .where(*fence)
            .values(challenges=value)
            .returning(BotNameRow.name, BotNameRow.challenges)
        ).first()
        if row is not None:
            return row.name, row.challenges
        owned = session.get(BotNameRow, key)
        if owned is None:
            raise NotFound(f"no bot is named {name!r}")
        owner = session.get(AuthorRow, owned.author_id)
        raise NotOwner(name, owned.name, owner.name if owner else owned.author_id)


def rotate_author_token(store: Store, author_id: str) -> str:
    """A new token for the author; the old one is refused from now on."""
    if author_id == OPERATOR_AUTHOR:
        raise Conflict("the operator's author has no token: the admin token acts for it")
    token = new_token(AUTHOR_TOKEN_PREFIX)
    with store.session() as session:
        changed = rows_changed(
            session,
            update(AuthorRow).where(AuthorRow.id == author_id).values(token_hash=hash_token(token)),
        )
    if changed != 1:
        raise NotFound(f"no author with id {author_id!r}")
    return token


@dataclass(frozen=True)
class Rotated:
    """A bot version's new token, and the hash of the one it replaced."""

    bot: Bot
    token: str
    old_hash: str


def rotate_bot_token(store: Store, bot_id: str, author_id: str | None) -> Rotated:
    """A new token for a bot version of `author_id` (None: the operator, any bot).

    Raises NotFound for an unknown bot and PermissionError for another's.
    """
    token = new_token(BOT_TOKEN_PREFIX)
    with store.session() as session:
        row = session.get(BotRow, bot_id)
        if row is None:
            raise NotFound(f"no bot with id {bot_id!r}")
        old_hash = row.token_hash
        fence = [BotRow.id == bot_id, BotRow.token_hash == old_hash]
        if author_id is not None:
            fence.append(
                exists().where(
                    BotNameRow.name_key == name_key(row.name), BotNameRow.author_id == author_id
                )
            )
        changed = rows_changed(
            session,
            update(BotRow)
            .where(*fence)
            .values(token_hash=hash_token(token))
            .execution_options(synchronize_session=False),
        )
        bot = Bot(row.id, row.name, row.version, tuple(row.games))
        if changed != 1 and author_id is not None:
            owner = session.scalar(
                select(BotNameRow.author_id).where(BotNameRow.name_key == name_key(row.name))
            )
            if owner != author_id:
                raise PermissionError(f"bot {bot.name} belongs to another author")
    if changed != 1:
        raise Conflict(f"the token of bot {bot_id} was rotated at the same time; try again")
    return Rotated(bot, token, old_hash)


def transfer_name(store: Store, name: str, author_id: str) -> Author:
    """Give the bot name `name` (every version, every look-alike) to another author."""
    new_owner = find_author(store, author_id)
    key = name_key(name)
    with store.session() as session:
        old_owner = session.scalar(select(BotNameRow.author_id).where(BotNameRow.name_key == key))
        moved = old_owner is not None and (
            rows_changed(
                session,
                update(BotNameRow)
                .where(BotNameRow.name_key == key, BotNameRow.author_id == old_owner)
                .values(author_id=new_owner.id),
            )
            == 1
        )
        if moved and old_owner != new_owner.id:
            # The names each owns, as their quota counts them.
            for owner, step in ((old_owner, -1), (new_owner.id, 1)):
                session.execute(
                    update(AuthorRow)
                    .where(AuthorRow.id == owner)
                    .values(names=AuthorRow.names + step)
                )
    if old_owner is None:
        raise NotFound(f"no bot is named {name!r}")
    if not moved:
        raise Conflict(f"the bot name {name!r} was moved at the same time; try again")
    return new_owner


@dataclass(frozen=True)
class Invite:
    """A new invite code (shown only now), its uses and when it expires (None: never)."""

    code: str
    uses: int
    expires_at: datetime | None


def create_invite(
    store: Store, uses: int, expires_s: float | None, now: datetime | None = None
) -> Invite:
    """A new invite code for `uses` sign-ups, expiring `expires_s` after `now` (None: never;
    `now` is the database's clock unless given, as `create_author` judges it by)."""
    if uses < 1:
        raise ValueError("an invite is good for at least 1 use")
    now = now or store.database_now()
    invite = Invite(
        INVITE_PREFIX + new_token("")[:22],
        uses,
        None if expires_s is None else now + timedelta(seconds=expires_s),
    )
    with store.session() as session:
        session.add(
            InviteRow(
                code_hash=hash_token(invite.code),
                uses_left=uses,
                expires_at=invite.expires_at,
                created_at=now,
            )
        )
    return invite


def _take_invite(session: Session, code: str, now: datetime) -> None:
    """Take one use of an invite code; raises InviteRefused saying why it cannot be."""
    wanted = hash_token(code)
    taken = rows_changed(
        session,
        update(InviteRow)
        .where(
            InviteRow.code_hash == wanted,
            InviteRow.uses_left > 0,
            (InviteRow.expires_at.is_(None)) | (InviteRow.expires_at > now),
        )
        .values(uses_left=InviteRow.uses_left - 1),
    )
    if taken == 1:
        return
    # Only the reason is read here; whether the code was used, the UPDATE decided.
    row = session.get(InviteRow, wanted)
    if row is None:
        raise InviteRefused(InviteProblem.UNKNOWN)
    if row.uses_left <= 0:
        raise InviteRefused(InviteProblem.USED_UP)
    raise InviteRefused(InviteProblem.EXPIRED)
