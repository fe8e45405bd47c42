"""Issue 15's must-show at D4's data-centre size, in steady state (slow: about 10 CPU-
minutes; `pytest -m slow tests/test_aqm_d4_slow.py`): 90 NewReno flows on a 1 Gbit/s
link with D4's network (validation/aqm_ns3.py --setup d4: RTTs 40/220/400 us, starts
over 3 s, 900-packet buffer) and D4's AQM targets (2 ms), run 400 s and measured from
30 s. docs/validation.md, "CoDel in steady state", has the numbers and the reasons."""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path

import pytest

import ccbench

pytestmark = [pytest.mark.slow, pytest.mark.engine]

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("aqm_ns3", ROOT / "validation" / "aqm_ns3.py")
assert _spec and _spec.loader
aqm_ns3 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(aqm_ns3)

DURATION_S, WARMUP_S = 400, 30


def run(kind: str):
    args = argparse.Namespace(seed=1, duration=DURATION_S, warmup=WARMUP_S, host="ideal", red_burst="tc",
                              params="d4", setup="d4")
    r = ccbench.run(aqm_ns3.experiment("dc", kind, args))
    q = r.queue_ts[r.queue_ts.link == "bottleneck"].sort_values("time_ns")
    window = q[q.time_ns >= WARMUP_S * 10**9]
    return float(window.backlog_pkts.mean()), aqm_ns3.bins(q, 10)


def test_codel_and_pie_at_2ms_keep_the_mean_queue_below_droptails_in_steady_state():
    droptail, _ = run("pfifo")
    codel, codel_bins = run("codel")
    pie, _ = run("pie")
    assert droptail > 800, droptail  # the 900-packet queue stays full
    # PIE holds its 2 ms (about 167 packets at 1 Gbit/s).
    assert pie < 0.3 * droptail, (pie, droptail)
    # CoDel holds about half of drop-tail's queue on average, never its target: its
    # drop rate ramps by 1/(2 interval^2) per second in the dropping state, and each
    # brief exit restarts the ramp from the last cycle's drops (codel_impl.h's re-entry
    # rule), so the queue is a sawtooth between about 250 and 850 packets.
    assert codel < 0.6 * droptail, (codel, droptail)
    assert codel > 1.5 * pie, (codel, pie)
    rates = [b["aqm_drops_per_s"] for b in codel_bins if WARMUP_S <= b["t0_s"] < DURATION_S]
    collapses = sum(1 for a, b in zip(rates, rates[1:], strict=False) if b < 0.5 * a)
    assert collapses >= 2, rates
