"""Sweep throughput and per-run overhead (docs/benchmarks.md, "Sweeps").

    python benchmarks/sweep_bench.py [--runs 100] [--duration 10s] [--out /tmp/sweep-bench]

A sweep of RUNS runs of benchmarks/specs/a.toml (2 CUBIC flows, 100 Mbit/s, RTT 100 ms,
1 BDP) shortened to DURATION: 4 buffer sizes x RUNS/4 repetitions. It measures

- direct: each run's spec with ccbench.run(spec, dir) and result.summary() in one loop
  in one process (what a user would do without sweeps), sequentially;
- sweep, local executor, 1 worker: the same runs through `ccbench.sweep` (per-run
  overhead = (sweep - direct) / direct, both on one core);
- sweep, local executor, one worker per core;
- sweep, Dask LocalCluster with one worker per core (cluster start-up included, and
  separately excluded).

and prints a Markdown table. The machine's load average is printed before and after.
"""

from __future__ import annotations

import argparse
import os
import shutil
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def sweep_spec(runs: int, duration: str) -> dict:
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    base = tomllib.loads((ROOT / "benchmarks" / "specs" / "a.toml").read_text())
    base["experiment"]["duration"] = duration
    base["experiment"].pop("warmup", None)
    base["experiment"]["warmup"] = "2s"
    return {
        "sweep": {
            "name": "sweep-bench",
            "seed": 1,
            "repetitions": runs // 4,
            "grid": {"k": [0.5, 1, 2, 4]},
            "derived": {"bottleneck.buffer": "{k}BDP"},
        },
        **base,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--duration", default="10s")
    ap.add_argument("--out", type=Path, default=Path("/tmp/sweep-bench"))
    ap.add_argument("--skip-dask", action="store_true")
    args = ap.parse_args()

    import ccbench
    from ccbench.sweeps import expand, run_sweep
    from ccbench.sweeps.executors import DaskExecutor, default_workers

    spec = sweep_spec(args.runs, args.duration)
    plan = expand(spec)
    cores = default_workers()
    shutil.rmtree(args.out, ignore_errors=True)
    args.out.mkdir(parents=True)
    print(f"load average before: {os.getloadavg()}")
    rows = []

    t0 = time.perf_counter()
    engine_s = 0.0
    for r in plan.runs:
        res = ccbench.run(r.experiment, args.out / "direct" / r.run_id)
        res.summary()
        engine_s += res.manifest["wall_time_s"]
    direct = time.perf_counter() - t0
    rows.append(("direct loop (ccbench.run + summary), 1 process", 1, direct, engine_s))
    print(f"direct: {direct:.2f} s ({engine_s:.2f} s in the engine)")

    def timed(label: str, n_workers: int, **kw: Any) -> tuple[float, float]:
        """Wall seconds of the sweep and the engine's wall seconds summed over its runs."""
        out = args.out / label.replace(" ", "-")
        t = time.perf_counter()
        rep = run_sweep(spec, out, progress=False, **kw)
        wall = time.perf_counter() - t
        assert rep.ok and rep.complete == len(plan.runs), rep
        engine = float(ccbench.load(out).runs["wall_time_s"].sum())
        rows.append((label, n_workers, wall, engine))
        print(f"{label}: {wall:.2f} s ({engine:.2f} s in the engine)")
        return wall, engine

    # The pool's one-time start-up: a fork server importing ccbench, pandas and pyarrow.
    from ccbench.sweeps.executors import LocalExecutor

    t = time.perf_counter()
    probe = LocalExecutor(1)
    slot = probe._start()
    slot.conn.send(None)
    slot.process.join()
    startup = time.perf_counter() - t
    print(f"local pool start-up (fork server + first worker): {startup:.2f} s")
    one, one_engine = timed("sweep local 1 worker", 1, workers=1)
    timed(f"sweep local {cores} workers", cores, workers=cores)
    if not args.skip_dask:
        t = time.perf_counter()
        exe = DaskExecutor("local", cores)
        start = time.perf_counter() - t
        wall, eng = timed(f"sweep dask LocalCluster {cores} workers (cluster running)", cores, executor=exe)
        exe.close()
        label = f"sweep dask LocalCluster {cores} workers (incl. {start:.1f} s cluster start)"
        rows.append((label, cores, wall + start, eng))
    print(f"load average after: {os.getloadavg()}")
    n = len(plan.runs)
    print()
    print(f"{n} runs of {args.duration} simulated each; engine time (direct) {engine_s:.2f} s")
    print()
    print("| how | workers | wall s | runs per minute | wall s per run | engine s (sum over runs) |")
    print("|---|---|---|---|---|---|")
    for label, w, wall, eng in rows:
        print(f"| {label} | {w} | {wall:.1f} | {n / wall * 60:.0f} | {wall / n:.3f} | {eng:.1f} |")
    print()
    raw = (one - direct) / direct * 100
    # The machine is shared: normalise each phase by the engine time measured in it, so
    # that a change of load between the phases does not count as overhead.
    norm = ((one / one_engine) / (direct / engine_s) - 1) * 100
    steady = (((one - startup) / one_engine) / (direct / engine_s) - 1) * 100
    print(
        f"per-run overhead of the sweep (1 worker) vs the direct loop: {raw:+.1f} % raw "
        f"({(one - direct) / n * 1000:+.1f} ms per run); {norm:+.1f} % normalised by engine time; "
        f"{steady:+.1f} % normalised, without the pool's one-time start-up ({startup:.2f} s)"
    )


if __name__ == "__main__":
    main()
