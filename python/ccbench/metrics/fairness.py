"""Fairness family: metrics.md §2, **M-JFI** (Jain's index) and **M-JFI-GROUP**
(within each group of flows, and over all flows).

    J(x_1..x_n) = (Σ x_i)² / (n · Σ x_i²),   1/n ≤ J ≤ 1.

Per-sender JFI (M-JFI-SENDER) and per-flow-mean JFI (M-JFI-FLOWMEAN) are this same
function applied to :func:`ccbench.metrics.throughput.aggregate_goodput` or
:func:`ccbench.metrics.throughput.flow_goodput` values.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

__all__ = ["jain_by_group", "jain_index"]


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
