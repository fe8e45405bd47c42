"""Model-based family: metrics.md §9 (D3).

- **M-MATHIS** the Mathis model ``T = MSS · C / (RTT · √p)`` (:func:`mathis_throughput`);
- **M-MATHIS-C** the least-squares best-fit C with p = the loss rate or the
  cwnd-halving rate (:func:`fit_mathis_c`);
- **M-MATHIS-ERR** the median relative prediction error (:func:`mathis_error`);
- the per-flow inputs from a run's tables (:func:`mathis_inputs`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .retransmissions import loss_and_halving_rates
from .throughput import flow_goodput

__all__ = ["MATHIS_C_NEWRENO", "fit_mathis_c", "mathis_error", "mathis_inputs", "mathis_throughput"]

#: The original paper's constant for NewReno with delayed and selective ACKs (D3).
MATHIS_C_NEWRENO = 0.94


def mathis_throughput(
    mss_bytes: np.ndarray | float, rtt_s: np.ndarray | float, p: np.ndarray | float, c: float = MATHIS_C_NEWRENO
) -> np.ndarray:
    """M-MATHIS in bit/s: ``MSS·8 · C / (RTT · √p)``; ``inf`` where p = 0."""
    mss = np.asarray(mss_bytes, dtype=float)
    rtt = np.asarray(rtt_s, dtype=float)
    pp = np.asarray(p, dtype=float)
    with np.errstate(divide="ignore"):
        return mss * 8.0 * c / (rtt * np.sqrt(pp))


def _usable(t: np.ndarray, a: np.ndarray) -> np.ndarray:
    return np.isfinite(t) & np.isfinite(a) & (a > 0)


def fit_mathis_c(throughput_bps: np.ndarray, mss_bytes: np.ndarray, rtt_s: np.ndarray, p: np.ndarray) -> float:
    """M-MATHIS-C: ``C* = argmin_C Σ_j (T_j − C a_j)² = Σ T_j a_j / Σ a_j²`` with
    ``a_j = MSS_j·8 / (RTT_j √p_j)`` (**[impl. choice]** absolute error, the closed
    form of D3's least-squares criterion). Flows with p = 0 (no congestion event, so
    no finite prediction) or missing values are left out; NaN if none is left."""
    t = np.asarray(throughput_bps, dtype=float)
    a = mathis_throughput(mss_bytes, rtt_s, p, c=1.0)
    ok = _usable(t, a)
    if not ok.any():
        return float("nan")
    return float(np.sum(t[ok] * a[ok]) / np.sum(a[ok] ** 2))


def mathis_error(
    throughput_bps: np.ndarray, mss_bytes: np.ndarray, rtt_s: np.ndarray, p: np.ndarray, c: float
) -> float:
    """M-MATHIS-ERR: **[impl. choice]** the median over flows of
    ``|T_pred − T_meas| / T_meas`` with ``T_pred`` from :func:`mathis_throughput` and
    constant ``c`` (the setting's fit, or a global one). Flows with zero measured
    throughput or p = 0 are left out; NaN if none is left."""
    t = np.asarray(throughput_bps, dtype=float)
    pred = mathis_throughput(mss_bytes, rtt_s, p, c=c)
    ok = _usable(t, pred) & (t > 0)
    if not ok.any():
        return float("nan")
    return float(np.median(np.abs(pred[ok] - t[ok]) / t[ok]))


def mathis_inputs(
    flows: pd.DataFrame,
    flow_ts: pd.DataFrame | None = None,
    events: pd.DataFrame | None = None,
    *,
    warmup_ns: int = 0,
    rtt: str = "mean_srtt",
) -> pd.DataFrame:
    """Per-flow inputs of the Mathis fit: ``goodput_bps`` (measurement window),
    ``mss``, ``rtt_s`` and both congestion-event rates ``p_loss``, ``p_halving``
    (:func:`~ccbench.metrics.retransmissions.loss_and_halving_rates`).

    ``rtt="mean_srtt"`` (default) averages the flow's smoothed RTT samples in the
    measurement window (the RTT the flow actually saw, queueing included; needs
    ``flow_ts``); ``"base"`` uses the propagation RTT (D3's "RTT = 20 ms"). With
    ``events``, the rates count the measurement window only (D3 ignores its first
    minutes); without, whole-run counters."""
    if rtt not in ("mean_srtt", "base"):
        raise ValueError(f"rtt must be 'mean_srtt' or 'base', not {rtt!r}")
    out = flow_goodput(flows, warmup_ns)[["flow_id", "goodput_bps"]].copy()
    out["mss"] = flows["mss"].to_numpy(dtype=float)
    base = flows["base_rtt_ns"].to_numpy(dtype=float) / 1e9
    if rtt == "mean_srtt" and flow_ts is not None and not flow_ts.empty:
        w = flow_ts[flow_ts["time_ns"].to_numpy(dtype=np.int64) >= warmup_ns]
        mean = w.groupby("flow_id")["srtt_ns"].mean()
        srtt = out["flow_id"].map(mean).to_numpy(dtype=float) / 1e9
        out["rtt_s"] = np.where(np.isfinite(srtt) & (srtt > 0), srtt, base)
    else:
        out["rtt_s"] = base
    rates = loss_and_halving_rates(flows, events, warmup_ns=warmup_ns if events is not None else None)
    out["p_loss"] = rates["p_loss"].to_numpy()
    out["p_halving"] = rates["p_halving"].to_numpy()
    return out
