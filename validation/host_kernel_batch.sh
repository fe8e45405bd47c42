#!/usr/bin/env bash
# The kernel runs behind docs/validation.md's host-model section (issue 13): the
# mechanism captures, then the side-by-side grid. Summaries (small JSON) are copied to
# validation/data/host/; raw captures and iperf3 JSON stay in $RAWDIR.
#   sudo validation/host_kernel_batch.sh [mech|grid|all]   (grid: ~35 min, 72 runs of 20 s)
#   PAIRS="cubic,cubic reno,cubic" ... limits the grid to those pairs.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
RAWDIR=${RAWDIR:-/tmp/h13/raw}; DATA=$HERE/data/host
mkdir -p "$RAWDIR" "$DATA"
WHAT=${1:-all}
run() {  # name, netns_host.sh args...
  local name=$1; shift
  "$HERE/netns_host.sh" -o "$RAWDIR/$name.json" "$@" 2>>"$RAWDIR/batch.log" && cp "$RAWDIR/$name.json" "$DATA/$name.json"
}
if [ "$WHAT" = mech ] || [ "$WHAT" = all ]; then
  # mechanism: 12 s runs, 3 s of headers captured after a 6 s warm-up
  for spec in "cubic,cubic 20 0 0" "bbr,cubic 20 0 0" "bbr,cubic 20 0 1" "bbr,bbr 100 0 0" "bbr,bbr 100 0 1" \
              "cubic,cubic 100 20 0" "bbr,bbr 100 20 0" "cubic 1000 0 0" "bbr 1000 0 0"; do
    set -- $spec
    name="mech-${1/,/-}-p$2-d$3-gso$4"
    run "$name" -d 12 -w 6 -c 3 -l "$2" -D "$3" -s "$4" "$1" &&
      python3 "$HERE/host_mechanism.py" "$RAWDIR/$name" >"$DATA/$name.mechanism.json"
  done
fi
if [ "$WHAT" = grid ] || [ "$WHAT" = all ]; then
  for r in 1 2 3; do
    for d in 0 20; do
      for l in 20 100 500; do
        for pair in ${PAIRS:-cubic,cubic bbr,cubic reno,cubic bbr,bbr}; do
          run "grid-${pair/,/-}-p$l-d$d-r$r" -d 20 -w 5 -l "$l" -D "$d" "$pair"
        done
      done
    done
  done
fi
