"""Generate the Python protobuf and gRPC modules from proto/ (`make proto`).

The modules land in `cardarena_api/v1/` at the project root; the folder
tree under proto/ mirrors that package, so generated imports resolve.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from grpc_tools import protoc

ROOT = Path(__file__).resolve().parent.parent
PROTO = ROOT / "proto"
PACKAGE = Path("cardarena_api") / "v1"


def sources() -> list[Path]:
    """The .proto files, relative to proto/."""
    return sorted(path.relative_to(PROTO) for path in (PROTO / PACKAGE).glob("*.proto"))


def generate(out: Path) -> list[Path]:
    """Write the generated modules under `out`; returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    # mypy-protobuf's plugins write the typed stubs (.pyi) of messages and services.
    bin_dir = Path(sys.executable).parent
    plugins = []
    for name in ("protoc-gen-mypy", "protoc-gen-mypy_grpc"):
        found = shutil.which(name, path=str(bin_dir)) or shutil.which(name)
        if found is None:
            raise RuntimeError(f"{name} not found: install the dev extras (mypy-protobuf)")
        plugins.append(f"--plugin={name}={found}")
    args = [
        "grpc_tools.protoc",
        f"-I{PROTO}",
        f"-I{Path(protoc.__file__).parent / '_proto'}",
        *plugins,
        f"--python_out={out}",
        f"--mypy_out={out}",
        f"--grpc_python_out={out}",
        f"--mypy_grpc_out={out}",
        *(str(path) for path in sources()),
    ]
    if protoc.main(args) != 0:
        raise RuntimeError("protoc failed: see its messages above")
    return sorted(path for path in (out / PACKAGE).iterdir() if "_pb2" in path.name)


def main() -> int:
    """Regenerate in place."""
    for path in generate(ROOT):
        print(path.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
