#!/usr/bin/env python3
"""Who takes the drops at a shared drop-tail queue: per-flow trains, bursts and drops
at the bottleneck, the kernel's next to ours (docs/validation.md, "Reno against CUBIC
at 100 packets"). Both sides give, per flow over the window:

- drops (bottleneck drops of the flow's packets), how many were the last packet of
  their burst, and the sizes of the bursts they ended;
- train starts: the flow's first burst after >= 2 ms in which it sent nothing (the
  other flow's packets were being served), its size, and how often it lost a packet;
- same-flow runs: consecutive packets of one flow in the queue's arrival order;
- congestion episodes (drops less than 20 ms apart): both flows, Reno only, CUBIC only.

A burst is a flow's packets less than 3 µs apart.

Kernel: a capture run of validation/netns_host.sh (-c SECS) has the sender's veth
(arrival order at the bottleneck) and the receiver's (what got through); a segment
sent but not received, in the per-flow FIFO order, was dropped:

    python3 validation/host_trains.py kernel RUN [RUN ...]

Ours: the engine records no per-packet arrivals; the diagnostic build of
`validation/data/host/reno-cubic-p100/enqueue-trace.diagnostic.patch` prints one line
per data packet offered to the bottleneck (`ENQ t_ns flow seg retrans dropped backlog`)
to stderr when CCSIM_DIAG_ENQ is set:

    CCSIM_DIAG_ENQ=1 python3 validation/host_trains.py ours --seed 1   # runs the row
    python3 validation/host_trains.py ours-file RUN.enq [...]          # a saved trace
"""

from __future__ import annotations

import argparse
import collections
import json
import statistics as st
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from host_mechanism import packets  # noqa: E402

BURST_GAP_NS = 3_000
SILENCE_NS = 2_000_000
EPISODE_GAP_NS = 20_000_000
NAMES = ("reno", "cubic")


def bursts_of(xs: list) -> tuple[list[list], list]:
    """Split one flow's (t, retrans, dropped) events into bursts; also the gap before each."""
    out, gaps, cur = [], [None], [xs[0]]
    for a, b in zip(xs, xs[1:], strict=False):
        if b[0] - a[0] < BURST_GAP_NS:
            cur.append(b)
        else:
            out.append(cur)
            gaps.append(b[0] - a[0])
            cur = [b]
    out.append(cur)
    return out, gaps


def same_flow_runs(flows: list[int]) -> list[int]:
    runs, n = [], 1
    for a, b in zip(flows, flows[1:], strict=False):
        if a == b:
            n += 1
        else:
            runs.append(n)
            n = 1
    runs.append(n)
    return runs


def analyse(ev: list[tuple[int, int, bool, bool]], label: str) -> dict:
    """ev: (t_ns, flow 0 = reno / 1 = cubic, retransmission, dropped), in arrival order."""
    secs = (ev[-1][0] - ev[0][0]) / 1e9
    out: dict = {"run": label, "seconds": round(secs, 3)}
    per = collections.defaultdict(list)
    for t, f, rt, dr in ev:
        per[f].append((t, rt, dr))
    for f, xs in sorted(per.items()):
        bursts, gaps = bursts_of(xs)
        drops = [(k, len(b)) for b in bursts for k, x in enumerate(b) if x[2]]
        starts = [b for b, g in zip(bursts, gaps, strict=True) if g is not None and g >= SILENCE_NS]
        sizes = [len(b) for b in starts]
        out[NAMES[f]] = {
            "segments": len(xs),
            "mean_burst": round(len(xs) / len(bursts), 2),
            "drops": len(drops),
            "drops_per_s": round(len(drops) / secs, 2),
            "retransmissions_dropped": sum(1 for b in bursts for x in b if x[1] and x[2]),
            "drops_last_in_burst": sum(1 for k, n in drops if k == n - 1),
            "dropped_burst_sizes": dict(sorted(collections.Counter(n for _, n in drops).items())),
            "train_starts_per_s": round(len(starts) / secs, 1),
            "train_start_burst_mean": round(st.mean(sizes), 2) if sizes else None,
            "train_start_bursts_le3": round(sum(s <= 3 for s in sizes) / len(sizes), 3) if sizes else None,
            "train_starts_with_a_drop": sum(any(x[2] for x in b) for b in starts),
        }
    runs = same_flow_runs([f for _, f, _, _ in ev])
    out["same_flow_run_mean"] = round(st.mean(runs), 1)
    drops = [e for e in ev if e[3]]
    episodes, cur = [], []
    for e in drops:
        if cur and e[0] - cur[-1][0] > EPISODE_GAP_NS:
            episodes.append(cur)
            cur = []
        cur.append(e)
    if cur:
        episodes.append(cur)
    kinds: collections.Counter = collections.Counter()
    for c in episodes:
        fl = {e[1] for e in c}
        kinds["both" if len(fl) == 2 else NAMES[fl.pop()] + " only"] += 1
    out["episodes"] = dict(kinds)
    return out


def kernel_events(run: str) -> list[tuple[int, int, bool, bool]]:
    meta = json.load(open(run + ".json"))
    fid = {5201 + i: NAMES.index(c) for i, c in enumerate(meta["ccas"].split(","))}
    snd: dict = collections.defaultdict(list)
    rcv: dict = collections.defaultdict(list)
    for t, _sp, dp, seq, _ack, plen, _fl in packets(run + ".snd.pcap"):
        if plen > 0 and dp in fid:
            snd[dp].append((t, seq))
    for t, _sp, dp, seq, _ack, plen, _fl in packets(run + ".rcv.pcap"):
        if plen > 0 and dp in fid:
            rcv[dp].append((t, seq))
    ev, ends, starts = [], [], []
    for port, s in snd.items():
        r = rcv[port]
        # align: the first sent segment that the receiver's capture holds
        first = {seq: k for k, (_t, seq) in reversed(list(enumerate(r[:3000])))}
        i0 = next(i for i, (_t, seq) in enumerate(s) if seq in first)
        j, seen = first[s[i0][1]], set()
        starts.append(s[i0][0])
        for t, seq in s[i0:]:
            if j >= len(r):
                ends.append(t)  # the rest was still queued when the capture stopped
                break
            rt = seq in seen
            seen.add(seq)
            if r[j][1] == seq:
                ev.append((t, fid[port], rt, False))
                j += 1
            else:
                ev.append((t, fid[port], rt, True))
    lo, hi = max(starts) + EPISODE_GAP_NS, min(ends) if ends else float("inf")
    return sorted(e for e in ev if lo <= e[0] < hi)


def ours_events(lines, t_from_ns: int) -> list[tuple[int, int, bool, bool]]:
    ev = []
    for line in lines:
        p = line.split()
        if p and p[0] == "ENQ" and int(p[1]) >= t_from_ns:
            ev.append((int(p[1]), int(p[2]), p[4] == "1", p[5] == "1"))
    return ev


def run_ours(seed: int, host: dict) -> list[tuple[int, int, bool, bool]]:
    """Run the grid's row (host_grid.py --rig-tbf) in a subprocess of the diagnostic build."""
    import os
    import subprocess

    here = str(Path(__file__).resolve().parent)
    code = (f"import sys, json; sys.path.insert(0, {here!r}); import host_grid, ccbench; "
            f"ccbench.run(host_grid.spec('reno,cubic', 100, 0, {seed}, json.loads({json.dumps(host)!r}), True, 20, 5, "
            "rig_tbf=True))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=os.environ | {"CCSIM_DIAG_ENQ": "1"}, check=True)
    ev = ours_events(p.stderr.splitlines(), 5_000_000_000)
    if not ev:
        raise SystemExit("no ENQ lines: build the engine with enqueue-trace.diagnostic.patch applied")
    return ev


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source", choices=["kernel", "ours", "ours-file"])
    ap.add_argument("runs", nargs="*", help="kernel: RUN (netns_host.sh -o without .json); ours-file: ENQ traces")
    ap.add_argument("--seed", type=int, action="append", help="ours: seeds to run (default 1-5)")
    ap.add_argument("--host", default='{"gro_max_size": 1500}', help="ours: the [host] table as JSON")
    a = ap.parse_args()
    if a.source == "kernel":
        for run in a.runs:
            print(json.dumps(analyse(kernel_events(run), Path(run).name)))
    elif a.source == "ours-file":
        for path in a.runs:
            print(json.dumps(analyse(ours_events(open(path), 5_000_000_000), Path(path).name)))
    else:
        for seed in a.seed or range(1, 6):
            print(json.dumps(analyse(run_ours(seed, json.loads(a.host)), f"seed {seed}")))


if __name__ == "__main__":
    main()
