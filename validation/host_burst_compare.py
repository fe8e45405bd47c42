#!/usr/bin/env python3
"""Burst sizes of reno/cubic at 100 packets and 50 µs (docs/validation.md, "The grid on an
idle machine"): the kernel's, from a sender-veth capture of both flows
(`netns_host.sh -l 100 -d 12 -w 6 -c 3 -o RUN.json reno,cubic`; segments < 3 µs apart
form a burst), next to ours, from the bottleneck queue's enqueue times (every packet
sampled, `sojourn_sample_every = 1`; delivered packets only) over the same 3 s window.

    python3 validation/host_burst_compare.py RUN.snd.pcap
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import host_grid  # noqa: E402
from host_mechanism import burst_sizes, packets, pct  # noqa: E402

BURST_GAP_NS = 3_000
WINDOW_NS = (6_000_000_000, 9_000_000_000)


def summary(sizes: list[int]) -> str:
    p = pct(sizes, ps=(50, 90, 99))
    return f"bursts {p['n']} mean {p['mean']:.2f} p50 {p['p50']} p90 {p['p90']} p99 {p['p99']}"


def main() -> None:
    import ccbench

    kernel = sorted(t for t, _sp, dp, _seq, _ack, length, _fl in packets(sys.argv[1])
                    if length > 0 and dp in (5201, 5202))
    print("kernel, sender veth, both flows:", summary(burst_sizes(kernel, BURST_GAP_NS)))
    for host in ({"gro_max_size": 1500}, {"gro_max_size": 1500, "gso_max_segs": 1}):
        d = host_grid.spec("reno,cubic", 100, 0, 1, host, True, 12, 6, rig_tbf=True, stagger_us=0, handshake=True)
        d["experiment"]["sojourn_sample_every"] = 1
        s = ccbench.run(d).sojourn
        s = s[(s.time_ns > WINDOW_NS[0]) & (s.time_ns < WINDOW_NS[1]) & (s.link == "bottleneck")]
        enqueued = sorted((s.time_ns - s.sojourn_ns).astype("int64").tolist())
        print(f"ours {host}, bottleneck enqueues:", summary(burst_sizes(enqueued, BURST_GAP_NS)))


if __name__ == "__main__":
    main()
