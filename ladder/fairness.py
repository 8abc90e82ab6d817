"""Fair deals: secret seeds and the commitment that proves a deal was fixed in advance.

Every seed the arena draws comes from `secrets`, so nothing public (match
ids, tournament ids, ticks, times, earlier seeds) predicts it. When a match
starts each seat gets `commitment(seed)`; once the match is over the seed
itself is published, and anyone can check it against the commitment and
replay every game from it (`arena match verify`).
"""

from __future__ import annotations

import hashlib
import secrets

SEED_BITS = 128
"""A drawn seed's entropy: far beyond brute force from the cards a seat sees."""


def draw_seed() -> int:
    """A fresh secret seed of SEED_BITS random bits."""
    return secrets.randbits(SEED_BITS)


def derive_seed(chosen: int, *parts: object) -> int:
    """A seed of SEED_BITS bits derived from an operator's `chosen` seed and `parts` (the
    round, the match...): the same ones give the same deals. A hash, so a seed kept
    secret keeps its derived seeds secret; as many bits as a drawn seed, so none of them
    is found from its commitment by trying numbers."""
    text = ":".join(str(part) for part in (chosen, *parts))
    return int.from_bytes(hashlib.sha256(text.encode("ascii")).digest()[: SEED_BITS // 8])


def commitment(seed: int) -> str:
    """SHA-256 of the seed's decimal text, in hex: published before the seed is."""
    return hashlib.sha256(str(seed).encode("ascii")).hexdigest()


def parse_seed(text: str) -> int:
    """A seed from its decimal text (as published); ValueError if it is not one."""
    if not text.isascii() or not text.isdigit() or len(text) > 80:
        raise ValueError(f"a seed is a decimal number of at most 80 digits, not {text[:90]!r}")
    return int(text)
