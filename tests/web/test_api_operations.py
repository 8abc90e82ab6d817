"""The web app's errors and operations: odd ids and unknown paths, health, metrics, the
OpenAPI description, static files, and pages that read the store on every request."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from ladder import recording
from ladder.store import MatchRequest, Store
from ladder.web import create_app
from tests.support.arena import BOT_KINDS, Arena, play_and_store
from tests.support.web import get_html, get_json


@pytest.mark.parametrize(
    "odd",
    ["x" * 500, "é🂡", "..%2F..%2Fetc%2Fpasswd", "a b", "%00", "'; DROP TABLE bots;--", "-1"],
)
def test_odd_ids_never_5xx(client: TestClient, odd: str) -> None:
    for template in (
        "/bots/{}",
        "/api/bots/{}",
        "/tournaments/{}",
        "/api/tournaments/{}",
        "/matches/{}",
        "/api/matches/{}",
        "/api/matches/{}/frames",
        "/api/matches/{}/logs",
        "/api/ladders/{}",
        "/api/matches/goodge-1/frames?game={}",
    ):
        url = template.format(odd)
        response = client.get(url)
        assert 400 <= response.status_code < 500, (url, response.status_code)
        if url.startswith("/api/"):
            assert "detail" in response.json()


def test_unknown_paths(client: TestClient) -> None:
    assert "no page at /nothing/here" in get_html(client, "/nothing/here", 404)
    assert get_json(client, "/api/nothing", 404)["detail"] == "there is no page at /api/nothing"
    assert client.post("/api/ladders").status_code == 405


def test_healthz(client: TestClient, tmp_path: Path) -> None:
    assert get_json(client, "/healthz") == {"status": "ok", "database": True}
    broken = Store(f"sqlite:///{tmp_path / 'missing' / 'arena.db'}", upgrade=False)
    try:
        with TestClient(create_app(broken)) as other:
            assert get_json(other, "/healthz", 503) == {"status": "unavailable", "database": False}
    finally:
        broken.close()


def test_metrics_by_route_template(store: Store, arena: Arena) -> None:
    with TestClient(create_app(store)) as fresh:
        fresh.get(f"/bots/{arena.bots['ada']}")
        fresh.get(f"/bots/{arena.bots['bea']}")
        fresh.get("/api/matches/nope")
        fresh.get("/no/such/page")
        fresh.get("/api/ladders")
        text = fresh.get("/metrics").text
    assert 'arena_web_requests_total{method="GET",route="/bots/{bot_id}",status="200"} 2.0' in text
    assert (
        'arena_web_requests_total{method="GET",route="/api/matches/{match_id}",status="404"} 1.0'
        in text
    )
    assert 'arena_web_requests_total{method="GET",route="<unmatched>",status="404"} 1.0' in text
    assert 'arena_web_requests_total{method="GET",route="/api/ladders",status="200"} 1.0' in text
    assert (
        'arena_web_request_duration_seconds_count{method="GET",route="/bots/{bot_id}"} 2.0' in text
    )
    assert 'arena_web_request_duration_seconds_bucket{le="0.005"' in text
    assert arena.bots["ada"] not in text  # raw paths never become labels
    # Each app owns its registry: a second app starts from zero.
    with TestClient(create_app(store)) as other:
        assert "arena_web_requests_total{" not in other.get("/metrics").text


def test_openapi_describes_typed_responses(client: TestClient) -> None:
    spec = get_json(client, "/openapi.json")
    paths = spec["paths"]
    expected = {
        "/api/ladders": "LaddersOut",
        "/api/ladders/{ladder_id}": "LadderOut",
        "/api/bots/{bot_id}": "BotPageOut",
        "/api/tournaments": "TournamentsOut",
        "/api/tournaments/{tournament_id}": "TournamentPageOut",
        "/api/matches/{match_id}": "MatchOut",
        "/api/matches/{match_id}/frames": "FramesOut",
        "/api/matches/{match_id}/logs": "LogsOut",
        "/healthz": "HealthOut",
    }
    for path, model in expected.items():
        ok = paths[path]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
        assert ok == {"$ref": f"#/components/schemas/{model}"}, path
    frames = paths["/api/matches/{match_id}/frames"]["get"]
    assert {"404", "409", "422"} <= set(frames["responses"])
    assert frames["responses"]["409"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ErrorOut"
    }
    schemas = spec["components"]["schemas"]
    frame = schemas["FrameOut"]["properties"]
    assert set(frame) >= {"kind", "title", "text", "plays", "winner", "seats", "table", "info"}
    assert set(frame["kind"]["enum"]) >= {"deal", "bid", "trick", "tick", "round", "end"}
    assert schemas["StandingOut"]["properties"]["rating"]["type"] == "number"
    # HTML pages are not part of the API description.
    assert "/" not in paths and "/bots/{bot_id}" not in paths


def test_static_files_and_poller(client: TestClient) -> None:
    live = client.get("/static/live.js")
    assert live.status_code == 200 and "pollStandings" in live.text
    replay = client.get("/static/replay.js")
    assert replay.status_code == 200 and "/frames?game=" in replay.text
    css = client.get("/static/arena.css")
    assert css.status_code == 200 and "text/css" in css.headers["content-type"]
    assert client.get("/static/nope.js").status_code == 404
    # No page loads anything from another host (the arena may run offline).
    for url in ("/", "/tournaments", "/matches/goodge-1", "/bots/ada"):
        assert not re.search(r'(src|href)="(https?:)?//', client.get(url).text), url


def test_pages_show_new_results_as_they_arrive(tmp_path: Path) -> None:
    """The app reads the store on every request: a match recorded later shows up."""
    store = Store(f"sqlite:///{tmp_path / 'live.db'}")
    try:
        bots = {}
        for seed, (name, kind) in enumerate(BOT_KINDS.items()):
            bot, _ = store.register_bot(name, "1", ["golden10"])
            bots[bot.id] = kind(seed=seed)
        with TestClient(create_app(store)) as client:
            assert get_json(client, "/api/ladders")["ladders"] == []
            assert "No rated games yet" in get_html(client, "/")
            first = next(iter(bots))
            assert get_json(client, f"/api/bots/{first}")["history"] == []
            assert "No rated games yet" in get_html(client, f"/bots/{first}")
            request = MatchRequest("late-1", "golden10", 4, tuple(bots), 3, {}, False, 1000)
            play_and_store(store, request, bots)
            recording.record_match(store, "late-1")
            data = get_json(client, "/api/ladders")
            assert [ladder["id"] for ladder in data["ladders"]] == ["golden10-4p"]
            assert all(line["games"] == 1 for line in data["ladders"][0]["standings"])
    finally:
        store.close()
