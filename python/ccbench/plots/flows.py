"""Per-flow analyses: FCT and FCT slowdown by size bucket, the Mathis fit, and
convergence times."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..metrics import (
    by_size_bucket,
    eps_convergence,
    fct_slowdown,
    fit_mathis_c,
    goodput_timeseries,
    jfi_convergence_time,
    mathis_error,
    mathis_inputs,
    mathis_throughput,
)
from ._base import new_figure, pick_run

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ..results import RunResult
    from ..runset import RunSet


def _runs(data: RunSet | RunResult, run: str | None, limit: int = 12) -> list[tuple[RunResult, str]]:
    from ..results import RunResult as _RR

    if isinstance(data, _RR) or data.kind == "run" or run is not None:
        return [pick_run(data, run)]
    return [(e.load(), e.name) for e in data.complete[:limit]]


def _slowdowns(res: RunResult, icwnd_pkts: int) -> pd.DataFrame:
    rate = res.link_config()["rate_bps"]
    return fct_slowdown(res.flows, capacity_bps=rate, icwnd_pkts=icwnd_pkts)


def _bucket_bars(data, run, value: str, ylabel: str, title: str, icwnd_pkts: int) -> Figure:
    fig = new_figure()
    ax = fig.add_subplot()
    runs = _runs(data, run)
    width = 0.8 / max(len(runs), 1)
    labels: list[str] = []
    drawn = 0
    for k, (res, label) in enumerate(runs):
        b = by_size_bucket(_slowdowns(res, icwnd_pkts), value)
        if b.empty:
            continue
        labels = labels or list(b["bucket"])
        pos = [labels.index(x) if x in labels else len(labels) for x in b["bucket"]]
        for x in b["bucket"]:
            if x not in labels:
                labels.append(x)
        ax.bar(np.asarray(pos) + k * width, b["median"], width=width, label=f"{label} (median)")
        ax.errorbar(
            np.asarray(pos) + k * width,
            b["median"],
            yerr=[np.zeros(len(b)), (b["p99"] - b["median"]).clip(lower=0)],
            fmt="none",
            ecolor="k",
            capsize=2,
            lw=0.8,
        )
        drawn += 1
    if not drawn:
        ax.text(0.5, 0.5, "no finite flows in this run", ha="center", va="center", transform=ax.transAxes)
    ax.set_xticks(np.arange(len(labels)) + width * (len(runs) - 1) / 2, labels)
    ax.set(xlabel="flow size [bytes]", ylabel=ylabel, title=title)
    if drawn:
        ax.legend(fontsize="small")
    return fig


def fct_by_size(data: RunSet | RunResult, *, run: str | None = None) -> Figure:
    """Median flow completion time per flow-size bucket (M-FCT), whiskers to the
    99th percentile; one bar per run (up to 12 of a sweep)."""
    return _bucket_bars(data, run, "fct_s", "FCT [s]", "flow completion time by size", 10)


def fct_slowdown_by_size(data: RunSet | RunResult, *, run: str | None = None, icwnd_pkts: int = 10) -> Figure:
    """Median FCT slowdown oFCT/eFCT per size bucket (M-FCT-SLOWDOWN), whiskers to
    the 99th percentile."""
    return _bucket_bars(data, run, "slowdown", "FCT slowdown (oFCT / eFCT)", "FCT slowdown by size", icwnd_pkts)


def mathis_fit(data: RunSet | RunResult, *, run: str | None = None, p: str = "p_loss") -> Figure:
    """Measured goodput against the Mathis prediction with the best-fit C
    (M-MATHIS, M-MATHIS-C), p the loss rate (``p="p_loss"``) or the cwnd-halving
    rate (``p="p_halving"``), every flow of the run (or of every run of a sweep);
    the median prediction error (M-MATHIS-ERR) is in the legend."""
    if p not in ("p_loss", "p_halving"):
        raise ValueError(f"p must be 'p_loss' or 'p_halving', not {p!r}")
    rows = []
    for res, label in _runs(data, run, limit=10_000):
        m = mathis_inputs(res.flows, res.flow_ts, res.events, warmup_ns=int(res.engine_config.get("warmup_ns", 0)))
        rows.append(m.assign(run=label))
    m = pd.concat(rows, ignore_index=True)
    c = fit_mathis_c(m["goodput_bps"], m["mss"], m["rtt_s"], m[p])
    fig = new_figure(5.5, 5.0)
    ax = fig.add_subplot()
    pred = mathis_throughput(m["mss"], m["rtt_s"], m[p], c=1.0 if not np.isfinite(c) else c)
    ok = np.isfinite(pred) & np.isfinite(m["goodput_bps"])
    ax.scatter(pred[ok] / 1e6, m["goodput_bps"][ok] / 1e6, s=18, alpha=0.8)
    if ok.any():
        hi = float(max(pred[ok].max(), m["goodput_bps"][ok].max()) / 1e6) * 1.05
        err = mathis_error(m["goodput_bps"], m["mss"], m["rtt_s"], m[p], c)
        ax.plot([0, hi], [0, hi], "k--", lw=0.8, label=f"C* = {c:.3f}, median error {err:.1%}")
        ax.legend(fontsize="small")
    else:
        ax.text(0.5, 0.5, f"no flow with {p} > 0", ha="center", va="center", transform=ax.transAxes)
    ax.set(
        xlabel="Mathis prediction [Mbit/s]",
        ylabel="measured goodput [Mbit/s]",
        title=f"Mathis fit, p = {'loss rate' if p == 'p_loss' else 'cwnd-halving rate'} ({len(m)} flows)",
    )
    return fig


def convergence(
    data: RunSet | RunResult,
    *,
    run: str | None = None,
    threshold: float = 0.9,
    window_s: float = 5.0,
    bin_s: float = 0.1,
) -> Figure:
    """Convergence times as bars: per run, the JFI-threshold convergence time
    (M-CONV-JFI) of its bulk flows, and per bulk flow its ε-convergence time
    (M-EPS-CONV, λ = 0.1, ε = 0.8, δ = 1 s). Hatched bars did not converge (the
    bar is the time observed)."""
    fig = new_figure()
    ax = fig.add_subplot()
    names, values, reached, kinds = [], [], [], []
    for res, label in _runs(data, run, limit=24):
        bulk = res.flows[res.flows["size_bytes"].to_numpy(dtype=np.int64) < 0]
        ts = goodput_timeseries(res.flow_ts[res.flow_ts["flow_id"].isin(bulk["flow_id"])], int(bin_s * 1e9))
        r = jfi_convergence_time(
            ts, bulk, threshold=threshold, window_ns=int(window_s * 1e9), end_ns=int(res.engine_config["duration_ns"])
        )
        names.append(f"{label}\nJFI ≥ {threshold:g}")
        values.append(r.seconds)
        reached.append(r.reached)
        kinds.append(0)
        if run is not None or len(_runs(data, run)) == 1:
            for fid in bulk["flow_id"]:
                e = eps_convergence(res.flow_ts, int(fid))
                names.append(f"flow {fid}\nε-conv.")
                values.append(e.t_c.seconds)
                reached.append(e.t_c.reached)
                kinds.append(1)
    colors = ["tab:blue" if k == 0 else "tab:orange" for k in kinds]
    bars = ax.bar(range(len(values)), values, color=colors)
    for b, ok in zip(bars, reached, strict=True):
        if not ok:
            b.set_hatch("//")
            b.set_alpha(0.5)
    ax.set_xticks(range(len(names)), names, fontsize="x-small", rotation=30 if len(names) > 6 else 0)
    ax.set(ylabel="time [s]", title="convergence time (hatched: not converged)")
    return fig
