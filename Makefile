# Card Arena. `make test` is the whole suite; `make demo` runs the main job.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test test-loaded lint typecheck imports buf proto-release pytest smoke demo example-node bench clean proto

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade "pip>=23"
	$(BIN)/python -m pip install --quiet -e '.[server,dev]'
	touch $(STAMP)

# The smoke test (mostly waiting on pip) runs beside pytest, its output kept in
# .venv/smoke.log and shown when both are done; pytest's summary closes the output.
test: lint typecheck imports buf
	@PYTHON=$(PYTHON) bash tools/smoke_install.sh > $(VENV)/smoke.log 2>&1 & smoke=$$!; \
	$(MAKE) --no-print-directory pytest; tests=$$?; \
	wait $$smoke; smoked=$$?; \
	if [ $$smoked -ne 0 ]; then cat $(VENV)/smoke.log; else grep '^smoke:' $(VENV)/smoke.log; fi; \
	echo "smoke: $$([ $$smoked -eq 0 ] && echo passed || echo FAILED), pytest: $$([ $$tests -eq 0 ] && echo passed || echo FAILED)"; \
	[ $$smoked -eq 0 ] && [ $$tests -eq 0 ]

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

imports: $(STAMP)
	$(BIN)/lint-imports

# The protocol's checks with buf (from npm, pinned by tools/buf/package-lock.json): lint
# (buf.yaml), and no breaking change against the last release's protocol, kept as a buf
# image in tools/buf/release.json (`make proto-release` moves it to proto/ as it is now).
BUF := tools/buf/node_modules/.bin/buf
$(BUF): tools/buf/package-lock.json
	npm ci --prefix tools/buf --no-audit --no-fund --loglevel=error
	touch $(BUF)

buf: $(BUF)
	$(BUF) lint
	$(BUF) breaking --against tools/buf/release.json

proto-release: $(BUF)
	$(BUF) build --exclude-source-info -o tools/buf/release.json

# pytest exits 5 when it collects no test; make fails on any non-zero status. Two
# processes (pytest-xdist), one test file each at a time: a file's module fixtures (a
# referee, a browser) are made once, and every test has its own ports, folders, Redis
# servers or claimed database numbers and PostgreSQL schemas.
PYTEST_PROCESSES ?= 2
pytest: $(STAMP)
	$(BIN)/pytest -n $(PYTEST_PROCESSES) --dist loadfile

# The fault and end-to-end tests 5 times in a row with one core kept busy by a CPU burner
# (tools/loaded.py): what holds only on an idle machine fails here.
test-loaded: $(STAMP)
	$(BIN)/python -m tools.loaded --times 5 --cores 1

# A plain `pip install .` (no -e, no extras) into a new virtualenv, from the files the
# Docker build gets, then `arena --help`, `arena play` and a referee run from it: a
# runtime import that only the dev tools bring in fails here (tools/smoke_install.sh).
smoke:
	PYTHON=$(PYTHON) bash tools/smoke_install.sh

demo: $(STAMP)
	$(BIN)/arena demo

# The Node.js starter bot (examples/node) in one goodge match against three rules bots,
# on a referee of its own (REFEREE=host:port for a running one); prints the match JSON.
example-node: $(STAMP)
	$(BIN)/python -m tools.example_node $(if $(REFEREE),--referee $(REFEREE))

bench: $(STAMP)
	$(BIN)/python bench/engines.py

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .hypothesis

# Regenerate the protocol modules from proto/ (a test fails when they are stale).
proto: $(STAMP)
	$(BIN)/python -m tools.protogen
