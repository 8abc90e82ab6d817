"""Entry point of the `arena` command.

Building the parser imports only the commands' flag definitions: each
command imports what it runs on (grpc, the store, Celery, scipy) when it
runs, so `arena --help` stays quick.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from arena_cli import (
    author_cmd,
    beat_cmd,
    bot_cmd,
    challenge_cmd,
    compare,
    db_cmd,
    demo,
    ladder_cmd,
    match_cmd,
    play,
    referee_cmd,
    schedule_cmd,
    tournament_cmd,
    web_cmd,
    worker_cmd,
)


def build_parser() -> argparse.ArgumentParser:
    """The `arena` parser with every subcommand."""
    parser = argparse.ArgumentParser(
        prog="arena",
        description="Card Arena: AI bots play The Goodge Rules, Golden 10 and Game of Goof.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    play.add_parsers(commands)
    compare.add_parsers(commands)
    referee_cmd.add_parsers(commands)
    author_cmd.add_parsers(commands)
    bot_cmd.add_parsers(commands)
    match_cmd.add_parsers(commands)
    challenge_cmd.add_parsers(commands)
    db_cmd.add_parsers(commands)
    demo.add_parsers(commands)
    web_cmd.add_parsers(commands)
    worker_cmd.add_parsers(commands)
    beat_cmd.add_parsers(commands)
    tournament_cmd.add_parsers(commands)
    schedule_cmd.add_parsers(commands)
    ladder_cmd.add_parsers(commands)
    return parser


SERVER_MODULES = frozenset(
    {
        "alembic",
        "celery",
        "confusables",
        "fastapi",
        "grpc_reflection",
        "hiredis",
        "jinja2",
        "kombu",
        "markupsafe",
        "numpy",
        "prometheus_client",
        "psycopg",
        "pydantic",
        "redis",
        "rich",
        "scipy",
        "sqlalchemy",
        "starlette",
        "uvicorn",
    }
)
"""What the `server` extra brings (pyproject.toml): a bot author's base install lacks them."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run `arena`; bad input is reported on stderr with exit status 2."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except ValueError as error:
        parser.exit(2, f"arena {args.command}: error: {error}\n")
    except ModuleNotFoundError as error:
        missing = (error.name or "").partition(".")[0]
        if missing not in SERVER_MODULES:
            raise
        parser.exit(
            2,
            f"arena {args.command}: needs the server install (module {missing} is missing): "
            "pip install 'card-arena[server]'\n",
        )
    except KeyboardInterrupt:
        # Ctrl-C before a command could say what it had done: it stops, no traceback.
        return 130
    except BrokenPipeError:
        # The reader went away (`arena ... | head`): not an error of ours. Later writes,
        # Python's own flush at exit among them, go nowhere.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as error:
        message = _one_line(error)
        if message is None:
            raise
        parser.exit(1, f"arena {args.command}: {message}\n")


def _one_line(error: Exception) -> str | None:
    """What to say of an error of a service the command talks to (the referee, the
    database), or None for any other error: a bug, whose traceback is wanted."""
    # Only a command that imported grpc or SQLAlchemy can raise their errors; the others
    # need not load them (a base install has no SQLAlchemy).
    if "grpc" in sys.modules:
        import grpc

        from cardarena_api.metadata import NEEDS, TRY_AGAIN, trailing_value

        if isinstance(error, grpc.RpcError):
            # grpc.aio errors are not grpc.Call objects but have the same accessors.
            needs: list[str] = []
            answered = False  # the referee itself said UNAVAILABLE: it runs
            if isinstance(error, grpc.Call | grpc.aio.AioRpcError):
                code, details = error.code(), error.details()
                if code in (grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.UNAUTHENTICATED):
                    named = trailing_value(error, NEEDS)
                    needs = named.split(",") if named else []
                answered = trailing_value(error, TRY_AGAIN) is not None
            else:
                code, details = None, str(error)
            hint = ""
            if code == grpc.StatusCode.UNAVAILABLE and not answered:
                hint = " (is the referee running? see --referee)"
            elif needs:
                flags = {"admin": "--admin-token", "author": "--author-token"}
                given = " or ".join(flags[kind] for kind in needs if kind in flags)
                hint = f" (give it with {given} T, or ARENA_{needs[0].upper()}_TOKEN)"
            return f"{code.name if code else 'error'}: {details}{hint}"
    if "sqlalchemy" in sys.modules:
        from sqlalchemy.exc import OperationalError

        if isinstance(error, OperationalError):
            reason = str(error.orig or error).strip().splitlines()[0]
            return f"cannot use the database: {reason} (see --db)"
    return None


if __name__ == "__main__":
    sys.exit(main())
