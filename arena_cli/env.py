"""Flags shared by the `arena` commands, most with defaults from ARENA_* variables."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any, cast

from ladder.settings import declared, env

__all__ = [
    "DEFAULT_DATABASE_URL",
    "DEFAULT_REFEREE",
    "add_admin_token",
    "add_database",
    "add_env_option",
    "add_referee",
    "add_rules_option",
    "add_settings",
    "env",
]

DEFAULT_REFEREE = "127.0.0.1:50051"
DEFAULT_DATABASE_URL = "sqlite:///arena.db"


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
        help=f"{help} (env ARENA_{name}"
        + ("" if default is None else f"; default {default}")
        + ")",
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


def add_settings(parser: argparse.ArgumentParser, cls: type) -> None:
    """A flag for every setting `cls` declares (ladder.settings), defaults from ARENA_*.

    Each flag's value lands under the field's name, so `from_values(cls, vars(args))`
    builds the settings.
    """
    for item, spec in declared(cls):
        # The flag's own name, as for every other flag (the field's name may differ).
        metavar = spec.metavar or spec.flag.lstrip("-").replace("-", "_").upper()
        add_env_option(
            parser,
            spec.flag,
            spec.env,
            cast(float | str | None, item.default),
            spec.help,
            spec.parse,
            dest=item.name,
            metavar=metavar,
        )
