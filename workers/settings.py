"""The workers' settings: ARENA_* environment variables, overridable by flags.

With no broker configured the workers use an embedded transport that needs
no server: kombu's `filesystem://`, with its message folders in `.arena/`
beside the SQLite database (or the current folder for another database),
and results in `.arena/results.db`. With a `redis://` broker the results go
to the same Redis.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ladder.settings import (
    ADMIN_TOKEN,
    BROKER,
    DATABASE,
    DEFAULT_DATABASE_URL,
    DEFAULT_REFEREE,
    REFEREE,
    from_environment,
    names,
    setting,
    switch,
)

EMBEDDED_BROKER = "filesystem://localhost/"


def state_folder(database_url: str) -> Path:
    """`.arena/` beside the SQLite database file (else in the current folder)."""
    # Imported here: the CLI reads these declarations to build its flags.
    from sqlalchemy.engine import make_url

    try:
        url = make_url(database_url)
    except Exception:
        return Path.cwd() / ".arena"
    if url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:"):
        return Path(str(url.database)).resolve().parent / ".arena"
    return Path.cwd() / ".arena"


@dataclass(frozen=True)
class WorkerSettings:
    """Everything the workers and beat need to know."""

    database_url: str = setting(DEFAULT_DATABASE_URL, DATABASE)
    broker_url: str = setting(EMBEDDED_BROKER, BROKER)
    backend_url: str | None = setting(
        None,
        env="RESULT_BACKEND",
        help="Celery result backend (default: the broker for Redis, else SQLite in .arena/)",
    )
    referee: str = setting(DEFAULT_REFEREE, REFEREE)
    admin_token: str | None = setting(None, ADMIN_TOKEN)
    metrics_port: int = setting(
        9102,
        env="WORKER_METRICS_PORT",
        flag="--metrics-port",
        help="Prometheus /metrics port, 0 for none",
        parse=int,
        metavar="PORT",
    )
    metrics_host: str = setting(
        "127.0.0.1",
        env="WORKER_METRICS_HOST",
        flag="--metrics-host",
        help="address /metrics listens on (0.0.0.0 for every interface, as a pod needs)",
        metavar="HOST",
    )
    ladder_interval_s: float = setting(
        30.0,
        env="LADDER_INTERVAL_S",
        flag="--ladder-interval-s",
        help="seconds between ladder ticks, 0 for no ladder",
        parse=float,
        metavar="S",
    )
    ladders: tuple[str, ...] = setting(
        (),
        env="LADDERS",
        help="comma-separated ladders the ticks pair bots for (default: every ladder)",
        parse=names,
    )
    ladder_deadline_ms: int = setting(
        0,
        env="LADDER_DEADLINE_MS",
        help="per-move deadline of ladder matches, 0 for the referee's",
        parse=int,
    )
    ladder_duplicate: bool = setting(
        True,
        env="LADDER_DUPLICATE",
        help="whether ladder matches are duplicate (on/off)",
        parse=switch,
    )
    ladder_practice_matches: int = setting(
        3,
        env="LADDER_PRACTICE_MATCHES",
        help="a new bot's first N ladder matches on each ladder are practice: recorded, "
        "rating nobody (0: rated from the first)",
        parse=int,
        metavar="N",
    )
    ladder_overdue_s: float = setting(
        600.0,
        env="LADDER_OVERDUE_S",
        help="a free bot that has not played a ladder match for this long is seated first, "
        "with bots of any rating (about two matches and ticks)",
        parse=float,
        metavar="S",
    )
    ladder_recent_matches: int = setting(
        200,
        env="LADDER_RECENT_MATCHES",
        help="the tick avoids repeating the tables of the ladder's last N matches",
        parse=int,
        metavar="N",
    )
    match_timeout_s: float = setting(
        3600.0,
        env="MATCH_TIMEOUT_S",
        help="how long a play_match task waits for one match",
        parse=float,
    )
    max_retries: int = 8
    visibility_timeout_s: int = setting(
        900,
        env="VISIBILITY_TIMEOUT_S",
        help="Redis redelivers an unacknowledged task after this long",
        parse=int,
    )
    sweep_interval_s: float = setting(
        60.0,
        env="SWEEP_INTERVAL_S",
        help="seconds between beat's sweeps for lost matches, 0 for none",
        parse=float,
    )
    sweep_age_s: float = setting(
        120.0,
        env="SWEEP_AGE_S",
        help="a sweep leaves alone tournaments younger than this",
        parse=float,
    )

    @classmethod
    def from_env(cls, **given: Any) -> WorkerSettings:
        """Settings from `given` (None: not given), then ARENA_* variables, then defaults."""
        return from_environment(cls, **given)

    @property
    def embedded(self) -> bool:
        """True when the broker is the server-less filesystem transport."""
        return self.broker_url.startswith("filesystem:")

    @property
    def folder(self) -> Path:
        """Where the embedded broker, results and beat state live."""
        return state_folder(self.database_url)

    def result_backend(self) -> str:
        """The result backend: as given, else Redis for Redis, else SQLite in `.arena/`."""
        if self.backend_url:
            return self.backend_url
        if self.broker_url.startswith(("redis://", "rediss://")):
            return self.broker_url
        return f"db+sqlite:///{self.folder / 'results.db'}"

    def transport_options(self) -> dict[str, Any]:
        """Broker transport options (the embedded broker's folders, Redis's visibility)."""
        if self.embedded:
            broker = self.folder / "broker"
            queue = broker / "queue"
            control = broker / "control"
            for folder in (queue, control):
                folder.mkdir(parents=True, exist_ok=True)
            return {
                "data_folder_in": str(queue),
                "data_folder_out": str(queue),
                "control_folder": str(control),
                # Each hop of a task chain (create_round_robin -> play_match) waits up to
                # this long; 0.05 s costs an idle worker about 0.6% of a core.
                "polling_interval": 0.05,
            }
        if self.broker_url.startswith(("redis://", "rediss://")):
            # A task taken by a worker that died unacknowledged is redelivered after
            # this long. A task running longer is delivered again too: harmless
            # (play_match is idempotent) and longer than the retries' back-off.
            # Abandoned tasks are looked for every few seconds (kombu's default sweep,
            # every 10 x 10 s, would leave them waiting far past a short timeout).
            sweep_s = max(1, min(10, self.visibility_timeout_s // 2))
            return {
                "visibility_timeout": self.visibility_timeout_s,
                "unacked_restore_interval": sweep_s,
                "unacked_restore_throttle": 1,
                # A sweep holds a mutex in Redis for its few milliseconds; a worker killed
                # holding it would stop every other worker's sweeps for kombu's 5 minutes.
                "unacked_mutex_expire": sweep_s,
            }
        return {}
