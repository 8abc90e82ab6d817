"""Flags shared by the `arena` commands, most with defaults from ARENA_* variables."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import Any

DEFAULT_REFEREE = "127.0.0.1:50051"
DEFAULT_DATABASE_URL = "sqlite:///arena.db"


def env(name: str, default: str | None = None) -> str | None:
    """The value of ARENA_<name>, or `default`."""
    value = os.environ.get(f"ARENA_{name}")
    return value if value not in (None, "") else default


def add_env_option(
    parser: argparse.ArgumentParser,
    flag: str,
    name: str,
    default: float | str | None,
    help: str,
    type: Callable[[str], object] = str,
    **extra: Any,
) -> None:
    """A flag whose default comes from ARENA_<name>, then `default`.

    The environment's value goes through `type` exactly as the flag's would,
    so a bad value is a clear usage error of this command, not a crash of
    every command at start-up.
    """
    fallback = None if default is None else str(default)
    parser.add_argument(
        flag,
        type=type,
        default=env(name, fallback),
        help=f"{help} (env ARENA_{name}; default {default})",
        **extra,
    )


def add_referee(parser: argparse.ArgumentParser) -> None:
    """--referee ADDR (ARENA_REFEREE)."""
    parser.add_argument(
        "--referee",
        default=env("REFEREE", DEFAULT_REFEREE),
        metavar="ADDR",
        help=f"the referee's host:port (env ARENA_REFEREE; default {DEFAULT_REFEREE})",
    )


def add_admin_token(parser: argparse.ArgumentParser) -> None:
    """--admin-token T (ARENA_ADMIN_TOKEN)."""
    parser.add_argument(
        "--admin-token",
        default=env("ADMIN_TOKEN"),
        metavar="TOKEN",
        help="the operator token (env ARENA_ADMIN_TOKEN); needed when the referee has one",
    )


def add_database(parser: argparse.ArgumentParser) -> None:
    """--db URL (ARENA_DATABASE_URL)."""
    parser.add_argument(
        "--db",
        default=env("DATABASE_URL", DEFAULT_DATABASE_URL),
        metavar="URL",
        help=f"SQLAlchemy database URL (env ARENA_DATABASE_URL; default {DEFAULT_DATABASE_URL})",
    )


def add_rules_option(parser: argparse.ArgumentParser) -> None:
    """--option KEY=VALUE, repeatable: a rules option of the game (`games.parse_option_pairs`)."""
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a rules option, repeatable (see docs/rules/GAME.md), e.g. --option one_high=false",
    )
