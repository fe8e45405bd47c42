# ccbench developer commands. `make install` then `make test` on a fresh machine.
#
# Python packages go into a virtual environment, never into the system Python: the
# active one ($VIRTUAL_ENV) if there is one, else ./.venv (created with access to the
# system's site-packages, so distribution-packaged tools such as ruff and mypy are
# used as they are). `PY=python3 make install` installs into that interpreter instead,
# for a throw-away container where a venv buys nothing.
ifdef VIRTUAL_ENV
PY ?= $(VIRTUAL_ENV)/bin/python
else
PY ?= $(CURDIR)/.venv/bin/python
endif

.PHONY: install system-deps test lint lint-rust lint-python test-rust test-python test-slow golden bench

## Install everything: system packages for the linux backend (iperf3, iproute2, ethtool,
## iputils-ping), the Rust toolchain check, and the Python package with its engine built by maturin.
install: system-deps
	@if [ "$(PY)" = "$(CURDIR)/.venv/bin/python" ] && [ ! -x "$(PY)" ]; then \
	  echo "creating the virtual environment .venv"; python3 -m venv --system-site-packages "$(CURDIR)/.venv"; fi
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -e ".[test]"
	@if [ "$(PY)" = "$(CURDIR)/.venv/bin/python" ]; then \
	  echo "ccbench is installed in .venv: run '. .venv/bin/activate' to put 'ccbench' on your PATH"; fi

LINUX_BACKEND_TOOLS = iperf3 ip tc ss ethtool ping setpriv
LINUX_BACKEND_PACKAGES = iperf3 iproute2 ethtool iputils-ping util-linux

system-deps:
	@command -v cargo >/dev/null || { echo "cargo (Rust) is required: https://rustup.rs"; exit 1; }
	@missing=""; for t in $(LINUX_BACKEND_TOOLS); do command -v $$t >/dev/null || missing="$$missing $$t"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(LINUX_BACKEND_PACKAGES); \
	  else echo "note: missing$$missing; the linux backend will be unavailable (as root: apt-get install $(LINUX_BACKEND_PACKAGES))"; fi; \
	fi
	@command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } || echo "note: chromium missing; the HTML report's browser test will fail (apt-get install chromium, or CCBENCH_SKIP_BROWSER=1)"

## The whole fast test suite: the lint gates, engine tests, then Python tests
## (slow/bench excluded).
test: lint test-rust test-python

## Gates that fail the suite: clippy with warnings as errors (also enforces
## clippy.toml's no-wall-clock rule), ruff, mypy over the package, and stubtest
## checking the engine stub `_core.pyi` against the compiled module.
lint: lint-rust lint-python

lint-rust:
	cargo clippy --workspace --all-targets --quiet -- -D warnings

lint-python:
	$(PY) -m ruff check --quiet .
	$(PY) -m mypy
	$(PY) -m mypy.stubtest ccbench._core

test-rust:
	cargo test --workspace --exclude ccsim-py

test-python:
	$(PY) -m pytest -q

## Rewrite the golden summaries of the shipped specs (tests/golden/) after an intended
## behaviour change; review the diff before committing it.
golden:
	CCBENCH_UPDATE_GOLDEN=1 $(PY) -m pytest -q tests/test_golden.py

## Long studies, on demand.
test-slow:
	PROPTEST_CASES=1000 cargo test --release -p ccsim --test cc_properties
	$(PY) -m pytest -q -m slow

## Speed benchmark against ns-3 (see docs/benchmarks.md); writes its table into that file.
bench:
	PATH="$(dir $(PY)):$$PATH" WRITE=docs/benchmarks.md bash benchmarks/run.sh bench-out a c reno100 reno1000 reno5000 corescale
