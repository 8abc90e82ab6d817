"""The referee's settings: flags with ARENA_* environment defaults."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError


@dataclass(frozen=True)
class RefereeSettings:
    """Everything `arena referee` can be told (see docs/operations.md).

    Bounds on what one bot or peer may ask of the referee (0: no bound):
    `session_opens_per_minute` per bot (a bot holds one session; a new one
    replaces the old, and opening more than this many a minute fails with
    RESOURCE_EXHAUSTED); `stray_messages_per_second` per session: messages
    that answer no open request (unknown or expired request ids, repeats,
    anything but an Answer). Answers to open requests are never throttled:
    the referee's own requests bound them, and a fast bot in many matches
    sends thousands a second. Stray messages beyond the rate are dropped with
    an Error; after `flood_limit` dropped ones (the allowance refills over
    10 s) the stream ends RESOURCE_EXHAUSTED. `registrations_per_minute` per
    peer address (an admin-token caller is exempt when the referee has an
    admin token); `reads_per_minute` per peer address for GetMatch,
    GetReplay and WatchMatch (the same exemption); `max_message_bytes` for any message a client sends
    (beyond it: RESOURCE_EXHAUSTED).
    """

    listen: str = "127.0.0.1:50051"
    database_url: str = "sqlite:///arena.db"
    metrics_port: int | None = 9101
    admin_token: str | None = None
    open_registration: bool | None = None
    grace_s: float = 10.0
    default_deadline_ms: int = 1000
    time_bank_ms: int = 5000
    max_strikes: int = 3
    max_capacity: int = 64
    max_message_bytes: int = 256 * 1024
    session_opens_per_minute: int = 30
    stray_messages_per_second: float = 200.0
    flood_limit: int = 1000
    registrations_per_minute: int = 60
    reads_per_minute: int = 600
    shutdown_grace_s: float = 10.0
    tls_cert: str | None = None
    tls_key: str | None = None

    @property
    def loopback(self) -> bool:
        """True when the referee listens on a loopback address only."""
        host = self.listen.rsplit(":", 1)[0].strip("[]")
        if host == "localhost":
            return True
        try:
            return ipaddress.ip_address(host).is_loopback
        except ValueError:
            return False

    @property
    def registration_is_open(self) -> bool:
        """Whether Register works without the admin token (default: on loopback)."""
        if self.open_registration is not None:
            return self.open_registration
        return self.loopback or self.admin_token is None

    def check(self) -> None:
        """Refuse settings that would leave the referee open or broken (ValueError).

        Cheap enough to run before any port is opened, so that a referee that
        cannot start never listens, not even for a moment.
        """
        if self.admin_token is None and not self.loopback:
            raise ValueError(
                f"listening on {self.listen} (not loopback) needs an admin token: "
                "set ARENA_ADMIN_TOKEN or --admin-token"
            )
        if (self.tls_cert is None) != (self.tls_key is None):
            raise ValueError("TLS needs both a certificate and a key")
        for what, path in (("certificate", self.tls_cert), ("key", self.tls_key)):
            if path is not None:
                try:
                    Path(path).read_bytes()
                except OSError as error:
                    raise ValueError(
                        f"cannot read the TLS {what} {path}: {error.strerror}"
                    ) from None
        # ArgumentError: unparsable, or an unknown dialect; ValueError: a port that is no
        # number. The message leaves the URL out: it may hold a password.
        try:
            make_url(self.database_url).get_dialect()
        except (ArgumentError, ValueError) as error:
            raise ValueError(f"the database URL is not one SQLAlchemy can use: {error}") from None
        if self.max_strikes < 1 or self.grace_s < 0 or self.default_deadline_ms < 1:
            raise ValueError("max_strikes >= 1, grace >= 0 and a positive deadline are required")
        if self.max_message_bytes < 1024:
            raise ValueError("max_message_bytes must be at least 1024")
        if (
            min(
                self.session_opens_per_minute,
                self.stray_messages_per_second,
                self.flood_limit,
                self.registrations_per_minute,
                self.reads_per_minute,
            )
            < 0
        ):
            raise ValueError("rate bounds must be >= 0 (0: no bound)")
