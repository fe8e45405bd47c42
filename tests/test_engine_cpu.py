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


def test_the_streaming_sinks_work_is_not_engine_cpu():
    """Streamed chunks go to the sink on a writer thread: a sink that spends 50 ms of
    CPU on every chunk (as converting and writing Parquet does, a little) adds nothing
    to `engine_cpu_s`, and it still receives every chunk, in order, before the run
    returns. (When the sink ran on the engine thread, each chunk's 50 ms counted.)"""
    from ccbench.engine import run_config

    config = load_spec(short(seed=3, duration="6s")).resolve()
    received: list[tuple[str, int, int]] = []

    def busy_sink(name: str, columns: dict) -> None:
        start = time.thread_time()
        while time.thread_time() - start < 0.05:
            pass
        rows = len(next(iter(columns.values())))
        received.append((name, rows, threading.get_ident()))

    plain = run_config(config)
    streamed = run_config(config, sink=busy_sink, chunk_rows=500)
    chunks = [r for r in received if r[0] == "sojourn"]
    assert len(chunks) >= 10
    assert {r[2] for r in received} != {threading.get_ident()}  # not the engine's (caller's) thread
    # Every row arrived: the chunks plus what the run returned equal the unstreamed table.
    rows = sum(r[1] for r in chunks) + len(streamed["tables"]["sojourn"]["time_ns"])
    assert rows == len(plain["tables"]["sojourn"]["time_ns"])
    assert streamed["engine_cpu_s"] < plain["engine_cpu_s"] + 0.5 * 0.05 * len(received)
