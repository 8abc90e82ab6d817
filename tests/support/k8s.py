"""The k8s/ tree rendered with `kubectl kustomize`, and the objects looked up in a rendering.

Shared by the tests of tests/k8s/: without kubectl or PyYAML they are skipped,
unless ARENA_REQUIRE_SERVICES=1, where they fail.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.support.services import service_missing

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "k8s"
OVERLAYS = ("dev", "prod")

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


# finding objects --------------------------------------------------------------


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


def _services(docs: list[Doc]) -> dict[str, Doc]:
    return {d["metadata"]["name"]: d for d in docs if d["kind"] == "Service"}


def _port(service: Doc, number: int) -> Doc:
    matches = [p for p in service["spec"]["ports"] if p["port"] == number]
    assert matches, f"service {service['metadata']['name']} has no port {number}"
    return matches[0]
