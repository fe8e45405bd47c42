"""Engine speed with and without the progress callback and Ctrl-C checks (issue 19).

    python benchmarks/progress_overhead.py [SPEC] [REPEATS]

Runs SPEC (default benchmarks/specs/c.toml) alternately without a callback and with a
no-op progress callback called every 0.1 s (the CLI's setting), and prints the engine
CPU seconds of each run and the median ratio.
"""

from __future__ import annotations

import json
import statistics
import sys
import time

import ccbench._core as core
from ccbench.spec import load_spec


def main() -> None:
    spec = sys.argv[1] if len(sys.argv) > 1 else "benchmarks/specs/c.toml"
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    text = json.dumps(load_spec(spec).resolve())
    calls = 0

    def progress(sim_ns: int, duration_ns: int, events: int) -> None:
        nonlocal calls
        calls += 1

    off, on = [], []
    for _ in range(repeats):
        for label, kwargs in (("off", {}), ("on", {"progress": progress, "max_recorded_bytes": 2**40})):
            t = time.process_time()
            core.run(text, **kwargs)
            (off if label == "off" else on).append(time.process_time() - t)
    print(f"spec {spec}, {repeats} runs each; engine CPU s")
    print("  off:", " ".join(f"{x:.3f}" for x in off))
    print("  on: ", " ".join(f"{x:.3f}" for x in on), f"({calls} callbacks)")
    print(f"median on/off = {statistics.median(on) / statistics.median(off):.4f}")


if __name__ == "__main__":
    main()
