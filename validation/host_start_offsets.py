#!/usr/bin/env python3
"""When the kernel rig's two iperf3 flows open their data connections and send their
first data segment (docs/validation.md, "The grid on an idle machine"): runs
`netns_host.sh` for a few seconds while tcpdump captures the sender's SYNs and first
segments on its veth, and prints one JSON line per run with the offsets in ms from the
first data SYN. Root; the namespaces use NS_PREFIX=st-.

    sudo python3 validation/host_start_offsets.py --runs 5 > validation/data/host/start-offsets.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from host_mechanism import packets  # noqa: E402

SYN = 0x02


def offsets(pcap: str) -> dict:
    syn: dict = {}
    data: dict = {}
    for t, sport, dport, _seq, _ack, length, flags in packets(pcap):
        if dport not in (5201, 5202):
            continue
        key = (str(dport), sport)
        if flags & SYN:
            syn.setdefault(key, t)
        if length > 100:  # a data segment, not iperf3's control messages
            data.setdefault(key, t)
    # per server port the data connection is the later of iperf3's two (control, data)
    conns = {dport: max((t, sport) for (dp, sport), t in syn.items() if dp == dport)
             for dport in {dp for dp, _ in syn}}
    if len(conns) < 2:
        return {}
    t0 = min(t for t, _ in conns.values())
    return {dport: {"syn_ms": (t - t0) / 1e6,
                    "first_data_ms": (data[(dport, sport)] - t0) / 1e6 if (dport, sport) in data else None}
            for dport, (t, sport) in sorted(conns.items())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--pair", default="cubic,cubic")
    ap.add_argument("--limit", type=int, default=100)
    a = ap.parse_args()
    env = dict(os.environ, NS_PREFIX="st-")
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(1, a.runs + 1):
            # the previous run's namespaces must be gone, or tcpdump attaches to them
            while subprocess.run(["ip", "netns", "exec", "st-snd", "true"], capture_output=True).returncode == 0:
                time.sleep(0.1)
            run = subprocess.Popen([str(HERE / "netns_host.sh"), "-o", f"{tmp}/r{r}.json", "-d", "3", "-w", "1",
                                    "-l", str(a.limit), a.pair], env=env, stderr=subprocess.DEVNULL)
            for _ in range(250):  # the namespaces exist about a second before the clients start
                if subprocess.run(["ip", "netns", "exec", "st-snd", "ip", "link", "show", "s0"],
                                  capture_output=True).returncode == 0:
                    break
                time.sleep(0.02)
            pcap = f"{tmp}/r{r}.pcap"
            subprocess.run(["ip", "netns", "exec", "st-snd", "timeout", "6", "tcpdump", "-i", "s0", "-nn",
                            "--time-stamp-precision=nano", "-c", "3000", "-w", pcap,
                            "tcp and src host 10.200.1.1"], capture_output=True)
            run.wait()
            load = Path("/proc/loadavg").read_text().split()[0]
            ports = offsets(pcap)
            if not ports:  # the capture missed the connections: say so, keep going
                print(f"run {r}: no data connections captured", file=sys.stderr)
                continue
            print(json.dumps({"run": r, "pair": a.pair, "loadavg": float(load), "ports": ports}), flush=True)


if __name__ == "__main__":
    main()
