"""Flow-completion family: metrics.md §8.

- **M-FCT** flow completion time per flow and per size bucket (:func:`flow_completion`,
  :func:`by_size_bucket`);
- **M-FCT-SLOWDOWN** ``oFCT / eFCT`` with D2's piecewise ideal FCT (Eq. 4.1)
  (:func:`expected_fct`, :func:`fct_slowdown`);
- **M-FLOWCOUNT** flows started and completed, and the fraction transmitting
  effectively (:func:`flow_counts`).

Contract: the ``flows`` table's ``size_bytes`` (−1 = bulk), ``completed``, ``fct_ns``
(−1 = not completed), ``start_ns``, ``min_rtt_ns``/``base_rtt_ns`` and ``mss`` —
finite flows from any workload generator arrive as rows of this table. A flow that
opens with a handshake has its FCT from the first SYN; the optional ``setup_ns``,
``syn_retrans`` and ``setup_failed`` give its connection setup (:func:`connection_setup`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = [
    "DEFAULT_SIZE_EDGES",
    "by_size_bucket",
    "connection_setup",
    "expected_fct",
    "fct_slowdown",
    "flow_completion",
    "flow_counts",
]

#: Bucket upper edges in bytes, after D2's labels ("100", "1.5K", "15K", …); the
#: last bucket is open.
DEFAULT_SIZE_EDGES: tuple[int, ...] = (100, 1_500, 15_000, 150_000, 1_500_000, 15_000_000)


def flow_completion(flows: pd.DataFrame) -> pd.DataFrame:
    """M-FCT: one row per finite flow (``size_bytes >= 0``): ``flow_id``, ``group``,
    ``cca``, ``size_bytes``, ``start_ns``, ``end_ns`` (−1 if not completed),
    ``base_rtt_ns``, ``segs_retrans`` (when the table has them), ``completed``,
    ``fct_s`` (observed FCT in seconds, NaN if not completed)."""
    finite = flows[flows["size_bytes"].to_numpy(dtype=np.int64) >= 0]
    fct = finite["fct_ns"].to_numpy(dtype=np.int64)
    out = pd.DataFrame(
        {
            "flow_id": finite["flow_id"].to_numpy(),
            "group": finite["group"].astype(str).to_numpy() if "group" in finite else "",
            "cca": finite["cca"].astype(str).to_numpy() if "cca" in finite else "",
            "size_bytes": finite["size_bytes"].to_numpy(dtype=np.int64),
            "start_ns": finite["start_ns"].to_numpy(dtype=np.int64),
            "end_ns": np.where(fct >= 0, finite["start_ns"].to_numpy(dtype=np.int64) + fct, -1),
            "completed": finite["completed"].to_numpy(dtype=bool) & (fct >= 0),
            "fct_s": np.where(fct >= 0, fct / 1e9, np.nan),
        }
    )
    for col in ("base_rtt_ns", "segs_retrans"):
        if col in finite:
            out.insert(len(out.columns) - 2, col, finite[col].to_numpy(dtype=np.int64))
    if "setup_ns" in finite:
        # The FCT counts from the first SYN; the handshake's share of it.
        setup = finite["setup_ns"].to_numpy(dtype=np.int64)
        out["setup_s"] = np.where(setup >= 0, setup / 1e9, np.nan)
        out["setup_failed"] = finite["setup_failed"].to_numpy(dtype=bool)
    return out


def connection_setup(flows: pd.DataFrame) -> dict[str, float]:
    """M-FCT companion: connection setup of the flows that opened with a handshake (simulator runs:
    ``setup_ns``, ``syn_retrans``, ``setup_failed``): ``connections`` (flows that
    sent a SYN), ``established``, ``failed`` (SYN retries exhausted), ``syn_resent``
    (connections that resent their SYN), and the setup time's ``median_s`` / ``p99_s``.
    Empty when the table has no such flows."""
    if "setup_ns" not in flows:
        return {}
    setup = flows["setup_ns"].to_numpy(dtype=np.int64)
    failed = flows["setup_failed"].to_numpy(dtype=bool)
    resent = flows["syn_retrans"].to_numpy(dtype=np.int64)
    opened = (setup >= 0) | failed | (resent > 0)
    if not opened.any():
        return {}
    ok = setup[setup >= 0] / 1e9
    return {
        "connections": float(opened.sum()),
        "established": float(len(ok)),
        "failed": float(failed.sum()),
        "syn_resent": float((resent > 0).sum()),
        "median_s": float(np.median(ok)) if len(ok) else float("nan"),
        "p99_s": float(np.percentile(ok, 99)) if len(ok) else float("nan"),
    }


def size_bucket_labels(edges: Sequence[int]) -> list[str]:
    """Labels of the buckets ``edges`` define, e.g. ``≤100``, ``100–1.5K``, ``>15M``."""

    def fmt(b: float) -> str:
        for unit, k in (("M", 1e6), ("K", 1e3)):
            if b >= k:
                return f"{b / k:g}{unit}"
        return f"{b:g}"

    labels = [f"≤{fmt(edges[0])}"]
    labels += [f"{fmt(a)}–{fmt(b)}" for a, b in zip(edges[:-1], edges[1:], strict=True)]
    labels.append(f">{fmt(edges[-1])}")
    return labels


def by_size_bucket(
    df: pd.DataFrame, value: str = "fct_s", *, edges: Sequence[int] = DEFAULT_SIZE_EDGES
) -> pd.DataFrame:
    """M-FCT / M-FCT-SLOWDOWN by size: ``value`` (``fct_s`` or ``slowdown``) per flow-size bucket (upper
    edges inclusive): ``bucket``, ``flows``, ``completed``, ``median``, ``mean``,
    ``p99``. D2 reports the median per bucket (Fig. 4.15). Empty buckets are left
    out; uncompleted flows count in ``flows`` but not in the statistics."""
    labels = size_bucket_labels(edges)
    idx = np.searchsorted(np.asarray(edges), df["size_bytes"].to_numpy(dtype=np.int64), side="left")
    rows = []
    for b in sorted(set(idx.tolist())):
        x = df[value].to_numpy(dtype=float)[idx == b]
        done = x[np.isfinite(x)]
        rows.append(
            {
                "bucket": labels[b],
                "flows": int(x.size),
                "completed": int(done.size),
                "median": float(np.median(done)) if done.size else float("nan"),
                "mean": float(done.mean()) if done.size else float("nan"),
                "p99": float(np.quantile(done, 0.99)) if done.size else float("nan"),
            }
        )
    return pd.DataFrame(rows, columns=["bucket", "flows", "completed", "median", "mean", "p99"])


def expected_fct(
    size_bytes: float, *, capacity_bps: float, rtt_s: float, icwnd_bytes: float, log_base: float = 2.0
) -> float:
    """M-FCT-SLOWDOWN's denominator, D2 Eq. 4.1: the ideal FCT eFCT in seconds of a flow of N = ``size_bytes``:

    - N ≤ icwnd: RTT + N/A;
    - icwnd < N ≤ BDP: (1 + ⌊log(N/icwnd)⌋) · RTT;
    - N > BDP: (1 + ⌊log(BDP/icwnd)⌋) · RTT + (N − BDP)/A,

    with A the capacity, BDP = A · RTT. **[impl. choice]**: log base 2 (slow start
    doubles per RTT), N, icwnd and BDP all in bytes; when the BDP is below icwnd the
    round count ⌊log(BDP/icwnd)⌋ is clamped at 0 (the formula would go negative)."""
    a = capacity_bps / 8.0
    bdp = a * rtt_s
    n = float(size_bytes)
    if n <= icwnd_bytes:
        return rtt_s + n / a
    if n <= bdp:
        return (1 + math.floor(math.log(n / icwnd_bytes, log_base))) * rtt_s
    rounds = max(0, math.floor(math.log(bdp / icwnd_bytes, log_base))) if bdp > 0 else 0
    return (1 + rounds) * rtt_s + (n - bdp) / a


def fct_slowdown(
    flows: pd.DataFrame,
    *,
    capacity_bps: float,
    icwnd_pkts: int = 10,
    rtt: str = "min_rtt",
    log_base: float = 2.0,
) -> pd.DataFrame:
    """M-FCT-SLOWDOWN: :func:`flow_completion` plus ``efct_s`` (:func:`expected_fct`)
    and ``slowdown`` = oFCT / eFCT (NaN for flows that did not complete).

    ``rtt="min_rtt"`` (default, D2's footnote: "minimum observed RTT") uses each
    flow's ``min_rtt_ns``, falling back to ``base_rtt_ns`` when the flow has no RTT
    sample; ``rtt="base"`` uses the propagation RTT. icwnd = ``icwnd_pkts`` × the
    flow's MSS (**[impl. choice]** 10, Linux's IW)."""
    if rtt not in ("min_rtt", "base"):
        raise ValueError(f"rtt must be 'min_rtt' or 'base', not {rtt!r}")
    out = flow_completion(flows)
    finite = flows[flows["size_bytes"].to_numpy(dtype=np.int64) >= 0]
    base = finite["base_rtt_ns"].to_numpy(dtype=np.int64)
    if rtt == "min_rtt":
        mr = finite["min_rtt_ns"].to_numpy(dtype=np.int64)
        rtt_ns = np.where(mr > 0, mr, base)
    else:
        rtt_ns = base
    mss = finite["mss"].to_numpy(dtype=float)
    out["efct_s"] = [
        expected_fct(n, capacity_bps=capacity_bps, rtt_s=r / 1e9, icwnd_bytes=icwnd_pkts * m, log_base=log_base)
        for n, r, m in zip(out["size_bytes"], rtt_ns, mss, strict=True)
    ]
    out["slowdown"] = out["fct_s"] / out["efct_s"]
    return out


def flow_counts(flows: pd.DataFrame, *, min_delivered_bytes: int = 1) -> dict[str, float]:
    """M-FLOWCOUNT: ``flows`` (all rows), ``finite``, ``completed``,
    ``effective`` (flows that delivered at least ``min_delivered_bytes``;
    **[impl. choice]** 1 byte, as D4 leaves "transmitting effectively" open) and
    ``effective_fraction``."""
    n = len(flows)
    eff = int((flows["delivered_bytes"].to_numpy(dtype=np.int64) >= min_delivered_bytes).sum())
    return {
        "flows": float(n),
        "finite": float((flows["size_bytes"].to_numpy(dtype=np.int64) >= 0).sum()),
        "completed": float(flows["completed"].to_numpy(dtype=bool).sum()),
        "effective": float(eff),
        "effective_fraction": eff / n if n else float("nan"),
    }
