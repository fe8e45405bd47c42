#!/usr/bin/env bash
# Speed of the analysis tools: `ccbench report` of a 16-run sweep and of one run, and
# `ccbench plot` of one figure, timed with hyperfine (docs/benchmarks.md, "Analysis").
# Usage: benchmarks/analysis.sh [OUTDIR]      (default: bench-out/analysis)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
out="${1:-$root/bench-out/analysis}"
mkdir -p "$out"
command -v hyperfine >/dev/null || { apt-get update -qq && apt-get install -y -qq hyperfine; }

# 4 buffers x 2 rates x 2 seeds of 20 s with 2 BBR + 2 CUBIC flows (the study grids' shape)
python3 - "$out/sweep" <<'PY'
import copy, sys
from pathlib import Path
import ccbench
root = Path(sys.argv[1])
base = {
    "experiment": {"name": "bench", "duration": "20s", "warmup": "5s", "seed": 1, "sample_interval": "100ms"},
    "bottleneck": {"rate": "50Mbit", "delay": "2ms", "buffer": "1BDP"},
    "senders": [{"name": "bbr-host", "rtt": "40ms"}, {"name": "cubic-host", "rtt": "40ms"}],
    "flows": [{"name": "bbr", "sender": "bbr-host", "cca": "bbr1", "count": 2},
              {"name": "cubic", "sender": "cubic-host", "cca": "cubic", "count": 2}],
}
for buf in ("0.5BDP", "1BDP", "2BDP", "4BDP"):
    for rate in ("20Mbit", "50Mbit"):
        for seed in (1, 2):
            target = root / f"buffer={buf}" / f"rate={rate}" / f"seed={seed}"
            if not (target / "manifest.json").exists():
                s = copy.deepcopy(base)
                s["bottleneck"].update(buffer=buf, rate=rate)
                s["experiment"]["seed"] = seed
                ccbench.run(s, target)
PY
run="$out/sweep/buffer=1BDP/rate=50Mbit/seed=1"
hyperfine --warmup 1 --runs 5 --export-markdown "$out/analysis.md" --export-json "$out/analysis.json" \
  -n "report, sweep of 16 runs" "ccbench report $out/sweep -o $out/sweep.html" \
  -n "report, one run" "ccbench report $run -o $out/run.html" \
  -n "plot throughput (PNG)" "ccbench plot $run throughput -o $out/t.png" \
  -n "plot jain-heatmap (SVG)" "ccbench plot $out/sweep jain-heatmap -o $out/j.svg" \
  -n "ccbench --help" "ccbench --help"
cat "$out/analysis.md"
# CPU seconds (user + system) per command: less sensitive than wall time to other load
python3 -c '
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    print("%s: wall %.2f s, CPU %.2f s" % (r["command"], r["mean"], r["user"] + r["system"]))
' "$out/analysis.json"
uptime
