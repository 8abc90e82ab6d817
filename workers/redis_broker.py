"""The Redis broker: kombu's Redis transport, with channels that outlive a lost broker.

When the broker goes away, Celery's consumer collects its connection (it
closes the channels, then detaches the transport from the connection) and
then closes it. A broker error that interrupts a channel's close during the
collect (a BRPOP still waiting for its reply, another channel's fanout
queue to delete) leaves that channel open, and its connection pool
dropped, so the close reaches it again on the detached transport. kombu's
channel then builds a new pool, to give its unacknowledged messages back,
from the parameters of the transport's connection, which are gone: an
AttributeError, which Celery does not take for a connection error and
which stops the worker ("Unrecoverable error").

Here a channel keeps the parameters it was opened with, so it can still
close then, and the tasks that were running when the broker went away can
still acknowledge their messages afterwards: as when the collect closes
every channel.
"""

from __future__ import annotations

from typing import Any

from kombu.transport import redis

TRANSPORT = "workers.redis_broker:Transport"
"""What Celery's `broker_transport` names to use this transport."""


class Channel(redis.Channel):
    """A Redis channel that reads its connection parameters once, when it opens."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # kombu's __init__ opens the channel's first client, which reads the parameters.
        self._params: dict[bool, dict[str, Any]] = {}
        super().__init__(*args, **kwargs)

    def _connparams(self, asynchronous: bool = False) -> dict[str, Any]:
        if asynchronous not in self._params:
            # The type stubs leave this private method out.
            self._params[asynchronous] = super()._connparams(asynchronous=asynchronous)  # type: ignore[misc]
        return dict(self._params[asynchronous])


class Transport(redis.Transport):
    """kombu's Redis transport with `Channel` above."""

    Channel = Channel
