"""Utilization family: metrics.md §3. **M-BWUTIL** (bandwidth-utilization gap,
:func:`bwutil_gap`), **M-PHASE-TPUT** (per-phase median throughput against the
expected, :func:`phase_throughput`), **M-OVERALL** (overall bottleneck throughput
and its per-connection average, :func:`overall_throughput`), and **M-PHI**, link
utilization (:func:`utilization`)

    φ = Σ T_i / β_τ

with T_i the goodput of flow i over the measurement window [warmup, duration] and
β_τ the configured bottleneck rate, time-averaged over the window when the rate
follows a schedule. Being goodput-based, φ of a saturated link is at most
MSS / (MSS + 52 header bytes), 0.965 at MSS 1448 (metrics.md notes the goodput vs
sender-throughput ambiguity; this is the goodput reading).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .throughput import total_goodput, window_bytes

__all__ = ["bwutil_gap", "capacity_bits", "overall_throughput", "phase_throughput", "rate_phases", "utilization"]


def capacity_bits(rate_bps: int, rate_schedule: Sequence[Sequence[int]], start_ns: int, end_ns: int) -> float:
    """Bits the link can carry in [start_ns, end_ns] given its initial rate and its
    schedule of (time ns, new rate bit/s) changes."""
    points = [(0, int(rate_bps)), *((int(t), int(r)) for t, r in rate_schedule)]
    total = 0.0
    for i, (t, r) in enumerate(points):
        seg_end = points[i + 1][0] if i + 1 < len(points) else end_ns
        lo, hi = max(t, start_ns), min(seg_end, end_ns)
        if hi > lo:
            total += r * (hi - lo) / 1e9
    return total


def utilization(
    flows: pd.DataFrame,
    *,
    warmup_ns: int,
    duration_ns: int,
    rate_bps: int,
    rate_schedule: Sequence[Sequence[int]] = (),
) -> float:
    """M-PHI over the measurement window [warmup, duration]."""
    cap = capacity_bits(rate_bps, rate_schedule, warmup_ns, duration_ns)
    if cap <= 0:
        raise ValueError("the bottleneck has no capacity in the measurement window")
    return float(window_bytes(flows).sum() * 8 / cap)


def bwutil_gap(throughput_bps: Sequence[float] | np.ndarray, max_bps: float) -> float:
    """M-BWUTIL (D2 §3.3.2): ``(MaxBw − UtilBw) / MaxBw × 100`` with UtilBw the
    **median** of the throughput samples given (e.g. the Copa flow's bins in the
    competition window). Positive: under-utilization of the flow's share. ``max_bps``
    is the flow's achievable bandwidth (e.g. link rate minus a rate-limited
    competitor). NaN without samples."""
    x = np.asarray(throughput_bps, dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0 or max_bps <= 0:
        return float("nan")
    return float((max_bps - np.median(x)) / max_bps * 100.0)


def rate_phases(rate_bps: int, rate_schedule: Sequence[Sequence[int]], duration_ns: int) -> pd.DataFrame:
    """The phases of a bottleneck rate schedule: ``phase`` (1-based), ``start_ns``,
    ``end_ns``, ``rate_bps``."""
    points = [(0, int(rate_bps)), *((int(t), int(r)) for t, r in rate_schedule)]
    rows: list[dict[str, int]] = []
    for i, (t, r) in enumerate(points):
        end = points[i + 1][0] if i + 1 < len(points) else int(duration_ns)
        if end > t:
            rows.append({"phase": len(rows) + 1, "start_ns": t, "end_ns": end, "rate_bps": r})
    return pd.DataFrame(rows, columns=["phase", "start_ns", "end_ns", "rate_bps"])


def phase_throughput(
    time_ns: np.ndarray,
    throughput_bps: np.ndarray,
    phases: pd.DataFrame,
    *,
    expected_bps: Sequence[float] | None = None,
) -> pd.DataFrame:
    """M-PHASE-TPUT (D2 §4.5.1.2, §4.5.2.3): per phase, the median of the primary
    flow's throughput bins that end inside (start, end], against the expected
    (ideal) throughput; ``pct_below`` = (expected − median) / expected × 100 ("%
    less throughput than expected"). ``phases`` as from :func:`rate_phases`;
    ``expected_bps`` defaults to each phase's ``rate_bps`` (pass e.g. the ideal
    share when other traffic competes)."""
    t = np.asarray(time_ns, dtype=np.int64)
    v = np.asarray(throughput_bps, dtype=float)
    out = phases.copy()
    expected = np.asarray(expected_bps if expected_bps is not None else phases["rate_bps"], dtype=float)
    if len(expected) != len(phases):
        raise ValueError(f"expected_bps has {len(expected)} values for {len(phases)} phases")
    medians = []
    for start, end in zip(phases["start_ns"], phases["end_ns"], strict=True):
        x = v[(t > start) & (t <= end)]
        x = x[np.isfinite(x)]
        medians.append(float(np.median(x)) if x.size else float("nan"))
    out["expected_bps"] = expected
    out["median_bps"] = medians
    with np.errstate(divide="ignore", invalid="ignore"):
        out["pct_below"] = np.where(expected > 0, (expected - out["median_bps"]) / expected * 100.0, np.nan)
    return out


def overall_throughput(flows: pd.DataFrame, *, warmup_ns: int, duration_ns: int) -> dict[str, float]:
    """M-OVERALL (D4): the overall bottleneck goodput in the measurement window and
    the average per connection (overall / number of flows)."""
    total = total_goodput(flows, warmup_ns=warmup_ns, duration_ns=duration_ns)
    n = len(flows)
    return {"overall_bps": total, "per_connection_bps": total / n if n else float("nan")}
