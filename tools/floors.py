"""The lowest versions pyproject.toml allows the server install, as pip constraints.

    python tools/floors.py > floors.txt
    pip install -c floors.txt '.[server]'

Each `>=` floor of the base dependencies and of the `server` extra becomes `==` (an
extra's brackets dropped, as constraints take none; a marker kept): `make smoke`
installs and checks that, so a floor that does not install or import on this Python
fails here rather than on a user's machine that has older packages.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

FLOOR = re.compile(r"^\s*([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?\s*>=\s*([^,;\s]+)\s*(;.*)?$")


def floors(pyproject: Path) -> list[str]:
    """`name==version[; marker]` for each floored requirement of the server install."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    pins = []
    for requirement in [*project["dependencies"], *project["optional-dependencies"]["server"]]:
        found = FLOOR.match(requirement)
        if found is None:
            raise SystemExit(f"floors: {requirement!r} has no `>=` floor")
        name, version, marker = found.groups()
        pins.append(f"{name}=={version}{marker or ''}")
    return pins


def main() -> None:
    root = Path(__file__).resolve().parent.parent
    sys.stdout.write("".join(f"{pin}\n" for pin in floors(root / "pyproject.toml")))


if __name__ == "__main__":
    main()
