"""Per-run quantities of the study reports that the sweep index does not hold, one
function per report layout (``[suite] report`` of a scenario), each reading one run's
tables through :mod:`ccbench.metrics` (definitions in ``../shared/spec/metrics.md``).

Every function takes a :class:`~ccbench.results.RunResult` and returns a flat dict of
numbers; the report averages them over repetitions like the index's headline metrics.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from ..metrics.convergence import jfi_convergence_time, time_to_fraction
from ..metrics.fairness import jain_index
from ..metrics.mathis import fit_mathis_c, mathis_error, mathis_inputs
from ..metrics.throughput import flow_goodput, goodput_timeseries
from ..results import RunResult

__all__ = ["LAYOUT_EXTRAS", "group_shares"]

_BIN_NS = 1_000_000_000  # 1 s throughput bins for the time-based metrics


def _window(r: RunResult) -> tuple[int, int]:
    w = r.derived.get("window", {})
    return int(w.get("warmup_ns", 0)), int(w.get("duration_ns", 0))


def group_shares(r: RunResult) -> dict[str, float]:
    """M-SHARE per flow group: the group's goodput over the measurement window as a
    fraction of all flows' goodput."""
    warmup, _ = _window(r)
    g = flow_goodput(r.flows, warmup)
    groups = r.flows["group"].astype(str).to_numpy()
    total = float(g["goodput_bps"].sum())
    out: dict[str, float] = {}
    for name in dict.fromkeys(groups):
        mine = float(g["goodput_bps"].to_numpy()[groups == name].sum())
        out[f"share[{name}]"] = mine / total if total > 0 else math.nan
    return out


def _pairs(r: RunResult) -> dict[str, float]:
    return group_shares(r)


def _flow_series(r: RunResult, flow_id: int) -> pd.DataFrame:
    ts = r.flow_ts
    return goodput_timeseries(ts[ts["flow_id"] == flow_id], _BIN_NS)


def _responsiveness(r: RunResult) -> dict[str, float]:
    """D1: average throughput of the single flow (responsiveness) and the quartiles
    of its 1 s throughput samples in the window (efficiency)."""
    warmup, _ = _window(r)
    s = _flow_series(r, 0)
    v = s["goodput_bps"].to_numpy()[s["time_ns"].to_numpy() > warmup] / 1e6
    if v.size == 0:
        return {}
    q25, q50, q75 = np.quantile(v, [0.25, 0.5, 0.75])
    return {"avg_mbps": float(v.mean()), "q25_mbps": float(q25), "q50_mbps": float(q50), "q75_mbps": float(q75)}


def _convergence(r: RunResult) -> dict[str, float]:
    """Time for Jain's index (5 s windows) of both flows to reach 0.9 after the new
    stream starts (M-CONV-JFI; D1's epsilon-convergence needs the EMA of each flow,
    reported by the same threshold rule here)."""
    series = goodput_timeseries(r.flow_ts, _BIN_NS)
    t = jfi_convergence_time(series, r.flows, threshold=0.9)
    # not reached before the run ended: infinite, so that "conv_s > x" holds
    return {"conv_s": t.seconds if t.reached else math.inf}


def _changes(r: RunResult) -> list[tuple[int, float]]:
    sched = r.derived.get("bottleneck", {}).get("rate_schedule") or []
    out = []
    for step in sched:  # [at_ns, rate_bps] pairs (results-format.md, derived.bottleneck)
        if isinstance(step, (list, tuple)) and len(step) == 2:
            out.append((int(step[0]), float(step[1])))
    return out


def _bw_changes(r: RunResult) -> dict[str, float]:
    """M-T90 after every capacity change of the schedule, 10 s and 5 s moving
    averages (D2 Ch. 4 and Ch. 3), and the flow's median throughput between changes
    as a fraction of the capacity then."""
    s = _flow_series(r, 0)
    t = s["time_ns"].to_numpy()
    v = s["goodput_bps"].to_numpy()
    out: dict[str, float] = {}
    changes = _changes(r)
    _, duration = _window(r)
    for i, (at, rate) in enumerate(changes, start=1):
        for w in (10, 5):
            tt = time_to_fraction(t, v, change_ns=at, target_bps=rate, window_ns=w * 1_000_000_000)
            # not reached before the next change or the end: infinite (a rule's "> x" holds)
            out[f"t90_{i}_ma{w}s"] = tt.seconds if tt.reached else math.inf
        end = changes[i][0] if i < len(changes) else duration
        phase = v[(t > at) & (t <= end)]
        out[f"median_{i}/capacity"] = float(np.median(phase)) / rate if phase.size and rate > 0 else math.nan
    return out


def _cross_phases(r: RunResult) -> list[tuple[int, int, float]]:
    """The cross traffic's phases as (start ns, end ns, the rate it takes in bit/s),
    from the spec's flow groups after the first (the primary flow):

    - a UDP source with ``bursts``: each burst at its rate (a DoS schedule);
    - a Poisson group of fixed-size flows with a ``load`` and a ``count``: from its
      start for as long as ``count`` arrivals last at that load (a mice flood phase);
    - a bulk flow group: each of its flows from start to stop (or the end), taking
      its sender's access rate (an elastic elephant capped by its link).
    """
    from ..units import parse_duration, parse_size

    spec = r.manifest.get("spec", {})
    senders = {sd["name"]: sd for sd in spec.get("senders", [])}
    _, duration = _window(r)
    out: list[tuple[int, int, float]] = []
    flows = r.flows
    for g in spec.get("flows", [])[1:]:
        start = parse_duration(g.get("start", "0s"))
        if g.get("transport") == "udp" and g.get("bursts"):
            for b in g["bursts"]:
                at = parse_duration(b["at"])
                out.append((at, at + parse_duration(b["duration"]), _rate_of(b["rate"])))
        elif g.get("arrival") == "poisson" and g.get("load") and g.get("size") and g.get("count"):
            load = _rate_of(g["load"])
            size = float(parse_size(g["size"]).value)
            out.append((start, start + int(int(g["count"]) * size * 8 / load * 1e9), load))
        else:
            rows = flows[flows["group"].astype(str) == str(g.get("name"))]
            cap = _rate_of(senders.get(str(g.get("sender")), {}).get("access_rate"))
            for row in rows.itertuples(index=False):
                lo = int(row.start_ns)
                hi = int(row.stop_ns) if int(row.stop_ns) > 0 else int(row.end_ns)
                out.append((lo, hi, cap))
    out = sorted(set(out))
    return [(lo, min(hi, duration) if duration else hi, cap) for lo, hi, cap in out]


def _phases(r: RunResult) -> dict[str, float]:
    """The primary flow's median throughput in each cross-traffic phase
    (:func:`_cross_phases`) against its ideal share: capacity minus what the cross
    traffic takes (its cap, load or burst rate; never below 0)."""
    s = _flow_series(r, 0)
    t = s["time_ns"].to_numpy()
    v = s["goodput_bps"].to_numpy()
    rate = float(r.derived.get("bottleneck", {}).get("rate_bps", math.nan))
    out: dict[str, float] = {}
    for i, (lo, hi, cap) in enumerate(_cross_phases(r), start=1):
        phase = v[(t > lo + _BIN_NS) & (t <= hi)]
        out[f"phase{i}_median_mbps"] = float(np.median(phase)) / 1e6 if phase.size else math.nan
        out[f"phase{i}_ideal_mbps"] = ideal = max(rate - cap, 0.0) / 1e6 if math.isfinite(cap) else math.nan
        out[f"phase{i}_median_mbps/ideal"] = out[f"phase{i}_median_mbps"] / ideal if ideal > 0 else math.nan
    return out


def _rate_of(text: Any) -> float:
    from ..units import parse_rate

    try:
        return float(parse_rate(text)) if text is not None else math.nan
    except (ValueError, TypeError):
        return math.nan


def _mathis(r: RunResult) -> dict[str, float]:
    """D3: the fitted Mathis constant with p = loss rate and p = cwnd-halving rate,
    its median prediction error, and the loss-to-halving ratio."""
    warmup, _ = _window(r)
    x = mathis_inputs(r.flows, r.flow_ts, warmup_ns=warmup)
    out: dict[str, float] = {}
    for p in ("p_loss", "p_halving"):
        args = (x["goodput_bps"].to_numpy(), x["mss"].to_numpy(), x["rtt_s"].to_numpy(), x[p].to_numpy())
        c = fit_mathis_c(*args)
        out[f"C[{p}]"] = c
        out[f"err[{p}]"] = mathis_error(*args, c=c) if math.isfinite(c) else math.nan
    pl, ph = x["p_loss"].to_numpy(dtype=float), x["p_halving"].to_numpy(dtype=float)
    ok = ph > 0
    out["loss/halving"] = float(np.median(pl[ok] / ph[ok])) if ok.any() else math.nan
    return out


def _per_flow_quartiles(r: RunResult) -> dict[str, float]:
    """D4: quartiles of the per-flow mean throughput in the window and Jain's index
    over all flows."""
    warmup, _ = _window(r)
    g = flow_goodput(r.flows, warmup)["goodput_bps"].to_numpy(dtype=float) / 1e6
    if g.size == 0:
        return {}
    q1, q2, q3 = np.quantile(g, [0.25, 0.5, 0.75])
    return {"flow_q1_mbps": float(q1), "flow_median_mbps": float(q2), "flow_q3_mbps": float(q3)}


def _per_tcp(r: RunResult) -> dict[str, float]:
    """D4 mixed: per TCP, the average per-flow throughput, its share and Jain's index."""
    warmup, _ = _window(r)
    g = flow_goodput(r.flows, warmup)["goodput_bps"].to_numpy(dtype=float) / 1e6
    groups = r.flows["group"].astype(str).to_numpy()
    out: dict[str, float] = {}
    total = g.sum()
    for name in dict.fromkeys(groups):
        mine = g[groups == name]
        out[f"avg_mbps[{name}]"] = float(mine.mean())
        out[f"share[{name}]"] = float(mine.sum() / total) if total > 0 else math.nan
        out[f"jain[{name}]"] = jain_index(mine)
    return out


def _flood_window(r: RunResult) -> tuple[int, int] | None:
    """The mice flood as (start ns, end ns): the spec's group of fixed-size flows whose
    starts are spread by ``start_jitter``."""
    from ..units import parse_duration

    for g in r.manifest.get("spec", {}).get("flows", []):
        if g.get("size") and g.get("start_jitter"):
            start = parse_duration(g.get("start", "0s"))
            return start, start + parse_duration(g["start_jitter"])
    return None


def _goodput_between(flow_ts: pd.DataFrame, flow_ids: Any, t0: int, t1: int) -> float:
    """The flows' summed goodput (bit/s) from t0 to t1, each flow's cumulative
    ``delivered_bytes`` read at its last samples at or before t0 and t1 and divided by
    the time between those samples (so a window edge between samples costs nothing)."""
    total = 0.0
    for _, df in flow_ts[flow_ts["flow_id"].isin(flow_ids)].groupby("flow_id"):
        order = np.argsort(df["time_ns"].to_numpy(), kind="stable")
        t = df["time_ns"].to_numpy(dtype=np.int64)[order]
        d = df["delivered_bytes"].to_numpy(dtype=np.int64)[order]
        i0, i1 = np.searchsorted(t, [t0, t1], side="right") - 1
        if i0 >= 0 and i1 > i0:
            total += float(d[i1] - d[i0]) * 8e9 / float(t[i1] - t[i0])
    return total


def _mice_flood(r: RunResult) -> dict[str, float]:
    """The elephants' goodput in the second half of the time before the flood and
    during it (less its first tenth, while the flood builds up), what the flood leaves
    them (the rate in goodput terms less the mice's goodput), and the mice's median FCT."""
    window = _flood_window(r)
    if window is None:
        return {}
    start, end = window
    flows = r.flows
    mice = flows["size_bytes"].to_numpy(dtype=np.int64) >= 0
    elephants = flows.loc[~mice, "flow_id"].to_numpy()

    def mbps(t0: int, t1: int) -> float:
        return _goodput_between(r.flow_ts, elephants, t0, t1) / 1e6

    before = mbps(start // 2, start)
    during = mbps(start + (end - start) // 10, end)
    mice_mbps = float(flows.loc[mice, "delivered_bytes"].sum()) * 8 / ((end - start) / 1e9) / 1e6
    packet = float(r.derived.get("buffer", {}).get("packet_bytes", math.nan))
    mss = float(flows.loc[~mice, "mss"].iloc[0]) if (~mice).any() else math.nan
    rate = float(r.derived.get("bottleneck", {}).get("rate_bps", math.nan)) / 1e6
    left = rate * mss / packet - mice_mbps
    fct = flows.loc[mice, "fct_ns"].to_numpy(dtype=np.int64)
    done = fct[fct >= 0]
    return {
        "elephants before Mbit/s": before,
        "elephants during Mbit/s": during,
        "elephant loss Mbit/s": before - during,
        "mice Mbit/s": mice_mbps,
        "left by the flood Mbit/s": left,
        "during/left": during / left if left > 0 else math.nan,
        "mice FCT median ms": float(np.median(done)) / 1e6 if done.size else math.nan,
        "mice completed": done.size / fct.size if fct.size else math.nan,
    }


#: layout name -> per-run extras (layouts not listed have none: the index suffices).
LAYOUT_EXTRAS: dict[str, Callable[[RunResult], dict[str, float]]] = {
    "pairs": _pairs,
    "responsiveness": _responsiveness,
    "convergence": _convergence,
    "bw-changes": _bw_changes,
    "phases": _phases,
    "mathis": _mathis,
    "aqm": _per_flow_quartiles,
    "pertcp": _per_tcp,
    "mice-flood": _mice_flood,
}
