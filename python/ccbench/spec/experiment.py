"""The whole spec: the ``[experiment]`` section, the :class:`Experiment` root model that
validates, serialises and resolves a spec into the engine configuration, and
:func:`load_spec`."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any, Literal

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from pydantic import Field, TypeAdapter, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from .. import engine
from ..engine import HEADER_BYTES, CcaCatalog
from ..units import NS_PER_SEC
from .backend import BackendName, LinuxOptions
from .checks import _cross_issues
from .errors import SpecError, _issues
from .fields import Duration, Name, _Model
from .flows import DEFAULT_RWND_FLOOR_BYTES, FlowSpec
from .host import HostSpec, resolve_host
from .network import (
    ACCESS_QUEUE_FLOOR_PACKETS,
    ACCESS_RATE_FACTOR,
    BottleneckSpec,
    ResolvedBuffer,
    SenderSpec,
    resolve_loss,
)
from .qdisc import BfifoSpec, LimitContext, PfifoSpec, QdiscSpec, can_mark, resolve_qdisc, resolve_shaper

#: Queue of the reverse (ACK) bottleneck direction (engine ``DEFAULT_REVERSE_QUEUE_PKTS``).
REVERSE_QUEUE_PACKETS = 1000
#: Default sampling interval of ``flow_ts`` and ``queue_ts``.
DEFAULT_SAMPLE_INTERVAL_NS = 100_000_000


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
    backend: BackendName = Field(
        "sim", description="'sim' (the simulator) or 'linux' (real kernels in network namespaces, root only)"
    )


class Experiment(_Model):
    """A complete, validated experiment spec. Build it with :meth:`from_dict`,
    :meth:`from_toml` or :func:`load_spec` (which report problems as :class:`SpecError`)."""

    experiment: ExperimentSection = Field(description="the [experiment] table: name, duration, ...")
    bottleneck: BottleneckSpec = Field(description="the [bottleneck] table: rate, buffer, ...")
    senders: list[SenderSpec] = Field(min_length=1, description="at least one [[senders]] table")
    flows: list[FlowSpec] = Field(min_length=1, description="at least one [[flows]] table")
    linux: LinuxOptions = Field(
        default_factory=lambda: LinuxOptions.model_validate({}),
        description="the [linux] table: options of the linux backend",
    )
    host: HostSpec | None = Field(None, description="the [host] table: end-host behaviour (default: Linux)")

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
            raise SpecError(_issues(e, cls), source) from None

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
        if isinstance(seed, bool) or not (isinstance(seed, int) and 0 <= seed < 2**64):
            raise SpecError([("experiment.seed", f"{seed!r} is not valid: the seed must be an integer in [0, 2^64)")])
        return self.model_copy(update={"experiment": self.experiment.model_copy(update={"seed": seed})})

    # ---- resolution

    def sender_index(self, flow: FlowSpec) -> int:
        if flow.sender is None:
            return 0
        return next(i for i, s in enumerate(self.senders) if s.name == flow.sender)

    def max_bottleneck_rate(self) -> int:
        return max([self.bottleneck.rate, *(c.rate for c in self.bottleneck.rate_schedule)])

    def shaped_rate(self) -> int:
        """The rate that limits the bottleneck: the shaper's if there is one."""
        b = self.bottleneck
        return b.shaper.rate if b.shaper is not None else b.rate

    def qdisc_spec(self) -> Any:
        """The bottleneck's qdisc spec; by default pfifo for a buffer in packets, else bfifo."""
        q = self.bottleneck.qdisc
        if isinstance(q, str):  # set without validation (model_copy): parse the shorthand
            return TypeAdapter(QdiscSpec).validate_python(q)
        if q is not None:
            return q
        return PfifoSpec(kind="pfifo", limit=None) if self.bottleneck.buffer.kind == "packets" else BfifoSpec(kind="bfifo", limit=None)

    def limit_context(self) -> LimitContext:
        rtt = self.bdp_rtt_ns()
        return LimitContext(
            self.bottleneck.buffer, Fraction(self.shaped_rate() * rtt, 8 * NS_PER_SEC), self.packet_bytes()
        )

    def group_flows(self) -> dict[str, list[int]]:
        """Flow ids of each flow group (``flows[*].name``, default the CCA name)."""
        groups: dict[str, list[int]] = {}
        next_id = 0
        for f in self.flows:
            groups.setdefault(f.name or f.cca, []).extend(range(next_id, next_id + f.count))
            next_id += f.count
        return groups

    def warnings(self) -> list[str]:
        """Things that are valid but probably not what the user meant."""
        out = []
        if any(f.ecn for f in self.flows) and not can_mark(self.qdisc_spec()):
            kind = self.qdisc_spec().kind
            out.append(
                f"flows[*].ecn is set but bottleneck.qdisc {kind!r} never marks: ECN-capable flows will only see "
                "drops; use an AQM with ecn (e.g. qdisc = {kind='codel', ecn=true}, or 'fq_codel')"
            )
        return out

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
        bdp = Fraction(self.shaped_rate() * rtt, 8 * NS_PER_SEC)
        pkt = self.packet_bytes()
        buf = self.bottleneck.buffer
        if buf.kind == "packets":
            packets = int(buf.value)
            nbytes = packets * pkt
        else:
            exact = Fraction(buf.value) if buf.kind == "bytes" else Fraction(buf.value) * bdp
            nbytes = math.ceil(exact)
            packets = max(1, math.ceil(exact / pkt))
        return ResolvedBuffer(self.qdisc_spec().kind, rtt, math.ceil(bdp), pkt, nbytes, packets)

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

        Flows are listed in spec order, one entry per ``[[flows]]`` table with its
        ``count``; the engine expands each into ``count`` consecutive flows, so flow ids
        follow the spec order.
        """
        buf = self.buffer()
        b = self.bottleneck
        ctx = self.limit_context()
        qdisc = resolve_qdisc(self.qdisc_spec(), ctx, self.group_flows())
        if b.shaper is not None:
            qdisc = resolve_shaper(b.shaper, qdisc, ctx)
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
            # The engine expands `count` (memory stays O(entries) here, whatever the count).
            flows.append({"count": f.count, **flow})
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
                    "delay_path": s.delay_path,
                    "host": resolve_host(self.host, s.host),
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
                    **resolve_loss(b.loss),
                    "rate_schedule": [[c.at, c.rate] for c in b.rate_schedule],
                    "limit_includes_head": b.limit_includes_head,
                },
                "reverse_bottleneck": None
                if b.reverse_loss == 0.0
                else {
                    "rate_bps": b.rate,
                    "delay_ns": b.delay,
                    "qdisc": {"kind": "pfifo", "limit_packets": REVERSE_QUEUE_PACKETS},
                    **resolve_loss(b.reverse_loss),
                    "rate_schedule": [],
                    "limit_includes_head": b.limit_includes_head,
                },
                "senders": senders,
            },
            "flows": flows,
        }

    def derived(self) -> dict[str, Any]:
        """Quantities computed from the spec that the manifest records (resolved buffer,
        measurement window, bottleneck rate): what metrics read, on every backend."""
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
            "window": {"warmup_ns": self.experiment.warmup, "duration_ns": self.experiment.duration},
            "bottleneck": {
                "rate_bps": self.bottleneck.rate,
                "rate_schedule": [[c.at, c.rate] for c in self.bottleneck.rate_schedule],
            },
            "hosts": {s.name: resolve_host(self.host, s.host) for s in self.senders},
        }


def _decode(raw: bytes, source: str) -> str:
    """A spec file's text: UTF-8 (TOML's encoding), with or without a byte-order mark;
    UTF-16 and UTF-32 files (as some Windows editors save) are read by their mark."""
    for bom, codec in (
        (b"\xff\xfe\x00\x00", "utf-32"),
        (b"\x00\x00\xfe\xff", "utf-32"),
        (b"\xff\xfe", "utf-16"),
        (b"\xfe\xff", "utf-16"),
        (b"\xef\xbb\xbf", "utf-8-sig"),
    ):
        if raw.startswith(bom):
            try:
                return raw.decode(codec)
            except UnicodeDecodeError as e:
                raise SpecError(
                    [
                        (
                            "",
                            f"the file starts with a {codec.upper()} byte-order mark but is not valid {codec.upper()} ({e.reason} at byte {e.start})",
                        )
                    ],
                    source,
                ) from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SpecError(
            [
                (
                    "",
                    f"the file is not UTF-8 text ({e.reason} at byte {e.start}); save it as UTF-8, the encoding of TOML",
                )
            ],
            source,
        ) from None


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
    text = _decode(path.read_bytes(), str(path))
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise SpecError([("", f"not valid JSON: {e}")], str(path)) from None
        return Experiment.from_dict(data, ccas=ccas, source=str(path))
    return Experiment.from_toml(text, ccas=ccas, source=str(path))
