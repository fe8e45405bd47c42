#!/usr/bin/env python3
"""Summarize benchmarks/run.sh output as a markdown table: ccbench vs ns-3 per scenario.

CPU time (user + sys of the whole process, Python start-up and Parquet writing included
for ccbench) is the fair comparison on a shared machine; packets are delivered data
packets (ccbench: the engine's count; ns-3: received bytes / MSS). The simulation-only
figures are ns-3's `run_cpu_s` and ccbench's `engine_cpu_s` (the simulating thread's
CPU time). The last columns say whether the two simulators agree: bottleneck
utilization (goodput over the bottleneck rate, in both: ns-3's `goodput_util`), Jain's index over the flows' goodputs, and bottleneck drops after warm-up.

    python benchmarks/summarize.py OUTDIR [SCENARIO...] [--write docs/benchmarks.md]

With --write, the table replaces the block between `<!-- bench:begin -->` and
`<!-- bench:end -->` in that file."""

import json
import os
import re
import sys

HEADER = (
    "| scenario | tool | CPU s (process) | CPU s (simulation) | peak RSS MB | delivered data pkts | "
    "events per pkt | M pkts per simulation CPU-s | ratio vs ns-3 (simulation CPU) | utilization | Jain | "
    "drops after warm-up |\n|---|---|---|---|---|---|---|---|---|---|---|---|"
)


def time_v(path):
    text = open(path).read()

    def grab(pattern):
        m = re.search(pattern, text)
        return m.group(1) if m else None

    return {
        "cpu": float(grab(r"User time \(seconds\): ([\d.]+)")) + float(grab(r"System time \(seconds\): ([\d.]+)")),
        "rss_mb": int(grab(r"Maximum resident set size \(kbytes\): (\d+)")) / 1024,
    }


def ccbench_agreement(run_dir):
    """Utilization, Jain's index and data drops after warm-up of a ccbench run (the
    flows' drop counters: the bench specs record no per-packet drop rows)."""
    import ccbench

    res = ccbench.load(run_dir)
    s = res.summary()
    f = res.flows
    return s["utilization"], s["jain"], int((f["dropped_pkts"] - f["dropped_pkts_at_warmup"]).sum())


def rows(out, scenarios):
    yield HEADER
    for s in scenarios:
        ours = time_v(os.path.join(out, f"ccbench-{s}.time"))
        manifest = json.load(open(os.path.join(out, f"ccbench-{s}", "manifest.json")))
        pkts = manifest["stats"]["data_pkts_delivered"]
        sim_cpu = manifest["engine_cpu_s"]
        ev_pkt = manifest["stats"]["events_processed"] / pkts
        ours_rate = pkts / sim_cpu
        ns3_rate = None
        jf = os.path.join(out, "ns3", f"{s}.json")
        if os.path.exists(jf) and os.path.getsize(jf):
            j = json.load(open(jf))
            theirs = time_v(os.path.join(out, "ns3", f"{s}.err"))
            ns3_pkts = j["rx_bytes_total"] / j["params"]["mss"]
            ns3_rate = ns3_pkts / j["run_cpu_s"]
            yield (
                f"| {s} | ns-3.37 | {theirs['cpu']:.2f} | {j['run_cpu_s']:.2f} | {theirs['rss_mb']:.0f} | "
                f"{ns3_pkts:,.0f} | {j['events'] / ns3_pkts:.1f} | {ns3_rate / 1e6:.3f} | 1 | "
                f"{j.get('goodput_util', j['bottleneck_util']):.3f} | {j['jain']:.3f} | {j['bn_qdisc_drops_in_window']:,} |"
            )
        ratio = f"{ours_rate / ns3_rate:.0f}x" if ns3_rate else "-"
        util, jain, drops = ccbench_agreement(os.path.join(out, f"ccbench-{s}"))
        yield (
            f"| {s} | ccbench | {ours['cpu']:.2f} | {sim_cpu:.2f} | {ours['rss_mb']:.0f} | {pkts:,} | {ev_pkt:.1f} | "
            f"{ours_rate / 1e6:.2f} | {ratio} | {util:.3f} | {jain:.3f} | {drops:,} |"
        )


def main():
    args = sys.argv[1:]
    target = None
    if "--write" in args:
        i = args.index("--write")
        target = args[i + 1]
        del args[i : i + 2]
    out, scenarios = args[0], args[1:] or ["a", "c"]
    table = "\n".join(rows(out, scenarios))
    print(table)
    if target:
        text = open(target).read()
        begin, end = "<!-- bench:begin -->", "<!-- bench:end -->"
        if begin not in text or end not in text:
            sys.exit(f"{target}: no {begin} ... {end} block to replace")
        head, rest = text.split(begin, 1)
        tail = rest.split(end, 1)[1]
        with open(target, "w") as f:
            f.write(f"{head}{begin}\n{table}\n{end}{tail}")


if __name__ == "__main__":
    main()
