"""The benchmarking recipe (D2 Ch. 4) as experiments for one CCA: each experiment is a
sweep spec (``docs/sweeps.md``) built here, grouped by the recipe's three questions.

Q1 path unpredictability: buffer sizes, capacity changes, random loss.
Q2 cross traffic: a staggered second flow, different RTTs, competing CCAs (always
   CUBIC, plus every ``--vs``), elastic and inelastic cross traffic, DoS bursts, a
   parking lot.
Q3 workload dynamics: three workload intensities, per-flow RTTs.

Experiments that need something the library cannot give yet (an Internet RTT
distribution for ``q3-rtts``) name it, and their validation errors are the profile's
"needs", shown in the report, never dropped.

Scales: ``full`` is the recipe's testbed (100 Mbit/s, 100 ms, buffers 1/4-16 BDP,
300 s, 3 repetitions); ``quick`` keeps the RTT, the BDP multiples of the buffers and the
shape of every schedule but runs at 20 Mbit/s for 40 s with 1 repetition and buffers
{1/2, 1, 4} BDP, so a whole profile costs seconds of engine CPU.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

__all__ = ["QUESTIONS", "Experiment", "Scale", "experiments", "scale_of"]

QUESTIONS = {
    "Q1": "How does the CCA cope with the performance unpredictability of the end-to-end path?",
    "Q2": "How does the CCA adapt to cross traffic?",
    "Q3": "How does the CCA handle workload dynamics?",
}


@dataclass(frozen=True)
class Scale:
    name: str
    rate_mbit: int
    duration_s: int
    warmup_s: int
    stagger_s: int
    buffers: tuple[float, ...]
    repetitions: int
    change_s: tuple[int, int, int, int]  # capacity changes (recipe: 32, 82, 132, 182 s)
    losses: tuple[float, ...]


SCALES = {
    "full": Scale("full", 100, 300, 10, 15, (0.25, 0.5, 1, 2, 4, 8, 16), 3, (32, 82, 132, 182), (0, 1e-4, 1e-3, 1e-2)),
    "quick": Scale("quick", 20, 40, 5, 10, (0.5, 1, 4), 1, (8, 16, 24, 32), (0, 1e-3, 1e-2)),
}


def scale_of(name: str) -> Scale:
    if name not in SCALES:
        raise ValueError(f"unknown profile scale {name!r}; allowed: {', '.join(SCALES)}")
    return SCALES[name]


@dataclass
class Experiment:
    id: str
    question: str
    title: str
    layout: str  # metrics layout (ccbench.suites.metrics.LAYOUT_EXTRAS)
    sweep: dict[str, Any]  # {"sweep": {...}, "base": {...}}


#: The recipe's hping mice carry 400 bytes of payload per packet (D2 §4.5.2.4).
MICE_PAYLOAD_B = 400
#: Flow sizes of the Q3 workloads (a shipped distribution, docs/traffic.md).
WORKLOAD_SIZES = "websearch"

#: CCAs that only work with a network element on the bottleneck: its qdisc.
BOTTLENECK_QDISC_OF = {"ncf": "ncf"}


def _base(s: Scale, backend: str, flows: list[dict[str, Any]], senders: list[dict[str, Any]] | None = None) -> dict:
    return {
        "experiment": {
            "name": "profile",
            "duration": f"{s.duration_s}s",
            "warmup": f"{s.warmup_s}s",
            "backend": backend,
        },
        "bottleneck": {"rate": f"{s.rate_mbit}Mbit", "delay": "1ms", "buffer": "1BDP", "bdp_rtt": "100ms"},
        "senders": senders or [{"name": "a", "rtt": "100ms"}],
        "flows": flows,
    }


def _sweep(
    name: str, s: Scale, base: dict[str, Any], grid: dict[str, list[Any]], derived: dict[str, str],
    zipped: dict[str, list[Any]] | None = None,
) -> dict:  # fmt: skip
    sweep: dict[str, Any] = {"name": name, "seed": 2024, "repetitions": s.repetitions, "grid": grid, "derived": derived}
    if zipped:
        sweep["zip"] = [zipped]
    return {"sweep": sweep, "base": base}


def experiments(cca: str, vs: list[str], scale: str = "quick", backend: str = "sim") -> list[Experiment]:
    """Every experiment of the recipe for ``cca`` at ``scale`` on ``backend``."""
    s = scale_of(scale)
    x = {"name": "x", "cca": cca}
    ks = list(s.buffers)
    rate = s.rate_mbit
    out: list[Experiment] = []

    def add(eid: str, q: str, title: str, layout: str, sweep: dict[str, Any]) -> None:
        out.append(Experiment(eid, q, title, layout, sweep))

    # ---- Q1: path unpredictability
    add("q1-buffers", "Q1", "Two flows of the CCA, started together, over buffer sizes", "grid",
        _sweep("q1-buffers", s, _base(s, backend, [{**x, "count": 2}]), {"k": ks}, {"bottleneck.buffer": "{k}BDP"}))  # fmt: skip
    changes = [
        {"at": f"{s.change_s[0]}s", "rate": f"{rate * 60 // 100}Mbit"},
        {"at": f"{s.change_s[1]}s", "rate": f"{rate * 20 // 100}Mbit"},
        {"at": f"{s.change_s[2]}s", "rate": f"{rate * 60 // 100}Mbit"},
        {"at": f"{s.change_s[3]}s", "rate": f"{rate}Mbit"},
    ]
    bw = _base(s, backend, [dict(x)])
    bw["bottleneck"]["rate_schedule"] = changes
    add("q1-bw-changes", "Q1", "One flow while the capacity steps 100 -> 60 -> 20 -> 60 -> 100 %", "bw-changes",
        _sweep("q1-bw-changes", s, bw, {"k": [1, 4]}, {"bottleneck.buffer": "{k}BDP"}))  # fmt: skip
    add("q1-random-loss", "Q1", "One flow under random (non-congestion) loss, 1 BDP", "grid",
        _sweep("q1-random-loss", s, _base(s, backend, [dict(x)]), {"loss": list(s.losses)}, {"bottleneck.loss": "{loss}"}))  # fmt: skip

    # ---- Q2: cross traffic
    stag = _base(s, backend, [dict(x), {**x, "name": "x-late", "start": f"{s.stagger_s}s"}])
    add("q2-staggered", "Q2", f"A second flow of the CCA {s.stagger_s} s after the first", "convergence",
        _sweep("q2-staggered", s, stag, {"k": ks}, {"bottleneck.buffer": "{k}BDP"}))  # fmt: skip
    rtt = _base(
        s, backend,
        [{**x, "name": "x-160ms", "sender": "long"}, {**x, "name": "x-short", "sender": "short", "start": f"{s.stagger_s}s"}],
        [{"name": "long", "rtt": "160ms"}, {"name": "short", "rtt": "20ms"}],
    )  # fmt: skip
    add("q2-rtt", "Q2", "A 160 ms flow, then a {10..80} ms flow of the CCA", "pairs",
        _sweep("q2-rtt", s, rtt, {"short_ms": [10, 40, 80] if scale == "full" else [20]},
               {"senders[1].rtt": "{short_ms}ms"}))  # fmt: skip
    others = list(dict.fromkeys(["cubic", *vs]))
    comp = _base(s, backend, [dict(x), {"name": "other", "cca": "cubic", "sender": "b"}],
                 [{"name": "a", "rtt": "100ms"}, {"name": "b", "rtt": "100ms"}])  # fmt: skip
    comp["flows"][0]["sender"] = "a"
    add("q2-competing", "Q2", "One flow of the CCA against one of each competitor (CUBIC always)", "pairs",
        _sweep("q2-competing", s, comp, {"other": others, "k": ks},
               {"flows[1].cca": "{other}", "bottleneck.buffer": "{k}BDP"}))  # fmt: skip
    el = _base(s, backend, [{**x, "sender": "p"}], [{"name": "p", "rtt": "100ms"}])
    for i, (cap, lo, hi) in enumerate(((40, 0, 1), (80, 1, 2), (40, 2, 3)), start=1):
        el["senders"].append({"name": f"ct{i}", "rtt": "100ms", "access_rate": f"{rate * cap // 100}Mbit"})
        el["flows"].append({"name": "cross", "cca": "cubic", "sender": f"ct{i}",
                            "start": f"{s.change_s[lo]}s", "stop": f"{s.change_s[hi]}s"})  # fmt: skip
    add("q2-elastic", "Q2", "Elastic cross traffic: a CUBIC elephant leaving 60 / 20 / 60 % of the link", "phases",
        _sweep("q2-elastic", s, el, {"k": [1]}, {"bottleneck.buffer": "{k}BDP"}))  # fmt: skip
    # Inelastic cross traffic: the recipe's hping floods of 400-byte payloads, as Poisson
    # arrivals of one-segment TCP mice paying their handshake (docs/traffic.md), one
    # group per phase offering 40 / 80 / 40 % of the link for as many arrivals as the
    # phase lasts at that load.
    inel = _base(s, backend, [dict(x)])
    for (lo, hi), pct in zip(((0, 1), (1, 2), (2, 3)), (40, 80, 40), strict=True):
        load_bps = rate * 1_000_000 * pct // 100
        count = load_bps * (s.change_s[hi] - s.change_s[lo]) // (8 * MICE_PAYLOAD_B)
        inel["flows"].append({"name": f"mice{pct}", "cca": "cubic", "sender": "a", "arrival": "poisson",
                              "start": f"{s.change_s[lo]}s", "load": f"{load_bps}bit", "count": count,
                              "size": f"{MICE_PAYLOAD_B}B", "handshake": True})  # fmt: skip
    add("q2-inelastic", "Q2", "Inelastic cross traffic: a flood of short TCP connections (hping-like)", "phases",
        _sweep("q2-inelastic", s, inel, {"k": [1]}, {"bottleneck.buffer": "{k}BDP"}))  # fmt: skip
    dos = _base(s, backend, [dict(x)])
    dos["flows"].append({"name": "dos", "transport": "udp", "sender": "a", "bursts": [
        {"at": f"{s.change_s[i]}s", "duration": f"{max(1, s.stagger_s * 2 // 3)}s", "rate": f"{rate * c // 100}Mbit"}
        for i, c in enumerate((40, 80, 120))]})  # fmt: skip
    add("q2-dos", "Q2", "DoS bursts capped at 40 / 80 / 120 % of the link", "phases",
        _sweep("q2-dos", s, dos, {"k": [1]}, {"bottleneck.buffer": "{k}BDP"}))  # fmt: skip
    hop = {"rate": f"{rate}Mbit", "delay": "1ms", "buffer": "1BDP"}
    pl = _base(s, backend, [{**x, "name": "long", "sender": "long"}, {**x, "name": "cross1", "sender": "c1"},
                            {**x, "name": "cross2", "sender": "c2"}],
               [{"name": "long", "rtt": "100ms"}, {"name": "c1", "rtt": "100ms", "last_hop": 0},
                {"name": "c2", "rtt": "100ms", "first_hop": 1}])  # fmt: skip
    del pl["bottleneck"]
    pl["topology"] = {"kind": "parking_lot", "hops": [dict(hop), dict(hop)]}  # docs/topologies.md
    add("q2-parking-lot", "Q2", "A parking lot: the CCA's long flow against one cross flow per bottleneck (1 BDP)",
        "pairs", _sweep("q2-parking-lot", s, pl, {"hops": [2]}, {}))  # fmt: skip

    # ---- Q3: workload dynamics: the CCA's flows drawn from a heavy-tailed flow-size
    # distribution at 30 / 60 / 90 % offered load (Poisson arrivals, docs/traffic.md).
    # Deviation: the recipe samples MAWI transit-link flows, which are not shipped
    # (no published CDF); the DCTCP web-search distribution stands in.
    wl = _base(s, backend, [{**x, "arrival": "poisson", "sizes": WORKLOAD_SIZES}])
    add("q3-workloads", "Q3", "Three workload intensities (web-search flow sizes, offered load 30/60/90 %)", "grid",
        _sweep("q3-workloads", s, wl, {}, {"flows[0].load": "{load_mbit}Mbit"},
               {"load_pct": [30, 60, 90], "load_mbit": [rate * p // 100 for p in (30, 60, 90)]}))  # fmt: skip
    rt = _base(s, backend, [{**x, "arrival": "poisson", "sizes": WORKLOAD_SIZES, "load": f"{rate * 60 // 100}Mbit",
                             "rtts": "internet"}])  # fmt: skip
    add("q3-rtts", "Q3", "A workload with per-flow RTTs from an Internet RTT distribution", "grid",
        _sweep("q3-rtts", s, rt, {"k": [1]}, {"bottleneck.buffer": "{k}BDP"}))  # fmt: skip
    # A network-assisted CCA is profiled with the network element it needs on every
    # bottleneck (competitors run through it too, as in its study): docs/ncf.md.
    if cca in BOTTLENECK_QDISC_OF:
        for e in out:
            base = e.sweep["base"]
            links = [base["bottleneck"]] if "bottleneck" in base else base.get("topology", {}).get("hops", [])
            for link in links:
                link["qdisc"] = BOTTLENECK_QDISC_OF[cca]
    return [copy.deepcopy(e) for e in out]
