"""The analysis views added to reports: M-RR over a sweep (relative to the CUBIC-only
runs of each condition) with M-AVG-RR, recovery after bursts (M-DOS-REC for every
burst of a run), queueing delay from the engine's sojourn samples and FCT in sweep
tables."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from analysis_fixtures import fixture_run, fixture_sweep  # noqa: F401

import ccbench
from ccbench.metrics import (
    burst_recovery,
    burst_windows,
    elephant_flows,
    goodput_timeseries,
    relative_retransmissions_over_runs,
)
from ccbench.report import build_report
from ccbench.report.sections import relative_retransmissions_view
from ccbench.runset import open_results, run_metrics

# --------------------------------------------------------------------------- M-RR


def test_relative_retransmissions_over_runs_by_hand():
    runs = pd.DataFrame(
        {
            "cca": ["cubic", "cubic", "bbr1", "bbr1", "cubic", "bbr1"],
            "buffer": [1, 1, 1, 1, 2, 2],
            "retransmissions": [10.0, 30.0, 40.0, np.nan, 0.0, 5.0],
        }
    )
    rr = relative_retransmissions_over_runs(runs, is_reference=runs["cca"] == "cubic", condition=["buffer"])
    # buffer 1: reference mean 20 -> 0.5, 1.5, 2.0, NaN (failed run); buffer 2: reference 0 -> NaN
    assert rr.iloc[:3].tolist() == [0.5, 1.5, 2.0]
    assert all(math.isnan(x) for x in rr.iloc[3:])
    # no condition: one reference mean over all reference runs (40 / 3)
    rr_all = relative_retransmissions_over_runs(runs, is_reference=runs["cca"] == "cubic", condition=[])
    assert rr_all.iloc[2] == pytest.approx(40 / (40 / 3))


def test_rr_view_finds_the_reference_from_the_runs_ccas():
    t = pd.DataFrame(
        {
            "cca": ["cubic", "reno", "cubic", "reno"],
            "buffer_bdp": [0.5, 0.5, 2.0, 2.0],
            "retransmissions": [100.0, 50.0, 10.0, 30.0],
            "cca:cubic:mbps": [9.0, np.nan, 9.0, np.nan],
            "cca:reno:mbps": [np.nan, 9.0, np.nan, 9.0],
        }
    )
    rr, avg = relative_retransmissions_view(t, ["cca", "buffer_bdp"])
    assert rr.tolist() == [1.0, 0.5, 1.0, 3.0]
    got = dict(zip(avg["cca"], avg["Avg(RR)"], strict=True))
    assert got == {"cubic": 1.0, "reno": pytest.approx(1.75)}
    # no CCA axis, or no CUBIC-only run: no view
    assert relative_retransmissions_view(t, ["buffer_bdp"]) is None
    assert relative_retransmissions_view(t.assign(**{"cca:cubic:mbps": np.nan}), ["cca", "buffer_bdp"]) is None


@pytest.mark.engine
def test_sweep_report_shows_rr_delay_and_their_columns(tmp_path):
    base = {
        "experiment": {"name": "rr", "duration": "3s", "warmup": "1s", "seed": 3},
        "bottleneck": {"rate": "10Mbit", "delay": "2ms"},
        "senders": [{"name": "a", "rtt": "20ms"}],
    }
    for cca in ("cubic", "reno"):
        for buffer in ("0.5BDP", "2BDP"):
            spec = {**base, "bottleneck": {**base["bottleneck"], "buffer": buffer}, "flows": [{"cca": cca, "count": 2}]}
            ccbench.run(spec, tmp_path / "sw" / f"cca={cca}" / f"buffer={buffer}")
    rs = open_results(tmp_path / "sw")
    t = run_metrics(rs)
    assert t["delay_p50_ms"].notna().all() and (t["delay_p99_ms"] >= t["delay_p50_ms"]).all()
    html = build_report(tmp_path / "sw").read_text()
    assert "Relative retransmissions (M-RR, M-AVG-RR)" in html and "Avg(RR)" in html
    assert "median queueing delay" in html or "delay_p50_ms" in html


# --------------------------------------------------------------------------- bursts


def _ts(rates_mbps: list[float], flow_id: int) -> pd.DataFrame:
    """Samples every second of a flow delivering at the given rate in each second."""
    delivered = np.concatenate([[0], np.cumsum(np.asarray(rates_mbps) * 1e6 / 8)]).astype(np.int64)
    return pd.DataFrame(
        {
            "time_ns": np.arange(len(delivered), dtype=np.int64) * 1_000_000_000,
            "flow_id": flow_id,
            "delivered_bytes": delivered,
        }
    )


def test_burst_windows_merge_overlaps_and_skip_untimed_flows():
    flows = pd.DataFrame(
        {
            "flow_id": [0, 1, 2, 3],
            "stop_ns": [-1, 12, 15, 40],
            "start_ns": [0, 10, 11, 30],
            "end_ns": [50, 12, 15, 40],
        }
    )
    assert burst_windows(flows) == [(10, 15), (30, 40)]
    assert burst_windows(flows.iloc[:1]) == []


def test_burst_windows_include_scheduled_udp_bursts_and_udp_is_never_an_elephant():
    flows = pd.DataFrame(
        {
            "flow_id": [0, 1, 2],
            "cca": ["cubic", "udp", "reno"],
            "size_bytes": [-1, -1, -1],
            "stop_ns": [-1, -1, 25],
            "start_ns": [0, 0, 20],
            "end_ns": [50, 50, 25],
        }
    )
    engine_flows = [
        {"group": "bulk", "app": None},
        {
            "group": "dos",
            "app": {"kind": "udp", "bursts": [{"start_ns": 30, "end_ns": 40}, {"start_ns": 5, "end_ns": 8}]},
        },
    ]
    assert burst_windows(flows, engine_flows) == [(5, 8), (20, 25), (30, 40)]
    assert burst_windows(flows) == [(20, 25)]
    assert elephant_flows(flows)["flow_id"].tolist() == [0]


@pytest.mark.engine
def test_recovery_after_the_bursts_of_a_udp_dos_source(tmp_path):
    """A CUBIC elephant beside a UDP source with two scheduled bursts (docs/traffic.md):
    both bursts are found, the elephant loses goodput during each and recovers."""
    spec = {
        "experiment": {"name": "dos", "duration": "14s", "warmup": "1s", "seed": 1},
        "bottleneck": {"rate": "20Mbit", "buffer": "1BDP"},
        "senders": [{"name": "s", "rtt": "20ms"}],
        "flows": [
            {"name": "bulk", "cca": "cubic"},
            {
                "name": "dos",
                "transport": "udp",
                "bursts": [
                    {"at": "4s", "duration": "2s", "rate": "15Mbit"},
                    {"at": "9s", "duration": "1s", "rate": "10Mbit"},
                ],
            },
        ],
    }
    res = ccbench.run(spec)
    rec = burst_recovery(
        res.flows,
        res.flow_ts,
        duration_ns=int(res.engine_config["duration_ns"]),
        window_ns=1_000_000_000,
        engine_flows=res.engine_config["flows"],
    )
    assert [(r.start_ns, r.end_ns) for r in rec.itertuples()] == [
        (4_000_000_000, 6_000_000_000),
        (9_000_000_000, 10_000_000_000),
    ]
    assert (rec["pre_bps"] > 15e6).all()  # the elephant had most of the link before each burst
    assert rec["recovered"].all()
    ts = goodput_timeseries(res.flow_ts[res.flow_ts["flow_id"] == 0], 1_000_000_000)
    during = ts[(ts["time_ns"] > 4_000_000_000) & (ts["time_ns"] <= 6_000_000_000)]["goodput_bps"]
    assert during.mean() < 0.6 * rec["pre_bps"].iloc[0]  # a 15 of 20 Mbit/s burst halves it at least


def test_burst_recovery_by_hand():
    """Elephant at 10 Mbit/s for 10 s, 2 Mbit/s during the burst [10 s, 12 s], then
    5, 8, 10, 10, ... With a 2-s moving average over bins after the burst, 90 % of the
    pre-burst 10 Mbit/s (9) is first reached at the bin ending at 15 s (mean of 8 and
    10): recovery 3 s after the burst's end."""
    rates = [10.0] * 10 + [2.0, 2.0, 5.0, 8.0, 10.0, 10.0, 10.0, 10.0]
    flows = pd.DataFrame(
        {
            "flow_id": [0, 1],
            "size_bytes": [-1, -1],
            "stop_ns": [-1, 12_000_000_000],
            "start_ns": [0, 10_000_000_000],
            "end_ns": [18_000_000_000, 12_000_000_000],
            "group": ["elephant", "burst"],
        }
    )
    ts = pd.concat([_ts(rates, 0), _ts([0.0] * 18, 1)])
    rec = burst_recovery(flows, ts, duration_ns=18_000_000_000, window_ns=2_000_000_000)
    assert len(rec) == 1
    r = rec.iloc[0]
    assert (r.start_ns, r.end_ns) == (10_000_000_000, 12_000_000_000)
    assert r.pre_bps == pytest.approx(10e6) and bool(r.recovered) and r.recovery_s == pytest.approx(3.0)
    # censored when the elephant never gets back within the run
    low = pd.concat([_ts([10.0] * 10 + [2.0] * 8, 0), _ts([0.0] * 18, 1)])
    r = burst_recovery(flows, low, duration_ns=18_000_000_000, window_ns=2_000_000_000).iloc[0]
    assert not bool(r.recovered) and r.recovery_s == pytest.approx(6.0)
    # no burst: empty
    assert burst_recovery(flows.iloc[:1], ts, duration_ns=18_000_000_000).empty


@pytest.mark.engine
def test_run_report_shows_the_burst_recovery_and_sojourn_delay(fixture_run):  # noqa: F811
    html = build_report(fixture_run, fixture_run.parent / "views.html").read_text()
    assert "Recovery after bursts (M-DOS-REC)" in html and 'alt="burst-recovery"' in html
    assert "sojourn samples of the engine" in html
