"""Convergence and recovery family: metrics.md §5.

- **M-EPS-CONV** ε-convergence time t_c with the EMA u_i(t+δ) (D1, after Li et al.)
  and **M-SPREAD**, the spread after convergence (:func:`eps_convergence`);
- **M-CONV-JFI** time until Jain's index over windows reaches a threshold (D2)
  (:func:`jfi_convergence_time`);
- **M-T90** time to reach 90 % of the available throughput after a bandwidth change
  (D2) (:func:`time_to_fraction`);
- **M-DOS-REC** recovery time after a DoS burst (D2 §4.5.2.4) (:func:`dos_recovery_time`;
  for every burst of a run, the bursts being the flows with a stop time:
  :func:`burst_windows`, :func:`elephant_flows`, :func:`burst_recovery`).

Times that are never reached are *censored*, not dropped: the result carries
``reached=False`` and, as ``seconds``, the time observed without reaching it (a lower
bound), because D2 reports such runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from .fairness import jain_timeseries
from .throughput import goodput_timeseries, group_timeseries, moving_average

__all__ = [
    "EpsConvergence",
    "TimeToEvent",
    "burst_recovery",
    "burst_windows",
    "dos_recovery_time",
    "elephant_flows",
    "ema_throughput",
    "eps_convergence",
    "jfi_convergence_time",
    "time_to_fraction",
]


class TimeToEvent(NamedTuple):
    """A duration that may be censored: ``reached=False`` means the event did not
    happen before the data ended and ``seconds`` is the time observed (a lower bound)."""

    seconds: float
    reached: bool


def _first_at_or_after(t: np.ndarray, ok: np.ndarray, origin_ns: int, end_ns: int | None) -> TimeToEvent:
    mask = ok & (t >= origin_ns)
    if mask.any():
        return TimeToEvent((int(t[np.argmax(mask)]) - origin_ns) / 1e9, True)
    last = int(end_ns if end_ns is not None else (t[-1] if len(t) else origin_ns))
    return TimeToEvent(max(last - origin_ns, 0) / 1e9, False)


def ema_throughput(delivered_bytes: np.ndarray, *, delta_ns: int, lam: float = 0.1, u0: float = 0.0) -> np.ndarray:
    """The short-term average throughput of M-EPS-CONV (D1):
    ``u(t+δ) = (1 − λ)·u(t) + λ·Δu/δ`` in bit/s, from the cumulative delivered bytes
    sampled every δ (``delivered_bytes[k]`` at k·δ after the origin). ``u0`` is
    u(0), **[impl. choice]** 0 (not stated in D1). Returns u at each sample after the
    first."""
    d = np.asarray(delivered_bytes, dtype=float)
    rates = np.diff(d) * 8e9 / delta_ns
    u = np.empty(len(rates))
    prev = float(u0)
    for k, r in enumerate(rates):
        prev = (1 - lam) * prev + lam * r
        u[k] = prev
    return u


class EpsConvergence(NamedTuple):
    """M-EPS-CONV and M-SPREAD of one flow: ``t_c`` (censored), the long-term average
    ``u_bar_bps`` and the ``spread_bps`` (NaN when never converged)."""

    t_c: TimeToEvent
    u_bar_bps: float
    spread_bps: float


def eps_convergence(
    flow_ts: pd.DataFrame,
    flow_id: int,
    *,
    delta_ns: int = 1_000_000_000,
    lam: float = 0.1,
    eps: float = 0.8,
    origin_ns: int | None = None,
    spread_denominator: str = "all",
) -> EpsConvergence:
    """M-EPS-CONV: ``t_c = min{t : u_i(t) ≥ ε·ū_i}`` of flow ``flow_id`` and
    M-SPREAD ``s = Σ_{t ≥ t_c} |ū_i − u_i(t)| / T``.

    Parameters (D1 defaults): λ = 0.1, ε = 0.8. **[impl. choice]**: δ = 1 s (D1 does
    not state it; iperf3 reports every second); the origin of t is the flow's first
    sample (its start; D1 analyses the new stream) unless ``origin_ns`` is given;
    ū_i is the flow's average over all its samples; u(0) = 0. The cumulative bytes are
    read at origin + k·δ from the samples (step function), so δ should be a multiple
    of the sample interval. ``spread_denominator="all"`` divides by the number of all
    measurements T as D1's formula is written; ``"after"`` by those from t_c on.
    """
    if spread_denominator not in ("all", "after"):
        raise ValueError(f"spread_denominator must be 'all' or 'after', not {spread_denominator!r}")
    df = flow_ts[flow_ts["flow_id"] == flow_id].sort_values("time_ns", kind="stable")
    if df.empty:
        raise ValueError(f"flow {flow_id} has no samples")
    t = df["time_ns"].to_numpy(dtype=np.int64)
    d = df["delivered_bytes"].to_numpy(dtype=np.int64)
    origin = int(t[0] if origin_ns is None else origin_ns)
    grid = np.arange(origin, int(t[-1]) + 1, delta_ns, dtype=np.int64)
    if len(grid) < 2:
        return EpsConvergence(TimeToEvent(max(int(t[-1]) - origin, 0) / 1e9, False), float("nan"), float("nan"))
    idx = np.searchsorted(t, grid, side="right") - 1
    cum = np.where(idx >= 0, d[np.maximum(idx, 0)], 0)
    u = ema_throughput(cum, delta_ns=delta_ns, lam=lam)
    u_bar = float((cum[-1] - cum[0]) * 8e9 / (grid[-1] - grid[0]))
    times = grid[1:]
    t_c = _first_at_or_after(times, u >= eps * u_bar, origin, int(t[-1]))
    if not t_c.reached:
        return EpsConvergence(t_c, u_bar, float("nan"))
    k = int(np.argmax(u >= eps * u_bar))
    after = np.abs(u_bar - u[k:])
    denom = len(u) if spread_denominator == "all" else len(after)
    return EpsConvergence(t_c, u_bar, float(after.sum() / denom))


def jfi_convergence_time(
    series: pd.DataFrame,
    flows: pd.DataFrame | None = None,
    *,
    threshold: float = 0.9,
    window_ns: int = 5_000_000_000,
    origin_ns: int | None = None,
    must_stay: bool = False,
    end_ns: int | None = None,
) -> TimeToEvent:
    """M-CONV-JFI: the time from ``origin_ns`` until Jain's index over ``window_ns``
    windows (the moving average of per-bin indices, :func:`jain_timeseries`) first
    reaches ``threshold``.

    Defaults: threshold 0.9 (D2 Ch. 4; Ch. 5 uses 0.95), window 5 s. **[impl.
    choice]**: the origin is the latest flow start (the moment every flow competes;
    D2 staggers the second flow) when ``flows`` is given, else the first bin; only
    full windows after the origin count; ``must_stay=True`` requires the index to
    stay at or above the threshold until the end (D2 does not say). Censored at
    ``end_ns`` (default: the last bin) when never reached.
    """
    js = jain_timeseries(series, flows, window_ns=window_ns)
    t = js["time_ns"].to_numpy(dtype=np.int64)
    if len(t) == 0:
        return TimeToEvent(0.0, False)
    if origin_ns is None:
        origin_ns = int(flows["start_ns"].max()) if flows is not None else int(t[0])
    j = js["jain"].to_numpy(dtype=float)
    ok = np.nan_to_num(j, nan=-1.0) >= threshold
    ok &= t >= origin_ns + window_ns  # a full window of competition
    if must_stay:
        # ok[i] only if every later full window is also fair
        ok = np.flip(np.logical_and.accumulate(np.flip(ok | (t < origin_ns + window_ns)))) & ok
    return _first_at_or_after(t, ok, origin_ns, end_ns)


def time_to_fraction(
    time_ns: np.ndarray,
    throughput_bps: np.ndarray,
    *,
    change_ns: int,
    target_bps: float,
    fraction: float = 0.9,
    window_ns: int = 5_000_000_000,
    end_ns: int | None = None,
) -> TimeToEvent:
    """M-T90: ``t90 = min{t ≥ t_change : MA_w(T)(t) ≥ fraction · C_available} − t_change``
    on a throughput series (bins ending at ``time_ns``), with a trailing moving
    average over ``window_ns``.

    Defaults: fraction 0.9, window 5 s (D2 §3.3.4; §4.5.1.2 uses 10 s).
    ``target_bps`` is C_available, e.g. the rate after the change from the link's
    schedule. **[impl. choice]**: the moving average only uses bins after the change
    (a window straddling the change would mix in the old rate). Censored when not
    reached.
    """
    t = np.asarray(time_ns, dtype=np.int64)
    v = np.asarray(throughput_bps, dtype=float)
    after = t > change_ns
    ma = np.full(len(t), np.nan)
    if after.any():
        ma[after] = moving_average(t[after], v[after], window_ns)
    return _first_at_or_after(t, np.nan_to_num(ma, nan=-1.0) >= fraction * target_bps, change_ns, end_ns)


def dos_recovery_time(
    time_ns: np.ndarray,
    throughput_bps: np.ndarray,
    *,
    attack_start_ns: int,
    attack_end_ns: int,
    pre_start_ns: int = 0,
    fraction: float = 0.9,
    window_ns: int = 10_000_000_000,
    end_ns: int | None = None,
) -> TimeToEvent:
    """M-DOS-REC: ``t_rec = min{t ≥ t_end : MA_10s(T)(t) ≥ 0.9 · T̄_pre} − t_end``.

    T̄_pre is the mean of the bins in [pre_start_ns, attack_start_ns) (**[impl.
    choice]** default from 0 s; pass the end of the previous phase for later bursts).
    The moving average after the burst uses bins after ``attack_end_ns`` only, as in
    :func:`time_to_fraction`. Defaults: window 10 s, fraction 0.9 (D2). Censored
    when the flow does not recover before the data ends; NaN seconds when there is
    no pre-attack data.
    """
    t = np.asarray(time_ns, dtype=np.int64)
    v = np.asarray(throughput_bps, dtype=float)
    pre = v[(t > pre_start_ns) & (t <= attack_start_ns)]
    if pre.size == 0:
        return TimeToEvent(float("nan"), False)
    return time_to_fraction(
        t,
        v,
        change_ns=attack_end_ns,
        target_bps=float(pre.mean()),
        fraction=fraction,
        window_ns=window_ns,
        end_ns=end_ns,
    )


def burst_windows(
    flows: pd.DataFrame, engine_flows: Sequence[Mapping[str, Any]] | None = None
) -> list[tuple[int, int]]:
    """The windows of burst traffic (DoS bursts, mice floods) in a run, merged and in
    time order: the active intervals [start_ns, end_ns] of the flows that have a stop
    time (``stop_ns >= 0``: traffic on for a set interval) and, given the engine
    config's flow groups (``engine_flows``), every scheduled burst of their inelastic
    sources (``app.bursts``, ``docs/traffic.md``)."""
    timed = flows[flows["stop_ns"].to_numpy(dtype=np.int64) >= 0]
    spans = [
        (int(a), int(b))
        for a, b in zip(
            timed["start_ns"].to_numpy(dtype=np.int64), timed["end_ns"].to_numpy(dtype=np.int64), strict=True
        )
    ]
    for group in engine_flows or ():
        app = group.get("app") or {}
        spans += [(int(b["start_ns"]), int(b["end_ns"])) for b in app.get("bursts") or ()]
    merged: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def elephant_flows(flows: pd.DataFrame) -> pd.DataFrame:
    """The elephant traffic that bursts interrupt: bulk TCP flows (no size, no stop
    time); inelastic (UDP) sources are the bursts, never elephants."""
    bulk = (flows["size_bytes"].to_numpy(dtype=np.int64) < 0) & (flows["stop_ns"].to_numpy(dtype=np.int64) < 0)
    if "cca" in flows.columns:
        bulk &= flows["cca"].to_numpy() != "udp"
    return flows[bulk]


def burst_recovery(
    flows: pd.DataFrame,
    flow_ts: pd.DataFrame,
    *,
    duration_ns: int,
    bin_ns: int = 1_000_000_000,
    fraction: float = 0.9,
    window_ns: int = 10_000_000_000,
    engine_flows: Sequence[Mapping[str, Any]] | None = None,
) -> pd.DataFrame:
    """M-DOS-REC for every burst of a run (:func:`burst_windows`, which reads
    ``engine_flows`` for scheduled UDP bursts): the recovery of the
    elephant traffic — the bulk flows without a stop time, summed — after each burst,
    by :func:`dos_recovery_time` on its goodput in ``bin_ns`` bins. **[impl. choice]**
    the pre-attack mean is taken from the end of the previous burst (D2's phases), and
    recovery is looked for until the next burst starts (censored otherwise). One row
    per burst: ``burst``, ``start_ns``, ``end_ns``, ``pre_bps``, ``recovery_s``,
    ``recovered``. Empty without bursts or elephants."""
    cols = ["burst", "start_ns", "end_ns", "pre_bps", "recovery_s", "recovered"]
    bursts = burst_windows(flows, engine_flows)
    bulk = elephant_flows(flows)
    if not bursts or bulk.empty:
        return pd.DataFrame(columns=cols)
    ts = goodput_timeseries(flow_ts[flow_ts["flow_id"].isin(bulk["flow_id"])], bin_ns)
    if ts.empty:
        return pd.DataFrame(columns=cols)
    total = group_timeseries(ts, bulk, by="total")
    t, v = total["time_ns"].to_numpy(dtype=np.int64), total["goodput_bps"].to_numpy(dtype=float)
    rows = []
    for i, (a, b) in enumerate(bursts):
        prev_end = bursts[i - 1][1] if i else 0
        next_start = bursts[i + 1][0] if i + 1 < len(bursts) else duration_ns
        pre = v[(t > prev_end) & (t <= a)]
        r = dos_recovery_time(
            t, v, attack_start_ns=a, attack_end_ns=b, pre_start_ns=prev_end,
            fraction=fraction, window_ns=window_ns, end_ns=next_start,
        )  # fmt: skip
        rows.append([i + 1, a, b, float(pre.mean()) if pre.size else float("nan"), r.seconds, r.reached])
    return pd.DataFrame(rows, columns=cols)
