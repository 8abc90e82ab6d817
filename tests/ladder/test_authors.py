"""ladder.authors and the ownership of bot names, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import create_engine, text, update

from ladder import authors
from ladder.models import OPERATOR_AUTHOR, BotNameRow
from ladder.names import name_key
from ladder.settings import database_url
from ladder.store import (
    MIGRATIONS,
    Conflict,
    NotFound,
    NotOwner,
    QuotaExceeded,
    Quotas,
    Store,
    migrate,
)

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)


def test_names_are_one_name_ignoring_case_and_look_alikes() -> None:
    same = ["alice", "ALICE", "Alice", "\u0430lice", "\uff41lice", "a\u217cice"]
    assert {name_key(name) for name in same} == {name_key("alice")}
    assert name_key("alicia") != name_key("alice")
    assert name_key("bob-2") == name_key("BOB-2")


def test_a_name_belongs_to_the_author_who_registered_it_first(store: Store) -> None:
    one, _ = authors.create_author(store, "one")
    two, _ = authors.create_author(store, "two")
    store.register_bot("alice", "1", ["goof"], one.id)
    store.register_bot("alice", "2", ["goof"], one.id)
    for spelling in ("alice", "ALICE", "\u0430lice"):
        with pytest.raises(NotOwner) as refused:
            store.register_bot(spelling, "9", ["goof"], two.id)
        assert refused.value.owner == "one"
        assert refused.value.existing == "alice"
        assert "belongs to the author 'one'" in str(refused.value)
    with pytest.raises(NotOwner, match="the same name as 'alice'"):
        store.register_bot("ALICE", "9", ["goof"], two.id)
    # The operator registers a version of any name; the name stays its author's.
    store.register_bot("alice", "3", ["goof"], None)
    assert authors.owner_of(store, "Alice") == one
    # A new name of the operator's is the operator's author's.
    store.register_bot("house", "1", ["goof"], None)
    assert authors.owner_of(store, "house") == authors.Author(OPERATOR_AUTHOR, "operator")


def test_author_names_are_unique_the_same_way(store: Store) -> None:
    authors.create_author(store, "Carol")
    with pytest.raises(Conflict, match="'carol' \\(the same name as 'Carol'\\) is taken"):
        authors.create_author(store, "carol")
    with pytest.raises(Conflict, match="'Operator' \\(the same name as 'operator'\\)"):
        authors.create_author(store, "Operator")


def test_tokens_find_their_author_until_rotated(store: Store) -> None:
    author, token = authors.create_author(store, "dora")
    assert token.startswith("author_")
    assert authors.author_by_token(store, token) == author
    assert store.bot_by_token(token) is None
    new = authors.rotate_author_token(store, author.id)
    assert authors.author_by_token(store, token) is None
    assert authors.author_by_token(store, new) == author
    with pytest.raises(Conflict, match="admin token acts for it"):
        authors.rotate_author_token(store, OPERATOR_AUTHOR)


def test_a_bot_token_is_rotated_by_its_author_or_the_operator_only(store: Store) -> None:
    one, _ = authors.create_author(store, "one")
    two, _ = authors.create_author(store, "two")
    bot, old = store.register_bot("alice", "1", ["goof"], one.id)
    with pytest.raises(PermissionError, match="belongs to another author"):
        authors.rotate_bot_token(store, bot.id, two.id)
    assert store.bot_by_token(old) == bot
    rotated = authors.rotate_bot_token(store, bot.id, one.id)
    assert store.bot_by_token(old) is None
    assert store.bot_by_token(rotated.token) == bot
    again = authors.rotate_bot_token(store, bot.id, None)
    assert store.bot_by_token(rotated.token) is None
    assert again.old_hash == authors.hash_token(rotated.token)
    with pytest.raises(NotFound):
        authors.rotate_bot_token(store, "b-none", None)


def test_invites_are_used_up_expire_and_are_never_guessed(store: Store) -> None:
    code = authors.create_invite(store, 2, 3600, NOW).code
    authors.create_author(store, "first", code, NOW)
    # A name refused gives the use back: the code still has its second use.
    with pytest.raises(Conflict):
        authors.create_author(store, "FIRST", code, NOW)
    authors.create_author(store, "second", code, NOW)
    refusals = {
        "used up": (code, NOW),
        "expired": (authors.create_invite(store, 1, 60, NOW).code, NOW + timedelta(seconds=61)),
        "unknown": ("invite_guessed", NOW),
    }
    for expected, (given, when) in refusals.items():
        with pytest.raises(authors.InviteRefused) as refused:
            authors.create_author(store, f"late-{expected[:4]}", given, when)
        assert refused.value.problem.name == expected.upper().replace(" ", "_")
    with pytest.raises(NotFound):
        authors.find_author(store, "late-used")


def test_the_operator_moves_a_name_to_another_author(store: Store) -> None:
    one, _ = authors.create_author(store, "one")
    two, _ = authors.create_author(store, "two")
    store.register_bot("alice", "1", ["goof"], one.id)
    assert authors.transfer_name(store, "ALICE", "two") == two
    store.register_bot("alice", "2", ["goof"], two.id)
    with pytest.raises(NotOwner):
        store.register_bot("alice", "3", ["goof"], one.id)
    with pytest.raises(NotFound, match="no bot is named 'bob'"):
        authors.transfer_name(store, "bob", "two")
    with pytest.raises(NotFound, match="no author named 'nobody'"):
        authors.transfer_name(store, "alice", "nobody")


def test_names_of_a_database_from_before_authors_become_the_operators(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'old.db'}"
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["url"] = database_url(url)
    command.upgrade(config, "0005")
    engine = create_engine(url)
    with engine.begin() as connection:
        for number, name in enumerate(["alice", "bob", "Alice"]):
            connection.execute(
                text(
                    "INSERT INTO bots (id, name, version, games, token_hash, created_at, online)"
                    " VALUES (:id, :name, '1', '[\"goof\"]', :hash, :at, 0)"
                ),
                {
                    "id": f"b{number}",
                    "name": name,
                    "hash": f"h{number}",
                    "at": NOW + timedelta(number),
                },
            )
    engine.dispose()
    migrate(url)
    store = Store(url)
    try:
        operator = authors.Author(OPERATOR_AUTHOR, "operator")
        assert authors.owner_of(store, "alice") == operator
        assert authors.owner_of(store, "bob") == operator
        assert [bot.name for bot in store.bots()] == ["alice", "bob", "Alice"]
        newcomer, _ = authors.create_author(store, "newcomer")
        with pytest.raises(NotOwner, match="belongs to the author 'operator'"):
            store.register_bot("ALICE", "2", ["goof"], newcomer.id)
    finally:
        store.close()


def test_quotas_count_names_per_author_and_versions_per_day(store: Store) -> None:
    one, _ = authors.create_author(store, "one")
    two, _ = authors.create_author(store, "two")
    quotas = Quotas(names=2, versions_per_day=2)
    store.register_bot("a", "1", ["goof"], one.id, quotas)
    store.register_bot("b", "1", ["goof"], one.id, quotas)
    with pytest.raises(QuotaExceeded, match="'bot names per author' \\(2\\) is used up; it frees"):
        store.register_bot("c", "1", ["goof"], one.id, quotas)
    # A name given away frees one; the new owner's count grows.
    authors.transfer_name(store, "b", "two")
    store.register_bot("c", "1", ["goof"], one.id, quotas)
    store.register_bot("d", "1", ["goof"], two.id, Quotas(names=2))
    with pytest.raises(QuotaExceeded):
        store.register_bot("e", "1", ["goof"], two.id, Quotas(names=2))
    # Versions a day: the first registration of "a" began its day.
    store.register_bot("a", "2", ["goof"], one.id, quotas)
    with pytest.raises(QuotaExceeded) as refused:
        store.register_bot("a", "3", ["goof"], one.id, quotas)
    assert refused.value.quota == "versions per bot name per day"
    resets = refused.value.resets_at
    assert resets is not None and "it resets at 20" in str(refused.value)
    assert timedelta(hours=23) < resets - datetime.now(UTC) <= timedelta(hours=24)
    # The operator has no quota; and when the day has ended the count starts again.
    store.register_bot("a", "3", ["goof"], None, quotas)
    with store.session() as session:
        session.execute(
            update(BotNameRow)
            .where(BotNameRow.name_key == name_key("a"))
            .values(day_until=datetime.now(UTC) - timedelta(seconds=1))
        )
    store.register_bot("a", "4", ["goof"], one.id, quotas)
    store.register_bot("a", "5", ["goof"], one.id, quotas)
    with pytest.raises(QuotaExceeded):
        store.register_bot("a", "6", ["goof"], one.id, quotas)
