#!/usr/bin/env python3
"""Engine CPU per simulated second by CCA and by queue discipline, relative to CUBIC
through a pfifo, for the pre-flight's cost factors (python/ccbench/preflight.py,
docs/preflight.md "How good the CPU estimate is") and the AQM cost of benchmark (c)
(docs/benchmarks.md "AQM cost").

The default scenario: 20 flows of one CCA, 1 Gbit/s, 20 ms, 1 BDP, 10 s. `--spec FILE`
measures another experiment instead, with its flows' CCA and its bottleneck's qdisc
replaced by the case's (benchmarks/specs/c.toml: scenario (c), 30 s). Each CCA (and each
qdisc with CUBIC) runs alternated with the CUBIC/pfifo reference, N times; the factor is
the median of its engine CPU (the simulating thread's, the manifest's `engine_cpu_s`)
over the median of the reference's, so that the machine's speed, which drifts from hour to
hour, cancels.

    python benchmarks/cca_cost.py --repeat 3 > benchmarks/results/cca-cost.jsonl
    python benchmarks/cca_cost.py --repeat 3 --ccas python:ccbench.pycca_examples:Reno >> benchmarks/results/cca-cost.jsonl
    python benchmarks/cca_cost.py --table benchmarks/results/cca-cost.jsonl
    python benchmarks/cca_cost.py --spec benchmarks/specs/c.toml --qdiscs fq_codel,red > aqm-cost.jsonl

The factor the pre-flight uses is per delivered packet (a CCA that leaves the link idle,
as TCP-LP does against itself, costs less per second but not per packet).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import sys

QDISCS = ["pfifo", "bfifo", "red", "codel", "fq_codel", "pie", "fq_pie"]
REFERENCE = ("cubic", "pfifo")


def default_spec(flows: int) -> dict:
    return {
        "experiment": {"name": "cca-cost", "seed": 1, "duration": "10s", "warmup": "2s"},
        "bottleneck": {"rate": "1Gbit", "buffer": "1BDP", "qdisc": "pfifo"},
        "senders": [{"name": "s", "rtt": "20ms"}],
        "flows": [{"name": "f", "sender": "s", "cca": "cubic", "count": flows}],
    }


def spec(base: dict, cca: str, qdisc: str) -> dict:
    """``base`` with every flow's CCA ``cca`` and the bottleneck's qdisc ``qdisc``.
    ``cca`` may end in ``+pacing`` (a classic CCA with ``pacing = true``)."""
    name, _, extra = cca.partition("+")
    out = copy.deepcopy(base)
    out["bottleneck"]["qdisc"] = qdisc
    for f in out["flows"]:
        f["cca"] = name
        if extra == "pacing":
            f["pacing"] = True
    return out


def measure(base: dict, cca: str, qdisc: str) -> dict:
    import ccbench

    r = ccbench.run(spec(base, cca, qdisc))
    st = r.manifest["stats"]
    return {"cpu_s": r.manifest["engine_cpu_s"], "delivered": st["data_pkts_delivered"],
            "events": st["events_processed"]}


def cases(a) -> list[tuple[str, str]]:
    """--ccas through a pfifo and CUBIC through each of --qdiscs; neither: every
    built-in CCA, paced CUBIC and every qdisc with CUBIC."""
    import ccbench

    if not a.ccas and not a.qdiscs:
        ccas = [c["name"] for c in ccbench.list_ccas()] + ["cubic+pacing"]
        qdiscs = QDISCS
    else:
        ccas = a.ccas.split(",") if a.ccas else []
        qdiscs = a.qdiscs.split(",") if a.qdiscs else []
    out = [(c, "pfifo") for c in ccas] + [("cubic", q) for q in qdiscs]
    return [c for c in out if c != REFERENCE]  # the reference is in every row (ref_*)


def run(a) -> None:
    if a.spec:
        from ccbench.spec import load_spec

        base = load_spec(a.spec).to_dict()  # validated, every default filled in
        scenario = base["experiment"]["name"]
    else:
        base, scenario = default_spec(a.flows), "cca-cost"
    for cca, qdisc in cases(a):
        mine, ref = [], []
        for _ in range(a.repeat):
            mine.append(measure(base, cca, qdisc))
            ref.append(measure(base, *REFERENCE))
        m = statistics.median(x["cpu_s"] for x in mine)
        r = statistics.median(x["cpu_s"] for x in ref)
        print(json.dumps({"scenario": scenario, "cca": cca, "qdisc": qdisc, "flows": sum(f.get("count", 1) for f in base["flows"]),
                          "cpu_s": m, "ref_cpu_s": r, "cpu_runs": [x["cpu_s"] for x in mine],
                          "ref_cpu_runs": [x["cpu_s"] for x in ref],
                          "factor": m / r, "delivered": mine[0]["delivered"], "ref_delivered": ref[0]["delivered"],
                          "events_per_pkt": mine[0]["events"] / max(1, mine[0]["delivered"]),
                          "ref_events_per_pkt": ref[0]["events"] / max(1, ref[0]["delivered"]),
                          "loadavg": os.getloadavg()[0]}), flush=True)


def table(path: str) -> None:
    """The markdown table of a result file, the costliest per packet first. Rows written
    before `scenario` and `cpu_runs` were recorded read as the default scenario."""
    rows = [json.loads(x) for x in open(path)]
    print("| scenario | CCA | qdisc | CPU per simulated s, relative | CPU per delivered packet, relative "
          "| events per delivered packet (CUBIC/pfifo's) | delivered packets | delivered per engine CPU-s "
          "(CUBIC/pfifo's) | load |")
    print("|---|---|---|---|---|---|---|---|---|")
    for o in rows:
        o["per_packet"] = o["factor"] * o["ref_delivered"] / o["delivered"]
    for o in sorted(rows, key=lambda o: -o["per_packet"]):
        rate = f"{o['delivered'] / o['cpu_s']:,.0f} ({o['ref_delivered'] / o['ref_cpu_s']:,.0f})"
        print(f"| {o.get('scenario', 'cca-cost')} | {o['cca']} | {o['qdisc']} | {o['factor']:.2f} | {o['per_packet']:.2f} "
              f"| {o['events_per_pkt']:.1f} ({o['ref_events_per_pkt']:.1f}) | {o['delivered']:,} | {rate} "
              f"| {o['loadavg']:.1f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--flows", type=int, default=None, help="flows of the default scenario (20)")
    ap.add_argument("--spec", metavar="TOML", help="measure this experiment (its flows' CCA and its bottleneck's "
                    "qdisc replaced by each case's) instead of the default scenario; e.g. benchmarks/specs/c.toml")
    ap.add_argument("--ccas", help="comma-separated CCAs, each through a pfifo; e.g. python:ccbench.pycca_examples:Reno")
    ap.add_argument("--qdiscs", help="comma-separated qdiscs, each with CUBIC; e.g. fq_codel,red (default with "
                    "neither option: every built-in CCA, paced CUBIC and every qdisc)")
    ap.add_argument("--table", metavar="JSONL", help="print the markdown table of a result file and exit")
    a = ap.parse_args()
    if a.spec and a.flows is not None:
        ap.error("--flows sets the default scenario's flows; a --spec brings its own")
    a.flows = 20 if a.flows is None else a.flows
    if a.table:
        table(a.table)
    else:
        run(a)


if __name__ == "__main__":
    sys.exit(main())
