#!/usr/bin/env python3
"""ccbench's AQMs next to ns-3.37's RED, CoDel, FqCoDel and PIE on issue 15's two
scenarios: 90 NewReno flows through a 900-packet bottleneck (docs/validation.md,
"AQMs next to ns-3").

    python3 validation/aqm_ns3.py ours  > runs/aqm-ours.jsonl          # ccbench
    python3 validation/aqm_ns3.py ns3 --ns3 /tmp/ns3 > runs/aqm-ns3.jsonl
    python3 validation/aqm_ns3.py table runs/aqm-ours.jsonl runs/aqm-ns3.jsonl

``--ns3`` is a writable copy of ``../shared/tools/ns3`` (it builds there). One JSON
line per run: mean queueing delay (sojourn) and backlog, utilization and goodput,
bottleneck drops, all over [warmup, duration]. ``--scenario`` and ``--qdisc`` pick a
subset; ``--duration``/``--warmup`` shorten the runs.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

FLOWS = 90
BUFFER_PKTS = 900
PKT_BYTES = 1500  # 1448 B payload + 52 B of headers in both tools

#: D4's data-centre ("dc") and access-link ("al") setups (../shared/spec/experiments.md,
#: aqm-ns3/*-common). The ns-3 dumbbell has two RTT groups, so "al"'s spread of RTTs
#: (8-204 ms in D4) becomes 45 flows at 20 ms and 45 at 100 ms.
SCENARIOS = {
    "dc": {"rate_bps": 1_000_000_000, "rtts_ms": [0.2], "duration_s": 10, "warmup_s": 3},
    "al": {"rate_bps": 100_000_000, "rtts_ms": [20, 100], "duration_s": 60, "warmup_s": 20},
}
QDISCS = ("pfifo", "red", "codel", "fq_codel", "pie")

#: ``--params d4``: D4's own AQM settings (../shared/spec/experiments.md, "PIE parameters",
#: "CoDel parameters"): PIE's reference delay 2 ms (dc) and 5 ms (al); CoDel's target
#: 2 ms (dc), its default 5 ms (al); everything else at the defaults. ``defaults`` leaves
#: both at the tools' defaults (PIE 15 ms, CoDel 5 ms).
D4_TARGETS_MS = {"dc": {"pie": 2, "codel": 2}, "al": {"pie": 5, "codel": 5}}


def red_thresholds(rate_bps: int) -> tuple[int, int]:
    """The ns-3 dumbbell's RED thresholds (packets): Adaptive RED's automatic setting
    for a 5 ms target delay (Floyd 2001), min = max(5, C * 5 ms / 2), max = 3 min,
    rounded so that both tools get the same integers."""
    pkts_per_s = rate_bps / 8 / PKT_BYTES
    qmin = round(max(5.0, 0.005 * pkts_per_s / 2))
    return qmin, 3 * qmin


#: RED ``burst`` (packets) that makes tc's EWMA weight 2^-Wlog equal ns-3's automatic
#: qW = 1 - exp(-1/C) (C in packets/s) to the nearest power of two: dc 2^-16, al 2^-13.
#: (tc_red_eval_ewma picks the largest W with burst + 1 - min/avpkt <= (1-(1-W)^burst)/W.)
RED_BURST_LIKE_NS3 = {"dc": 4500, "al": 490}


def qdisc_spec(kind: str, scenario: str, red_burst: str, params: str) -> object:
    rate = SCENARIOS[scenario]["rate_bps"]
    if kind == "red":
        qmin, qmax = red_thresholds(rate)
        spec = {"kind": "red", "min": f"{qmin}pkt", "max": f"{qmax}pkt", "avpkt": PKT_BYTES,
                "bandwidth": f"{rate}bit", "adaptive": True}
        if red_burst == "ns3":
            spec["burst"] = RED_BURST_LIKE_NS3[scenario]
        return spec
    if kind == "fq_codel":
        return {"kind": "fq_codel", "ecn": False}  # tc's default is on; nothing here is ECN-capable
    if params == "d4" and kind in ("pie", "codel"):
        return {"kind": kind, "target": f"{D4_TARGETS_MS[scenario][kind]}ms"}
    return kind


#: ``--setup d4`` (ccbench only; dc): D4's data-centre network as stated rather than the
#: ns-3 dumbbell's single RTT: 10 flows per source-sink pair, whose RTTs 2 (d_src + d_dst)
#: from the 10/100 us access delays are 40 us (2 pairs), 220 us (5) and 400 us (2), the
#: central link without delay, and flows starting uniformly over the first 3 s.
D4_DC_RTT_US = {40: 20, 220: 50, 400: 20}


def experiment(scenario: str, kind: str, a: argparse.Namespace) -> dict:
    sc = SCENARIOS[scenario]
    rtts = sc["rtts_ms"]
    per = FLOWS // len(rtts)
    host = {"model": a.host}
    if a.setup == "d4":
        if scenario != "dc":
            raise SystemExit("--setup d4 is defined for the dc scenario only")
        return {
            "experiment": {"name": f"aqm-d4-{kind}", "seed": a.seed, "duration": f"{a.duration or 100:g}s",
                           "warmup": f"{a.warmup or 30:g}s", "sample_interval": "10ms"},
            "host": host,
            "bottleneck": {"rate": f"{sc['rate_bps']}bit", "delay": "0s", "buffer": f"{BUFFER_PKTS}pkt",
                           "qdisc": qdisc_spec(kind, scenario, a.red_burst, a.params)},
            "senders": [{"name": f"rtt{r}us", "rtt": f"{r}us"} for r in D4_DC_RTT_US],
            "flows": [{"name": f"reno{r}us", "cca": "reno", "count": n, "sender": f"rtt{r}us",
                       "arrival": "uniform", "window": "3s"} for r, n in D4_DC_RTT_US.items()],
        }
    return {
        "experiment": {"name": f"aqm-{scenario}-{kind}", "seed": a.seed,
                       "duration": f"{a.duration or sc['duration_s']:g}s",
                       "warmup": f"{a.warmup or sc['warmup_s']:g}s", "sample_interval": "10ms"},
        "host": host,
        # As in the ns-3 dumbbell: half the smallest RTT on the bottleneck, the rest on
        # the senders' access links (10x the bottleneck rate).
        "bottleneck": {"rate": f"{sc['rate_bps']}bit", "delay": f"{min(rtts) * 500:g}us",
                       "buffer": f"{BUFFER_PKTS}pkt", "qdisc": qdisc_spec(kind, scenario, a.red_burst, a.params)},
        "senders": [{"name": f"s{i}", "rtt": f"{r * 1000:g}us"} for i, r in enumerate(rtts)],
        "flows": [{"name": f"reno{i}", "cca": "reno", "count": per, "sender": f"s{i}"} for i in range(len(rtts))],
    }


def ours(a: argparse.Namespace) -> None:
    import ccbench

    for scenario in a.scenario:
        for kind in a.qdisc:
            r = ccbench.run(experiment(scenario, kind, a))
            cfg = r.engine_config
            w, d = cfg["warmup_ns"], cfg["duration_ns"]
            rate = SCENARIOS[scenario]["rate_bps"]
            q = r.queue_ts[r.queue_ts.link == "bottleneck"].sort_values("time_ns")
            at_w = q[q.time_ns <= w].iloc[-1]
            last = q.iloc[-1]
            soj = r.sojourn[(r.sojourn.link == "bottleneck") & (r.sojourn.time_ns >= w)].sojourn_ns
            fl = r.flows
            gp = (fl.delivered_bytes - fl.delivered_bytes_at_warmup) * 8 / ((d - w) / 1e9)
            print(json.dumps({
                "tool": "ccbench", "scenario": scenario, "qdisc": kind, "host": a.host, "red_burst": a.red_burst,
                "params": a.params,
                "seed": a.seed, "duration_s": d / 1e9, "warmup_s": w / 1e9,
                "mean_sojourn_ms": float(soj.mean()) / 1e6,
                "mean_qlen_pkts": float(q[q.time_ns >= w].backlog_pkts.mean()),
                "util": float(last.dequeued_bytes - at_w.dequeued_bytes) * 8 / (rate * (d - w) / 1e9),
                "goodput_mbps": float(gp.sum()) / 1e6,
                "jain": float(gp.sum() ** 2 / (len(gp) * (gp**2).sum())),
                "drops_in_window": int(last.dropped_pkts - at_w.dropped_pkts),
                "retx_segs": int(fl.segs_retrans.sum()),
                "rtos": int(fl.rtos.sum()),
                "goodputs_mbps": [round(float(x) / 1e6, 3) for x in gp],
                **({"setup": a.setup} if a.setup != "dumbbell" else {}),
                **({"bins": bins(q, a.bins)} if a.bins else {}),
            }), flush=True)


def bins(q: object, width_s: float) -> list[dict]:
    """The bottleneck's queue over the whole run in bins of ``width_s`` seconds: mean
    backlog (packets), AQM and tail drops per second, and the share of samples in
    which CoDel was in its dropping state (or PIE's mean drop probability)."""
    import pandas as pd

    df = q.assign(bin=(q.time_ns // int(width_s * 1e9)).astype(int))  # type: ignore[attr-defined]
    out = []
    for b, g in df.groupby("bin"):
        first, last = g.iloc[0], g.iloc[-1]
        span = (last.time_ns - first.time_ns) / 1e9 or 1.0
        out.append({
            "t0_s": b * width_s, "backlog_pkts": round(float(g.backlog_pkts.mean()), 1),
            "aqm_drops_per_s": round(float(last.aqm_drops - first.aqm_drops) / span),
            "tail_drops_per_s": round(float(last.tail_drops - first.tail_drops) / span),
            "dropping_share": round(float(g.aqm_dropping.astype(bool).mean()), 3),
            "aqm_prob": None if pd.isna(g.aqm_prob).all() else round(float(g.aqm_prob.mean()), 4),
        })
    return out


NS3_QDISC = {"pfifo": "pfifo", "red": "red", "codel": "codel", "fq_codel": "fqcodel", "pie": "pie"}


def ns3(a: argparse.Namespace) -> None:
    run = Path(a.ns3) / "run.sh"
    for scenario in a.scenario:
        sc = SCENARIOS[scenario]
        rtts = sc["rtts_ms"]
        for kind in a.qdisc:
            cmd = ["nice", "-n", "10", str(run), "--cca1=TcpLinuxReno", f"--rate={sc['rate_bps']}bps",
                   f"--rtt={rtts[0]}", f"--qdisc={NS3_QDISC[kind]}", f"--qlim={BUFFER_PKTS}p",
                   f"--duration={a.duration or sc['duration_s']}", f"--warmup={a.warmup or sc['warmup_s']}",
                   f"--seed={a.seed}"]
            if len(rtts) == 2:
                cmd += [f"--n1={FLOWS // 2}", "--cca2=TcpLinuxReno", f"--n2={FLOWS // 2}", f"--rtt2={rtts[1]}"]
            else:
                cmd += [f"--n1={FLOWS}", "--n2=0"]
            if kind == "red":
                qmin, qmax = red_thresholds(sc["rate_bps"])
                cmd += [f"--redMinTh={qmin}", f"--redMaxTh={qmax}"]
            if a.params == "d4" and kind == "codel":
                cmd += [f"--codelTarget={D4_TARGETS_MS[scenario]['codel']}ms"]
            if a.params == "d4" and kind == "pie":  # the dumbbell has no flag; a global attribute default
                cmd += [f"--ns3::PieQueueDisc::QueueDelayReference={D4_TARGETS_MS[scenario]['pie']}ms"]
            out = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
            gp = [f["goodput_mbps"] for f in out.get("flows", [])]
            print(json.dumps({
                "tool": "ns-3.37", "scenario": scenario, "qdisc": kind, "seed": a.seed, "params": a.params,
                "duration_s": out["sim_end_s"], "warmup_s": out["params"]["warmup_s"],
                "mean_sojourn_ms": out["mean_sojourn_ms"], "mean_qlen_pkts": out["mean_qlen_pkts"],
                "util": out["bottleneck_util"], "goodput_mbps": out["total_goodput_mbps"], "jain": out["jain"],
                "drops_in_window": out["bn_qdisc_drops_in_window"], "retx_segs": out["retx_segs"],
                "cpu_s": out["run_cpu_s"], "command": " ".join(cmd[3:]), "goodputs_mbps": gp,
            }), flush=True)


def table(a: argparse.Namespace) -> None:
    rows = [json.loads(line) for p in a.files for line in open(p) if line.strip()]
    rows.sort(key=lambda r: (list(SCENARIOS).index(r["scenario"]), QDISCS.index(r["qdisc"]),
                             r["duration_s"], r.get("params", "defaults") == "d4", r["tool"]))
    print("| scenario | qdisc | tool | mean sojourn (ms) | mean backlog (pkt) | utilization | goodput (Mbit/s) "
          "| Jain | drops in window | retx (whole run) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        tool = r["tool"] + (f" ({r['host']} host, RED burst {r['red_burst']})" if r["tool"] == "ccbench"
                            and r["qdisc"] == "red" else f" ({r['host']} host)" if r["tool"] == "ccbench" else "")
        qdisc = r["qdisc"]
        if r.get("params") == "d4":
            qdisc += f", D4 parameters (target {D4_TARGETS_MS[r['scenario']][r['qdisc']]} ms)"
        if r["duration_s"] != SCENARIOS[r["scenario"]]["duration_s"]:
            qdisc += f", {r['duration_s']:g}-s run from {r['warmup_s']:g} s"
        print(f"| {r['scenario']} | {qdisc} | {tool} | {r['mean_sojourn_ms']:.2f} | {r['mean_qlen_pkts']:.0f} "
              f"| {r['util']:.4f} | {r['goodput_mbps']:.1f} | {r['jain']:.3f} | {r['drops_in_window']} "
              f"| {r['retx_segs']} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    for name in ("ours", "ns3"):
        p = sub.add_parser(name)
        p.add_argument("--scenario", nargs="+", choices=list(SCENARIOS), default=list(SCENARIOS))
        p.add_argument("--qdisc", nargs="+", choices=QDISCS, default=list(QDISCS))
        p.add_argument("--duration", type=float, help="simulated seconds (default per scenario)")
        p.add_argument("--warmup", type=float, help="start of the measurement window (s)")
        p.add_argument("--seed", type=int, default=1)
        p.add_argument("--params", default="defaults", choices=["defaults", "d4"],
                       help="PIE/CoDel targets: the tools' defaults, or D4's (see D4_TARGETS_MS)")
        if name == "ours":
            p.add_argument("--host", default="ideal", choices=["ideal", "linux"], help="[host] model")
            p.add_argument("--red-burst", default="tc", choices=["tc", "ns3"],
                           help="RED burst: tc's default, or the one giving ns-3's EWMA weight")
            p.add_argument("--setup", default="dumbbell", choices=["dumbbell", "d4"],
                           help="dc network: the ns-3 dumbbell's (one 200 us RTT, starts within 1 ms) or "
                                "D4's (see D4_DC_RTT_US)")
            p.add_argument("--bins", type=float, help="also print the queue over time in bins of this many s")
        else:
            p.add_argument("--ns3", required=True, help="a writable copy of ../shared/tools/ns3")
    t = sub.add_parser("table")
    t.add_argument("files", nargs="+")
    a = ap.parse_args()
    {"ours": ours, "ns3": ns3, "table": table}[a.what](a)


if __name__ == "__main__":
    sys.exit(main())
