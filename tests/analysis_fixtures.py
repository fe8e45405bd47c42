"""Small real runs and a small sweep (with one failed run) for the plot, report and
compare tests. Built with the engine; a few seconds of simulation each."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

import ccbench

RUN_SPEC: dict[str, Any] = {
    "experiment": {"name": "fixture", "duration": "6s", "warmup": "1s", "seed": 1, "sample_interval": "100ms"},
    "bottleneck": {"rate": "20Mbit", "delay": "2ms", "buffer": "1BDP"},
    "senders": [{"name": "bbr-host", "rtt": "40ms"}, {"name": "cubic-host", "rtt": "40ms"}],
    "flows": [
        {"name": "bbr", "sender": "bbr-host", "cca": "bbr1"},
        {"name": "cubic", "sender": "cubic-host", "cca": "cubic", "start": "1s"},
        {
            "name": "short",
            "sender": "cubic-host",
            "cca": "cubic",
            "count": 6,
            "size": "60KB",
            "start": "2s",
            "start_jitter": "2s",
        },
        # a burst (a flow with a stop time) for the recovery view
        {"name": "burst", "sender": "cubic-host", "cca": "cubic", "start": "3s", "stop": "4s"},
    ],
}


def make_run(out: Path, **changes: Any) -> Path:
    spec = copy.deepcopy(RUN_SPEC)
    for dotted, value in changes.items():
        section, key = dotted.split(".")
        spec[section][key] = value
    ccbench.run(spec, out)
    return out


def make_sweep(root: Path) -> Path:
    """2 buffers × 2 rates, plus one failed run."""
    for buffer in ("0.5BDP", "2BDP"):
        for rate in ("10Mbit", "20Mbit"):
            make_run(
                root / f"buffer={buffer}" / f"rate={rate}", **{"bottleneck.buffer": buffer, "bottleneck.rate": rate}
            )
    bad = root / "buffer=8BDP" / "rate=20Mbit"
    bad.mkdir(parents=True)
    (bad / "error.json").write_text(json.dumps({"error": "engine error: simulated failure for the fixture"}))
    return root


@pytest.fixture(scope="session")
def fixture_run(tmp_path_factory) -> Path:
    return make_run(tmp_path_factory.mktemp("analysis") / "run")


@pytest.fixture(scope="session")
def fixture_sweep(tmp_path_factory) -> Path:
    return make_sweep(tmp_path_factory.mktemp("analysis") / "sweep")


STORE_SWEEP_TOML = """
[sweep]
name = "store-fixture"
seed = 7
repetitions = 2

[sweep.grid]
cca = ["cubic", "bbr1"]
k = [0.5, 2, 4]

[sweep.derived]
"flows[*].cca" = "{cca}"
"bottleneck.buffer" = "{k}BDP"
# k = 4 gets a negative delay: those runs fail and are recorded under failed/
"bottleneck.delay" = "{'5ms' if k < 4 else '-1ms'}"

[experiment]
name = "store-fixture"
duration = "4s"
warmup = "1s"

[bottleneck]
rate = "10Mbit"
delay = "5ms"

[[senders]]
name = "left"
rtt = "40ms"

[[flows]]
name = "first"
cca = "cubic"

[[flows]]
name = "second"
cca = "cubic"
start = "1s"
"""


@pytest.fixture(scope="session")
def store_sweep(tmp_path_factory) -> Path:
    """A sweep written by `ccbench.sweep` (the sweep store: sweep.json, index.parquet,
    runs/<id>/, failed/<id>.json): 2 CCAs x 3 buffers x 2 repetitions, the 4 runs
    with k = 4 failing."""
    d = tmp_path_factory.mktemp("store")
    spec = d / "sweep.toml"
    spec.write_text(STORE_SWEEP_TOML)
    ccbench.sweep(spec, d / "sweep", workers=1)
    return d / "sweep"
