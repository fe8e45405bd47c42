#!/usr/bin/env python3
"""Engine-only A/B comparison: two builds of `run_config` (crates/ccsim/examples) on the
same engine configurations, alternated, N times each; prints the median CPU seconds
(user + system of the child, load-independent up to cache effects), the events, the
events per delivered packet and delivered packets per CPU-second, labelled `before`
(BEFORE_BIN) and `after` (AFTER_BIN).

    python benchmarks/dump_config.py benchmarks/specs/c.toml /tmp/c.json
    python benchmarks/engine_ab.py BEFORE_BIN AFTER_BIN N /tmp/a.json /tmp/c.json ...
"""

import os
import re
import resource
import statistics
import subprocess
import sys


def run(binary: str, config: str) -> tuple[float, dict[str, int]]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([binary, config], check=True, capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    stats = {k: int(v) for k, v in re.findall(r"(\w+): (\d+)", out)}
    return cpu, stats


def main() -> None:
    a, b, n, configs = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
    # Labelled by role, not file name: both builds are usually called `run_config`.
    builds = {"before": a, "after": b}
    print(f"| config | build | CPU s (median of {n}) | events | events per delivered pkt | delivered pkts | pkts per CPU-s |")
    print("|---|---|---|---|---|---|---|")
    for c in configs:
        cpus: dict[str, list[float]] = {label: [] for label in builds}
        stats: dict[str, dict[str, int]] = {}
        for _ in range(n):
            for label, binary in builds.items():
                cpu, stats[label] = run(binary, c)
                cpus[label].append(cpu)
        name = os.path.splitext(os.path.basename(c))[0]
        for label in builds:
            s, cpu = stats[label], statistics.median(cpus[label])
            pkts = s["data_pkts_delivered"]
            print(
                f"| {name} | {label} | {cpu:.2f} | {s['events_processed']:,} | "
                f"{s['events_processed'] / pkts:.2f} | {pkts:,} | {pkts / cpu / 1e6:.2f} M |"
            )


if __name__ == "__main__":
    main()
