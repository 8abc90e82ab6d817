"""The web app's match pages, JSON and HTML, over a store filled by playing real matches:
results, seeds kept secret until the end, frames and logs of finished matches only."""

from __future__ import annotations

import hashlib
from pathlib import Path

from fastapi.testclient import TestClient

from ladder.store import MatchRequest, Store
from ladder.web import create_app
from tests.support.arena import BOT_KINDS, SECRET_SEEDS, Arena, play_stored
from tests.support.web import get_html, get_json


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


# Seeds --------------------------------------------------------------------------------


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


# Frames and logs ----------------------------------------------------------------------


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
