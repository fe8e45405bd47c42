"""The ``tc`` arguments of the queue under each shaped link direction's tbf: a fifo, or
one of the kernel's AQMs when the kernel has it, with the spec's parameters (which are
``tc``'s own, with Linux's defaults: ``docs/aqm.md``).

This kernel has none of the AQMs (``ccbench backends`` lists what a kernel has); the
arguments are checked against ``tc``'s syntax (``tc-red(8)``, ``tc-codel(8)``,
``tc-fq_codel(8)``, ``tc-pie(8)``, ``tc-fq_pie(8)``) by the tests, and a spec asking for
one on a kernel without it fails up front naming the field.
"""

from __future__ import annotations

from typing import Any

__all__ = ["KERNEL_QDISCS", "child_args"]

#: The queue disciplines the linux backend can put under a link's tbf.
KERNEL_QDISCS = ("pfifo", "bfifo", "red", "codel", "fq_codel", "pie", "fq_pie")


def _us(ns: int) -> str:
    return f"{ns // 1000}us"


def _ecn(q: dict[str, Any]) -> list[str]:
    return ["ecn"] if q["ecn"] else ["noecn"]


def child_args(q: dict[str, Any]) -> list[str]:
    """``tc qdisc add ... parent 1:1 handle H <these>`` for the engine's resolved
    ``QdiscConfig`` ``q`` (:func:`ccbench.spec.qdisc.resolve_qdisc`)."""
    kind = q["kind"]
    if kind == "pfifo":
        return ["pfifo", "limit", str(q["limit_packets"])]
    if kind == "bfifo":
        return ["bfifo", "limit", str(q["limit_bytes"])]
    if kind == "red":
        args = ["red", "limit", str(q["limit_bytes"]), "min", str(q["min_bytes"]), "max", str(q["max_bytes"]),
                "avpkt", str(q["avpkt_bytes"]), "probability", f"{q['probability']:g}",
                "bandwidth", f"{q['bandwidth_bps']}bit"]  # fmt: skip
        if q["burst_pkts"] is not None:  # else tc derives it from min, max and avpkt, as the engine does
            args += ["burst", str(q["burst_pkts"])]
        return args + [flag for flag in ("ecn", "harddrop", "adaptive") if q[flag]]
    ce = ["ce_threshold", _us(q["ce_threshold_ns"])] if q.get("ce_threshold_ns") is not None else []
    if kind == "codel":
        return ["codel", "limit", str(q["limit_packets"]), "target", _us(q["target_ns"]),
                "interval", _us(q["interval_ns"]), *_ecn(q), *ce]  # fmt: skip
    if kind == "fq_codel":
        return ["fq_codel", "limit", str(q["limit_packets"]), "flows", str(q["flows"]),
                "quantum", str(q["quantum_bytes"]), "memory_limit", str(q["memory_limit_bytes"]),
                "target", _us(q["target_ns"]), "interval", _us(q["interval_ns"]), *_ecn(q), *ce]  # fmt: skip
    if kind in ("pie", "fq_pie"):
        args = [kind, "limit", str(q["limit_packets"])]
        if kind == "fq_pie":
            args += ["flows", str(q["flows"]), "quantum", str(q["quantum_bytes"]),
                     "memory_limit", str(q["memory_limit_bytes"]), "ecn_prob", str(q["ecn_prob"])]  # fmt: skip
        args += ["target", _us(q["target_ns"]), "tupdate", _us(q["tupdate_ns"]), "alpha", str(q["alpha"]),
                 "beta", str(q["beta"]), *_ecn(q), "bytemode" if q["bytemode"] else "nobytemode"]  # fmt: skip
        return args + (["dq_rate_estimator"] if q["dq_rate_estimator"] else [])
    raise ValueError(f"qdisc {kind!r} cannot be built by the linux backend")
