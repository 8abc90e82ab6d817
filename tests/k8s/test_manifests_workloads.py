"""The Kubernetes deployment (k8s/): the workloads' resources, counts, namespaces and images.

Requests and limits everywhere; the arena's pods non-root on its image;
disruption budgets and the workers' autoscaler; dev small, prod bigger, each in
its namespace, prod's images pinned. Without kubectl these tests are skipped,
unless ARENA_REQUIRE_SERVICES=1, where they fail.
"""

from __future__ import annotations

import pytest

from tests.support.k8s import OVERLAYS, Doc, containers, find, pod_specs

NAMESPACES = {"dev": "card-arena-dev", "prod": "card-arena"}
APP_WORKLOADS = ("referee", "worker", "beat", "web")


@pytest.mark.parametrize("name", ["base", *OVERLAYS])
def test_every_container_has_requests_and_limits(rendered: dict[str, list[Doc]], name: str) -> None:
    for doc, spec in pod_specs(rendered[name]):
        for container in containers(spec):
            where = f"{doc['kind']}/{doc['metadata']['name']} {container['name']}"
            resources = container.get("resources", {})
            for kind in ("requests", "limits"):
                assert {"cpu", "memory"} <= set(resources.get(kind, {})), f"{where}: {kind}"


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
