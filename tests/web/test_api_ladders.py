"""The web app's standings, JSON and HTML, over a store filled by playing real matches."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import select

from ladder import queries, recording
from ladder.models import RatingRow
from ladder.store import MatchRequest, Store
from ladder.web import create_app
from tests.support.arena import Arena
from tests.support.web import LADDERS, get_html, get_json


def test_api_ladders_are_the_stored_ratings(client: TestClient, store: Store, arena: Arena) -> None:
    data = get_json(client, "/api/ladders")
    assert {ladder["id"] for ladder in data["ladders"]} == LADDERS
    with store.session() as session:
        stored = {
            (r.ladder_id, r.bot_id): (r.fit_rating, r.fit_se, r.rating, r.games)
            for r in session.scalars(select(RatingRow))
        }
    for ladder in data["ladders"]:
        game, _, players = ladder["id"].rpartition("-")
        assert (ladder["game"], f"{ladder['players']}p") == (game, players)
        lines = ladder["standings"]
        assert [line["rank"] for line in lines] == list(range(1, len(lines) + 1))
        # Ranked by the fit's rating: the live Elo is beside it, in another order maybe.
        ratings = [line["rating"] for line in lines]
        assert ratings == sorted(ratings, reverse=True)
        for line in lines:
            fit, se, elo, games = stored[(ladder["id"], line["bot_id"])]
            if ladder["id"] == arena.unfitted_ladder:
                assert fit is None and (line["rating"], line["se"]) == (elo, None)
                assert line["provisional"] is True
            else:
                assert fit is not None and se is not None
                assert (line["rating"], line["se"]) == (fit, se)
                assert line["provisional"] is (se > queries.PROVISIONAL_SE)
            assert (line["elo"], line["games"]) == (elo, games)
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
            shown = f"{line.rating:.0f}"
            if line.se is not None:
                shown += f' <span class="se">&plusmn; {line.se:.0f}</span>'
            assert f'<td class="num rating">{shown}</td>' in html
            assert f'<td class="num elo">{line.elo:.1f}</td>' in html
    assert "provisional" in html


def test_api_ladders_say_when_provisional_ends(client: TestClient, arena: Arena) -> None:
    data = get_json(client, "/api/ladders")
    assert data["provisional_se"] == queries.PROVISIONAL_SE
    html = get_html(client, "/")
    assert (f'<span id="provisional-rule">&plusmn;{queries.PROVISIONAL_SE:.0f} Elo</span>') in html
    # Each badge says how uncertain the rating is, or that it has no fit yet.
    badges = 0
    for ladder in data["ladders"]:
        for line in ladder["standings"]:
            if ladder["id"] == arena.unfitted_ladder:
                assert line["provisional"] and 'title="not in the ladder\'s fit yet"' in html
            elif line["provisional"]:
                badges += 1
                assert (
                    f'title="uncertain by {line["se"]:.0f} Elo: provisional while above '
                    f'{queries.PROVISIONAL_SE:.0f}"'
                ) in html
    assert badges  # the one Golden 10 match at 4 leaves every rating there provisional


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
