"""The web app's routes, JSON and HTML, over a store filled by playing real matches."""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from ladder import queries, recording, tournaments
from ladder.models import RatingHistoryRow, RatingRow
from ladder.store import MatchRequest, Store
from ladder.web import create_app
from ladder.wording import rating_cells
from tests.support.arena import BOT_KINDS, SECRET_SEEDS, Arena, play_and_store, play_stored
from tests.web.clumsy import register_clumsy

LADDERS = {"goodge-4p", "golden10-4p", "golden10-3p", "goof-3p"}


def get_json(client: TestClient, url: str, status: int = 200) -> Any:
    response = client.get(url)
    assert response.status_code == status, (url, response.status_code, response.text[:300])
    assert response.headers["content-type"].startswith("application/json")
    return response.json()


def get_html(client: TestClient, url: str, status: int = 200) -> str:
    response = client.get(url)
    assert response.status_code == status, (url, response.status_code, response.text[:300])
    assert response.headers["content-type"].startswith("text/html")
    return str(response.text)


# Standings ----------------------------------------------------------------------------


def test_api_ladders_are_the_stored_ratings(client: TestClient, store: Store, arena: Arena) -> None:
    data = get_json(client, "/api/ladders")
    assert {ladder["id"] for ladder in data["ladders"]} == LADDERS
    with store.session() as session:
        stored = {
            (r.ladder_id, r.bot_id): (r.rating, r.games) for r in session.scalars(select(RatingRow))
        }
    for ladder in data["ladders"]:
        game, _, players = ladder["id"].rpartition("-")
        assert (ladder["game"], f"{ladder['players']}p") == (game, players)
        lines = ladder["standings"]
        assert [line["rank"] for line in lines] == list(range(1, len(lines) + 1))
        ratings = [line["rating"] for line in lines]
        assert ratings == sorted(ratings, reverse=True)
        for line in lines:
            assert (line["rating"], line["games"]) == stored[(ladder["id"], line["bot_id"])]
            assert line["provisional"] is (line["games"] < queries.PROVISIONAL_GAMES)
    goodge = next(ladder for ladder in data["ladders"] if ladder["id"] == "goodge-4p")
    assert {line["bot"] for line in goodge["standings"]} == set(arena.bots)
    assert all(line["games"] == 2 for line in goodge["standings"])


def test_api_one_ladder_and_unknown_ladder(client: TestClient) -> None:
    ladder = get_json(client, "/api/ladders/goof-3p")
    assert ladder["id"] == "goof-3p" and len(ladder["standings"]) == 3
    error = get_json(client, "/api/ladders/goodge-9p", 404)
    assert "no ladder 'goodge-9p'" in error["detail"]


def test_standings_page_lists_bots_ratings_and_links(client: TestClient, store: Store) -> None:
    html = get_html(client, "/")
    assert 'data-api="/api/ladders"' in html and "/static/live.js" in html
    for ladder_id in LADDERS:
        assert f'data-ladder="{ladder_id}"' in html
        for line in queries.standings(store, ladder_id):
            assert f'<a href="/bots/{line.bot_id}">{line.bot}</a>' in html
            assert f"{line.rating:.1f}" in html
    assert "provisional" in html


# Bots ------------------------------------------------------------------------------------


def test_api_bot_history_and_matches(client: TestClient, store: Store, arena: Arena) -> None:
    ada = arena.bots["ada"]
    data = get_json(client, f"/api/bots/{ada}")
    assert data["bot"] == {
        "id": ada,
        "name": "ada",
        "version": "1",
        "games": ["goodge", "golden10", "goof"],
        "online": False,
        "last_seen_at": None,
        "retired": False,
    }
    # The filled arena's bots all play by the rules.
    assert (data["strikes"], data["forfeits"]) == (0, 0)
    assert data["provisional_games"] == queries.PROVISIONAL_GAMES
    with store.session() as session:
        rows = session.scalars(
            select(RatingHistoryRow)
            .where(RatingHistoryRow.bot_id == ada)
            .order_by(RatingHistoryRow.at, RatingHistoryRow.id)
        ).all()
        history = [(r.ladder_id, r.match_id, r.rating_after, r.games) for r in rows]
        starts = {r.ladder_id: r.rating_before for r in reversed(rows)}
    assert [
        (p["ladder_id"], p["match_id"], p["rating"], p["games"]) for p in data["history"]
    ] == history
    assert {r["ladder_id"]: r["start_rating"] for r in data["ratings"]} == starts
    assert {r["ladder_id"] for r in data["ratings"]} == LADDERS
    for rating in data["ratings"]:
        line = next(s for s in queries.standings(store, rating["ladder_id"]) if s.bot_id == ada)
        assert (rating["rank"], rating["rating"], rating["games"], rating["provisional"]) == (
            line.rank,
            line.rating,
            line.games,
            line.provisional,
        )
    matches = {line["match_id"]: line for line in data["matches"]}
    assert {"goodge-1", "goodge-2", "golden10-1", "goof-1"} <= set(matches)
    goodge1 = matches["goodge-1"]
    stored = store.match("goodge-1").result
    assert stored is not None
    result = stored.to_json()
    assert [bot["id"] for bot in goodge1["bots"]] == result["bots"]
    assert goodge1["scores"] == result["scores"] and goodge1["ranks"] == result["ranks"]
    assert goodge1["strikes"] == [0, 0, 0, 0] and goodge1["forfeits"] == [False] * 4
    # A bot is also found by its name, or name@version.
    assert get_json(client, "/api/bots/ada")["bot"]["id"] == ada
    assert get_json(client, "/api/bots/ada@1")["bot"]["id"] == ada


def test_bot_page_draws_one_chart_per_ladder(
    client: TestClient, store: Store, arena: Arena
) -> None:
    ada = arena.bots["ada"]
    html = get_html(client, f"/bots/{ada}")
    charts = re.findall(r'<div class="chart-block" data-ladder="([^"]+)">(.*?)</div>', html, re.S)
    assert {ladder for ladder, _ in charts} == LADDERS
    history = queries.bot_history(store, ada)
    for ladder, chart in charts:
        assert "<svg" in chart and 'class="line"' in chart
        points = [p for p in history if p.ladder_id == ladder]
        # One dot per rated match plus the start.
        assert chart.count('<circle class="dot"') == len(points) + 1
        for point in points:
            assert f"{point.rating:.1f} after game {point.games}" in chart
        assert '<text class="axis-title x-title"' in chart and ">rated matches played<" in chart
        assert '<text class="axis-title y-title"' in chart and ">rating (Elo)<" in chart
    for match_id in ("goodge-1", "goodge-2", "golden10-1", "goof-1"):
        assert f'href="/matches/{match_id}"' in html


def test_unknown_bot_is_404_in_json_and_html(client: TestClient) -> None:
    assert "no bot 'nobody'" in get_json(client, "/api/bots/nobody", 404)["detail"]
    html = get_html(client, "/bots/nobody", 404)
    assert "Not found" in html and "no bot &#39;nobody&#39;" in html


# Tournaments ---------------------------------------------------------------------------------


def test_api_tournaments(client: TestClient, store: Store, arena: Arena) -> None:
    listed = get_json(client, "/api/tournaments")["tournaments"]
    assert {t["id"] for t in listed} == {arena.tournament, arena.open_tournament}
    done = get_json(client, f"/api/tournaments/{arena.tournament}")
    assert done["status"] == "finished" and done["name"] == "Golden 10 cup"
    assert done["ladder_id"] == "golden10-3p"
    assert done["matches_total"] == done["matches_finished"] == 4
    assert {line["bot"] for line in done["table"]} == set(arena.bots)
    ratings = [line["rating"] for line in done["table"]]
    assert ratings == sorted(ratings, reverse=True)
    for line in done["table"]:
        assert line["ci_low"] <= line["rating"] <= line["ci_high"]
        assert line["games"] == 9  # three matches of three rotations each
    view = queries.tournament(store, arena.tournament)
    assert [(line["bot_id"], line["rating"]) for line in done["table"]] == [
        (line.bot_id, line.rating) for line in view.table
    ]
    open_ = get_json(client, f"/api/tournaments/{arena.open_tournament}")
    assert open_["status"] == "running" and open_["table"] == []
    assert (open_["matches_finished"], open_["matches_total"]) == (0, 4)
    assert "no tournament" in get_json(client, "/api/tournaments/t-nope", 404)["detail"]


def test_tournament_pages(client: TestClient, store: Store, arena: Arena) -> None:
    listing = get_html(client, "/tournaments")
    assert "Golden 10 cup" in listing and "Goof open" in listing
    assert f'href="/tournaments/{arena.tournament}"' in listing
    page = get_html(client, f"/tournaments/{arena.tournament}")
    view = queries.tournament(store, arena.tournament)
    assert len(view.table) == 4
    # An interval bar per bot the games measure; the others say why instead.
    assert page.count('<svg class="ci"') == sum(line.measured for line in view.table)
    for line in view.table:
        assert f'<a href="/bots/{line.bot_id}">{line.bot}</a>' in page
        rating, interval = rating_cells(
            line.rating, line.ci_low, line.ci_high, line.bound, line.reason
        )
        assert f">{rating}<" in page and f">{interval}<" in page
    assert "4 of 4 matches recorded" in page
    running = get_html(client, f"/tournaments/{arena.open_tournament}")
    assert "0 of 4 matches recorded" in running and "computed when" in running
    get_html(client, "/tournaments/t-nope", 404)


# Matches ---------------------------------------------------------------------------------------


def test_api_match(client: TestClient, store: Store, arena: Arena) -> None:
    data = get_json(client, "/api/matches/goodge-1")
    stored = store.match("goodge-1").result
    assert stored is not None
    result = stored.to_json()
    assert data["status"] == "finished" and data["replay_available"] is True
    assert data["ladder_id"] == "goodge-4p" and data["duplicate"] is True
    assert [e["bot"]["id"] for e in data["entries"]] == result["bots"]
    assert [e["score"] for e in data["entries"]] == result["scores"]
    assert [e["rank"] for e in data["entries"]] == result["ranks"]
    assert [g["seats"] for g in data["games"]] == [g["seats"] for g in result["games"]]
    assert len(data["games"]) == 4
    running = get_json(client, f"/api/matches/{arena.running_match}")
    assert running["status"] == "running" and running["replay_available"] is False
    assert running["games"] == [] and all(e["score"] is None for e in running["entries"])
    aborted = get_json(client, f"/api/matches/{arena.aborted_match}")
    assert aborted["status"] == "aborted" and "restarted" in aborted["reason"]
    assert "no match" in get_json(client, "/api/matches/nope", 404)["detail"]


def test_match_pages(client: TestClient, arena: Arena) -> None:
    finished = get_html(client, "/matches/goodge-1")
    assert 'id="viewer"' in finished and "/static/replay.js" in finished
    assert 'id="next"' in finished and 'id="prev"' in finished and 'id="slider"' in finished
    assert 'id="game-select"' in finished  # a duplicate match has one game per rotation
    single = get_html(client, "/matches/golden10-1")
    assert 'id="viewer"' in single and 'id="game-select"' not in single
    running = get_html(client, f"/matches/{arena.running_match}")
    assert 'id="viewer"' not in running and "still being played" in running
    assert "replay.js" not in running
    aborted = get_html(client, f"/matches/{arena.aborted_match}")
    assert 'id="viewer"' not in aborted and "aborted" in aborted
    assert "no match" in get_html(client, "/matches/nope", 404)


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def commitment_shown(html: str, commitment: str) -> bool:
    """The page shows the commitment's first 16 hex digits, the whole of it as a title."""
    return f'title="{commitment}">{commitment[:16]}…</code>' in html


def test_seed_hidden_until_the_match_has_finished(
    client: TestClient, store: Store, arena: Arena
) -> None:
    for match_id in (arena.running_match, arena.aborted_match):
        seed = str(store.match(match_id).seed)
        assert len(seed) > 30  # a drawn seed: never found in a page by chance
        data = get_json(client, f"/api/matches/{match_id}")
        assert data["seed"] is None and data["games"] == []
        assert data["seed_commitment"] == sha256(seed)
        html = get_html(client, f"/matches/{match_id}")
        assert seed not in html and 'id="m-seed"' not in html
        assert commitment_shown(html, data["seed_commitment"])
        assert "secret until the match has finished" in html
        assert "arena match verify" not in html
    finished = get_json(client, "/api/matches/goodge-1")
    stored = store.match("goodge-1").result
    assert stored is not None
    result = stored.to_json()
    assert finished["seed"] == str(store.match("goodge-1").seed)
    assert sha256(finished["seed"]) == finished["seed_commitment"]
    assert [g["seed"] for g in finished["games"]] == [str(g["seed"]) for g in result["games"]]
    html = get_html(client, "/matches/goodge-1")
    assert f'<code id="m-seed">{finished["seed"]}</code>' in html
    assert commitment_shown(html, finished["seed_commitment"])
    assert "<code>arena match verify goodge-1</code> checks" in html


def test_a_drawn_seed_is_published_when_its_match_finishes(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'fair.db'}")
    try:
        bots = {}
        for number, (name, kind) in enumerate(BOT_KINDS.items()):
            bot, _ = store.register_bot(name, "1", ["golden10"])
            bots[bot.id] = kind(seed=number)
        # No seed asked: the store draws a secret 128-bit one, as for the referee's matches.
        store.create_match(
            MatchRequest("fair-1", "golden10", 4, tuple(bots), None, {}, False, 1000)
        )
        seed = str(store.match("fair-1").seed)
        with TestClient(create_app(store)) as client:
            running = get_json(client, "/api/matches/fair-1")
            assert running["status"] == "running" and running["seed"] is None
            assert running["seed_commitment"] == sha256(seed)
            page = get_html(client, "/matches/fair-1")
            assert seed not in page and commitment_shown(page, sha256(seed))
            play_stored(store, "fair-1", bots)
            done = get_json(client, "/api/matches/fair-1")
            assert done["status"] == "finished" and done["seed"] == seed
            assert done["seed_commitment"] == running["seed_commitment"] == sha256(done["seed"])
            assert [g["seed"] for g in done["games"]] == [seed]
            page = get_html(client, "/matches/fair-1")
            assert (
                f'<code id="m-seed">{seed}</code>' in page and "arena match verify fair-1" in page
            )
    finally:
        store.close()


def test_no_page_or_endpoint_shows_a_secret_seed(
    client: TestClient, store: Store, arena: Arena
) -> None:
    """Not the seed of a match still to finish, nor any tournament's (its matches'
    seeds derive from it)."""
    secrets = [str(seed) for seed in SECRET_SEEDS.values()]
    urls = ["/", "/tournaments", "/api/ladders", "/api/tournaments", "/openapi.json", "/metrics"]
    for tournament_id in (arena.tournament, arena.open_tournament):
        urls += [f"/tournaments/{tournament_id}", f"/api/tournaments/{tournament_id}"]
    for bot_id in arena.bots.values():
        urls += [f"/bots/{bot_id}", f"/api/bots/{bot_id}"]
    for match_id in (arena.running_match, arena.aborted_match, *arena.goodge_matches):
        urls += [f"/matches/{match_id}", f"/api/matches/{match_id}"]
        urls += [f"/api/matches/{match_id}/frames?game={game}" for game in range(4)]
        urls.append(f"/api/matches/{match_id}/logs")
    for url in urls:
        body = client.get(url).text
        assert not [seed for seed in secrets if seed in body], url
    for url in ("/tournaments", f"/tournaments/{arena.tournament}"):
        assert "seed" not in get_html(client, url).lower(), url
    assert "seed" not in str(get_json(client, "/api/tournaments"))
    schemas = get_json(client, "/openapi.json")["components"]["schemas"]
    assert "seed" not in schemas["TournamentOut"]["properties"]
    assert {"seed", "seed_commitment"} <= set(schemas["MatchOut"]["properties"])


def test_frames_api(client: TestClient, store: Store) -> None:
    for index in range(4):
        data = get_json(client, f"/api/matches/goodge-1/frames?game={index}")
        replay = store.replays("goodge-1")[index]
        assert data["game_index"] == index and data["games"] == 4 and data["game"] == "goodge"
        assert [seat["id"] for seat in data["seats"]] == list(replay.seats)
        assert data["moves"] == len(replay.log["moves"]) and data["sampled"] is False
        frames = data["frames"]
        assert frames[0]["kind"] == "deal" and frames[-1]["kind"] == "end"
        assert [f["index"] for f in frames] == list(range(len(frames)))
        assert frames[-1]["move"] == data["moves"]
    goof = get_json(client, "/api/matches/goof-1/frames")
    assert goof["game"] == "goof" and goof["frames"][-1]["kind"] == "end"
    assert all(f["kind"] in ("deal", "tick", "round", "end") for f in goof["frames"])


def test_frames_only_for_finished_matches(client: TestClient, arena: Arena) -> None:
    running = get_json(client, f"/api/matches/{arena.running_match}/frames", 409)
    assert "is running" in running["detail"] and "no hidden card" in running["detail"]
    aborted = get_json(client, f"/api/matches/{arena.aborted_match}/frames", 409)
    assert "aborted" in aborted["detail"]
    assert "no match" in get_json(client, "/api/matches/nope/frames", 404)["detail"]
    missing = get_json(client, "/api/matches/golden10-1/frames?game=1", 404)
    assert "has no game 1" in missing["detail"]
    assert "bad request" in get_json(client, "/api/matches/golden10-1/frames?game=x", 422)["detail"]
    get_json(client, "/api/matches/golden10-1/frames?game=-1", 422)


def test_logs_only_for_finished_matches(client: TestClient, store: Store, arena: Arena) -> None:
    data = get_json(client, "/api/matches/goodge-1/logs")
    assert data["match_id"] == "goodge-1"
    assert [(g["game_index"], g["seats"], g["log"]) for g in data["games"]] == [
        (r.game_index, list(r.seats), r.log) for r in store.replays("goodge-1")
    ]
    for match_id in (arena.running_match, arena.aborted_match):
        refused = get_json(client, f"/api/matches/{match_id}/logs", 409)
        assert "only once it has finished" in refused["detail"]
        assert "no hidden card" in refused["detail"]
    assert "no match" in get_json(client, "/api/matches/nope/logs", 404)["detail"]


# Errors, operations --------------------------------------------------------------------------------


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


# What organisers and bot authors reach for first ---------------------------------------


def test_api_ladders_say_when_provisional_ends(client: TestClient) -> None:
    data = get_json(client, "/api/ladders")
    assert data["provisional_games"] == queries.PROVISIONAL_GAMES
    html = get_html(client, "/")
    assert f'<span id="provisional-rule">{queries.PROVISIONAL_GAMES} rated games</span>' in html
    # Each badge says how many rated games are left (every bot here has fewer than 20).
    line = data["ladders"][0]["standings"][0]
    assert (
        f'title="provisional until {queries.PROVISIONAL_GAMES} rated games '
        f'({queries.PROVISIONAL_GAMES - line["games"]} to go)"'
    ) in html


def test_api_tournament_settings_and_matches(
    client: TestClient, store: Store, arena: Arena
) -> None:
    done = get_json(client, f"/api/tournaments/{arena.tournament}")
    view = queries.tournament(store, arena.tournament)
    assert done["entrants"] == ["ada", "bea", "cy", "dot"] == view.entrants
    assert done["duplicate"] is True and done["deadline_ms"] == view.deadline_ms == 500
    assert done["options"] == {} and done["parent_id"] is None
    assert done["matches_failed"] == 0
    planned = queries.tournament_matches(store, arena.tournament)
    assert [(m["match_id"], m["number"], m["bots"], m["status"]) for m in done["matches"]] == [
        (m.match_id, m.number, m.bots, m.status) for m in planned
    ]
    assert {m["status"] for m in done["matches"]} == {"recorded"}
    assert {m["match_status"] for m in done["matches"]} == {"finished"}
    assert all(len(m["bots"]) == 3 and set(m["bots"]) <= set(arena.bots) for m in done["matches"])
    open_ = get_json(client, f"/api/tournaments/{arena.open_tournament}")
    assert open_["duplicate"] is False and len(open_["matches"]) == 4
    assert {(m["status"], m["match_status"]) for m in open_["matches"]} == {("planned", None)}
    # The list carries the settings, not the plans.
    listed = get_json(client, "/api/tournaments")["tournaments"]
    assert all("matches" not in t and "entrants" in t for t in listed)

    page = get_html(client, f"/tournaments/{arena.tournament}")
    for match in done["matches"]:
        assert f'<tr data-match="{match["match_id"]}">' in page
        assert f'<a href="/matches/{match["match_id"]}">{match["match_id"]}</a>' in page
        assert f"<td>{', '.join(match['bots'])}</td>" in page
    assert page.count('<span class="status s-recorded">recorded</span>') == 4
    assert '<dd id="t-players">3 a match, ladder <code>golden10-3p</code></dd>' in page
    assert "yes: every deal is played once per rotation of the seats" in page
    assert '<dd id="t-deadline">500 ms</dd>' in page
    assert "the game's defaults" in page and "none: played once" in page
    assert '<span class="muted">no template</span>' in page
    for name in arena.bots:
        assert f'<a href="/bots/{name}">{name}</a>' in page
    running = get_html(client, f"/tournaments/{arena.open_tournament}")
    assert running.count("(not started)") == 4 and 'href="/matches/' not in running
    assert "no: one game per deal" in running


def test_tournament_settings_of_a_scheduled_run(tmp_path: Path) -> None:
    """A run started from a scheduled template names it; the template shows its schedule."""
    store = Store(f"sqlite:///{tmp_path / 'scheduled.db'}")
    try:
        for name in ("ada", "bea", "cy"):
            store.register_bot(name, "1", ["golden10"])
        template = tournaments.create_tournament(
            store,
            "golden10",
            3,
            ["ada", "bea", "cy"],
            duplicate=False,
            deadline_ms=750,
            name="Nightly",
            schedule="0 3 * * *",
            options={"rounds": 2, "yellow10_floor": "game"},
        )
        run = tournaments.start_scheduled_run(store, template, datetime(2026, 1, 5, 3, tzinfo=UTC))
        with TestClient(create_app(store)) as client:
            data = get_json(client, f"/api/tournaments/{run}")
            assert data["parent_id"] == template and data["schedule"] is None
            assert data["options"] == {"rounds": "2", "yellow10_floor": "game"}
            assert data["deadline_ms"] == 750 and data["entrants"] == ["ada", "bea", "cy"]
            page = get_html(client, f"/tournaments/{run}")
            assert (
                f'the template <a href="/tournaments/{template}"><code>{template}</code></a>'
                in page
            )
            assert "<code>rounds=2</code> <code>yellow10_floor=game</code>" in page
            assert '<dd id="t-deadline">750 ms</dd>' in page
            shown = get_json(client, f"/api/tournaments/{template}")
            assert shown["schedule"] == "0 3 * * *" and shown["matches"] == []
            page = get_html(client, f"/tournaments/{template}")
            assert "<code>0 3 * * *</code> (cron, UTC): a template" in page
    finally:
        store.close()


def test_bot_pages_show_presence_strikes_forfeits_and_retirement(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'conduct.db'}")
    try:
        ids = register_clumsy(store, {"steady": 0, "slip": 2, "quits": 3})
        result = store.match("clumsy-steady-slip-quits").result
        assert result is not None
        stored = {bot: int(result.strikes.get(bot, 0)) for bot in ids.values()}
        assert stored == {ids["steady"]: 0, ids["slip"]: 2, ids["quits"]: 3}
        assert result.forfeits == (ids["quits"],)
        store.mark_seen([ids["steady"]], online=True)
        with TestClient(create_app(store)) as client:
            slip = get_json(client, "/api/bots/slip")
            assert (slip["strikes"], slip["forfeits"]) == (2, 0)
            line = slip["matches"][0]
            assert [bot["name"] for bot in line["bots"]] == ["steady", "slip", "quits"]
            assert line["strikes"] == [0, 2, 3] and line["forfeits"] == [False, False, True]
            quits = get_json(client, "/api/bots/quits")
            assert (quits["strikes"], quits["forfeits"]) == (3, 1)
            html = get_html(client, "/bots/quits")
            assert '<strong id="b-strikes">3 strikes</strong>' in html
            assert '<strong id="b-forfeits">1 forfeit</strong>' in html
            assert '<span class="badge warn">2 strikes</span>' in html
            assert '<span class="badge bad">forfeit</span>' in html

            # Presence: the referee has just seen `steady`; nobody has seen the others.
            steady = get_json(client, "/api/bots/steady")["bot"]
            assert steady["online"] is True and steady["last_seen_at"] is not None
            assert slip["bot"]["online"] is False and slip["bot"]["last_seen_at"] is None
            html = get_html(client, "/bots/steady")
            assert '<span class="presence on">online</span>' in html
            assert 'last seen <span id="b-last-seen">20' in html
            assert '<span id="b-last-seen">never</span>' in get_html(client, "/bots/slip")
            standings = get_json(client, "/api/ladders/golden10-3p")["standings"]
            assert {line["bot"]: line["online"] for line in standings} == {
                "steady": True,
                "slip": False,
                "quits": False,
            }
            html = get_html(client, "/")
            row = re.search(rf'<tr data-bot="{ids["steady"]}">(.*?)</tr>', html, re.S)
            assert row and '<span class="presence on">online</span>' in row.group(1)

            # A retired bot leaves the standings; its page still answers, and says so.
            store.retire_bot(ids["quits"])
            standings = get_json(client, "/api/ladders/golden10-3p")["standings"]
            assert "quits" not in {line["bot"] for line in standings}
            retired = get_json(client, "/api/bots/quits")
            assert retired["bot"]["retired"] is True and retired["forfeits"] == 1
            assert len(retired["history"]) == 1 and retired["matches"]
            # Its last rating stays, unranked, with its chart.
            assert [(r["ladder_id"], r["rank"]) for r in retired["ratings"]] == [
                ("golden10-3p", None)
            ]
            assert retired["ratings"][0]["rating"] == quits["ratings"][0]["rating"]
            assert quits["ratings"][0]["rank"] == 3
            html = get_html(client, "/bots/quits")
            assert '<p class="notice" id="b-retired">This version is retired' in html
            assert "unranked (retired)" in html and html.count('<svg class="chart"') == 1
            assert 'id="b-retired"' not in get_html(client, "/bots/slip")
    finally:
        store.close()


def test_standings_name_the_bots_still_in_practice(tmp_path: Path) -> None:
    from tests.support.ladder import play, register

    store = Store(f"sqlite:///{tmp_path / 'practice.db'}")
    try:
        bots = [register(store, "prac") for _ in range(3)]
        request = MatchRequest("L1-goof-3p-0", "goof", 3, tuple(bots), None, {}, False, 0)
        store.create_match(request)
        play(store, request.id)
        assert recording.record_match(store, request.id, practice_matches=2)
        with TestClient(create_app(store)) as client:
            ladder = get_json(client, "/api/ladders/goof-3p")
            assert ladder["standings"] == []
            assert sorted(line["bot_id"] for line in ladder["practice"]) == sorted(bots)
            assert {line["practice_matches"] for line in ladder["practice"]} == {1}
            page = get_html(client, "/")
            assert "In practice" in page and all(store.bot(b).name in page for b in bots)
    finally:
        store.close()
