#!/usr/bin/env bash
# Speed benchmark: ccbench's sim backend vs the ns-3.37 yardstick (../shared/tools/ns3)
# on the same scenarios, in the same run, each under /usr/bin/time -v.
# Usage: benchmarks/run.sh [OUTDIR] [SCENARIO...]   (default: bench-out, scenarios a c)
# Scenarios are benchmarks/specs/*.toml; ns-3 runs those its bench.sh knows (a, c).
# WRITE=docs/benchmarks.md also writes the table into that file's bench block.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
out="${1:-$root/bench-out}"; shift || true
scenarios=("$@"); [ ${#scenarios[@]} -eq 0 ] && scenarios=(a c)
mkdir -p "$out"
command -v /usr/bin/time >/dev/null || { apt-get update -qq && apt-get install -y -qq time; }

for s in "${scenarios[@]}"; do
  echo "=== ccbench $s" >&2
  /usr/bin/time -v ccbench run "$here/specs/$s.toml" -o "$out/ccbench-$s" --overwrite \
    > "$out/ccbench-$s.log" 2> "$out/ccbench-$s.time"
done

ns3_src="${NS3_DIR:-$root/../shared/tools/ns3}"
if [ -d "$ns3_src" ]; then
  # shared/ may be read-only and build.sh compiles in place: build in a scratch copy.
  ns3="$(mktemp -d)"; cp -a "$ns3_src"/. "$ns3"/
  known=(); for s in "${scenarios[@]}"; do case "$s" in a|b|c|d|e1|e2) known+=("$s");; esac; done
  [ ${#known[@]} -gt 0 ] && "$ns3/bench.sh" "$out/ns3" "${known[@]}"
else
  echo "ns-3 yardstick not found at $ns3_src; skipping the comparison" >&2
fi
python3 "$here/summarize.py" "$out" "${scenarios[@]}" ${WRITE:+--write "$WRITE"}
