"""The workers' broker as the `arena` commands reach it: the --broker flag and the settings.

`arena worker`, `arena beat` and `arena tournament create|start` talk to the
workers through it. Celery and the store are imported when a command runs,
not when the parser is built.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from arena_cli.env import add_spec
from ladder.settings import BROKER

if TYPE_CHECKING:
    from workers.settings import WorkerSettings


def add_broker(parser: argparse.ArgumentParser) -> None:
    """--broker URL (ARENA_BROKER_URL)."""
    add_spec(parser, BROKER, None)


def worker_settings(args: argparse.Namespace, **extra: Any) -> WorkerSettings:
    """The workers' settings from a command's flags, the environment for the rest."""
    from workers.settings import WorkerSettings

    return WorkerSettings.from_env(
        database_url=args.db,
        broker_url=getattr(args, "broker", None),
        referee=getattr(args, "referee", None),
        admin_token=getattr(args, "admin_token", None),
        **extra,
    )
