"""`arena referee`: run the gRPC referee."""

from __future__ import annotations

import argparse
import asyncio
import logging

from arena_cli.env import add_admin_token, add_database, env
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
    parser.add_argument(
        "--listen",
        default=env("REFEREE_LISTEN", defaults.listen),
        metavar="HOST:PORT",
        help=f"address to serve on (env ARENA_REFEREE_LISTEN; default {defaults.listen})",
    )
    add_database(parser)
    parser.add_argument(
        "--metrics-port",
        type=int,
        default=int(env("REFEREE_METRICS_PORT", str(defaults.metrics_port)) or 0),
        help="Prometheus /metrics port, 0 for none (env ARENA_REFEREE_METRICS_PORT; default 9101)",
    )
    add_admin_token(parser)
    parser.add_argument(
        "--registration",
        choices=("open", "admin"),
        default=env("REGISTRATION"),
        help="who may register bots (env ARENA_REGISTRATION; default open on loopback, else admin)",
    )
    parser.add_argument(
        "--deadline-ms",
        type=int,
        default=int(env("DEADLINE_MS", str(defaults.default_deadline_ms)) or 0),
        help="default per-move deadline (env ARENA_DEADLINE_MS; default 1000)",
    )
    parser.add_argument(
        "--time-bank-ms",
        type=int,
        default=int(env("TIME_BANK_MS", str(defaults.time_bank_ms)) or 0),
        help="each bot's extra time per match (env ARENA_TIME_BANK_MS; default 5000)",
    )
    parser.add_argument(
        "--max-strikes",
        type=int,
        default=int(env("MAX_STRIKES", str(defaults.max_strikes)) or 0),
        help="late or illegal answers before a forfeit (env ARENA_MAX_STRIKES; default 3)",
    )
    parser.add_argument(
        "--grace-s",
        type=float,
        default=float(env("GRACE_S", str(defaults.grace_s)) or 0),
        help="how long a disconnected bot may take to come back (env ARENA_GRACE_S; default 10)",
    )
    parser.add_argument(
        "--shutdown-grace-s",
        type=float,
        default=float(env("SHUTDOWN_GRACE_S", str(defaults.shutdown_grace_s)) or 0),
        help="on SIGTERM, how long running matches may finish (env ARENA_SHUTDOWN_GRACE_S; default 10)",
    )
    parser.add_argument(
        "--max-message-bytes",
        type=int,
        default=int(env("MAX_MESSAGE_BYTES", str(defaults.max_message_bytes)) or 0),
        help="largest message a client may send; bigger ones end the call RESOURCE_EXHAUSTED "
        f"(env ARENA_MAX_MESSAGE_BYTES; default {defaults.max_message_bytes})",
    )
    parser.add_argument(
        "--session-opens-per-minute",
        type=int,
        default=int(env("SESSION_OPENS_PER_MINUTE", str(defaults.session_opens_per_minute)) or 0),
        help="sessions one bot may open a minute (it holds one; a new one replaces the old); "
        "beyond it Session fails RESOURCE_EXHAUSTED; 0 for no bound "
        f"(env ARENA_SESSION_OPENS_PER_MINUTE; default {defaults.session_opens_per_minute})",
    )
    parser.add_argument(
        "--stray-messages-per-second",
        type=float,
        default=float(
            env("STRAY_MESSAGES_PER_SECOND", str(defaults.stray_messages_per_second)) or 0
        ),
        help="messages a session may send a second that answer no open request (answers to "
        "open requests are never throttled); beyond it they are dropped with an Error; 0 for "
        "no bound (env ARENA_STRAY_MESSAGES_PER_SECOND; "
        f"default {defaults.stray_messages_per_second:g})",
    )
    parser.add_argument(
        "--flood-limit",
        type=int,
        default=int(env("FLOOD_LIMIT", str(defaults.flood_limit)) or 0),
        help="dropped stray messages (the allowance refills over 10 s) after which a session's "
        "stream ends RESOURCE_EXHAUSTED; 0 never ends it "
        f"(env ARENA_FLOOD_LIMIT; default {defaults.flood_limit})",
    )
    parser.add_argument(
        "--registrations-per-minute",
        type=int,
        default=int(env("REGISTRATIONS_PER_MINUTE", str(defaults.registrations_per_minute)) or 0),
        help="Register calls a minute per client address (admin-token callers exempt when "
        "there is an admin token); beyond it RESOURCE_EXHAUSTED; 0 for no bound "
        f"(env ARENA_REGISTRATIONS_PER_MINUTE; default {defaults.registrations_per_minute})",
    )
    parser.add_argument(
        "--tls-cert", default=env("TLS_CERT"), help="PEM certificate (env ARENA_TLS_CERT)"
    )
    parser.add_argument(
        "--tls-key", default=env("TLS_KEY"), help="PEM private key (env ARENA_TLS_KEY)"
    )
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
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
    )
    return asyncio.run(serve(settings))
