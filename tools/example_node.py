"""Play the Node.js starter bot (examples/node) in one match against `rules` bots.

    python -m tools.example_node [--referee HOST:PORT] [--admin-token TOKEN]
        [--game goodge] [--players 4] [--option KEY=VALUE ...]

Without --referee it starts a referee of its own (SQLite in a temporary
folder). It installs the bot's packages (`npm ci`) if they are missing,
registers the Node bot and a `rules` bot for every other seat, starts them,
waits until all hold a session, plays the match with `arena match run --json`
and prints that JSON. Exits 1 when the match does not finish or the Node bot
forfeited it, 2 when something could not start.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import grpc

from arena_cli.processes import ARENA, free_port, processes, spawn, wait_serving
from cardarena_api.v1 import arena_pb2 as pb
from cardarena_api.v1 import arena_pb2_grpc as pb_grpc

NODE_BOT = Path(__file__).resolve().parent.parent / "examples" / "node"
CONNECT_TIMEOUT_S = 60.0


def npm_install() -> None:
    """Install the bot's packages from its lock file, once. npm's own lines go to stderr:
    stdout carries only the match JSON."""
    if not (NODE_BOT / "node_modules" / "@grpc" / "grpc-js").is_dir():
        subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=NODE_BOT,
            check=True,
            stdout=sys.stderr,
        )


def arena(*args: str, env: dict[str, str]) -> Any:
    """Run `arena ARGS...` and return what it printed, as JSON."""
    done = subprocess.run([*ARENA, *args], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"arena {' '.join(args[:2])} failed: {done.stderr.strip()}")
    return json.loads(done.stdout)


def wait_connected(address: str, bot_ids: list[str], admin_token: str | None) -> None:
    """Until every bot holds a session on the referee."""
    metadata = (("authorization", f"Bearer {admin_token}"),) if admin_token else None
    deadline = time.monotonic() + CONNECT_TIMEOUT_S
    with grpc.insecure_channel(address) as channel:
        stub = pb_grpc.RefereeServiceStub(channel)
        while time.monotonic() < deadline:
            reply = stub.ListSessions(pb.ListSessionsRequest(), metadata=metadata, timeout=5)
            if set(bot_ids) <= {session.bot_id for session in reply.sessions}:
                return
            time.sleep(0.2)
    raise TimeoutError(f"the bots did not all connect within {CONNECT_TIMEOUT_S:g} s")


def play(
    address: str, admin_token: str | None, workdir: Path, table: list[str]
) -> tuple[str, dict[str, Any]]:
    """Register and start the bots, play the match of `arena match run` arguments `table`;
    the Node bot's id and the match JSON."""
    env = {**os.environ, "ARENA_REFEREE": address}
    if admin_token:
        env["ARENA_ADMIN_TOKEN"] = admin_token
    node = arena("bot", "register", "node-example", "--games", "goodge,golden10,goof", env=env)
    players = int(table[table.index("--players") + 1])
    rules = [arena("bot", "register", f"rules-{seat}", env=env) for seat in range(1, players)]
    with processes() as started:
        started.append(
            subprocess.Popen(
                ["node", str(NODE_BOT / "bot.js"), "--referee", address, "--token", node["token"]],
                stdout=(workdir / "node-bot.log").open("wb"),
                stderr=subprocess.STDOUT,
            )
        )
        for seat, bot in enumerate(rules):
            started.append(
                spawn(
                    ["bot", "run", "rules", "--token", bot["token"], "--referee", address],
                    workdir / f"rules-{seat}.log",
                    env=env,
                )
            )
        bot_ids = [node["bot_id"], *(bot["bot_id"] for bot in rules)]
        wait_connected(address, bot_ids, admin_token)
        match: dict[str, Any] = arena(
            "match", "run", *table, "--bots", ",".join(bot_ids), "--json", env=env
        )
    print((workdir / "node-bot.log").read_text(encoding="utf-8"), end="", file=sys.stderr)
    return node["bot_id"], match


def main() -> int:
    """Play the match; print its JSON."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--referee", help="a running referee's host:port (default: start one)")
    parser.add_argument("--admin-token", help="the referee's operator token, if it has one")
    parser.add_argument("--game", default="goodge", help="the game (default goodge)")
    parser.add_argument("--players", type=int, default=4, help="seats (default 4)")
    parser.add_argument(
        "--option", action="append", default=[], metavar="KEY=VALUE", help="a rules option"
    )
    args = parser.parse_args()
    table = ["--game", args.game, "--players", str(args.players)]
    for option in args.option:
        table += ["--option", option]
    if shutil.which("node") is None or shutil.which("npm") is None:
        print("example-node needs Node.js 18 or newer and npm on PATH", file=sys.stderr)
        return 2
    npm_install()
    with tempfile.TemporaryDirectory() as tmp, processes() as started:
        workdir = Path(tmp)
        address = args.referee
        if address is None:
            address = f"127.0.0.1:{free_port()}"
            started.append(
                spawn(
                    [
                        "referee",
                        "--listen",
                        address,
                        "--db",
                        f"sqlite:///{workdir / 'arena.db'}",
                        "--metrics-port",
                        "0",
                    ],
                    workdir / "referee.log",
                )
            )
        wait_serving(address)
        node, match = play(address, args.admin_token, workdir, table)
    print(json.dumps(match, indent=2))
    return 0 if match.get("status") == "finished" and node not in match["forfeits"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
