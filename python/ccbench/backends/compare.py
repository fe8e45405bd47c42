"""Side by side: one spec on two backends (by default ``sim`` and ``linux``), each
metric next to each other with the difference and whether it is inside a stated
tolerance. ``ccbench compare-backends SPEC [--seeds N --reps M]``.

The simulator runs ``seeds`` times (seeds ``s, s+1, ...`` from the spec's seed); the
kernel runs ``reps`` times (the kernel is not seeded; each repetition uses the next
seed for the start jitter). Each side's value is the mean over its runs; the range
is shown beside it. Every metric comes from :mod:`ccbench.metrics`, the same
functions for both backends.

Default tolerances (``DEFAULT_TOLERANCES``):

==================  ===========================================================
share (per group)   ±5 percentage points of the total goodput (M-SHARE)
Jain's index        ±0.03 (M-JFI, all flows)
utilization         ±2 percentage points (M-PHI, goodput-based)
retransmissions     within a factor of 2: (a + 1) / (b + 1) in [1/2, 2] (M-RETX;
                    +1 so that 0 against a handful is not infinitely different)
sRTT                ±15 % of the simulator's mean (mean of ``flow_ts.srtt_ns`` in
                    the measurement window over all flows)
==================  ===========================================================

Goodput, queue occupancy and drops are reported without a tolerance.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..metrics import summary
from ..metrics.retransmissions import has_window_counters, in_window, retransmissions
from ..metrics.throughput import aggregate_goodput
from ..results import RunResult
from ..spec import Experiment, load_spec

__all__ = ["DEFAULT_TOLERANCES", "Comparison", "compare_backends", "run_metrics"]

#: metric family -> (kind, bound): "abs" |a-b| <= bound, "rel" |a-b|/|b| <= bound,
#: "ratio" (a+1)/(b+1) in [1/bound, bound].
DEFAULT_TOLERANCES: dict[str, tuple[str, float]] = {
    "share": ("abs", 0.05),
    "jain": ("abs", 0.03),
    "utilization": ("abs", 0.02),
    "retransmissions": ("ratio", 2.0),
    "srtt": ("rel", 0.15),
}


def _mean_srtt_ns(result: RunResult, warmup_ns: int) -> float:
    ts = result.flow_ts
    x = ts.loc[ts["time_ns"].astype("int64") >= warmup_ns, "srtt_ns"].to_numpy(dtype=float)
    x = x[x > 0]
    return float(x.mean()) if x.size else math.nan


def run_metrics(result: RunResult) -> dict[str, float]:
    """The compared metrics of one run: ``share:<group>``, ``jain``, ``utilization``,
    ``retransmissions``, ``retransmissions:<group>``, ``srtt_ms``, and the untoleranced
    ``goodput_mbps``, ``queue_mean_pkts``, ``drops``; all over the measurement window."""
    s = summary(result)
    window = result.derived["window"]
    warm, dur = int(window["warmup_ns"]), int(window["duration_ns"])
    out: dict[str, float] = {}
    groups = aggregate_goodput(result.flows, warmup_ns=warm, duration_ns=dur, by="group")
    for row in groups.itertuples(index=False):
        out[f"share:{row.group}"] = float(row.share)
    out["jain"] = float(s["jain"])
    out["utilization"] = float(s["utilization"])
    out["retransmissions"] = float(s["retransmissions"])
    # per group over the same window as the total (the summary's): the counts after the
    # warm-up when the run recorded them there, else over the whole run
    flows = in_window(result.flows) if has_window_counters(result.flows) else result.flows
    per_group = retransmissions(flows, by="group")
    assert isinstance(per_group, pd.Series)
    for g, n in per_group.items():
        out[f"retransmissions:{g}"] = float(n)
    out["srtt_ms"] = _mean_srtt_ns(result, warm) / 1e6
    out["goodput_mbps"] = float(s["goodput_bps"]) / 1e6
    out["queue_mean_pkts"] = float(s["queue"].get("mean_pkts", math.nan))
    out["drops"] = float(s["drops"])
    return out


def _family(metric: str) -> str | None:
    base = metric.split(":")[0]
    return {"share": "share", "jain": "jain", "utilization": "utilization", "retransmissions": "retransmissions",
            "srtt_ms": "srtt"}.get(base)  # fmt: skip


def _within(kind: str, bound: float, value: float, reference: float) -> tuple[float, bool]:
    """(difference as reported, inside the tolerance)."""
    if not (math.isfinite(value) and math.isfinite(reference)):
        return math.nan, False
    if kind == "abs":
        d = value - reference
        return d, abs(d) <= bound + 1e-12
    if kind == "rel":
        d = (value - reference) / reference if reference else math.inf
        return d, abs(d) <= bound + 1e-12
    ratio = (value + 1) / (reference + 1)
    return ratio, 1 / bound - 1e-12 <= ratio <= bound + 1e-12


@dataclass
class Comparison:
    """``rows``: one dict per metric with ``metric``, ``a``/``b`` (means),
    ``a_range``/``b_range`` ((min, max)), ``difference`` (b - a, b/a-style ratio for
    retransmissions, relative for sRTT), ``tolerance`` (text) and ``within`` (bool or
    None without a tolerance). ``a`` is the reference backend (``sim``)."""

    spec_name: str
    backends: tuple[str, str]
    rows: list[dict[str, Any]]
    runs: dict[str, list[dict[str, float]]] = field(default_factory=dict)
    manifests: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def all_within(self) -> bool:
        return all(r["within"] for r in self.rows if r["within"] is not None)

    def to_markdown(self) -> str:
        a, b = self.backends
        lines = [f"| metric | {a} | {b} | difference | tolerance | within |", "|---|---|---|---|---|---|"]
        for r in self.rows:
            lines.append(
                f"| {r['metric']} | {_fmt_cell(r['a'], r['a_range'])} | {_fmt_cell(r['b'], r['b_range'])} | "
                f"{_fmt(r['difference'], r['metric'])} | {r['tolerance']} | "
                f"{'-' if r['within'] is None else ('yes' if r['within'] else '**no**')} |"
            )
        return "\n".join(lines)


def _fmt(x: float, metric: str = "") -> str:
    if x is None or not math.isfinite(x):
        return "-"
    if metric.startswith("retransmissions") and not metric.startswith("retransmissions:"):
        return f"×{x:.2f}"
    if metric.startswith("retransmissions:"):
        return f"×{x:.2f}"
    if metric == "srtt_ms":
        return f"{100 * x:+.1f} %"
    if abs(x) >= 100:
        return f"{x:.0f}"
    return f"{x:.3f}"


def _fmt_cell(mean: float, rng: tuple[float, float]) -> str:
    if not math.isfinite(mean):
        return "-"
    text = f"{mean:.0f}" if abs(mean) >= 100 else f"{mean:.3f}"
    lo, hi = rng
    if math.isfinite(lo) and hi > lo:
        text += f" ({lo:.0f}–{hi:.0f})" if abs(mean) >= 100 else f" ({lo:.3f}–{hi:.3f})"
    return text


def _tolerance_text(kind: str, bound: float, family: str) -> str:
    if kind == "abs":
        return f"±{bound * 100:g} pp" if family in ("share", "utilization") else f"±{bound:g}"
    if kind == "rel":
        return f"±{bound * 100:g} %"
    return f"×{bound:g}"


def compare_results(
    a_runs: list[RunResult],
    b_runs: list[RunResult],
    *,
    backends: tuple[str, str] = ("sim", "linux"),
    tolerances: Mapping[str, tuple[str, float]] = DEFAULT_TOLERANCES,
    spec_name: str = "",
) -> Comparison:
    """Compare two sets of runs of the same spec (pure; no running)."""
    a_metrics = [run_metrics(r) for r in a_runs]
    b_metrics = [run_metrics(r) for r in b_runs]
    names: list[str] = []
    for m in [*a_metrics, *b_metrics]:
        names.extend(k for k in m if k not in names)
    rows = []
    for name in names:
        av = np.array([m.get(name, math.nan) for m in a_metrics], dtype=float)
        bv = np.array([m.get(name, math.nan) for m in b_metrics], dtype=float)
        a_mean = float(np.nanmean(av)) if np.isfinite(av).any() else math.nan
        b_mean = float(np.nanmean(bv)) if np.isfinite(bv).any() else math.nan
        fam = _family(name)
        tol = tolerances.get(fam) if fam else None
        if tol is not None:
            diff, ok = _within(tol[0], tol[1], b_mean, a_mean)
            tol_text, within = _tolerance_text(tol[0], tol[1], fam or ""), ok
        else:
            diff, tol_text, within = b_mean - a_mean, "-", None
        rows.append(
            {
                "metric": name,
                "a": a_mean,
                "b": b_mean,
                "a_range": (float(np.nanmin(av)), float(np.nanmax(av))) if np.isfinite(av).any() else (math.nan,) * 2,
                "b_range": (float(np.nanmin(bv)), float(np.nanmax(bv))) if np.isfinite(bv).any() else (math.nan,) * 2,
                "difference": diff,
                "tolerance": tol_text,
                "within": within,
            }
        )
    return Comparison(
        spec_name,
        backends,
        rows,
        runs={backends[0]: a_metrics, backends[1]: b_metrics},
        manifests={backends[0]: [r.manifest for r in a_runs], backends[1]: [r.manifest for r in b_runs]},
    )


def compare_backends(
    spec: str | os.PathLike[str] | Mapping[str, Any] | Experiment,
    *,
    seeds: int = 1,
    reps: int = 1,
    backends: tuple[str, str] = ("sim", "linux"),
    out_dir: str | os.PathLike[str] | None = None,
    tolerances: Mapping[str, tuple[str, float]] = DEFAULT_TOLERANCES,
    on_run: Callable[[str, int, int], None] | None = None,
) -> Comparison:
    """Run ``spec`` ``seeds`` times on ``backends[0]`` and ``reps`` times on
    ``backends[1]`` and compare (see the module doc). Every backend is checked before
    anything runs. With ``out_dir``, each run is saved as ``<out_dir>/<backend>-<k>``.
    ``on_run(backend, k, total)`` is called before each run."""
    from .. import api
    from . import get_backend

    if seeds < 1 or reps < 1:
        raise ValueError(f"--seeds and --reps must be at least 1 (got {seeds} and {reps})")
    exp = load_spec(spec if isinstance(spec, (Mapping, Experiment)) else os.fspath(spec))
    for name in backends:
        get_backend(name).check(exp)
    base = exp.experiment.seed
    runs: dict[str, list[RunResult]] = {}
    for name, count in zip(backends, (seeds, reps), strict=True):
        runs[name] = []
        for k in range(count):
            if on_run is not None:
                on_run(name, k, count)
            target = Path(out_dir) / f"{name}-{k}" if out_dir is not None else None
            runs[name].append(api.run(exp, target, seed=(base + k) % 2**64, backend=name, overwrite=True))
    return compare_results(
        runs[backends[0]], runs[backends[1]], backends=backends, tolerances=tolerances, spec_name=exp.experiment.name
    )
