"""The Kubernetes deployment (k8s/): kustomize renders, the schemas accept, the rules hold.

Each overlay is rendered with `kubectl kustomize` and every object is
validated offline against the Kubernetes OpenAPI schemas of KUBERNETES_VERSION
shipped by the kubernetes-validate package, strictly (no unknown fields).
Then the arena's own rules: one beat; a referee tier of at least two
replicas sharing a Redis relay of their own (a password, reachable from the
referee pods only), rolled without losing capacity and drained within its
pods' grace period after a preStop pause, with gRPC probes; requests and limits
everywhere; settings that agree with the ports, services and database they
name; and a Grafana dashboard that charts exactly the metrics the processes
export. Without kubectl or kubernetes-validate these tests are
skipped, unless ARENA_REQUIRE_SERVICES=1, where they fail.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from referee.server import LIVENESS
from tests.support.dashboard import (
    dashboard_metric_names,
    exported_metric_names,
    exprs,
    load_dashboard,
    metric_names,
    panels,
)
from tests.support.services import service_missing

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "k8s"
KUBERNETES_VERSION = "1.31.0"
OVERLAYS = ("dev", "prod")
NAMESPACES = {"dev": "card-arena-dev", "prod": "card-arena"}
APP_WORKLOADS = ("referee", "worker", "beat", "web")
SCRAPED = {"referee": "ARENA_REFEREE_METRICS_PORT", "worker": "ARENA_WORKER_METRICS_PORT"}

# Every sample name the dashboard may query, one per metric the arena exports
# (a counter's _total, a gauge, a histogram's _bucket for histogram_quantile).
DASHBOARD_METRICS = frozenset(
    {
        # referee (referee/metrics.py)
        "arena_bots_connected",
        "arena_matches_running",
        "arena_matches_finished_total",
        "arena_moves_total",
        "arena_move_latency_seconds_bucket",
        "arena_move_timeouts_total",
        "arena_illegal_moves_total",
        "arena_forfeits_total",
        "arena_bot_disconnects_total",
        # referee replicas: the relay, placement, the registry, draining
        "arena_relayed_requests_total",
        "arena_relay_added_latency_seconds_bucket",
        "arena_match_placements_total",
        "arena_referee_replicas",
        "arena_referee_draining",
        # workers (workers/metrics.py)
        "arena_worker_tasks_total",
        "arena_worker_task_failures_total",
        "arena_worker_task_duration_seconds_bucket",
        "arena_matches_recorded_total",
        "arena_rating_updates_total",
        "arena_tournaments_finished_total",
        # web (ladder/web/metrics.py)
        "arena_web_requests_total",
        "arena_web_request_duration_seconds_bucket",
    }
)

Doc = dict[str, Any]


# rendering --------------------------------------------------------------------


def _kubectl() -> str:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        service_missing("kubectl is not installed (it renders the kustomizations)")
    return kubectl


def _render(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_kubectl(), "kustomize", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _yaml() -> Any:
    try:
        import yaml
    except ImportError:
        service_missing("PyYAML is not installed (kubernetes-validate brings it)")
    return yaml


def _load_all(text: str) -> list[Doc]:
    return [doc for doc in _yaml().safe_load_all(text) if doc]


def _copy_tree(destination: Path) -> Path:
    """A copy of k8s/ without any real secrets.env."""
    tree = destination / "k8s"
    shutil.copytree(K8S, tree, ignore=shutil.ignore_patterns("secrets.env"))
    return tree


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Doc]]:
    """base, dev and prod rendered; prod with stand-in secrets in a copy of the tree."""
    tree = _copy_tree(tmp_path_factory.mktemp("k8s"))
    (tree / "overlays" / "prod" / "secrets.env").write_text(
        "ARENA_ADMIN_TOKEN=test-admin-token\nPOSTGRES_PASSWORD=test-postgres-password\n"
        "RELAY_PASSWORD=test-relay-password\n"
    )
    out: dict[str, list[Doc]] = {}
    for name, path in (
        ("base", K8S / "base"),
        ("dev", K8S / "overlays" / "dev"),
        ("prod", tree / "overlays" / "prod"),
    ):
        result = _render(path)
        assert result.returncode == 0, f"kubectl kustomize {name} failed:\n{result.stderr}"
        out[name] = _load_all(result.stdout)
    return out


def find(docs: list[Doc], kind: str, name: str) -> Doc:
    matches = [d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name]
    assert len(matches) == 1, f"expected one {kind}/{name}, found {len(matches)}"
    return matches[0]


def find_prefixed(docs: list[Doc], kind: str, prefix: str) -> Doc:
    """A generated object, whose name carries a content hash."""
    matches = [
        d
        for d in docs
        if d["kind"] == kind and re.fullmatch(rf"{prefix}(-[a-z0-9]+)?", d["metadata"]["name"])
    ]
    assert len(matches) == 1, f"expected one {kind} {prefix}-*, found {len(matches)}"
    return matches[0]


def pod_specs(docs: list[Doc]) -> Iterator[tuple[Doc, Doc]]:
    """(object, pod spec) of every workload."""
    for doc in docs:
        if doc["kind"] in ("Deployment", "StatefulSet", "Job", "DaemonSet"):
            yield doc, doc["spec"]["template"]["spec"]
        elif doc["kind"] == "CronJob":
            yield doc, doc["spec"]["jobTemplate"]["spec"]["template"]["spec"]


def containers(spec: Doc) -> list[Doc]:
    return [*spec.get("initContainers", []), *spec["containers"]]


def config(docs: list[Doc]) -> dict[str, str]:
    data: dict[str, str] = find_prefixed(docs, "ConfigMap", "arena-config")["data"]
    return data


def referee_container(docs: list[Doc]) -> Doc:
    spec = find(docs, "Deployment", "referee")["spec"]["template"]["spec"]
    (referee,) = spec["containers"]
    container: Doc = referee
    return container


def referee_settings(docs: list[Doc]) -> dict[str, str]:
    """The referee's literal ARENA_* values: arena-config, then its own env (which wins)."""
    settings = dict(config(docs))
    for variable in referee_container(docs).get("env", []):
        if "value" in variable:
            settings[variable["name"]] = variable["value"]
        else:  # from a Secret or the pod: no literal value here
            settings.pop(variable["name"], None)
    return settings


# the rendering and the schemas ------------------------------------------------


@pytest.mark.parametrize("name", ["base", *OVERLAYS])
def test_renders(rendered: dict[str, list[Doc]], name: str) -> None:
    kinds = {doc["kind"] for doc in rendered[name]}
    assert {
        "Deployment",
        "StatefulSet",
        "Service",
        "Job",
        "HorizontalPodAutoscaler",
        "PodDisruptionBudget",
        "Ingress",
        "ConfigMap",
        "Secret",
    } <= kinds


def _validator() -> Any:
    try:
        import kubernetes_validate
    except ImportError:
        service_missing("kubernetes-validate is not installed (pip install -e '.[dev]')")
    return kubernetes_validate


@pytest.mark.parametrize("name", OVERLAYS)
def test_overlay_validates_against_the_kubernetes_schemas(
    rendered: dict[str, list[Doc]], name: str
) -> None:
    validator = _validator()
    failures = []
    for doc in rendered[name]:
        try:
            validator.validate(doc, KUBERNETES_VERSION, strict=True)
        except validator.ValidationError as error:
            path = "/".join(str(p) for p in error.path)
            failures.append(f"{doc['kind']}/{doc['metadata']['name']} {path}: {error.message}")
        except validator.SchemaNotFoundError as error:
            failures.append(error.message)
    assert not failures, "\n".join(failures)


def test_the_validator_is_strict(rendered: dict[str, list[Doc]]) -> None:
    """A typo'd field must fail, or the test above proves nothing."""
    validator = _validator()
    doc = json.loads(json.dumps(find(rendered["dev"], "Deployment", "referee")))
    doc["spec"]["template"]["spec"]["containers"][0]["resource"] = {}
    with pytest.raises(validator.ValidationError):
        validator.validate(doc, KUBERNETES_VERSION, strict=True)


def test_prod_does_not_render_without_its_secrets(tmp_path: Path) -> None:
    result = _render(_copy_tree(tmp_path) / "overlays" / "prod")
    assert result.returncode != 0
    assert "secrets.env" in result.stderr


def test_prod_secrets_replace_the_placeholders(rendered: dict[str, list[Doc]]) -> None:
    secret = find_prefixed(rendered["prod"], "Secret", "arena-secrets")
    assert set(secret["data"]) == {"ARENA_ADMIN_TOKEN", "POSTGRES_PASSWORD", "RELAY_PASSWORD"}
    base = find_prefixed(rendered["base"], "Secret", "arena-secrets")
    assert set(base["data"]) == set(secret["data"])
    assert secret["data"] != base["data"]
    example = (K8S / "overlays" / "prod" / "secrets.env.example").read_text()
    assert set(re.findall(r"^([A-Z_]+)=", example, re.M)) == set(secret["data"])


# the arena's rules ------------------------------------------------------------


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
def test_every_container_has_requests_and_limits(rendered: dict[str, list[Doc]], name: str) -> None:
    for doc, spec in pod_specs(rendered[name]):
        for container in containers(spec):
            where = f"{doc['kind']}/{doc['metadata']['name']} {container['name']}"
            resources = container.get("resources", {})
            for kind in ("requests", "limits"):
                assert {"cpu", "memory"} <= set(resources.get(kind, {})), f"{where}: {kind}"


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


@pytest.mark.parametrize("name", ["base", *OVERLAYS])
def test_app_pods_run_the_arena_image_as_non_root(
    rendered: dict[str, list[Doc]], name: str
) -> None:
    commands = {}
    for doc, spec in pod_specs(rendered[name]):
        if doc["metadata"]["labels"].get("app.kubernetes.io/name") != "card-arena":
            continue
        assert spec["securityContext"]["runAsNonRoot"] is True
        assert spec["automountServiceAccountToken"] is False
        for container in containers(spec):
            assert container["image"].split("/")[-1].startswith("card-arena")
            assert container["securityContext"]["allowPrivilegeEscalation"] is False
            commands[doc["metadata"]["name"]] = container.get("args", container.get("command"))
    assert {role: commands[role][0] for role in APP_WORKLOADS} == {r: r for r in APP_WORKLOADS}
    assert commands["arena-migrate"] == ["migrate"]


@pytest.mark.parametrize("name", ["base", *OVERLAYS])
def test_disruption_budgets_select_their_pods(rendered: dict[str, list[Doc]], name: str) -> None:
    docs = rendered[name]
    for workload in ("referee", "worker", "web"):
        budget = find(docs, "PodDisruptionBudget", workload)
        labels = find(docs, "Deployment", workload)["spec"]["template"]["metadata"]["labels"]
        assert budget["spec"]["selector"]["matchLabels"].items() <= labels.items()


def test_worker_autoscaling(rendered: dict[str, list[Doc]]) -> None:
    bounds = {}
    for name in ("base", *OVERLAYS):
        hpa = find(rendered[name], "HorizontalPodAutoscaler", "worker")
        assert hpa["apiVersion"] == "autoscaling/v2"
        assert hpa["spec"]["scaleTargetRef"] == {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "name": "worker",
        }
        assert hpa["spec"]["metrics"][0]["resource"]["name"] == "cpu"
        bounds[name] = (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"])
        # The autoscaler owns the count: an apply must not reset it.
        assert "replicas" not in find(rendered[name], "Deployment", "worker")["spec"]
    assert bounds["dev"] == (1, 1)
    assert bounds["prod"][0] > bounds["base"][0] and bounds["prod"][1] > bounds["base"][1]


def test_dev_runs_one_of_each(rendered: dict[str, list[Doc]]) -> None:
    """But the referee: two replicas, so that dev exercises the relay between them."""
    for doc in rendered["dev"]:
        if doc["kind"] in ("Deployment", "StatefulSet") and "replicas" in doc["spec"]:
            expected = 2 if doc["metadata"]["name"] == "referee" else 1
            assert doc["spec"]["replicas"] == expected, doc["metadata"]["name"]


def _cpu(quantity: str) -> float:
    return float(quantity[:-1]) / 1000 if quantity.endswith("m") else float(quantity)


def test_prod_is_bigger_than_dev(rendered: dict[str, list[Doc]]) -> None:
    def requests(name: str) -> dict[str, float]:
        return {
            doc["metadata"]["name"]: _cpu(spec["containers"][0]["resources"]["requests"]["cpu"])
            for doc, spec in pod_specs(rendered[name])
        }

    dev, prod = requests("dev"), requests("prod")
    assert dev.keys() == prod.keys()
    assert all(prod[k] > dev[k] for k in dev), (dev, prod)
    assert find(rendered["prod"], "Deployment", "web")["spec"]["replicas"] >= 2


@pytest.mark.parametrize("name", OVERLAYS)
def test_overlay_namespace(rendered: dict[str, list[Doc]], name: str) -> None:
    namespace = NAMESPACES[name]
    docs = rendered[name]
    assert find(docs, "Namespace", namespace)
    for doc in docs:
        if doc["kind"] != "Namespace":
            assert doc["metadata"].get("namespace") == namespace, doc["metadata"]["name"]


def test_prod_images_are_pinned(rendered: dict[str, list[Doc]]) -> None:
    for _doc, spec in pod_specs(rendered["prod"]):
        for container in containers(spec):
            image = container["image"]
            tag = image.rsplit(":", 1)[1] if ":" in image.rsplit("/", 1)[-1] else ""
            assert "@sha256:" in image or (tag and tag != "latest"), image
            assert not container["image"].startswith("card-arena")  # a registry, not local


# settings agree with the objects they name --------------------------------------


def _services(docs: list[Doc]) -> dict[str, Doc]:
    return {d["metadata"]["name"]: d for d in docs if d["kind"] == "Service"}


def _port(service: Doc, number: int) -> Doc:
    matches = [p for p in service["spec"]["ports"] if p["port"] == number]
    assert matches, f"service {service['metadata']['name']} has no port {number}"
    return matches[0]


@pytest.mark.parametrize("name", ["base", *OVERLAYS])
def test_settings_name_real_services_and_ports(rendered: dict[str, list[Doc]], name: str) -> None:
    docs = rendered[name]
    settings = config(docs)
    services = _services(docs)

    database = urlsplit(settings["ARENA_DATABASE_URL"])
    assert database.scheme == "postgresql+psycopg"
    assert database.password is None  # the password comes from the Secret, as PGPASSWORD
    _port(services[database.hostname or ""], database.port or 0)
    postgres = find(docs, "StatefulSet", "postgres")["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e.get("value") for e in postgres["env"]}
    assert env["POSTGRES_USER"] == database.username
    assert env["POSTGRES_DB"] == database.path.lstrip("/")

    broker = urlsplit(settings["ARENA_BROKER_URL"])
    assert broker.scheme == "redis"
    _port(services[broker.hostname or ""], broker.port or 0)

    host, port = settings["ARENA_REFEREE"].rsplit(":", 1)
    assert _port(services[host], int(port))["targetPort"] == "grpc"


@pytest.mark.parametrize("name", ["base", *OVERLAYS])
def test_settings_are_arena_variables_the_code_reads(
    rendered: dict[str, list[Doc]], name: str
) -> None:
    sources = "\n".join(
        path.read_text()
        for folder in ("arena_cli", "workers", "referee", "ladder", "ladder/web")
        for path in (ROOT / folder).glob("*.py")
    )
    for key in config(rendered[name]):
        assert key.startswith("ARENA_"), key
        assert f'"{key.removeprefix("ARENA_")}"' in sources, f"nothing reads {key}"


@pytest.mark.parametrize("name", ["base", *OVERLAYS])
def test_services_select_pods_with_the_named_ports(
    rendered: dict[str, list[Doc]], name: str
) -> None:
    docs = rendered[name]
    templates = [
        (d["spec"]["template"]["metadata"]["labels"], d["spec"]["template"]["spec"])
        for d in docs
        if d["kind"] in ("Deployment", "StatefulSet")
    ]
    for service in _services(docs).values():
        selector = service["spec"]["selector"]
        chosen = [spec for labels, spec in templates if selector.items() <= labels.items()]
        assert chosen, f"service {service['metadata']['name']} selects no pods"
        names = {p.get("name") for spec in chosen for c in spec["containers"] for p in c["ports"]}
        for port in service["spec"]["ports"]:
            assert port["targetPort"] in names, (service["metadata"]["name"], port)
    for workload in ("postgres", "redis"):
        statefulset = find(docs, "StatefulSet", workload)
        assert statefulset["spec"]["serviceName"] in _services(docs)
        assert statefulset["spec"]["volumeClaimTemplates"]


@pytest.mark.parametrize("name", ["base", *OVERLAYS])
def test_scrape_annotations_point_at_the_metrics_ports(
    rendered: dict[str, list[Doc]], name: str
) -> None:
    docs = rendered[name]
    settings = config(docs)
    ports = {**{k: settings[v] for k, v in SCRAPED.items()}, "web": settings["ARENA_WEB_PORT"]}
    for workload, port in ports.items():
        template = find(docs, "Deployment", workload)["spec"]["template"]
        annotations = template["metadata"]["annotations"]
        assert annotations["prometheus.io/scrape"] == "true"
        assert annotations["prometheus.io/port"] == port
        assert annotations["prometheus.io/path"] == "/metrics"
        declared = {str(p["containerPort"]) for p in template["spec"]["containers"][0]["ports"]}
        assert port in declared
        assert template["metadata"]["labels"]["app.kubernetes.io/part-of"] == "card-arena"


# monitoring -------------------------------------------------------------------


def test_prometheus_scrape_config_reads_the_pod_annotations() -> None:
    scrape = _yaml().safe_load((K8S / "monitoring" / "prometheus.yml").read_text())
    (job,) = scrape["scrape_configs"]
    assert job["kubernetes_sd_configs"] == [{"role": "pod"}]
    sources = {label for rule in job["relabel_configs"] for label in rule["source_labels"]}
    for annotation in ("scrape", "port", "path"):
        assert f"__meta_kubernetes_pod_annotation_prometheus_io_{annotation}" in sources
    assert "__meta_kubernetes_pod_label_app_kubernetes_io_part_of" in sources
    targets = {rule.get("target_label") for rule in job["relabel_configs"]}
    assert {"__address__", "__metrics_path__", "namespace", "pod"} <= targets


def test_monitoring_config_maps_are_rendered(rendered: dict[str, list[Doc]]) -> None:
    dashboard = find(rendered["prod"], "ConfigMap", "arena-grafana-dashboard")
    assert dashboard["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert json.loads(dashboard["data"]["card-arena.json"]) == load_dashboard()
    scrape = find(rendered["prod"], "ConfigMap", "arena-prometheus-scrape")
    assert scrape["data"]["prometheus.yml"] == (K8S / "monitoring" / "prometheus.yml").read_text()


def test_dashboard_panels_query_known_metrics() -> None:
    dashboard = load_dashboard()
    assert dashboard["uid"] == "card-arena"
    ids = [panel["id"] for panel in panels(dashboard)]
    assert len(ids) == len(set(ids))
    for panel in panels(dashboard):
        if panel["type"] == "row":
            continue
        assert panel["targets"], panel["title"]
        assert panel["datasource"]["uid"] == "${datasource}", panel["title"]
        for target in panel["targets"]:
            names = metric_names(target["expr"])
            assert names, (panel["title"], target["expr"])
            assert names <= DASHBOARD_METRICS, (panel["title"], names - DASHBOARD_METRICS)
            assert '{namespace=~"$namespace"}' in target["expr"], target["expr"]
    assert dashboard_metric_names() <= DASHBOARD_METRICS


def test_dashboard_has_a_panel_for_every_metric() -> None:
    queried = set().union(*(metric_names(expr) for expr in exprs(load_dashboard())))
    assert queried == DASHBOARD_METRICS, DASHBOARD_METRICS - queried


def test_histograms_are_charted_as_p50_and_p99() -> None:
    quantiles: dict[str, set[str]] = {}
    for expr in exprs(load_dashboard()):
        for q, name in re.findall(r"histogram_quantile\((0\.\d+),.*?(\w+_bucket)", expr):
            quantiles.setdefault(name, set()).add(q)
    buckets = {name for name in DASHBOARD_METRICS if name.endswith("_bucket")}
    assert quantiles == {name: {"0.5", "0.99"} for name in buckets}


def _exported_by_the_code() -> set[str]:
    """The chartable sample name of every metric the referee, workers and web app register."""
    from prometheus_client import CollectorRegistry

    from ladder.web.metrics import WebMetrics
    from referee.metrics import RefereeMetrics
    from workers.metrics import WorkerMetrics

    registries: list[CollectorRegistry] = [
        RefereeMetrics.create().registry,
        WorkerMetrics().registry,
        WebMetrics.create().registry,
    ]
    chartable = {"counter": "_total", "gauge": "", "histogram": "_bucket"}
    names = set()
    for registry in registries:
        for family in registry.collect():
            names.add(family.name + chartable[family.type])
    return names


def test_the_metric_list_is_what_the_code_exports() -> None:
    assert _exported_by_the_code() == DASHBOARD_METRICS


def test_an_arena_exposes_every_metric_the_dashboard_queries() -> None:
    """The cross-check the lead runs against live pods, here on fresh registries."""
    from prometheus_client import generate_latest

    from ladder.web.metrics import WebMetrics
    from referee.metrics import RefereeMetrics
    from workers.metrics import WorkerMetrics

    pages = "\n".join(
        generate_latest(registry).decode()  # no sample observed: # TYPE lines only
        for registry in (
            RefereeMetrics.create().registry,
            WorkerMetrics().registry,
            WebMetrics.create().registry,
        )
    )
    assert dashboard_metric_names() <= exported_metric_names(pages)


# the image --------------------------------------------------------------------


def test_dockerfile_builds_one_non_root_image_for_every_role() -> None:
    text = (ROOT / "Dockerfile").read_text()
    froms = re.findall(r"^FROM\s+(\S+)", text, re.M)
    assert froms and all(f.startswith(("${PYTHON_IMAGE}", "python:3.11-slim")) for f in froms)
    assert "ARG PYTHON_IMAGE=python:3.11-slim" in text
    (user,) = re.findall(r"^USER\s+(\S+)", text, re.M)
    assert user.split(":")[0].isdigit() and user.split(":")[0] != "0"
    assert re.search(r'^ENTRYPOINT \["arena"\]$', text, re.M)
    assert "pip install '.[server]'" in text  # every role needs the server extra
    ignore = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert ignore[0] == "*" and "!pyproject.toml" in ignore  # an allow-list
    packages = re.search(r"include = \[([^\]]*)\]", (ROOT / "pyproject.toml").read_text())
    assert packages is not None
    for package in re.findall(r'"(\w+)\*"', packages.group(1)):
        assert f"!{package}/" in ignore, f".dockerignore leaves out {package}"
