"""The plot catalog: one function per plot, each drawing from stored results (a run
or a sweep directory opened with :func:`ccbench.runset.open_results`) and returning a
matplotlib ``Figure``; :func:`render` writes one as PNG, SVG or PDF.

matplotlib is imported only when a plot is drawn, so importing this module (and
``ccbench --help``) stays fast.

============================  =====  ==================================================
kind                          needs  what
============================  =====  ==================================================
throughput                    run    goodput over time per flow / group / CCA / sender
cwnd                          run    congestion window over time
queue                         run    queue occupancy, drops and marks over time
queue-delay                   run    queueing delay over time
queue-delay-cdf               any    CDF of the queueing delay (each run of a sweep)
cca-state                     run    a flow's CCA mode, pacing rate, bandwidth estimate, cwnd
burst-recovery                run    elephant goodput around bursts and its recovery (M-DOS-REC)
fct                           any    FCT by flow-size bucket
fct-slowdown                  any    FCT slowdown by flow-size bucket
mathis                        any    measured goodput vs the Mathis model with best-fit C
convergence                   any    convergence-time bars (JFI threshold, ε-convergence)
sender-throughput-vs-buffer   sweep  per-sender goodput against the buffer size
retransmissions-vs-buffer     sweep  retransmissions against the buffer size
jain-heatmap                  sweep  Jain's index over two axes of the grid
share-heatmap                 sweep  one CCA's or sender's goodput share over two axes
============================  =====  ==================================================

"run" plots given a sweep draw one of its runs (``run=`` option, default the first).
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..results import RunResult
from ..runset import RunSet, open_results
from . import flows, grid, timeseries
from ._base import FORMATS, save_figure

__all__ = ["CATALOG", "FORMATS", "PlotKind", "draw", "render", "save_figure"]


@dataclass(frozen=True)
class PlotKind:
    name: str
    function: Callable[..., Any]
    needs: str  # "run", "sweep" or "any"

    @property
    def summary(self) -> str:
        return (inspect.getdoc(self.function) or "").split("\n\n")[0].replace("\n", " ").replace("``", "")

    @property
    def options(self) -> list[str]:
        sig = inspect.signature(self.function)
        return [p for p in sig.parameters if p not in ("data", "table")]


CATALOG: dict[str, PlotKind] = {
    k.name: k
    for k in (
        PlotKind("throughput", timeseries.throughput, "run"),
        PlotKind("cwnd", timeseries.cwnd, "run"),
        PlotKind("queue", timeseries.queue, "run"),
        PlotKind("queue-delay", timeseries.queue_delay, "run"),
        PlotKind("queue-delay-cdf", timeseries.queue_delay_cdf, "any"),
        PlotKind("cca-state", timeseries.cca_state, "run"),
        PlotKind("burst-recovery", timeseries.burst_recovery_plot, "run"),
        PlotKind("fct", flows.fct_by_size, "any"),
        PlotKind("fct-slowdown", flows.fct_slowdown_by_size, "any"),
        PlotKind("mathis", flows.mathis_fit, "any"),
        PlotKind("convergence", flows.convergence, "any"),
        PlotKind("sender-throughput-vs-buffer", grid.sender_throughput_vs_buffer, "sweep"),
        PlotKind("retransmissions-vs-buffer", grid.retransmissions_vs_buffer, "sweep"),
        PlotKind("jain-heatmap", grid.jain_heatmap, "sweep"),
        PlotKind("share-heatmap", grid.share_heatmap, "sweep"),
    )
}


def _kind(kind: str) -> PlotKind:
    if kind not in CATALOG:
        raise ValueError(f"unknown plot kind {kind!r}; kinds: {', '.join(CATALOG)}")
    return CATALOG[kind]


def kinds_for(data: RunSet) -> list[str]:
    """The plot kinds that apply to ``data`` (all but the sweep plots for a run)."""
    return [k for k, p in CATALOG.items() if p.needs != "sweep" or data.kind == "sweep"]


def draw(data: RunSet | RunResult | str | os.PathLike[str], kind: str, **options: Any):
    """The ``kind`` figure of ``data`` (a run set, a run, or a directory). Options
    are the plot function's keyword parameters; an unknown one is an error naming
    the allowed ones."""
    pk = _kind(kind)
    if not isinstance(data, (RunSet, RunResult)):
        data = open_results(data)
    if pk.needs == "sweep" and (isinstance(data, RunResult) or data.kind != "sweep"):
        raise ValueError(f"plot {kind!r} needs a sweep directory; this is a single run")
    bad = sorted(set(options) - set(pk.options))
    if bad:
        raise ValueError(f"plot {kind!r} has no option {', '.join(bad)}; options: {', '.join(pk.options) or 'none'}")
    return pk.function(data, **options)


def render(
    data: RunSet | RunResult | str | os.PathLike[str],
    kind: str,
    out: str | os.PathLike[str],
    fmt: str | None = None,
    **options: Any,
) -> Path:
    """Draw the ``kind`` plot of ``data`` and write it to ``out`` (PNG, SVG or PDF by
    ``fmt`` or the file's suffix)."""
    fig = draw(data, kind, **options)
    return save_figure(fig, out, fmt)
