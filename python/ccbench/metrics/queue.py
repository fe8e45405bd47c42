"""Queueing family: metrics.md §4–6, **M-QLEN** (mean and standard deviation of the
queue length), **M-NQ** (the same normalized by the buffer size) and **M-DROP**
(packet drop ratio at the bottleneck).

All functions read the ``queue_ts`` samples of one link (default ``"bottleneck"``)
within a window [start_ns, end_ns] (pass the warm-up as ``start_ns`` for the
measurement window).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["drop_ratio", "occupancy"]


def _link(queue_ts: pd.DataFrame, link: str) -> pd.DataFrame:
    df = queue_ts[queue_ts["link"].astype(str) == link]
    return df.sort_values("time_ns", kind="stable")


def occupancy(
    queue_ts: pd.DataFrame,
    *,
    link: str = "bottleneck",
    start_ns: int = 0,
    end_ns: int | None = None,
    limit_packets: int | None = None,
    limit_bytes: int | None = None,
) -> dict[str, float]:
    """M-QLEN: mean and (population) standard deviation of the backlog samples in the
    window, in packets and bytes; with a buffer limit also M-NQ (``norm_mean``,
    ``norm_std``: backlog / limit). NaN when there are no samples."""
    df = _link(queue_ts, link)
    t = df["time_ns"].to_numpy(dtype=np.int64)
    keep = (t >= start_ns) & (t <= end_ns if end_ns is not None else True)
    pk = df["backlog_pkts"].to_numpy(dtype=float)[keep]
    by = df["backlog_bytes"].to_numpy(dtype=float)[keep]
    nan = float("nan")
    out = {
        "samples": float(pk.size),
        "mean_pkts": float(pk.mean()) if pk.size else nan,
        "std_pkts": float(pk.std()) if pk.size else nan,
        "mean_bytes": float(by.mean()) if by.size else nan,
        "std_bytes": float(by.std()) if by.size else nan,
    }
    if limit_packets:
        out["norm_mean"] = out["mean_pkts"] / limit_packets
        out["norm_std"] = out["std_pkts"] / limit_packets
    elif limit_bytes:
        out["norm_mean"] = out["mean_bytes"] / limit_bytes
        out["norm_std"] = out["std_bytes"] / limit_bytes
    return out


def drop_ratio(queue_ts: pd.DataFrame, *, link: str = "bottleneck", start_ns: int = 0) -> dict[str, float]:
    """M-DROP: dropped / arriving packets × 100 at ``link`` from ``start_ns`` to the
    last sample, **[impl. choice]** arrivals = enqueued + dropped (a packet refused at
    the tail is counted as dropped, not enqueued). Counters are read at the last
    sample at or before ``start_ns`` (0 before the first sample) and at the last
    sample. Returns ``drops``, ``arrivals`` and ``drop_pct`` (NaN if no arrivals)."""
    df = _link(queue_ts, link)
    if df.empty:
        return {"drops": 0.0, "arrivals": 0.0, "drop_pct": float("nan")}
    t = df["time_ns"].to_numpy(dtype=np.int64)
    drops = df["dropped_pkts"].to_numpy(dtype=np.int64)
    enq = df["enqueued_pkts"].to_numpy(dtype=np.int64)
    i0 = int(np.searchsorted(t, start_ns, side="right")) - 1
    d0, e0 = (int(drops[i0]), int(enq[i0])) if i0 >= 0 else (0, 0)
    d = int(drops[-1]) - d0
    arrivals = d + int(enq[-1]) - e0
    return {
        "drops": float(d),
        "arrivals": float(arrivals),
        "drop_pct": 100.0 * d / arrivals if arrivals else float("nan"),
    }
