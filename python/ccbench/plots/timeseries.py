"""Time-series plots of one run: throughput and cwnd per flow or group, queue
occupancy, queueing delay (series and CDF), recovery after bursts, and a CCA's
state timeline."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..metrics import (
    burst_recovery,
    delay_samples,
    elephant_flows,
    goodput_timeseries,
    group_timeseries,
    moving_average,
)
from ._base import flow_labels, new_figure, pick_run, seconds

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ..results import RunResult
    from ..runset import RunSet

_BY = ("flow", "group", "cca", "sender_name")


def _per_flow(ts, res: RunResult) -> list:
    """(label, samples) of each flow of a per-flow table, labelled "id group (cca)"."""
    names = flow_labels(res)
    return [(names.get(int(f), str(f)), g) for f, g in ts.groupby("flow_id", sort=True)]


def _check_by(by: str) -> None:
    if by not in _BY:
        raise ValueError(f"by must be one of {', '.join(_BY)}, not {by!r}")


def throughput(
    data: RunSet | RunResult, *, run: str | None = None, by: str = "flow", bin_s: float = 1.0, max_lines: int = 20
) -> Figure:
    """Goodput over time (M-TPUT time series) per flow or per group / CCA / sender,
    in bins of ``bin_s`` seconds, with the bottleneck rate as a dashed line."""
    _check_by(by)
    res, label = pick_run(data, run)
    ts = goodput_timeseries(res.flow_ts, int(bin_s * 1e9))
    fig = new_figure()
    ax = fig.add_subplot()
    if by == "flow":
        groups = _per_flow(ts, res)
    else:
        gt = group_timeseries(ts, res.flows, by=by)
        groups = list(gt.groupby(by, sort=True))
    for name, g in groups[:max_lines]:
        ax.plot(seconds(g["time_ns"]), g["goodput_bps"] / 1e6, label=str(name), lw=1.2)
    _rate_line(ax, res)
    ax.set(xlabel="time [s]", ylabel="goodput [Mbit/s]", title=f"{label}: goodput per {by} ({bin_s:g} s bins)")
    ax.set_ylim(bottom=0)
    if groups:
        ax.legend(fontsize="small", ncol=2 if len(groups) > 6 else 1)
    return fig


def _rate_line(ax, res: RunResult) -> None:
    link = res.link_config()
    if "rate_bps" not in link:
        return
    dur = int(res.engine_config["duration_ns"])
    pts = [(0, link["rate_bps"]), *((int(t), int(r)) for t, r in link.get("rate_schedule", []))]
    xs, ys = [], []
    for i, (t, r) in enumerate(pts):
        end = pts[i + 1][0] if i + 1 < len(pts) else dur
        xs += [t / 1e9, end / 1e9]
        ys += [r / 1e6, r / 1e6]
    ax.plot(xs, ys, "k--", lw=0.8, label="bottleneck rate")


def cwnd(data: RunSet | RunResult, *, run: str | None = None, by: str = "flow", max_lines: int = 20) -> Figure:
    """Congestion window over time per flow (or the mean over the flows of each
    group / CCA / sender), in packets."""
    _check_by(by)
    res, label = pick_run(data, run)
    ts = res.flow_ts
    fig = new_figure()
    ax = fig.add_subplot()
    if by == "flow":
        groups = _per_flow(ts, res)
    else:
        keys = dict(zip(res.flows["flow_id"], res.flows[by].astype(str), strict=True))
        df = ts.assign(key=ts["flow_id"].map(keys))
        groups = [(k, g.groupby("time_ns", as_index=False)["cwnd_pkts"].mean()) for k, g in df.groupby("key")]
    for name, g in groups[:max_lines]:
        ax.plot(seconds(g["time_ns"]), g["cwnd_pkts"], label=str(name), lw=1.0, drawstyle="steps-post")
    ax.set(xlabel="time [s]", ylabel="cwnd [packets]", title=f"{label}: congestion window per {by}")
    ax.set_ylim(bottom=0)
    if groups:
        ax.legend(fontsize="small")
    return fig


def queue(data: RunSet | RunResult, *, run: str | None = None, link: str | None = None) -> Figure:
    """Queue occupancy over time (packets) with the buffer limit, and cumulative drops
    (and ECN marks, if any) on a second axis. ``link``: default the run's bottleneck
    (a topology's slowest link)."""
    res, label = pick_run(data, run)
    link = link or res.primary_link
    q = res.queue_ts
    q = q[q["link"].astype(str) == link].sort_values("time_ns")
    fig = new_figure()
    ax = fig.add_subplot()
    ax.plot(seconds(q["time_ns"]), q["backlog_pkts"], lw=1.0, label="backlog")
    qd = res.link_config(link).get("qdisc", {})
    if qd.get("limit_packets"):
        ax.axhline(qd["limit_packets"], color="k", ls="--", lw=0.8, label="buffer limit")
    ax.set(xlabel="time [s]", ylabel="queue [packets]", title=f"{label}: {link} queue occupancy")
    ax.set_ylim(bottom=0)
    ax2 = ax.twinx()
    ax2.plot(seconds(q["time_ns"]), q["dropped_pkts"], color="tab:red", lw=0.8, label="drops (cumulative)")
    if q["ecn_marked_pkts"].to_numpy().any():
        ax2.plot(seconds(q["time_ns"]), q["ecn_marked_pkts"], color="tab:purple", lw=0.8, label="ECN marks")
    ax2.set_ylabel("packets (cumulative)")
    lines = ax.get_legend_handles_labels()
    lines2 = ax2.get_legend_handles_labels()
    ax.legend(lines[0] + lines2[0], lines[1] + lines2[1], fontsize="small", loc="upper left")
    return fig


def queue_delay(data: RunSet | RunResult, *, run: str | None = None, link: str | None = None) -> Figure:
    """Queueing delay over time: sojourn samples when the run recorded them, else
    the backlog's drain time at the link rate (``link``: default the run's bottleneck)."""
    res, label = pick_run(data, run)
    link = link or res.primary_link
    d, how = delay_samples(res, link)
    fig = new_figure()
    ax = fig.add_subplot()
    ax.plot(seconds(d["time_ns"]), d["sojourn_ns"] / 1e6, lw=1.0)
    ax.set(xlabel="time [s]", ylabel="queueing delay [ms]", title=f"{label}: {link} queueing delay ({how})")
    ax.set_ylim(bottom=0)
    return fig


def queue_delay_cdf(
    data: RunSet | RunResult, *, run: str | None = None, link: str | None = None, after_warmup: bool = True
) -> Figure:
    """CDF of the queueing delay over the measurement window, for one run or each run
    of a sweep (up to 12)."""
    from ..results import RunResult as _RR

    fig = new_figure()
    ax = fig.add_subplot()
    if isinstance(data, _RR) or data.kind == "run" or run is not None:
        runs = [pick_run(data, run)]
    else:
        runs = [(e.load(), e.name) for e in data.complete[:12]]
    how = ""
    for res, label in runs:
        d, how = delay_samples(res, link)
        start = int(res.engine_config.get("warmup_ns", 0)) if after_warmup else 0
        x = np.sort(d.loc[d["time_ns"].to_numpy(dtype=np.int64) >= start, "sojourn_ns"].to_numpy(dtype=float)) / 1e6
        if x.size:
            ax.plot(x, np.arange(1, x.size + 1) / x.size, label=label, lw=1.2, drawstyle="steps-post")
    ax.set(xlabel="queueing delay [ms]", ylabel="fraction of samples", title=f"queueing delay CDF ({how})")
    ax.set_ylim(0, 1)
    ax.legend(fontsize="small")
    return fig


def cca_state(data: RunSet | RunResult, *, run: str | None = None, flow: int | None = None) -> Figure:
    """One flow's CCA state timeline: its mode (``cc_state``, colored bands), pacing
    rate and bandwidth estimate, and cwnd. Default flow: the first whose CCA reports
    a state (e.g. BBR), else flow 0."""
    res, label = pick_run(data, run)
    ts = res.flow_ts
    if "cc_state" not in ts:  # an optional column (the kernel's ss shows no CCA mode): no bands
        ts = ts.assign(cc_state="")
    if flow is None:
        with_state = ts[ts["cc_state"].astype(str) != ""]
        flow = int(with_state["flow_id"].iloc[0]) if len(with_state) else int(ts["flow_id"].min())
    f = ts[ts["flow_id"] == flow].sort_values("time_ns")
    if f.empty:
        raise ValueError(f"flow {flow} has no samples; flows: {sorted(set(ts['flow_id'].tolist()))}")
    t = seconds(f["time_ns"].to_numpy(dtype=float))
    fig = new_figure(7.0, 5.0)
    ax_state, ax_rate, ax_cwnd = fig.subplots(3, 1, sharex=True, height_ratios=[1, 2, 2])
    states = f["cc_state"].astype(str).to_numpy()
    names = [s for s in dict.fromkeys(states) if s]
    import matplotlib

    colors = matplotlib.colormaps["tab10"]
    for i, s in enumerate(names):
        ax_state.fill_between(t, 0, 1, where=states == s, step="post", color=colors(i % 10), label=s)
    ax_state.set_yticks([])
    ax_state.set_title(f"{label}: flow {flow} ({res.flows.set_index('flow_id').loc[flow, 'cca']}) state timeline")
    if names:
        ax_state.legend(fontsize="x-small", ncol=min(len(names), 6), loc="upper right")
    else:
        ax_state.text(0.5, 0.5, "this CCA reports no state", ha="center", va="center", transform=ax_state.transAxes)
    ax_rate.plot(t, f["pacing_rate_bps"].to_numpy(dtype=float) / 1e6, lw=1.0, label="pacing rate")
    bw = f["cc_bw_bps"].to_numpy(dtype=float)
    if np.isfinite(bw).any():
        ax_rate.plot(t, bw / 1e6, lw=1.0, label="bandwidth estimate")
    ax_rate.set_ylabel("Mbit/s")
    ax_rate.legend(fontsize="small")
    ax_cwnd.plot(t, f["cwnd_pkts"], lw=1.0, label="cwnd", drawstyle="steps-post")
    ax_cwnd.plot(t, f["inflight_pkts"], lw=0.8, label="in flight", drawstyle="steps-post")
    ax_cwnd.set(xlabel="time [s]", ylabel="packets")
    ax_cwnd.legend(fontsize="small")
    return fig


def burst_recovery_plot(
    data: RunSet | RunResult, *, run: str | None = None, bin_s: float = 1.0, window_s: float = 10.0
) -> Figure:
    """Recovery after bursts (M-DOS-REC): the elephant traffic's goodput and its
    moving average, the burst windows shaded (flows with a stop time, UDP bursts), and the time
    each burst's recovery to 90 % of the pre-burst mean took."""
    res, label = pick_run(data, run)
    flows = res.flows
    duration = int(res.engine_config["duration_ns"])
    rec = burst_recovery(
        flows,
        res.flow_ts,
        duration_ns=duration,
        bin_ns=int(bin_s * 1e9),
        window_ns=int(window_s * 1e9),
        engine_flows=res.engine_config.get("flows"),
    )
    if rec.empty:
        raise ValueError(
            "the run has no burst (a flow with a stop time or a UDP source with bursts) beside a bulk TCP flow"
        )
    bulk = elephant_flows(flows)
    ts = goodput_timeseries(res.flow_ts[res.flow_ts["flow_id"].isin(bulk["flow_id"])], int(bin_s * 1e9))
    total = group_timeseries(ts, bulk, by="total")
    t, v = total["time_ns"].to_numpy(dtype=np.int64), total["goodput_bps"].to_numpy(dtype=float)
    fig = new_figure()
    ax = fig.add_subplot()
    ax.plot(seconds(t), v / 1e6, lw=0.8, color="tab:blue", alpha=0.6, label=f"elephant goodput ({bin_s:g} s bins)")
    ax.plot(
        seconds(t),
        moving_average(t, v, int(window_s * 1e9)) / 1e6,
        lw=1.4,
        color="tab:blue",
        label=f"{window_s:g} s moving average",
    )
    for r in rec.itertuples(index=False):
        ax.axvspan(r.start_ns / 1e9, r.end_ns / 1e9, color="tab:red", alpha=0.15)
        if np.isfinite(r.pre_bps):
            ax.hlines(0.9 * r.pre_bps / 1e6, r.end_ns / 1e9, r.end_ns / 1e9 + r.recovery_s, colors="tab:green", lw=2)
        text = f"{r.recovery_s:.1f} s" if r.recovered else f"> {r.recovery_s:.1f} s"
        ax.annotate(text, (r.end_ns / 1e9, 0), xytext=(2, 4), textcoords="offset points", fontsize="small")
    ax.set(xlabel="time [s]", ylabel="goodput [Mbit/s]", title=f"{label}: recovery after bursts (shaded)")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize="small", loc="upper right")
    return fig
