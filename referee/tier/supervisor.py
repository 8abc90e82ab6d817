"""`arena referee --processes N`: N referee replicas on one machine, one port.

Python plays a match on one core, so one referee process per core. The
processes bind the same port with SO_REUSEPORT (as gRPC's multiprocessing
example does): the kernel spreads new connections over them, and they
share the bots through the relay. This process only supervises: it starts
them, restarts one that dies, and on SIGTERM or SIGINT drains them one at
a time: the next is told to stop only once the previous has exited, so that
some process always listens and takes the bots the draining one sends away.
The last one has nowhere to send them: it keeps them while its matches
finish. The processes heed SIGTERM only (Ctrl-C in a terminal signals the
whole process group: they would all drain at once).
"""

from __future__ import annotations

import logging
import multiprocessing
import signal
import time
from dataclasses import replace
from multiprocessing.process import BaseProcess
from types import FrameType

from referee.settings import RefereeSettings

log = logging.getLogger(__name__)

POLL_S = 0.5
RESTART_BACKOFF_S = (1.0, 30.0)
"""First and longest pause before restarting a process that died."""
STEADY_S = 60.0
"""A process that ran this long before dying is restarted after the first pause again."""


def child_settings(settings: RefereeSettings, index: int) -> RefereeSettings:
    """Process `index`'s settings: its own replica name and metrics port."""
    return replace(
        settings,
        processes=1,
        replica=f"{settings.replica_name}.{index}",
        metrics_port=settings.metrics_port + index if settings.metrics_port else 0,
    )


def _serve_child(settings: RefereeSettings) -> None:
    from cardarena_api.event_loop import run
    from referee.server import serve

    logging.basicConfig(
        level=logging.INFO,
        format=f"%(asctime)s %(levelname)s [{settings.replica}] %(name)s: %(message)s",
    )
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise SystemExit(run(serve(settings, signals=(signal.SIGTERM,))))


class Supervisor:
    """Keeps N referee processes running until told to stop."""

    def __init__(self, settings: RefereeSettings) -> None:
        self._settings = settings
        self._context = multiprocessing.get_context("spawn")
        self._children: dict[int, BaseProcess] = {}
        self._started: dict[int, float] = {}
        self._backoff: dict[int, float] = {}
        self._stopping = False

    def _start(self, index: int) -> None:
        child = self._context.Process(
            target=_serve_child,
            args=(child_settings(self._settings, index),),
            name=f"referee-{index}",
        )
        child.start()
        self._children[index] = child
        self._started[index] = time.monotonic()
        log.info("referee process %d started (pid %s)", index, child.pid)

    def _stop(self, signum: int, frame: FrameType | None) -> None:
        self._stopping = True

    def run(self) -> int:
        """Serve until SIGTERM or SIGINT; 0 when every process stopped cleanly."""
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, self._stop)
        # Migrated once, here: processes that all find a new database would race to create it.
        from ladder.store import Store

        Store(self._settings.database_url).close()
        for index in range(self._settings.processes):
            self._start(index)
        restart_at: dict[int, float] = {}
        while not self._stopping:
            time.sleep(POLL_S)
            now = time.monotonic()
            for index, child in list(self._children.items()):
                if child.is_alive() or index in restart_at:
                    continue
                lived = now - self._started[index]
                first, most = RESTART_BACKOFF_S
                pause = (
                    first
                    if lived >= STEADY_S
                    else min(most, 2 * self._backoff.get(index, first / 2))
                )
                self._backoff[index] = pause
                restart_at[index] = now + pause
                log.warning(
                    "referee process %d exited with %s; restarting it in %.0f s",
                    index,
                    child.exitcode,
                    pause,
                )
            for index, when in list(restart_at.items()):
                if now >= when and not self._stopping:
                    del restart_at[index]
                    self._start(index)
        return self._shutdown()

    def _shutdown(self) -> int:
        log.info("stopping %d referee processes, one at a time", len(self._children))
        worst = 0
        for index, child in sorted(self._children.items()):
            if child.is_alive():
                child.terminate()  # SIGTERM: the process drains, then exits
            child.join()
            code = child.exitcode or 0
            log.info("referee process %d stopped (%s)", index, code)
            worst = worst or code
        return worst
