"""The referee's Prometheus metrics, on a registry the caller owns."""

from __future__ import annotations

from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

MOVE_LATENCY_BUCKETS = (
    0.0005,
    0.001,
    0.002,
    0.005,
    0.01,
    0.02,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
)


@dataclass(frozen=True)
class RefereeMetrics:
    """Every metric the referee exports; `create` registers them."""

    registry: CollectorRegistry
    bots_connected: Gauge
    matches_running: Gauge
    matches_finished: Counter
    moves: Counter
    move_latency: Histogram
    timeouts: Counter
    illegal_moves: Counter
    forfeits: Counter
    disconnects: Counter

    @classmethod
    def create(cls, registry: CollectorRegistry | None = None) -> RefereeMetrics:
        """New metrics on `registry` (a fresh one by default, so tests can make many)."""
        registry = registry or CollectorRegistry()
        return cls(
            registry=registry,
            bots_connected=Gauge(
                "arena_bots_connected", "Bots with an open session", registry=registry
            ),
            matches_running=Gauge(
                "arena_matches_running", "Matches being played now", registry=registry
            ),
            matches_finished=Counter(
                "arena_matches_finished",
                "Matches ended, by game and outcome",
                ["game", "outcome"],
                registry=registry,
            ),
            moves=Counter("arena_moves", "Actions applied, by game", ["game"], registry=registry),
            move_latency=Histogram(
                "arena_move_latency_seconds",
                "Time from sending an Act request to its answer, by game",
                ["game"],
                buckets=MOVE_LATENCY_BUCKETS,
                registry=registry,
            ),
            timeouts=Counter(
                "arena_move_timeouts",
                "Moves not answered in time, by game",
                ["game"],
                registry=registry,
            ),
            illegal_moves=Counter(
                "arena_illegal_moves", "Illegal answers, by game", ["game"], registry=registry
            ),
            forfeits=Counter(
                "arena_forfeits",
                "Bots that forfeited a match, by game",
                ["game"],
                registry=registry,
            ),
            disconnects=Counter(
                "arena_bot_disconnects", "Bot sessions that ended", registry=registry
            ),
        )
