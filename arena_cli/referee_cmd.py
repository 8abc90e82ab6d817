"""`arena referee`: run the gRPC referee."""

from __future__ import annotations

import argparse
import asyncio
import logging
from functools import partial

from arena_cli.env import add_admin_token, add_database, add_env_option, env
from referee.server import serve
from referee.settings import RefereeSettings


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `referee` on the `arena` parser."""
    defaults = RefereeSettings()
    parser = commands.add_parser(
        "referee",
        help="run the referee (gRPC server that plays the matches)",
        description="Run the referee: bots connect to it, operators and workers start matches on it. "
        "SIGTERM or Ctrl-C stops it cleanly.",
    )
    option = partial(add_env_option, parser)
    option(
        "--listen", "REFEREE_LISTEN", defaults.listen, "address to serve on", metavar="HOST:PORT"
    )
    add_database(parser)
    option(
        "--metrics-port",
        "REFEREE_METRICS_PORT",
        defaults.metrics_port,
        "Prometheus /metrics port, 0 for none",
        int,
    )
    add_admin_token(parser)
    parser.add_argument(
        "--registration",
        choices=("open", "admin"),
        default=env("REGISTRATION"),
        help="who may register bots (env ARENA_REGISTRATION; default open on loopback, else admin)",
    )
    option(
        "--deadline-ms",
        "DEADLINE_MS",
        defaults.default_deadline_ms,
        "default per-move deadline",
        int,
    )
    option(
        "--time-bank-ms",
        "TIME_BANK_MS",
        defaults.time_bank_ms,
        "each bot's extra time per match",
        int,
    )
    option(
        "--max-strikes",
        "MAX_STRIKES",
        defaults.max_strikes,
        "late or illegal answers before a forfeit",
        int,
    )
    option(
        "--grace-s",
        "GRACE_S",
        defaults.grace_s,
        "how long a disconnected bot may take to come back",
        float,
    )
    option(
        "--shutdown-grace-s",
        "SHUTDOWN_GRACE_S",
        defaults.shutdown_grace_s,
        "on SIGTERM, how long running matches may finish",
        float,
    )
    option(
        "--max-message-bytes",
        "MAX_MESSAGE_BYTES",
        defaults.max_message_bytes,
        "largest message a client may send; bigger ones end the call RESOURCE_EXHAUSTED",
        int,
    )
    option(
        "--session-opens-per-minute",
        "SESSION_OPENS_PER_MINUTE",
        defaults.session_opens_per_minute,
        "sessions one bot may open a minute (it holds one; a new one replaces the old); "
        "beyond it Session fails RESOURCE_EXHAUSTED; 0 for no bound",
        int,
    )
    option(
        "--stray-messages-per-second",
        "STRAY_MESSAGES_PER_SECOND",
        defaults.stray_messages_per_second,
        "messages a session may send a second that answer no open request (answers to "
        "open requests are never throttled); beyond it they are dropped with an Error; 0 for "
        "no bound",
        float,
    )
    option(
        "--flood-limit",
        "FLOOD_LIMIT",
        defaults.flood_limit,
        "dropped stray messages (the allowance refills over 10 s) after which a session's "
        "stream ends RESOURCE_EXHAUSTED; 0 never ends it",
        int,
    )
    option(
        "--registrations-per-minute",
        "REGISTRATIONS_PER_MINUTE",
        defaults.registrations_per_minute,
        "Register calls a minute per client address (admin-token callers exempt when "
        "there is an admin token); beyond it RESOURCE_EXHAUSTED; 0 for no bound",
        int,
    )
    option(
        "--reads-per-minute",
        "READS_PER_MINUTE",
        defaults.reads_per_minute,
        "GetMatch, GetReplay and WatchMatch calls a minute per client address (admin-token "
        "callers exempt when there is an admin token); beyond it RESOURCE_EXHAUSTED; 0 for "
        "no bound",
        int,
    )
    option("--tls-cert", "TLS_CERT", None, "PEM certificate")
    option("--tls-key", "TLS_KEY", None, "PEM private key")
    parser.set_defaults(run=run_referee)


def run_referee(args: argparse.Namespace) -> int:
    """Serve until stopped."""
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    settings = RefereeSettings(
        listen=args.listen,
        database_url=args.db,
        metrics_port=args.metrics_port or None,
        admin_token=args.admin_token,
        open_registration=None if args.registration is None else args.registration == "open",
        default_deadline_ms=args.deadline_ms,
        time_bank_ms=args.time_bank_ms,
        max_strikes=args.max_strikes,
        grace_s=args.grace_s,
        shutdown_grace_s=args.shutdown_grace_s,
        max_message_bytes=args.max_message_bytes,
        session_opens_per_minute=args.session_opens_per_minute,
        stray_messages_per_second=args.stray_messages_per_second,
        flood_limit=args.flood_limit,
        registrations_per_minute=args.registrations_per_minute,
        reads_per_minute=args.reads_per_minute,
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
    )
    return asyncio.run(serve(settings))
