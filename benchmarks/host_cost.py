#!/usr/bin/env python3
"""Cost of the host model (issue 13): benchmark scenario (c) with the default Linux
host and with `[host] model = "ideal"`, engine CPU only (`manifest.engine_cpu_s`),
best of N runs. Prints a markdown row per host.

    python3 benchmarks/host_cost.py [N]
"""

import sys
from pathlib import Path

import ccbench
from ccbench.spec import load_spec

SPEC = Path(__file__).resolve().parent / "specs" / "c.toml"


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    base = load_spec(SPEC).to_dict()
    print(f"| host | engine CPU s (best of {n}) | delivered data pkts | pkts per engine CPU-s | events |")
    print("|---|---|---|---|---|")
    for label, host in [("linux (default)", None), ("ideal", {"model": "ideal"})]:
        spec = dict(base)
        if host:
            spec["host"] = host
        best = None
        for _ in range(n):
            r = ccbench.run(spec)
            cpu = r.manifest["engine_cpu_s"]
            if best is None or cpu < best[0]:
                best = (cpu, r.manifest["stats"])
        cpu, stats = best
        pkts = stats["data_pkts_delivered"]
        print(f"| {label} | {cpu:.2f} | {pkts:,} | {pkts / cpu:,.0f} | {stats['events_processed']:,} |")


if __name__ == "__main__":
    main()
