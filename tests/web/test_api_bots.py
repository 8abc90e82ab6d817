"""The web app's bot pages, JSON and HTML, over a store filled by playing real matches:
history and charts, presence, strikes, forfeits and retirement."""

from __future__ import annotations

import re
from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import select

from ladder import queries
from ladder.models import RatingHistoryRow
from ladder.store import Seen, Store
from ladder.web import create_app
from tests.support.arena import Arena
from tests.support.web import LADDERS, get_html, get_json
from tests.web.clumsy import register_clumsy


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
    assert data["provisional_se"] == queries.PROVISIONAL_SE
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
        assert (
            rating["rank"],
            rating["rating"],
            rating["se"],
            rating["elo"],
            rating["games"],
            rating["provisional"],
        ) == (line.rank, line.rating, line.se, line.elo, line.games, line.provisional)
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
        # The ladder's fit now, as a band of its rating +- 2 standard errors (none before
        # the ladder's first fit).
        line = next(s for s in queries.standings(store, ladder) if s.bot_id == ada)
        if ladder == arena.unfitted_ladder:
            assert line.se is None and 'class="band' not in chart
        else:
            assert line.se is not None and chart.count('<g class="band">') == 1
            assert f"the ladder&#39;s fit now: {line.rating:.0f} \u00b1 {2 * line.se:.0f}" in chart
    for match_id in ("goodge-1", "goodge-2", "golden10-1", "goof-1"):
        assert f'href="/matches/{match_id}"' in html


def test_unknown_bot_is_404_in_json_and_html(client: TestClient) -> None:
    assert "no bot 'nobody'" in get_json(client, "/api/bots/nobody", 404)["detail"]
    html = get_html(client, "/bots/nobody", 404)
    assert "Not found" in html and "no bot &#39;nobody&#39;" in html


def test_bot_pages_show_presence_strikes_forfeits_and_retirement(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'conduct.db'}")
    try:
        ids = register_clumsy(store, {"steady": 0, "slip": 2, "quits": 3})
        result = store.match("clumsy-steady-slip-quits").result
        assert result is not None
        stored = {bot: int(result.strikes.get(bot, 0)) for bot in ids.values()}
        assert stored == {ids["steady"]: 0, ids["slip"]: 2, ids["quits"]: 3}
        assert result.forfeits == (ids["quits"],)
        store.mark_seen({ids["steady"]: "s1"}, Seen.OPENED)
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
