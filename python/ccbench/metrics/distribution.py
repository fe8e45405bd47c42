"""Distribution family: metrics.md §5 and §6.

- **M-AVGTPUT** average throughput ("responsiveness" under random loss, D1)
  (:func:`average_throughput`);
- **M-QUANT** throughput quantiles Q0.25/Q0.5/Q0.75 ("efficiency", D1; per-flow
  quartiles, D4) (:func:`throughput_quantiles`);
- **M-AVGTHR-SD** mean and standard deviation of per-flow throughput per group and
  over all flows (D4 Tables 10/12) (:func:`avg_throughput_sd`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

__all__ = ["average_throughput", "avg_throughput_sd", "throughput_quantiles"]


def average_throughput(values: Iterable[float]) -> float:
    """M-AVGTPUT: the mean of the finite throughput values given (per-flow means of
    one run, or one value per run of a loss-probability sweep); NaN if none."""
    x = np.asarray(list(values), dtype=float)
    x = x[np.isfinite(x)]
    return float(x.mean()) if x.size else float("nan")


def throughput_quantiles(values: Iterable[float], q: Sequence[float] = (0.25, 0.5, 0.75)) -> dict[float, float]:
    """M-QUANT: quantiles ``q`` (linear interpolation, numpy's default) of the finite
    values: time-series samples (D1, **[impl. choice]** pooled over time and runs)
    or per-flow means (D4 ``Q1/median/Q3``). NaN for each q when there are none."""
    x = np.asarray(list(values), dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return {float(k): float("nan") for k in q}
    return {float(k): float(v) for k, v in zip(q, np.quantile(x, list(q)), strict=True)}


def avg_throughput_sd(
    per_flow: pd.DataFrame,
    *,
    by: str = "group",
    value: str = "goodput_bps",
    ddof: int = 1,
    all_label: str = "(all)",
) -> pd.DataFrame:
    """M-AVGTHR-SD: mean and standard deviation of the per-flow ``value`` of each
    ``by`` group, and over all flows (``all_label``). **[impl. choice]** sample SD
    (``ddof=1``; D4 does not say); NaN SD for a group of one. Columns ``by``, ``n``,
    ``mean``, ``sd``."""

    def row(key: str, x: pd.Series) -> dict[str, object]:
        v = x.to_numpy(dtype=float)
        v = v[np.isfinite(v)]
        return {
            by: key,
            "n": int(v.size),
            "mean": float(v.mean()) if v.size else float("nan"),
            "sd": float(v.std(ddof=ddof)) if v.size > ddof else float("nan"),
        }

    rows = [row(str(k), g[value]) for k, g in per_flow.groupby(per_flow[by].astype(str), sort=True)]
    rows.append(row(all_label, per_flow[value]))
    return pd.DataFrame(rows, columns=[by, "n", "mean", "sd"])
