"""Ratio and difference family: metrics.md §6 and §10.

- **M-TR-RECIPE** throughput ratio of the first flow to the second, or of the long
  flow to the mean of the others (D2 Ch. 4) (:func:`throughput_ratio_recipe`);
- **M-TR-NCF** the inverse orientation: mean of the single-bottleneck flows over the
  multi-bottleneck flow (D2 Ch. 6) (:func:`throughput_ratio_ncf`);
- **M-TD** throughput difference base − second flow (D2 Ch. 5) (:func:`throughput_difference`);
- **M-HARM** harm (Ware et al., HotNets 2019; **[external]**) (:func:`harm`);
- **M-FNESS** "fness" (Kunze et al.; mentioned only, **[impl. choice]**) (:func:`fness`).

The per-CCA share M-SHARE is :func:`ccbench.metrics.throughput.aggregate_goodput`'s
``share`` column.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["fness", "harm", "throughput_difference", "throughput_ratio_ncf", "throughput_ratio_recipe"]


def _ratio(num: float, den: float) -> float:
    if not (math.isfinite(num) and math.isfinite(den)):
        return float("nan")
    if den == 0:
        return float("nan") if num == 0 else float("inf")
    return num / den


def throughput_ratio_recipe(first_bps: float, others_bps: float | Sequence[float]) -> float:
    """M-TR-RECIPE: dumbbell ``T_1 / T_2``; parking lot ``T_long / mean(T_2, T_3)``
    (pass the other flows as a sequence). Ideal 1; ``inf`` when the denominator is
    zero and the numerator is not, NaN when both are."""
    den = float(np.mean(others_bps)) if isinstance(others_bps, Sequence) else float(others_bps)
    return _ratio(float(first_bps), den)


def throughput_ratio_ncf(single_bottleneck_bps: Sequence[float], multi_bottleneck_bps: float) -> float:
    """M-TR-NCF: ``mean(T_s1, T_s2) / T_multi`` — the inverse orientation of
    M-TR-RECIPE, as D2 Ch. 6 writes it. Ideal 1."""
    return _ratio(float(np.mean(single_bottleneck_bps)), float(multi_bottleneck_bps))


def throughput_difference(base_bps: float, second_bps: float) -> float:
    """M-TD: ``BaseFlow_AvgTput − SecondFlow_AvgTput`` (bit/s; D2 reports Mbit/s).
    Positive: the base flow got more."""
    return float(base_bps) - float(second_bps)


def harm(solo: float, competing: float, *, more_is_better: bool = True) -> float:
    """M-HARM **[external]** (Ware et al. 2019): the harm a new CCA does to an
    incumbent whose performance is ``solo`` when competing with its own kind and
    ``competing`` against the new CCA. More-is-better metrics (throughput):
    ``(solo − competing) / solo``; less-is-better (delay, loss):
    ``(competing − solo) / competing``. 0 = no harm, 1 = maximal; negative values
    (the incumbent did better) are returned as they are. NaN on a zero denominator."""
    x, y = float(solo), float(competing)
    if more_is_better:
        return (x - y) / x if x else float("nan")
    return (y - x) / y if y else float("nan")


def fness(flow_bps: float, competitor_bps: float) -> float:
    """M-FNESS: D2 only names "fness" (Kunze et al., TNSM 2019) and metrics.md gives
    no formula. **[impl. choice]** the normalized throughput difference
    ``(T_a − T_b) / (T_a + T_b)`` in [−1, 1]: 0 is an equal share, +1 means flow a
    takes everything. NaN when both are zero."""
    a, b = float(flow_bps), float(competitor_bps)
    return (a - b) / (a + b) if (a + b) else float("nan")
