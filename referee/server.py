"""Start the referee, serve until told to stop, and stop cleanly.

On SIGTERM or SIGINT the referee stops taking matches, lets running ones
finish for the shutdown grace period, aborts the rest (marked aborted in the
store, so a worker plays them again) and says which in its log. A replica of
a tier that another live replica can stand in for drains first: it stops
listening, so that new connections reach the others, and tells its bots to
reconnect there; its running matches go on reaching their seats through the
relay while they finish. The last replica of a tier (and a lone referee)
keeps its bots and goes on listening while its matches finish: there is
nowhere to send anyone. Calls still waiting for a match when the matches
have stopped are answered (the match's end, or UNAVAILABLE "ask again")
before the server ends what is left.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from prometheus_client import start_http_server
from redis.exceptions import RedisError
from sqlalchemy.exc import OperationalError

from cardarena_api.v1 import arena_pb2 as pb
from cardarena_api.v1 import arena_pb2_grpc as pb_grpc
from ladder.challenges import ChallengeQuotas
from ladder.store import Store
from ladder.wording import plural
from referee.authoring import AuthorService
from referee.bot_views import BotViews
from referee.challenging import Challenges
from referee.database_errors import DatabaseErrors
from referee.decoding import DecodeGuard
from referee.encoded_replies import EncodedReplies
from referee.gate import Gatekeeper
from referee.matches import MatchManager
from referee.metrics import RefereeMetrics
from referee.presence import Presence
from referee.revocation import keep_ending_revoked
from referee.runner import Limits
from referee.seats import LocalSeats, Seats
from referee.service import BotService, RefereeService
from referee.sessions import SessionHub
from referee.settings import RefereeSettings
from referee.stopping import cancel_and_wait
from referee.tier.limits import TierAllowance
from referee.tier.placement import Placer
from referee.tier.replica import Tier

log = logging.getLogger(__name__)

# grpc_health ships no type hints for its asyncio servicer.
AsyncHealthServicer = health.aio.HealthServicer  # type: ignore[attr-defined]

SERVICE_NAMES = (
    pb.DESCRIPTOR.services_by_name["BotService"].full_name,
    pb.DESCRIPTOR.services_by_name["RefereeService"].full_name,
    pb.DESCRIPTOR.services_by_name["AuthorService"].full_name,
)
OTHERS_TIMEOUT_S = 2.0
"""How long a stopping replica waits for Redis to say which other replicas are live."""
LIVENESS = "liveness"
"""A health name SERVING from the start to the stop, whatever the relay: a liveness probe
asks it (a replica that cannot reach Redis is not ready, yet restarting it would only lose
the matches it plays on its own seats)."""


class Health:
    """The referee's gRPC health, for "" and each service: SERVING while it runs and, in a
    tier, reaches the relay (`Tier.on_ready`); NOT_SERVING for good once it stops.
    LIVENESS is SERVING until the stop."""

    def __init__(self, servicer: Any) -> None:
        self.servicer = servicer
        # Changes are applied in the order they came (asyncio.Lock is first come, first
        # served): the last one wins, however the sets interleave.
        self._lock = asyncio.Lock()
        self._updates: set[asyncio.Task[None]] = set()

    async def set(self, serving: bool) -> None:
        status = (
            health_pb2.HealthCheckResponse.SERVING
            if serving
            else health_pb2.HealthCheckResponse.NOT_SERVING
        )
        async with self._lock:
            for name in ("", *SERVICE_NAMES):
                await self.servicer.set(name, status)

    def follow(self, ready: bool) -> None:
        """A `Tier.on_ready` listener (a plain call: the servicer's set is a coroutine)."""
        task = asyncio.get_running_loop().create_task(self.set(ready))
        self._updates.add(task)
        task.add_done_callback(self._updates.discard)

    async def stop(self) -> None:
        """NOT_SERVING from now on, whatever the tier says later."""
        async with self._lock:
            await self.servicer.enter_graceful_shutdown()


@dataclass
class Referee:
    """A running referee: its server and the parts tests may look at."""

    settings: RefereeSettings
    server: grpc.aio.Server
    port: int
    store: Store
    hub: SessionHub
    manager: MatchManager
    health: Health
    metrics: RefereeMetrics
    leases: asyncio.Task[None]
    presence: Presence
    presence_renewal: asyncio.Task[None]
    stopped: asyncio.Event
    """Set once a shutdown has stopped the matches: the waits still open are answered."""
    tier: Tier | None = None
    revocations: asyncio.Task[None] | None = None
    """In a tier: ends the sessions of rotated tokens whose word the relay lost."""

    async def stop(self) -> dict[str, list[str]]:
        """Shut down gracefully; returns the matches that finished and were aborted."""
        await self.health.stop()
        grace = self.settings.shutdown_grace_s
        self.manager.stop_taking()
        closing: asyncio.Task[None] | None = None
        if self.tier is not None:
            if await self._others_serve(self.tier):
                # Stops listening now; calls under way (streams, waits) go on for the grace.
                closing = asyncio.create_task(self.server.stop(grace=grace + 5.0))
                await self.tier.drain("this referee replica is stopping; reconnect")
            else:
                log.info(
                    "no other live replica to send the bots to: they stay here while the "
                    "running matches finish"
                )
        outcome = await self.manager.shutdown(grace)
        self.stopped.set()
        background = [self.leases, self.presence_renewal]
        if self.revocations is not None:
            background.append(self.revocations)
        await cancel_and_wait(*background)
        self.hub.close_all()
        await self.presence.flush()
        if self.tier is not None:
            await self.tier.close()
        # Ends what is left of the calls (a second stop shortens the first's grace).
        await self.server.stop(grace=1.0)
        if closing is not None:
            await closing
        self.store.close()
        return outcome

    @staticmethod
    async def _others_serve(tier: Tier) -> bool:
        """Whether another live replica, not draining, can take this one's bots."""
        try:
            # A fresh view: a replica stopped just before has left it.
            await asyncio.wait_for(tier.beat(), OTHERS_TIMEOUT_S)
        except (RedisError, OSError, TimeoutError) as error:
            log.warning("tier: cannot read the live replicas (%s); using the last view", error)
        return any(replica.name != tier.replica and not replica.draining for replica in tier.live)


async def start(settings: RefereeSettings, metrics: RefereeMetrics | None = None) -> Referee:
    """Build and start a referee (the metrics endpoint is the caller's business)."""
    settings.check()
    store = await asyncio.to_thread(Store, settings.database_url)
    aborted = await asyncio.to_thread(
        store.abort_abandoned,
        "the referee restarted during the match",
        settings.replica_name,
    )
    if aborted:
        log.warning(
            "marked %d matches aborted from an earlier run: %s", len(aborted), ", ".join(aborted)
        )
    metrics = metrics or RefereeMetrics.create()

    async def database_answers() -> bool:
        try:
            await asyncio.to_thread(store.ping)
        except OperationalError:
            return False
        return True

    hub = SessionHub(probe=database_answers)
    limits = Limits(time_bank_ms=settings.time_bank_ms, max_strikes=settings.max_strikes)
    tier: Tier | None = None
    seats: Seats = LocalSeats(hub, settings.grace_s, settings.replica_name)
    if settings.relay_url:
        tier = Tier(settings.relay_url, settings.replica_name, hub, settings.grace_s, metrics)
        await tier.start()
        seats = tier.seats
    presence = Presence(store, hub, elsewhere=None if tier is None else tier.held_elsewhere)
    manager = MatchManager(
        store,
        seats,
        limits,
        metrics,
        settings.replica_name,
        settings.lease_s,
        on_end=(lambda match_id: None) if tier is None else tier.match_ended,
        remote=None if tier is None else tier.public,
        quotas=ChallengeQuotas(settings.challenges_per_hour, settings.challenges_at_once),
    )
    if tier is not None:
        tier.relay.on_ended.append(manager.ended_elsewhere)
        tier.public.start(manager.running, manager.follow_public)
    placer = None if tier is None else Placer(tier, manager.start, metrics)
    gate = Gatekeeper(settings, store)
    server = grpc.aio.server(
        interceptors=[DecodeGuard(), EncodedReplies(), DatabaseErrors()],
        options=[
            ("grpc.max_receive_message_length", settings.max_message_bytes),
            ("grpc.max_send_message_length", 16 * 1024 * 1024),
            ("grpc.keepalive_time_ms", 20_000),
            ("grpc.http2.max_pings_without_data", 0),
            # Accept client keepalive pings every 10 s or more (the SDK pings every
            # 20 s); gRPC's default (5 min) answers an idle session's pings with
            # GOAWAY "too_many_pings", dropping the bot every few minutes.
            ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
            # Replicas on one machine share the port; a lone referee must not
            # share it by accident with another one started on the same port.
            ("grpc.so_reuseport", 1 if tier is not None else 0),
        ],
    )
    if tier is None:
        service = BotService(settings, store, hub, gate, metrics)
    else:
        opens = TierAllowance(
            tier.clients.commands, "session-opens", settings.session_opens_per_minute
        )
        service = BotService(
            settings,
            store,
            hub,
            gate,
            metrics,
            opens,
            tier.replica,
            tier.session_replicas,
            tier.published,
        )
    pb_grpc.add_BotServiceServicer_to_server(service, server)

    async def revoke(bot_id: str, credential: str) -> None:
        if tier is None:
            hub.revoke(bot_id, credential)
        else:
            await tier.revoke(bot_id, credential)

    stopped = asyncio.Event()
    referee_service = RefereeService(
        settings, store, manager, gate, None if placer is None else placer.start, stopped
    )
    pb_grpc.add_RefereeServiceServicer_to_server(referee_service, server)
    challenges = Challenges(store, gate, manager, referee_service)
    views = BotViews(settings, store, gate, manager, None if tier is None else tier.seat_views)
    if tier is not None:
        tier.seat_views.start(views.seat_streams, views.follow_seat)
    pb_grpc.add_AuthorServiceServicer_to_server(
        AuthorService(settings, store, gate, revoke, challenges, views), server
    )
    health_servicer = AsyncHealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection(
        (*SERVICE_NAMES, health.SERVICE_NAME, reflection.SERVICE_NAME), server
    )
    if settings.tls_cert and settings.tls_key:
        credentials = grpc.ssl_server_credentials(
            [(Path(settings.tls_key).read_bytes(), Path(settings.tls_cert).read_bytes())]
        )
        port = server.add_secure_port(settings.listen, credentials)
    else:
        port = server.add_insecure_port(settings.listen)
    if port == 0:
        raise OSError(f"cannot listen on {settings.listen}")
    await server.start()
    health_state = Health(health_servicer)
    if tier is not None:
        # Not ready while it cannot reach the relay: it could place no match, reach no
        # seat on another replica, and its bots are better served elsewhere.
        tier.on_ready.append(health_state.follow)
    await health_servicer.set(LIVENESS, health_pb2.HealthCheckResponse.SERVING)
    await health_state.set(tier is None or tier.ready)
    leases = asyncio.create_task(manager.keep_leases(), name="match leases")
    renewal = asyncio.create_task(presence.keep(), name="bot presence")
    revocations = (
        None
        if tier is None
        else asyncio.create_task(keep_ending_revoked(store, hub), name="revocations")
    )
    return Referee(
        settings,
        server,
        port,
        store,
        hub,
        manager,
        health_state,
        metrics,
        leases,
        presence,
        renewal,
        stopped,
        tier,
        revocations,
    )


def serve_metrics(host: str, port: int, metrics: RefereeMetrics) -> None:
    """Serve /metrics on host:port; a port already taken is an error that names it."""
    try:
        start_http_server(port, addr=host, registry=metrics.registry)
    except OSError as error:
        raise ValueError(
            f"cannot serve metrics on {host}:{port}: {error.strerror or error} "
            "(another process has it? --metrics-port 0 for none)"
        ) from None


def log_tasks() -> None:
    """Log every asyncio task and the line it waits at (on SIGUSR1): what a referee that
    does not stop, or does not answer, is waiting for."""
    for task in asyncio.all_tasks():
        # Not Task.print_stack: it fails on a frame without a line number (grpc's own).
        where = [
            f'  File "{frame.f_code.co_filename}", line {frame.f_lineno}, in {frame.f_code.co_name}'
            for frame in task.get_stack()
        ]
        log.warning("task %s waits at:\n%s", task.get_name(), "\n".join(where) or "  (no frame)")


async def serve(
    settings: RefereeSettings, signals: tuple[signal.Signals, ...] = (signal.SIGTERM, signal.SIGINT)
) -> int:
    """Run a referee until one of `signals`; exit status 0 after a clean stop."""
    # Before the metrics port opens: a referee refused its settings never listens.
    settings.check()
    metrics = RefereeMetrics.create()
    host = settings.listen.rsplit(":", 1)[0]
    if settings.metrics_port:
        serve_metrics(settings.metrics_host, settings.metrics_port, metrics)
    referee = await start(settings, metrics)
    # What start-up made (modules, descriptors, the store's metadata) lives as long as
    # the process: out of the collector's sight, a full collection no longer walks it.
    # Each one walked it all while every running match's move waited: bench.load's
    # moves at p99 waited 90-100 ms for it, 30-35 ms without full collections at all.
    gc.freeze()
    log.info(
        "referee listening on %s:%d (%s, registration %s, sign-up %s)",
        host,
        referee.port,
        f"metrics on {settings.metrics_host}:{settings.metrics_port}"
        if settings.metrics_port
        else "no metrics",
        "open" if settings.registration_is_open else "admin only",
        settings.signup,
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in signals:
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(signum, stop.set)
    with contextlib.suppress(NotImplementedError, AttributeError):  # no SIGUSR1 on Windows
        loop.add_signal_handler(signal.SIGUSR1, log_tasks)
    await stop.wait()
    log.info("stopping: no new matches; running ones get %.0f s", settings.shutdown_grace_s)
    outcome = await referee.stop()
    finished, aborted = outcome["finished"], outcome["aborted"]
    log.info(
        "stopped: %s played since the start; %s",
        plural(referee.manager.played, "match", "matches"),
        f"of the {plural(len(finished) + len(aborted), 'match', 'matches')} running at the "
        f"stop, {len(finished)} finished ({', '.join(finished) or '-'}) and {len(aborted)} "
        f"were aborted ({', '.join(aborted) or '-'}), to be played again"
        if finished or aborted
        else "none was running",
    )
    return 0
