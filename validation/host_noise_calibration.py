#!/usr/bin/env python3
"""Calibrate the host model's timing noise (crates/ccsim/src/host/noise.rs) from the
mechanism captures of `validation/host_kernel_batch.sh mech`.

Receiver: the time from a data segment entering the receiver's veth (c0) to the ACK
that covers it leaving c0, for ACKs sent within 1 ms (the immediate-ACK path: softirq,
NAPI poll, TCP receive, ACK transmit); delayed-ACK-timer ACKs are excluded.
Sender: the time from an ACK entering the sender's veth (s0) to the next data segment
of that flow leaving s0, when it leaves within 100 µs (ACK-clocked transmits of
unpaced, cwnd-limited CUBIC flows; paced or deferred sends wait far longer).
Pools every capture in RAWDIR and prints the quantile tables (µs) as JSON.

    python3 validation/host_noise_calibration.py /tmp/h13/raw > validation/data/host/noise-calibration.json
"""
import glob
import json
import sys

sys.path.insert(0, __import__("os").path.dirname(__file__))
from host_mechanism import packets  # noqa: E402

QS = [0, 1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 98, 99, 99.9, 100]


def quantiles(xs):
    s = sorted(xs)
    return {str(q): round(s[min(len(s) - 1, int(q / 100 * len(s)))], 3) for q in QS}


def receiver_delays(path):
    data, acks, out = {}, {}, []
    for t, sp, dp, seq, ack, plen, flags in packets(path):
        if plen > 0 and dp in (5201, 5202):
            data.setdefault(sp, []).append((t, (seq + plen) % (1 << 32)))
        elif plen == 0 and sp in (5201, 5202) and flags & 0x10:
            acks.setdefault(dp, []).append((t, ack))
    for flow, al in acks.items():
        dl, j = data.get(flow, []), 0
        for t, a in al:
            while j + 1 < len(dl) and dl[j + 1][0] <= t:
                j += 1
            if dl and dl[j][0] <= t and dl[j][1] == a and t - dl[j][0] < 1_000_000:
                out.append((t - dl[j][0]) / 1e3)
    return out


def sender_delays(path, cubic_ports):
    data, acks, out = {}, {}, []
    for t, sp, dp, _seq, _ack, plen, _flags in packets(path):
        if plen > 0 and dp in cubic_ports:
            data.setdefault(sp, []).append(t)
        elif plen == 0 and sp in cubic_ports:
            acks.setdefault(dp, []).append(t)
    for flow, al in acks.items():
        ts, j = data.get(flow, []), 0
        for ta in al:
            while j < len(ts) and ts[j] < ta:
                j += 1
            if j < len(ts) and ts[j] - ta < 100_000:
                out.append((ts[j] - ta) / 1e3)
    return out


def main():
    raw = sys.argv[1] if len(sys.argv) > 1 else "/tmp/h13/raw"
    rx, tx, runs = [], [], []
    for p in sorted(glob.glob(f"{raw}/mech-*.rcv.pcap")):
        run = p[: -len(".rcv.pcap")]
        meta = json.load(open(run + ".json"))
        ccas = meta["ccas"].split(",")
        cubic_ports = {5201 + i for i, c in enumerate(ccas) if c == "cubic"}
        r = receiver_delays(p)
        s = sender_delays(run + ".snd.pcap", cubic_ports) if cubic_ports else []
        rx += r
        tx += s
        runs.append({"run": run.split("/")[-1], "receiver_n": len(r), "sender_n": len(s),
                     "loadavg_after": meta.get("loadavg_after")})
    json.dump({"receiver_ack_delay_us": quantiles(rx), "receiver_n": len(rx),
               "sender_ack_to_send_us": quantiles(tx), "sender_n": len(tx),
               "runs": runs}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
