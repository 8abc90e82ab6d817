"""The Kubernetes deployment (k8s/): kustomize renders, the schemas accept, the image.

Each overlay is rendered with `kubectl kustomize` and every object is
validated offline against the Kubernetes OpenAPI schemas of KUBERNETES_VERSION
shipped by the kubernetes-validate package, strictly (no unknown fields); prod
needs its secrets. One image, non-root, serves every role. Without kubectl or
kubernetes-validate these tests are skipped, unless ARENA_REQUIRE_SERVICES=1,
where they fail.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.support.k8s import (
    K8S,
    OVERLAYS,
    ROOT,
    Doc,
    _copy_tree,
    _render,
    find,
    find_prefixed,
)
from tests.support.services import service_missing

KUBERNETES_VERSION = "1.31.0"

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
