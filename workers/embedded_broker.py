"""The embedded broker: kombu's filesystem transport, with whole-message writes.

kombu's filesystem channel creates a message file and then writes into it,
so a worker listing the folder at that moment can take the file while it is
still empty and fail decoding it. This channel writes each message under a
name the readers ignore and renames it into place, which is atomic.
"""

from __future__ import annotations

import os
import uuid
from time import monotonic
from typing import Any

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps

TRANSPORT = "workers.embedded_broker:Transport"
"""What Celery's `broker_transport` names to use this transport."""


class Channel(filesystem.Channel):
    """A filesystem channel whose messages appear only once complete."""

    def _put(self, queue: str, payload: Any, **kwargs: Any) -> None:  # type: ignore[override]
        name = f"{round(monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"
        # Readers take only names ending in ".<queue>.msg"; ".partial" is never one.
        partial = os.path.join(self.data_folder_out, f"{uuid.uuid4()}.partial")
        try:
            with open(partial, "wb") as out:
                out.write(str_to_bytes(dumps(payload)))
            os.replace(partial, os.path.join(self.data_folder_out, name))
        except OSError as error:
            raise ChannelError(f"cannot add a message to {self.data_folder_out!r}") from error


class Transport(filesystem.Transport):
    """kombu's filesystem transport with `Channel` above."""

    Channel = Channel
