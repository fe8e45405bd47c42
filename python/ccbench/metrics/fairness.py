"""Fairness family: metrics.md §2.

- **M-JFI** Jain's index ``J(x_1..x_n) = (Σ x_i)² / (n · Σ x_i²)``, 1/n ≤ J ≤ 1
  (:func:`jain_index`);
- **M-JFI-SENDER** over per-sender aggregate throughputs (D0) and **M-JFI-FLOWMEAN**
  over per-flow mean throughputs (D1) (:func:`jain_senders`, :func:`jain_flowmean`);
- **M-JFI-GROUP** within each group of flows (e.g. one CCA) and over all flows, named
  by construction, not with D4's inverted "inter"/"intra" labels (:func:`jain_by_group`);
- **M-JFI-TS** Jain's index over time windows (D2) (:func:`jain_timeseries`);
- **M-JFI-PL** parking-lot index, the mean of the pairwise indices of the long flow
  with each short flow (D2 §4.5.2.5) (:func:`jain_parking_lot`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from .throughput import aggregate_goodput, flow_goodput

__all__ = [
    "jain_by_group",
    "jain_flowmean",
    "jain_index",
    "jain_parking_lot",
    "jain_senders",
    "jain_timeseries",
]


def jain_index(values: Iterable[float]) -> float:
    """M-JFI of the finite values given (NaNs, i.e. flows not active in the window,
    are left out). NaN when no value is left or all are zero (the index is 0/0)."""
    x = np.asarray(list(values) if not isinstance(values, (np.ndarray, pd.Series)) else values, dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return float("nan")
    if np.any(x < 0):
        raise ValueError("Jain's index is defined for non-negative values")
    peak = float(x.max())
    if peak == 0.0:
        return float("nan")
    x = x / peak  # scale-free, and no under/overflow in the squares
    return float(np.sum(x) ** 2 / (x.size * np.sum(x * x)))


def jain_senders(flows: pd.DataFrame, *, warmup_ns: int, duration_ns: int) -> float:
    """M-JFI-SENDER (D0 Eq. 2): J over the senders' aggregate goodputs S_1..S_n in
    the measurement window. NaN with fewer than two senders (the index of one value
    is trivially 1 and says nothing)."""
    senders = aggregate_goodput(flows, warmup_ns=warmup_ns, duration_ns=duration_ns, by="sender_name")
    return jain_index(senders["goodput_bps"]) if len(senders) > 1 else float("nan")


def jain_flowmean(flows: pd.DataFrame, *, warmup_ns: int) -> float:
    """M-JFI-FLOWMEAN (D1): J over each flow's mean goodput over its own measurement
    window (flows inactive in the window are left out)."""
    return jain_index(flow_goodput(flows, warmup_ns)["goodput_bps"])


def jain_by_group(
    df: pd.DataFrame, *, by: str = "group", value: str = "goodput_bps", all_label: str = "(all)"
) -> pd.DataFrame:
    """M-JFI-GROUP: Jain's index of ``value`` within each ``by`` group (e.g. the flows
    of one CCA) and over all rows (label ``all_label``). Columns: ``by``, ``n``, ``jain``."""
    rows = [
        {by: str(key), "n": int(np.isfinite(g[value].to_numpy(dtype=float)).sum()), "jain": jain_index(g[value])}
        for key, g in df.groupby(df[by].astype(str), sort=True)
    ]
    rows.append(
        {by: all_label, "n": int(np.isfinite(df[value].to_numpy(dtype=float)).sum()), "jain": jain_index(df[value])}
    )
    return pd.DataFrame(rows, columns=[by, "n", "jain"])


def jain_timeseries(
    series: pd.DataFrame,
    flows: pd.DataFrame | None = None,
    *,
    window_ns: int | None = None,
    mode: str = "mean_of_bins",
) -> pd.DataFrame:
    """M-JFI-TS: Jain's index over time from a per-flow throughput time series
    (``flow_id``, ``time_ns`` = end of bin, ``goodput_bps``; e.g.
    :func:`~ccbench.metrics.throughput.goodput_timeseries`).

    Only flows active in a bin enter its index (D2 NCF: "concurrent flows"): with
    ``flows`` given, a flow is active in bin (t − bin, t] if its [start_ns, end_ns)
    overlaps it; without, every flow with a sample in the bin counts.

    **[impl. choice]** (metrics.md leaves the windowing open): ``window_ns=None``
    gives the per-bin index (D2 NCF: every 80 ms with an 80 ms bin). With a window,
    the result at t covers the trailing window (t − window, t]:
    ``mode="mean_of_bins"`` (default) averages the per-bin indices (D2 recipe: "the
    moving average of JFI over 5 s windows"), ``mode="of_window_means"`` takes the
    index of the flows' mean throughputs over the window.

    Returns ``time_ns``, ``n_active``, ``jain`` (NaN where no flow is active).
    """
    if mode not in ("mean_of_bins", "of_window_means"):
        raise ValueError(f"mode must be 'mean_of_bins' or 'of_window_means', not {mode!r}")
    if series.empty:
        return pd.DataFrame({"time_ns": pd.Series(dtype="int64"), "n_active": [], "jain": []})
    wide = series.pivot_table(index="time_ns", columns="flow_id", values="goodput_bps", aggfunc="sum").sort_index()
    times = wide.index.to_numpy(dtype=np.int64)
    bin_ns = int(np.min(np.diff(times))) if len(times) > 1 else int(times[0])
    if flows is not None:
        info = flows.set_index("flow_id").reindex(wide.columns)
        start = info["start_ns"].to_numpy(dtype=np.int64)
        end = info["end_ns"].to_numpy(dtype=np.int64)
        active = (start[None, :] < times[:, None]) & (end[None, :] > times[:, None] - bin_ns)
        wide = wide.where(active)
    values = wide.to_numpy(dtype=float)
    per_bin = np.array([jain_index(row) for row in values])
    n_active = np.isfinite(values).sum(axis=1)
    if window_ns is None:
        return pd.DataFrame({"time_ns": times, "n_active": n_active, "jain": per_bin})
    if window_ns < bin_ns:
        raise ValueError(f"window_ns ({window_ns}) must be at least the bin ({bin_ns} ns)")
    k = int(window_ns // bin_ns)
    out = np.full(len(times), np.nan)
    for i in range(k - 1, len(times)):
        if mode == "mean_of_bins":
            block = per_bin[i - k + 1 : i + 1]
            out[i] = float(np.nanmean(block)) if np.isfinite(block).any() else np.nan
        else:
            with np.errstate(all="ignore"):
                block = values[i - k + 1 : i + 1]
                means = np.array([np.nanmean(c) if np.isfinite(c).any() else np.nan for c in block.T])
            out[i] = jain_index(means)
    return pd.DataFrame({"time_ns": times, "n_active": n_active, "jain": out})


def jain_parking_lot(long_bps: float, short_bps: Sequence[float]) -> float:
    """M-JFI-PL (D2 §4.5.2.5): ``J_PL = mean_k J(T_long, T_short_k)``, the average of
    the two-flow indices of the flow crossing every bottleneck with each
    single-bottleneck flow. NaN with no short flow; pairs with an undefined index
    (both zero) are left out of the mean."""
    pairs = [jain_index([long_bps, s]) for s in short_bps]
    pairs = [p for p in pairs if np.isfinite(p)]
    return float(np.mean(pairs)) if pairs else float("nan")
