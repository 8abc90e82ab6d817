"""Flags shared by the `arena` commands, most with defaults from ARENA_* variables."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any, cast

from ladder.settings import (
    ADMIN_TOKEN,
    AUTHOR_TOKEN,
    DATABASE,
    DEFAULT_DATABASE_URL,
    DEFAULT_REFEREE,
    REFEREE,
    Setting,
    declared,
    env,
)

__all__ = [
    "DEFAULT_DATABASE_URL",
    "DEFAULT_REFEREE",
    "add_admin_token",
    "add_author_token",
    "add_database",
    "add_env_option",
    "add_referee",
    "add_rules_option",
    "add_settings",
    "add_spec",
    "env",
]


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
        type=_with_reason(type),
        default=env(name, fallback),
        help=f"{help} (env ARENA_{name}"
        + ("" if default is None else f"; default {default}")
        + ")",
        **extra,
    )


def _with_reason(parse: Callable[[str], object]) -> Callable[[str], object]:
    """`parse`, its ValueError's own message shown by argparse (which would otherwise say
    only "invalid VALUE"); the built-in conversions keep argparse's wording."""
    if parse in (str, int, float):
        return parse

    def convert(text: str) -> object:
        try:
            return parse(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    return convert


def add_spec(
    parser: argparse.ArgumentParser,
    spec: Setting,
    default: float | str | None,
    dest: str | None = None,
) -> None:
    """The flag of one declared setting (ladder.settings), its default from ARENA_*."""
    assert spec.flag is not None, f"ARENA_{spec.env} is a variable only"
    # The flag's own name, as for every other flag (the field's name may differ).
    metavar = spec.metavar or spec.flag.lstrip("-").replace("-", "_").upper()
    extra = {} if dest is None else {"dest": dest}
    add_env_option(
        parser, spec.flag, spec.env, default, spec.help, spec.parse, metavar=metavar, **extra
    )


def add_referee(parser: argparse.ArgumentParser) -> None:
    """--referee ADDR (ARENA_REFEREE)."""
    add_spec(parser, REFEREE, DEFAULT_REFEREE)


def add_admin_token(parser: argparse.ArgumentParser) -> None:
    """--admin-token T (ARENA_ADMIN_TOKEN)."""
    add_spec(parser, ADMIN_TOKEN, None)


def add_author_token(parser: argparse.ArgumentParser) -> None:
    """--author-token T (ARENA_AUTHOR_TOKEN)."""
    add_spec(parser, AUTHOR_TOKEN, None)


def add_database(parser: argparse.ArgumentParser) -> None:
    """--db URL (ARENA_DATABASE_URL)."""
    add_spec(parser, DATABASE, DEFAULT_DATABASE_URL)


def add_rules_option(parser: argparse.ArgumentParser) -> None:
    """--option KEY=VALUE, repeatable: a rules option of the game (`games.parse_option_pairs`)."""
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a rules option, repeatable (see docs/rules/GAME.md), e.g. --option one_high=false",
    )


def add_settings(parser: argparse.ArgumentParser, cls: type, *only: str) -> None:
    """A flag for every setting `cls` declares with one (or for the fields named in `only`).

    Each flag's value lands under the field's name, so `from_values(cls, vars(args))`
    builds the settings.
    """
    for item, spec in declared(cls):
        if spec.flag is not None and (not only or item.name in only):
            add_spec(parser, spec, cast(float | str | None, item.default), dest=item.name)
