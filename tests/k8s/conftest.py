"""The k8s/ tree rendered once for all of its tests: base, dev and prod."""

from __future__ import annotations

import pytest

from tests.support.k8s import K8S, Doc, _copy_tree, _load_all, _render


@pytest.fixture(scope="package")
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
