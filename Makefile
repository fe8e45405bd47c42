# ccbench developer commands. `make install` then `make test` on a fresh machine.
PY ?= python3

.PHONY: install system-deps test test-rust test-python test-slow bench

## Install everything: system packages for the linux backend (iperf3, iproute2),
## the Rust toolchain check, and the Python package with its engine built by maturin.
install: system-deps
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -e ".[test]"

system-deps:
	@command -v cargo >/dev/null || { echo "cargo (Rust) is required: https://rustup.rs"; exit 1; }
	@if ! command -v iperf3 >/dev/null || ! command -v ip >/dev/null || ! command -v tc >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iperf3 iproute2; \
	  else echo "note: iperf3/iproute2 missing; the linux backend will be unavailable (install them as root)"; fi; \
	fi

## The whole fast test suite: engine tests, then Python tests (slow/bench excluded).
test: test-rust test-python

test-rust:
	cargo test --workspace --exclude ccsim-py

test-python:
	$(PY) -m pytest -q

## Long studies, on demand.
test-slow:
	$(PY) -m pytest -q -m slow

## Speed benchmark against ns-3 (see docs/benchmarks.md).
bench:
	bash benchmarks/run.sh
