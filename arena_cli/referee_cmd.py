"""`arena referee`: run the gRPC referee."""

from __future__ import annotations

import argparse
import logging

from arena_cli.env import add_settings
from ladder.settings import from_values
from referee.settings import RefereeSettings


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `referee` on the `arena` parser."""
    parser = commands.add_parser(
        "referee",
        help="run the referee (gRPC server that plays the matches)",
        description="Run the referee: bots connect to it, operators and workers start matches on it. "
        "SIGTERM or Ctrl-C stops it cleanly. With --relay (a Redis URL) it is one replica of a "
        "tier sharing the bots; --processes N runs N replicas here on one port, one per core.",
    )
    add_settings(parser, RefereeSettings)
    parser.set_defaults(run=run_referee)


def run_referee(args: argparse.Namespace) -> int:
    """Serve until stopped."""
    settings = from_values(RefereeSettings, vars(args))
    if settings.processes > 1:
        settings.check()
        from referee.tier.supervisor import Supervisor

        logging.basicConfig(
            level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
        )
        return Supervisor(settings).run()
    # Imported here: `arena --help` need not load gRPC and the store. Before the
    # logging is set up: what the libraries say as they load is not the referee's.
    from cardarena_api.event_loop import run
    from referee.server import serve

    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    return run(serve(settings))
