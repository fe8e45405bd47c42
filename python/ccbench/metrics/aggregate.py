"""Aggregation over runs: metrics.md §3, §4, §10 and §11.

- **M-STATS** statistics of a per-run value over repetitions (:func:`over_repetitions`);
- **M-AVG-PHI**, **M-AVG-RR**, **M-AVG-J** D0's overall averages: the mean over the
  runs of each condition, then the mean over the conditions (:func:`overall_average`);
- **M-EQUIL** the buffer size at which two senders' throughputs cross
  (:func:`equilibrium_buffer`);
- **M-RR** over a sweep: each run's retransmissions relative to the reference runs
  of its condition (:func:`relative_retransmissions_over_runs`).

They take a tidy table with one row per run (parameters as columns, metrics as
columns), such as :func:`ccbench.runset.run_metrics` builds for a sweep. Failed
runs are rows with NaN metrics (or absent): every function leaves NaN values out and
reports how many values each statistic used.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .retransmissions import relative_retransmissions

__all__ = ["equilibrium_buffer", "over_repetitions", "overall_average", "relative_retransmissions_over_runs"]


def over_repetitions(
    runs: pd.DataFrame,
    value: str,
    by: Sequence[str],
    *,
    stats: Sequence[str] = ("mean", "std", "median", "min", "max"),
) -> pd.DataFrame:
    """M-STATS: per combination of the ``by`` columns (e.g. every sweep axis but the
    repetition), the statistics of ``value`` over its runs, NaN values (failed runs)
    left out. Columns: the ``by`` keys, ``n`` (values used), ``runs`` (rows), and one
    per statistic (sample ``std``, NaN for a single value)."""
    allowed = {"mean", "std", "median", "min", "max", "p90"}
    bad = set(stats) - allowed
    if bad:
        raise ValueError(f"unknown statistics {sorted(bad)}; allowed: {sorted(allowed)}")
    rows = []
    for key, g in runs.groupby(list(by), sort=True, dropna=False):
        x = g[value].to_numpy(dtype=float)
        x = x[np.isfinite(x)]
        key = key if isinstance(key, tuple) else (key,)
        row: dict[str, object] = dict(zip(by, key, strict=True))
        row["n"] = int(x.size)
        row["runs"] = len(g)
        for s in stats:
            if x.size == 0 or (s == "std" and x.size < 2):
                row[s] = float("nan")
            elif s == "std":
                row[s] = float(x.std(ddof=1))
            elif s == "p90":
                row[s] = float(np.quantile(x, 0.9))
            else:
                row[s] = float(getattr(np, s)(x))
        rows.append(row)
    return pd.DataFrame(rows, columns=[*by, "n", "runs", *stats])


def overall_average(runs: pd.DataFrame, value: str, *, by: Sequence[str], condition: Sequence[str]) -> pd.DataFrame:
    """M-AVG-PHI / M-AVG-RR / M-AVG-J (D0 Table 3): for each ``by`` combination (CCA
    pairing × AQM), the unweighted mean over the ``condition`` combinations (buffer
    × bandwidth, **[impl. choice]** all of them, as D0's table has one row per
    pairing × AQM) of the mean over each condition's runs. Columns: ``by`` keys,
    ``conditions`` (with at least one value), ``avg``."""
    per_condition = over_repetitions(runs, value, [*by, *condition], stats=("mean",))
    rows = []
    for key, g in per_condition.groupby(list(by), sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        m = g["mean"].to_numpy(dtype=float)
        m = m[np.isfinite(m)]
        rows.append(
            {
                **dict(zip(by, key, strict=True)),
                "conditions": int(m.size),
                "avg": float(m.mean()) if m.size else float("nan"),
            }
        )
    return pd.DataFrame(rows, columns=[*by, "conditions", "avg"])


def equilibrium_buffer(
    buffer_k: Sequence[float], s1_bps: Sequence[float], s2_bps: Sequence[float], *, scale: str = "linear"
) -> float:
    """M-EQUIL (D0 §5.1): the buffer multiple k at which S₁(k) − S₂(k) first changes
    sign as k grows, by linear interpolation between the two grid points around the
    crossing (**[impl. choice]**; ``scale="log"`` interpolates in log k, which suits
    doubling grids). A grid point with S₁ = S₂ is the answer itself. NaN when the
    difference never changes sign (no equilibrium in the range) or there are fewer
    than two finite points. Points with a NaN throughput (failed runs) are skipped."""
    if scale not in ("linear", "log"):
        raise ValueError(f"scale must be 'linear' or 'log', not {scale!r}")
    k = np.asarray(buffer_k, dtype=float)
    d = np.asarray(s1_bps, dtype=float) - np.asarray(s2_bps, dtype=float)
    ok = np.isfinite(k) & np.isfinite(d)
    k, d = k[ok], d[ok]
    order = np.argsort(k, kind="stable")
    k, d = k[order], d[order]
    if k.size < 2:
        return float(k[0]) if k.size == 1 and d[0] == 0 else float("nan")
    x = np.log(k) if scale == "log" else k
    for i in range(k.size):
        if d[i] == 0:
            return float(k[i])
        if i + 1 < k.size and d[i] * d[i + 1] < 0:
            xc = x[i] + (x[i + 1] - x[i]) * d[i] / (d[i] - d[i + 1])
            return float(np.exp(xc) if scale == "log" else xc)
    return float("nan")


def relative_retransmissions_over_runs(
    runs: pd.DataFrame,
    *,
    is_reference: Sequence[bool] | pd.Series,
    condition: Sequence[str],
    value: str = "retransmissions",
) -> pd.Series:
    """M-RR (D0 Eq. 4) for every run of a table: the run's ``value`` divided by the
    mean ``value`` of the reference runs (``is_reference``: D0's CUBIC vs CUBIC)
    that share its ``condition`` columns (AQM, bandwidth, buffer), so a reference run
    scores 1 on average. **[impl. choice]** the reference is the mean over the
    condition's reference runs (all repetitions); NaN where the condition has no
    reference run, its mean is zero (:func:`relative_retransmissions`), or the run
    failed (NaN ``value``)."""
    ref = pd.Series(np.asarray(is_reference, dtype=bool), index=runs.index)
    x = runs[value].astype(float)
    if condition:
        keys = runs[list(condition)].astype(str).agg("\x1f".join, axis=1)
    else:
        keys = pd.Series("", index=runs.index)
    usable = ref & x.notna()
    ref_mean = x[usable].groupby(keys[usable]).mean()
    return pd.Series(
        [relative_retransmissions(v, ref_mean.get(k, np.nan)) for v, k in zip(x, keys, strict=True)],
        index=runs.index,
        dtype=float,
    )
