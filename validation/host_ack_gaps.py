#!/usr/bin/env python3
"""Do a kernel run's loss episodes follow stalls of the ACK stream? From a
`tcp:tcp_probe` + `tcp:tcp_cong_state_set` trace (see validation/host_kernel_trace.py):

- the ACK stream at the sender (both flows merged): gaps between consecutive ACKs, and
  the ACK *trains* after a gap (ACKs arriving within --train-us of each other);
- for every entry into Recovery/Loss at time t, whether an ACK gap longer than
  --gap-ms ended in [t - rtt - slack, t - rtt + slack]: the loss the sender reacts to
  happened about one RTT earlier, when the data burst released by the ACK train after
  the gap reached the bottleneck;
- the same test at random times, as the baseline.

    python3 validation/host_ack_gaps.py RUN.trace --rtt-ms 20 [--gap-ms 1]
"""

from __future__ import annotations

import argparse
import bisect
import json
import random
import re
import statistics as st
import sys

PROBE = re.compile(r"\s(\d+\.\d+): tcp_probe: .*?src=[\d.]+:(\d+) dest=10\.200\.2\.2:(\d+) .*?snd_nxt=0x([0-9a-f]+)")
STATE = re.compile(r"\s(\d+\.\d+): tcp_cong_state_set: .*?sport=(\d+) .*?daddr=10\.200\.2\.2 .*?cong_state=(\d+)")
# (only the flows to validation/netns_host.sh's receiver: a trace is machine-wide)


def pct_of(xs: list[int]) -> dict | None:
    if not xs:
        return None
    s = sorted(xs)
    return {f"p{q}": s[min(len(s) - 1, int(q / 100 * len(s)))] for q in (10, 50, 90)} | {"mean": round(st.mean(s), 1)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("--rtt-ms", type=float, required=True)
    ap.add_argument("--gap-ms", type=float, default=1.0)
    ap.add_argument("--slack-ms", type=float, default=4.0)
    ap.add_argument("--train-us", type=float, default=50.0)
    ap.add_argument("--from-s", type=float, default=5.0)
    ap.add_argument("--burst-window-us", type=float, default=1000.0)
    a = ap.parse_args()
    acks: list[float] = []
    entries: list[float] = []
    state: dict[str, int] = {}
    counts: dict[str, int] = {}
    sent: list[tuple[float, int]] = []  # (t, segments sent since the previous ACK of the flow)
    last_nxt: dict[str, int] = {}
    for line in open(a.trace, errors="replace"):
        m = PROBE.search(line)
        if m:
            t, port, nxt = float(m.group(1)), m.group(2), int(m.group(4), 16)
            acks.append(t)
            counts[port] = counts.get(port, 0) + 1
            if port in last_nxt:
                sent.append((t, ((nxt - last_nxt[port]) % 2**32) // 1448))
            last_nxt[port] = nxt
            continue
        m = STATE.search(line)
        if m:
            s = int(m.group(3))
            if s in (3, 4) and state.get(m.group(2), 0) not in (3, 4):
                entries.append(float(m.group(1)))
            state[m.group(2)] = s
    acks.sort()
    t0 = acks[0] + a.from_s
    acks = [t for t in acks if t >= t0]
    entries = [t for t in entries if t >= t0 + a.rtt_ms / 1e3 + a.slack_ms / 1e3]
    gaps = [(y - x) for x, y in zip(acks, acks[1:], strict=False)]
    gap_ends = [acks[i + 1] for i, g in enumerate(gaps) if g * 1e3 > a.gap_ms]
    # the ACK train that follows each long gap
    trains = []
    for i, g in enumerate(gaps):
        if g * 1e3 > a.gap_ms:
            n, j = 1, i + 1
            while j + 1 < len(acks) and (acks[j + 1] - acks[j]) * 1e6 < a.train_us:
                n, j = n + 1, j + 1
            trains.append(n)
    lo, hi = (a.rtt_ms - a.slack_ms) / 1e3, (a.rtt_ms + a.slack_ms) / 1e3

    def preceded(t: float) -> bool:
        i = bisect.bisect_left(gap_ends, t - hi)
        return i < len(gap_ends) and gap_ends[i] <= t - lo

    # data the sender released in bursts: segments sent (snd_nxt advance) within any
    # --burst-window-us, as seen at the ACKs (tcp_probe runs before the ACK is processed,
    # so each sample shows what the previous ACKs released)
    sent.sort()
    st_times = [t for t, _ in sent]
    cum = [0]
    for _, n in sent:
        cum.append(cum[-1] + n)
    w = a.burst_window_us / 1e6

    def burst_at(t: float) -> int:
        """Most segments sent within any burst window ending in [t - hi, t - lo]."""
        best = 0
        i = bisect.bisect_left(st_times, t - hi)
        while i < len(st_times) and st_times[i] <= t - lo:
            j = bisect.bisect_left(st_times, st_times[i] - w)
            best = max(best, cum[i + 1] - cum[j])
            i += 1
        return best

    rng = random.Random(1)
    span = (acks[-1] - acks[0]) if acks else 0
    base = [preceded(acks[0] + hi + rng.random() * (span - hi)) for _ in range(2000)] if span > hi else []
    out = {
        "trace": a.trace.rsplit("/", 1)[-1],
        "window_s": round(span, 2),
        "acks": len(acks),
        "ack_gaps_over_gap_ms": len(gap_ends),
        "ack_gap_ms_quantiles": {q: round(sorted(gaps)[int(q / 100 * (len(gaps) - 1))] * 1e3, 3)
                                 for q in (50, 90, 99, 99.9)} if gaps else None,
        "longest_ack_gaps_ms": [round(g * 1e3, 2) for g in sorted(gaps)[-8:]],
        "acks_in_train_after_a_gap": {"mean": st.mean(trains), "max": max(trains)} if trains else None,
        "recovery_entries": len(entries),
        "entries_preceded_by_a_gap_one_rtt_earlier": round(sum(map(preceded, entries)) / len(entries), 3)
        if entries else None,
        "random_times_preceded_by_a_gap": round(sum(base) / len(base), 3) if base else None,
        "largest_burst_one_rtt_before_an_entry": pct_of([burst_at(t) for t in entries]),
        "largest_burst_one_rtt_before_random_times": pct_of([
            burst_at(acks[0] + hi + rng.random() * (span - hi)) for _ in range(500)]) if span > hi else None,
    }
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
