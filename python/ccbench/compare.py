"""``ccbench compare DIR DIR...``: several runs or sweeps side by side.

The first source is the baseline. For each headline metric (the per-run metrics of
:func:`ccbench.runset.run_metrics`; for a sweep, the mean over its complete runs) the
table shows every source's value and its relative difference from the baseline;
differences larger than ``threshold`` (default 5 %) are highlighted. When every source
is a sweep with the same axes, :func:`Comparison.cells` compares them grid cell by
grid cell. :func:`write_html` writes a self-contained HTML page with the tables and
overlaid figures.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from .runset import HEADLINE, RunSet, open_results, run_metrics

__all__ = ["Comparison", "compare", "write_html"]


def _labels(roots: list[Path]) -> list[str]:
    """Short distinct labels: the directory names, with up to two parent directories
    added until they are unique; sources still alike (the same directory twice) are
    numbered."""
    names = [r.name or str(r) for r in roots]
    for depth in (1, 2, 3):
        labels = ["/".join(r.parts[-depth:]) for r in roots]
        if len(set(labels)) == len(labels):
            return labels
    return [f"{i + 1}:{n}" for i, n in enumerate(names)]


def relative_difference(value: float, baseline: float) -> float:
    """(value − baseline) / |baseline|; 0 when both are equal, NaN when the baseline
    is zero (or either is missing) and they differ."""
    if not (math.isfinite(value) and math.isfinite(baseline)):
        return float("nan")
    if value == baseline:
        return 0.0
    return (value - baseline) / abs(baseline) if baseline else float("nan")


@dataclass
class Comparison:
    labels: list[str]
    sources: list[RunSet]
    tables: list[pd.DataFrame]
    threshold: float = 0.05
    summary: pd.DataFrame = field(default_factory=pd.DataFrame)

    def differs(self, metric: str, label: str) -> bool:
        """Whether ``label``'s value of ``metric`` differs from the baseline's by more
        than the threshold (a value present on one side only also counts)."""
        if label == self.labels[0]:
            return False
        base = float(self.summary.loc[metric, self.labels[0]])
        v = float(self.summary.loc[metric, label])
        if math.isfinite(base) != math.isfinite(v):
            return True
        d = relative_difference(v, base)
        return math.isfinite(d) and abs(d) > self.threshold or (not math.isfinite(d) and v != base and math.isfinite(v))

    def cells(self, metric: str = "jain") -> pd.DataFrame | None:
        """Per grid cell (sweeps with the same axes): the mean ``metric`` of each
        source's runs in the cell and the difference from the baseline. None unless
        every source is a sweep with the same axes."""
        if any(s.kind != "sweep" for s in self.sources) or len({tuple(s.axes) for s in self.sources}) != 1:
            return None
        axes = list(self.sources[0].axes)
        if not axes:
            return None
        out: pd.DataFrame | None = None
        for label, t in zip(self.labels, self.tables, strict=True):
            if metric not in t.columns:
                continue
            g = t.groupby(axes, dropna=False)[metric].mean().rename(label).reset_index()
            out = g if out is None else out.merge(g, on=axes, how="outer")
        if out is None:
            return None
        base = self.labels[0]
        for label in self.labels[1:]:
            if label in out.columns and base in out.columns:
                out[f"Δ {label}"] = [relative_difference(a, b) for a, b in zip(out[label], out[base], strict=True)]
        return out


def _summary(labels: list[str], tables: list[pd.DataFrame]) -> pd.DataFrame:
    metrics = list(HEADLINE)
    extra: list[str] = []
    for t in tables:
        extra += [c for c in t.columns if (c.endswith(":mbps") or c.endswith(":share")) and c not in extra]
    rows = {}
    for m in [*metrics, *sorted(extra)]:
        rows[m] = [float(t[m].mean()) if m in t.columns and t[m].notna().any() else float("nan") for t in tables]
    df = pd.DataFrame.from_dict(rows, orient="index", columns=labels)
    df["runs"] = np.nan
    for label, t in zip(labels, tables, strict=True):
        df.loc["runs (complete)", label] = float((t["status"] == "complete").sum())
    return df.drop(columns=["runs"])


def compare(paths: list[str | os.PathLike[str]], *, threshold: float = 0.05) -> Comparison:
    """Open each path as a run or sweep and compare their headline metrics."""
    if len(paths) < 2:
        raise ValueError("compare needs at least two runs or sweeps")
    if threshold < 0:
        raise ValueError(f"threshold must be >= 0, not {threshold}")
    sources = [open_results(p) for p in paths]
    labels = _labels([s.root.resolve() for s in sources])
    tables = [run_metrics(s) for s in sources]
    return Comparison(labels, sources, tables, threshold, _summary(labels, tables))


def write_html(c: Comparison, out: str | os.PathLike[str]) -> Path:
    """A self-contained HTML page: the summary table with the differences
    highlighted, the per-cell table for sweeps, and overlaid figures."""
    from .plots import overlay
    from .plots.grid import grid_axes
    from .report.build import esc, figure_or_note, fmt, page

    base = c.labels[0]
    head = "".join(f"<th>{esc(lab)}</th>" for lab in c.labels)
    rows = []
    for metric, r in c.summary.iterrows():
        cells = [f'<td class="text">{esc(HEADLINE.get(str(metric), metric))}</td>']
        for lab in c.labels:
            v = r[lab]
            d = relative_difference(float(v), float(r[base])) if lab != base else float("nan")
            extra = f" ({d:+.1%})" if lab != base and math.isfinite(d) and d != 0 else ""
            cls = "diff" if c.differs(str(metric), lab) else ""
            cells.append(f'<td class="{cls}">{esc(fmt(v))}{esc(extra)}</td>')
        rows.append("<tr>" + "".join(cells) + "</tr>")
    summary_html = (
        f"<p>Baseline: <b>{esc(base)}</b>. Highlighted: more than {c.threshold:.0%} from the baseline. "
        "Sweeps show the mean over their complete runs.</p>"
        f'<table><thead><tr><th class="text">metric</th>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
    )
    sections = [("summary", "Summary", summary_html)]
    per_cell = c.cells("jain")
    if per_cell is not None:
        from .report.build import table

        sections.append(
            (
                "cells",
                "Jain's index per grid cell",
                table(
                    per_cell,
                    text_cols=list(c.sources[0].axes),
                    highlight=lambda r, col: (
                        col.startswith("Δ") and math.isfinite(r[col]) and abs(r[col]) > c.threshold
                    ),
                ),
            )
        )
    figs = []
    runs = [(lab, s) for lab, s in zip(c.labels, c.sources, strict=True) if s.complete]
    if all(s.kind == "run" for s in c.sources):
        figs += [
            figure_or_note(partial(overlay.overlay_goodput, runs), "total goodput", "total goodput over time"),
            figure_or_note(partial(overlay.overlay_queue, runs), "queue", "bottleneck queue occupancy"),
            figure_or_note(partial(overlay.overlay_delay_cdf, runs), "queueing delay CDF", "queueing delay CDF"),
        ]
    else:
        tables = list(zip(c.labels, c.tables, strict=True))
        sweep = next(s for s in c.sources if s.kind == "sweep")
        axes = grid_axes(sweep, c.tables[c.sources.index(sweep)])
        if axes:
            for metric in ("jain", "utilization", "retransmissions", "queue_mean_pkts"):
                draw = partial(overlay.overlay_metric, tables, metric=metric, x=axes[0])
                figs.append(figure_or_note(draw, metric, f"{metric} by {axes[0]}, one line per source"))
    sections.append(("figures", "Overlaid figures", f'<div class="figs">{"".join(figs)}</div>'))
    html_text = page("ccbench compare: " + " vs ".join(c.labels), f"{len(c.labels)} sources", sections)
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    tmp.write_text(html_text, encoding="utf-8")
    os.replace(tmp, target)
    return target
