#!/usr/bin/env python3
"""Summarize benchmarks/run.sh output as a markdown table: ccbench vs ns-3 per scenario.

CPU time (user + sys of the whole process, Python start-up and Parquet writing included
for ccbench) is the fair comparison on a shared machine; packets are delivered data
packets (ccbench: the engine's count; ns-3: received bytes / MSS)."""
import json
import os
import re
import sys


def time_v(path):
    text = open(path).read()

    def grab(pattern):
        m = re.search(pattern, text)
        return m.group(1) if m else None

    wall = grab(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)")
    parts = [float(x) for x in wall.split(":")]
    return {
        "wall": sum(p * 60**i for i, p in enumerate(reversed(parts))),
        "cpu": float(grab(r"User time \(seconds\): ([\d.]+)")) + float(grab(r"System time \(seconds\): ([\d.]+)")),
        "rss_mb": int(grab(r"Maximum resident set size \(kbytes\): (\d+)")) / 1024,
    }


def main():
    out = sys.argv[1]
    scenarios = sys.argv[2:] or ["a", "c"]
    print("| scenario | tool | wall s (process) | CPU s (process) | CPU s (simulation only) | peak RSS MB | delivered data pkts | pkts per simulation CPU-s | speed-up vs ns-3 (simulation CPU) | speed-up vs ns-3 (process CPU) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for s in scenarios:
        ours = time_v(os.path.join(out, f"ccbench-{s}.time"))
        manifest = json.load(open(os.path.join(out, f"ccbench-{s}", "manifest.json")))
        pkts = manifest["stats"]["data_pkts_delivered"]
        sim_cpu = manifest["engine_cpu_s"]
        ours_rate = pkts / sim_cpu
        ours_proc_rate = pkts / ours["cpu"]
        ns3_rate = ns3_proc_rate = None
        jf = os.path.join(out, "ns3", f"{s}.json")
        if os.path.exists(jf) and os.path.getsize(jf):
            j = json.load(open(jf))
            theirs = time_v(os.path.join(out, "ns3", f"{s}.err"))
            ns3_pkts = j["rx_bytes_total"] / j["params"]["mss"]
            ns3_rate = ns3_pkts / j["run_cpu_s"]
            ns3_proc_rate = ns3_pkts / theirs["cpu"]
            print(f"| {s} | ns-3.37 | {theirs['wall']:.2f} | {theirs['cpu']:.2f} | {j['run_cpu_s']:.2f} | {theirs['rss_mb']:.0f} | {ns3_pkts:,.0f} | {ns3_rate:,.0f} | 1 | 1 |")
        speedup = f"{ours_rate / ns3_rate:.0f}x" if ns3_rate else "-"
        speedup_proc = f"{ours_proc_rate / ns3_proc_rate:.0f}x" if ns3_proc_rate else "-"
        print(f"| {s} | ccbench | {ours['wall']:.2f} | {ours['cpu']:.2f} | {sim_cpu:.2f} | {ours['rss_mb']:.0f} | {pkts:,} | {ours_rate:,.0f} | {speedup} | {speedup_proc} |")


if __name__ == "__main__":
    main()
