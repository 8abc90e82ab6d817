"""Prometheus metrics of the web process, in a registry owned by one app."""

from __future__ import annotations

import time
from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Histogram
from starlette.types import ASGIApp, Message, Receive, Scope, Send

UNMATCHED = "<unmatched>"
"""The route label of requests that reached no route: 404s of unknown paths, and
API requests the rate bound refused (429) before routing."""


@dataclass(frozen=True)
class WebMetrics:
    """HTTP requests by route template, method and status; their durations."""

    registry: CollectorRegistry
    requests: Counter
    duration: Histogram

    @classmethod
    def create(cls) -> WebMetrics:
        """Metrics in a new registry (one per app, so tests never share them)."""
        registry = CollectorRegistry()
        return cls(
            registry=registry,
            requests=Counter(
                "arena_web_requests",
                "HTTP requests served, by route template, method and status",
                ["route", "method", "status"],
                registry=registry,
            ),
            duration=Histogram(
                "arena_web_request_duration_seconds",
                "Time to answer an HTTP request, by route template and method",
                ["route", "method"],
                buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
                registry=registry,
            ),
        )


class MetricsMiddleware:
    """Counts and times every HTTP request under its route template (`/bots/{bot_id}`).

    The router records the matched route in the request scope; labelling by
    template, never by the raw path, keeps the number of series bounded.
    """

    def __init__(self, app: ASGIApp, metrics: WebMetrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def send_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, send_status)
        finally:
            route = scope.get("route")
            template = str(getattr(route, "path", UNMATCHED)) if route is not None else UNMATCHED
            method = str(scope.get("method", "GET"))
            self.metrics.requests.labels(template, method, str(status)).inc()
            self.metrics.duration.labels(template, method).observe(time.perf_counter() - started)
