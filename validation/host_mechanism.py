#!/usr/bin/env python3
"""Host mechanism statistics from the packet captures of `netns_host.sh -c SECS`.

Reads RUN.snd.pcap (the sender's veth s0) and RUN.rcv.pcap (the receiver's veth c0),
nanosecond pcap, Ethernet, and prints one JSON object with, per flow:

- sender bursts (snd.pcap): data segments that leave back to back, separated by less
  than --burst-gap from the previous segment of the same flow, form one burst (one GSO
  skb segmented at the device, or several skbs sent in one go). Burst sizes in segments.
- sender reaction time (snd.pcap): from an ACK arriving at s0 to the first data segment
  of that flow leaving s0 after it, when that segment leaves within 1 ms (ACK-clocked
  sends; paced sends wait for their timer and are excluded by the bound).
- receiver ACK cadence (rcv.pcap): segments acknowledged per ACK (cumulative ACK advance
  in MSS; pure duplicate ACKs count 0 and are reported apart), ACK bursts (ACKs of one
  flow separated by less than --burst-gap), and the receiver's ACK delay: from the
  arrival of the newest data segment the ACK covers to the ACK leaving c0.
- the share of ACKs sent within 1 ms of the covered data (immediate) versus later
  (delayed-ACK timer).

Usage: python3 validation/host_mechanism.py RUN [--burst-gap-us 3] > RUN.mechanism.json
(RUN is the -o FILE given to netns_host.sh without .json.)
"""

import argparse
import json
import statistics as st
import struct
import sys
from collections import defaultdict

MSS = 1448


def packets(path):
    """Yield (t_ns, src_port, dst_port, seq, ack, payload_len, flags) for IPv4/TCP."""
    with open(path, "rb") as f:
        head = f.read(24)
        magic = struct.unpack("<I", head[:4])[0]
        if magic != 0xA1B23C4D:
            raise SystemExit(f"{path}: not a nanosecond pcap (magic {magic:#x})")
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return
            sec, nsec, incl, orig = struct.unpack("<IIII", rec)
            data = f.read(incl)
            if len(data) < 34 or data[12:14] != b"\x08\x00":
                continue
            ip = data[14:]
            ihl = (ip[0] & 15) * 4
            total = struct.unpack("!H", ip[2:4])[0]
            if ip[9] != 6:
                continue
            tcp = ip[ihl:]
            sp, dp, seq, ack = struct.unpack("!HHII", tcp[:12])
            doff = (tcp[12] >> 4) * 4
            flags = tcp[13]
            yield sec * 1_000_000_000 + nsec, sp, dp, seq, ack, total - ihl - doff, flags


def pct(xs, ps=(5, 25, 50, 75, 95, 99)):
    if not xs:
        return None
    s = sorted(xs)
    return {f"p{p}": s[min(len(s) - 1, int(p / 100 * len(s)))] for p in ps} | {
        "mean": st.mean(s), "n": len(s)}


def hist(xs, cap=64):
    h = defaultdict(int)
    for x in xs:
        h[min(x, cap)] += 1
    n = len(xs)
    return {str(k): round(v / n, 4) for k, v in sorted(h.items())} if n else {}


def burst_sizes(times, gap_ns):
    """Sizes of the runs of events separated by less than gap_ns."""
    bursts, n = [], 1
    for a, b in zip(times, times[1:], strict=False):
        if b - a < gap_ns:
            n += 1
        else:
            bursts.append(n)
            n = 1
    bursts.append(n)
    return bursts


def sender(path, gap_ns):
    data = defaultdict(list)   # flow (sport) -> [t]
    acks = defaultdict(list)   # flow (dport of the ACK = sport of data) -> [t]
    for t, sp, dp, _seq, _ack, plen, _flags in packets(path):
        if plen > 0 and dp in (5201, 5202):
            data[sp].append(t)
        elif plen == 0 and sp in (5201, 5202):
            acks[dp].append(t)
    out = {}
    for flow, ts in sorted(data.items()):
        gaps = [b - a for a, b in zip(ts, ts[1:], strict=False)]
        bursts = burst_sizes(ts, gap_ns)
        # reaction: ACK arrival -> next data departure of the flow within 1 ms
        react, j = [], 0
        for ta in acks.get(flow, []):
            while j < len(ts) and ts[j] < ta:
                j += 1
            if j < len(ts) and ts[j] - ta < 1_000_000:
                react.append((ts[j] - ta) / 1e3)
        segs_in = sum(bursts)
        out[str(flow)] = {
            "data_segments": segs_in,
            "bursts": len(bursts),
            "burst_size": pct(bursts),
            "burst_size_hist": hist(bursts),
            "segments_in_bursts_of_ge_2": round(sum(b for b in bursts if b >= 2) / segs_in, 4),
            "intra_burst_gap_us": pct([g / 1e3 for g in gaps if g < gap_ns]),
            "inter_burst_gap_us": pct([g / 1e3 for g in gaps if g >= gap_ns]),
            "ack_to_send_us": pct(react),
        }
    return out


def receiver(path, gap_ns):
    flows = defaultdict(lambda: {"data": [], "acks": []})
    for t, sp, dp, seq, ack, plen, flags in packets(path):
        if plen > 0 and dp in (5201, 5202):
            flows[sp]["data"].append((t, seq + plen))
        elif plen == 0 and sp in (5201, 5202) and flags & 0x10:
            flows[dp]["acks"].append((t, ack))
    out = {}
    for flow, f in sorted(flows.items()):
        data, acks = f["data"], f["acks"]
        if len(acks) < 10:
            continue
        per_ack, dups, delay, j = [], 0, [], 0
        for (_t0, a0), (_t1, a1) in zip(acks, acks[1:], strict=False):
            adv = (a1 - a0) % (1 << 32)
            if adv == 0:
                dups += 1
                continue
            per_ack.append(max(1, round(adv / MSS)))
        # ACK delay: newest data arrival before the ACK whose end the ACK covers
        for t, a in acks:
            while j + 1 < len(data) and data[j + 1][0] <= t:
                j += 1
            if j < len(data) and data[j][0] <= t and (a - data[j][1]) % (1 << 32) < (1 << 31):
                delay.append((t - data[j][0]) / 1e3)
        bursts = burst_sizes([t for t, _ in acks], gap_ns)
        out[str(flow)] = {
            "data_segments": len(data),
            "acks": len(acks),
            "dup_acks": dups,
            "segments_per_ack_mean": st.mean(per_ack) if per_ack else None,
            "segments_per_ack_hist": hist(per_ack, cap=16),
            "ack_delay_us": pct(delay),
            "acks_within_1ms": round(sum(d < 1000 for d in delay) / len(delay), 4) if delay else None,
            "ack_burst_size": pct(bursts),
            "ack_burst_hist": hist(bursts, cap=16),
        }
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", help="netns_host.sh -o FILE without .json")
    ap.add_argument("--burst-gap-us", type=float, default=3.0)
    a = ap.parse_args()
    gap = int(a.burst_gap_us * 1000)
    meta = {}
    try:
        meta = json.load(open(a.run + ".json"))
    except OSError:
        pass
    json.dump({"run": a.run.split("/")[-1], "burst_gap_us": a.burst_gap_us,
               "config": {k: meta.get(k) for k in ("ccas", "pfifo_limit_pkts", "ack_delay_ms",
                                                    "sender_gso_max_segs", "gro", "loadavg_after")},
               "sender": sender(a.run + ".snd.pcap", gap),
               "receiver": receiver(a.run + ".rcv.pcap", gap)}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
