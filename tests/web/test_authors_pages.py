"""Authors on the web: each bot page names its author, an author's page lists its bots,
their ladders and their recent matches, and a challenge is marked as such on the match
page, in every match list and in the JSON, and rates nobody.

On SQLite and PostgreSQL. The store is filled here with real matches played by reference bots (`play_and_store`)
and recorded by the ladder (`recording.record_match`): two rated matches, then a
challenge asked for by another author, recorded unrated.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select, update

from bots.random_bot import RandomBot
from ladder import authors, recording
from ladder.models import OPERATOR_AUTHOR, AuthorRow, BotRow, ResultRow
from ladder.store import MatchRequest, Store
from ladder.web import create_app
from ladder.web.security import visible
from tests.support.arena import play_and_store
from tests.support.services import postgres_schema
from tests.support.web import get_html, get_json

LADDER = "golden10-3p"


@dataclass
class Filled:
    store: Store
    client: TestClient
    ada: str  # author ids
    bea: str
    bots: dict[str, str]  # label -> bot id
    standings_before: Any
    history_before: Any
    author_tokens: list[str]


def request(match_id: str, bot_ids: list[str], challenger: str | None = None) -> MatchRequest:
    return MatchRequest(
        id=match_id,
        game="golden10",
        players=len(bot_ids),
        bot_ids=tuple(bot_ids),
        seed=None,
        options={},
        duplicate=False,
        deadline_ms=1000,
        challenger=challenger,
    )


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def db_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path_factory.mktemp('authors') / 'arena.db'}"
    else:
        with postgres_schema("arena_authors_web_") as url:
            yield url


@pytest.fixture(scope="module")
def filled(db_url: str) -> Iterator[Filled]:
    """Author ada owns alice (versions 1, 2 and a look-alike spelling ALICE@3), author
    bea owns bob and dan, the operator owns carl. Rated: r-1 and r-2 (alice@2, bob,
    carl). Then bea's challenge c-1 (bob, alice@2, dan): dan has played nothing else."""
    store = Store(db_url)
    ada, ada_token = authors.create_author(store, "ada-team")
    bea, bea_token = authors.create_author(store, "bea")
    bots: dict[str, str] = {}
    for label, name, version, author in (
        ("alice", "alice", "1", ada.id),
        ("alice@2", "alice", "2", ada.id),
        ("ALICE@3", "ALICE", "3", ada.id),
        ("bob", "bob", "1", bea.id),
        ("dan", "dan", "1", bea.id),
        ("carl", "carl", "1", None),
    ):
        bot, _ = store.register_bot(name, version, ["golden10"], author)
        bots[label] = bot.id
    players = {bot_id: RandomBot(seed=n) for n, bot_id in enumerate(bots.values())}
    rated = [bots["alice@2"], bots["bob"], bots["carl"]]
    for match_id in ("r-1", "r-2"):
        play_and_store(store, request(match_id, rated), players)
        assert recording.record_match(store, match_id)
    client = TestClient(create_app(store, api_rate=10_000, api_burst=10_000))
    standings_before = get_json(client, f"/api/ladders/{LADDER}")
    history_before = get_json(client, f"/api/bots/{bots['bob']}")["history"]
    challenged = [bots["bob"], bots["alice@2"], bots["dan"]]
    play_and_store(store, request("c-1", challenged, challenger=bea.id), players)
    assert recording.record_match(store, "c-1")
    try:
        with client:
            yield Filled(
                store,
                client,
                ada.id,
                bea.id,
                bots,
                standings_before,
                history_before,
                [ada_token, bea_token],
            )
    finally:
        store.close()


def row_of(html: str, match_id: str) -> str:
    """The table row of `match_id` in a page's list of matches."""
    found = re.search(rf'<tr data-match="{match_id}">(.*?)</tr>', html, re.S)
    assert found, match_id
    return found.group(1)


def test_bot_page_names_and_links_its_author(filled: Filled) -> None:
    client, bots = filled.client, filled.bots
    for label, author in (("alice@2", "ada-team"), ("ALICE@3", "ada-team"), ("bob", "bea")):
        assert get_json(client, f"/api/bots/{bots[label]}")["author"] == author
        html = get_html(client, f"/bots/{bots[label]}")
        assert f'by <a class="author" href="/authors/{author}">{author}</a>' in html
    # Bots registered with the admin token belong to the operator's author.
    assert get_json(client, "/api/bots/carl")["author"] == "operator"
    assert 'href="/authors/operator">operator</a>' in get_html(client, "/bots/carl")


def test_author_page_lists_bots_ladders_and_matches(filled: Filled) -> None:
    client, bots = filled.client, filled.bots
    data = get_json(client, "/api/authors/ada-team")
    assert data["author"]["id"] == filled.ada and data["author"]["name"] == "ada-team"
    [alice] = data["bots"]
    assert alice["name"] == "alice" and alice["accepts_challenges"] is True
    # Every version, newest first, the look-alike spelling among them.
    assert [(v["name"], v["version"]) for v in alice["versions"]] == [
        ("ALICE", "3"),
        ("alice", "2"),
        ("alice", "1"),
    ]
    ratings = {v["version"]: v["ratings"] for v in alice["versions"]}
    assert ratings["1"] == ratings["3"] == []
    [rating] = ratings["2"]
    bot_page = get_json(client, f"/api/bots/{bots['alice@2']}")
    assert bot_page["ratings"] == [rating]  # as the bot's page shows it
    assert rating["ladder_id"] == LADDER and rating["games"] == 2 and rating["rank"] >= 1
    # Recent matches of its bots, newest first, the challenge among them.
    assert [line["match_id"] for line in data["matches"]] == ["c-1", "r-2", "r-1"]

    html = get_html(client, "/authors/ada-team")
    assert "<h1>ada-team" in html and filled.ada in html
    for label in ("alice", "alice@2", "ALICE@3"):
        assert f'<a href="/bots/{bots[label]}">{label}</a>' in html, label
    assert f'data-ladder="{LADDER}"><code>{LADDER}</code>' in html
    # Recorded by record_match alone: not fitted yet, so the live Elo and no error.
    assert rating["se"] is None and rating["rating"] == rating["elo"]
    assert f"rank {rating['rank']} · {rating['rating']:.0f} after 2" in html
    for match_id in ("c-1", "r-2", "r-1"):
        assert f'<a href="/matches/{match_id}">{match_id}</a>' in row_of(html, match_id)
    assert html.index('data-match="c-1"') < html.index('data-match="r-2"')
    # The author's own bots are marked in each match.
    assert f'class="entry me"><a href="/bots/{bots["alice@2"]}">' in row_of(html, "r-1")

    bea = get_json(client, "/api/authors/bea")
    assert [b["name"] for b in bea["bots"]] == ["bob", "dan"]
    assert [line["match_id"] for line in bea["matches"]] == ["c-1", "r-2", "r-1"]
    operator = get_json(client, "/api/authors/operator")
    assert operator["author"]["id"] == OPERATOR_AUTHOR
    assert [b["name"] for b in operator["bots"]] == ["carl"]


def test_author_found_by_any_spelling_or_id_and_404_otherwise(filled: Filled) -> None:
    client = filled.client
    for ref in ("ADA-TEAM", "Ada-Team", filled.ada):
        assert get_json(client, f"/api/authors/{ref}")["author"]["name"] == "ada-team"
        assert "<h1>ada-team" in get_html(client, f"/authors/{ref}")
    assert get_json(client, "/api/authors/nobody", 404) == {"detail": "no author named 'nobody'"}
    assert "no author named &#39;nobody&#39;" in get_html(client, "/authors/nobody", 404)
    assert get_json(client, "/api/authors/" + "x" * 300, 404)["detail"].startswith("no author")


def test_challenge_is_marked_on_its_page_in_lists_and_in_the_json(filled: Filled) -> None:
    client, bots = filled.client, filled.bots
    challenge = get_json(client, "/api/matches/c-1")
    assert (challenge["rated"], challenge["challenge"], challenge["challenger"]) == (
        False,
        True,
        "bea",
    )
    rated = get_json(client, "/api/matches/r-1")
    assert (rated["rated"], rated["challenge"], rated["challenger"]) == (True, False, None)

    mark = '<span class="badge chal"'
    link = 'by <a class="challenger" href="/authors/bea">bea</a>'
    page = get_html(client, "/matches/c-1")
    assert 'id="m-challenge"' in page and mark in page and link in page
    assert "unrated" in page
    assert 'id="m-challenge"' not in get_html(client, "/matches/r-1")

    for url in (f"/bots/{bots['alice@2']}", f"/bots/{bots['bob']}", "/authors/ada-team"):
        html = get_html(client, url)
        assert mark in row_of(html, "c-1") and link in row_of(html, "c-1"), url
        assert mark not in row_of(html, "r-1"), url
    for url in (f"/api/bots/{bots['dan']}", "/api/authors/bea"):
        lines = {line["match_id"]: line for line in get_json(client, url)["matches"]}
        assert (lines["c-1"]["rated"], lines["c-1"]["challenge"]) == (False, True), url
        assert lines["c-1"]["challenger"] == "bea", url
        if "r-1" in lines:
            assert (lines["r-1"]["rated"], lines["r-1"]["challenger"]) == (True, None)


def test_challenge_counts_in_no_standings_rating_or_practice(filled: Filled) -> None:
    """Recorded as practice (rating nobody), the challenge leaves the standings, the
    rating histories and the ladder's practice list as they were."""
    client, bots = filled.client, filled.bots
    with filled.store.session() as session:
        practice = session.scalars(
            select(ResultRow.practice).where(ResultRow.match_id == "c-1")
        ).all()
    assert practice == [True, True, True]
    ladder = get_json(client, f"/api/ladders/{LADDER}")
    assert ladder == filled.standings_before
    assert ladder["practice"] == []  # dan played only the challenge: not "in practice"
    assert "In practice" not in get_html(client, "/")
    bob = get_json(client, f"/api/bots/{bots['bob']}")
    assert bob["history"] == filled.history_before
    assert [r["games"] for r in bob["ratings"]] == [2]
    dan = get_json(client, f"/api/bots/{bots['dan']}")
    assert dan["ratings"] == [] and dan["history"] == []
    assert [line["match_id"] for line in dan["matches"]] == ["c-1"]  # on its record


def test_author_page_and_json_hold_nothing_secret(filled: Filled) -> None:
    client, store = filled.client, filled.store
    with store.session() as session:
        session.execute(
            update(AuthorRow)
            .where(AuthorRow.id == filled.bea)
            .values(challenges_hour=7, challenges_running=3)
        )
        hashes = [h for h in session.scalars(select(AuthorRow.token_hash)) if h]
        hashes += list(session.scalars(select(BotRow.token_hash)))
    secrets = [*hashes, *filled.author_tokens, "token", "challenges_hour", "hour_until"]
    data = get_json(client, "/api/authors/bea")
    assert set(data["author"]) == {"id", "name", "created_at"}
    for version in (v for bot in data["bots"] for v in bot["versions"]):
        assert "token_hash" not in version
    for url in ("/api/authors/bea", "/authors/bea", "/api/matches/c-1", "/matches/c-1"):
        text = client.get(url).text
        for secret in secrets:
            assert secret not in text, (url, secret)
        assert "challenges_running" not in text, url


def test_author_names_with_markup_or_controls_are_harmless(filled: Filled) -> None:
    """Author names are letters, digits, '-' and '_' (the referee refuses others); an
    odd one stored all the same shows escaped on every page that names it."""
    store, client = filled.store, filled.client
    odd = '<b id="x">eve</b>"\u202e'
    eve, _ = authors.create_author(store, odd)
    seated = [store.register_bot(f"eve-{n}", "1", ["golden10"], eve.id)[0].id for n in range(3)]
    players = {bot_id: RandomBot(seed=n) for n, bot_id in enumerate(seated)}
    play_and_store(store, request("c-odd", seated, challenger=eve.id), players)
    assert recording.record_match(store, "c-odd")
    escaped = "&lt;b id=&#34;x&#34;&gt;eve&lt;/b&gt;&#34;\\u202e"
    assert visible(odd) == '<b id="x">eve</b>"\\u202e'
    for url in (f"/authors/{eve.id}", f"/bots/{seated[0]}", "/matches/c-odd"):
        html = get_html(client, url)
        assert '<b id="x">' not in html and "\u202e" not in html, url
        assert escaped in html, url
    # Links carry the name percent-encoded.
    assert 'href="/authors/%3Cb%20id%3D%22x%22%3Eeve%3C/b%3E%22%E2%80%AE"' in get_html(
        client, "/matches/c-odd"
    )
    assert get_json(client, "/api/matches/c-odd")["challenger"] == odd


def test_challenge_is_marked_while_it_is_played(filled: Filled) -> None:
    """A running challenge's live page and JSON say so before any result exists."""
    client, bots = filled.client, filled.bots
    filled.store.create_match(
        request("c-live", [bots["bob"], bots["dan"], bots["carl"]], challenger=filled.bea)
    )
    data = get_json(client, "/api/matches/c-live")
    assert data["status"] == "running"
    assert (data["rated"], data["challenge"], data["challenger"]) == (False, True, "bea")
    page = get_html(client, "/matches/c-live")
    assert 'id="live-panel"' in page and 'id="m-challenge"' in page
    assert 'by <a class="challenger" href="/authors/bea">bea</a>' in page
