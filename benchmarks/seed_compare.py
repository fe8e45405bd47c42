#!/usr/bin/env python3
"""Statistical sameness of two engine builds: run specs over several seeds with the
`ccbench` of the Python that runs this script (each build in its own venv), keep the
headline metrics of each run, then compare two such files side by side (mean and
standard deviation over the seeds, and the difference of the means in standard errors).

    BEFORE/.venv/bin/python benchmarks/seed_compare.py run before.json 10 SPEC.toml ...
    AFTER/.venv/bin/python  benchmarks/seed_compare.py run after.json 10 SPEC.toml ...
    python benchmarks/seed_compare.py table before.json after.json

Seeds are the spec's seed, then +1, ... (as `compare-backends` picks them). Metrics over
the measurement window (`ccbench.metrics.summary`): utilization (M-PHI), bottleneck
drops (M-DROP), retransmissions (M-RETX) and Jain's index over the flows (M-JFI).
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from pathlib import Path

METRICS = ("utilization", "drops", "retransmissions", "jain")


def run(out: str, seeds: int, specs: list[str]) -> None:
    import ccbench
    from ccbench.metrics import summary
    from ccbench.spec import load_spec

    rows: dict[str, list[dict[str, float]]] = {}
    for spec in specs:
        exp = load_spec(spec)
        name = Path(spec).stem
        rows[name] = []
        for k in range(seeds):
            seed = (exp.experiment.seed + k) % 2**64
            s = summary(ccbench.run(exp, None, seed=seed, backend="sim"))
            rows[name].append({"seed": seed, **{m: float(s[m]) for m in METRICS}})
            print(name, rows[name][-1], file=sys.stderr)
    Path(out).write_text(json.dumps(rows, indent=1))


def mean_sd(v: list[float]) -> tuple[float, float]:
    return statistics.fmean(v), statistics.stdev(v) if len(v) > 1 else 0.0


def fmt(x: float) -> str:
    return f"{x:.4f}" if abs(x) < 10 else f"{x:,.0f}"


def table(before: str, after: str) -> None:
    a, b = json.loads(Path(before).read_text()), json.loads(Path(after).read_text())
    print("| scenario | metric | before: mean ± sd | after: mean ± sd | difference / SE | seeds bit-equal |")
    print("|---|---|---|---|---|---|")
    for name in a:
        same = sum(x == y for x, y in zip(a[name], b[name], strict=True))
        for m in METRICS:
            x, y = [r[m] for r in a[name]], [r[m] for r in b[name]]
            (mx, sx), (my, sy) = mean_sd(x), mean_sd(y)
            se = math.sqrt(sx**2 / len(x) + sy**2 / len(y))
            t = (my - mx) / se if se > 0 else 0.0
            print(f"| {name} | {m} | {fmt(mx)} ± {fmt(sx)} | {fmt(my)} ± {fmt(sy)} | {t:+.2f} | {same}/{len(x)} |")


def main() -> None:
    if sys.argv[1] == "run":
        run(sys.argv[2], int(sys.argv[3]), sys.argv[4:])
    elif sys.argv[1] == "table":
        table(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
