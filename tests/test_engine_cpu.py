"""The engine's cost figures in the manifest (issue 18): `engine_cpu_s` is the
simulating thread's own CPU time, and `engine_events_per_pkt` matches the stats."""

from __future__ import annotations

import copy
import threading
import time
from pathlib import Path

import pytest

import ccbench
from ccbench.spec import load_spec

pytestmark = pytest.mark.engine

QUICKSTART = Path(__file__).resolve().parent.parent / "specs" / "quickstart.toml"


def short(seed: int, duration: str) -> dict:
    d = copy.deepcopy(load_spec(QUICKSTART).to_dict())
    d["experiment"].update(duration=duration, warmup="1s", seed=seed)
    return d


def test_engine_cpu_is_the_simulating_threads_own():
    """Two runs in parallel threads: each reports its own thread's CPU time, so the
    two figures add up to at most the process's CPU time over both (the process's
    CPU time, measured around each run, would count both runs in each figure)."""
    results: list = [None, None]

    def one(i: int) -> None:
        results[i] = ccbench.run(short(seed=1 + i, duration="8s"))

    cpu0 = time.process_time()
    threads = [threading.Thread(target=one, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    process_cpu = time.process_time() - cpu0
    figures = [r.manifest["engine_cpu_s"] for r in results]
    assert all(f > 0 for f in figures)
    assert sum(figures) <= process_cpu


def test_events_per_packet_in_the_manifest():
    m = ccbench.run(short(seed=1, duration="3s")).manifest
    s = m["stats"]
    assert m["engine_events_per_pkt"] == round(s["events_processed"] / s["data_pkts_delivered"], 3)
    assert 1 < m["engine_events_per_pkt"] < 20
