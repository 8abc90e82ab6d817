"""The web app over PostgreSQL: the same routes on a store filled by playing.

Uses a fresh schema in the database of ARENA_TEST_POSTGRES_URL (dropped
afterwards); skipped when PostgreSQL is unreachable unless
ARENA_REQUIRE_SERVICES=1.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from ladder import queries
from ladder.store import Store
from ladder.web import create_app
from ladder.web.app import DATABASE_UNAVAILABLE
from ladder.web.security import SECURITY_HEADERS
from tests.support.arena import Arena, fill
from tests.support.services import postgres_schema
from tests.support.tcp_proxy import TcpProxy
from tests.web.clumsy import register_clumsy


@pytest.fixture(scope="module")
def pg_arena() -> Iterator[Arena]:
    with postgres_schema("arena_web_") as url:
        yield fill(url)


def test_every_route_on_postgresql(pg_arena: Arena) -> None:
    store = Store(pg_arena.url)
    try:
        with TestClient(create_app(store)) as client:
            ladders = client.get("/api/ladders").json()["ladders"]
            assert {ladder["id"] for ladder in ladders} == {
                "goodge-4p",
                "golden10-4p",
                "golden10-3p",
                "goof-3p",
            }
            for ladder in ladders:
                assert [(s["bot_id"], s["rating"]) for s in ladder["standings"]] == [
                    (s.bot_id, s.rating) for s in queries.standings(store, ladder["id"])
                ]
            ada = pg_arena.bots["ada"]
            bot = client.get(f"/api/bots/{ada}").json()
            assert {r["ladder_id"] for r in bot["ratings"]} == {ladder["id"] for ladder in ladders}
            assert all(r["start_rating"] == 1500.0 for r in bot["ratings"])
            assert client.get(f"/bots/{ada}").text.count('<svg class="chart"') == 4
            table = client.get(f"/api/tournaments/{pg_arena.tournament}").json()["table"]
            assert len(table) == 4
            assert client.get(f"/tournaments/{pg_arena.tournament}").status_code == 200
            frames = client.get("/api/matches/goodge-2/frames?game=2").json()
            assert frames["frames"][-1]["kind"] == "end"
            assert client.get("/matches/goof-1").status_code == 200
            assert client.get(f"/api/matches/{pg_arena.running_match}/frames").status_code == 409
            assert client.get("/healthz").json() == {"status": "ok", "database": True}
            # Strikes are summed in SQL, out of each result's JSON.
            register_clumsy(store, {"steady": 0, "slip": 2, "quits": 3})
            for name, conduct in {"steady": (0, 0), "slip": (2, 0), "quits": (3, 1)}.items():
                page = client.get(f"/api/bots/{name}").json()
                assert (page["strikes"], page["forfeits"]) == conduct, name
            # PostgreSQL refuses NUL bytes in strings: such ids are simply not found.
            for url in ("/api/bots/a%00b", "/matches/a%00b", "/api/tournaments/%00", "/bots/%00"):
                assert client.get(url).status_code == 404, url
    finally:
        store.close()


def test_a_database_that_goes_away_is_503_with_retry_after(pg_arena: Arena) -> None:
    """A failover or a dropped network: every page and API call is 503 with one line and
    Retry-After, not a 500 (nor the driver's text, with the database's address), until the
    database answers again."""
    proxy, through = TcpProxy.before(pg_arena.url)
    store = Store(through)
    try:
        with proxy, TestClient(create_app(store)) as client:
            assert client.get("/api/ladders").status_code == 200
            proxy.cut()
            for path in ("/api/ladders", "/", f"/tournaments/{pg_arena.tournament}"):
                reply = client.get(path)
                assert reply.status_code == 503, (path, reply.text)
                assert reply.headers["retry-after"] == "5"
                assert DATABASE_UNAVAILABLE in reply.text, reply.text
                assert str(proxy.port) not in reply.text
                assert all(
                    reply.headers.get(name) == value for name, value in SECURITY_HEADERS.items()
                )
            assert client.get("/api/ladders").json() == {"detail": DATABASE_UNAVAILABLE}
            assert client.get("/healthz").status_code == 503
            proxy.restore()
            assert client.get("/api/ladders").status_code == 200
    finally:
        store.close()
