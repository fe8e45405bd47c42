"""Overlaid figures for ``ccbench compare``: the same quantity of several runs or
sweeps on one set of axes."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..metrics import delay_samples, goodput_timeseries, group_timeseries, over_repetitions
from ._base import axis_label, new_figure, ordered, pick_run, seconds

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from ..runset import RunSet


def overlay_goodput(sources: list[tuple[str, RunSet]], *, bin_s: float = 1.0) -> Figure:
    """Total goodput over time of each source's run (the first run of a sweep)."""
    fig = new_figure()
    ax = fig.add_subplot()
    for label, rs in sources:
        res, _ = pick_run(rs)
        ts = group_timeseries(goodput_timeseries(res.flow_ts, int(bin_s * 1e9)), res.flows, by="total")
        ax.plot(seconds(ts["time_ns"]), ts["goodput_bps"] / 1e6, label=label, lw=1.2)
    ax.set(xlabel="time [s]", ylabel="total goodput [Mbit/s]", title=f"total goodput ({bin_s:g} s bins)")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize="small")
    return fig


def overlay_queue(sources: list[tuple[str, RunSet]], *, link: str | None = None) -> Figure:
    """Queue occupancy over time of each source's run, at ``link`` (default: each
    run's bottleneck, a topology's slowest link)."""
    fig = new_figure()
    ax = fig.add_subplot()
    for label, rs in sources:
        res, _ = pick_run(rs)
        q = res.queue_ts
        q = q[q["link"].astype(str) == (link or res.primary_link)].sort_values("time_ns")
        ax.plot(seconds(q["time_ns"]), q["backlog_pkts"], label=label, lw=1.0)
    ax.set(xlabel="time [s]", ylabel="queue [packets]", title=f"{link or 'bottleneck'} queue occupancy")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize="small")
    return fig


def overlay_delay_cdf(sources: list[tuple[str, RunSet]], *, link: str | None = None) -> Figure:
    """CDF of the queueing delay (measurement window) of each source's run, at
    ``link`` (default: each run's bottleneck)."""
    fig = new_figure()
    ax = fig.add_subplot()
    for label, rs in sources:
        res, _ = pick_run(rs)
        d, _how = delay_samples(res, link)
        start = int(res.engine_config.get("warmup_ns", 0))
        x = np.sort(d.loc[d["time_ns"].to_numpy(dtype=np.int64) >= start, "sojourn_ns"].to_numpy(dtype=float)) / 1e6
        if x.size:
            ax.plot(x, np.arange(1, x.size + 1) / x.size, label=label, lw=1.2, drawstyle="steps-post")
    ax.set(xlabel="queueing delay [ms]", ylabel="fraction of samples", title="queueing delay CDF")
    ax.set_ylim(0, 1)
    ax.legend(fontsize="small")
    return fig


def overlay_metric(tables: list[tuple[str, pd.DataFrame]], *, metric: str, x: str) -> Figure:
    """A metric against a sweep axis for several sweeps: mean ± SD over the runs at
    each value of ``x`` (failed runs left out)."""
    fig = new_figure()
    ax = fig.add_subplot()
    for label, t in tables:
        if x not in t.columns or metric not in t.columns:
            continue
        s = over_repetitions(t, metric, [x], stats=("mean", "std"))
        order = ordered(s[x].dropna())
        s = s.set_index(x).loc[order]
        xs = (
            np.asarray(order)
            if all(isinstance(v, (int, float)) for v in order)
            else np.asarray([str(v) for v in order])
        )
        ax.errorbar(
            xs, s["mean"], yerr=np.nan_to_num(s["std"].to_numpy(dtype=float)), marker="o", capsize=3, label=label
        )
    if x == "buffer_bdp":
        ax.set_xscale("log", base=2)
    ax.set(xlabel=axis_label(x), ylabel=metric, title=f"{metric} by {axis_label(x)}")
    ax.legend(fontsize="small")
    return fig
