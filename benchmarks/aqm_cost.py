#!/usr/bin/env python3
"""What an AQM costs the engine: scenario (c) (20 CUBIC flows, 1 Gbit/s, 20 ms, 30 s,
1-BDP buffer) with pfifo, fq_codel and red at the bottleneck, three runs each; engine
CPU seconds (the manifest's ``engine_cpu_s``) and delivered packets per engine
CPU-second (median run). docs/benchmarks.md, "AQM cost".

    python3 benchmarks/aqm_cost.py
"""

from __future__ import annotations

import copy
import statistics
from pathlib import Path

import tomllib

import ccbench

SPEC = Path(__file__).resolve().parent / "specs" / "c.toml"
QDISCS = {"pfifo": "pfifo", "fq_codel": {"kind": "fq_codel", "ecn": False}, "red": "red"}


def main() -> None:
    base = tomllib.loads(SPEC.read_text())
    print("| qdisc | engine CPU s (3 runs) | delivered data pkts | pkts per engine CPU-s (median) |")
    print("|---|---|---|---|")
    for name, qdisc in QDISCS.items():
        cpu, delivered = [], 0
        for _ in range(3):
            spec = copy.deepcopy(base)
            spec["bottleneck"]["qdisc"] = qdisc
            m = ccbench.run(spec).manifest
            cpu.append(m["engine_cpu_s"])
            delivered = m["stats"]["data_pkts_delivered"]
        runs = " / ".join(f"{c:.2f}" for c in cpu)
        print(f"| {name} | {runs} | {delivered:,} | {delivered / statistics.median(cpu):,.0f} |")


if __name__ == "__main__":
    main()
