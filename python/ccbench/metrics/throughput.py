"""Throughput family: metrics.md §1, **M-TPUT** (per flow, per sender, per CCA, time
series) and, for the per-group aggregate's share of the total, **M-SHARE**.

Throughput here is *goodput*: in-order payload bytes delivered to the receiver
(``flows.delivered_bytes``), in bit/s. The measurement window of a flow is
[max(warmup, start), end], where ``end`` is when the flow stopped being active
(``flows.end_ns``: completion, stop, or the end of the run) and ``start`` is its
actual start including jitter; the bytes counted are those delivered after the
warm-up, ``delivered_bytes - delivered_bytes_at_warmup``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = [
    "aggregate_goodput",
    "flow_goodput",
    "goodput_timeseries",
    "group_timeseries",
    "moving_average",
    "total_goodput",
    "window_bytes",
]

_LABELS = ("flow_id", "sender_name", "group", "cca")


def window_bytes(flows: pd.DataFrame) -> np.ndarray:
    """Payload bytes each flow delivered after the warm-up (int64 array)."""
    return flows["delivered_bytes"].to_numpy(dtype=np.int64) - flows["delivered_bytes_at_warmup"].to_numpy(
        dtype=np.int64
    )


def _window_ns(warmup_ns: int, duration_ns: int) -> int:
    window = int(duration_ns) - int(warmup_ns)
    if window <= 0:
        raise ValueError(f"empty measurement window: warmup {warmup_ns} ns >= duration {duration_ns} ns")
    return window


def total_goodput(flows: pd.DataFrame, *, warmup_ns: int, duration_ns: int) -> float:
    """M-TPUT total: bytes all flows delivered in [warmup, duration] × 8 / (duration − warmup)."""
    return float(window_bytes(flows).sum() * 8e9 / _window_ns(warmup_ns, duration_ns))


def flow_goodput(flows: pd.DataFrame, warmup_ns: int) -> pd.DataFrame:
    """M-TPUT per flow: T_i = bytes_i(W) · 8 / |W| over the flow's window W.

    Returns one row per flow with ``window_start_ns``, ``window_end_ns``, ``bytes`` and
    ``goodput_bps``; a flow not active during the measurement window has NaN goodput.
    """
    start = np.maximum(flows["start_ns"].to_numpy(dtype=np.int64), int(warmup_ns))
    end = flows["end_ns"].to_numpy(dtype=np.int64)
    nbytes = window_bytes(flows)
    span = end - start
    with np.errstate(divide="ignore", invalid="ignore"):
        goodput = np.where(span > 0, nbytes * 8e9 / np.where(span > 0, span, 1), np.nan)
    out = pd.DataFrame({c: flows[c].to_numpy() for c in _LABELS if c in flows.columns})
    out["window_start_ns"] = start
    out["window_end_ns"] = end
    out["bytes"] = nbytes
    out["goodput_bps"] = goodput
    return out


def aggregate_goodput(flows: pd.DataFrame, *, warmup_ns: int, duration_ns: int, by: str) -> pd.DataFrame:
    """M-TPUT per sender (``by="sender_name"``), per CCA (``by="cca"``) or per group:
    the bytes all flows of a key delivered in the measurement window
    [warmup, duration], × 8 / (duration − warmup). ``share`` is the key's fraction of
    the total (M-SHARE). Rows are sorted by key."""
    window = _window_ns(warmup_ns, duration_ns)
    keys, index = np.unique(flows[by].astype(str).to_numpy(), return_inverse=True)  # sorted keys
    nbytes = np.zeros(len(keys), dtype=np.int64)
    np.add.at(nbytes, index, window_bytes(flows))  # exact integer sums (numpy, not a pandas groupby: fast)
    out = pd.DataFrame({by: keys, "flows": np.bincount(index, minlength=len(keys)), "bytes": nbytes})
    out["goodput_bps"] = out["bytes"] * 8e9 / window
    total = out["bytes"].sum()
    out["share"] = out["bytes"] / total if total > 0 else np.nan
    return out


def goodput_timeseries(flow_ts: pd.DataFrame, bin_ns: int) -> pd.DataFrame:
    """M-TPUT time series: per flow, goodput in consecutive bins of ``bin_ns``.

    Cumulative ``delivered_bytes`` is read as a step function of the samples (the
    value at a bin edge is that of the last sample at or before it; 0 before the
    first sample); a bin's goodput is the difference across it × 8 / bin. Bins end at
    multiples of ``bin_ns`` up to the last sample. ``bin_ns`` should be a multiple of
    the sample interval so that bin edges fall on samples.
    """
    if bin_ns <= 0:
        raise ValueError(f"bin_ns must be > 0, not {bin_ns}")
    rows = []
    for fid, df in flow_ts.groupby("flow_id", sort=True):
        t = df["time_ns"].to_numpy(dtype=np.int64)
        order = np.argsort(t, kind="stable")
        t = t[order]
        d = df["delivered_bytes"].to_numpy(dtype=np.int64)[order]
        if len(t) == 0:
            continue
        edges = np.arange(0, t[-1] + 1, bin_ns, dtype=np.int64)
        idx = np.searchsorted(t, edges, side="right") - 1
        at_edge = np.where(idx >= 0, d[np.maximum(idx, 0)], 0)
        rows.append(
            pd.DataFrame({"flow_id": fid, "time_ns": edges[1:], "goodput_bps": np.diff(at_edge) * 8e9 / bin_ns})
        )
    if not rows:
        return pd.DataFrame(
            {
                "flow_id": pd.Series(dtype="uint64"),
                "time_ns": pd.Series(dtype="int64"),
                "goodput_bps": pd.Series(dtype="float64"),
            }
        )
    return pd.concat(rows, ignore_index=True)


def group_timeseries(series: pd.DataFrame, flows: pd.DataFrame, *, by: str) -> pd.DataFrame:
    """M-TPUT time series per group (``by`` = ``"group"``, ``"cca"``, ``"sender_name"``)
    or in total (``by="total"``): the per-flow bins of :func:`goodput_timeseries`
    summed over the flows of each key. Columns ``by``, ``time_ns``, ``goodput_bps``."""
    if by == "total":
        keys = pd.Series("total", index=series.index)
    else:
        labels = dict(zip(flows["flow_id"].to_numpy(), flows[by].astype(str).to_numpy(), strict=True))
        keys = series["flow_id"].map(labels)
    df = series.assign(**{by: keys.to_numpy()})
    return df.groupby([by, "time_ns"], sort=True, as_index=False)["goodput_bps"].sum()


def moving_average(time_ns: np.ndarray, values: np.ndarray, window_ns: int) -> np.ndarray:
    """Trailing moving average: at each sample time t, the mean of the samples in
    (t − window, t]. Samples must be evenly spaced bins (as from
    :func:`goodput_timeseries`); the first window − 1 bins average what there is."""
    t = np.asarray(time_ns, dtype=np.int64)
    v = np.asarray(values, dtype=float)
    if window_ns <= 0:
        raise ValueError(f"window_ns must be > 0, not {window_ns}")
    lo = np.searchsorted(t, t - window_ns, side="right")
    csum = np.concatenate([[0.0], np.cumsum(v)])
    idx = np.arange(len(t))
    return (csum[idx + 1] - csum[lo]) / (idx + 1 - lo)
