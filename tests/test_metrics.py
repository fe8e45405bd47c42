import math

import numpy as np
import pandas as pd
import pytest
from fakes import fake_run
from hypothesis import assume, given
from hypothesis import strategies as st

from ccbench.metrics import (
    aggregate_goodput,
    capacity_bits,
    drop_ratio,
    flow_goodput,
    goodput_timeseries,
    jain_by_group,
    jain_index,
    occupancy,
    retransmission_pct,
    retransmissions,
    total_goodput,
    utilization,
)
from ccbench.results import RunResult, tables_from_engine
from ccbench.spec import Experiment

S = 10**9


def flows_table(rows):
    cols = [
        "flow_id",
        "sender_name",
        "group",
        "cca",
        "start_ns",
        "end_ns",
        "delivered_bytes",
        "delivered_bytes_at_warmup",
        "segs_retrans",
        "segs_delivered",
    ]
    return pd.DataFrame(rows, columns=cols)


# -- M-JFI


def test_jain_of_equal_flows_is_one():
    assert jain_index([5e6] * 7) == pytest.approx(1.0)


@pytest.mark.parametrize("n", [2, 3, 10, 1000])
def test_jain_of_one_hog_is_one_over_n(n):
    assert jain_index([1e8] + [0.0] * (n - 1)) == pytest.approx(1 / n)


def test_jain_worked_example():
    # (1+2+3)^2 / (3 * (1+4+9)) = 36/42
    assert jain_index([1, 2, 3]) == pytest.approx(36 / 42)


def test_jain_edge_cases():
    assert math.isnan(jain_index([]))
    assert math.isnan(jain_index([0.0, 0.0]))
    assert jain_index([1.0, float("nan"), 1.0]) == pytest.approx(1.0)  # inactive flows left out
    with pytest.raises(ValueError):
        jain_index([-1.0, 1.0])


@given(
    st.lists(st.floats(min_value=0, max_value=1e12, allow_nan=False), min_size=1, max_size=50),
    st.floats(min_value=1e-3, max_value=1e3),
)
def test_jain_bounds_and_scale_invariance(xs, k):
    j = jain_index(xs)
    if not any(xs):
        assert math.isnan(j)
        return
    assert 1 / len(xs) - 1e-9 <= j <= 1 + 1e-9
    assume(all(k * x > 0 for x in xs if x > 0))  # scaling a subnormal can underflow to 0
    assert jain_index([k * x for x in xs]) == pytest.approx(j, rel=1e-6)


def test_jain_by_group():
    df = pd.DataFrame({"group": ["a", "a", "b", "b"], "goodput_bps": [1.0, 1.0, 3.0, 0.0]})
    out = jain_by_group(df).set_index("group")
    assert out.loc["a", "jain"] == pytest.approx(1.0)
    assert out.loc["b", "jain"] == pytest.approx(0.5)
    assert out.loc["(all)", "jain"] == pytest.approx(25 / (4 * 11))
    assert out.loc["(all)", "n"] == 4


# -- M-TPUT


def test_flow_goodput_uses_the_measurement_window():
    flows = flows_table(
        [
            # whole run, 10 s warm-up of a 30 s run: 25 MB after warm-up over 20 s = 10 Mbit/s
            [0, "s", "g", "cubic", 1_000_000, 30 * S, 30_000_000, 5_000_000, 0, 0],
            # starts after the warm-up at 20 s: 5 MB over 10 s = 4 Mbit/s
            [1, "s", "g", "cubic", 20 * S, 30 * S, 5_000_000, 0, 0, 0],
            # finished (end_ns) before the warm-up: not active in the window
            [2, "s", "g", "reno", 0, 5 * S, 1_000_000, 1_000_000, 0, 0],
            # finite flow completed at 15 s: 2.5 MB over [10, 15] s = 4 Mbit/s
            [3, "t", "h", "reno", 0, 15 * S, 3_000_000, 500_000, 0, 0],
        ]
    )
    g = flow_goodput(flows, warmup_ns=10 * S)
    assert g["goodput_bps"].iloc[0] == pytest.approx(10e6)
    assert g["goodput_bps"].iloc[1] == pytest.approx(4e6)
    assert math.isnan(g["goodput_bps"].iloc[2])
    assert g["goodput_bps"].iloc[3] == pytest.approx(4e6)
    assert g["window_start_ns"].tolist() == [10 * S, 20 * S, 10 * S, 10 * S]
    # Aggregates count bytes in [warmup, duration] over the whole window (20 s).
    by_sender = aggregate_goodput(flows, warmup_ns=10 * S, duration_ns=30 * S, by="sender_name").set_index(
        "sender_name"
    )
    assert by_sender.loc["s", "goodput_bps"] == pytest.approx(30e6 * 8 / 20)
    assert by_sender.loc["t", "goodput_bps"] == pytest.approx(2.5e6 * 8 / 20)
    assert by_sender["share"].sum() == pytest.approx(1.0)
    assert by_sender.loc["s", "flows"] == 3
    by_cca = aggregate_goodput(flows, warmup_ns=10 * S, duration_ns=30 * S, by="cca").set_index("cca")
    assert by_cca.loc["reno", "bytes"] == 2_500_000
    assert total_goodput(flows, warmup_ns=10 * S, duration_ns=30 * S) == pytest.approx(32.5e6 * 8 / 20)


def test_goodput_timeseries_from_cumulative_samples():
    t = np.arange(0, 5) * 100_000_000
    ts = pd.DataFrame(
        {
            "time_ns": np.concatenate([t, t]),
            "flow_id": [0] * 5 + [1] * 5,
            "delivered_bytes": [0, 1250, 2500, 3750, 5000] + [0, 0, 0, 12500, 25000],
        }
    )
    out = goodput_timeseries(ts, 100_000_000)
    f0 = out[out.flow_id == 0]
    assert f0["time_ns"].tolist() == [100_000_000, 200_000_000, 300_000_000, 400_000_000]
    assert f0["goodput_bps"].tolist() == pytest.approx([100_000.0] * 4)
    f1 = goodput_timeseries(ts, 200_000_000)
    assert f1[f1.flow_id == 1]["goodput_bps"].tolist() == pytest.approx([0.0, 25000 * 8 / 0.2])


# -- M-PHI


def test_capacity_follows_the_rate_schedule():
    sched = [[10 * S, 50_000_000], [20 * S, 100_000_000]]
    assert capacity_bits(100_000_000, sched, 0, 30 * S) == pytest.approx((10 * 100 + 10 * 50 + 10 * 100) * 1e6)
    assert capacity_bits(100_000_000, sched, 15 * S, 25 * S) == pytest.approx((5 * 50 + 5 * 100) * 1e6)


def test_utilization_of_a_full_link_is_one():
    flows = flows_table([[0, "s", "g", "c", 0, 10 * S, 125_000_000, 0, 0, 0]])  # 1e9 bits in 10 s
    assert utilization(flows, warmup_ns=0, duration_ns=10 * S, rate_bps=100_000_000) == pytest.approx(1.0)
    assert utilization(flows, warmup_ns=0, duration_ns=10 * S, rate_bps=200_000_000) == pytest.approx(0.5)


# -- M-RETX, M-RETX-PCT


def test_retransmissions():
    flows = flows_table(
        [
            [0, "s", "g", "cubic", 0, S, 0, 0, 3, 100],
            [1, "s", "g", "reno", 0, S, 0, 0, 7, 300],
        ]
    )
    assert retransmissions(flows) == 10
    assert retransmissions(flows, by="cca").to_dict() == {"cubic": 3, "reno": 7}
    assert retransmission_pct(flows) == pytest.approx(2.5)
    assert math.isnan(retransmission_pct(flows.assign(segs_delivered=0)))


# -- M-QLEN, M-NQ, M-DROP


def queue_table():
    t = np.arange(0, 6) * S
    return pd.DataFrame(
        {
            "time_ns": np.concatenate([t, t]),
            "link": ["bottleneck"] * 6 + ["bottleneck_rev"] * 6,
            "backlog_pkts": [0, 10, 20, 30, 40, 50] + [1] * 6,
            "backlog_bytes": [0, 15000, 30000, 45000, 60000, 75000] + [52] * 6,
            "enqueued_pkts": [0, 100, 200, 300, 400, 500] + [0] * 6,
            "dropped_pkts": [0, 0, 10, 10, 20, 30] + [0] * 6,
        }
    )


def test_queue_occupancy_in_window():
    occ = occupancy(queue_table(), start_ns=2 * S, limit_packets=100)
    assert occ["samples"] == 4
    assert occ["mean_pkts"] == pytest.approx(35.0)
    assert occ["std_pkts"] == pytest.approx(np.std([20, 30, 40, 50]))
    assert occ["mean_bytes"] == pytest.approx(52500.0)
    assert occ["norm_mean"] == pytest.approx(0.35)
    assert occupancy(queue_table(), link="bottleneck_rev")["mean_pkts"] == 1.0


def test_drop_ratio_counts_arrivals_as_enqueued_plus_dropped():
    d = drop_ratio(queue_table(), start_ns=2 * S)
    # from t=2s: drops 30-10 = 20, enqueued 500-200 = 300 -> 20 / 320
    assert d["drops"] == 20 and d["arrivals"] == 320
    assert d["drop_pct"] == pytest.approx(100 * 20 / 320)
    assert drop_ratio(queue_table())["drop_pct"] == pytest.approx(100 * 30 / 530)
    assert math.isnan(drop_ratio(queue_table(), link="nowhere")["drop_pct"])


# -- summary


def test_summary_of_a_fake_run(base_spec, ccas):
    exp = Experiment.from_dict(base_spec, ccas=ccas)
    cfg = exp.resolve()
    raw = fake_run(cfg, goodput_bps=[30e6, 30e6, 10e6])
    # metrics read the spec and `derived`, never the engine configuration
    res = RunResult(tables_from_engine(raw["tables"]), {"spec": exp.to_dict(), "derived": exp.derived()})
    s = res.summary()
    assert s["flows"]["goodput_bps"].tolist() == pytest.approx([30e6, 30e6, 10e6], rel=1e-6)
    assert s["jain"] == pytest.approx(70**2 / (3 * (900 + 900 + 100)), rel=1e-6)
    assert set(s["jain_by_group"]["group"]) == {"c", "reno", "(all)"}
    assert 0 < s["utilization"] < 1
    assert s["retransmissions"] == int(res.flows["segs_retrans"].sum())
    assert s["drops"] > 0


def test_summary_rebuilds_derived_from_the_spec_of_an_older_run(base_spec, ccas):
    exp = Experiment.from_dict(base_spec, ccas=ccas)
    raw = fake_run(exp.resolve(), goodput_bps=[30e6, 30e6, 10e6])
    old = {k: v for k, v in exp.derived().items() if k in ("buffer", "num_flows")}  # before window/bottleneck
    res = RunResult(tables_from_engine(raw["tables"]), {"spec": exp.to_dict(), "derived": old})
    new = RunResult(tables_from_engine(raw["tables"]), {"spec": exp.to_dict(), "derived": exp.derived()})
    assert res.summary()["utilization"] == new.summary()["utilization"]
    assert res.derived["window"] == {"warmup_ns": 2 * S, "duration_ns": 10 * S}
