#!/usr/bin/env python3
"""The kernel rig's bottleneck burst, measured (issue 13, `host_grid.py --rig-tbf`).

`netns_host.sh` shapes with `tbf rate 100mbit burst 3028` (two 1514-byte frames) and
no peak rate, so after the bucket refills two frames leave the router back to back at
the veth's own forwarding speed instead of 121 µs apart. This reads the receiver's
capture of a run (`netns_host.sh -c SECS -o RUN.json`: RUN.rcv.pcap, on rcv:c0 behind
the tbf) and reports the gaps between consecutive data frames of all flows together:
the gaps below half a frame time at the tbf's rate are the back-to-back pairs, and
their median gives the line rate the simulator's link should run at under the
shaper (frame bits over the gap).

    python3 validation/host_tbf_burst.py RUN [RUN ...] > validation/data/host/tbf-burst.json
"""

from __future__ import annotations

import argparse
import json
import statistics as st
import sys

from host_mechanism import packets, pct

FRAME_BYTES = 1514  # what the kernel's tbf counts (no size table in netns_host.sh)
TBF_RATE_BPS = 100_000_000


def gaps(path: str) -> list[float]:
    """µs between consecutive data frames arriving at the receiver (any flow)."""
    ts = [t for t, _sp, dp, _seq, _ack, plen, _fl in packets(path) if plen > 0 and dp in (5201, 5202)]
    return [(b - a) / 1e3 for a, b in zip(ts, ts[1:], strict=False)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", help="netns_host.sh -o FILE without .json")
    a = ap.parse_args()
    frame_us = FRAME_BYTES * 8 / TBF_RATE_BPS * 1e6
    out = {"frame_time_at_tbf_rate_us": frame_us, "runs": {}}
    pooled: list[float] = []
    for run in a.runs:
        g = gaps(run + ".rcv.pcap")
        b2b = [x for x in g if x < frame_us / 2]
        pooled += b2b
        out["runs"][run.split("/")[-1]] = {
            "data_gaps": len(g),
            "back_to_back_fraction": round(len(b2b) / len(g), 4) if g else None,
            "back_to_back_gap_us": pct(b2b),
            "other_gap_us": pct([x for x in g if x >= frame_us / 2]),
        }
    med = st.median(pooled)
    out["back_to_back_gap_us"] = pct(pooled)
    out["line_rate_bps_from_median_gap"] = round(FRAME_BYTES * 8 / (med * 1e-6))
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    sys.exit(main())
