#!/usr/bin/env python3
"""ccbench side of the host-model validation grid (docs/validation.md, issue 13).

Runs two-flow pairs through a 100 Mbit/s pfifo bottleneck, the same grid as
`validation/host_kernel_batch.sh grid`, and prints one JSON line per run with the
statistics `netns_host.sh` reports for the kernel: per-flow goodput share, Jain's
index, link utilization, retransmissions in the measurement window and mean sRTT.

    python3 validation/host_grid.py --seeds 1-5 > validation/data/host/ours-after.jsonl
    python3 validation/host_grid.py --seeds 1-5 --host '{"model": "ideal"}' > ours-ideal.jsonl
    python3 validation/host_grid.py --summarize validation/data/host   # the table

"No added delay" is a 50 µs base RTT (the veth path's idle ping minimum is 20-60 µs);
"20 ms" puts 20 ms on the ACK path when the engine can place delay (`delay_path =
"ack"`), else splits it as the old engine did (recorded per row).
Utilization is goodput over the goodput a saturated link can carry (MSS / wire bytes:
1448/1500 here, 1448/1514 in the kernel, whose tbf counts the Ethernet header), so the
two are comparable.
"""

from __future__ import annotations

import argparse
import glob
import json
import statistics as st
import sys

PAIRS = ["cubic,cubic", "bbr,cubic", "reno,cubic", "bbr,bbr"]
LIMITS = [20, 100, 500]
DELAYS_MS = [0, 20]
RATE = 100_000_000
KERNEL_PAYLOAD_EFFICIENCY = 1448 / 1514
OURS_PAYLOAD_EFFICIENCY = 1448 / 1500
ENGINE_CCA = {"bbr": "bbr1", "cubic": "cubic", "reno": "reno"}
# --rig-tbf: the kernel rig's bottleneck as `netns_host.sh` builds it, `tbf rate 100mbit
# burst 3028` (two 1514-byte frames, no peak rate) over a veth. The veth forwards frames
# back to back 0.36 µs apart (median of 544 back-to-back pairs in two receiver captures,
# validation/host_tbf_burst.py, data/host/tbf-burst.json): 1514 B / 0.364 µs = 33 Gbit/s,
# the line rate the shaper's burst leaves at. Every veth of the rig (the senders' too) is
# given that rate.
RIG_LINE_RATE = "33Gbit"
RIG_TBF_BURST = "3028B"


def spec(pair: str, limit: int, delay_ms: int, seed: int, host: dict | None, ack_path: bool,
         duration: int, warmup: int, rig_tbf: bool = False, base_rtt: str = "50us",
         stagger_us: int = 2000, handshake: bool = False) -> dict:
    senders = []
    flows = []
    for i, cca in enumerate(pair.split(",")):
        s = {"name": f"h{i + 1}", "rtt": "20ms" if delay_ms else base_rtt}
        if delay_ms and ack_path:
            s["delay_path"] = "ack"
        if rig_tbf:
            s["access_rate"] = RIG_LINE_RATE
        senders.append(s)
        flows.append({"name": f"f{i + 1}", "sender": s["name"], "cca": ENGINE_CCA[cca],
                      "start": f"{stagger_us * i}us"} | ({"handshake": True} if handshake else {}))
    d = {
        "experiment": {"name": "host-grid", "seed": seed, "duration": f"{duration}s",
                       "warmup": f"{warmup}s", "sample_interval": "100ms"},
        "bottleneck": {"rate": "100Mbit", "buffer": f"{limit}pkt", "qdisc": "pfifo"},
        "senders": senders,
        "flows": flows,
    }
    if rig_tbf:
        d["bottleneck"] |= {"rate": RIG_LINE_RATE, "shaper": {"rate": "100Mbit", "burst": RIG_TBF_BURST}}
    if host is not None:
        d["host"] = host
    return d


def measure(r, warmup_ns: int, duration_ns: int) -> dict:
    flows = r.flows.sort_values("flow_id")
    ts = r.flow_ts
    secs = (duration_ns - warmup_ns) / 1e9
    good = [(row.delivered_bytes - row.delivered_bytes_at_warmup) * 8 / secs / 1e6 for row in flows.itertuples()]
    out = {"flows": []}
    for row, g in zip(flows.itertuples(), good, strict=False):
        f = ts[(ts.flow_id == row.flow_id) & (ts.time_ns >= warmup_ns)]
        at_warm = f.retrans_total.iloc[0] if len(f) else 0
        out["flows"].append({
            "cca": row.cca, "goodput_mbps": g,
            "retrans_in_window": int(row.segs_retrans - at_warm),
            "srtt_us_mean": float(f.srtt_ns.mean() / 1e3) if len(f) else None,
            # the idle path shows in the flow's min RTT; BBR's largest bandwidth estimate
            # (100 ms samples of its max filter) shows what the burst does to its samples
            "min_rtt_us": float(row.min_rtt_ns / 1e3),
            "cc_bw_max_mbps": float(f.cc_bw_bps.max() / 1e6) if len(f) and f.cc_bw_bps.notna().any() else None,
        })
    tot = sum(good)
    out["shares"] = [x / tot for x in good]
    out["jain"] = tot * tot / (len(good) * sum(x * x for x in good))
    out["utilization"] = tot / (RATE / 1e6) / OURS_PAYLOAD_EFFICIENCY
    out["drops"] = int(r.manifest["stats"].get("data_pkts_dropped", 0))
    return out


def run_grid(a) -> None:
    import ccbench

    host = json.loads(a.host) if a.host else None
    lo, _, hi = a.seeds.partition("-")
    seeds = range(int(lo), int(hi or lo) + 1)
    for pair in a.pairs.split(";"):
        for limit in a.limits:
            for delay in a.delays:
                for seed in seeds:
                    d = spec(pair, limit, delay, seed, host, not a.split_delay, a.duration, a.warmup,
                             a.rig_tbf, a.base_rtt, a.stagger_us, a.handshake)
                    r = ccbench.run(d)
                    row = {"source": "ccbench", "label": a.label, "ccas": pair, "pfifo_limit_pkts": limit,
                           "ack_delay_ms": delay, "seed": seed, "host": host,
                           "delay_path": "split" if a.split_delay or not delay else "ack",
                           "rig_tbf": a.rig_tbf, "base_rtt": a.base_rtt, "stagger_us": a.stagger_us,
                           "handshake": a.handshake,
                           "engine_cpu_s": r.manifest.get("engine_cpu_s")}
                    row |= measure(r, a.warmup * 10**9, a.duration * 10**9)
                    print(json.dumps(row), flush=True)


def _rng(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return None
    return st.mean(xs), min(xs), max(xs)


def _cell(t, fmt):
    if t is None:
        return "–"
    m, lo, hi = t
    return f"{fmt(m)} ({fmt(lo)}–{fmt(hi)})"


def summarize(a) -> None:
    """Markdown table: kernel rows (grid-*.json) beside each labelled ccbench set."""
    d = a.summarize
    rows = {}
    # grid-*.json: the kernel runs; paced-cubic/grid-*.json: the earlier runs whose cubic
    # and reno flows were left paced by the namespace's default CCA (bbr), "linux-paced";
    # loaded/grid-*.json: the fixed rig on a machine at a load average of 11-22,
    # "linux-loaded"; quiet/grid-*.json: the fixed rig on an otherwise idle machine (load
    # average below 1.5, 2026-11-28), "linux-quiet".
    for src, pattern in (("linux", f"{d}/grid-*.json"), ("linux-paced", f"{d}/paced-cubic/grid-*.json"),
                         ("linux-loaded", f"{d}/loaded/grid-*.json"), ("linux-quiet", f"{d}/quiet/grid-*.json")):
        for p in glob.glob(pattern):
            k = json.load(open(p))
            key = (k["ccas"], k["pfifo_limit_pkts"], int(k["ack_delay_ms"]))
            k["utilization"] = k["total_goodput_mbps"] / (k["rate_mbps"] * KERNEL_PAYLOAD_EFFICIENCY)
            rows.setdefault(key, {}).setdefault(src, []).append(k)
    for p in glob.glob(f"{d}/ours-*.jsonl"):
        for line in open(p):
            o = json.loads(line)
            key = (o["ccas"], o["pfifo_limit_pkts"], int(o["ack_delay_ms"]))
            rows.setdefault(key, {}).setdefault(o["label"], []).append(o)
    labels = a.labels.split(",")
    reference = a.reference
    if a.pool:
        # the verdicts against every fixed-rig kernel run (both batches): 3 runs of a
        # pair spread as widely as the two batches differ
        reference = "linux, both batches"
        for v in rows.values():
            v[reference] = v.get("linux", []) + v.get("linux-loaded", [])

    def stats(runs):
        if not runs:
            return None
        return {
            "share1": _rng([r["shares"][0] for r in runs if r.get("shares")]),
            "jain": _rng([r["jain"] for r in runs]),
            "util": _rng([r["utilization"] for r in runs]),
            "retx": _rng([sum(f.get("retrans_in_window") or 0 for f in r["flows"]) for r in runs]),
            "srtt": _rng([st.mean(f["srtt_us_mean"] for f in r["flows"] if f.get("srtt_us_mean"))
                          for r in runs]),
            "n": len(runs),
            # kernel runs: the 1-minute load average at the end of each run
            "load": _rng([float(r["loadavg_after"].split()[0]) for r in runs if r.get("loadavg_after")]),
        }

    def verdict(o, k):
        if o is None or k is None:
            return ""
        bad = []
        if abs(o["share1"][0] - k["share1"][0]) > 0.05:
            bad.append("share")
        if abs(o["jain"][0] - k["jain"][0]) > 0.03:
            bad.append("Jain")
        if abs(o["util"][0] - k["util"][0]) > 0.02:
            bad.append("util")
        ko, kk = o["retx"][0], k["retx"][0]
        if not (kk / 2 <= ko <= kk * 2) and not (ko < 20 and kk < 20):
            bad.append("retx")
        if abs(o["srtt"][0] - k["srtt"][0]) > 0.15 * k["srtt"][0]:
            bad.append("sRTT")
        return "ok" if not bad else "off: " + ", ".join(bad)

    print("| pair | pfifo | ACK delay | source | runs | flow-1 share | Jain | utilization | retx (window, both flows) | mean sRTT µs | vs kernel |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for key in sorted(rows, key=lambda k: (PAIRS.index(k[0]) if k[0] in PAIRS else 9, k[2], k[1])):
        pair, limit, delay = key
        k = stats(rows[key].get(reference, []))
        for src in dict.fromkeys([reference, *labels]):
            s = stats(rows[key].get(src, []))
            if s is None:
                continue
            runs = f"{s['n']}" if s["load"] is None else f"{s['n']} (load {s['load'][1]:.1f}–{s['load'][2]:.1f})"
            print(f"| {pair} | {limit} | {delay} ms | {src} | {runs} | {_cell(s['share1'], lambda x: f'{x:.3f}')} "
                  f"| {_cell(s['jain'], lambda x: f'{x:.3f}')} | {_cell(s['util'], lambda x: f'{x:.3f}')} "
                  f"| {_cell(s['retx'], lambda x: f'{x:.0f}')} | {_cell(s['srtt'], lambda x: f'{x:.0f}')} "
                  f"| {verdict(s, k) if not src.startswith('linux') else ''} |")


def spread_table(a) -> None:
    """Markdown: the spread of flow 1's share over runs (max − min and standard
    deviation), kernel next to each labelled ccbench set, per grid row; the issue asks
    that seeds differ, and the kernel's own spread says by how much."""
    d = a.summarize
    rows: dict = {}
    if a.reference == "linux-quiet":
        kernel = glob.glob(f"{d}/quiet/grid-*.json")
    else:
        kernel = glob.glob(f"{d}/grid-*.json") + (glob.glob(f"{d}/loaded/grid-*.json") if a.pool else [])
    for p in kernel:
        k = json.load(open(p))
        rows.setdefault((k["ccas"], k["pfifo_limit_pkts"], int(k["ack_delay_ms"])), {}).setdefault("linux", []).append(
            k["shares"][0])
    for p in glob.glob(f"{d}/ours-*.jsonl"):
        for line in open(p):
            o = json.loads(line)
            rows.setdefault((o["ccas"], o["pfifo_limit_pkts"], int(o["ack_delay_ms"])), {}).setdefault(
                o["label"], []).append(o["shares"][0])
    labels = a.labels.split(",")
    print("| pair | pfifo | ACK delay | " + " | ".join(f"{x}: range, sd" for x in ["linux", *labels]) + " |")
    print("|---|---|---|" + "---|" * (1 + len(labels)))
    for key in sorted(rows, key=lambda k: (PAIRS.index(k[0]) if k[0] in PAIRS else 9, k[2], k[1])):
        cells = []
        for src in ["linux", *labels]:
            xs = rows[key].get(src, [])
            cells.append(f"{max(xs) - min(xs):.3f}, {st.pstdev(xs):.3f} (n={len(xs)})" if len(xs) > 1 else "–")
        print(f"| {key[0]} | {key[1]} | {key[2]} ms | " + " | ".join(cells) + " |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="1-5")
    ap.add_argument("--pairs", default=";".join(PAIRS), help="';'-separated pairs, e.g. 'cubic,cubic;bbr,bbr'")
    ap.add_argument("--limits", type=int, nargs="+", default=LIMITS)
    ap.add_argument("--delays", type=int, nargs="+", default=DELAYS_MS)
    ap.add_argument("--duration", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--host", help="[host] table as JSON (omit for the engine's default)")
    ap.add_argument("--split-delay", action="store_true", help="split the 20 ms over both paths (old engine)")
    ap.add_argument("--rig-tbf", action="store_true",
                    help="the kernel rig's bottleneck: tbf 100 Mbit/s burst 3028 B on a 33 Gbit/s veth")
    ap.add_argument("--base-rtt", default="50us",
                    help="the senders' RTT in the rows without added delay (the veth path's idle ping minimum is "
                         "20-60 µs; the kernel's TCP handshake RTT there is 3-6 µs)")
    ap.add_argument("--stagger-us", type=int, default=2000,
                    help="flow 2 starts this many µs after flow 1 (start_jitter still applies)")
    ap.add_argument("--handshake", action="store_true",
                    help="bulk flows open with a three-way handshake, as iperf3's connections do")
    ap.add_argument("--label", default="ccbench")
    ap.add_argument("--summarize", metavar="DIR", help="print the markdown table from DIR and exit")
    ap.add_argument("--spread", action="store_true", help="with --summarize: the seed-spread table instead")
    ap.add_argument("--pool", action="store_true",
                    help="with --summarize: judge against the linux and linux-loaded runs together")
    ap.add_argument("--reference", default="linux",
                    help="with --summarize: the kernel runs the verdicts judge against (linux, linux-loaded, "
                         "linux-quiet)")
    ap.add_argument("--labels", default="linux-paced,before,after",
                    help="sources to list after the kernel's, in order (ccbench labels, linux-paced)")
    a = ap.parse_args()
    if a.summarize and a.spread:
        spread_table(a)
    elif a.summarize:
        summarize(a)
    else:
        run_grid(a)


if __name__ == "__main__":
    sys.exit(main())
