"""The report's metric tables beyond the headline: every metric family of
``ccbench.metrics`` that applies to the run (or sweep), labelled with its id."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..metrics import (
    avg_throughput_sd,
    drop_burstiness,
    eps_convergence,
    equilibrium_buffer,
    fit_mathis_c,
    flow_counts,
    flow_goodput,
    goodput_timeseries,
    group_timeseries,
    jain_flowmean,
    jfi_convergence_time,
    loss_and_halving_rates,
    mathis_error,
    mathis_inputs,
    median_occupancy,
    over_repetitions,
    overall_average,
    overall_throughput,
    phase_throughput,
    rate_phases,
    relative_retransmissions_over_runs,
    throughput_quantiles,
    time_to_fraction,
)

if TYPE_CHECKING:
    from ..results import RunResult

__all__ = [
    "equilibrium_table",
    "more_run_metrics",
    "overall_average_table",
    "phase_table",
    "relative_retransmissions_view",
    "repetition_table",
]


def _time(t: Any) -> str:
    return f"{t.seconds:.2f} s" if t.reached else f"not reached (≥ {t.seconds:.2f} s)"


def more_run_metrics(res: RunResult, *, bin_ns: int = 100_000_000) -> pd.DataFrame:
    """One row per metric: ``id``, ``metric``, ``value`` (text), ``choice`` (the
    parameters used, where the studies differ)."""
    cfg = res.engine_config
    warm, dur = int(cfg.get("warmup_ns", 0)), int(cfg["duration_ns"])
    flows = res.flows
    rows: list[tuple[str, str, str, str]] = []

    def add(mid: str, name: str, value: Any, choice: str = "") -> None:
        text = value if isinstance(value, str) else ("—" if not math.isfinite(float(value)) else f"{float(value):.4g}")
        rows.append((mid, name, text, choice))

    per_flow = flow_goodput(flows, warm)
    add("M-JFI-FLOWMEAN", "Jain's index of per-flow means", jain_flowmean(flows, warmup_ns=warm))
    q = throughput_quantiles(per_flow["goodput_bps"] / 1e6)
    add("M-QUANT", "per-flow goodput Q1 / median / Q3 [Mbit/s]", " / ".join(f"{v:.3g}" for v in q.values()))
    sd = avg_throughput_sd(per_flow.assign(goodput_mbps=per_flow["goodput_bps"] / 1e6), value="goodput_mbps")
    all_row = sd.iloc[-1]
    add(
        "M-AVGTHR-SD",
        "mean (SD) per-flow goodput [Mbit/s]",
        f"{all_row['mean']:.3g} ({all_row['sd']:.3g})",
        "sample SD",
    )
    add(
        "M-OVERALL",
        "per-connection goodput [Mbit/s]",
        overall_throughput(flows, warmup_ns=warm, duration_ns=dur)["per_connection_bps"] / 1e6,
    )
    counts = flow_counts(flows)
    add(
        "M-FLOWCOUNT",
        "flows / finite / completed / effective",
        f"{counts['flows']:.0f} / {counts['finite']:.0f} / {counts['completed']:.0f} / {counts['effective']:.0f}",
        "effective = delivered ≥ 1 byte",
    )
    bulk = flows[flows["size_bytes"].to_numpy(dtype=np.int64) < 0]
    ts = goodput_timeseries(res.flow_ts[res.flow_ts["flow_id"].isin(bulk["flow_id"])], bin_ns)
    if len(bulk) >= 2:
        add(
            "M-CONV-JFI",
            "time to Jain's index ≥ 0.9 over 5 s windows",
            _time(jfi_convergence_time(ts, bulk, threshold=0.9, end_ns=dur)),
            "from the last bulk flow's start",
        )
        last = int(bulk.sort_values("start_ns")["flow_id"].iloc[-1])
        e = eps_convergence(res.flow_ts, last)
        add("M-EPS-CONV", f"ε-convergence time of flow {last} (the last to start)", _time(e.t_c), "λ 0.1, ε 0.8, δ 1 s")
        add("M-SPREAD", f"spread of flow {last} after convergence [Mbit/s]", e.spread_bps / 1e6)
    rates = loss_and_halving_rates(flows, res.events, warmup_ns=warm)
    sent = float(rates["packets"].sum())
    drops, halvings = float(rates["drops"].sum()), float(rates["halvings"].sum())
    add("M-LOSSRATE", "bottleneck data drops / packets (window)", drops / sent if sent else math.nan)
    add("M-HALVRATE", "cwnd halvings / packets (window)", halvings / sent if sent else math.nan)
    add("M-LOSS-HALVING", "drops per cwnd halving", drops / halvings if halvings else math.nan)
    has_drop_rows = bool((res.events["kind"].astype(str) == "drop").any())
    burst_note = "all drops at the queue" if has_drop_rows else "no drop rows: needs experiment.packet_events = true"
    add("M-BURST", "Goh–Barabási burstiness of drops", drop_burstiness(res.events), burst_note)
    m = mathis_inputs(flows, res.flow_ts, res.events, warmup_ns=warm)
    for p, label in (("p_loss", "loss rate"), ("p_halving", "cwnd-halving rate")):
        c = fit_mathis_c(m["goodput_bps"], m["mss"], m["rtt_s"], m[p])
        err = mathis_error(m["goodput_bps"], m["mss"], m["rtt_s"], m[p], c) if math.isfinite(c) else math.nan
        add("M-MATHIS-C", f"best-fit Mathis C, p = {label}", c, "least squares, RTT = mean srtt")
        add("M-MATHIS-ERR", f"median Mathis prediction error, p = {label}", err)
    add("M-QOCC", "median bottleneck queue [bytes]", median_occupancy(res.queue_ts, start_ns=warm))
    link = res.link_config()
    total = group_timeseries(ts, flows, by="total") if not ts.empty else ts
    for t_change, rate in link.get("rate_schedule", []):
        if total.empty:
            break
        r = time_to_fraction(
            total["time_ns"], total["goodput_bps"], change_ns=int(t_change), target_bps=float(rate), end_ns=dur
        )
        add(
            "M-T90",
            f"time to 90 % of {rate / 1e6:g} Mbit/s after {int(t_change) / 1e9:g} s",
            _time(r),
            "5 s moving average of total goodput",
        )
    return pd.DataFrame(rows, columns=["id", "metric", "value", "choice"])


def phase_table(res: RunResult, *, bin_ns: int = 1_000_000_000) -> pd.DataFrame | None:
    """M-PHASE-TPUT of the total goodput per phase of the bottleneck's rate schedule
    (None without a schedule)."""
    cfg = res.engine_config
    link = res.link_config()
    if not link.get("rate_schedule"):
        return None
    ts = goodput_timeseries(res.flow_ts, bin_ns)
    total = group_timeseries(ts, res.flows, by="total")
    phases = rate_phases(link["rate_bps"], link["rate_schedule"], int(cfg["duration_ns"]))
    out = phase_throughput(total["time_ns"], total["goodput_bps"], phases)
    return pd.DataFrame(
        {
            "phase": out["phase"],
            "from [s]": out["start_ns"] / 1e9,
            "to [s]": out["end_ns"] / 1e9,
            "expected [Mbit/s]": out["expected_bps"] / 1e6,
            "median [Mbit/s]": out["median_bps"] / 1e6,
            "% below expected": out["pct_below"],
        }
    )


def equilibrium_table(table: pd.DataFrame, axes: list[str]) -> pd.DataFrame | None:
    """M-EQUIL: with a ``buffer_bdp`` axis and two senders, the buffer at which their
    mean goodputs cross, for each combination of the other axes (None otherwise)."""
    senders = sorted(c for c in table.columns if c.startswith("sender:") and c.endswith(":mbps"))
    if "buffer_bdp" not in axes or len(senders) != 2:
        return None
    others = [a for a in axes if a not in ("buffer_bdp", "bottleneck.buffer")]
    groups = table.groupby(others, dropna=False) if others else [((), table)]
    rows = []
    for key, g in groups:
        s1 = g.groupby("buffer_bdp")[senders[0]].mean()
        s2 = g.groupby("buffer_bdp")[senders[1]].mean().reindex(s1.index)
        key = key if isinstance(key, tuple) else (key,)
        rows.append(
            {
                **dict(zip(others, key, strict=True)),
                "equilibrium buffer [× BDP]": equilibrium_buffer(s1.index, s1.to_numpy(), s2.to_numpy(), scale="log"),
            }
        )
    out = pd.DataFrame(rows)
    out.attrs["senders"] = [s.split(":")[1] for s in senders]
    return out


def repetition_table(table: pd.DataFrame, axes: list[str], value: str = "jain") -> pd.DataFrame | None:
    """M-STATS of ``value`` per grid cell when some cell holds several runs (None
    otherwise)."""
    if not axes or value not in table.columns:
        return None
    stats = over_repetitions(table, value, axes)
    return stats if (stats["runs"] > 1).any() else None


def overall_average_table(table: pd.DataFrame, axes: list[str]) -> pd.DataFrame:
    """M-AVG-PHI and M-AVG-J: the mean over conditions (buffer and rate) of the mean
    over each condition's runs, per combination of the other axes."""
    condition = [a for a in axes if a in ("buffer_bdp", "rate_mbps")] or axes[:1]
    by = [a for a in axes if a not in condition and not a.endswith((".buffer", ".rate"))]
    if not by:
        table = table.assign(**{"(all)": "all runs"})
        by = ["(all)"]
    phi = overall_average(table, "utilization", by=by, condition=condition).rename(columns={"avg": "Avg(φ)"})
    j = overall_average(table, "jain_senders", by=by, condition=condition).rename(columns={"avg": "Avg(J_index)"})
    return phi.merge(j[[*by, "Avg(J_index)"]], on=by)


def cca_axes(axes: list[str]) -> list[str]:
    """The axes that choose the CCAs (named ``cca``, ``flows[1].cca``, ``cca_pair``, ...)."""
    return [a for a in axes if "cca" in a.rsplit(".", 1)[-1].lower()]


def relative_retransmissions_view(
    table: pd.DataFrame, axes: list[str], *, reference: str = "cubic"
) -> tuple[pd.Series, pd.DataFrame] | None:
    """M-RR per run and M-AVG-RR per CCA choice (D0): the reference runs are those
    whose flows all run ``reference`` (CUBIC vs CUBIC); the condition is every axis
    but the CCA axes (:func:`cca_axes`). None when no axis chooses the CCAs or no run
    is a reference run."""
    by = cca_axes(axes)
    cca_cols = [c for c in table.columns if c.startswith("cca:") and c.endswith(":mbps")]
    if not by or not cca_cols or "retransmissions" not in table.columns:
        return None
    present = table[cca_cols].notna().to_numpy()
    names = [c.split(":")[1] for c in cca_cols]
    is_ref = pd.Series(
        [{n for n, p in zip(names, row, strict=True) if p} == {reference} for row in present], index=table.index
    )
    if not is_ref.any():
        return None
    condition = [a for a in axes if a not in by and a != "repetition"]
    rr = relative_retransmissions_over_runs(table, is_reference=is_ref, condition=condition)
    avg_condition = [a for a in condition if a in ("buffer_bdp", "rate_mbps")] or condition
    avg_by = by + [a for a in condition if a not in avg_condition and not a.endswith((".buffer", ".rate"))]
    avg = overall_average(table.assign(rr=rr), "rr", by=avg_by, condition=avg_condition).rename(
        columns={"avg": "Avg(RR)"}
    )
    return rr, avg
