#!/usr/bin/env bash
# `make smoke`: install the project as production does and check that `arena` starts.
#
# The Dockerfile runs a plain `pip install .` (no -e, no extras) on the files
# .dockerignore lets in; this does the same into a new virtualenv, so a runtime
# import that only the dev tools bring in, or a package the image leaves out,
# fails here. The checks run with that virtualenv's Python (tools/smoke_checks.py).
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
# Nothing from the dev setup may leak into the plain install.
unset PYTHONPATH VIRTUAL_ENV

work=$(mktemp -d "${TMPDIR:-/tmp}/arena-smoke.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The Docker build context: the paths .dockerignore lets in ("!path"), less its
# "**/pattern" exclusions (applied after every copy, as the last matching rule wins).
context=$work/context
mkdir "$context"
sed -n 's|^!\(.*\)|\1|p' .dockerignore | while read -r path; do
  cp -R "${path%/}" "$context/"
done
sed -n 's|^\*\*/\(.*\)|\1|p' .dockerignore | while read -r pattern; do
  find "$context" -name "$pattern" -prune -exec rm -rf {} +
done

"$python" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --upgrade "pip>=23"
"$work/venv/bin/python" -m pip install --quiet "$context"
# -I: only the plain virtualenv's packages are importable (no script folder, no PYTHON* variables).
"$work/venv/bin/python" -I tools/smoke_checks.py "$work"
