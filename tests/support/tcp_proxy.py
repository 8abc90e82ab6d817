"""A TCP proxy a test can cut: a database or any other service that goes away and comes back.

`cut()` resets every connection through it and refuses new ones (connection refused), as
a service that failed over or a network that dropped it; `restore()` takes connections
again on the same port. `freeze()` passes nothing on, either way, on every connection old
or new, which stay open, as a network that drops packets silently (or a stopped host);
`thaw()` passes on what was held back and all that follows.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from urllib.parse import urlsplit, urlunsplit

from tests.support.processes import free_port

CHUNK = 64 * 1024
POLL_S = 0.1
"""How often the accepting thread looks whether it should stop: a bound on its loop."""


def _reset(sock: socket.socket) -> None:
    """Close with a reset (linger 0), as a dead peer's network answers, not a clean end."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(OSError):
        # Wakes the pump blocked in `recv` on it: until that returns, the kernel keeps the
        # socket, and its close sends nothing (the peer, a Redis client blocked on a read,
        # say, would wait for its timeout, and Redis would still serve its pending command).
        sock.shutdown(socket.SHUT_RD)
    with contextlib.suppress(OSError):
        sock.close()


class TcpProxy:
    """Forwards 127.0.0.1:`port` to `target_host`:`target_port` until cut."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self.port = free_port()
        self._target = (target_host, target_port)
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()
        self._listener: socket.socket | None = None
        self._accepting: threading.Thread | None = None
        self._open = False
        self._flowing = threading.Event()
        self._flowing.set()
        self.restore()

    @classmethod
    def before(cls, url: str) -> tuple[TcpProxy, str]:
        """A proxy to the service at `url`, and `url` leading through it instead."""
        target = urlsplit(url)
        assert target.hostname and target.port, url
        proxy = cls(target.hostname, target.port)
        userinfo, at, _ = target.netloc.rpartition("@")
        through = target._replace(netloc=f"{userinfo}{at}127.0.0.1:{proxy.port}")
        return proxy, urlunsplit(through)

    def restore(self) -> None:
        """Take connections again."""
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        listener.settimeout(POLL_S)
        with self._lock:
            self._listener = listener
            self._open = True
        self._accepting = threading.Thread(target=self._accept, args=(listener,), daemon=True)
        self._accepting.start()

    def cut(self) -> None:
        """Reset every connection and refuse new ones."""
        with self._lock:
            self._open = False
            sockets, self._sockets = self._sockets, set()
        if self._accepting is not None:
            self._accepting.join()
        for sock in sockets:
            _reset(sock)

    def freeze(self) -> None:
        """Pass nothing on until `thaw`; connections stay open."""
        self._flowing.clear()

    def thaw(self) -> None:
        self._flowing.set()

    def close(self) -> None:
        self._flowing.set()
        if self._open:
            self.cut()

    def __enter__(self) -> TcpProxy:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _accept(self, listener: socket.socket) -> None:
        try:
            while self._open:
                try:
                    client, _ = listener.accept()
                except TimeoutError:
                    continue
                try:
                    server = socket.create_connection(self._target, timeout=5)
                except OSError:
                    _reset(client)
                    continue
                client.settimeout(None)
                server.settimeout(None)
                with self._lock:
                    if not self._open:
                        _reset(client)
                        _reset(server)
                        break
                    self._sockets |= {client, server}
                for source, sink in ((client, server), (server, client)):
                    threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()
        finally:
            listener.close()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(CHUNK):
                self._flowing.wait()
                sink.sendall(data)
        # One side ended (or the cut closed them): end the other too.
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)
