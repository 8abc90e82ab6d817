"""Hardening of the web: security headers, a rate bound on the JSON API, visible text.

- `SecurityHeadersMiddleware` puts `SECURITY_HEADERS` on every response: the
  pages run only the scripts and styles of /static, so injected markup can
  run nothing, and no other site may frame them.
- `RateLimitMiddleware` bounds each client address's requests to `/api/`
  with a `TokenBuckets` (every API answer is a few database queries).
- `visible` shows the characters that draw nothing (bidi overrides,
  zero-width and control characters) as escapes, so a bot's name or any
  other text a bot chose cannot reorder or hide the text around it.
"""

from __future__ import annotations

import math
import time
import unicodedata
from collections import OrderedDict

from starlette.datastructures import MutableHeaders
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ladder.web.settings import DEFAULTS

CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self'",
        "connect-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    )
)

SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
}


class SecurityHeadersMiddleware:
    """Adds `SECURITY_HEADERS` to every HTTP response that passes through it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message).update(SECURITY_HEADERS)
            await send(message)

        await self.app(scope, receive, send_with_headers)


API_RATE = DEFAULTS.api_rate
"""Requests per second one client address may make to /api/ on average."""

API_BURST = DEFAULTS.api_burst
"""Requests one client address may make to /api/ at once, after a quiet while."""

MAX_PEERS = 10_000
"""Client addresses whose buckets are kept; the least recently seen go first."""


class TokenBuckets:
    """A token bucket per peer: `rate` tokens a second, at most `burst` saved up.

    Only the `peers` most recently seen are kept, so a flood of addresses
    costs bounded memory; a dropped peer comes back with a full bucket,
    which it would have had anyway after `burst / rate` seconds of quiet.
    Not thread-safe: the middleware calls it from the event loop only.
    """

    def __init__(self, rate: float, burst: int, peers: int = MAX_PEERS) -> None:
        if rate <= 0 or burst < 1 or peers < 1:
            raise ValueError(f"need rate > 0, burst >= 1, peers >= 1; got {rate}, {burst}, {peers}")
        self.rate = rate
        self.burst = burst
        self.peers = peers
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # tokens, time

    def __len__(self) -> int:
        return len(self._buckets)

    def take(self, peer: str, now: float) -> float:
        """Take a token of `peer` at time `now` (seconds): 0.0, or the seconds until one is due."""
        tokens, then = self._buckets.pop(peer, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - then) * self.rate)
        wait = 0.0
        if tokens >= 1.0:
            tokens -= 1.0
        else:
            wait = (1.0 - tokens) / self.rate
        self._buckets[peer] = (tokens, now)  # re-inserted last: the most recently seen
        if len(self._buckets) > self.peers:
            self._buckets.popitem(last=False)
        return wait


class RateLimitMiddleware:
    """Answers 429 (JSON, with Retry-After) to a client address over its bound on `/api/`."""

    def __init__(self, app: ASGIApp, buckets: TokenBuckets) -> None:
        self.app = app
        self.buckets = buckets

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and str(scope["path"]).startswith("/api/"):
            client = scope.get("client")
            # The peer address, never a forwarded-for header: a client could forge that.
            peer = str(client[0]) if client else ""
            wait = self.buckets.take(peer, time.monotonic())
            if wait > 0:
                seconds = max(1, math.ceil(wait))
                response = JSONResponse(
                    {
                        "detail": f"too many requests: at most {self.buckets.rate:g} a second "
                        f"(bursts of {self.buckets.burst}) from one address; "
                        f"try again in {seconds} s"
                    },
                    status_code=429,
                    headers={"Retry-After": str(seconds)},
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp"})
"""Unicode categories of characters that draw nothing yet act on the text around them:
controls (Cc), format characters (Cf: the bidi embeddings, overrides and isolates
U+202A-U+202E and U+2066-U+2069, the marks U+200E/U+200F, zero-width characters)
and the line and paragraph separators (Zl, Zp) that break lines and bidi runs."""


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def visible(text: str) -> str:
    """`text` with every character of `HIDDEN_CATEGORIES` shown as its escape (`\\u202e`).

    live.js `visible` does the same for text the pages' scripts insert.
    """
    return "".join(
        _escape(char) if unicodedata.category(char) in HIDDEN_CATEGORIES else char for char in text
    )
