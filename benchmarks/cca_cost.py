#!/usr/bin/env python3
"""Engine CPU per simulated second by CCA and by queue discipline, relative to CUBIC
through a pfifo, for the pre-flight's cost factors (python/ccbench/preflight.py,
docs/preflight.md "How good the CPU estimate is").

One scenario, 20 flows of one CCA, 1 Gbit/s, 20 ms, 1 BDP, 10 s. Each CCA (and each
qdisc with CUBIC) runs alternated with the CUBIC/pfifo reference, N times; the factor is
the median of its engine CPU (the simulating thread's, the manifest's `engine_cpu_s`)
over the median of the reference's, so that the machine's speed, which drifts from hour to
hour, cancels.

    python benchmarks/cca_cost.py --repeat 3 > benchmarks/results/cca-cost.jsonl
    python benchmarks/cca_cost.py --repeat 3 --ccas python:ccbench.pycca_examples:Reno >> benchmarks/results/cca-cost.jsonl
    python benchmarks/cca_cost.py --table benchmarks/results/cca-cost.jsonl

The factor the pre-flight uses is per delivered packet (a CCA that leaves the link idle,
as TCP-LP does against itself, costs less per second but not per packet).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

QDISCS = ["pfifo", "bfifo", "red", "codel", "fq_codel", "pie", "fq_pie"]


def spec(cca: str, qdisc: str, flows: int) -> dict:
    """``cca`` may end in ``+pacing`` (a classic CCA with ``pacing = true``)."""
    name, _, extra = cca.partition("+")
    return {
        "experiment": {"name": "cca-cost", "seed": 1, "duration": "10s", "warmup": "2s"},
        "bottleneck": {"rate": "1Gbit", "buffer": "1BDP", "qdisc": qdisc},
        "senders": [{"name": "s", "rtt": "20ms"}],
        "flows": [{"name": "f", "sender": "s", "cca": name, "count": flows} | ({"pacing": True} if extra == "pacing" else {})],
    }


def measure(cca: str, qdisc: str, flows: int) -> dict:
    import ccbench

    r = ccbench.run(spec(cca, qdisc, flows))
    st = r.manifest["stats"]
    return {"cpu_s": r.manifest["engine_cpu_s"], "delivered": st["data_pkts_delivered"],
            "events": st["events_processed"]}


def run(a) -> None:
    import ccbench

    if a.ccas:  # only these CCAs
        cases = [(c, "pfifo") for c in a.ccas.split(",")]
    else:  # every built-in CCA, paced CUBIC, and every qdisc with CUBIC
        ccas = [c["name"] for c in ccbench.list_ccas()] + ["cubic+pacing"]
        cases = [(c, "pfifo") for c in ccas if c != "cubic"] + [("cubic", q) for q in QDISCS if q != "pfifo"]
    for cca, qdisc in cases:
        mine, ref = [], []
        for _ in range(a.repeat):
            mine.append(measure(cca, qdisc, a.flows))
            ref.append(measure("cubic", "pfifo", a.flows))
        m = statistics.median(x["cpu_s"] for x in mine)
        r = statistics.median(x["cpu_s"] for x in ref)
        print(json.dumps({"cca": cca, "qdisc": qdisc, "flows": a.flows, "cpu_s": m, "ref_cpu_s": r,
                          "factor": m / r, "delivered": mine[0]["delivered"], "ref_delivered": ref[0]["delivered"],
                          "events_per_pkt": mine[0]["events"] / max(1, mine[0]["delivered"]),
                          "ref_events_per_pkt": ref[0]["events"] / max(1, ref[0]["delivered"]),
                          "loadavg": os.getloadavg()[0]}), flush=True)


def table(path: str) -> None:
    rows = [json.loads(x) for x in open(path)]
    print("| CCA | qdisc | CPU per simulated s, relative | CPU per delivered packet, relative | events per delivered packet "
          "(CUBIC/pfifo's) | delivered packets | load |")
    print("|---|---|---|---|---|---|---|")
    for o in rows:
        o["per_packet"] = o["factor"] * o["ref_delivered"] / o["delivered"]
    for o in sorted(rows, key=lambda o: -o["per_packet"]):
        print(f"| {o['cca']} | {o['qdisc']} | {o['factor']:.2f} | {o['per_packet']:.2f} "
              f"| {o['events_per_pkt']:.1f} ({o['ref_events_per_pkt']:.1f}) | {o['delivered']:,} | {o['loadavg']:.1f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--flows", type=int, default=20)
    ap.add_argument("--ccas", help="comma-separated CCAs, only these (default: every built-in, paced CUBIC and "
                    "every qdisc with CUBIC); e.g. python:ccbench.pycca_examples:Reno")
    ap.add_argument("--table", metavar="JSONL", help="print the markdown table of a result file and exit")
    a = ap.parse_args()
    if a.table:
        table(a.table)
    else:
        run(a)


if __name__ == "__main__":
    sys.exit(main())
