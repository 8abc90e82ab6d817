"""The referee's settings: flags with ARENA_* environment defaults."""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from pathlib import Path

from ladder.settings import ADMIN_TOKEN, DATABASE, DEFAULT_DATABASE_URL, setting


def registration(text: str) -> bool:
    """`open` (True) or `admin` (False): who may call Register."""
    if text not in ("open", "admin"):
        raise ValueError(f"registration is open or admin, not {text!r}")
    return text == "open"


SIGNUPS = ("open", "invite", "admin")


def signup(text: str) -> str:
    """Who may create authors: `open`, `invite` or `admin`."""
    if text not in SIGNUPS:
        raise ValueError(f"sign-up is open, invite or admin, not {text!r}")
    return text


@dataclass(frozen=True)
class RefereeSettings:
    """Everything `arena referee` can be told (see docs/operations.md).

    Each flag's variable, default and help is declared here once (`setting`),
    the database URL and the admin token in ladder.settings (many commands take them).

    Bounds on what one bot or peer may ask of the referee (0: no bound):
    `session_opens_per_minute` per bot (a bot holds one session; a new one
    replaces the old, and opening more than this many a minute fails with
    RESOURCE_EXHAUSTED; sessions that ask for their replica of a tier, one on
    each, are counted on each replica); `stray_messages_per_second` per session: messages
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

    listen: str = setting(
        "127.0.0.1:50051",
        env="REFEREE_LISTEN",
        flag="--listen",
        help="address to serve on",
        metavar="HOST:PORT",
    )
    database_url: str = setting(DEFAULT_DATABASE_URL, DATABASE)
    metrics_port: int | None = setting(
        9101,
        env="REFEREE_METRICS_PORT",
        flag="--metrics-port",
        help="Prometheus /metrics port, 0 for none",
        parse=int,
    )
    metrics_host: str = setting(
        "127.0.0.1",
        env="REFEREE_METRICS_HOST",
        flag="--metrics-host",
        help="address /metrics listens on (0.0.0.0 for every interface, as a pod needs)",
        metavar="HOST",
    )
    admin_token: str | None = setting(None, ADMIN_TOKEN)
    open_registration: bool | None = setting(
        None,
        env="REGISTRATION",
        flag="--registration",
        help="who may register bots: open (authors, with their author token; the default) or "
        "admin (the admin token only)",
        parse=registration,
        metavar="open|admin",
    )
    signup_mode: str | None = setting(
        None,
        env="SIGNUP",
        flag="--signup",
        help="who may create authors: open (anyone; bounded per client address), invite (with "
        "a code from `arena invite create`) or admin (the admin token only); default: open on "
        "loopback, else invite",
        parse=signup,
        metavar="open|invite|admin",
    )
    names_per_author: int = setting(
        10,
        env="NAMES_PER_AUTHOR",
        flag="--names-per-author",
        help="bot names one author may own; beyond it Register fails RESOURCE_EXHAUSTED; "
        "0 for no bound",
        parse=int,
    )
    versions_per_name_per_day: int = setting(
        20,
        env="VERSIONS_PER_NAME_PER_DAY",
        flag="--versions-per-name-per-day",
        help="versions of one bot name an author may register in a day (the day begins with "
        "the first); beyond it Register fails RESOURCE_EXHAUSTED with the reset time; 0 for "
        "no bound",
        parse=int,
    )
    challenges_per_hour: int = setting(
        30,
        env="CHALLENGES_PER_HOUR",
        flag="--challenges-per-hour",
        help="challenges one author may ask for in an hour (the hour begins with the first); "
        "beyond it Challenge fails RESOURCE_EXHAUSTED with the reset time; 0 for no bound",
        parse=int,
    )
    challenges_at_once: int = setting(
        4,
        env="CHALLENGES_AT_ONCE",
        flag="--challenges-at-once",
        help="challenge matches of one author running at once; beyond it Challenge fails "
        "RESOURCE_EXHAUSTED until one ends; 0 for no bound",
        parse=int,
    )
    signups_per_minute: int = setting(
        5,
        env="SIGNUPS_PER_MINUTE",
        flag="--signups-per-minute",
        help="CreateAuthor calls a minute per client address (admin-token callers exempt); "
        "beyond it RESOURCE_EXHAUSTED; 0 for no bound",
        parse=int,
    )
    default_deadline_ms: int = setting(
        1000, env="DEADLINE_MS", flag="--deadline-ms", help="default per-move deadline", parse=int
    )
    time_bank_ms: int = setting(
        5000,
        env="TIME_BANK_MS",
        flag="--time-bank-ms",
        help="each bot's extra time per match",
        parse=int,
    )
    max_strikes: int = setting(
        3,
        env="MAX_STRIKES",
        flag="--max-strikes",
        help="late or illegal answers before a forfeit",
        parse=int,
    )
    grace_s: float = setting(
        10.0,
        env="GRACE_S",
        flag="--grace-s",
        help="how long a disconnected bot may take to come back",
        parse=float,
    )
    shutdown_grace_s: float = setting(
        10.0,
        env="SHUTDOWN_GRACE_S",
        flag="--shutdown-grace-s",
        help="on SIGTERM, how long running matches may finish",
        parse=float,
    )
    max_capacity: int = 64
    max_message_bytes: int = setting(
        256 * 1024,
        env="MAX_MESSAGE_BYTES",
        flag="--max-message-bytes",
        help="largest message a client may send; bigger ones end the call RESOURCE_EXHAUSTED",
        parse=int,
    )
    session_opens_per_minute: int = setting(
        30,
        env="SESSION_OPENS_PER_MINUTE",
        flag="--session-opens-per-minute",
        help="sessions one bot may open a minute (it holds one; a new one replaces the old; "
        "one that keeps a session on every replica of a tier, this many on each); "
        "beyond it Session fails RESOURCE_EXHAUSTED; 0 for no bound",
        parse=int,
    )
    stray_messages_per_second: float = setting(
        200.0,
        env="STRAY_MESSAGES_PER_SECOND",
        flag="--stray-messages-per-second",
        help="messages a session may send a second that answer no open request (answers to "
        "open requests are never throttled); beyond it they are dropped with an Error; 0 for "
        "no bound",
        parse=float,
    )
    flood_limit: int = setting(
        1000,
        env="FLOOD_LIMIT",
        flag="--flood-limit",
        help="dropped stray messages (the allowance refills over 10 s) after which a session's "
        "stream ends RESOURCE_EXHAUSTED; 0 never ends it",
        parse=int,
    )
    registrations_per_minute: int = setting(
        60,
        env="REGISTRATIONS_PER_MINUTE",
        flag="--registrations-per-minute",
        help="Register calls a minute per client address (admin-token callers exempt when "
        "there is an admin token); beyond it RESOURCE_EXHAUSTED; 0 for no bound",
        parse=int,
    )
    reads_per_minute: int = setting(
        600,
        env="READS_PER_MINUTE",
        flag="--reads-per-minute",
        help="GetMatch, GetReplay and WatchMatch calls a minute per client address (admin-token "
        "callers exempt when there is an admin token); beyond it RESOURCE_EXHAUSTED; 0 for "
        "no bound",
        parse=int,
    )
    replica: str = setting(
        "",
        env="REFEREE_REPLICA",
        flag="--replica",
        help="this referee's name among the replicas sharing a database, the same across its "
        "restarts (default: host name and listen address)",
    )
    lease_s: float = setting(
        15.0,
        env="MATCH_LEASE_S",
        flag="--lease-s",
        help="how long the claim on a running match holds unless renewed; another replica "
        "aborts a match only once its claim has expired",
        parse=float,
    )
    relay_url: str | None = setting(
        None,
        env="RELAY_URL",
        flag="--relay",
        help="Redis URL the referee replicas share (sessions, relayed moves, placement); "
        "without it the referee is one process on its own",
        metavar="redis://HOST:PORT/DB",
    )
    processes: int = setting(
        1,
        env="REFEREE_PROCESSES",
        flag="--processes",
        help="referee processes to run on this machine, sharing the port (SO_REUSEPORT) and "
        "the relay: one per core; more than 1 needs --relay",
        parse=int,
    )
    tls_cert: str | None = setting(None, env="TLS_CERT", flag="--tls-cert", help="PEM certificate")
    tls_key: str | None = setting(None, env="TLS_KEY", flag="--tls-key", help="PEM private key")

    @property
    def replica_name(self) -> str:
        """The replica's name: as set, else this host's name and the listen address."""
        return self.replica or f"{socket.gethostname()}/{self.listen}"

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
        """Whether authors may register their bots (else the admin token only)."""
        return self.open_registration is not False

    @property
    def signup(self) -> str:
        """Who may create authors (default: anyone on loopback, else with an invite)."""
        if self.signup_mode is not None:
            return self.signup_mode
        return "open" if self.loopback else "invite"

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
        # Imported here: `arena --help` builds its flags from this module.
        from sqlalchemy.engine import make_url
        from sqlalchemy.exc import ArgumentError

        try:
            make_url(self.database_url).get_dialect()
        except (ArgumentError, ValueError) as error:
            raise ValueError(f"the database URL is not one SQLAlchemy can use: {error}") from None
        if self.max_strikes < 1 or self.grace_s < 0 or self.default_deadline_ms < 1:
            raise ValueError("max_strikes >= 1, grace >= 0 and a positive deadline are required")
        if self.processes < 1:
            raise ValueError(f"--processes must be at least 1, got {self.processes}")
        if self.processes > 1 and not self.relay_url:
            raise ValueError(
                f"--processes {self.processes} needs --relay (a Redis URL, or ARENA_RELAY_URL): "
                "the processes share the bots through it"
            )
        if self.processes > 1 and self.listen.rsplit(":", 1)[-1] == "0":
            raise ValueError("--processes needs a fixed port to share, not port 0")
        if self.relay_url and not self.relay_url.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError("the relay URL must be a redis://, rediss:// or unix:// URL")
        if self.lease_s < 1:
            raise ValueError(f"the match lease must be at least 1 s, got {self.lease_s:g}")
        if self.max_message_bytes < 1024:
            raise ValueError("max_message_bytes must be at least 1024")
        if (
            min(
                self.session_opens_per_minute,
                self.stray_messages_per_second,
                self.flood_limit,
                self.registrations_per_minute,
                self.signups_per_minute,
                self.names_per_author,
                self.versions_per_name_per_day,
                self.challenges_per_hour,
                self.challenges_at_once,
                self.reads_per_minute,
            )
            < 0
        ):
            raise ValueError("rate bounds must be >= 0 (0: no bound)")
