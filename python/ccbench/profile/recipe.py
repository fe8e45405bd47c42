"""The benchmarking recipe (D2 Ch. 4) as experiments for one CCA: each experiment is a
sweep spec (``docs/sweeps.md``) built here, grouped by the recipe's three questions.

Q1 path unpredictability: buffer sizes, capacity changes, random loss.
Q2 cross traffic: a staggered second flow, different RTTs, competing CCAs (always
   CUBIC, plus every ``--vs``), elastic and inelastic cross traffic, DoS bursts, a
   parking lot.
Q3 workload dynamics: three workload intensities, per-flow RTTs.

Experiments that need something the library cannot express yet are written in the
form they will take (a ``[[traffic]]``, ``[[workloads]]`` or ``[topology]`` table);
their validation errors are the profile's "needs", shown in the report, never dropped.

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


def _sweep(name: str, s: Scale, base: dict[str, Any], grid: dict[str, list[Any]], derived: dict[str, str]) -> dict:
    return {
        "sweep": {"name": name, "seed": 2024, "repetitions": s.repetitions, "grid": grid, "derived": derived},
        "base": base,
    }


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
    inel = _base(s, backend, [dict(x)])
    inel["traffic"] = [{"kind": "mice_flood", "payload": "400B", "phases": [
        {"start": f"{s.change_s[0]}s", "stop": f"{s.change_s[1]}s", "load": f"{rate * 40 // 100}Mbit"},
        {"start": f"{s.change_s[1]}s", "stop": f"{s.change_s[2]}s", "load": f"{rate * 80 // 100}Mbit"},
        {"start": f"{s.change_s[2]}s", "stop": f"{s.change_s[3]}s", "load": f"{rate * 40 // 100}Mbit"}]}]  # fmt: skip
    add("q2-inelastic", "Q2", "Inelastic cross traffic: a flood of short TCP connections (hping-like)", "phases",
        _sweep("q2-inelastic", s, inel, {"k": [1]}, {"bottleneck.buffer": "{k}BDP"}))  # fmt: skip
    dos = _base(s, backend, [dict(x)])
    dos["traffic"] = [{"kind": "dos", "bursts": [
        {"start": f"{s.change_s[i]}s", "duration": f"{max(1, s.stagger_s * 2 // 3)}s", "rate": f"{rate * c // 100}Mbit"}
        for i, c in enumerate((40, 80, 120))]}]  # fmt: skip
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

    # ---- Q3: workload dynamics
    for eid, title, extra in (
        ("q3-workloads", "Three workload intensities (MAWI-like flow sizes, offered load 30/60/90 %)", {}),
        ("q3-rtts", "A workload with per-flow RTTs from an Internet RTT distribution", {"rtt_distribution": "internet"}),
    ):
        wl = _base(s, backend, [dict(x)])
        wl["workloads"] = [{"distribution": "mawi", "cca": cca, "load": 0.6, "seed": 1, **extra}]
        add(eid, "Q3", title, "grid", _sweep(eid, s, wl, {"k": [1]}, {"bottleneck.buffer": "{k}BDP"}))
    # A network-assisted CCA is profiled with the network element it needs on every
    # bottleneck (competitors run through it too, as in its study): docs/ncf.md.
    if cca in BOTTLENECK_QDISC_OF:
        for e in out:
            base = e.sweep["base"]
            links = [base["bottleneck"]] if "bottleneck" in base else base.get("topology", {}).get("hops", [])
            for link in links:
                link["qdisc"] = BOTTLENECK_QDISC_OF[cca]
    return [copy.deepcopy(e) for e in out]
