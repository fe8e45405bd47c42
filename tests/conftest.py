from __future__ import annotations

import copy
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
if str(ROOT / "python") not in sys.path:
    sys.path.insert(0, str(ROOT / "python"))

from fakes import FAKE_CCAS  # noqa: E402

from ccbench.engine import engine_available  # noqa: E402

SPECS = ROOT / "specs"

# A shell without job control starts background commands (`make test &`, `nohup ... &`)
# with SIGINT ignored, and an ignored signal is inherited across exec: every process the
# tests start would then ignore the Ctrl-C they send it (Python installs its
# KeyboardInterrupt handler only when SIGINT is not ignored at start-up). Give the test
# session, and so its children, the ordinary disposition.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

BASE_SPEC: dict[str, Any] = {
    "experiment": {"name": "t", "duration": "10s", "warmup": "2s", "seed": 3},
    "bottleneck": {"rate": "100Mbit", "delay": "5ms", "buffer": "1BDP"},
    "senders": [{"name": "a", "rtt": "100ms"}, {"name": "b", "rtt": "40ms"}],
    "flows": [
        {"name": "c", "sender": "a", "cca": "cubic", "count": 2, "start": "0s", "params": {"beta": 700}},
        {"sender": "b", "cca": "reno", "start": "1s", "stop": "8s", "size": "10MB"},
    ],
}


@pytest.fixture
def base_spec() -> dict[str, Any]:
    return copy.deepcopy(BASE_SPEC)


@pytest.fixture(scope="session")
def ccas():
    return FAKE_CCAS


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if engine_available():
        return
    if os.environ.get("CCBENCH_REQUIRE_ENGINE") == "1":
        return  # let them fail loudly
    skip = pytest.mark.skip(reason="the engine ccbench._core is not built (make install)")
    for item in items:
        if "engine" in item.keywords:
            item.add_marker(skip)
