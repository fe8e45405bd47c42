#!/usr/bin/env python3
"""The README's quickstart (two CUBIC flows, 100 Mbit/s, 100 ms, 1-BDP pfifo, 30 s) in
ccbench next to the kernel runs of `netns_host.sh` (docs/validation.md, issue 13).

    python3 validation/quickstart_compare.py --seeds 1-10                 # as shipped
    python3 validation/quickstart_compare.py --seeds 1-10 --offset 75ms   # flow 2 later
    python3 validation/quickstart_compare.py --seeds 1-10 --paced         # TCP pacing on
    python3 validation/quickstart_compare.py --kernel validation/data/host/quickstart

The kernel side (as root; 100 ms on the ACK path through the delay line, 834 packets):
    validation/netns_host.sh -l 834 -D 100 -d 30 -w 5 -o RUN.json cubic,cubic
One line per run: flow-1 share, each flow's goodput (Mbit/s) in [5 s, 30 s], each
flow's retransmissions over the whole run, and the bottleneck drops.
"""

from __future__ import annotations

import argparse
import glob
import json
import sys
from pathlib import Path

import tomllib

SPEC = Path(__file__).resolve().parent.parent / "specs" / "quickstart.toml"


def ours(a) -> None:
    import ccbench

    spec = tomllib.loads(SPEC.read_text())
    flow = dict(spec["flows"][0], count=1)
    second = dict(flow, name="cubic-b")
    if a.offset:
        second["start"] = a.offset
    for f in (flow, second):
        if a.paced:
            f["pacing"] = True
    spec["flows"] = [flow, second]
    if a.host:
        spec["host"] = json.loads(a.host)
    lo, _, hi = a.seeds.partition("-")
    for seed in range(int(lo), int(hi or lo) + 1):
        r = ccbench.run(spec, seed=seed)
        fl = r.flows.sort_values("flow_id")
        secs = (r.engine_config["duration_ns"] - r.engine_config["warmup_ns"]) / 1e9
        g = [(x.delivered_bytes - x.delivered_bytes_at_warmup) * 8 / secs / 1e6 for x in fl.itertuples()]
        print(json.dumps({"source": "ccbench", "seed": seed, "offset": a.offset, "paced": a.paced,
                          "share1": g[0] / sum(g), "goodput_mbps": g, "retrans": [int(x) for x in fl.segs_retrans],
                          "drops": int(r.manifest["stats"].get("data_pkts_dropped", 0))}), flush=True)


def kernel(a) -> None:
    for p in sorted(glob.glob(f"{a.kernel}/*.json")):
        k = json.load(open(p))
        print(json.dumps({"source": Path(p).stem, "share1": k["shares"][0],
                          "goodput_mbps": [f["goodput_mbps"] for f in k["flows"]],
                          "retrans": [f["retrans_total"] for f in k["flows"]],
                          "drops": (k.get("bottleneck") or {}).get("dropped"), "load": k.get("loadavg_after")}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="1-10")
    ap.add_argument("--offset", help="start the second flow this much later, e.g. 75ms")
    ap.add_argument("--paced", action="store_true", help="TCP internal pacing on both flows")
    ap.add_argument("--host", help="[host] table as JSON")
    ap.add_argument("--kernel", metavar="DIR", help="print the kernel runs' summaries in DIR instead")
    a = ap.parse_args()
    kernel(a) if a.kernel else ours(a)


if __name__ == "__main__":
    sys.exit(main())
