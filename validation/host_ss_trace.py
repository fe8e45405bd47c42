#!/usr/bin/env python3
"""What a kernel flow did, from `netns_host.sh -T MS` samples: per data connection,
the `ss -tin` trace (cwnd, ssthresh, unacked, lost, retransmissions, RTO backoff, the
time it was limited by the receive window or the send buffer) and the sender's and the
receiver's TCP counters (`nstat`). Used for the outside-tolerance rows of
docs/validation.md ("Hosts": why the kernel idles a 20-packet buffer at 20 ms).

    python3 validation/host_ss_trace.py RUN          # RUN = the -o path without .json
    python3 validation/host_ss_trace.py RUN --series # also a line per sample
"""

from __future__ import annotations

import argparse
import re
import statistics as st
import sys

#: counters worth reading for a loss-recovery question (nstat names)
COUNTERS = [
    "TcpRetransSegs", "TcpExtTCPTimeouts", "TcpExtTCPLossProbes", "TcpExtTCPLossProbeRecovery",
    "TcpExtTCPSackRecovery", "TcpExtTCPRenoRecovery", "TcpExtTCPSackRecoveryFail", "TcpExtTCPLostRetransmit",
    "TcpExtTCPSpuriousRTOs", "TcpExtTCPFastRetrans", "TcpExtTCPSlowStartRetrans", "TcpExtTCPDSACKRecv",
    "TcpExtTCPDSACKUndo", "TcpExtTCPSACKReorder", "TcpExtTCPHystartTrainDetect", "TcpExtTCPHystartTrainCwnd",
    "TcpExtTCPHystartDelayDetect", "TcpExtTCPHystartDelayCwnd", "TcpExtTCPLossUndo", "TcpExtTCPPartialUndo",
    "TcpExtTCPRcvQDrop", "TcpExtTCPZeroWindowDrop", "TcpExtTCPWantZeroWindowAdv", "TcpExtTCPToZeroWindowAdv",
    "TcpExtTCPBacklogDrop", "TcpExtTCPOFOQueue", "TcpExtTCPOFODrop", "TcpExtPruneCalled", "TcpExtRcvPruned",
    "TcpExtTCPDelivered", "TcpExtDelayedACKs", "TcpExtDelayedACKLost", "TcpExtTCPAutoCorking",
    "TcpExtTCPRcvCoalesce", "TcpExtTCPAbortOnTimeout", "IpExtInNoRoutes", "TcpExtTCPRetransFail",
]
FIELDS = re.compile(r"(\w+):(\S+)")


def parse_ss(path: str) -> dict[str, list[dict]]:
    """Samples per connection (keyed by local port), each a dict with 't' and the numeric
    fields of interest."""
    conns: dict[str, list[dict]] = {}
    t = None
    head = None
    for line in open(path):
        if line.startswith("# "):
            t = float(line[2:])
            continue
        if line.startswith("ESTAB") or line.startswith("State"):
            head = line.split() if line.startswith("ESTAB") else None
            continue
        if head is None or t is None or not line.startswith((" ", "\t")):
            continue
        port = head[3].rsplit(":", 1)[1]
        d: dict = {"t": t}
        for k, v in FIELDS.findall(line):
            if k in ("cwnd", "ssthresh", "unacked", "lost", "sacked", "backoff", "rto", "data_segs_out",
                     "notsent", "snd_wnd", "delivered"):
                d[k] = float(v)
            elif k == "retrans":  # retrans:<in flight>/<total>
                d["retrans_total"] = float(v.split("/")[1])
            elif k == "rtt":
                d["srtt_ms"] = float(v.split("/")[0])
            elif k in ("busy", "rwnd_limited", "sndbuf_limited"):
                d[k + "_ms"] = float(re.match(r"(\d+)", v).group(1))
        d["cubic"] = " cubic " in f" {line} "
        conns.setdefault(port, []).append(d)
        head = None
    # the data connections: the ones that sent many segments (iperf3's control
    # connections send a few)
    return {p: s for p, s in conns.items() if max(x.get("data_segs_out", 0) for x in s) > 1000}


def nstat(path: str) -> dict[str, int]:
    out = {}
    try:
        for line in open(path):
            parts = line.split()
            if len(parts) >= 2 and parts[1].isdigit():
                out[parts[0]] = int(parts[1])
    except OSError:
        pass
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", help="the run's -o path without .json")
    ap.add_argument("--series", action="store_true")
    ap.add_argument("--warmup", type=float, default=5.0)
    a = ap.parse_args()
    conns = parse_ss(a.run + ".ss.txt")
    t0 = min(s[0]["t"] for s in conns.values()) if conns else 0.0
    for port, samples in sorted(conns.items()):
        w = [x for x in samples if x["t"] - t0 >= a.warmup]
        if not w:
            continue
        cw = [x["cwnd"] for x in w if "cwnd" in x]
        first, last = w[0], w[-1]
        span_ms = 1e3 * (last["t"] - first["t"])

        def growth(k, first=first, last=last):
            return last.get(k, 0) - first.get(k, 0)

        print(f"flow port {port}: {len(w)} samples over {span_ms / 1e3:.1f} s after {a.warmup:g} s")
        print(f"  cwnd mean {st.mean(cw):.1f} median {st.median(cw):.0f} min {min(cw):.0f} max {max(cw):.0f}; "
              f"samples with cwnd <= 2: {sum(c <= 2 for c in cw)}, with backoff: {sum('backoff' in x for x in w)}")
        print(f"  retransmitted {growth('retrans_total'):.0f}; busy {growth('busy_ms'):.0f} ms, "
              f"rwnd-limited {growth('rwnd_limited_ms'):.0f} ms, sndbuf-limited {growth('sndbuf_limited_ms'):.0f} ms")
        rtos = [x for x in w if x.get("backoff")]
        if rtos:
            times = ", ".join(f"{x['t'] - t0:.2f}" for x in rtos[:12])
            print(f"  RTO backoff seen at t = {times} s")
        if a.series:
            for x in w:
                print(f"    {x['t'] - t0:7.3f} cwnd {x.get('cwnd', 0):5.0f} ssthresh {x.get('ssthresh', -1):5.0f} "
                      f"unacked {x.get('unacked', 0):4.0f} lost {x.get('lost', 0):3.0f} sacked {x.get('sacked', 0):3.0f} "
                      f"retrans {x.get('retrans_total', 0):5.0f} backoff {x.get('backoff', 0):.0f} "
                      f"srtt {x.get('srtt_ms', 0):6.2f} rto {x.get('rto', 0):.0f}")
    for side in ("snd", "rcv"):
        c = nstat(f"{a.run}.nstat.{side}.txt")
        if c:
            print(f"nstat {side}: " + ", ".join(f"{k.removeprefix('TcpExt')}={c[k]}" for k in COUNTERS if c.get(k)))
    try:
        lines = open(a.run + ".softnet.txt").read().split("# after\n")
        drops = [sum(int(row.split()[1], 16) for row in part.split("\n") if row.strip()) for part in lines]
        if len(drops) == 2:
            print(f"softnet backlog drops during the run (whole machine): {drops[1] - drops[0]}")
    except OSError:
        pass


if __name__ == "__main__":
    sys.exit(main())
