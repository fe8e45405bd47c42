#!/usr/bin/env python3
"""PSH marks and `tcp_tso_should_defer` in a kernel capture of `netns_host.sh -c SECS`
(docs/validation.md, "PSH, the reader's ACK and the deferral rule").

Per flow, from RUN.snd.pcap (the sender's veth) and RUN.rcv.pcap (the receiver's):

- sender bursts (segments < 3 µs apart) and whether their last segment carries PSH
  (`__tcp_transmit_skb` forces PSH on every skb of more than one segment);
- receiver ACKs that advance by exactly one segment: whether that segment carried
  PSH, and how soon the ACK left (the reader's `tcp_cleanup_rbuf` ACK);
- small sends: bursts of 2 or more segments but fewer than a third of the window
  in flight (which `tcp_tso_should_defer` would hold back), classified by the age of
  the oldest unacknowledged segment against the deferral rule before Linux 6.18
  (defer once that age reaches srtt/2) and from 6.18 (defer only when its ACK is
  expected within min(srtt/2, 1 ms), i.e. age ≥ srtt − min(srtt/2, 1 ms)), and
  whether more than 1 ms passed since the flow's previous burst (no deferral then).
  srtt is an EWMA (1/8) of the capture's own RTT samples.

Usage: python3 validation/host_psh_defer.py RUN   (RUN = netns_host.sh -o FILE less .json)
"""

from __future__ import annotations

import collections
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from host_mechanism import MSS, packets  # noqa: E402

PSH = 0x08
BURST_GAP_NS = 3_000
PORTS = (5201, 5202)


def wrap(x: int) -> int:
    return x & 0xFFFFFFFF


def ahead(a: int, b: int) -> int:
    """a − b in sequence space, or -1 if a is not after b."""
    d = wrap(a - b)
    return d if 0 < d < 0x7FFFFFFF else -1


def sender_stats(pk: list, port: int) -> dict:
    sent: dict[int, int] = {}
    srtt = una = nxt = last_t = None
    bursts: list[dict] = []
    cur: dict | None = None
    for t, sp, dp, seq, ack, ln, fl in pk:
        if dp == port and ln > 0:
            end = wrap(seq + ln)
            if last_t is None or t - last_t > BURST_GAP_NS:
                if cur:
                    bursts.append(cur)
                head = sent.get(una) if una is not None else None
                cur = {
                    "n": 0,
                    "age": None if head is None else t - head,
                    "srtt": srtt,
                    "una": una,
                    "gap": None if last_t is None else t - last_t,
                }
            cur["n"] += 1
            cur["psh_last"] = bool(fl & PSH)
            last_t = t
            if nxt is None or ahead(end, nxt) > 0:
                nxt = end
            cur["nxt"] = nxt
            sent[seq] = t
        elif sp == port and ln == 0:
            if una is not None and ahead(ack, una) > 0:
                s = sent.get(wrap(ack - MSS))
                if s is not None:
                    srtt = t - s if srtt is None else srtt + (t - s - srtt) / 8
            una = ack
    if cur:
        bursts.append(cur)
    multi = [b for b in bursts if b["n"] > 1]
    small = collections.Counter()
    for b in bursts:
        if b["age"] is None or not b["srtt"] or b["una"] is None or b["n"] < 2:
            continue
        in_flight = ahead(b["nxt"], b["una"]) // MSS
        if in_flight <= 0 or b["n"] >= in_flight / 3:
            continue
        old_rule, new_rule = b["srtt"] / 2, b["srtt"] - min(b["srtt"] / 2, 1e6)
        zone = "young" if b["age"] < old_rule else ("between" if b["age"] < new_rule else "old")
        small[zone] += 1
        if b["gap"] is not None and b["gap"] > 1e6:
            small[zone + "_after_1ms_idle"] += 1
    return {
        "bursts": len(bursts),
        "multi_segment_bursts": len(multi),
        "multi_segment_bursts_ending_in_psh": round(sum(b["psh_last"] for b in multi) / max(len(multi), 1), 4),
        "single_segment_sends_with_psh": round(
            sum(b["psh_last"] for b in bursts if b["n"] == 1) / max(sum(b["n"] == 1 for b in bursts), 1), 4
        ),
        "small_sends_by_head_age": dict(sorted(small.items())),
    }


def receiver_stats(pk: list, port: int) -> dict:
    data_end: dict[int, tuple[int, bool]] = {}
    last = None
    single = collections.Counter()
    n_data = n_psh = 0
    for t, sp, dp, seq, ack, ln, fl in pk:
        if dp == port and ln > 0:
            n_data += 1
            n_psh += bool(fl & PSH)
            data_end[wrap(seq + ln)] = (t, bool(fl & PSH))
        elif sp == port and ln == 0:
            if last is not None and ahead(ack, last) > 0 and round(ahead(ack, last) / MSS) == 1:
                single["acks"] += 1
                seen = data_end.get(ack)
                if seen:
                    single["psh"] += seen[1]
                    single["within_50us"] += t - seen[0] < 50_000
            last = ack
    return {
        "data_segments": n_data,
        "psh_share": round(n_psh / max(n_data, 1), 4),
        "one_segment_acks": single["acks"],
        "one_segment_acks_of_psh_segment": round(single["psh"] / max(single["acks"], 1), 4),
        "one_segment_acks_within_50us": round(single["within_50us"] / max(single["acks"], 1), 4),
    }


def main() -> int:
    run = sys.argv[1]
    snd, rcv = list(packets(run + ".snd.pcap")), list(packets(run + ".rcv.pcap"))
    out = {str(p): {"sender": sender_stats(snd, p), "receiver": receiver_stats(rcv, p)} for p in PORTS}
    json.dump(out, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
