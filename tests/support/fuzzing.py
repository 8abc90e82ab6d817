"""Random requests for fuzzing: odd values of every field type, built from message descriptors.

`Fuzzer` walks a request's descriptor and fills it with edge values (negative
and huge numbers; empty, huge, unicode and NUL strings; unknown names; long
repeated fields; random oneof choices); `valid_start` and `mutate` give
requests that get past the first checks, so the deeper ones are reached too.
"""

from __future__ import annotations

import random
import string
from collections.abc import Sequence
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

import games
from cardarena_api.v1 import arena_pb2 as pb
from tests.support.referee import ALL_GAMES

MAX_DEPTH = 4  # nesting of generated messages
MAX_REPEATED = 3000  # longest repeated field generated (strings of a few bytes: under 256 KiB)
HUGE_STRING = 300 * 1024  # over the referee's 256 KiB message limit


# Random values --------------------------------------------------------------------------

INT32_EDGES = (0, 1, -1, 2, 3, 4, 5, 7, 8, 9, 10, 64, 65, 1000, 60_000, 60_001, 2**31 - 1, -(2**31))
INT64_EDGES = (*INT32_EDGES, 2**31, 2**53 + 1, 2**63 - 1, -(2**63))
ODD_TEXT = (
    "",
    " ",
    "\x00",
    "a\x00b",
    "goodge\x00",
    "Goodge",
    " goodge",
    "é",
    "名前",
    "🂡🃏",
    "\u202e",
    "\ufeff",
    "../../etc/passwd",
    "'; DROP TABLE bots; --",
    "%s%n",
    "{}",
    "null",
    "-1",
    "1e999",
    "NaN",
    "none",
    "true",
    "x" * 64,
    "x" * 65,
    "x" * 200,
)
OPTION_VALUES = (
    "0",
    "1",
    "-1",
    "2",
    "5",
    "13",
    "13,10,13",
    "true",
    "false",
    "yes",
    "none",
    "game",
    "round",
    "dealer_50",
    "9" * 30,
    "9" * 5000,
    "1.5",
    "0x10",
    "",
    "\x00",
)


def option_names() -> list[str]:
    return sorted({option.name for name in games.names() for option in games.get(name).options})


class Fuzzer:
    """Builds random requests from message descriptors; `pools` bias string fields by name."""

    def __init__(self, rng: random.Random, pools: dict[str, Sequence[str]]) -> None:
        self.rng = rng
        self.pools = pools

    # scalars

    def text(self, field_name: str = "") -> str:
        rng = self.rng
        roll = rng.random()
        pool = self.pools.get(field_name)
        if pool and roll < 0.45:
            return rng.choice(pool)
        if roll < 0.65:
            return rng.choice(ODD_TEXT)
        if roll < 0.8:
            alphabet = string.ascii_letters + string.digits + "-_.@:/ "
            return "".join(rng.choices(alphabet, k=rng.randint(1, 80)))
        if roll < 0.95:
            # Any code point but surrogates (protobuf strings are UTF-8).
            points = [rng.randint(1, 0x10FFFF) for _ in range(rng.randint(1, 40))]
            return "".join(chr(p) for p in points if not 0xD800 <= p <= 0xDFFF)
        return "x" * rng.choice((1000, 64 * 1024, HUGE_STRING))

    def integer(self, bits: int, signed: bool) -> int:
        rng = self.rng
        if rng.random() < 0.7:
            edges = INT64_EDGES if bits == 64 else INT32_EDGES
            value = rng.choice(edges)
        else:
            value = rng.randint(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
        if not signed:
            value %= 2**bits
        return value

    def scalar(self, field: FieldDescriptor) -> Any:
        rng = self.rng
        kind = field.cpp_type
        if kind == FieldDescriptor.CPPTYPE_STRING:
            if field.type == FieldDescriptor.TYPE_BYTES:
                return rng.randbytes(rng.choice((0, 1, 16, 1000)))
            return self.text(field.name)
        if kind == FieldDescriptor.CPPTYPE_BOOL:
            return rng.random() < 0.5
        if kind == FieldDescriptor.CPPTYPE_ENUM:
            values = [v.number for v in field.enum_type.values]
            return rng.choice([*values, -1, 99, 2**31 - 1])
        if kind in (FieldDescriptor.CPPTYPE_DOUBLE, FieldDescriptor.CPPTYPE_FLOAT):
            return rng.choice((0.0, -1.0, 1e308, float("inf"), float("nan"), rng.random()))
        bits = 64 if kind in (FieldDescriptor.CPPTYPE_INT64, FieldDescriptor.CPPTYPE_UINT64) else 32
        signed = kind in (FieldDescriptor.CPPTYPE_INT32, FieldDescriptor.CPPTYPE_INT64)
        return self.integer(bits, signed)

    # messages

    def count(self) -> int:
        rng = self.rng
        roll = rng.random()
        if roll < 0.5:
            return rng.randint(0, 4)
        if roll < 0.9:
            return rng.randint(5, 12)
        return rng.randint(13, MAX_REPEATED)

    def fill(self, message: Message, depth: int = 0) -> Message:
        """Set a random subset of `message`'s fields (one field per oneof) to random values."""
        rng = self.rng
        desc: Descriptor = message.DESCRIPTOR
        chosen = {
            oneof.name: rng.choice([None, *oneof.fields]) for oneof in desc.oneofs if oneof.fields
        }
        for field in desc.fields:
            oneof = field.containing_oneof
            if oneof is not None and chosen.get(oneof.name) is not field:
                continue
            if oneof is None and rng.random() < 0.25:
                continue  # left at its default
            self.set_field(message, field, depth)
        return message

    def set_field(self, message: Message, field: FieldDescriptor, depth: int) -> None:
        rng = self.rng
        nested = field.message_type
        if field.is_repeated and nested is not None and nested.GetOptions().map_entry:
            target = getattr(message, field.name)
            key_field, value_field = nested.fields_by_name["key"], nested.fields_by_name["value"]
            for _ in range(self.count() if rng.random() < 0.3 else rng.randint(0, 3)):
                if key_field.cpp_type == FieldDescriptor.CPPTYPE_STRING and field.name == "options":
                    key = (
                        rng.choice(self.pools["option_names"])
                        if rng.random() < 0.7
                        else self.text()
                    )
                else:
                    key = self.scalar(key_field)
                if value_field.message_type is not None:
                    if depth < MAX_DEPTH:
                        self.fill(target[key], depth + 1)
                elif field.name == "options" and rng.random() < 0.7:
                    target[key] = rng.choice(OPTION_VALUES)
                else:
                    target[key] = self.scalar(value_field)
            return
        if field.is_repeated:
            target = getattr(message, field.name)
            n = self.count()
            if nested is not None:
                if depth < MAX_DEPTH:
                    for _ in range(min(n, 8)):
                        self.fill(target.add(), depth + 1)
            elif n > 12 and field.cpp_type == FieldDescriptor.CPPTYPE_STRING:
                item = self.text(field.name)[:8]
                target.extend([item] * n)
            else:
                target.extend(self.scalar(field) for _ in range(n))
            return
        if nested is not None:
            if depth < MAX_DEPTH:
                self.fill(getattr(message, field.name), depth + 1)
            else:
                getattr(message, field.name).SetInParent()
            return
        setattr(message, field.name, self.scalar(field))

    def random_bytes(self) -> bytes:
        rng = self.rng
        roll = rng.random()
        if roll < 0.1:
            return b""
        if roll < 0.8:
            return rng.randbytes(rng.randint(1, 64))
        if roll < 0.97:
            return rng.randbytes(rng.randint(65, 4096))
        return rng.randbytes(rng.randint(200 * 1024, 300 * 1024))


# Valid requests to mutate: they reach the checks behind the first ones.


def valid_start(rng: random.Random, bot_ids: Sequence[str]) -> pb.StartMatchRequest:
    """A request that starts a match: bot_ids[i] plays only ALL_GAMES[i], in every seat."""
    index = rng.randrange(len(ALL_GAMES))
    game = ALL_GAMES[index]
    spec = games.get(game)
    players = rng.randint(spec.min_players, spec.max_players)
    return pb.StartMatchRequest(
        match_id=f"fuzz-{rng.randint(1, 8)}",
        game=game,
        players=players,
        bot_ids=[bot_ids[index]] * players,
        duplicate=rng.random() < 0.5,
        deadline_ms=rng.choice((0, 10, 500, 60_000)),
        seed=rng.randint(0, 1000),
    )


def mutate(fuzzer: Fuzzer, message: Message) -> Message:
    """`message` with one to three of its fields set at random."""
    fields = list(message.DESCRIPTOR.fields)
    for field in fuzzer.rng.sample(fields, k=min(len(fields), fuzzer.rng.randint(1, 3))):
        message.ClearField(field.name)
        fuzzer.set_field(message, field, 0)
    return message
