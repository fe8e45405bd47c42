"""Each metric family against values computed by hand on small synthetic tables,
with the edge cases: a flow with zero throughput, a single flow, windows without
data, a sweep with failed runs."""

import math

import numpy as np
import pandas as pd
import pytest

from ccbench.metrics import (
    TimeToEvent,
    average_throughput,
    avg_throughput_sd,
    backlog_delay,
    bdp_bytes,
    buffer_packets,
    burstiness,
    bwutil_gap,
    by_size_bucket,
    delay_percentiles,
    dos_recovery_time,
    drop_burstiness,
    ema_throughput,
    eps_convergence,
    equilibrium_buffer,
    expected_fct,
    fct_slowdown,
    fit_mathis_c,
    flow_completion,
    flow_counts,
    fness,
    goodput_timeseries,
    group_timeseries,
    harm,
    jain_flowmean,
    jain_parking_lot,
    jain_senders,
    jain_timeseries,
    jfi_convergence_time,
    loss_and_halving_rates,
    mathis_error,
    mathis_inputs,
    mathis_throughput,
    median_occupancy,
    moving_average,
    over_repetitions,
    overall_average,
    overall_throughput,
    phase_throughput,
    rate_phases,
    relative_median_difference,
    relative_retransmissions,
    sojourn_percentiles,
    throughput_difference,
    throughput_quantiles,
    throughput_ratio_ncf,
    throughput_ratio_recipe,
    time_to_fraction,
)

S = 10**9
nan = float("nan")


def flows_table(**cols):
    n = len(cols["flow_id"])
    base = {
        "sender_name": ["a"] * n,
        "group": ["g"] * n,
        "cca": ["cubic"] * n,
        "start_ns": [0] * n,
        "end_ns": [10 * S] * n,
        "delivered_bytes_at_warmup": [0] * n,
        "size_bytes": [-1] * n,
        "mss": [1448] * n,
        "base_rtt_ns": [100_000_000] * n,
        "min_rtt_ns": [100_000_000] * n,
    }
    base.update(cols)
    return pd.DataFrame(base)


def series(rates_by_flow, bin_ns=S):
    """A per-flow throughput series: flow f has rates_by_flow[f][k] in bin k (ending at (k+1)·bin)."""
    rows = [
        {"flow_id": f, "time_ns": (k + 1) * bin_ns, "goodput_bps": r}
        for f, rates in rates_by_flow.items()
        for k, r in enumerate(rates)
    ]
    return pd.DataFrame(rows)


# -- fairness


def test_jain_senders_aggregates_flows_per_sender():
    # sender a: 2 flows of 1 MB each = 2 MB; sender b: 1 flow of 1 MB; window 8 s
    f = flows_table(flow_id=[0, 1, 2], sender_name=["a", "a", "b"], delivered_bytes=[10**6] * 3)
    s_a, s_b = 2e6 * 8 / 8, 1e6 * 8 / 8
    assert jain_senders(f, warmup_ns=2 * S, duration_ns=10 * S) == pytest.approx(
        (s_a + s_b) ** 2 / (2 * (s_a**2 + s_b**2))
    )
    # the per-flow-mean index of the same run counts three equal flows
    assert jain_flowmean(f, warmup_ns=0) == pytest.approx(1.0)
    # a single sender: undefined, not 1
    assert math.isnan(jain_senders(f.iloc[:2], warmup_ns=0, duration_ns=10 * S))


def test_jain_flowmean_with_a_zero_throughput_flow():
    f = flows_table(flow_id=[0, 1], delivered_bytes=[10**6, 0])
    assert jain_flowmean(f, warmup_ns=0) == pytest.approx(0.5)


def test_jain_timeseries_per_bin_and_windows():
    ts = series({0: [1, 1, 3, 0], 1: [1, 3, 1, 0]})
    per_bin = jain_timeseries(ts)
    # bins: J(1,1)=1, J(1,3)=16/20, J(3,1)=0.8, J(0,0) undefined
    np.testing.assert_allclose(per_bin["jain"].to_numpy()[:3], [1.0, 0.8, 0.8])
    assert math.isnan(per_bin["jain"].iloc[3])
    win = jain_timeseries(ts, window_ns=2 * S)
    # first window incomplete; then mean of (1, .8) = .9; (.8, .8) = .8; (.8, nan) = .8
    assert math.isnan(win["jain"].iloc[0])
    np.testing.assert_allclose(win["jain"].to_numpy()[1:], [0.9, 0.8, 0.8])
    of_means = jain_timeseries(ts, window_ns=2 * S, mode="of_window_means")
    # window (1 s, 3 s]: means (2, 2) -> 1
    assert of_means["jain"].iloc[2] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="mode"):
        jain_timeseries(ts, mode="sliding")


def test_jain_timeseries_counts_only_active_flows():
    ts = series({0: [4, 4, 4], 1: [0, 4, 4]})
    flows = pd.DataFrame({"flow_id": [0, 1], "start_ns": [0, 1 * S], "end_ns": [3 * S, 3 * S]})
    js = jain_timeseries(ts, flows)
    assert list(js["n_active"]) == [1, 2, 2]
    np.testing.assert_allclose(js["jain"], [1.0, 1.0, 1.0])  # flow 1's 0 in bin 1 is "not started", not unfair


def test_jain_timeseries_without_data():
    empty = pd.DataFrame({"flow_id": [], "time_ns": [], "goodput_bps": []})
    assert jain_timeseries(empty).empty


def test_jain_parking_lot_is_the_mean_of_pairs():
    # J(2,1)=9/10, J(2,2)=1 -> 0.95
    assert jain_parking_lot(2.0, [1.0, 2.0]) == pytest.approx(0.95)
    assert math.isnan(jain_parking_lot(1.0, []))
    assert jain_parking_lot(0.0, [0.0, 1.0]) == pytest.approx(0.5)  # undefined pair left out


# -- throughput helpers


def test_group_timeseries_and_moving_average():
    ts = series({0: [1, 2], 1: [3, 4]})
    f = pd.DataFrame({"flow_id": [0, 1], "cca": ["x", "y"]})
    tot = group_timeseries(ts, f, by="total")
    assert list(tot["goodput_bps"]) == [4, 6]
    g = group_timeseries(ts, f, by="cca")
    assert list(g[g["cca"] == "y"]["goodput_bps"]) == [3, 4]
    t = np.array([1, 2, 3, 4]) * S
    np.testing.assert_allclose(moving_average(t, np.array([2.0, 4, 6, 8]), 2 * S), [2, 3, 5, 7])


# -- convergence


def test_ema_throughput_by_hand():
    # Δu/δ: 800, 800 bit/s over δ = 1 s (100 bytes each); u1 = .1*800 = 80, u2 = .9*80 + 80 = 152
    np.testing.assert_allclose(ema_throughput(np.array([0, 100, 200]), delta_ns=S, lam=0.1), [80, 152])


def test_eps_convergence_and_spread():
    # a flow delivering 1000 B/s from t = 0 s for 30 s (8000 bit/s)
    t = np.arange(0, 31) * S
    ts = pd.DataFrame({"flow_id": 0, "time_ns": t, "delivered_bytes": np.arange(0, 31) * 1000})
    r = eps_convergence(ts, 0, lam=0.1, eps=0.8)
    # u_k = 8000 (1 − 0.9^k) ≥ 6400 ⇔ 0.9^k ≤ 0.2 ⇔ k ≥ 15.28 -> 16 s
    assert r.t_c == TimeToEvent(16.0, True)
    assert r.u_bar_bps == pytest.approx(8000)
    k = np.arange(1, 31)
    u = 8000 * (1 - 0.9**k)
    assert r.spread_bps == pytest.approx(np.abs(8000 - u[15:]).sum() / 30)
    after = eps_convergence(ts, 0, spread_denominator="after")
    assert after.spread_bps == pytest.approx(np.abs(8000 - u[15:]).sum() / 15)


def test_eps_convergence_censored_and_bad_flow():
    ts = pd.DataFrame({"flow_id": 0, "time_ns": [0, S, 2 * S], "delivered_bytes": [0, 1000, 2000]})
    r = eps_convergence(ts, 0, eps=0.99)  # two EMA steps cannot reach 99 %
    assert r.t_c == TimeToEvent(2.0, False)
    assert math.isnan(r.spread_bps)
    with pytest.raises(ValueError, match="no samples"):
        eps_convergence(ts, 7)


def test_jfi_convergence_time_by_hand():
    # flow 1 starts at 2 s; fair from bin ending at 6 s on
    ts = series({0: [10, 10, 9, 8, 6, 5, 5, 5, 5, 5], 1: [0, 0, 1, 2, 4, 5, 5, 5, 5, 5]})
    flows = pd.DataFrame({"flow_id": [0, 1], "start_ns": [0, 2 * S], "end_ns": [10 * S, 10 * S]})
    per_bin = jain_timeseries(ts, flows)["jain"].to_numpy()
    # 2 s windows; first full window after 2 s ends at 4 s
    r = jfi_convergence_time(ts, flows, threshold=0.9, window_ns=2 * S)
    win = (per_bin[:-1] + per_bin[1:]) / 2  # window ending at bin i+1
    first = next(i + 2 for i, v in enumerate(win) if (i + 2) * S >= 4 * S and v >= 0.9)
    assert r == TimeToEvent(first - 2.0, True)
    never = jfi_convergence_time(ts, flows, threshold=1.01, window_ns=2 * S)
    assert never == TimeToEvent(8.0, False)


def test_jfi_convergence_must_stay():
    ts = series({0: [1, 1, 5, 1, 1, 1], 1: [1, 1, 1, 1, 1, 1]})
    loose = jfi_convergence_time(ts, threshold=0.95, window_ns=S, origin_ns=0)
    strict = jfi_convergence_time(ts, threshold=0.95, window_ns=S, origin_ns=0, must_stay=True)
    assert loose == TimeToEvent(1.0, True)
    assert strict == TimeToEvent(4.0, True)


def test_t90_by_hand():
    t = np.arange(1, 11) * S
    v = np.array([100, 100, 100, 0, 20, 40, 60, 80, 80, 80], dtype=float)  # change at 3 s to 80 available
    r = time_to_fraction(t, v, change_ns=3 * S, target_bps=80, window_ns=2 * S)
    # MA after change (bins from 4 s): 0, 10, 30, 50, 70, 80 ≥ 72 at 9 s -> 6 s
    assert r == TimeToEvent(6.0, True)
    assert time_to_fraction(t, v, change_ns=3 * S, target_bps=1000) == TimeToEvent(7.0, False)
    assert time_to_fraction(t, v, change_ns=20 * S, target_bps=1) == TimeToEvent(0.0, False)  # no data after


def test_dos_recovery_by_hand():
    t = np.arange(1, 13) * S
    v = np.array([50, 50, 50, 50, 5, 5, 30, 40, 46, 50, 50, 50], dtype=float)
    # pre-attack mean over bins ending ≤ 4 s = 50; attack ends at 6 s; 2-s MA after: 30, 35, 43, 48 ≥ 45 at 10 s
    r = dos_recovery_time(t, v, attack_start_ns=4 * S, attack_end_ns=6 * S, window_ns=2 * S)
    assert r == TimeToEvent(4.0, True)
    assert dos_recovery_time(t, v, attack_start_ns=0, attack_end_ns=6 * S).seconds != 0  # no pre data -> NaN
    assert math.isnan(dos_recovery_time(t, v, attack_start_ns=0, attack_end_ns=6 * S).seconds)


# -- utilization


def test_bwutil_phase_and_overall():
    assert bwutil_gap([30, 40, 50], 60) == pytest.approx((60 - 40) / 60 * 100)
    assert bwutil_gap([70], 60) < 0  # over-use is negative
    assert math.isnan(bwutil_gap([], 60))
    phases = rate_phases(100, [[4 * S, 20], [8 * S, 100]], 12 * S)
    assert list(phases["rate_bps"]) == [100, 20, 100]
    t = np.arange(1, 13) * S
    v = np.array([90, 90, 90, 90, 30, 20, 20, 20, 50, 60, 90, 90], dtype=float)
    p = phase_throughput(t, v, phases, expected_bps=[60, 20, 60])
    assert list(p["median_bps"]) == [90, 20, 75]
    np.testing.assert_allclose(p["pct_below"], [-50, 0, -25])
    with pytest.raises(ValueError, match="phases"):
        phase_throughput(t, v, phases, expected_bps=[1])
    empty_phase = phase_throughput(t, v, rate_phases(1, [[100 * S, 2]], 200 * S))
    assert math.isnan(empty_phase["median_bps"].iloc[1])
    f = flows_table(flow_id=[0, 1], delivered_bytes=[10**6, 0])
    o = overall_throughput(f, warmup_ns=0, duration_ns=10 * S)
    assert o == {"overall_bps": pytest.approx(8e5), "per_connection_bps": pytest.approx(4e5)}


# -- loss


def drop_events(times, flows=None, link="bottleneck", data=True):
    n = len(times)
    return pd.DataFrame(
        {
            "time_ns": times,
            "kind": ["drop"] * n,
            "flow_id": flows if flows is not None else [0] * n,
            "link": [link] * n,
            "reason": ["tail_drop"] * n,
            "value": [0.0] * n,
            "value2": [1.0 if data else 0.0] * n,
        }
    )


def test_burstiness_known_values():
    assert burstiness([0, 10, 20, 30]) == pytest.approx(-1.0)  # periodic
    # intervals 1, 1, 10: m = 4, σ = sqrt(((−3)²+(−3)²+6²)/3) = sqrt(18)
    assert burstiness([0, 1, 2, 12]) == pytest.approx((math.sqrt(18) - 4) / (math.sqrt(18) + 4))
    assert math.isnan(burstiness([5, 6]))
    assert math.isnan(burstiness([5, 5, 5]))
    ev = pd.concat(
        [drop_events([0, 1, 2, 12]), drop_events([3, 4], link="bottleneck_rev"), drop_events([50], data=False)]
    )
    assert drop_burstiness(ev) == pytest.approx(burstiness([0, 1, 2, 12]))
    two = drop_events([0, 10, 20, 0, 1, 2, 12], flows=[0, 0, 0, 1, 1, 1, 1])
    assert drop_burstiness(two, per_flow=True) == pytest.approx(np.median([-1.0, burstiness([0, 1, 2, 12])]))


def test_loss_and_halving_rates():
    f = flows_table(
        flow_id=[0, 1], delivered_bytes=[1, 1], segs_sent=[100, 0], cwnd_reductions=[2, 0], segs_lost=[9, 0]
    )
    ev = drop_events([1, 2, 3, 4], flows=[0, 0, 0, 0])
    r = loss_and_halving_rates(f, ev)
    assert r["p_loss"].iloc[0] == pytest.approx(0.04)
    assert r["p_halving"].iloc[0] == pytest.approx(0.02)
    assert r["loss_per_halving"].iloc[0] == pytest.approx(2.0)
    assert math.isnan(r["p_loss"].iloc[1]) and math.isnan(r["loss_per_halving"].iloc[1])  # sent nothing
    assert loss_and_halving_rates(f)["p_loss"].iloc[0] == pytest.approx(0.09)  # segs_lost stands in


def test_relative_retransmissions():
    assert relative_retransmissions(30, [10, 20]) == pytest.approx(2.0)
    assert relative_retransmissions(10, 10) == 1.0
    assert math.isnan(relative_retransmissions(5, 0))


# -- distribution and ratios


def test_quantiles_averages_and_sd():
    q = throughput_quantiles([1, 2, 3, 4, 5, nan])
    assert q == {0.25: 2.0, 0.5: 3.0, 0.75: 4.0}
    assert all(math.isnan(v) for v in throughput_quantiles([]).values())
    assert average_throughput([2, 4, nan]) == 3.0
    assert math.isnan(average_throughput([]))
    pf = pd.DataFrame({"group": ["a", "a", "b"], "goodput_bps": [1.0, 3.0, 5.0]})
    sd = avg_throughput_sd(pf).set_index("group")
    assert sd.loc["a", "mean"] == 2.0 and sd.loc["a", "sd"] == pytest.approx(math.sqrt(2))
    assert math.isnan(sd.loc["b", "sd"])  # one flow
    assert sd.loc["(all)", "mean"] == 3.0 and sd.loc["(all)", "sd"] == pytest.approx(2.0)


def test_ratios_difference_harm_fness():
    assert throughput_ratio_recipe(4, 2) == 2
    assert throughput_ratio_recipe(4, [2, 6]) == 1
    assert throughput_ratio_recipe(1, 0) == math.inf
    assert math.isnan(throughput_ratio_recipe(0, 0))
    assert throughput_ratio_ncf([2, 6], 4) == 1
    assert throughput_difference(160, 40) == 120
    assert harm(100, 60) == pytest.approx(0.4)
    assert harm(10, 20, more_is_better=False) == pytest.approx(0.5)
    assert math.isnan(harm(0, 5))
    assert fness(3, 1) == pytest.approx(0.5)
    assert fness(0, 1) == -1
    assert math.isnan(fness(0, 0))


# -- queue


def test_median_occupancy_delay_percentiles_and_backlog_delay():
    q = pd.DataFrame(
        {
            "time_ns": [0, 1, 2, 3],
            "link": ["bottleneck"] * 4,
            "backlog_bytes": [0, 1000, 3000, 125_000],
            "backlog_pkts": [0, 1, 2, 84],
        }
    )
    assert median_occupancy(q) == 2000
    assert median_occupancy(q, start_ns=2, unit="pkts") == 43
    assert math.isnan(median_occupancy(q, start_ns=10))
    assert relative_median_difference(150, 100) == pytest.approx(0.5)
    assert math.isnan(relative_median_difference(1, 0))
    d = backlog_delay(q, rate_bps=10**6, rate_schedule=[[3, 2 * 10**6]])
    np.testing.assert_allclose(d["sojourn_ns"], [0, 8e6, 24e6, 0.5e9])
    soj = pd.DataFrame({"time_ns": range(101), "link": "bottleneck", "sojourn_ns": np.arange(101) * 1e6})
    p = delay_percentiles(soj)
    assert (
        p["p50_ns"] == pytest.approx(50e6)
        and p["p99_ns"] == pytest.approx(99e6)
        and p["mean_ns"] == pytest.approx(50e6)
    )
    assert math.isnan(delay_percentiles(soj, start_ns=1000)["p90_ns"])


@pytest.mark.parametrize("seed", range(6))
def test_sojourn_percentiles_in_batches_equal_the_whole_array(seed):
    """The two-pass, bounded-memory percentiles of a streamed sojourn table are NumPy's
    over all samples: ties, tiny and huge values, other links and the window included."""
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 20_000))
    high = [3, 2_000, 10**9, 2**62][seed % 4]
    values = rng.integers(0, high, n, dtype=np.uint64)
    links = pa.array(rng.choice(["bottleneck", "hop"], n)).dictionary_encode()
    table = pa.table({"time_ns": pa.array(np.arange(n, dtype=np.uint64)), "link": links, "sojourn_ns": values})
    start = int(rng.integers(0, n))
    got = sojourn_percentiles(lambda: table.to_batches(max_chunksize=977), start_ns=start, q=(0.0, 0.5, 0.9, 0.99, 1.0))
    want = delay_percentiles(table.to_pandas(), start_ns=start, q=(0.0, 0.5, 0.9, 0.99, 1.0))
    assert got.keys() == want.keys()
    for k, v in want.items():
        assert got[k] == pytest.approx(v, rel=1e-12, nan_ok=True), k
    assert got["p50_ns"] == want["p50_ns"]  # exact where no rounding is involved
    empty = sojourn_percentiles(lambda: table.to_batches(), link="nowhere")
    assert empty["samples"] == 0 and math.isnan(empty["p99_ns"])


# -- fct


def test_expected_fct_branches_by_hand():
    a, rtt, iw = 8e6, 0.1, 10_000  # 1 MB/s, BDP 100 KB
    assert expected_fct(5_000, capacity_bps=a, rtt_s=rtt, icwnd_bytes=iw) == pytest.approx(0.1 + 0.005)
    # 40 KB: 1 + floor(log2 4) = 3 rounds
    assert expected_fct(40_000, capacity_bps=a, rtt_s=rtt, icwnd_bytes=iw) == pytest.approx(0.3)
    # 300 KB: 1 + floor(log2 10) = 4 rounds + 200 KB / 1 MB/s
    assert expected_fct(300_000, capacity_bps=a, rtt_s=rtt, icwnd_bytes=iw) == pytest.approx(0.4 + 0.2)
    # BDP below icwnd: rounds clamp at 0
    assert expected_fct(20_000, capacity_bps=a, rtt_s=0.001, icwnd_bytes=iw) == pytest.approx(0.001 + 19_000 / 1e6)


def test_fct_slowdown_buckets_and_counts():
    f = flows_table(
        flow_id=[0, 1, 2, 3],
        size_bytes=[50, 5_000, 40_000, -1],
        completed=[True, True, False, False],
        fct_ns=[200_000_000, 300_000_000, -1, -1],
        delivered_bytes=[50, 5_000, 0, 10**6],
        min_rtt_ns=[100_000_000, -1, 100_000_000, 100_000_000],
        mss=[1000] * 4,
    )
    fc = flow_completion(f)
    assert list(fc["flow_id"]) == [0, 1, 2]  # the bulk flow is not a finite flow
    assert math.isnan(fc["fct_s"].iloc[2])
    sd = fct_slowdown(f, capacity_bps=8e6)
    # flow 0: eFCT = 0.1 + 50/1e6; flow 1 has no RTT sample: base RTT 0.1 -> 0.1 + 0.005
    assert sd["slowdown"].iloc[0] == pytest.approx(0.2 / (0.1 + 50e-6))
    assert sd["slowdown"].iloc[1] == pytest.approx(0.3 / 0.105)
    assert math.isnan(sd["slowdown"].iloc[2])
    b = by_size_bucket(sd, "slowdown").set_index("bucket")
    assert list(b.index) == ["≤100", "1.5K–15K", "15K–150K"]
    assert b.loc["15K–150K", "flows"] == 1 and b.loc["15K–150K", "completed"] == 0
    assert math.isnan(b.loc["15K–150K", "median"])
    c = flow_counts(f)
    assert c == {"flows": 4, "finite": 3, "completed": 2, "effective": 3, "effective_fraction": 0.75}
    with pytest.raises(ValueError, match="rtt"):
        fct_slowdown(f, capacity_bps=1, rtt="srtt")


# -- mathis


def test_mathis_fit_recovers_a_known_constant():
    mss = np.full(4, 1448.0)
    rtt = np.array([0.02, 0.02, 0.04, 0.08])
    p = np.array([0.01, 0.0004, 0.001, 0.01])
    t = mathis_throughput(mss, rtt, p, c=1.22)
    assert t[0] == pytest.approx(1448 * 8 * 1.22 / (0.02 * 0.1))
    assert fit_mathis_c(t, mss, rtt, p) == pytest.approx(1.22)
    assert mathis_error(t, mss, rtt, p, c=1.22) == pytest.approx(0.0)
    assert mathis_error(t, mss, rtt, p, c=0.61) == pytest.approx(0.5)
    # a flow without congestion events (p = 0) has no finite prediction and is left out
    t2, p2 = np.append(t, 5e6), np.append(p, 0.0)
    assert fit_mathis_c(t2, np.append(mss, 1448), np.append(rtt, 0.02), p2) == pytest.approx(1.22)
    assert math.isnan(fit_mathis_c([1.0], [1448], [0.02], [0.0]))
    # least squares by hand: T = (1, 3), a = (1, 1) -> C = 2
    a_rtt = 1448 * 8 / np.array([1.0, 1.0])
    assert fit_mathis_c([1.0, 3.0], [1448, 1448], a_rtt, [1.0, 1.0]) == pytest.approx(2.0)


def test_mathis_inputs_from_tables():
    f = flows_table(flow_id=[0], delivered_bytes=[10**6], segs_sent=[1000], cwnd_reductions=[5], segs_lost=[10])
    ts = pd.DataFrame(
        {"flow_id": [0, 0, 0], "time_ns": [0, S, 2 * S], "srtt_ns": [50_000_000, 100_000_000, 200_000_000]}
    )
    m = mathis_inputs(f, ts, warmup_ns=S)
    assert m["rtt_s"].iloc[0] == pytest.approx(0.15)
    assert m["p_loss"].iloc[0] == pytest.approx(0.01) and m["p_halving"].iloc[0] == pytest.approx(0.005)
    assert mathis_inputs(f, ts, rtt="base")["rtt_s"].iloc[0] == pytest.approx(0.1)


# -- sizing


def test_bdp_and_buffers_agree_with_the_spec(base_spec):
    from ccbench.spec import Experiment

    assert bdp_bytes(100e6, 100_000_000) == 1_250_000  # D2's example
    exp = Experiment.model_validate(base_spec)
    buf = exp.buffer()
    assert buffer_packets(1, exp.bottleneck.rate, buf.bdp_rtt_ns, buf.packet_bytes) == buf.packets
    with pytest.raises(ValueError):
        bdp_bytes(-1, 1)


# -- aggregation over runs (a sweep with failed runs)


def sweep_table():
    # 2 CCAs × 2 buffers × 3 repetitions; one failed run (NaN)
    rows = []
    for cca in ("bbr", "cubic"):
        for k in (1, 2):
            for rep in range(3):
                phi = {"bbr": 0.9, "cubic": 0.8}[cca] + 0.01 * k + 0.01 * rep
                rows.append({"cca": cca, "k": k, "rep": rep, "phi": phi})
    df = pd.DataFrame(rows)
    df.loc[(df.cca == "bbr") & (df.k == 2) & (df.rep == 2), "phi"] = nan
    return df


def test_over_repetitions_leaves_failed_runs_out():
    s = over_repetitions(sweep_table(), "phi", ["cca", "k"]).set_index(["cca", "k"])
    assert s.loc[("bbr", 2), "n"] == 2 and s.loc[("bbr", 2), "runs"] == 3
    assert s.loc[("bbr", 2), "mean"] == pytest.approx(0.925)
    assert s.loc[("cubic", 1), "std"] == pytest.approx(0.01)
    single = over_repetitions(sweep_table().iloc[:1], "phi", ["cca"])
    assert math.isnan(single["std"].iloc[0])
    with pytest.raises(ValueError, match="unknown"):
        over_repetitions(sweep_table(), "phi", ["cca"], stats=("mode",))


def test_overall_average_is_mean_of_condition_means():
    a = overall_average(sweep_table(), "phi", by=["cca"], condition=["k"]).set_index("cca")
    # bbr: k=1 mean .92, k=2 mean .925 -> .9225; cubic: .82, .83 -> .825
    assert a.loc["bbr", "avg"] == pytest.approx(0.9225)
    assert a.loc["cubic", "avg"] == pytest.approx(0.825)
    assert a.loc["bbr", "conditions"] == 2


def test_equilibrium_buffer():
    k = [0.5, 1, 2, 4, 8]
    s1 = [10, 20, 40, 60, 70]
    s2 = [90, 80, 60, 40, 30]
    # d = -80, -60, -20, 20, 40: crossing between 2 and 4 at 3
    assert equilibrium_buffer(k, s1, s2) == pytest.approx(3.0)
    assert equilibrium_buffer(k, s1, s2, scale="log") == pytest.approx(2 * math.sqrt(2))
    assert equilibrium_buffer([1, 2], [5, 5], [5, 6]) == 1  # equal at a grid point
    assert math.isnan(equilibrium_buffer(k, s2, [0] * 5))  # never crosses
    assert equilibrium_buffer([1, 2, 4], [10, nan, 30], [20, 20, 20]) == pytest.approx(2.5)  # failed run skipped
    assert math.isnan(equilibrium_buffer([1], [1], [2]))


def test_goodput_timeseries_window_without_data():
    ts = pd.DataFrame({"flow_id": [], "time_ns": [], "delivered_bytes": []})
    assert goodput_timeseries(ts, S).empty


def test_loss_and_halving_rates_in_the_measurement_window():
    f = flows_table(
        flow_id=[0, 1],
        delivered_bytes=[98_000, 50_000],
        delivered_bytes_at_warmup=[48_000, 50_000],
        mss=[1000, 1000],
        segs_sent=[1, 1],
        cwnd_reductions=[9, 9],
    )
    ev = pd.concat(
        [
            drop_events([1, 5, 6], flows=[0, 0, 0]),  # one before the warm-up (t = 2)
            pd.DataFrame(
                {
                    "time_ns": [1, 7],
                    "kind": "cwnd_reduction",
                    "flow_id": [0, 0],
                    "link": "",
                    "reason": "recovery",
                    "value": 0.0,
                    "value2": 0.0,
                }
            ),
        ]
    )
    r = loss_and_halving_rates(f, ev, warmup_ns=2)
    # flow 0: 2 drops, 1 halving in the window; 50 segments delivered + 2 dropped = 52 packets
    assert r["drops"].iloc[0] == 2 and r["halvings"].iloc[0] == 1 and r["packets"].iloc[0] == 52
    assert r["p_loss"].iloc[0] == pytest.approx(2 / 52) and r["p_halving"].iloc[0] == pytest.approx(1 / 52)
    assert r["loss_per_halving"].iloc[0] == 2
    # flow 1 delivered nothing in the window: no packets, rates undefined
    assert math.isnan(r["p_loss"].iloc[1])
    with pytest.raises(ValueError, match="events"):
        loss_and_halving_rates(f, warmup_ns=2)
