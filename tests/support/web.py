"""Requests to the web app that check their status and content type, and the ladders of
the store `tests.support.arena.fill` builds."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

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
