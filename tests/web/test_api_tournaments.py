"""The web app's tournament pages, JSON and HTML, over a store filled by playing real
matches: tables, settings and planned matches."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from unittest import mock

from fastapi.testclient import TestClient

from ladder import queries, recording, swiss_rounds, tables, tournaments
from ladder.records import TournamentFormat
from ladder.store import Store
from ladder.web import create_app
from ladder.wording import rating_cells
from tests.support.arena import Arena
from tests.support.ladder import play
from tests.support.web import get_html, get_json


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


def test_a_swiss_tournament_page_shows_its_rounds_and_standing(tmp_path: Path) -> None:
    """A running Swiss tournament: each match says its round, each round its byes, and the
    standing so far is shown; once finished, the table instead of the standing."""
    store = Store(f"sqlite:///{tmp_path / 'swiss.db'}")
    try:
        names = ["ada", "bea", "cy", "dot", "eve", "fay"]
        for name in names:
            store.register_bot(name, "1", ["golden10"])
        tid = tournaments.create_tournament(
            store, "golden10", 4, names, format=TournamentFormat.SWISS, rounds=2, seed=4
        )
        (first,) = tournaments.pending_matches(store, tid)
        with TestClient(create_app(store)) as client:
            # Its progress counts every round's matches, not only the rounds seated so far.
            data = get_json(client, f"/api/tournaments/{tid}")
            assert (data["matches_finished"], data["matches_total"]) == (0, 1)
            assert data["matches_in_all"] == 2
            assert "0 of 2 matches recorded" in get_html(client, f"/tournaments/{tid}")
            listed = get_html(client, "/tournaments")
            assert '<progress max="2" value="0">' in listed and "0 / 2" in listed
        play(store, first)
        assert recording.record_match(store, first)
        (second,) = swiss_rounds.next_round(store, tid)
        fit = mock.patch.object(swiss_rounds, "standings", wraps=swiss_rounds.standings)
        with TestClient(create_app(store)) as client, fit as fitted:
            data = get_json(client, f"/api/tournaments/{tid}")
            assert (data["format"], data["rounds"], data["round"], data["first_round"]) == (
                "swiss", 2, 2, "draw",
            )  # fmt: skip
            assert [(m["match_id"], m["round"]) for m in data["matches"]] == [
                (first, 1),
                (second, 2),
            ]
            assert [r["number"] for r in data["rounds_seated"]] == [1, 2]
            for seated, match in zip(data["rounds_seated"], data["matches"], strict=True):
                assert sorted(seated["byes"] + match["bots"]) == names
            standing = data["standings"]
            assert sorted(line["bot"] for line in standing) == names
            assert [line["rating"] for line in standing] == sorted(
                (line["rating"] for line in standing), reverse=True
            )
            page = get_html(client, f"/tournaments/{tid}")
            assert "round 2 of 2" in page and "Swiss, 2 rounds" in page
            assert "by a random draw" in page
            assert "seed" not in page.lower() and "seed" not in str(data)
            for seated in data["rounds_seated"]:
                assert f"bye: {', '.join(seated['byes'])}" in page
            assert f'<tr data-match="{second}" data-round="2">' in page
            assert 'id="t-standings"' in page
            for line in standing:
                assert f'<a href="/bots/{line["bot_id"]}">{line["bot"]}</a>' in page
            # Fitted once: every poll until the next match is recorded reuses the fit.
            assert get_json(client, f"/api/tournaments/{tid}")["standings"] == standing
            assert fitted.call_count == 1

            play(store, second)
            assert recording.record_match(store, second)
            assert tables.finish_tournament(store, tid)
            done = get_json(client, f"/api/tournaments/{tid}")
            assert done["status"] == "finished" and done["standings"] == []
            assert len(done["table"]) == 6
            assert 'id="t-standings"' not in get_html(client, f"/tournaments/{tid}")
            # A round robin has no rounds to show.
            robin = tournaments.create_tournament(store, "golden10", 4, names[:4])
            plain = get_json(client, f"/api/tournaments/{robin}")
            assert (plain["format"], plain["rounds_seated"], plain["standings"]) == (
                "round_robin", [], [],
            )  # fmt: skip
    finally:
        store.close()
