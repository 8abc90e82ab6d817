"""The committed protocol modules are exactly what `make proto` generates."""

from __future__ import annotations

from pathlib import Path

from tools import protogen


def test_generated_modules_are_fresh(tmp_path: Path) -> None:
    fresh = protogen.generate(tmp_path)
    assert fresh, "protoc generated nothing"
    for path in fresh:
        committed = protogen.ROOT / path.relative_to(tmp_path)
        assert committed.exists(), f"{committed.name} is not committed: run make proto"
        assert committed.read_bytes() == path.read_bytes(), (
            f"{committed.name} is stale: run make proto"
        )
    committed_names = {p.name for p in (protogen.ROOT / protogen.PACKAGE).glob("*_pb2*")}
    assert committed_names == {p.name for p in fresh}, "extra generated files are committed"
