#!/usr/bin/env bash
# `make smoke`: install the project as production and as a bot author do, and check both;
# then production again at the lowest versions pyproject.toml allows.
#
# The Dockerfile runs `pip install '.[server]'` (no -e, no dev tools) on the files
# .dockerignore lets in; this does the same into a new virtualenv, so a runtime
# import that only the dev tools bring in, or a package the image leaves out,
# fails here. Then a plain `pip install .` (the base: engines, protocol, bot SDK) into
# another, whose bots play on the first one's referee. The checks run with each
# virtualenv's own Python (tools/smoke_checks.py).
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

# The server install (what the image runs) and the base install (a bot author's), each in
# a new virtualenv. -I: only that virtualenv's packages are importable (no script folder, no
# PYTHON* variables).
"$python" -m venv "$work/server"
"$work/server/bin/python" -m pip install --quiet --upgrade "pip>=23"
"$work/server/bin/python" -m pip install --quiet "$context[server]"
"$work/server/bin/python" -I tools/smoke_checks.py server "$work"
"$python" -m venv "$work/base"
"$work/base/bin/python" -m pip install --quiet --upgrade "pip>=23"
"$work/base/bin/python" -m pip install --quiet "$context"
"$work/base/bin/python" -I tools/smoke_checks.py base "$work" "$work/server/bin/arena"
# The server install again at the lowest versions pyproject.toml allows (tools/floors.py):
# a floor that does not install, or that the code does not import or start with, fails here.
mkdir "$work/floors-run"
"$python" tools/floors.py > "$work/floors.txt"
"$python" -m venv "$work/floors"
"$work/floors/bin/python" -m pip install --quiet --upgrade "pip>=23"
"$work/floors/bin/python" -m pip install --quiet -c "$work/floors.txt" "$context[server]"
"$work/floors/bin/python" -I tools/smoke_checks.py server "$work/floors-run"
echo "smoke: the server install at its floors ($(paste -sd' ' "$work/floors.txt" | cut -c1-60)...) imports and serves"
