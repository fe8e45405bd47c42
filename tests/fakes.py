"""Hand-made stand-ins for the engine: a CCA catalog and raw `_core.run()` output with
the columns the binding promises (docs/results-format.md), for tests that must not
need the compiled engine."""

from __future__ import annotations

from typing import Any

import numpy as np

from ccbench.backends.linux.system import KernelInfo
from ccbench.engine import CcaCatalog, CcaInfo, CcaParam

FAKE_CCAS = CcaCatalog(
    (
        CcaInfo("reno", "Reno", "RFC 5681"),
        CcaInfo(
            "cubic",
            "CUBIC",
            "RFC 9438",
            (CcaParam("beta", 717, "multiplicative decrease x 1024"), CcaParam("fast_convergence", True, "")),
        ),
        CcaInfo("bbr1", "BBRv1", "draft-cardwell-iccrg-bbr-congestion-control-00"),
    )
)


#: What this machine's kernel offers the linux backend (no netem, no AQM), for plan tests.
FAKE_KERNEL = KernelInfo(
    release="6.18-test",
    ccas=("reno", "cubic", "bbr"),
    qdiscs={"pfifo": True, "bfifo": True, "tbf": True, "htb": True, "netem": False, "fq_codel": False, "red": False,
            "codel": False, "pie": False, "fq_pie": False},
    qdiscs_probed=True,
    tools={},
)

#: A parking lot of two bottlenecks (the second with a delay) and three senders: the
#: long one across both hops, a cross sender on each.
PARKING_LOT: dict[str, Any] = {
    "experiment": {"name": "pl", "duration": "5s", "warmup": "1s", "backend": "linux", "sample_interval": "100ms"},
    "topology": {
        "kind": "parking_lot",
        "hops": [{"rate": "20Mbit", "buffer": "50pkt"}, {"rate": "10Mbit", "buffer": "50pkt", "delay": "2ms"}],
    },
    "senders": [
        {"name": "long", "rtt": "10ms"},
        {"name": "cross0", "rtt": "5ms", "first_hop": 0, "last_hop": 0},
        {"name": "cross1", "rtt": "6ms", "first_hop": 1, "last_hop": 1},
    ],
    "flows": [{"name": s, "cca": "cubic", "sender": s} for s in ("long", "cross0", "cross1")],
}


def _dict(values: list[str]) -> tuple[np.ndarray, list[str]]:
    uniq: list[str] = []
    codes = []
    for v in values:
        if v not in uniq:
            uniq.append(v)
        codes.append(uniq.index(v))
    return np.asarray(codes, dtype=np.uint32), uniq


def fake_run(config: dict[str, Any], goodput_bps: list[float] | None = None, **_engine_options: Any) -> dict[str, Any]:
    """A plausible result for `config`: flow i delivers `goodput_bps[i]` (default: an
    equal share of 90% of the bottleneck) over the measurement window; jittered
    starts are drawn from the seed, so different seeds give different starts."""
    flows = [f for f in config["flows"] for _ in range(f.get("count", 1))]  # the engine expands count
    senders = config["topology"]["senders"]
    n = len(flows)
    dur, warm, step = config["duration_ns"], config["warmup_ns"], config["sample_interval_ns"] or config["duration_ns"]
    rate = config["topology"]["bottleneck"]["rate_bps"]
    rng = np.random.default_rng(config["seed"])
    if goodput_bps is None:
        goodput_bps = [0.9 * rate / n] * n
    start = np.array(
        [f["start_ns"] + int(rng.integers(0, max(f["start_jitter_ns"], 1))) for f in flows], dtype=np.uint64
    )
    end = np.array([f["stop_ns"] if f["stop_ns"] is not None else dur for f in flows], dtype=np.uint64)
    g = np.asarray(goodput_bps, dtype=float)
    win = (end.astype(np.int64) - np.maximum(start.astype(np.int64), warm)).clip(min=0)
    pre = (np.clip(warm - start.astype(np.int64), 0, None) * g / 8e9).astype(np.uint64)
    delivered = pre + (win * g / 8e9).astype(np.uint64)
    mss = np.array([f["mss"] for f in flows], dtype=np.uint64)
    segs = delivered // mss
    retrans = (segs // 100).astype(np.uint64)
    ids = np.arange(n, dtype=np.uint64)
    flows_t = {
        "flow_id": ids,
        "sender": np.array([f["sender"] for f in flows], dtype=np.uint64),
        "sender_name": _dict([senders[f["sender"]]["name"] for f in flows]),
        "group": _dict([f["group"] for f in flows]),
        "cca": _dict([f["cca"] for f in flows]),
        "start_ns": start,
        "stop_ns": np.array([-1 if f["stop_ns"] is None else f["stop_ns"] for f in flows], dtype=np.int64),
        "size_bytes": np.array([-1 if f["size_bytes"] is None else f["size_bytes"] for f in flows], dtype=np.int64),
        "base_rtt_ns": np.array([senders[f["sender"]]["rtt_ns"] for f in flows], dtype=np.uint64),
        "mss": mss,
        "delivered_bytes": delivered,
        "delivered_bytes_at_warmup": pre,
        "completed": np.zeros(n, dtype=bool),
        "fct_ns": np.full(n, -1, dtype=np.int64),
        "end_ns": end,
        "segs_sent": segs + retrans,
        "segs_retrans": retrans,
        "segs_lost": retrans,
        "segs_delivered": segs,
        "cwnd_reductions": retrans // 2,
        "rtos": np.zeros(n, dtype=np.uint64),
        "undos": np.zeros(n, dtype=np.uint64),
        "min_rtt_ns": np.array([senders[f["sender"]]["rtt_ns"] for f in flows], dtype=np.int64),
        "srtt_ns": np.array([senders[f["sender"]]["rtt_ns"] for f in flows], dtype=np.uint64),
    }
    times = np.arange(0, dur + 1, step, dtype=np.uint64)
    ts_t, ts_f = np.meshgrid(times, ids, indexing="ij")
    ts_t, ts_f = ts_t.ravel(), ts_f.ravel()
    sent_so_far = np.clip(ts_t.astype(np.int64) - start[ts_f].astype(np.int64), 0, None)
    sent_so_far = np.minimum(sent_so_far, (end[ts_f] - start[ts_f]).astype(np.int64))
    m = len(ts_t)
    nan = np.full(m, np.nan)
    flow_ts = {
        "time_ns": ts_t,
        "flow_id": ts_f,
        "delivered_bytes": (sent_so_far * g[ts_f] / 8e9).astype(np.uint64),
        "cwnd_pkts": np.full(m, 10, dtype=np.uint64),
        "ssthresh_pkts": np.full(m, -1, dtype=np.int64),
        "srtt_ns": np.full(m, 100_000_000, dtype=np.uint64),
        "min_rtt_ns": np.full(m, -1, dtype=np.int64),
        "pacing_rate_bps": np.zeros(m, dtype=np.uint64),
        "inflight_pkts": np.zeros(m, dtype=np.uint64),
        "inflight_bytes": np.zeros(m, dtype=np.uint64),
        "retrans_total": np.zeros(m, dtype=np.uint64),
        "lost_total": np.zeros(m, dtype=np.uint64),
        "ca_state": (np.zeros(m, dtype=np.uint32), ["open"]),
        "cc_state": (np.zeros(m, dtype=np.uint32), [""]),
        **{
            c: nan.copy()
            for c in (
                "cc_bw_bps",
                "cc_min_rtt_ns",
                "cc_pacing_gain",
                "cc_cwnd_gain",
                "cc_inflight_hi_pkts",
                "cc_inflight_lo_pkts",
                "cc_bw_lo_bps",
            )
        },
    }
    k = len(times)
    enq = (np.arange(k) * 100).astype(np.uint64)
    queue_ts = {
        "time_ns": times,
        "link": (np.zeros(k, dtype=np.uint32), ["bottleneck"]),
        "backlog_bytes": np.full(k, 15000, dtype=np.uint64),
        "backlog_pkts": np.full(k, 10, dtype=np.uint64),
        "enqueued_pkts": enq,
        "dequeued_pkts": enq,
        "dequeued_bytes": enq * 1500,
        "dropped_pkts": (np.arange(k)).astype(np.uint64),
        "ecn_marked_pkts": np.zeros(k, dtype=np.uint64),
    }
    events = {
        "time_ns": start.copy(),
        "kind": (np.zeros(n, dtype=np.uint32), ["flow_start"]),
        "flow_id": ids.astype(np.int64),
        "link": (np.zeros(n, dtype=np.uint32), [""]),
        "reason": (np.zeros(n, dtype=np.uint32), [""]),
        "value": np.zeros(n),
        "value2": np.zeros(n),
    }
    stats = {
        "events_processed": 1000,
        "data_pkts_sent": int(segs.sum()),
        "data_pkts_delivered": int(segs.sum()),
        "data_pkts_dropped": int(k - 1),
        "data_pkts_in_network": 0,
        "sim_time_ns": dur,
    }
    return {"tables": {"flows": flows_t, "flow_ts": flow_ts, "queue_ts": queue_ts, "events": events}, "stats": stats, "engine_cpu_s": 0.0}


def assert_tables_equal(a, b, name: str = "") -> None:
    """Arrow tables with equal schemas and equal contents (NaN equal to NaN)."""
    import pandas as pd

    assert a.schema == b.schema, f"{name}: schemas differ\n{a.schema}\n{b.schema}"
    pd.testing.assert_frame_equal(a.to_pandas(), b.to_pandas(), check_exact=True, obj=name)
