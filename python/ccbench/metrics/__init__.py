"""Metrics: pure functions over result tables, one family per module, each citing
its definition in the metric specification (``metrics.md``, by id). The id → function
map is :data:`ccbench.metrics.catalog.METRICS`.

=================  ==============================================================
module             metrics
=================  ==============================================================
throughput         M-TPUT (per flow, sender, CCA, total, time series), M-SHARE
sizing             M-BDP
fairness           M-JFI, M-JFI-SENDER, M-JFI-FLOWMEAN, M-JFI-GROUP, M-JFI-TS, M-JFI-PL
utilization        M-PHI, M-BWUTIL, M-PHASE-TPUT, M-OVERALL
retransmissions    M-RETX, M-RR, M-RETX-PCT, M-LOSSRATE, M-HALVRATE, M-LOSS-HALVING, M-BURST
queue              M-QLEN, M-NQ, M-QOCC, M-DROP, queueing-delay percentiles
distribution       M-AVGTPUT, M-QUANT, M-AVGTHR-SD
convergence        M-EPS-CONV, M-SPREAD, M-CONV-JFI, M-T90, M-DOS-REC
ratios             M-TR-RECIPE, M-TR-NCF, M-TD, M-HARM, M-FNESS
fct                M-FCT, M-FCT-SLOWDOWN, M-FLOWCOUNT
mathis             M-MATHIS, M-MATHIS-C, M-MATHIS-ERR
aggregate          M-STATS, M-AVG-PHI, M-AVG-RR, M-AVG-J, M-EQUIL (over runs)
=================  ==============================================================

Where the sources differ, the choice is a keyword parameter with a documented
default. Every metric is defined once, here; :func:`summary` only combines them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .aggregate import equilibrium_buffer, over_repetitions, overall_average, relative_retransmissions_over_runs
from .convergence import (
    EpsConvergence,
    TimeToEvent,
    burst_recovery,
    burst_windows,
    dos_recovery_time,
    elephant_flows,
    ema_throughput,
    eps_convergence,
    jfi_convergence_time,
    time_to_fraction,
)
from .distribution import average_throughput, avg_throughput_sd, throughput_quantiles
from .fairness import jain_by_group, jain_flowmean, jain_index, jain_parking_lot, jain_senders, jain_timeseries
from .fct import (
    DEFAULT_SIZE_EDGES,
    by_size_bucket,
    connection_setup,
    expected_fct,
    fct_slowdown,
    flow_completion,
    flow_counts,
)
from .mathis import MATHIS_C_NEWRENO, fit_mathis_c, mathis_error, mathis_inputs, mathis_throughput
from .queue import (
    backlog_delay,
    delay_percentiles,
    delay_samples,
    drop_ratio,
    link_drop_ratio,
    median_occupancy,
    occupancy,
    queue_delay_percentiles,
    relative_median_difference,
    sojourn_percentiles,
)
from .ratios import fness, harm, throughput_difference, throughput_ratio_ncf, throughput_ratio_recipe
from .retransmissions import (
    burstiness,
    data_drops,
    drop_burstiness,
    has_window_counters,
    in_window,
    loss_and_halving_rates,
    relative_retransmissions,
    retransmission_pct,
    retransmissions,
)
from .sizing import bdp_bytes, buffer_bytes, buffer_packets
from .throughput import (
    aggregate_goodput,
    flow_goodput,
    goodput_timeseries,
    group_timeseries,
    moving_average,
    total_goodput,
    window_bytes,
)
from .utilization import bwutil_gap, capacity_bits, overall_throughput, phase_throughput, rate_phases, utilization

if TYPE_CHECKING:
    from ..results import RunResult

__all__ = [
    "DEFAULT_SIZE_EDGES",
    "MATHIS_C_NEWRENO",
    "EpsConvergence",
    "TimeToEvent",
    "aggregate_goodput",
    "average_throughput",
    "avg_throughput_sd",
    "backlog_delay",
    "bdp_bytes",
    "buffer_bytes",
    "buffer_packets",
    "burst_recovery",
    "burst_windows",
    "elephant_flows",
    "burstiness",
    "bwutil_gap",
    "by_size_bucket",
    "capacity_bits",
    "data_drops",
    "delay_percentiles",
    "delay_samples",
    "queue_delay_percentiles",
    "dos_recovery_time",
    "drop_burstiness",
    "drop_ratio",
    "ema_throughput",
    "eps_convergence",
    "equilibrium_buffer",
    "expected_fct",
    "fct_slowdown",
    "fit_mathis_c",
    "flow_completion",
    "flow_counts",
    "connection_setup",
    "flow_goodput",
    "fness",
    "goodput_timeseries",
    "group_timeseries",
    "harm",
    "has_window_counters",
    "in_window",
    "jain_by_group",
    "jain_flowmean",
    "jain_index",
    "jain_parking_lot",
    "jain_senders",
    "jain_timeseries",
    "jfi_convergence_time",
    "link_drop_ratio",
    "loss_and_halving_rates",
    "mathis_error",
    "mathis_inputs",
    "mathis_throughput",
    "median_occupancy",
    "moving_average",
    "occupancy",
    "over_repetitions",
    "overall_average",
    "overall_throughput",
    "phase_throughput",
    "rate_phases",
    "relative_median_difference",
    "relative_retransmissions",
    "relative_retransmissions_over_runs",
    "retransmission_pct",
    "retransmissions",
    "sojourn_percentiles",
    "summary",
    "throughput_difference",
    "throughput_quantiles",
    "throughput_ratio_ncf",
    "throughput_ratio_recipe",
    "time_to_fraction",
    "total_goodput",
    "utilization",
    "window_bytes",
]


def _window_drops(result: RunResult, warmup: int, link: str) -> tuple[dict[str, float], str]:
    """The drops at ``link`` over the measurement window and where they come from:
    the engine's link counters, else the queue samples, else unavailable."""
    if "links" in result.tables:
        try:
            return link_drop_ratio(result.links, link=link), "link counters"
        except ValueError:
            pass
    queue_ts = result.queue_ts if "queue_ts" in result.tables else None
    if queue_ts is not None and (queue_ts["link"].astype(str) == link).any():
        return drop_ratio(queue_ts, link=link, start_ns=warmup), "queue samples"
    return {"drops": float("nan"), "arrivals": float("nan"), "drop_pct": float("nan")}, "unavailable"


def summary(result: RunResult) -> dict[str, Any]:
    """The headline metrics of one run over its measurement window [warmup, duration]:

    ``flows`` (DataFrame: per-flow goodput with its retransmissions), ``jain`` (M-JFI
    over all flows), ``jain_by_group`` (M-JFI-GROUP), ``jain_senders`` (M-JFI-SENDER:
    over the senders' aggregate goodputs; NaN with one sender), ``goodput_bps`` (total),
    ``utilization`` (M-PHI), ``retransmissions`` (M-RETX), ``retransmission_pct``
    (M-RETX-PCT), the bottleneck's ``drops``/``drop_pct`` (M-DROP; ``drops`` is None
    when the run has neither link counters nor queue samples), its queue occupancy
    (``queue``: M-QLEN/M-NQ) and queueing delay (``queue_delay``: mean and
    percentiles of the sojourn samples, in ns).

    Every figure covers the measurement window: retransmissions are the counts after
    the warm-up when the run has the counters at the warm-up (``windows["retransmissions"]``
    says ``"measurement window"``, else ``"whole run"`` for runs written before they
    were recorded), and drops come from the engine's link counters, so they do not
    depend on sampling (``windows["drops"]`` names the source).

    It reads only the manifest's spec and ``derived`` block and the tables' required
    columns (optional ones when present), so it gives the same metrics for every backend.
    """
    derived = result.derived
    warmup = int(derived["window"]["warmup_ns"])
    duration = int(derived["window"]["duration_ns"])
    link = derived["bottleneck"]
    buffer = derived["buffer"]
    flows = result.flows
    windowed = has_window_counters(flows)
    counted = in_window(flows) if windowed else flows
    per_flow = flow_goodput(flows, warmup)
    per_flow["segs_retrans"] = counted["segs_retrans"].to_numpy()
    queue_ts = result.queue_ts if "queue_ts" in result.tables else None
    # The link the summary is about: the bottleneck, or a topology's slowest link.
    name = link.get("link", "bottleneck")
    drops, drops_source = _window_drops(result, warmup, name)
    occ = (
        occupancy(
            queue_ts,
            link=name,
            start_ns=warmup,
            limit_packets=buffer["packets"] if buffer["qdisc"] == "pfifo" else None,
            limit_bytes=buffer["bytes"] if buffer["qdisc"] != "pfifo" else None,
        )
        if queue_ts is not None
        else {}
    )
    try:
        delays, delays_source = queue_delay_percentiles(result, name, start_ns=warmup)
    except KeyError:  # neither sojourn samples nor the bottleneck's rate to estimate them
        delays, delays_source = {}, "unavailable"
    return {
        "flows": per_flow,
        "jain": jain_index(per_flow["goodput_bps"]),
        "jain_senders": jain_senders(flows, warmup_ns=warmup, duration_ns=duration),
        "jain_by_group": jain_by_group(per_flow),
        "goodput_bps": total_goodput(flows, warmup_ns=warmup, duration_ns=duration),
        "utilization": utilization(
            flows[flows["sender_name"].isin(link["senders"])] if "senders" in link else flows,
            warmup_ns=warmup,
            duration_ns=duration,
            rate_bps=link["rate_bps"],
            rate_schedule=link.get("rate_schedule", []),
        ),
        "retransmissions": retransmissions(counted),
        "retransmission_pct": retransmission_pct(counted),
        "drops": None if drops_source == "unavailable" else int(drops["drops"]),
        "drop_pct": drops["drop_pct"],
        "queue": occ,
        "queue_delay": delays,
        "windows": {
            "retransmissions": "measurement window" if windowed else "whole run",
            "drops": drops_source,
            "queue_delay": delays_source,
        },
        **_fct_summary(flows, link["rate_bps"]),
    }


def _fct_summary(flows: Any, rate_bps: float) -> dict[str, Any]:
    """M-FCT-SLOWDOWN for runs with finite flows: ``fct`` (per flow, eFCT beside oFCT),
    ``fct_by_size`` (slowdown by size bucket) and, when flows opened with a handshake,
    ``connection_setup``."""
    if not (flows["size_bytes"].to_numpy() >= 0).any():
        return {}
    per_flow = fct_slowdown(flows, capacity_bps=rate_bps)
    out: dict[str, Any] = {"fct": per_flow, "fct_by_size": by_size_bucket(per_flow, "slowdown")}
    setup = connection_setup(flows)
    if setup:
        out["connection_setup"] = setup
    return out
