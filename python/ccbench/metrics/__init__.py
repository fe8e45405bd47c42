"""Metrics: pure functions over result tables, one family per module, each citing
its definition in the metric specification (``metrics.md``, by id):

=================  =====================================================
module             metrics
=================  =====================================================
throughput         M-TPUT (per flow, sender, CCA, time series), M-SHARE
fairness           M-JFI, M-JFI-GROUP
utilization        M-PHI
retransmissions    M-RETX, M-RETX-PCT
queue              M-QLEN, M-NQ, M-DROP
=================  =====================================================

Every metric is defined once, here; :func:`summary` only combines them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .fairness import jain_by_group, jain_index
from .queue import drop_ratio, occupancy
from .retransmissions import retransmission_pct, retransmissions
from .throughput import aggregate_goodput, flow_goodput, goodput_timeseries, total_goodput, window_bytes
from .utilization import capacity_bits, utilization

if TYPE_CHECKING:
    from ..results import RunResult

__all__ = [
    "aggregate_goodput",
    "capacity_bits",
    "drop_ratio",
    "flow_goodput",
    "goodput_timeseries",
    "jain_by_group",
    "jain_index",
    "occupancy",
    "retransmission_pct",
    "retransmissions",
    "summary",
    "total_goodput",
    "window_bytes",
    "utilization",
]


def summary(result: RunResult) -> dict[str, Any]:
    """The headline metrics of one run over its measurement window [warmup, duration]:

    ``flows`` (DataFrame: per-flow goodput with its retransmissions), ``jain`` (M-JFI
    over all flows), ``jain_by_group`` (M-JFI-GROUP), ``jain_senders`` (M-JFI-SENDER:
    over the senders' aggregate goodputs; NaN with one sender), ``goodput_bps`` (total),
    ``utilization`` (M-PHI), ``retransmissions`` (M-RETX), ``retransmission_pct``
    (M-RETX-PCT), and the bottleneck's ``drops``/``drop_pct`` (M-DROP) and queue
    occupancy (M-QLEN/M-NQ).
    """
    cfg = result.engine_config
    warmup = int(cfg.get("warmup_ns", 0))
    duration = int(cfg["duration_ns"])
    link = cfg["topology"]["bottleneck"]
    flows = result.flows
    per_flow = flow_goodput(flows, warmup)
    per_flow["segs_retrans"] = flows["segs_retrans"].to_numpy()
    qdisc = link.get("qdisc", {})
    queue_ts = result.queue_ts if "queue_ts" in result.tables else None
    drops = drop_ratio(queue_ts, start_ns=warmup) if queue_ts is not None else {}
    occ = (
        occupancy(
            queue_ts, start_ns=warmup, limit_packets=qdisc.get("limit_packets"), limit_bytes=qdisc.get("limit_bytes")
        )
        if queue_ts is not None
        else {}
    )
    senders = aggregate_goodput(flows, warmup_ns=warmup, duration_ns=duration, by="sender_name")
    return {
        "flows": per_flow,
        "jain": jain_index(per_flow["goodput_bps"]),
        "jain_senders": jain_index(senders["goodput_bps"]) if len(senders) > 1 else float("nan"),
        "jain_by_group": jain_by_group(per_flow),
        "goodput_bps": total_goodput(flows, warmup_ns=warmup, duration_ns=duration),
        "utilization": utilization(
            flows,
            warmup_ns=warmup,
            duration_ns=duration,
            rate_bps=link["rate_bps"],
            rate_schedule=link.get("rate_schedule", []),
        ),
        "retransmissions": retransmissions(flows),
        "retransmission_pct": retransmission_pct(flows),
        "drops": int(drops.get("drops", 0)),
        "drop_pct": drops.get("drop_pct", float("nan")),
        "queue": occ,
    }
