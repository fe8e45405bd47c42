"""Figures of the study reports: a scenario's ``[[suite.figure]]`` tables draw a metric
of its report table against a numeric parameter, one line per series and one panel
per value of a panel parameter, as the studies' figures do (e.g. D1 Figs. 4a-7a:
average throughput vs drop rate, one line per variant, one panel per RTT).

Keys: ``y`` (a column of the table), ``x`` (a parameter), optional ``series``,
``panel``, ``logx``, ``title`` and ``select`` (``{column = value}``: only those cells). A figure whose columns are missing from the table (a
shrunk scale without that axis) is skipped with a note, not drawn half.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from ..plots._base import new_figure, save_figure

__all__ = ["draw"]


def _num(v: Any) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def draw(table: pd.DataFrame, spec: dict[str, Any], path: Path) -> str | None:
    """Draw one figure into ``path`` (PNG); returns why it was skipped, or None."""
    x, y = str(spec["x"]), str(spec["y"])
    series, panel = spec.get("series"), spec.get("panel")
    for col, want in dict(spec.get("select", {})).items():  # e.g. one bandwidth of a grid over several
        if col in table.columns:
            table = table[table[col].astype(str) == str(want)]
    if table.empty:
        return "not drawn: no grid cell matches its selection"
    missing = [c for c in (x, y, series, panel) if c is not None and c not in table.columns]
    if missing:
        return f"not drawn: the table has no column {', '.join(map(str, missing))} at this scale"
    panels = list(dict.fromkeys(table[panel])) if panel else [None]
    fig = new_figure(width=min(4.0 * len(panels), 16.0), height=3.2)
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    for ax, pv in zip(axes, panels, strict=True):
        part = table if pv is None else table[table[panel] == pv]
        groups = part.groupby(series, sort=False) if series else [(None, part)]
        for name, g in groups:
            xs = g[x].map(_num)
            order = xs.sort_values().index
            ax.plot(xs[order], g.loc[order, y].map(_num), marker="o", label=None if name is None else str(name))
        if spec.get("logx"):
            ax.set_xscale("symlog", linthresh=min((v for v in part[x].map(_num) if v > 0), default=1e-9))
        ax.set_xlabel(x)
        ax.set_ylabel(y)
        if pv is not None:
            ax.set_title(f"{panel} = {pv}", fontsize=9)
        ax.grid(alpha=0.3)
    if series:
        axes[-1].legend(fontsize=7, title=str(series), title_fontsize=7)
    if spec.get("title"):
        fig.suptitle(str(spec["title"]), fontsize=10)
    save_figure(fig, path, "png")
    return None
