"""Utilization family: metrics.md §3, **M-PHI**, link utilization

    φ = Σ T_i / β_τ

with T_i the goodput of flow i over the measurement window [warmup, duration] and
β_τ the configured bottleneck rate, time-averaged over the window when the rate
follows a schedule. Being goodput-based, φ of a saturated link is at most
MSS / (MSS + 52 header bytes), 0.965 at MSS 1448 (metrics.md notes the goodput vs
sender-throughput ambiguity; this is the goodput reading).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from .throughput import window_bytes

__all__ = ["capacity_bits", "utilization"]


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
