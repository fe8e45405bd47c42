#!/usr/bin/env python3
"""The `compare-backends` table from run directories already on disk: DIR/sim-<k> and
DIR/linux-<k>, as `ccbench compare-backends SPEC -o DIR` leaves them. Used to redo the
simulator side of docs/validation.md's tables at a newer engine without running the
kernel again (rerun the simulator with `--sim-only`), and to print the tables.

    python3 validation/compare_runs.py DIR [DIR ...]                  # Markdown tables
    python3 validation/compare_runs.py --sim-only SPEC DIR --seeds 5  # rerun DIR/sim-*
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import ccbench
from ccbench.backends.compare import compare_results
from ccbench.spec import load_spec


def runs(d: Path, backend: str) -> list:
    paths = sorted(d.glob(f"{backend}-*"), key=lambda p: int(p.name.rsplit("-", 1)[1]))
    return [ccbench.load(p) for p in paths]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+", type=Path)
    ap.add_argument("--sim-only", metavar="SPEC", help="rerun the simulator side of DIR (one DIR) first")
    ap.add_argument("--seeds", type=int, default=5)
    a = ap.parse_args()
    if a.sim_only:
        (d,) = a.dirs
        exp = load_spec(a.sim_only)
        for old in d.glob("sim-*"):
            shutil.rmtree(old)
        for k in range(a.seeds):  # the seeds compare-backends uses: the spec's, then +1, ...
            ccbench.run(exp, d / f"sim-{k}", seed=(exp.experiment.seed + k) % 2**64, backend="sim")
    for d in a.dirs:
        sim, linux = runs(d, "sim"), runs(d, "linux")
        cmp = compare_results(sim, linux, spec_name=d.name)
        loads = [round(r.manifest["linux"]["loadavg_before"][0], 1) for r in linux if "linux" in r.manifest]
        print(f"### {d.name}: {len(sim)} simulator seeds, {len(linux)} kernel runs "
              f"(1-minute load average before each kernel run: {loads})\n")
        print(cmp.to_markdown() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
