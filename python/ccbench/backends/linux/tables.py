"""Turn a kernel run's samples into the result tables of ``docs/results-format.md``.

Kernel counters are read from ``ss`` samples taken every ``sample_interval``; a value
"at" a time between two samples (the end of the warm-up, the end of the run) is
linearly interpolated between them for byte counts and taken from the nearest sample
for everything else. Times are ns since the run's origin (the moment the first flow
could start).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from .netplan import QueuePlan
from .plan import FlowPlan, LinuxPlan
from .sampling import QueueSample, SocketSample

__all__ = ["FlowOutcome", "build_tables", "value_at"]


@dataclass
class FlowOutcome:
    """What the runner observed of one flow besides the samples."""

    launched_ns: int
    exited_ns: int | None = None
    client: dict[str, Any] = field(default_factory=dict)  # iperf3 -J of the client
    server: dict[str, Any] = field(default_factory=dict)  # iperf3 -J of the server
    base_rtt_ns: int = 0


def value_at(times: Sequence[int], values: Sequence[float], t: int) -> float:
    """A cumulative counter at time ``t``: 0 before the first sample, the last value
    after the last, linear in between."""
    if not times or t < times[0]:
        return 0.0
    if t >= times[-1]:
        return float(values[-1])
    return float(np.interp(t, times, values))


def _acked(s: SocketSample) -> int:
    # tcpi_bytes_acked counts the SYN's sequence number too
    return max(0, s.bytes_acked - 1)


def _dict(values: list[str]) -> pa.Array:
    return pa.array(values, type=pa.string()).dictionary_encode()


def _flow_row(
    plan: LinuxPlan, f: FlowPlan, samples: list[tuple[int, SocketSample]], out: FlowOutcome
) -> dict[str, Any]:
    dur, warm = plan.duration_ns, plan.warmup_ns
    times = [t for t, _ in samples]
    acked = [_acked(s) for _, s in samples]
    start = out.launched_ns
    completed = False
    fct = -1
    if f.size_bytes is not None:
        # the sized-flow client reports its FCT once the receiver has every byte
        client_fct = out.client.get("fct_ns")
        received = int(out.server.get("received_bytes", 0))
        if isinstance(client_fct, int) and received >= f.size_bytes and start + client_fct <= dur:
            completed, fct = True, int(client_fct)
    if completed:
        end = start + fct
    elif f.stop_ns is not None:
        end = min(dur, f.stop_ns)
    else:
        end = dur
    delivered = value_at(times, acked, end)
    if completed:
        delivered = max(delivered, float(f.size_bytes or 0))
    at_warm = value_at(times, acked, warm) if start < warm else 0.0
    last = None
    for t, s in samples:  # the sample nearest the end, not beyond it by more than half an interval
        if t <= end + plan.sample_interval_ns // 2:
            last = s
    # the counters at the warm-up: the last sample at or before it (none: nothing yet)
    warm_s = None
    for t, s in samples:
        if t <= warm:
            warm_s = s
    return {
        "flow_id": f.flow_id,
        "sender": f.sender,
        "sender_name": f.sender_name,
        "group": f.group,
        "cca": f.cca,
        "start_ns": start,
        "stop_ns": -1 if f.stop_ns is None else f.stop_ns,
        "size_bytes": -1 if f.size_bytes is None else f.size_bytes,
        "base_rtt_ns": out.base_rtt_ns,
        "mss": f.mss,
        "delivered_bytes": int(round(delivered)),
        "delivered_bytes_at_warmup": int(round(at_warm)),
        "completed": completed,
        "fct_ns": fct,
        "end_ns": end,
        "segs_sent": last.data_segs_out if last else 0,
        "segs_retrans": last.retrans_total if last else 0,
        "segs_delivered": last.delivered if last else 0,
        "min_rtt_ns": last.min_rtt_ns if last else -1,
        "srtt_ns": last.srtt_ns if last else 0,
        "segs_sent_at_warmup": warm_s.data_segs_out if warm_s else 0,
        "segs_retrans_at_warmup": warm_s.retrans_total if warm_s else 0,
        "segs_delivered_at_warmup": warm_s.delivered if warm_s else 0,
        **_setup(f, out),
    }


def _setup(f: FlowPlan, out: FlowOutcome) -> dict[str, Any]:
    """The handshake columns: measured by the sized-flow tool (first SYN to the
    SYN-ACK's arrival, and the SYNs resent); iperf3 does not report its data
    connection's handshake, so a bulk flow has ``setup_ns`` -1 and ``syn_retrans`` 0
    (any SYN it resent is in ``segs_retrans``: ``tcpi_total_retrans`` counts it)."""
    error = str(out.client.get("error", ""))
    failed = bool(out.client.get("setup_failed")) or "unable to connect" in error
    setup = out.client.get("setup_ns") if f.size_bytes is not None else None
    return {
        "setup_ns": setup if isinstance(setup, int) and not failed else -1,
        "syn_retrans": int(out.client.get("syn_retrans", 0)) if f.size_bytes is not None else 0,
        "setup_failed": failed,
    }


_FLOW_TYPES: dict[str, pa.DataType] = {
    "flow_id": pa.uint64(), "sender": pa.uint64(), "start_ns": pa.uint64(), "stop_ns": pa.int64(),
    "size_bytes": pa.int64(), "base_rtt_ns": pa.uint64(), "mss": pa.uint64(), "delivered_bytes": pa.uint64(),
    "delivered_bytes_at_warmup": pa.uint64(), "completed": pa.bool_(), "fct_ns": pa.int64(), "end_ns": pa.uint64(),
    "segs_sent": pa.uint64(), "segs_retrans": pa.uint64(), "segs_delivered": pa.uint64(), "min_rtt_ns": pa.int64(),
    "srtt_ns": pa.uint64(), "segs_sent_at_warmup": pa.uint64(), "segs_retrans_at_warmup": pa.uint64(),
    "segs_delivered_at_warmup": pa.uint64(), "setup_ns": pa.int64(), "syn_retrans": pa.uint64(),
    "setup_failed": pa.bool_(),
}  # fmt: skip
_TS_TYPES: dict[str, pa.DataType] = {
    "time_ns": pa.uint64(), "flow_id": pa.uint64(), "delivered_bytes": pa.uint64(), "cwnd_pkts": pa.uint64(),
    "ssthresh_pkts": pa.int64(), "srtt_ns": pa.uint64(), "min_rtt_ns": pa.int64(), "pacing_rate_bps": pa.uint64(),
    "inflight_pkts": pa.uint64(), "inflight_bytes": pa.uint64(), "retrans_total": pa.uint64(),
    "cc_bw_bps": pa.float64(), "cc_min_rtt_ns": pa.float64(), "cc_pacing_gain": pa.float64(),
    "cc_cwnd_gain": pa.float64(),
}  # fmt: skip
_QUEUE_TYPES: dict[str, pa.DataType] = {
    "time_ns": pa.uint64(), "backlog_bytes": pa.uint64(), "backlog_pkts": pa.uint64(), "enqueued_pkts": pa.uint64(),
    "dequeued_pkts": pa.uint64(), "dequeued_bytes": pa.uint64(), "dropped_pkts": pa.uint64(),
    "ecn_marked_pkts": pa.uint64(), "random_drops": pa.uint64(),
}  # fmt: skip
_STRINGS = ("sender_name", "group", "cca", "link", "kind", "reason")


def _table(rows: list[dict[str, Any]], columns: Sequence[str], types: dict[str, pa.DataType]) -> pa.Table:
    arrays = []
    for c in columns:
        values = [r[c] for r in rows]
        arrays.append(_dict([str(v) for v in values]) if c in _STRINGS else pa.array(values, type=types[c]))
    return pa.table(arrays, names=list(columns))


def _ts_rows(f: FlowPlan, samples: list[tuple[int, SocketSample]], end_ns: int) -> list[dict[str, Any]]:
    nan = math.nan
    rows = []
    for t, s in samples:
        if t > end_ns:
            break
        inflight = max(0, s.unacked - s.sacked - s.lost + s.retrans_now)
        bbr = s.bbr
        rows.append(
            {
                "time_ns": t,
                "flow_id": f.flow_id,
                "delivered_bytes": _acked(s),
                "cwnd_pkts": s.cwnd,
                "ssthresh_pkts": s.ssthresh,
                "srtt_ns": s.srtt_ns,
                "min_rtt_ns": s.min_rtt_ns,
                "pacing_rate_bps": int(s.pacing_rate_bps),
                "inflight_pkts": inflight,
                "inflight_bytes": inflight * f.mss,
                "retrans_total": s.retrans_total,
                "cc_bw_bps": bbr.get("bw", nan),
                "cc_min_rtt_ns": bbr["mrtt"] * 1e6 if "mrtt" in bbr else nan,
                "cc_pacing_gain": bbr.get("pacing_gain", nan),
                "cc_cwnd_gain": bbr.get("cwnd_gain", nan),
            }
        )
    return rows


def build_tables(
    plan: LinuxPlan,
    sockets: dict[int, list[tuple[int, SocketSample]]],
    queues: list[tuple[int, str, QueueSample]],
    outcomes: dict[int, FlowOutcome],
    rate_changes: list[tuple[int, str, int, int]],
    shaped: Sequence[QueuePlan] = (),
) -> dict[str, pa.Table]:
    """``sockets`` maps a flow id to its time-ordered samples; ``rate_changes`` lists
    (time, link, new rate, old rate) as applied; ``shaped`` are the sampled queues
    (one ``links`` row each)."""
    flow_rows = [_flow_row(plan, f, sockets.get(f.flow_id, []), outcomes[f.flow_id]) for f in plan.flows]
    ts_rows: list[dict[str, Any]] = []
    for f, row in zip(plan.flows, flow_rows, strict=True):
        ts_rows.extend(_ts_rows(f, sockets.get(f.flow_id, []), max(row["end_ns"], plan.duration_ns)))
    ts_rows.sort(key=lambda r: (r["time_ns"], r["flow_id"]))
    queue_rows = [
        {
            "time_ns": t,
            "link": link,
            "backlog_bytes": q.backlog_bytes,
            "backlog_pkts": q.backlog_pkts,
            "enqueued_pkts": q.sent_pkts + q.backlog_pkts,
            "dequeued_pkts": q.sent_pkts,
            "dequeued_bytes": q.sent_bytes,
            "dropped_pkts": q.dropped_pkts,
            "ecn_marked_pkts": q.marked_pkts,
            "random_drops": q.random_dropped_pkts,
        }
        for t, link, q in queues
        if t <= plan.duration_ns + plan.sample_interval_ns // 2
    ]
    events: list[dict[str, Any]] = []
    for row in flow_rows:
        events.append(_event(row["start_ns"], "flow_start", row["flow_id"]))
        if row["completed"]:
            events.append(_event(row["end_ns"], "flow_complete", row["flow_id"], value=float(row["fct_ns"])))
        elif row["stop_ns"] >= 0 and row["end_ns"] < plan.duration_ns:
            events.append(_event(row["end_ns"], "flow_stop", row["flow_id"]))
    for t, link, new, old in rate_changes:
        events.append(_event(t, "rate_change", -1, link=link, value=float(new), value2=float(old)))
    events.sort(key=lambda r: (r["time_ns"], r["flow_id"]))
    event_types = {"time_ns": pa.uint64(), "flow_id": pa.int64(), "value": pa.float64(), "value2": pa.float64()}
    from ...results import COLUMNS, OPTIONAL_COLUMNS

    ts_cols = [c for c in COLUMNS["flow_ts"] if c in _TS_TYPES or c not in OPTIONAL_COLUMNS["flow_ts"]]
    return {
        "flows": _table(
            flow_rows, [c for c in COLUMNS["flows"] if c in flow_rows[0]] if flow_rows else [], _FLOW_TYPES
        ),
        "flow_ts": _table(ts_rows, ts_cols, _TS_TYPES),
        "queue_ts": _table(
            queue_rows, [c for c in COLUMNS["queue_ts"] if c in _QUEUE_TYPES or c not in OPTIONAL_COLUMNS["queue_ts"]], _QUEUE_TYPES
        ),
        "events": _table(events, COLUMNS["events"], event_types),
        "links": _links(plan, queues, shaped, rate_changes),
    }


_LINK_TYPES: dict[str, pa.DataType] = {
    "rate_bps": pa.uint64(), "delay_ns": pa.uint64(), "tx_pkts": pa.uint64(), "tx_bytes": pa.uint64(),
    "enqueued_pkts": pa.uint64(), "dropped_pkts": pa.uint64(), "ecn_marked_pkts": pa.uint64(),
    "recorded": pa.bool_(), "enqueued_pkts_at_warmup": pa.uint64(), "dropped_pkts_at_warmup": pa.uint64(),
    "ecn_marked_pkts_at_warmup": pa.uint64(),
}  # fmt: skip


def _links(
    plan: LinuxPlan,
    queues: list[tuple[int, str, QueueSample]],
    shaped: Sequence[QueuePlan],
    rate_changes: list[tuple[int, str, int, int]],
) -> pa.Table:
    """One row per shaped queue: its counters at the end of the run and at the warm-up,
    read from its ``tc`` samples (cumulative counters, linear between two samples).
    Bytes are IP bytes (the size table takes the Ethernet header off), as the
    simulator's wire bytes."""
    from ...results import COLUMNS

    rows = []
    for q in shaped:
        samples = [(t, s) for t, link, s in queues if link == q.link]
        times = [t for t, _ in samples]

        def at(t: int, counter: str, samples: list[tuple[int, QueueSample]] = samples, times: list[int] = times) -> int:
            return int(round(value_at(times, [_counter(s, counter) for _, s in samples], t)))

        end, warm = plan.duration_ns, plan.warmup_ns
        rate = q.rate_bps
        for _, link, new, _ in rate_changes:
            rate = new if link == q.link else rate
        rows.append(
            {
                "link": q.link,
                "rate_bps": rate,
                "delay_ns": q.delay_ns,
                "tx_pkts": at(end, "sent_pkts"),
                "tx_bytes": at(end, "sent_bytes"),
                "enqueued_pkts": at(end, "enqueued"),
                "dropped_pkts": at(end, "dropped_pkts"),
                "ecn_marked_pkts": at(end, "marked_pkts"),
                "recorded": bool(samples),
                "enqueued_pkts_at_warmup": at(warm, "enqueued") if warm else 0,
                "dropped_pkts_at_warmup": at(warm, "dropped_pkts") if warm else 0,
                "ecn_marked_pkts_at_warmup": at(warm, "marked_pkts") if warm else 0,
            }
        )
    return _table(rows, COLUMNS["links"], _LINK_TYPES)


def _counter(s: QueueSample, name: str) -> int:
    return s.sent_pkts + s.backlog_pkts if name == "enqueued" else int(getattr(s, name))


def _event(
    t: int, kind: str, flow_id: int, *, link: str = "", value: float = math.nan, value2: float = math.nan
) -> dict[str, Any]:
    return {
        "time_ns": t,
        "kind": kind,
        "flow_id": flow_id,
        "link": link,
        "reason": "",
        "value": value,
        "value2": value2,
    }
