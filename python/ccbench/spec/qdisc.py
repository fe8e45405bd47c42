"""Queue disciplines of a link: ``qdisc = "fq_codel"`` (every parameter at its Linux
``tc`` default) or a table ``{kind = "red", min = 0.1, ecn = true}`` overriding some.

Each kind mirrors one engine qdisc (``crates/ccsim/src/qdisc/*.rs``) and ``tc``'s
parameter names; the defaults table is ``docs/qdiscs.md``. The queue limit of every
kind comes from the link's ``buffer`` unless ``limit`` is given. :func:`resolve_qdisc`
turns a spec into the engine's configuration.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Annotated, Any, Literal, Union

from pydantic import BeforeValidator, Discriminator, Field, GetJsonSchemaHandler, Tag
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from ..units import Size
from .fields import Duration, Name, OptDuration, OptName, OptRate, OptSize, Rate, SizeField, _Model

#: ``tc`` defaults (Linux 6.x, iproute2 6.x); docs/qdiscs.md lists them all. The engine
#: has the same defaults (its serde defaults, ``crates/ccsim/src/qdisc/*.rs``);
#: ``tests/test_qdisc_spec.py::test_spec_defaults_are_the_engines_defaults`` checks
#: that every kind resolves to exactly what the engine fills in.
CODEL_TARGET_NS = 5_000_000
CODEL_INTERVAL_NS = 100_000_000
PIE_TARGET_NS = 15_000_000
PIE_TUPDATE_NS = 15_000_000
PIE_ALPHA = 2  # 1/16 units
PIE_BETA = 20
FQ_PIE_ECN_PROB = 10  # percent
RED_AVPKT_BYTES = 1000
RED_PROBABILITY = 0.02
RED_BANDWIDTH_BPS = 10_000_000
FQ_FLOWS = 1024
FQ_MEMORY_LIMIT_BYTES = 32 * 2**20
#: NCF switch defaults (docs/ncf.md: the chapter states none; each is a stated choice,
#: mirrored from ``crates/ccsim/src/qdisc/ncf.rs``).
NCF_ELEPHANT_THRESHOLD_BYTES = 100_000
NCF_IDLE_TIMEOUT_NS = 200_000_000
NCF_FEEDBACK_THRESHOLD_BYTES = 30_000
NCF_FEEDBACK_INTERVAL_NS = 1_000_000
NCF_RATE_TIME_CONSTANT_NS = 10_000_000

#: Inner HTB classes between the root and a leaf (Linux ``TC_HTB_MAXDEPTH`` = 8 levels).
HTB_MAX_INNER_DEPTH = 6

Fraction01 = Annotated[float, Field(gt=0, lt=1)]


class PfifoSpec(_Model):
    """Drop-tail FIFO limited in packets (``tc qdisc ... pfifo limit N``)."""

    kind: Literal["pfifo"]
    limit: OptSize = Field(None, description="queue limit; default: the link's buffer")


class BfifoSpec(_Model):
    """Drop-tail FIFO limited in bytes (``tc qdisc ... bfifo limit B``)."""

    kind: Literal["bfifo"]
    limit: OptSize = Field(None, description="queue limit; default: the link's buffer")


class RedSpec(_Model):
    """RED (``sch_red``); ``min``/``max`` as sizes or as fractions of the limit."""

    kind: Literal["red"]
    limit: OptSize = Field(None, description="hard limit (bytes); default: the link's buffer")
    min: Union[Fraction01, SizeField, None] = Field(None, description="min threshold; tc default max/3")
    max: Union[Fraction01, SizeField, None] = Field(None, description="max threshold; tc default limit/4")
    avpkt: int = Field(RED_AVPKT_BYTES, ge=1, le=65536, description="average packet size (bytes)")
    burst: int | None = Field(None, ge=1, description="burst (packets); tc default (2 min + max) / (3 avpkt)")
    probability: float = Field(RED_PROBABILITY, gt=0, le=1, description="max_P, the probability at max")
    bandwidth: OptRate = Field(None, description="rate that ages the average when idle; tc default 10Mbit")
    ecn: bool = Field(False, description="mark ECN-capable packets instead of dropping")
    harddrop: bool = Field(False, description="drop even ECN-capable packets above max")
    adaptive: bool = Field(False, description="adaptive RED (ARED): tune max_P every 500 ms")


class CodelSpec(_Model):
    """CoDel (RFC 8289, ``sch_codel``)."""

    kind: Literal["codel"]
    limit: OptSize = Field(None, description="queue limit (packets); default: the link's buffer")
    target: Duration = Field(CODEL_TARGET_NS, description="acceptable standing delay; tc default 5ms")
    interval: Duration = Field(CODEL_INTERVAL_NS, description="sliding window; tc default 100ms")
    ecn: bool = Field(False, description="mark ECN-capable packets instead of dropping; tc default off")
    ce_threshold: OptDuration = Field(None, description="CE-mark packets whose sojourn exceeds this")


class FqCodelSpec(_Model):
    """FQ-CoDel (RFC 8290, ``sch_fq_codel``)."""

    kind: Literal["fq_codel"]
    limit: OptSize = Field(None, description="queue limit (packets); default: the link's buffer")
    flows: int = Field(FQ_FLOWS, ge=1, le=65536, description="hash buckets; tc default 1024")
    quantum: int | None = Field(None, ge=64, description="DRR quantum (bytes); default one full packet")
    memory_limit: SizeField = Field(Size.bytes(FQ_MEMORY_LIMIT_BYTES), description="tc default 32MiB")
    target: Duration = Field(CODEL_TARGET_NS, description="tc default 5ms")
    interval: Duration = Field(CODEL_INTERVAL_NS, description="tc default 100ms")
    ecn: bool = Field(True, description="mark ECN-capable packets; tc default ON")
    ce_threshold: OptDuration = Field(None, description="CE-mark packets whose sojourn exceeds this")


class PieSpec(_Model):
    """PIE (RFC 8033, ``sch_pie``)."""

    kind: Literal["pie"]
    limit: OptSize = Field(None, description="queue limit (packets); default: the link's buffer")
    target: Duration = Field(PIE_TARGET_NS, description="target queueing delay; tc default 15ms")
    tupdate: Duration = Field(PIE_TUPDATE_NS, description="probability update interval; tc default 15ms")
    alpha: int = Field(PIE_ALPHA, ge=0, le=32, description="integral gain in 1/16; tc default 2")
    beta: int = Field(PIE_BETA, ge=0, le=32, description="proportional gain in 1/16; tc default 20")
    ecn: bool = Field(False, description="mark ECN-capable packets while the probability <= 10%")
    bytemode: bool = Field(False, description="scale the probability by packet size / MTU")
    dq_rate_estimator: bool = Field(False, description="estimate delay from the drain rate, not timestamps")


class FqPieSpec(_Model):
    """FQ-PIE (``sch_fq_pie``)."""

    kind: Literal["fq_pie"]
    limit: OptSize = Field(None, description="queue limit (packets); default: the link's buffer")
    flows: int = Field(FQ_FLOWS, ge=1, le=65536, description="hash buckets; tc default 1024")
    quantum: int | None = Field(None, ge=64, description="DRR quantum (bytes); default one full packet")
    memory_limit: SizeField = Field(Size.bytes(FQ_MEMORY_LIMIT_BYTES), description="tc default 32MiB")
    target: Duration = Field(PIE_TARGET_NS, description="tc default 15ms")
    tupdate: Duration = Field(PIE_TUPDATE_NS, description="tc default 15ms")
    alpha: int = Field(PIE_ALPHA, ge=0, le=32, description="tc default 2 (1/16)")
    beta: int = Field(PIE_BETA, ge=0, le=32, description="tc default 20 (1/16)")
    ecn: bool = Field(False, description="mark ECN-capable packets while the probability <= ecn_prob")
    ecn_prob: int = Field(FQ_PIE_ECN_PROB, ge=0, le=100, description="percent; tc default 10")
    bytemode: bool = Field(False, description="scale the probability by packet size / MTU")
    dq_rate_estimator: bool = Field(False, description="estimate delay from the drain rate")


class NcfSpec(_Model):
    """NCF's switch (docs/ncf.md): mice and elephants in separate drop-tail queues,
    mice served first; telemetry to elephant senders while the elephant queue is long."""

    kind: Literal["ncf"]
    limit: OptSize = Field(None, description="elephant queue limit (bytes); default: the link's buffer")
    mice_limit: OptSize = Field(None, description="mice queue limit (bytes); default: the same as limit")
    elephant_threshold: SizeField = Field(
        Size.bytes(NCF_ELEPHANT_THRESHOLD_BYTES), description="a flow is an elephant once this much was seen; 100KB"
    )
    idle_timeout: Duration = Field(NCF_IDLE_TIMEOUT_NS, description="a flow idle this long is forgotten; 200ms")
    feedback_threshold: SizeField = Field(
        Size.bytes(NCF_FEEDBACK_THRESHOLD_BYTES), description="telemetry while the elephant queue exceeds this; 30KB"
    )
    feedback_interval: Duration = Field(
        NCF_FEEDBACK_INTERVAL_NS, description="at most one telemetry packet per flow per this interval; 1ms"
    )
    rate_time_constant: Duration = Field(
        NCF_RATE_TIME_CONSTANT_NS,
        description="time constant of the mice queue's measured rate (reported_rate = 'available'); 10ms",
    )
    reported_rate: Literal["link", "available"] = Field(
        "link",
        description="rate the telemetry reports: 'link' (the link speed) or 'available' (minus the measured mice rate)",
    )


def _two_pfifo_bands() -> list[QdiscSpec]:
    return [PfifoSpec(kind="pfifo", limit=None), PfifoSpec(kind="pfifo", limit=None)]


class PrioSpec(_Model):
    """Strict priority (``sch_prio``) over ``bands`` child qdiscs; band 0 first."""

    kind: Literal["prio"]
    bands: list[QdiscSpec] = Field(
        default_factory=lambda: _two_pfifo_bands(),
        description="child qdiscs, highest priority first; default two pfifo",
    )
    classify: Literal["group", "bytes_sent"] = Field("group", description="'group' or 'bytes_sent'")
    band_of: dict[str, int] = Field(
        default_factory=dict, description="classify='group': flow group -> band; unlisted groups: the last band"
    )
    thresholds: list[SizeField] = Field(
        default_factory=list, description="classify='bytes_sent': band i while a flow has sent < thresholds[i]"
    )


class HtbClassSpec(_Model):
    """A class of ``htb`` (``tc class add ... htb``): the flow groups in it, its
    guaranteed ``rate``, the ``ceil`` it may borrow up to, and its queue. A class that
    another names as its ``parent`` is an inner class: no groups, no queue; its
    children borrow from it before anyone borrows from the root."""

    name: OptName = Field(None, description="the class's name, for its children's parent")
    parent: OptName = Field(None, description="name of an earlier class this one is under; default the root")
    groups: list[Name] = Field(
        default_factory=list, description="flow groups in this class; a class with none takes every other flow"
    )
    rate: Rate = Field(description="guaranteed rate, e.g. '20Mbit'")
    ceil: OptRate = Field(None, description="most it may send by borrowing; tc default: rate")
    burst: OptSize = Field(None, description="bucket at rate; tc default rate/hz + 1600B (about 1600 B)")
    cburst: OptSize = Field(None, description="bucket at ceil; tc default ceil/hz + 1600B")
    prio: int = Field(0, ge=0, le=7, description="lower borrows first; tc default 0")
    quantum: int | None = Field(None, ge=1, description="DRR bytes; tc default rate/10 in [1000, 200000]")
    qdisc: QdiscSpec | None = Field(None, description="the class's queue; default pfifo of the link's buffer")


class HtbSpec(_Model):
    """Hierarchical token bucket (``sch_htb``): rate-limited classes of flow groups."""

    kind: Literal["htb"]
    rate: OptRate = Field(None, description="root class rate (what classes borrow from); default the link's rate")
    burst: OptSize = Field(None, description="root bucket; tc default rate/hz + 1600B")
    classes: list[HtbClassSpec] = Field(min_length=1, max_length=64, description="the leaf classes")


def _shorthand(value: object) -> object:
    """``"red"`` means ``{kind = "red"}``."""
    return {"kind": value} if isinstance(value, str) else value


class _ShorthandSchema:
    """In the JSON schema, a qdisc is also its bare kind name (``qdisc = "red"``)."""

    @staticmethod
    def __get_pydantic_json_schema__(core: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return {"anyOf": [{"enum": list(QDISC_KINDS)}, handler(core)]}


def _kind(value: Any) -> str | None:
    if isinstance(value, dict):
        return value.get("kind")
    return getattr(value, "kind", None)


QdiscSpec = Annotated[
    Union[
        Annotated[PfifoSpec, Tag("pfifo")],
        Annotated[BfifoSpec, Tag("bfifo")],
        Annotated[RedSpec, Tag("red")],
        Annotated[CodelSpec, Tag("codel")],
        Annotated[FqCodelSpec, Tag("fq_codel")],
        Annotated[PieSpec, Tag("pie")],
        Annotated[FqPieSpec, Tag("fq_pie")],
        Annotated[PrioSpec, Tag("prio")],
        Annotated[HtbSpec, Tag("htb")],
        Annotated[NcfSpec, Tag("ncf")],
    ],
    Discriminator(_kind),
    BeforeValidator(_shorthand),
    _ShorthandSchema,
]
PrioSpec.model_rebuild()
HtbClassSpec.model_rebuild()
HtbSpec.model_rebuild()

QDISC_KINDS = ("pfifo", "bfifo", "red", "codel", "fq_codel", "pie", "fq_pie", "prio", "htb", "ncf")


class TbfSpec(_Model):
    """A token-bucket shaper (``tc qdisc ... tbf``) in front of the link's qdisc."""

    rate: Rate = Field(description="shaped rate, e.g. '100Mbit'")
    burst: SizeField = Field(description="bucket size, e.g. '32KB' (bytes or packets)")
    peakrate: OptRate = Field(None, description="optional peak rate of the burst")
    mtu: OptSize = Field(None, description="peak bucket size; default one full packet")


def can_mark(q: Any) -> bool:
    """Whether a qdisc spec can CE-mark packets (so ECN-capable flows see marks)."""
    if isinstance(q, (RedSpec, PieSpec, FqPieSpec)):
        return q.ecn
    if isinstance(q, (CodelSpec, FqCodelSpec)):
        return q.ecn or q.ce_threshold is not None
    if isinstance(q, PrioSpec):
        return any(can_mark(b) for b in q.bands)
    if isinstance(q, HtbSpec):
        return any(c.qdisc is not None and can_mark(c.qdisc) for c in q.classes)
    return False


class LimitContext:
    """What a qdisc's limit is resolved against: the link's buffer and the BDP."""

    def __init__(self, buffer: Size, bdp_bytes: Fraction, packet_bytes: int, rate_bps: int = 0):
        self.buffer = buffer
        self.bdp = bdp_bytes
        self.packet_bytes = packet_bytes
        #: The link's (shaped) rate: the default of an htb root.
        self.rate_bps = rate_bps

    def bytes(self, s: Size | None) -> int:
        s = s or self.buffer
        if s.kind == "packets":
            return int(s.value) * self.packet_bytes
        exact = Fraction(s.value) if s.kind == "bytes" else Fraction(s.value) * self.bdp
        return math.ceil(exact)

    def packets(self, s: Size | None) -> int:
        s = s or self.buffer
        if s.kind == "packets":
            return int(s.value)
        return max(1, math.ceil(Fraction(self.bytes(s)) / self.packet_bytes))


def _threshold(value: float | Size | None, limit: int, ctx: LimitContext) -> int | None:
    if value is None:
        return None
    if isinstance(value, float):
        return int(value * limit)
    return ctx.bytes(value)


def resolve_qdisc(q: Any, ctx: LimitContext, group_flows: dict[str, list[int]]) -> dict[str, Any]:
    """The engine's ``QdiscConfig`` for ``q``. ``group_flows`` maps each flow group to
    its flow ids (for ``prio`` with ``classify = "group"``)."""
    mtu = ctx.packet_bytes
    if isinstance(q, PfifoSpec):
        return {"kind": "pfifo", "limit_packets": ctx.packets(q.limit)}
    if isinstance(q, BfifoSpec):
        return {"kind": "bfifo", "limit_bytes": ctx.bytes(q.limit)}
    if isinstance(q, RedSpec):
        limit = ctx.bytes(q.limit)
        qmax = _threshold(q.max, limit, ctx) or limit // 4
        qmin = _threshold(q.min, limit, ctx) or qmax // 3
        return {
            "kind": "red",
            "limit_bytes": limit,
            "min_bytes": qmin,
            "max_bytes": qmax,
            "avpkt_bytes": q.avpkt,
            "burst_pkts": q.burst,
            "probability": q.probability,
            "bandwidth_bps": q.bandwidth or RED_BANDWIDTH_BPS,
            "ecn": q.ecn,
            "harddrop": q.harddrop,
            "adaptive": q.adaptive,
        }
    if isinstance(q, CodelSpec):
        return {
            "kind": "codel",
            "limit_packets": ctx.packets(q.limit),
            "target_ns": q.target,
            "interval_ns": q.interval,
            "ecn": q.ecn,
            "ce_threshold_ns": q.ce_threshold,
            "mtu_bytes": mtu,
        }
    if isinstance(q, FqCodelSpec):
        return {
            "kind": "fq_codel",
            "limit_packets": ctx.packets(q.limit),
            "flows": q.flows,
            "quantum_bytes": q.quantum or mtu,
            "memory_limit_bytes": ctx.bytes(q.memory_limit),
            "target_ns": q.target,
            "interval_ns": q.interval,
            "ecn": q.ecn,
            "ce_threshold_ns": q.ce_threshold,
            "mtu_bytes": mtu,
        }
    if isinstance(q, PieSpec):
        return {
            "kind": "pie",
            "limit_packets": ctx.packets(q.limit),
            "target_ns": q.target,
            "tupdate_ns": q.tupdate,
            "alpha": q.alpha,
            "beta": q.beta,
            "ecn": q.ecn,
            "bytemode": q.bytemode,
            "dq_rate_estimator": q.dq_rate_estimator,
            "mtu_bytes": mtu,
        }
    if isinstance(q, FqPieSpec):
        return {
            "kind": "fq_pie",
            "limit_packets": ctx.packets(q.limit),
            "flows": q.flows,
            "quantum_bytes": q.quantum or mtu,
            "memory_limit_bytes": ctx.bytes(q.memory_limit),
            "target_ns": q.target,
            "tupdate_ns": q.tupdate,
            "alpha": q.alpha,
            "beta": q.beta,
            "ecn": q.ecn,
            "ecn_prob": q.ecn_prob,
            "bytemode": q.bytemode,
            "dq_rate_estimator": q.dq_rate_estimator,
            "mtu_bytes": mtu,
        }
    if isinstance(q, PrioSpec):
        bands = [resolve_qdisc(b, ctx, group_flows) for b in q.bands]
        if q.classify == "bytes_sent":
            classifier: dict[str, Any] = {"by": "bytes_sent", "thresholds_bytes": [ctx.bytes(t) for t in q.thresholds]}
        else:
            n_flows = sum(len(v) for v in group_flows.values())
            band_of_flow = [len(bands) - 1] * n_flows
            for group, band in q.band_of.items():
                for f in group_flows.get(group, []):
                    band_of_flow[f] = band
            classifier = {"by": "flow", "band_of_flow": band_of_flow, "default_band": len(bands) - 1}
        return {"kind": "prio", "bands": bands, "classifier": classifier}
    if isinstance(q, HtbSpec):
        return _resolve_htb(q, ctx, group_flows)
    if isinstance(q, NcfSpec):
        limit = ctx.bytes(q.limit)
        mice = ctx.bytes(q.mice_limit) if q.mice_limit is not None else limit
        return {
            "kind": "ncf",
            "mice": {"kind": "bfifo", "limit_bytes": mice},
            "elephants": {"kind": "bfifo", "limit_bytes": limit},
            "elephant_threshold_bytes": ctx.bytes(q.elephant_threshold),
            "idle_timeout_ns": q.idle_timeout,
            "feedback_threshold_bytes": ctx.bytes(q.feedback_threshold),
            "feedback_interval_ns": q.feedback_interval,
            "rate_time_constant_ns": q.rate_time_constant,
            "reported_rate": q.reported_rate,
        }
    raise AssertionError(f"unknown qdisc spec {q!r}")


def _htb_inner(q: HtbSpec) -> set[str]:
    """Names of the inner classes: those some class names as its parent."""
    return {c.parent for c in q.classes if c.parent is not None}


def _htb_default_class(q: HtbSpec) -> int:
    """The class of flows no class names: the first leaf without groups, else the last leaf."""
    inner = _htb_inner(q)
    leaves = [i for i, c in enumerate(q.classes) if c.name is None or c.name not in inner]
    return next((i for i in leaves if not q.classes[i].groups), leaves[-1] if leaves else 0)


def _resolve_htb(q: HtbSpec, ctx: LimitContext, group_flows: dict[str, list[int]]) -> dict[str, Any]:
    default = _htb_default_class(q)
    inner = _htb_inner(q)
    index = {c.name: i for i, c in enumerate(q.classes) if c.name is not None}
    class_of_flow = [default] * sum(len(v) for v in group_flows.values())
    for i, c in enumerate(q.classes):
        for g in c.groups:
            for f in group_flows.get(g, []):
                class_of_flow[f] = i
    classes = [
        {
            "rate_bps": c.rate,
            "ceil_bps": c.ceil,
            "burst_bytes": ctx.bytes(c.burst) if c.burst is not None else None,
            "cburst_bytes": ctx.bytes(c.cburst) if c.cburst is not None else None,
            "prio": c.prio,
            "quantum_bytes": c.quantum,
            "parent": index[c.parent] if c.parent is not None else None,
            "child": None
            if c.name is not None and c.name in inner
            else resolve_qdisc(c.qdisc or PfifoSpec(kind="pfifo", limit=None), ctx, group_flows),
        }
        for c in q.classes
    ]
    return {
        "kind": "htb",
        "rate_bps": q.rate if q.rate is not None else ctx.rate_bps,
        "burst_bytes": ctx.bytes(q.burst) if q.burst is not None else None,
        "classes": classes,
        "classifier": {"by": "flow", "band_of_flow": class_of_flow, "default_band": default},
    }


def resolve_shaper(tbf: TbfSpec, child: dict[str, Any], ctx: LimitContext) -> dict[str, Any]:
    """A tbf in front of ``child`` (the engine's ``QdiscConfig`` of kind ``tbf``)."""
    return {
        "kind": "tbf",
        "rate_bps": tbf.rate,
        "burst_bytes": ctx.bytes(tbf.burst),
        "limit_bytes": None,
        "child": child,
        "peakrate_bps": tbf.peakrate,
        "mtu_bytes": ctx.bytes(tbf.mtu) if tbf.mtu is not None else ctx.packet_bytes,
    }


def qdisc_issues(q: Any, path: str, ctx: LimitContext | None, groups: list[str]) -> list[tuple[str, str]]:
    """Cross-field checks of a qdisc spec (each message names the field)."""
    issues: list[tuple[str, str]] = []
    if isinstance(q, RedSpec) and ctx is not None:
        limit = ctx.bytes(q.limit)
        qmax = _threshold(q.max, limit, ctx) or limit // 4
        qmin = _threshold(q.min, limit, ctx) or qmax // 3
        if not (0 < qmin < qmax <= limit):
            issues.append(
                (f"{path}.min", f"RED needs 0 < min < max <= limit; got min {qmin} B, max {qmax} B, limit {limit} B")
            )
        burst = q.burst if q.burst is not None else (2 * qmin + qmax) // (3 * q.avpkt)
        if burst + 1 - qmin / q.avpkt < 1:
            issues.append(
                (
                    f"{path}.burst",
                    f"{burst} is too small for min {qmin} B and avpkt {q.avpkt} B; try {1 + qmin // q.avpkt}",
                )
            )
    if isinstance(q, NcfSpec):
        for name in ("idle_timeout", "feedback_interval", "rate_time_constant"):
            if getattr(q, name) <= 0:
                issues.append((f"{path}.{name}", "must be > 0"))
        if ctx is not None and ctx.bytes(q.elephant_threshold) <= 0:
            issues.append((f"{path}.elephant_threshold", "must be > 0"))
    if isinstance(q, PrioSpec):
        n = len(q.bands)
        if not 1 <= n <= 16:
            issues.append((f"{path}.bands", f"{n} bands is not allowed: give 1 to 16"))
        if q.classify == "bytes_sent" and len(q.thresholds) + 1 != n:
            issues.append(
                (f"{path}.thresholds", f"{len(q.thresholds)} thresholds need {len(q.thresholds) + 1} bands, not {n}")
            )
        for g, b in q.band_of.items():
            if g not in groups:
                issues.append((f"{path}.band_of", f"{g!r} is not a flow group (groups: {', '.join(groups)})"))
            if not 0 <= b < n:
                issues.append((f"{path}.band_of.{g}", f"band {b} does not exist (bands 0..{n - 1})"))
        for i, band in enumerate(q.bands):
            issues.extend(qdisc_issues(band, f"{path}.bands[{i}]", ctx, groups))
    if isinstance(q, HtbSpec):
        issues.extend(_htb_issues(q, path, ctx, groups))
    return issues


def _htb_issues(q: HtbSpec, path: str, ctx: LimitContext | None, groups: list[str]) -> list[tuple[str, str]]:
    issues: list[tuple[str, str]] = []
    if q.rate == 0:
        issues.append((f"{path}.rate", "'0bit' is not allowed: the rate must be > 0"))
    seen: dict[str, int] = {}
    inner = _htb_inner(q)
    named: dict[str, int] = {}
    for i, c in enumerate(q.classes):
        p = f"{path}.classes[{i}]"
        if c.name is not None:
            if c.name in named:
                issues.append((f"{p}.name", f"{c.name!r} is already the name of {path}.classes[{named[c.name]}]"))
            named.setdefault(c.name, i)
        if c.parent is not None and c.parent not in named:
            later = any(k.name == c.parent for k in q.classes[i:])
            issues.append(
                (
                    f"{p}.parent",
                    f"{c.parent!r} must be the name of an earlier class"
                    + (" (list a parent before its children)" if later else ""),
                )
            )
        depth, up = 0, c.parent
        while up is not None and up in named and depth <= HTB_MAX_INNER_DEPTH:
            depth, up = depth + 1, q.classes[named[up]].parent
        if depth > HTB_MAX_INNER_DEPTH - (0 if c.name is None or c.name not in inner else 1):
            issues.append((f"{p}.parent", f"inner classes nest at most {HTB_MAX_INNER_DEPTH} deep (Linux's 8 levels)"))
        if c.name is not None and c.name in inner and (c.groups or c.qdisc is not None):
            issues.append((f"{p}", f"{c.name!r} is an inner class (a parent): it takes no groups and no qdisc"))
        if c.rate == 0:
            issues.append((f"{p}.rate", "'0bit' is not allowed: the rate must be > 0"))
        if c.ceil is not None and c.ceil < c.rate:
            issues.append((f"{p}.ceil", f"must be at least {p}.rate"))
        for field in ("burst", "cburst"):
            size = getattr(c, field)
            if size is not None and (size.kind == "bdp" or size.value == 0):
                issues.append((f"{p}.{field}", f"{str(size)!r} is not allowed: give bytes or packets > 0"))
        for g in c.groups:
            if g not in groups:
                issues.append((f"{p}.groups", f"{g!r} is not a flow group (groups: {', '.join(groups)})"))
            elif g in seen:
                issues.append((f"{p}.groups", f"{g!r} is already in {path}.classes[{seen[g]}]"))
            seen.setdefault(g, i)
        if c.qdisc is not None:
            issues.extend(qdisc_issues(c.qdisc, f"{p}.qdisc", ctx, groups))
    return issues
