#!/usr/bin/env python3
"""BBRv1 start-order lock-in, kernel and engine side by side (docs/validation.md,
"Rows still outside", bbr/bbr at 50 µs). For each kernel run of `netns_host.sh -T MS
bbr,bbr` it reads the `ss -tin` samples (BBR's own `bbr:(bw,mrtt,...)` per flow) and
prints: the flows' shares and retransmissions, the later flow's first min-RTT estimate
(does it include the first flow's queue?), when that estimate first falls below
--below-ms (the lock-in ends: a ProbeRTT, or a queue-draining disruption), the largest
bandwidth sample seen then, and the load average. With --ours it runs the engine's
pair (same buffer and stagger, seeds 1-5) and prints the same columns.

    sudo validation/netns_host.sh -l 100 -S 0.5 -T 100 -o runs/stag-r1.json bbr,bbr
    python3 validation/host_bbr_lockin.py runs/stag-r1 [more runs] [--ours]
    python3 validation/host_bbr_lockin.py validation/data/host/lockin/*.json --ours
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import statistics as st

PEER = re.compile(r":(\d+)\s+\S+:(\d+)\s*$")
BBR = re.compile(r"bbr:\(bw:([\d.]+)bps,mrtt:([\d.]+)")
LINK_MBPS = 100.0


def open_ss(run: str):
    """A run's `ss -tin` samples (netns_host.sh -T), plain or gzipped as stored."""
    path = run + ".ss.txt"
    try:
        return open(path)
    except FileNotFoundError:
        return gzip.open(path + ".gz", "rt")


def print_share_range(label: str, rows: list[dict]) -> None:
    if len(rows) > 1:
        s = [r["share1"] for r in rows]
        print(f"{label}: mean {st.mean(s):.3f}, range {min(s):.3f}-{max(s):.3f} over {len(s)} runs")


def ss_info_lines(run: str):
    """(t since the first sample, server port, info line) for every connection in every
    `ss -tin` sample of a run."""
    t0 = t = None
    port = None
    with open_ss(run) as f:
        for line in f:
            if line.startswith("# "):
                t = float(line[2:])
                t0 = t if t0 is None else t0
                continue
            m = PEER.search(line.rstrip())
            if line.startswith("ESTAB") and m:
                port = m.group(2)
                continue
            if port and t is not None and t0 is not None and line.startswith("\t"):
                yield t - t0, port, line
            port = None


def ss_samples(run: str) -> dict[str, list[tuple[float, float, float]]]:
    """(t since the first sample, bw Mbit/s, min_rtt ms) per data connection (server port)."""
    out: dict[str, list[tuple[float, float, float]]] = {}
    for t, port, line in ss_info_lines(run):
        b = BBR.search(line)
        if b:
            out.setdefault(port, []).append((t, float(b.group(1)) / 1e6, float(b.group(2))))
    return out


def lockin_end(series: list[tuple[float, float, float]], below_ms: float) -> tuple[float | None, float]:
    """When the min-RTT estimate first falls below `below_ms`, and the largest bw sample
    (Mbit/s) in the 0.3 s up to then."""
    for t, _bw, mrtt in series:
        if mrtt < below_ms:
            return t, max(bw for tt, bw, _m in series if t - 0.3 <= tt <= t)
    return None, max(bw for _t, bw, _m in series)


def kernel_row(run: str, below_ms: float) -> dict:
    summary = json.load(open(run + ".json"))
    flows = ss_samples(run)
    ports = sorted(flows, key=int)  # client i connects to port 5201 + i; -S delays the second
    later = flows[ports[-1]]
    end, bw = lockin_end(later, below_ms)
    return {
        "run": run.rsplit("/", 1)[-1], "limit": summary["pfifo_limit_pkts"], "stagger_s": summary.get("stagger_s", 0.0),
        "duration_s": summary["duration_s"],
        "share1": summary["shares"][0], "retrans": [f["retrans_in_window"] for f in summary["flows"]],
        "later_min_rtt0_ms": later[0][2], "first_min_rtt0_ms": flows[ports[0]][0][2],
        "lockin_end_s": end, "bw_at_end_mbps": bw, "load": summary["loadavg_after"],
    }


def ours_rows(limit: int, stagger_s: float, below_ms: float, seeds=range(1, 6)) -> list[dict]:
    import ccbench

    rows = []
    for seed in seeds:
        spec = {
            "experiment": {"name": "lockin", "seed": seed, "duration": "20s", "warmup": "5s",
                           "sample_interval": "100ms"},
            "bottleneck": {"rate": "100Mbit", "buffer": f"{limit}pkt", "qdisc": "pfifo"},
            "senders": [{"name": "a", "rtt": "50us"}, {"name": "b", "rtt": "50us"}],
            "flows": [{"cca": "bbr1", "sender": "a", "start": "0s", "start_jitter": "0s"},
                      {"cca": "bbr1", "sender": "b", "start": f"{stagger_s}s", "start_jitter": "0s"}],
        }
        r = ccbench.run(spec)
        f = r.flows.sort_values("flow_id")
        got = (f.delivered_bytes - f.delivered_bytes_at_warmup).tolist()
        ts = r.flow_ts.dropna(subset=["cc_min_rtt_ns"])
        series = {fid: [(t / 1e9, bw / 1e6, m / 1e6) for t, bw, m in
                        zip(g.time_ns, g.cc_bw_bps, g.cc_min_rtt_ns, strict=True)] for fid, g in ts.groupby("flow_id")}
        end, bw = lockin_end(series[1], below_ms)
        rows.append({
            "run": f"ours seed {seed}", "limit": limit, "stagger_s": stagger_s, "duration_s": 20,
            "share1": got[0] / sum(got),
            "retrans": (f.segs_retrans - f.segs_retrans_at_warmup).tolist(),
            "later_min_rtt0_ms": series[1][0][2], "first_min_rtt0_ms": series[0][0][2],
            "lockin_end_s": end, "bw_at_end_mbps": bw, "load": "-",
        })
    return rows


def show(rows: list[dict]) -> None:
    print(f"{'run':<14} {'pkts':>4} {'stag':>4} {'share1':>6} {'retrans':>13} {'min_rtt0 1st/later ms':>21} "
          f"{'lock-in ends s':>14} {'bw then':>8}  load")
    for r in rows:
        end = "-" if r["lockin_end_s"] is None else f"{r['lockin_end_s']:.2f}"
        print(f"{r['run']:<14} {r['limit']:>4} {r['stagger_s']:>4g} {r['share1']:>6.3f} {str(r['retrans']):>13} "
              f"{r['first_min_rtt0_ms']:>10.3f}/{r['later_min_rtt0_ms']:<10.3f} {end:>14} "
              f"{r['bw_at_end_mbps'] / LINK_MBPS:>7.1f}x  {r['load']}")
    print_share_range("first flow's share", rows)


def parse_args(doc: str, ours_help: str) -> argparse.Namespace:
    """The arguments this script and host_bbr_cubic.py share."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("runs", nargs="+", help="kernel runs: the -o path with or without .json")
    ap.add_argument("--below-ms", type=float, default=1.0, help="min-RTT estimate that ends the lock-in")
    ap.add_argument("--ours", action="store_true", help=ours_help)
    return ap.parse_args()


def main() -> None:
    a = parse_args(__doc__, "also run the engine's pair (seeds 1-5) per setting")
    rows = [kernel_row(r.removesuffix(".json"), a.below_ms) for r in a.runs]
    for limit, stagger, dur in sorted({(r["limit"], r["stagger_s"], r["duration_s"]) for r in rows}):
        group = [r for r in rows if (r["limit"], r["stagger_s"], r["duration_s"]) == (limit, stagger, dur)]
        print(f"== kernel, pfifo {limit} packets, second flow {stagger:g} s later (iperf3 -S), {dur:g} s runs")
        show(group)
        if a.ours:
            print(f"== ours, pfifo {limit} packets, second flow {stagger or 0.002:g} s later, 20 s, window [5, 20] s")
            show(ours_rows(limit, stagger or 0.002, a.below_ms))
        print()


if __name__ == "__main__":
    main()
