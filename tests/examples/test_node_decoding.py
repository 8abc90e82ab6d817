"""The Acts the referee writes read the same in the Node SDK's protobuf library.

The referee joins an Act from pieces encoded once (`wire_results.referee_bytes`),
not protobuf's canonical serialization. protobufjs (under @grpc/proto-loader, which
the Node starter bot uses) does not merge a message field that comes in parts, so the
join must read there exactly as the canonical bytes of the same message do.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from cardarena_api.v1 import arena_pb2 as pb
from referee import wire_results
from tests.support.acts import act_requests
from tools.example_node import NODE_BOT, npm_install

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("npm") is None, reason="needs Node.js and npm"
)

# Reads "joined canonical" hex pairs, one a line; prints how many decode differently.
COMPARE = """
const fs = require("node:fs");
const path = require("node:path");
const protoLoader = require("@grpc/proto-loader");
const [protoRoot, pairsFile] = process.argv.slice(-2);
const definition = protoLoader.loadSync("cardarena_api/v1/arena.proto", {
  keepCase: true, longs: String, enums: String, defaults: true, oneofs: true,
  includeDirs: [path.resolve(protoRoot)],
});
const message = definition["cardarena_api.v1.RefereeMessage"];
const sorted = (v) => Array.isArray(v) ? v.map(sorted)
  : v && typeof v === "object" && !Buffer.isBuffer(v)
    ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted(v[k])])) : v;
const read = (hex) => JSON.stringify(sorted(message.deserialize(Buffer.from(hex, "hex"))));
let pairs = 0, differ = 0;
for (const line of fs.readFileSync(pairsFile, "utf8").split("\\n")) {
  if (!line) continue;
  const [joined, canonical] = line.split(" ");
  pairs += 1;
  if (read(joined) !== read(canonical)) differ += 1;
}
console.log(`${pairs} ${differ}`);
"""

TABLES = [("goodge", 4, {}, 3), ("golden10", 4, {"rounds": 1}, 3), ("goof", 3, {"rounds": 1}, 3)]


def acts(game: str, players: int, options: dict[str, Any], seed: int) -> list[str]:
    """The Acts along one random game, as "joined canonical" hex."""
    lines = []
    for request in act_requests(game, players, options, seed):
        joined = wire_results.referee_bytes(request, with_json=True, now=1000.0)
        canonical = pb.RefereeMessage.FromString(joined).SerializeToString()
        lines.append(f"{joined.hex()} {canonical.hex()}")
    return lines


def test_protobufjs_reads_every_act_as_its_canonical_form(tmp_path: Path) -> None:
    npm_install()
    lines = [line for table in TABLES for line in acts(*table)]
    pairs = tmp_path / "acts.txt"
    pairs.write_text("\n".join(lines), encoding="utf-8")
    proto = NODE_BOT.parent.parent / "proto"
    done = subprocess.run(
        ["node", "-e", COMPARE, str(proto), str(pairs)],
        cwd=NODE_BOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == [str(len(lines)), "0"]
