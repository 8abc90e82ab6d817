"""The referee's Prometheus metrics, on a registry the caller owns."""

from __future__ import annotations

from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

MOVE_LATENCY_BUCKETS = (
    0.0001,
    0.0002,
    0.0003,
    0.0005,
    0.00075,
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
    relayed: Counter
    relay_added_latency: Histogram
    placements: Counter
    replicas_live: Gauge
    draining: Gauge

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
                "Time from sending an Act request to its answer, by game and by path: 'local' "
                "for a bot held by this replica, 'relay' for one held by another",
                ["game", "path"],
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
            relayed=Counter(
                "arena_relayed_requests",
                "Act requests relayed through Redis: 'sent' for seats of this replica's matches "
                "held elsewhere, 'forwarded' to this replica's bots for others' matches",
                ["direction"],
                registry=registry,
            ),
            relay_added_latency=Histogram(
                "arena_relay_added_latency_seconds",
                "What the relay adds to a relayed move: its round trip less the bot's own time",
                buckets=MOVE_LATENCY_BUCKETS,
                registry=registry,
            ),
            placements=Counter(
                "arena_match_placements",
                "StartMatch calls by where the match went: 'here', or 'forwarded' to the "
                "replica holding most of its seats",
                ["where"],
                registry=registry,
            ),
            replicas_live=Gauge(
                "arena_referee_replicas", "Live referee replicas this one sees", registry=registry
            ),
            draining=Gauge(
                "arena_referee_draining",
                "1 while this replica drains (takes no match, moves its bots)",
                registry=registry,
            ),
        )
