"""The Kubernetes deployment (k8s/): the beat and the referee tier.

One beat; a referee tier of at least two replicas sharing a Redis relay of
their own (a password, reachable from the referee pods only), rolled without
losing capacity and drained within its pods' grace period after a preStop
pause, with gRPC probes. Without kubectl these tests are skipped, unless
ARENA_REQUIRE_SERVICES=1, where they fail.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from referee.server import LIVENESS
from tests.support.k8s import (
    OVERLAYS,
    Doc,
    _port,
    _services,
    config,
    find,
    find_prefixed,
    pod_specs,
    referee_container,
    referee_settings,
)


@pytest.mark.parametrize("name", ["base", *OVERLAYS])
def test_exactly_one_beat_never_two_at_once(rendered: dict[str, list[Doc]], name: str) -> None:
    beat = find(rendered[name], "Deployment", "beat")
    assert beat["spec"]["replicas"] == 1
    assert beat["spec"]["strategy"]["type"] == "Recreate"
    assert not [
        d
        for d in rendered[name]
        if d["kind"] in ("HorizontalPodAutoscaler", "PodDisruptionBudget")
        and d["metadata"]["name"] == "beat"
    ]


@pytest.mark.parametrize("name", ["base", *OVERLAYS])
def test_the_referee_is_a_tier_of_replicas(rendered: dict[str, list[Doc]], name: str) -> None:
    """Two or more replicas, each its own name, rolled a new pod first, never below the count."""
    referee = find(rendered[name], "Deployment", "referee")
    replicas = referee["spec"]["replicas"]
    assert replicas >= 2
    strategy = referee["spec"]["strategy"]
    assert strategy["type"] == "RollingUpdate"
    assert strategy["rollingUpdate"]["maxUnavailable"] in (0, "0%")
    assert strategy["rollingUpdate"]["maxSurge"] not in (0, "0%")
    # Replica names must differ (a replica aborts its own name's earlier matches).
    env = {e["name"]: e for e in referee_container(rendered[name])["env"]}
    assert env["ARENA_REFEREE_REPLICA"]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.name"}}
    # One process per pod: the scrape annotation names one metrics port.
    assert referee_settings(rendered[name]).get("ARENA_REFEREE_PROCESSES", "1") == "1"
    # At least one referee through any voluntary disruption, yet never a blocked drain.
    budget = find(rendered[name], "PodDisruptionBudget", "referee")["spec"]
    assert "maxUnavailable" not in budget
    assert 1 <= budget["minAvailable"] < replicas


def secret_variable(docs: list[Doc], container: Doc, name: str) -> str:
    """The arena-secrets key that `container`'s variable `name` comes from (it has one)."""
    (variable,) = [e for e in container.get("env", []) if e["name"] == name]
    ref = variable["valueFrom"]["secretKeyRef"]
    secret = find_prefixed(docs, "Secret", "arena-secrets")
    assert ref["name"] == secret["metadata"]["name"], variable
    assert ref["key"] in secret["data"], variable
    key: str = ref["key"]
    return key


def relay_workload(docs: list[Doc]) -> Doc:
    return find(docs, "Deployment", "relay")


@pytest.mark.parametrize("name", ["base", *OVERLAYS])
def test_the_relay_is_a_redis_of_its_own_with_a_password(
    rendered: dict[str, list[Doc]], name: str
) -> None:
    """Whoever reaches the relay is as trusted as a replica (a `call start` message in an
    inbox starts any match; the inboxes carry private hands): not the broker's Redis, and a
    password from the Secret, which the referee puts in its URL."""
    docs = rendered[name]
    referee = referee_container(docs)
    env = [e["name"] for e in referee["env"]]
    relay_env = next(e for e in referee["env"] if e["name"] == "ARENA_RELAY_URL")
    relay = urlsplit(relay_env["value"])
    assert relay.scheme in ("redis", "rediss")
    assert relay.password == "$(RELAY_PASSWORD)" and not relay.username
    # Kubernetes expands $(RELAY_PASSWORD) only from a variable defined before.
    assert env.index("RELAY_PASSWORD") < env.index("ARENA_RELAY_URL")
    key = secret_variable(docs, referee, "RELAY_PASSWORD")

    service = _services(docs)[relay.hostname or ""]
    assert _port(service, relay.port or 0)["targetPort"] == "redis"
    workload = relay_workload(docs)
    pod = workload["spec"]["template"]
    assert service["spec"]["selector"].items() <= pod["metadata"]["labels"].items()
    # Not the broker's Redis: Celery's clients (web, workers, beat) never need it.
    broker = urlsplit(config(docs)["ARENA_BROKER_URL"])
    assert relay.hostname != broker.hostname
    broker_pods = find(docs, "StatefulSet", "redis")["spec"]["template"]["metadata"]["labels"]
    assert not service["spec"]["selector"].items() <= broker_pods.items()
    # One relay at a time (two would split the tier), and it asks for the password.
    assert workload["spec"]["replicas"] == 1
    assert workload["spec"]["strategy"]["type"] == "Recreate"
    (server,) = pod["spec"]["containers"]
    args = server["args"]
    assert args[args.index("--requirepass") + 1] == "$(RELAY_PASSWORD)"
    assert secret_variable(docs, server, "RELAY_PASSWORD") == key


@pytest.mark.parametrize("name", ["base", *OVERLAYS])
def test_only_the_referees_reach_the_relay(rendered: dict[str, list[Doc]], name: str) -> None:
    docs = rendered[name]
    relay_pods = relay_workload(docs)["spec"]["template"]["metadata"]["labels"]
    (policy,) = [
        d
        for d in docs
        if d["kind"] == "NetworkPolicy"
        and d["spec"]["podSelector"]["matchLabels"].items() <= relay_pods.items()
    ]
    assert policy["spec"]["policyTypes"] == ["Ingress"]
    (rule,) = policy["spec"]["ingress"]
    assert all(set(peer) == {"podSelector"} for peer in rule["from"])  # no namespace, no CIDR
    selectors = [peer["podSelector"]["matchLabels"] for peer in rule["from"]]
    admitted = {
        d["metadata"]["name"]
        for d, _spec in pod_specs(docs)
        if any(
            selector.items() <= d["spec"]["template"]["metadata"]["labels"].items()
            for selector in selectors
        )
    }
    assert admitted == {"referee"}, admitted
    assert [p["port"] for p in rule["ports"]] == [6379]


@pytest.mark.parametrize("name", ["base", *OVERLAYS])
def test_a_draining_referee_finishes_within_its_grace_period(
    rendered: dict[str, list[Doc]], name: str
) -> None:
    """Deleting a pod runs its preStop first, while the pod leaves the Service endpoints
    but still listens; then SIGTERM drains it: matches get ARENA_SHUTDOWN_GRACE_S, then
    the bots move and it exits. All within terminationGracePeriodSeconds."""
    spec = find(rendered[name], "Deployment", "referee")["spec"]["template"]["spec"]
    settings = referee_settings(rendered[name])
    assert "ARENA_SHUTDOWN_GRACE_S" in settings, "set it explicitly, beside the grace period"
    shutdown_grace = float(settings["ARENA_SHUTDOWN_GRACE_S"])
    command = referee_container(rendered[name])["lifecycle"]["preStop"]["exec"]["command"]
    assert command[0] == "sleep", command
    pause = float(command[1])
    # Endpoint removal reaches every kube-proxy within a few seconds.
    assert 3 <= pause <= 15, pause
    # The period counts from the preStop; ten seconds beyond the grace for aborting the
    # unfinished matches and exiting, or the kubelet kills the replica mid-drain.
    assert spec["terminationGracePeriodSeconds"] >= pause + shutdown_grace + 10


@pytest.mark.parametrize("name", ["base", *OVERLAYS])
def test_referee_probes_are_grpc(rendered: dict[str, list[Doc]], name: str) -> None:
    referee = referee_container(rendered[name])
    grpc_port = next(p["containerPort"] for p in referee["ports"] if p["name"] == "grpc")
    assert config(rendered[name])["ARENA_REFEREE_LISTEN"] == f"0.0.0.0:{grpc_port}"
    # Readiness is what takes a draining replica, or one that cannot reach the relay
    # (health NOT_SERVING), out of the Services. Startup and liveness ask the name that
    # stays SERVING while the process runs: a replica without Redis is not restarted.
    assert referee["readinessProbe"]["grpc"] == {"port": grpc_port}
    for probe in ("startupProbe", "livenessProbe"):
        assert referee[probe]["grpc"] == {"port": grpc_port, "service": LIVENESS}, probe
    # The kubelet stops liveness probes once a pod is being deleted, so a drain is
    # safe; still, a busy replica may miss a few checks before it is restarted.
    liveness = referee["livenessProbe"]
    assert liveness["periodSeconds"] * liveness["failureThreshold"] >= 30
