"""The workers' settings: ARENA_* environment variables, overridable by flags.

With no broker configured the workers use an embedded transport that needs
no server: kombu's `filesystem://`, with its message folders in `.arena/`
beside the SQLite database (or the current folder for another database),
and results in `.arena/results.db`. With a `redis://` broker the results go
to the same Redis.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy.engine import make_url

DEFAULT_DATABASE_URL = "sqlite:///arena.db"
DEFAULT_REFEREE = "127.0.0.1:50051"
DEFAULT_METRICS_PORT = 9102
DEFAULT_LADDER_INTERVAL_S = 30.0
DEFAULT_MATCH_TIMEOUT_S = 3600.0
DEFAULT_VISIBILITY_TIMEOUT_S = 900
DEFAULT_SWEEP_INTERVAL_S = 60.0
DEFAULT_SWEEP_AGE_S = 120.0
EMBEDDED_BROKER = "filesystem://localhost/"


def env(name: str, default: str | None = None) -> str | None:
    """The value of ARENA_<name>, or `default` when unset or empty."""
    value = os.environ.get(f"ARENA_{name}")
    return value if value not in (None, "") else default


def state_folder(database_url: str) -> Path:
    """`.arena/` beside the SQLite database file (else in the current folder)."""
    try:
        url = make_url(database_url)
    except Exception:
        return Path.cwd() / ".arena"
    if url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:"):
        return Path(str(url.database)).resolve().parent / ".arena"
    return Path.cwd() / ".arena"


SWITCHES = {
    "1": True,
    "on": True,
    "true": True,
    "yes": True,
    "0": False,
    "off": False,
    "false": False,
    "no": False,
}


def switch(name: str, default: bool) -> bool:
    """An on/off ARENA_* variable; ValueError naming it for any other value."""
    value = (env(name) or "").strip().lower()
    if not value:
        return default
    if value not in SWITCHES:
        raise ValueError(f"ARENA_{name} must be on or off (1/0, true/false), not {value!r}")
    return SWITCHES[value]


@dataclass(frozen=True)
class WorkerSettings:
    """Everything the workers and beat need to know."""

    database_url: str = DEFAULT_DATABASE_URL
    broker_url: str = EMBEDDED_BROKER
    backend_url: str | None = None
    referee: str = DEFAULT_REFEREE
    admin_token: str | None = None
    metrics_port: int = DEFAULT_METRICS_PORT
    ladder_interval_s: float = DEFAULT_LADDER_INTERVAL_S
    ladders: tuple[str, ...] = ()
    ladder_deadline_ms: int = 0
    ladder_duplicate: bool = True
    match_timeout_s: float = DEFAULT_MATCH_TIMEOUT_S
    max_retries: int = 8
    visibility_timeout_s: int = DEFAULT_VISIBILITY_TIMEOUT_S
    sweep_interval_s: float = DEFAULT_SWEEP_INTERVAL_S
    sweep_age_s: float = DEFAULT_SWEEP_AGE_S

    @classmethod
    def from_env(
        cls,
        *,
        database_url: str | None = None,
        broker_url: str | None = None,
        backend_url: str | None = None,
        referee: str | None = None,
        admin_token: str | None = None,
        metrics_port: int | None = None,
        ladder_interval_s: float | None = None,
    ) -> WorkerSettings:
        """Settings from the arguments, then ARENA_* variables, then defaults."""
        ladders = env("LADDERS", "") or ""
        return cls(
            database_url=database_url or env("DATABASE_URL", DEFAULT_DATABASE_URL) or "",
            broker_url=broker_url or env("BROKER_URL", EMBEDDED_BROKER) or EMBEDDED_BROKER,
            backend_url=backend_url or env("RESULT_BACKEND"),
            referee=referee or env("REFEREE", DEFAULT_REFEREE) or DEFAULT_REFEREE,
            admin_token=admin_token or env("ADMIN_TOKEN"),
            metrics_port=(
                metrics_port
                if metrics_port is not None
                else int(env("WORKER_METRICS_PORT", str(DEFAULT_METRICS_PORT)) or 0)
            ),
            ladder_interval_s=(
                ladder_interval_s
                if ladder_interval_s is not None
                else float(env("LADDER_INTERVAL_S", str(DEFAULT_LADDER_INTERVAL_S)) or 0)
            ),
            ladders=tuple(name.strip() for name in ladders.split(",") if name.strip()),
            ladder_deadline_ms=int(env("LADDER_DEADLINE_MS", "0") or 0),
            ladder_duplicate=switch("LADDER_DUPLICATE", True),
            match_timeout_s=float(env("MATCH_TIMEOUT_S", str(DEFAULT_MATCH_TIMEOUT_S)) or 0),
            visibility_timeout_s=int(
                env("VISIBILITY_TIMEOUT_S", str(DEFAULT_VISIBILITY_TIMEOUT_S)) or 0
            ),
            sweep_interval_s=float(env("SWEEP_INTERVAL_S", str(DEFAULT_SWEEP_INTERVAL_S)) or 0),
            sweep_age_s=float(env("SWEEP_AGE_S", str(DEFAULT_SWEEP_AGE_S)) or 0),
        )

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
                "polling_interval": 0.2,
            }
        if self.broker_url.startswith(("redis://", "rediss://")):
            # A task taken by a worker that died unacknowledged is redelivered after
            # this long. A task running longer is delivered again too: harmless
            # (play_match is idempotent) and longer than the retries' back-off.
            # Abandoned tasks are looked for every few seconds (kombu's default sweep,
            # every 10 x 10 s, would leave them waiting far past a short timeout).
            return {
                "visibility_timeout": self.visibility_timeout_s,
                "unacked_restore_interval": max(1, min(10, self.visibility_timeout_s // 2)),
                "unacked_restore_throttle": 1,
            }
        return {}
