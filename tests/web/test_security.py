"""Hardening of the web: security headers, the API's rate bound, bot-chosen text shown safely."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import NoReturn

import pytest
from fastapi.testclient import TestClient
from httpx import Response

from ladder import recording, tables, tournaments
from ladder.store import Store
from ladder.web import create_app
from ladder.web.security import SECURITY_HEADERS, TokenBuckets, visible
from tests.support.arena import BOT_KINDS, Arena, play_and_store

# Security headers -------------------------------------------------------------------


def assert_secured(response: Response) -> None:
    url = str(response.url)
    for name, value in SECURITY_HEADERS.items():
        assert response.headers.get(name) == value, (url, name, response.headers.get(name))
    policy = response.headers["Content-Security-Policy"]
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
    assert directives["script-src"] == "'self'" and "unsafe" not in policy, policy
    assert directives["frame-ancestors"] == "'none'"


def test_security_headers_on_every_kind_of_response(client: TestClient, arena: Arena) -> None:
    answers = {
        "/": 200,
        f"/bots/{arena.bots['ada']}": 200,
        "/authors/operator": 200,
        "/authors/nobody": 404,
        "/api/authors/operator": 200,
        "/tournaments": 200,
        f"/tournaments/{arena.tournament}": 200,
        "/matches/goodge-1": 200,
        f"/matches/{arena.running_match}": 200,
        "/api/ladders": 200,
        "/api/matches/goodge-1/frames?game=1": 200,  # big enough to be gzipped
        "/api/matches/nope": 404,
        f"/api/matches/{arena.running_match}/frames": 409,
        "/api/matches/goodge-1/frames?game=x": 422,
        "/matches/nope": 404,
        "/no/such/page": 404,
        "/static/live.js": 200,
        "/static/arena.css": 200,
        "/static/nope.js": 404,
        "/metrics": 200,
        "/healthz": 200,
        "/openapi.json": 200,
    }
    for url, status in answers.items():
        response = client.get(url)
        assert response.status_code == status, (url, response.status_code)
        assert_secured(response)
    assert client.get("/api/matches/goodge-1/frames").headers["content-encoding"] == "gzip"
    refused = client.post("/api/ladders")
    assert refused.status_code == 405
    assert_secured(refused)


class FailingStore(Store):
    """A store whose every transaction fails as a bug would, quoting SQL."""

    def session(self) -> NoReturn:
        raise RuntimeError("SELECT token_hash FROM bots WHERE id = 'b1'")


def test_security_headers_on_server_errors(tmp_path: Path) -> None:
    """An unexpected failure answers 500 with the headers, and no exception text (which
    may quote SQL and its parameters)."""
    broken = FailingStore(f"sqlite:///{tmp_path / 'arena.db'}", upgrade=False)
    try:
        with TestClient(create_app(broken), raise_server_exceptions=False) as client:
            api = client.get("/api/ladders")
            assert api.status_code == 500 and api.headers["content-type"] == "application/json"
            assert api.json() == {
                "detail": "internal error: the server could not answer this request"
            }
            assert_secured(api)
            page = client.get("/")
            assert page.status_code == 500 and "internal error" in page.text
            assert "token_hash" not in page.text
            assert_secured(page)
    finally:
        broken.close()


def test_a_missing_database_is_503_with_the_headers(tmp_path: Path) -> None:
    """A database that cannot be opened is unavailable, not a bug: 503, Retry-After, the
    headers, and not the driver's text."""
    missing = Store(f"sqlite:///{tmp_path / 'missing' / 'arena.db'}", upgrade=False)
    try:
        with TestClient(create_app(missing), raise_server_exceptions=False) as client:
            for path in ("/api/ladders", "/"):
                reply = client.get(path)
                assert reply.status_code == 503 and reply.headers["retry-after"] == "5"
                assert "sqlite" not in reply.text.lower()
                assert_secured(reply)
    finally:
        missing.close()


def test_pages_have_no_inline_script_or_style(client: TestClient, arena: Arena) -> None:
    """What the policy forbids is not there: every script is a file of /static, no
    element has a style or an event handler attribute."""
    for url in (
        "/",
        f"/bots/{arena.bots['ada']}",
        "/authors/operator",
        "/tournaments",
        f"/tournaments/{arena.tournament}",
        "/matches/goodge-1",
        f"/matches/{arena.running_match}",
        "/no/such/page",
    ):
        html = client.get(url).text
        scripts = re.findall(r"<script([^>]*)>(.*?)</script>", html, re.S)
        assert scripts, url
        for attrs, body in scripts:
            assert re.fullmatch(r' src="/static/[a-z]+\.js"', attrs) and not body.strip(), url
        assert not re.search(r"<[^>]+\s(style|on[a-z]+)=", html), url
        assert "<style" not in html, url


# Rate bound ----------------------------------------------------------------------------


def test_api_burst_over_the_bound_gets_429(store: Store) -> None:
    app = create_app(store, api_rate=1.0, api_burst=5)
    with TestClient(app) as client:
        answers = [client.get("/api/ladders") for _ in range(10)]
        codes = [answer.status_code for answer in answers]
        assert codes[:5] == [200] * 5 and codes[-1] == 429, codes
        refused = answers[-1]
        assert refused.headers["content-type"] == "application/json"
        assert "too many requests" in refused.json()["detail"]
        assert 1 <= int(refused.headers["Retry-After"]) <= 2
        assert_secured(refused)
        # Only the API is bounded, and only for that address.
        assert client.get("/").status_code == 200
        assert client.get("/healthz").status_code == 200
        with TestClient(app, client=("192.0.2.7", 40000)) as other:
            assert other.get("/api/ladders").status_code == 200
        metrics = client.get("/metrics").text
    assert 'route="<unmatched>",status="429"}' in metrics  # refused before any route


def test_api_client_under_the_bound_is_never_refused(store: Store) -> None:
    """Requests spaced wider than 1/rate always find a token (sleeps only ever last
    longer, so a slow machine cannot make this fail)."""
    app = create_app(store, api_rate=50.0, api_burst=2)
    with TestClient(app) as client:
        for _ in range(40):
            assert client.get("/api/ladders/goof-3p").status_code == 200
            time.sleep(1 / 25)


def test_live_refresh_stays_well_under_the_default_bound() -> None:
    from ladder.web.app import POLL_SECONDS
    from ladder.web.security import API_BURST, API_RATE

    # A page polls one API route every POLL_SECONDS: ten tabs at once stay far below.
    assert 10 / POLL_SECONDS <= API_RATE / 10 and API_BURST >= 10


def test_token_buckets_refill_and_bound() -> None:
    buckets = TokenBuckets(rate=2.0, burst=3)
    assert [buckets.take("a", 0.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert buckets.take("a", 0.0) == pytest.approx(0.5)  # one token every 1/rate s
    assert buckets.take("a", 0.25) == pytest.approx(0.25)
    assert buckets.take("a", 0.5) == 0.0
    assert buckets.take("b", 0.5) == 0.0  # every peer has its own bucket
    assert [buckets.take("a", 100.0) for _ in range(4)][-1] > 0  # refills to `burst` only


def test_token_buckets_keep_only_the_most_recent_peers() -> None:
    buckets = TokenBuckets(rate=1.0, burst=1, peers=3)
    for peer in ("a", "b", "c"):
        assert buckets.take(peer, 0.0) == 0.0
    assert buckets.take("a", 0.0) > 0  # a is now the most recently seen
    assert buckets.take("d", 0.0) == 0.0
    assert len(buckets) == 3
    assert buckets.take("a", 0.0) > 0  # still kept, still empty
    assert buckets.take("b", 0.0) == 0.0  # b was dropped: it starts full again
    for number in range(10_000):
        buckets.take(str(number), 1.0)
    assert len(buckets) == 3
    with pytest.raises(ValueError):
        TokenBuckets(rate=0.0, burst=1)


# Bot-chosen text -------------------------------------------------------------------------


def test_visible_escapes_what_draws_nothing() -> None:
    assert visible("good\u202ebot") == "good\\u202ebot"
    assert visible("a\u2066b\u2069c\u200ed\u200fe") == "a\\u2066b\\u2069c\\u200ed\\u200fe"
    assert visible("\x00\t\n\x7f\u200b\ufeff") == "\\u0000\\u0009\\u000a\\u007f\\u200b\\ufeff"
    assert visible("x\u2028y\u2029z\U000e0041") == "x\\u2028y\\u2029z\\U000e0041"
    plain = "ada@2 é 🂡 ♠ — O'Brien <b> 日本"
    assert visible(plain) == plain
    assert visible(visible("good\u202ebot")) == "good\\u202ebot"


RTL_NAME = "good\u202ebot"
RTL_VERSION = "2\u2066x"
HIDDEN = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f]")


def test_bot_names_with_controls_show_escaped(tmp_path: Path) -> None:
    """Standings, bot, tournament and match pages and an error page show the escape;
    the JSON keeps the name as registered."""
    store = Store(f"sqlite:///{tmp_path / 'names.db'}")
    try:
        players = {}
        for seed, (name, kind) in enumerate(BOT_KINDS.items()):
            bot, _ = store.register_bot(
                RTL_NAME if name == "ada" else name,
                RTL_VERSION if name == "ada" else "1",
                ["golden10"],
            )
            players[bot.id] = kind(seed=seed)
        odd = next(iter(players))
        tournament = tournaments.create_tournament(
            store, "golden10", 4, list(players), duplicate=False, name="Names cup"
        )
        matches = tournaments.pending_matches(store, tournament)
        for match_id in matches:
            request = tournaments.planned_request(store, match_id)
            assert request is not None
            play_and_store(store, request, players)
            assert recording.record_match(store, match_id)
        assert tables.finish_tournament(store, tournament)
        shown = f"{visible(RTL_NAME)}@{visible(RTL_VERSION)}"
        assert shown == "good\\u202ebot@2\\u2066x"
        with TestClient(create_app(store)) as client:
            pages = {
                "/": [visible(RTL_NAME), visible(RTL_VERSION)],
                f"/bots/{odd}": [shown, f"live Elo of {shown} on golden10-4p"],
                f"/tournaments/{tournament}": [visible(RTL_NAME)],
                "/tournaments": [],
                f"/matches/{matches[0]}": [shown],
                f"/no/{RTL_NAME}": [f"no page at /no/{visible(RTL_NAME)}"],
            }
            for url, expected in pages.items():
                html = client.get(url).text
                assert not HIDDEN.search(html), url
                for text in expected:
                    assert text in html, (url, text)
            standings = client.get("/api/ladders/golden10-4p").json()["standings"]
            assert (RTL_NAME, RTL_VERSION) in [(line["bot"], line["version"]) for line in standings]
            bot = client.get(f"/api/bots/{odd}").json()["bot"]
            assert (bot["name"], bot["version"]) == (RTL_NAME, RTL_VERSION)
            frames = client.get(f"/api/matches/{matches[0]}/frames").json()
            assert RTL_NAME in [seat["name"] for seat in frames["seats"]]
    finally:
        store.close()
