#!/usr/bin/env python3
"""The kernel's congestion window ACK by ACK, from the `tcp:tcp_probe` and
`tcp:tcp_cong_state_set` tracepoints (tracefs), next to the same statistics of a
ccbench run sampled every millisecond. Used in docs/validation.md to find why the
kernel's and the simulator's CUBIC differ at small windows.

Capture (as root; tracefs mounted on /sys/kernel/tracing), around a netns_host.sh run:

    T=/sys/kernel/tracing
    echo 'dport == 5201 || dport == 5202' > $T/events/tcp/tcp_probe/filter
    echo 'dport == 5201 || dport == 5202' > $T/events/tcp/tcp_cong_state_set/filter
    echo 1 > $T/events/tcp/tcp_probe/enable; echo 1 > $T/events/tcp/tcp_cong_state_set/enable
    ... run ...; cp $T/trace RUN.trace

    python3 validation/host_kernel_trace.py RUN.trace [--from-s 5]
    python3 validation/host_kernel_trace.py --sim SPEC.toml [--from-s 5]   # the same, ccbench

    python3 validation/host_kernel_trace.py --sim SPEC.toml --host '{"gso_max_segs": 1}'

Per flow: recovery episodes (entries into CA_Recovery or CA_Loss) per second, the
cwnd at entry and the ssthresh it leaves with, how far cwnd grows between episodes,
the *stalls*: stretches of at least 20 ms in which cwnd does not change while the
flow is in the Open state, and how long the Open stretches between two episodes
last (a CUBIC flow that is cut again within the HZ/32 = 32 ms at HZ 250 during which
`bictcp_update` holds its cwnd never reaches the Reno-friendly catch-up). With
``--sim`` also each flow's loss rate in the window, drops per episode, dropped
retransmissions (a segment dropped twice) and RTOs, from the engine's own counters and
``packet_events``; the kernel's counterparts are in the run's JSON (``retrans_in_window``)
and its ``nstat`` (``TCPLostRetransmit``, ``TCPTimeouts``).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics as st
import sys

PROBE = re.compile(r"\s(\d+\.\d+): tcp_probe: .*?src=[\d.]+:(\d+) dest=([\d.]+):(\d+) .*?snd_cwnd=(\d+) ssthresh=(\d+)")
STATE = re.compile(r"\s(\d+\.\d+): tcp_cong_state_set: .*?sport=(\d+) dport=(\d+) .*?daddr=([\d.]+) .*?cong_state=(\d+)")
#: the receiver of validation/netns_host.sh: only its flows are read (a trace is
#: machine-wide and may hold other namespaces' flows)
RECEIVER = "10.200.2.2"
OPEN, RECOVERY, LOSS = 0, 3, 4
STALL_S = 0.020
#: HZ/32 jiffies + 1 at HZ 250: how long `bictcp_update` keeps cnt (and cwnd) after a
#: recomputation while cwnd stands still
FREEZE_S = 0.032


def kernel_events(path: str) -> dict[str, list[tuple[float, str, int, int]]]:
    """Per flow (source port): (t, kind, a, b) with kind 'ack' (cwnd, ssthresh) or
    'state' (state, 0), in time order. The data flows are the two busiest ports."""
    flows: dict[str, list] = {}
    for line in open(path, errors="replace"):
        m = PROBE.search(line)
        if m and m.group(3) == RECEIVER:
            flows.setdefault(m.group(2), []).append((float(m.group(1)), "ack", int(m.group(5)), int(m.group(6))))
            continue
        m = STATE.search(line)
        if m and m.group(4) == RECEIVER:
            flows.setdefault(m.group(2), []).append((float(m.group(1)), "state", int(m.group(5)), 0))
    busy = sorted(flows, key=lambda p: -len(flows[p]))[:2]
    return {p: sorted(flows[p]) for p in busy}


def sim_events(spec_path: str, seed: int, host: dict | None = None) -> dict[str, list[tuple[float, str, int, int]]]:
    import tomllib

    import ccbench

    spec = tomllib.load(open(spec_path, "rb"))
    spec["experiment"]["sample_interval"] = "1ms"
    spec["experiment"]["packet_events"] = True
    if host is not None:
        spec["host"] = host
    r = ccbench.run(spec, seed=seed)
    sim_losses(r)
    out: dict[str, list] = {}
    names = r.flows.set_index("flow_id")["group"].astype(str)
    for fid, df in r.flow_ts.groupby("flow_id"):
        ev: list = []
        last_state = None
        for t, cwnd, ssth, state in zip(df.time_ns, df.cwnd_pkts, df.ssthresh_pkts, df.ca_state, strict=True):
            code = {"open": OPEN, "disorder": 1, "cwr": 2, "recovery": RECOVERY, "loss": LOSS}.get(str(state).lower(), -1)
            if code != last_state:
                ev.append((t / 1e9, "state", code, 0))
                last_state = code
            ev.append((t / 1e9, "ack", int(cwnd), int(ssth)))
        out[f"{names[fid]}"] = ev
    return out


def sim_losses(r) -> None:
    """Per flow over the measurement window: loss rate, drops per cwnd reduction,
    retransmissions dropped again, RTOs."""
    warm = int(r.manifest["engine_config"]["warmup_ns"])
    span = (r.flow_ts.time_ns.max() - warm) / 1e9
    ev = r.events[r.events.time_ns >= warm]
    total = (r.flows.delivered_bytes - r.flows.delivered_bytes_at_warmup).sum()
    for row in r.flows.itertuples():
        f = row.flow_id
        sent = row.segs_sent - row.segs_sent_at_warmup
        dropped = row.dropped_pkts - row.dropped_pkts_at_warmup
        cuts = int(((ev.flow_id == f) & (ev.kind == "cwnd_reduction")).sum())
        drops = ev[(ev.flow_id == f) & (ev.kind == "drop")]
        again = int((drops.value.value_counts() - 1).sum())
        share = (row.delivered_bytes - row.delivered_bytes_at_warmup) / max(total, 1)
        print(f"{row.group}: goodput share {share:.3f}; loss rate {dropped / max(sent, 1):.4f}; {cuts / span:.0f} reductions/s, "
              f"{dropped / max(cuts, 1):.2f} drops each; retransmissions dropped again {again} "
              f"({again / max(dropped, 1):.0%} of the drops); RTOs {row.rtos} (whole run)")


def describe(name: str, ev: list, t_from: float) -> None:
    t0 = ev[0][0]
    ev = [e for e in ev if e[0] - t0 >= t_from] if t_from else ev
    if not ev:
        return
    span = ev[-1][0] - ev[0][0]
    state, cwnd, ssth = OPEN, None, None
    entries, entry_cwnd, exit_ssth, growth, open_s = [], [], [], [], []
    open_at = None
    open_since_cwnd = None
    stall_s, last_change = 0.0, None
    cwnds = []
    for t, kind, a, b in ev:
        if kind == "state":
            if a in (RECOVERY, LOSS) and state not in (RECOVERY, LOSS):
                entries.append(t)
                if cwnd is not None:
                    entry_cwnd.append(cwnd)
                    if open_since_cwnd is not None:
                        growth.append(cwnd - open_since_cwnd)
                if open_at is not None:
                    open_s.append(t - open_at)
                    open_at = None
            if a == OPEN and state != OPEN:
                open_since_cwnd = None  # set by the next ACK sample
                open_at = t
            state = a
            continue
        if state == OPEN and open_since_cwnd is None:
            open_since_cwnd = a
            if ssth:
                exit_ssth.append(b)
        if a != cwnd:
            if state == OPEN and last_change is not None and t - last_change >= STALL_S:
                stall_s += t - last_change
            last_change = t
        cwnd, ssth = a, b
        cwnds.append(a)
    gaps = [(y - x) * 1e3 for x, y in zip(entries, entries[1:], strict=False)]
    print(f"{name}: {span:.1f} s; cwnd mean {st.mean(cwnds):.1f}; recovery/loss episodes {len(entries)} "
          f"({len(entries) / span:.0f}/s, every {st.median(gaps) if gaps else float('nan'):.1f} ms median)")
    if entry_cwnd:
        print(f"  cwnd at entry: mean {st.mean(entry_cwnd):.1f}, median {st.median(entry_cwnd):.0f}; "
              f"ssthresh after: median {st.median(exit_ssth) if exit_ssth else float('nan'):.0f}; "
              f"share of entries at cwnd <= 3: {sum(c <= 3 for c in entry_cwnd) / len(entry_cwnd):.2f}")
    if growth:
        print(f"  cwnd growth between episodes: mean {st.mean(growth):.2f} packets")
    print(f"  Open-state stalls (cwnd unchanged >= {STALL_S * 1e3:.0f} ms): {stall_s:.2f} s "
          f"({stall_s / span:.0%} of the time)")
    if open_s:
        q = st.quantiles([x * 1e3 for x in open_s], n=4) if len(open_s) > 1 else [open_s[0] * 1e3] * 3
        print(f"  Open stretches between episodes: quartiles {q[0]:.1f} / {q[1]:.1f} / {q[2]:.1f} ms; "
              f"{sum(x > FREEZE_S for x in open_s) / len(open_s):.0%} last longer than {FREEZE_S * 1e3:.0f} ms")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", nargs="?")
    ap.add_argument("--sim", metavar="SPEC")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--host", metavar="JSON", help="with --sim: the spec's [host] table, e.g. '{\"gso_max_segs\": 1}'")
    ap.add_argument("--from-s", type=float, default=5.0, help="skip this much from the first event")
    a = ap.parse_args()
    if not a.sim and not a.trace:
        ap.error("give a kernel trace or --sim SPEC")
    flows = sim_events(a.sim, a.seed, json.loads(a.host) if a.host else None) if a.sim else kernel_events(a.trace)
    for name, ev in flows.items():
        describe(name, ev, a.from_s)
    return 0


if __name__ == "__main__":
    sys.exit(main())
