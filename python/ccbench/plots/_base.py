"""Shared plumbing of the plot catalog: figures without pyplot's global state,
deterministic files, picking a run of a sweep, and the per-run metrics table."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..results import ResultsError, RunResult
from ..runset import RunSet, natural_key, run_metrics

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

FORMATS = ("png", "svg", "pdf")


def new_figure(width: float = 7.0, height: float = 4.0) -> Figure:
    """A figure with the Agg canvas (no display, no pyplot state)."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def save_figure(fig: Figure, path: str | os.PathLike[str], fmt: str | None = None, *, dpi: int = 110) -> Path:
    """Write ``fig`` as PNG, SVG or PDF (from ``fmt`` or the file's suffix). SVG and
    PDF carry no creation date and a fixed hash salt, so the same data gives the same
    bytes."""
    import matplotlib

    p = Path(path)
    fmt = (fmt or p.suffix.lstrip(".") or "png").lower()
    if fmt not in FORMATS:
        raise ValueError(f"format {fmt!r} is not supported; choose one of {', '.join(FORMATS)}")
    metadata: dict[str, Any] = {"png": {"Software": None}, "svg": {"Date": None}, "pdf": {"CreationDate": None}}[fmt]
    p.parent.mkdir(parents=True, exist_ok=True)
    with matplotlib.rc_context({"svg.hashsalt": "ccbench", "svg.fonttype": "none"}):
        fig.savefig(p, format=fmt, dpi=dpi, metadata=metadata)
    return p


def pick_run(data: RunSet | RunResult, run: str | None = None) -> tuple[RunResult, str]:
    """The run to draw: ``data`` itself, or the run named ``run`` of a sweep (default
    its first complete run). Returns the result and its label."""
    if isinstance(data, RunResult):
        return data, str(data.manifest.get("name", ""))
    entries = data.complete
    if not entries:
        raise ResultsError(f"{data.root}: no complete run to plot")
    if run is None:
        e = entries[0]
    else:
        matches = [x for x in entries if x.name == run or x.name.endswith(run)]
        if not matches:
            names = ", ".join(x.name for x in entries[:20])
            raise ValueError(f"no complete run {run!r} in {data.root}; runs: {names}")
        e = matches[0]
    label = e.name if data.kind == "sweep" else str(e.manifest.get("name", e.name))
    return e.load(), label


def sweep_table(data: RunSet, table: pd.DataFrame | None = None) -> pd.DataFrame:
    """The per-run metrics of a sweep (computed once per call site if not given)."""
    if data.kind != "sweep":
        raise ValueError(f"{data.root} is a single run; this plot needs a sweep")
    return table if table is not None else run_metrics(data)


def ordered(values: Any) -> list[Any]:
    return sorted({v for v in values}, key=natural_key)


def axis_label(name: str) -> str:
    return {"buffer_bdp": "buffer [× BDP]", "rate_mbps": "bottleneck rate [Mbit/s]"}.get(name, name)


def flow_labels(result: RunResult) -> dict[int, str]:
    f = result.flows
    return {
        int(r.flow_id): f"{r.flow_id} {r.group} ({r.cca})"
        for r in f[["flow_id", "group", "cca"]].astype({"group": str, "cca": str}).itertuples(index=False)
    }


def seconds(t_ns: Any) -> Any:
    return t_ns / 1e9
