"""The Kubernetes deployment (k8s/): settings that agree with the objects they name.

The settings name the ports, services and database that exist, and only
variables the code reads; services select pods with the ports they name; the
scrape annotations point at the metrics ports. Without kubectl these tests are
skipped, unless ARENA_REQUIRE_SERVICES=1, where they fail.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from tests.support.k8s import OVERLAYS, ROOT, Doc, _port, _services, config, find

SCRAPED = {"referee": "ARENA_REFEREE_METRICS_PORT", "worker": "ARENA_WORKER_METRICS_PORT"}


# settings agree with the objects they name --------------------------------------


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
