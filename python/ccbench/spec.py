"""The experiment spec: typed models of the user's TOML file, and its resolution into
the engine configuration (``crates/ccsim/src/config.rs``).

A spec has four parts (every field, unit and default is listed in ``docs/spec.md``)::

    [experiment]      name, seed, duration, warmup, sample_interval
    [bottleneck]      rate, delay, buffer, bdp_rtt, qdisc, loss, rate_schedule
    [[senders]]       name, rtt, access_rate, access_queue
    [[flows]]         name, sender, cca, params, count, start, stop, start_jitter, size,
                      mss, rwnd, initial_cwnd, delayed_ack, pacing, ecn, min_rto

Loading never raises anything but :class:`SpecError` for a bad spec; its message names
every offending field by path (``flows[0].cca``), the bad value and what is allowed.
Unknown keys are rejected. :meth:`Experiment.resolve` turns a valid spec into the
engine's JSON-ready dict: integers in ns, bit/s and bytes, every flow listed.
"""

from __future__ import annotations

import json
import math
import re
import sys
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Annotated, Any, Literal, Union

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from . import engine
from .engine import HEADER_BYTES, CcaCatalog
from .units import (
    NS_PER_SEC,
    Size,
    format_duration,
    format_rate,
    parse_duration,
    parse_rate,
    parse_size,
)

__all__ = [
    "BottleneckSpec",
    "Experiment",
    "ExperimentSection",
    "FlowSpec",
    "RateChange",
    "ResolvedBuffer",
    "SenderSpec",
    "SpecError",
    "load_spec",
]

#: Largest integer any quantity may resolve to (the engine stores u64 and, for
#: "none" sentinels in tables, i64).
_MAX_INT = 2**62
#: Default sampling interval of ``flow_ts`` and ``queue_ts``.
DEFAULT_SAMPLE_INTERVAL_NS = 100_000_000
#: Linux's minimum RTO (``TCP_RTO_MIN``).
DEFAULT_MIN_RTO_NS = 200_000_000
#: Floor of the default receive window; see :meth:`Experiment.resolve`.
DEFAULT_RWND_FLOOR_BYTES = 64 * 2**20
#: Access links default to this multiple of the (highest) bottleneck rate.
ACCESS_RATE_FACTOR = 10
#: Floor of the default access queue (Linux's default ``txqueuelen``).
ACCESS_QUEUE_FLOOR_PACKETS = 1000
MAX_FLOWS = 1_000_000


class SpecError(ValueError):
    """A spec is invalid. ``issues`` lists (field path, message) pairs; ``str()`` is a
    readable paragraph naming each field, the bad value and what is allowed."""

    def __init__(self, issues: list[tuple[str, str]], source: str | None = None):
        self.issues = issues
        self.source = source
        super().__init__(self._text())

    def _text(self) -> str:
        where = f"{self.source}: " if self.source else ""
        lines = [f"{path}: {msg}" if path else msg for path, msg in self.issues]
        if len(lines) == 1:
            return f"{where}invalid spec: {lines[0]}"
        return f"{where}invalid spec ({len(lines)} problems):\n" + "\n".join(f"  {line}" for line in lines)


# --------------------------------------------------------------------------- units as fields


def _bounded(parse: Callable[[object], int], what: str) -> Callable[[object], int]:
    def validate(value: object) -> int:
        n = parse(value)
        if n >= _MAX_INT:
            raise ValueError(f"{value!r} is too large for a {what}")
        return n

    return validate


def _optional(fn: Callable[[object], Any]) -> Callable[[object], Any]:
    return lambda v: None if v is None else fn(v)


def _opt_ser(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda v: None if v is None else fn(v)


def _size(value: object) -> Size:
    s = parse_size(value)
    if s.kind != "bdp" and s.value >= _MAX_INT:
        raise ValueError(f"{value!r} is too large for a size")
    if s.kind == "bdp" and s.value > 10**6:
        raise ValueError(f"{value!r} is too large a BDP multiple (at most 1e6)")
    return s


def _loss(value: object) -> float:
    """A loss probability: a number in [0, 1) or a percentage text like ``"0.1%"``."""
    forms = "a probability in [0, 1) such as 0.001, or a percentage such as '0.1%'"
    p: float
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a loss probability; expected {forms}")
    if isinstance(value, (int, float)):
        p = float(value)
    elif isinstance(value, str) and value.strip().endswith("%"):
        try:
            p = float(value.strip()[:-1]) / 100
        except ValueError:
            raise ValueError(f"{value!r} is not a loss probability; expected {forms}") from None
    else:
        raise ValueError(f"{value!r} is not a loss probability; expected {forms}")
    if not (math.isfinite(p) and 0.0 <= p < 1.0):
        raise ValueError(f"{value!r} is not a loss probability in [0, 1); expected {forms}")
    return p


_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.+-]{0,63}$")


def _name(value: object) -> str:
    if not isinstance(value, str) or not _NAME.match(value):
        raise ValueError(
            f"{value!r} is not a valid name: use 1-64 letters, digits, '_', '-', '.', '+', starting with a letter"
        )
    return value


def _bdp_rtt(value: object) -> str | int:
    """``"min"``, ``"max"``, a sender name, or a duration (ns)."""
    forms = "'min', 'max', a sender name, or a duration such as '100ms'"
    if isinstance(value, str) and value in ("min", "max"):
        return value
    if isinstance(value, str) and _NAME.match(value):
        return value  # a sender name; checked against the senders later
    try:
        ns = _bounded(parse_duration, "duration")(value)
    except ValueError:
        raise ValueError(f"{value!r} is not a valid bdp_rtt; expected {forms}") from None
    if ns == 0:
        raise ValueError(f"{value!r} is not a valid bdp_rtt: the RTT must be > 0")
    return ns


Rate = Annotated[int, PlainValidator(_bounded(parse_rate, "rate")), PlainSerializer(format_rate, return_type=str)]
Duration = Annotated[
    int, PlainValidator(_bounded(parse_duration, "duration")), PlainSerializer(format_duration, return_type=str)
]
OptRate = Annotated[
    Union[int, None],
    PlainValidator(_optional(_bounded(parse_rate, "rate"))),
    PlainSerializer(_opt_ser(format_rate)),
]
OptDuration = Annotated[
    Union[int, None],
    PlainValidator(_optional(_bounded(parse_duration, "duration"))),
    PlainSerializer(_opt_ser(format_duration)),
]
SizeField = Annotated[Size, PlainValidator(_size), PlainSerializer(str, return_type=str)]
OptSize = Annotated[Union[Size, None], PlainValidator(_optional(_size)), PlainSerializer(_opt_ser(str))]
Loss = Annotated[float, PlainValidator(_loss)]
Name = Annotated[str, PlainValidator(_name)]
OptName = Annotated[Union[str, None], PlainValidator(_optional(_name))]
BdpRtt = Annotated[
    Union[str, int],
    PlainValidator(_bdp_rtt),
    PlainSerializer(lambda v: format_duration(v) if isinstance(v, int) else v),
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


# --------------------------------------------------------------------------- the sections


class ExperimentSection(_Model):
    """``[experiment]``: what is run, for how long, and what is recorded."""

    name: Name = Field(description="experiment name, e.g. 'quickstart'")
    description: str = Field("", description="free text")
    seed: int = Field(1, ge=0, lt=2**64, description="experiment seed, an integer in [0, 2^64)")
    duration: Duration = Field(description="simulated duration, e.g. '30s'")
    warmup: Duration = Field(0, description="start of the measurement window, e.g. '5s'")
    sample_interval: Duration = Field(
        DEFAULT_SAMPLE_INTERVAL_NS, description="interval of flow_ts/queue_ts samples, e.g. '100ms'; 0 disables"
    )


class RateChange(_Model):
    """One entry of ``bottleneck.rate_schedule``: from time ``at`` the rate is ``rate``."""

    at: Duration = Field(description="time of the change, e.g. '20s'")
    rate: Rate = Field(description="new rate, e.g. '50Mbit'")


class BottleneckSpec(_Model):
    """``[bottleneck]``: the shared link from router A to router B."""

    rate: Rate = Field(description="bottleneck rate, e.g. '100Mbit'")
    delay: Duration = Field(0, description="one-way propagation delay of the bottleneck link, e.g. '5ms'")
    buffer: SizeField = Field(
        Size.bdp(1), description="queue limit: bytes ('1250KB'), packets ('900pkt') or BDP multiples ('2BDP')"
    )
    bdp_rtt: BdpRtt = Field("min", description="RTT of the BDP: 'min', 'max', a sender name or a duration")
    qdisc: Literal["pfifo", "bfifo"] | None = Field(None, description="'pfifo' (packets) or 'bfifo' (bytes)")
    loss: Loss = Field(0.0, description="random loss probability on the bottleneck, e.g. 0.001 or '0.1%'")
    rate_schedule: list[RateChange] = Field(
        default_factory=list, description="rate changes [{at='20s', rate='50Mbit'}]"
    )


class SenderSpec(_Model):
    """``[[senders]]``: a sending host, its path RTT and its access link."""

    name: Name = Field(description="sender name, e.g. 'left'")
    rtt: Duration = Field(description="base (propagation) round-trip time of this sender's path, e.g. '100ms'")
    access_rate: OptRate = Field(None, description="access link rate; default 10 x the bottleneck rate")
    access_queue: OptSize = Field(None, description="access link queue limit (packets or bytes)")


class FlowSpec(_Model):
    """``[[flows]]``: one or more identical TCP flows (``count``) from one sender."""

    name: OptName = Field(None, description="group label of these flows in the result tables; default: the CCA name")
    sender: OptName = Field(None, description="name of the sending host; may be omitted when there is one sender")
    cca: str = Field(description="congestion control algorithm, e.g. 'cubic'")
    params: dict[str, Any] = Field(default_factory=dict, description="CCA parameter overrides")
    count: int = Field(1, ge=1, le=MAX_FLOWS, description="number of identical flows")
    start: Duration = Field(0, description="start time, e.g. '15s'")
    stop: OptDuration = Field(None, description="stop time (bulk flows stop sending); default: run to the end")
    start_jitter: Duration = Field(
        1_000_000, description="each flow's start is delayed by a seeded uniform draw in [0, start_jitter)"
    )
    size: OptSize = Field(None, description="bytes to transfer ('10MB', '100pkt' = 100 x mss); default: bulk")
    mss: int = Field(1448, ge=64, le=65000, description="payload bytes per segment")
    rwnd: OptSize = Field(None, description="receive window (bytes or packets); default: large enough never to limit")
    initial_cwnd: int = Field(10, ge=1, le=1_000_000, description="initial congestion window (packets)")
    delayed_ack: bool = Field(True, description="receiver delays ACKs (Linux-like)")
    pacing: bool = Field(False, description="pace a classic CCA (model-based CCAs always pace)")
    ecn: bool = Field(False, description="negotiate ECN")
    min_rto: Duration = Field(DEFAULT_MIN_RTO_NS, description="minimum retransmission timeout (Linux: 200ms)")

    @field_validator("cca")
    @classmethod
    def _known_cca(cls, v: str, info: ValidationInfo) -> str:
        cat: CcaCatalog | None = (info.context or {}).get("ccas")
        if cat is not None and cat.get(v) is None:
            raise ValueError(f"{v!r} is not a known CCA; known: {', '.join(cat.names())}")
        if not v:
            raise ValueError("'' is not a CCA name")
        return v

    @field_validator("params")
    @classmethod
    def _cca_params(cls, v: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        try:
            json.dumps(v, allow_nan=False)
        except (TypeError, ValueError):
            raise ValueError(
                f"{v!r} is not valid: CCA parameters must be plain numbers, strings, booleans, arrays or tables"
            ) from None
        cat: CcaCatalog | None = (info.context or {}).get("ccas")
        cca = info.data.get("cca")
        if cat is not None and cca is not None:
            try:
                cat.check(cca, v)
            except ValueError as e:
                raise ValueError(f"{v!r} is not valid for CCA {cca!r}: {e}") from None
        return v


@dataclass(frozen=True)
class ResolvedBuffer:
    """The bottleneck buffer as resolved: every form of the limit, for the manifest."""

    qdisc: str
    bdp_rtt_ns: int
    bdp_bytes: int
    packet_bytes: int
    bytes: int
    packets: int


# --------------------------------------------------------------------------- the experiment


class Experiment(_Model):
    """A complete, validated experiment spec. Build it with :meth:`from_dict`,
    :meth:`from_toml` or :func:`load_spec` (which report problems as :class:`SpecError`)."""

    experiment: ExperimentSection = Field(description="the [experiment] table: name, duration, ...")
    bottleneck: BottleneckSpec = Field(description="the [bottleneck] table: rate, buffer, ...")
    senders: list[SenderSpec] = Field(min_length=1, description="at least one [[senders]] table")
    flows: list[FlowSpec] = Field(min_length=1, description="at least one [[flows]] table")

    @model_validator(mode="after")
    def _cross_check(self) -> Experiment:
        issues = _cross_issues(self)
        if issues:
            raise PydanticCustomError(
                "spec_cross", "{summary}", {"summary": "; ".join(f"{p}: {m}" for p, m in issues), "issues": issues}
            )
        return self

    # ---- loading

    @classmethod
    def from_dict(
        cls,
        data: Mapping[str, Any],
        *,
        ccas: CcaCatalog | None | Literal["engine"] = "engine",
        source: str | None = None,
    ) -> Experiment:
        """Validate a spec given as a dict. ``ccas`` is the catalog that CCA names and
        parameters are checked against: by default the engine's (no check when the
        engine is not built), or an explicit :class:`CcaCatalog`, or ``None``."""
        catalog = engine.catalog() if ccas == "engine" else ccas
        if not isinstance(data, Mapping):
            raise SpecError([("", f"a spec must be a table of sections, not {type(data).__name__}")], source)
        try:
            return cls.model_validate(dict(data), context={"ccas": catalog})
        except ValidationError as e:
            raise SpecError(_issues(e), source) from None

    @classmethod
    def from_toml(
        cls, text: str, *, ccas: CcaCatalog | None | Literal["engine"] = "engine", source: str | None = None
    ) -> Experiment:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise SpecError([("", f"not valid TOML: {e}")], source) from None
        return cls.from_dict(data, ccas=ccas, source=source)

    def to_dict(self) -> dict[str, Any]:
        """The spec as plain data with every default filled in and units in canonical
        text (``"100Mbit"``); :meth:`from_dict` reads it back to an equal spec."""
        return self.model_dump(mode="json", exclude_none=True)

    def with_seed(self, seed: int) -> Experiment:
        if not (isinstance(seed, int) and 0 <= seed < 2**64):
            raise SpecError([("experiment.seed", f"{seed!r} is not valid: the seed must be an integer in [0, 2^64)")])
        return self.model_copy(update={"experiment": self.experiment.model_copy(update={"seed": seed})})

    # ---- resolution

    def sender_index(self, flow: FlowSpec) -> int:
        if flow.sender is None:
            return 0
        return next(i for i, s in enumerate(self.senders) if s.name == flow.sender)

    def max_bottleneck_rate(self) -> int:
        return max([self.bottleneck.rate, *(c.rate for c in self.bottleneck.rate_schedule)])

    def packet_bytes(self) -> int:
        """Bytes on the wire of a full-sized segment of the largest MSS in the spec."""
        return max(f.mss for f in self.flows) + HEADER_BYTES

    def bdp_rtt_ns(self) -> int:
        b = self.bottleneck.bdp_rtt
        rtts = [s.rtt for s in self.senders]
        if b == "min":
            return min(rtts)
        if b == "max":
            return max(rtts)
        if isinstance(b, int):
            return b
        return next(s.rtt for s in self.senders if s.name == b)

    def buffer(self) -> ResolvedBuffer:
        """Resolve the bottleneck buffer. BDP = rate × bdp_rtt / 8 bytes (exact), with the
        initial bottleneck rate. A limit in packets is ⌈bytes / packet_bytes⌉, a limit in
        bytes from packets is packets × packet_bytes, and k×BDP is ⌈k × BDP⌉ bytes."""
        rtt = self.bdp_rtt_ns()
        bdp = Fraction(self.bottleneck.rate * rtt, 8 * NS_PER_SEC)
        pkt = self.packet_bytes()
        buf = self.bottleneck.buffer
        if buf.kind == "packets":
            packets = int(buf.value)
            nbytes = packets * pkt
        else:
            exact = Fraction(buf.value) if buf.kind == "bytes" else Fraction(buf.value) * bdp
            nbytes = math.ceil(exact)
            packets = max(1, math.ceil(exact / pkt))
        qdisc = self.bottleneck.qdisc or ("pfifo" if buf.kind == "packets" else "bfifo")
        return ResolvedBuffer(qdisc, rtt, math.ceil(bdp), pkt, nbytes, packets)

    def _rwnd_bytes(self, flow: FlowSpec, buffer_bytes: int) -> int:
        if flow.rwnd is None:
            rtt = self.senders[self.sender_index(flow)].rtt
            path_bdp = math.ceil(Fraction(self.max_bottleneck_rate() * rtt, 8 * NS_PER_SEC))
            return max(DEFAULT_RWND_FLOOR_BYTES, 2 * (path_bdp + buffer_bytes))
        if flow.rwnd.kind == "packets":
            return int(flow.rwnd.value) * flow.mss
        return int(flow.rwnd.value)

    def resolve(self) -> dict[str, Any]:
        """The engine configuration (``crates/ccsim/src/config.rs``) as a JSON-ready dict.

        Flows are listed in spec order, each ``[[flows]]`` entry expanded to ``count``
        consecutive flows; a flow's index in the list is its ``flow_id``.
        """
        buf = self.buffer()
        qdisc: dict[str, Any] = (
            {"kind": "pfifo", "limit_packets": buf.packets}
            if buf.qdisc == "pfifo"
            else {"kind": "bfifo", "limit_bytes": buf.bytes}
        )
        b = self.bottleneck
        flows: list[dict[str, Any]] = []
        in_flight_cap: dict[int, int] = {}  # sender index -> packets its flows can have in flight
        for f in self.flows:
            sender = self.sender_index(f)
            rwnd = self._rwnd_bytes(f, buf.bytes)
            in_flight_cap[sender] = in_flight_cap.get(sender, 0) + f.count * (math.ceil(rwnd / f.mss) + 1)
            size: int | None = None
            if f.size is not None:
                size = int(f.size.value) * (f.mss if f.size.kind == "packets" else 1)
            flow = {
                "sender": sender,
                "group": f.name or f.cca,
                "cca": f.cca,
                "cca_params": dict(f.params),
                "start_ns": f.start,
                "start_jitter_ns": f.start_jitter,
                "stop_ns": f.stop,
                "size_bytes": size,
                "mss": f.mss,
                "rwnd_bytes": rwnd,
                "initial_cwnd": f.initial_cwnd,
                "delayed_ack": f.delayed_ack,
                "pacing": f.pacing,
                "ecn": f.ecn,
                "min_rto_ns": f.min_rto,
            }
            flows.extend(dict(flow) for _ in range(f.count))
        senders = []
        for i, s in enumerate(self.senders):
            if s.access_queue is None:
                queue = max(ACCESS_QUEUE_FLOOR_PACKETS, in_flight_cap.get(i, 0))
            elif s.access_queue.kind == "packets":
                queue = int(s.access_queue.value)
            else:
                queue = max(1, math.ceil(Fraction(s.access_queue.value) / self.packet_bytes()))
            senders.append(
                {
                    "name": s.name,
                    "rtt_ns": s.rtt,
                    "access_rate_bps": s.access_rate
                    if s.access_rate is not None
                    else ACCESS_RATE_FACTOR * self.max_bottleneck_rate(),
                    "access_queue_packets": queue,
                }
            )
        e = self.experiment
        return {
            "seed": e.seed,
            "duration_ns": e.duration,
            "warmup_ns": e.warmup,
            "sample_interval_ns": e.sample_interval,
            "topology": {
                "kind": "dumbbell",
                "bottleneck": {
                    "rate_bps": b.rate,
                    "delay_ns": b.delay,
                    "qdisc": qdisc,
                    "loss": b.loss,
                    "rate_schedule": [[c.at, c.rate] for c in b.rate_schedule],
                },
                "reverse_bottleneck": None,
                "senders": senders,
            },
            "flows": flows,
        }

    def derived(self) -> dict[str, Any]:
        """Quantities computed from the spec that the manifest records (resolved buffer)."""
        buf = self.buffer()
        return {
            "buffer": {
                "qdisc": buf.qdisc,
                "bytes": buf.bytes,
                "packets": buf.packets,
                "bdp_bytes": buf.bdp_bytes,
                "bdp_rtt_ns": buf.bdp_rtt_ns,
                "packet_bytes": buf.packet_bytes,
            },
            "num_flows": sum(f.count for f in self.flows),
        }


def load_spec(
    spec: str | Path | Mapping[str, Any] | Experiment, *, ccas: CcaCatalog | None | Literal["engine"] = "engine"
) -> Experiment:
    """Load a spec from a TOML (or JSON) file, a dict, or pass an :class:`Experiment`
    through. Raises :class:`SpecError` for an invalid spec and ``OSError`` when the file
    cannot be read."""
    if isinstance(spec, Experiment):
        return spec
    if isinstance(spec, Mapping):
        return Experiment.from_dict(spec, ccas=ccas)
    path = Path(spec)
    text = path.read_bytes().decode("utf-8", errors="replace")
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise SpecError([("", f"not valid JSON: {e}")], str(path)) from None
        return Experiment.from_dict(data, ccas=ccas, source=str(path))
    return Experiment.from_toml(text, ccas=ccas, source=str(path))


# --------------------------------------------------------------------------- cross-field checks


def _cross_issues(x: Experiment) -> list[tuple[str, str]]:
    """Checks that involve more than one field; each message names all of them."""
    issues: list[tuple[str, str]] = []
    e, b = x.experiment, x.bottleneck
    if e.duration == 0:
        issues.append(("experiment.duration", "'0s' is not allowed: the duration must be > 0"))
    if e.warmup >= e.duration > 0:
        issues.append(
            (
                "experiment.warmup",
                f"{format_duration(e.warmup)!r} is not allowed: it must be below experiment.duration ({format_duration(e.duration)})",
            )
        )
    if b.rate == 0:
        issues.append(("bottleneck.rate", "'0bit' is not allowed: the rate must be > 0"))
    if b.buffer.value == 0:
        issues.append(("bottleneck.buffer", f"{str(b.buffer)!r} is not allowed: the buffer must be > 0"))
    prev = -1
    for i, c in enumerate(b.rate_schedule):
        path = f"bottleneck.rate_schedule[{i}]"
        if c.rate == 0:
            issues.append((f"{path}.rate", "'0bit' is not allowed: the rate must be > 0"))
        if c.at <= prev:
            issues.append((f"{path}.at", f"{format_duration(c.at)!r} is not allowed: times must strictly increase"))
        if c.at >= e.duration:
            issues.append(
                (
                    f"{path}.at",
                    f"{format_duration(c.at)!r} is not allowed: it must be below experiment.duration ({format_duration(e.duration)})",
                )
            )
        prev = c.at
    names: list[str] = []
    for i, s in enumerate(x.senders):
        path = f"senders[{i}]"
        if s.name in names:
            issues.append((f"{path}.name", f"{s.name!r} is not allowed: sender names must be unique"))
        if s.name in ("min", "max"):
            issues.append((f"{path}.name", f"{s.name!r} is reserved (bottleneck.bdp_rtt uses it); choose another name"))
        names.append(s.name)
        if s.rtt == 0 or s.rtt < 2 * b.delay:
            issues.append(
                (
                    f"{path}.rtt",
                    f"{format_duration(s.rtt)!r} is not allowed: it must be > 0 and at least twice bottleneck.delay ({format_duration(b.delay)})",
                )
            )
        if s.access_rate == 0:
            issues.append((f"{path}.access_rate", "'0bit' is not allowed: the rate must be > 0"))
        if s.access_queue is not None:
            if s.access_queue.kind == "bdp":
                issues.append(
                    (
                        f"{path}.access_queue",
                        f"{str(s.access_queue)!r} is not allowed: give packets ('1000pkt') or bytes ('1MB')",
                    )
                )
            elif s.access_queue.value == 0:
                issues.append(
                    (f"{path}.access_queue", f"{str(s.access_queue)!r} is not allowed: the queue must be > 0")
                )
    if isinstance(b.bdp_rtt, str) and b.bdp_rtt not in ("min", "max") and b.bdp_rtt not in names:
        issues.append(
            (
                "bottleneck.bdp_rtt",
                f"{b.bdp_rtt!r} is not 'min', 'max', a duration or a sender name (senders[*].name: {', '.join(names)})",
            )
        )
    total = 0
    for i, f in enumerate(x.flows):
        path = f"flows[{i}]"
        total += f.count
        if f.sender is None and len(names) > 1:
            issues.append(
                (f"{path}.sender", f"is required when there are several senders (senders[*].name: {', '.join(names)})")
            )
        elif f.sender is not None and f.sender not in names:
            issues.append(
                (f"{path}.sender", f"{f.sender!r} is not a sender name (senders[*].name: {', '.join(names)})")
            )
        if f.start >= e.duration > 0:
            issues.append(
                (
                    f"{path}.start",
                    f"{format_duration(f.start)!r} is not allowed: it must be below experiment.duration ({format_duration(e.duration)})",
                )
            )
        if f.stop is not None and f.stop <= f.start:
            issues.append(
                (
                    f"{path}.stop",
                    f"{format_duration(f.stop)!r} is not allowed: it must be after flows[{i}].start ({format_duration(f.start)})",
                )
            )
        if f.size is not None:
            if f.size.kind == "bdp":
                issues.append(
                    (f"{path}.size", f"{str(f.size)!r} is not allowed: give bytes ('10MB') or packets ('100pkt')")
                )
            elif f.size.value == 0:
                issues.append(
                    (f"{path}.size", f"{str(f.size)!r} is not allowed: the size must be > 0 (omit it for a bulk flow)")
                )
        if f.rwnd is not None:
            if f.rwnd.kind == "bdp":
                issues.append(
                    (f"{path}.rwnd", f"{str(f.rwnd)!r} is not allowed: give bytes ('64MiB') or packets ('1000pkt')")
                )
            elif (f.rwnd.value * (f.mss if f.rwnd.kind == "packets" else 1)) < f.mss:
                issues.append(
                    (
                        f"{path}.rwnd",
                        f"{str(f.rwnd)!r} is not allowed: it must be at least flows[{i}].mss ({f.mss} bytes)",
                    )
                )
    if total > MAX_FLOWS:
        issues.append(("flows", f"{total} flows in total is too many (at most {MAX_FLOWS})"))
    return issues


# --------------------------------------------------------------------------- error messages


def _path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _unwrap(tp: Any) -> Any:
    """Strip Annotated/Optional to the model or list type inside."""
    while True:
        origin = typing.get_origin(tp)
        if origin is Annotated:
            tp = typing.get_args(tp)[0]
        elif origin in (Union, types.UnionType):
            args = [a for a in typing.get_args(tp) if a is not type(None)]
            tp = args[0] if len(args) == 1 else tp
            if len(args) != 1:
                return tp
        else:
            return tp


def _model_at(loc: tuple[int | str, ...]) -> Any:
    tp: Any = Experiment
    for part in loc:
        tp = _unwrap(tp)
        if isinstance(part, int):
            args = typing.get_args(tp)
            if typing.get_origin(tp) is not list or not args:
                return None
            tp = args[0]
        elif isinstance(tp, type) and issubclass(tp, BaseModel) and part in tp.model_fields:
            tp = tp.model_fields[part].annotation
        else:
            return None
    tp = _unwrap(tp)
    return tp if isinstance(tp, type) and issubclass(tp, BaseModel) else None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


_ARRAY_OF_TABLES = {"senders", "flows", "rate_schedule"}


def _issues(err: ValidationError) -> list[tuple[str, str]]:
    issues: list[tuple[str, str]] = []
    for e in err.errors(include_url=False):
        loc = tuple(e["loc"])
        path = _path(loc)
        kind = e["type"]
        ctx = e.get("ctx") or {}
        if kind == "spec_cross":
            issues.extend(tuple(i) for i in ctx["issues"])
        elif kind == "extra_forbidden":
            model = _model_at(loc[:-1])
            allowed = ", ".join(model.model_fields) if model is not None else "?"
            issues.append((path, f"unknown key {str(loc[-1])!r}; allowed keys here: {allowed}"))
        elif kind == "missing":
            model = _model_at(loc[:-1])
            field = model.model_fields.get(str(loc[-1])) if model is not None else None
            hint = f" ({field.description})" if field is not None and field.description else ""
            issues.append((path, f"required key is missing{hint}"))
        elif kind == "value_error":
            msg = e["msg"].removeprefix("Value error, ")
            issues.append((path, msg))
        elif kind == "model_type":
            where = "" if loc and isinstance(loc[-1], int) else f" ([{path}])"
            issues.append((path, f"{_short(e['input'])} is not valid: expected a table{where}"))
        elif kind == "list_type" and loc and loc[-1] in _ARRAY_OF_TABLES:
            issues.append((path, f"{_short(e['input'])} is not valid: expected an array of tables ([[{path}]])"))
        elif kind == "too_short" and loc and loc[-1] in _ARRAY_OF_TABLES:
            issues.append((path, f"at least one [[{path}]] table is required"))
        else:
            msg = e["msg"]
            issues.append((path, f"{_short(e['input'])} is not valid: {msg[:1].lower()}{msg[1:]}"))
    return issues
