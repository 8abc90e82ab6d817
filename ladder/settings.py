"""Settings declared once: each one's ARENA_* variable, flag, default and help.

A process's settings are a frozen dataclass whose fields are made with
`setting(...)`. The command line builds its flags from those declarations
(`arena_cli.env.add_settings`) and the process reads them back from the
parsed flags or from the environment (`from_environment`), so a setting's
variable, flag, default and help text are written in one place. Dependency
free: every process imports it (the ladder is the layer all of them share).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

PREFIX = "ARENA_"
KEY = "arena_setting"
"""The key of a field's metadata that holds its `Setting`."""


@dataclass(frozen=True)
class Setting:
    """How one setting is given: its variable (without ARENA_), flag, help and parser.

    `flag` None: the setting is a variable only (no command takes it as a flag).
    """

    env: str
    flag: str | None
    help: str
    parse: Callable[[str], Any] = str
    metavar: str | None = None


def setting(
    default: Any,
    spec: Setting | None = None,
    *,
    env: str = "",
    flag: str | None = None,
    help: str = "",
    parse: Callable[[str], Any] = str,
    metavar: str | None = None,
) -> Any:
    """A dataclass field with its declaration, given whole (`spec`) or by its parts.

    Typed Any, as `dataclasses.field` is.
    """
    declaration = spec or Setting(env, flag, help, parse, metavar)
    return dataclasses.field(default=default, metadata={KEY: declaration})


# Settings that several processes and commands share, declared once here.
DEFAULT_DATABASE_URL = "sqlite:///arena.db"
DEFAULT_REFEREE = "127.0.0.1:50051"


def database_url(text: str) -> str:
    """A database URL as the store opens it: SQLite, or PostgreSQL through psycopg.

    `postgres://` and `postgresql://` (as libpq and most hosts write them) mean psycopg,
    the driver the server install brings; anything else is a ValueError saying what works.
    """
    scheme, separator, rest = text.partition("://")
    if separator and scheme in ("postgres", "postgresql"):
        return f"postgresql+psycopg://{rest}"
    if separator and (scheme.startswith("sqlite") or scheme.startswith("postgresql+")):
        return text
    raise ValueError(
        f"{text!r} is not a database URL the store opens: "
        "sqlite:///FILE or postgresql://USER@HOST[:PORT]/DATABASE"
    )


DATABASE = Setting(
    "DATABASE_URL",
    "--db",
    "database URL: sqlite:///FILE or postgresql://USER@HOST/DATABASE",
    database_url,
    metavar="URL",
)
REFEREE = Setting("REFEREE", "--referee", "the referee's host:port", metavar="ADDR")
ADMIN_TOKEN = Setting(
    "ADMIN_TOKEN",
    "--admin-token",
    "the operator token; needed when the referee has one",
    metavar="TOKEN",
)
AUTHOR_TOKEN = Setting(
    "AUTHOR_TOKEN",
    "--author-token",
    "your author token, from `arena author create` (the admin token may act instead)",
    metavar="TOKEN",
)
BROKER = Setting(
    "BROKER_URL",
    "--broker",
    "Celery broker, e.g. redis://host:6379/0 (default: the embedded filesystem transport "
    "in .arena/ beside the SQLite database, no server needed)",
    metavar="URL",
)


def declared(cls: type) -> list[tuple[dataclasses.Field[Any], Setting]]:
    """The fields of a settings class that are declared settings, with their declarations."""
    return [(item, item.metadata[KEY]) for item in dataclasses.fields(cls) if KEY in item.metadata]


def env(name: str, default: str | None = None) -> str | None:
    """The value of ARENA_<name>, or `default` when it is unset or empty."""
    value = os.environ.get(PREFIX + name)
    return value if value not in (None, "") else default


Settings = TypeVar("Settings")


def from_environment(cls: type[Settings], **given: Any) -> Settings:
    """`cls` from `given` values (None: not given), then ARENA_* variables, then defaults.

    A variable that does not parse is a ValueError naming it.
    """
    values = {name: value for name, value in given.items() if value is not None}
    for item, spec in declared(cls):
        text = None if item.name in values else env(spec.env)
        if text is not None:
            values[item.name] = _parsed(spec, text)
    return cls(**values)


def from_values(cls: type[Settings], values: Mapping[str, Any], **extra: Any) -> Settings:
    """`cls` from parsed flags (`values` holds one entry per setting with a flag, its
    variable already read as the flag's default), the ARENA_* variable of each setting
    with no flag (a secret, never on a command line), and `extra`."""
    settings: dict[str, Any] = {}
    for item, spec in declared(cls):
        if spec.flag is not None:
            settings[item.name] = values[item.name]
        elif (text := env(spec.env)) is not None:
            settings[item.name] = _parsed(spec, text)
    return cls(**settings, **extra)


def _parsed(spec: Setting, text: str) -> Any:
    """A variable's value parsed; a ValueError naming the variable if it does not parse."""
    try:
        return spec.parse(text)
    except ValueError as error:
        raise ValueError(f"{PREFIX}{spec.env}={text!r}: {error}") from None


def names(text: str) -> tuple[str, ...]:
    """A comma-separated list of names."""
    return tuple(name.strip() for name in text.split(",") if name.strip())


def switch(text: str) -> bool:
    """An on/off value: 1/0, on/off, true/false, yes/no."""
    value = text.strip().lower()
    if value in ("1", "on", "true", "yes"):
        return True
    if value in ("0", "off", "false", "no"):
        return False
    raise ValueError(f"must be on or off (1/0, true/false), not {text!r}")
