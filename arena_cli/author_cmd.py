"""`arena author create|token rotate`, `arena invite create`: authors on a referee.

Each prints one JSON object: the token or code it shows is shown only once.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from arena_cli.env import add_admin_token, add_author_token, add_referee


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `author` and `invite` on the `arena` parser."""
    parser = commands.add_parser(
        "author",
        help="create an author (who owns bot names), rotate its token",
        description="Authors own bot names: every version of a name is its author's.",
    )
    sub = parser.add_subparsers(dest="author_command", required=True, metavar="COMMAND")
    create = sub.add_parser(
        "create",
        help='create an author; prints JSON {"author_id", "name", "token"}',
        description='Create an author. Prints {"author_id", "name", "token"}: keep the token '
        "(ARENA_AUTHOR_TOKEN), it is shown only once. The referee's sign-up setting says "
        "who may: anyone (open), with an invite code (invite), or the operator (admin).",
    )
    create.add_argument("name", help="1..64 letters, digits, - or _")
    create.add_argument("--invite", metavar="CODE", help="the invite code from the operator")
    add_referee(create)
    add_admin_token(create)
    create.set_defaults(run=run_create)

    token = sub.add_parser("token", help="the author's token")
    token_sub = token.add_subparsers(dest="token_command", required=True, metavar="COMMAND")
    rotate = token_sub.add_parser(
        "rotate",
        help='a new author token; prints JSON {"author_id", "token"}',
        description="Replace your author token: the old one is refused from now on.",
    )
    add_referee(rotate)
    add_author_token(rotate)
    rotate.set_defaults(run=run_rotate)

    invite = commands.add_parser(
        "invite",
        help="invite codes for sign-up by invitation",
        description="Invite codes let their holders create authors (--signup invite).",
    )
    invite_sub = invite.add_subparsers(dest="invite_command", required=True, metavar="COMMAND")
    make = invite_sub.add_parser(
        "create",
        help='make an invite code (admin); prints {"code", "uses", "expires_at"}',
        description="Make an invite code (needs the admin token). Prints its code, its uses "
        "and when it expires; the code is shown only once.",
    )
    make.add_argument("--uses", type=int, default=1, help="sign-ups it allows (default 1)")
    make.add_argument(
        "--expires-h", type=float, default=0, help="hours until it expires (default: never)"
    )
    make.add_argument("--json", action="store_true", help="print JSON (the default output)")
    add_referee(make)
    add_admin_token(make)
    make.set_defaults(run=run_invite)


def add_author_access(parser: argparse.ArgumentParser) -> None:
    """--referee, --author-token and --admin-token: for a call that a bot's author, or the
    operator, may make (`bearer`)."""
    add_referee(parser)
    add_author_token(parser)
    add_admin_token(parser)


def bearer(args: argparse.Namespace) -> str | None:
    """The token such a call carries: the author's, else the admin's."""
    token: str | None = args.author_token or args.admin_token
    return token


def call(address: str, token: str | None, method: str, request: Any) -> Any:
    """Run the AuthorService call `method` with `token` as its bearer; the reply."""
    from bots.sdk import channel, metadata  # grpc: loaded only to talk to the referee
    from cardarena_api.v1 import arena_pb2_grpc as pb_grpc

    async def run() -> Any:
        async with channel(address) as chan:
            stub = pb_grpc.AuthorServiceStub(chan)
            ask = getattr(stub, method)
            return await ask(request, metadata=metadata(token) if token else None, timeout=10)

    return asyncio.run(run())


def run_create(args: argparse.Namespace) -> int:
    """Create the author and print its id, name and token."""
    from cardarena_api.v1 import arena_pb2 as pb

    request = pb.CreateAuthorRequest(name=args.name, invite=args.invite or "")
    reply = call(args.referee, args.admin_token, "CreateAuthor", request)
    print(json.dumps({"author_id": reply.author_id, "name": reply.name, "token": reply.token}))
    return 0


def run_rotate(args: argparse.Namespace) -> int:
    """Rotate the author's own token and print the new one."""
    from cardarena_api.v1 import arena_pb2 as pb

    if not args.author_token:
        raise ValueError("give your author token: --author-token T or ARENA_AUTHOR_TOKEN")
    reply = call(
        args.referee, args.author_token, "RotateAuthorToken", pb.RotateAuthorTokenRequest()
    )
    print(json.dumps({"author_id": reply.author_id, "token": reply.token}))
    return 0


def run_invite(args: argparse.Namespace) -> int:
    """Make an invite code and print it."""
    from cardarena_api.v1 import arena_pb2 as pb

    if args.uses < 1:
        raise ValueError("--uses must be at least 1")
    if args.expires_h < 0:
        raise ValueError("--expires-h must be 0 (never) or more")
    request = pb.CreateInviteRequest(uses=args.uses, expires_h=args.expires_h)
    reply = call(args.referee, args.admin_token, "CreateInvite", request)
    print(
        json.dumps({"code": reply.code, "uses": reply.uses, "expires_at": reply.expires_at or None})
    )
    return 0
