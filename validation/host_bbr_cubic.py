#!/usr/bin/env python3
"""BBRv1 against CUBIC at 100 packets, kernel and engine side by side (docs/validation.md,
"Rows still outside", item 6), at 50 µs or with 20 ms on the ACK path (`-D 20`; the
kernel runs' `ack_delay_ms` picks the engine's spec). For each kernel run of `netns_host.sh -T MS bbr,cubic` it
reads the `ss -tin` samples of both data connections and prints, over the statistics
window: flow 1's (BBR's) share, which flow's data started first, BBR's first min-RTT
estimate and when it first falls below --below-ms, BBR's mean min-RTT estimate, cwnd and
bandwidth estimate, BBR's share before and after 10 s (when its first min-RTT estimate
expires), the fraction of samples in which BBR is cwnd-limited (in flight ≥ cwnd) and in
ProbeRTT (cwnd_gain 1), CUBIC's mean cwnd and its retransmissions per second, and the
load average. With --ours it runs the engine's pair (host_grid.py's spec, plain and
--rig-tbf, seeds 1-5) and prints the same columns from its 100 ms samples.

    sudo NS_PREFIX=bc- validation/netns_host.sh -l 100 -d 20 -w 5 -T 100 -o runs/r1.json bbr,cubic
    python3 validation/host_bbr_cubic.py validation/data/host/bbr-cubic/p100-d0-*.json --ours
    sudo NS_PREFIX=bc- validation/netns_host.sh -l 100 -D 20 -d 20 -w 5 -T 100 -o runs/r1.json bbr,cubic
    python3 validation/host_bbr_cubic.py validation/data/host/bbr-cubic/p100-d20-*.json --ours
"""

from __future__ import annotations

import json
import re
import statistics as st

from host_bbr_lockin import parse_args, print_share_range, ss_info_lines

FIELDS = {k: re.compile(p) for k, p in {
    "cca": r"^\s*(\w+) wscale", "cwnd": r" cwnd:(\d+)", "unacked": r" unacked:(\d+)",
    "bw": r"bbr:\(bw:([\d.]+)bps", "mrtt": r"mrtt:([\d.]+)", "cwnd_gain": r"cwnd_gain:([\d.]+)",
    "retrans_out": r" retrans:(\d+)/", "retrans": r" retrans:\d+/(\d+)", "acked": r"bytes_acked:(\d+)",
    "sacked": r" sacked:(\d+)", "lost": r" lost:(\d+)",
}.items()}


def ss_samples(run: str) -> dict[str, list[dict]]:
    """Per data connection (server port): samples {t since the first sample, fields...};
    the control connections (reno) are dropped."""
    out: dict[str, list[dict]] = {}
    for t, port, line in ss_info_lines(run):
        s: dict = {"t": t}
        for k, rx in FIELDS.items():
            g = rx.search(line)
            if g:
                s[k] = g.group(1) if k == "cca" else float(g.group(1))
        # in flight as tcp_packets_in_flight: packets_out - (sacked + lost) + retrans_out
        s["inflight"] = s.get("unacked", 0) - s.get("sacked", 0) - s.get("lost", 0) + s.get("retrans_out", 0)
        if s.get("cca") in ("bbr", "cubic"):
            out.setdefault(port, []).append(s)
    return out


def acked_between(series: list[dict], t0: float, t1: float) -> float:
    inside = [s["acked"] for s in series if t0 <= s["t"] <= t1]
    return inside[-1] - inside[0] if len(inside) > 1 else 0.0


def summarize(bbr: list[dict], cubic: list[dict], warmup: float, duration: float, below_ms: float) -> dict:
    """BBR's min-RTT filter expires 10 s after its first estimate: the window's share is
    split at 10 s into the part before the expiry and the part after."""
    win = [s for s in bbr if warmup <= s["t"] <= duration]
    phase = []
    for t0, t1 in ((warmup, 10.0), (10.0, duration)):
        b, c = acked_between(bbr, t0, t1), acked_between(cubic, t0, t1)
        phase.append(b / (b + c) if b + c else float("nan"))
    cwin = [s for s in cubic if warmup <= s["t"] <= duration]
    below = next((s["t"] for s in bbr if s["mrtt"] < below_ms), None)
    retr = (cwin[-1].get("retrans", 0) - cwin[0].get("retrans", 0)) / max(cwin[-1]["t"] - cwin[0]["t"], 1e-9)
    return {
        "bbr_first": "bbr" if bbr[0]["t"] <= cubic[0]["t"] else "cubic",
        "mrtt0_ms": bbr[0]["mrtt"], "mrtt_below_s": below,
        "share_before_10s": phase[0], "share_after_10s": phase[1],
        "mrtt_ms": st.mean(s["mrtt"] for s in win), "bbr_cwnd": st.mean(s["cwnd"] for s in win),
        "bbr_bw_mbps": st.mean(s["bw"] for s in win) / 1e6,
        "cwnd_limited": sum(s["inflight"] >= s["cwnd"] for s in win) / len(win),
        "probe_rtt": sum(s["cwnd_gain"] == 1 for s in win) / len(win),
        "cubic_cwnd": st.mean(s["cwnd"] for s in cwin), "cubic_retx_s": retr,
    }


def kernel_row(run: str, below_ms: float) -> dict:
    summary = json.load(open(run + ".json"))
    flows = ss_samples(run)
    bbr = next(v for v in flows.values() if v[0]["cca"] == "bbr")
    cubic = next(v for v in flows.values() if v[0]["cca"] == "cubic")
    return {"run": run.rsplit("/", 1)[-1], "share1": summary["shares"][0], "load": summary["loadavg_after"],
            "ack_delay_ms": summary["ack_delay_ms"],
            "retrans": [f["retrans_in_window"] for f in summary["flows"]]} | summarize(
        bbr, cubic, summary["warmup_s"], summary["duration_s"], below_ms)


def ours_rows(limit: int, rig_tbf: bool, below_ms: float, ack_delay_ms: int = 0, seeds=range(1, 6)) -> list[dict]:
    from host_grid import spec

    import ccbench

    rows = []
    for seed in seeds:
        # the grid's "now" host ([host] gro_max_size = 1500, as the kernel rig's veths)
        r = ccbench.run(spec("bbr,cubic", limit, ack_delay_ms, seed, {"gro_max_size": 1500}, True, 20, 5, rig_tbf))
        f = r.flows.sort_values("flow_id")
        got = (f.delivered_bytes - f.delivered_bytes_at_warmup).tolist()
        ts = r.flow_ts
        series = {}
        for fid, g in ts.groupby("flow_id"):
            series[fid] = [{"t": t / 1e9, "cwnd": c, "inflight": i, "bw": bw, "mrtt": (m / 1e6) if m == m else 1e9,
                            "cwnd_gain": cg, "retrans": rt, "acked": d}
                           for t, c, i, bw, m, cg, rt, d in zip(g.time_ns, g.cwnd_pkts, g.inflight_pkts, g.cc_bw_bps,
                                                                g.cc_min_rtt_ns, g.cc_cwnd_gain, g.retrans_total,
                                                                g.delivered_bytes, strict=True)]
        ids = sorted(series)
        rows.append({"run": f"ours{' tbf' if rig_tbf else ''} s{seed}", "share1": got[0] / sum(got), "load": "-",
                     "retrans": (f.segs_retrans - f.segs_retrans_at_warmup).tolist()}
                    | summarize(series[ids[0]], series[ids[1]], 5, 20, below_ms))
    return rows


def show(rows: list[dict]) -> None:
    print(f"{'run':<26} {'share1':>6} {'first':>5} {'mrtt0':>6} {'<1ms@':>6} {'mrtt':>6} {'cwnd':>6} {'bw':>5} "
          f"{'<10s':>5} {'>10s':>5} {'cwndlim':>7} {'prtt':>5} {'cub cwnd':>8} {'cub rtx/s':>9} {'retrans':>12}  load")
    for r in rows:
        end = "-" if r["mrtt_below_s"] is None else f"{r['mrtt_below_s']:.1f}"
        print(f"{r['run']:<26} {r['share1']:>6.3f} {r['bbr_first']:>5} {r['mrtt0_ms']:>6.3f} {end:>6} "
              f"{r['mrtt_ms']:>6.3f} {r['bbr_cwnd']:>6.1f} {r['bbr_bw_mbps']:>5.1f} {r['share_before_10s']:>5.2f} "
              f"{r['share_after_10s']:>5.2f} {r['cwnd_limited']:>7.2f} "
              f"{r['probe_rtt']:>5.2f} {r['cubic_cwnd']:>8.1f} {r['cubic_retx_s']:>9.1f} {str(r['retrans']):>12}  "
              f"{r['load']}")
    print_share_range("BBR's share", rows)


def main() -> None:
    a = parse_args(__doc__, "also run the engine's pair, plain and --rig-tbf (seeds 1-5)")
    rows = [kernel_row(r.removesuffix(".json"), a.below_ms) for r in a.runs]
    delays = {r["ack_delay_ms"] for r in rows}
    if len(delays) != 1:
        raise SystemExit(f"give runs of one ACK delay at a time (got {sorted(delays)} ms)")
    delay = round(delays.pop())
    path = f"{delay} ms on the ACK path" if delay else "50 µs"
    print(f"== kernel, bbr,cubic, pfifo 100 packets, {path}, window [5, 20] s")
    show(rows)
    if a.ours:
        for tbf in (False, True):
            print(f"== ours{' --rig-tbf' if tbf else ''}, seeds 1-5")
            show(ours_rows(100, tbf, a.below_ms, delay))


if __name__ == "__main__":
    main()
