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
from ..units import NS_PER_SEC, format_duration
from .backend import BackendName, LinuxOptions
from .checks import _cross_issues
from .errors import SpecError, _issues
from .fields import Duration, Name, _Model
from .flows import DEFAULT_RWND_FLOOR_BYTES, FlowSpec
from .host import HostSpec, resolve_host
from .network import (
    ACCESS_QUEUE_FLOOR_PACKETS,
    ACCESS_RATE_FACTOR,
    DEFAULT_REVERSE_LINK,
    BottleneckSpec,
    ResolvedBuffer,
    ReverseLinkSpec,
    SenderSpec,
    resolve_loss,
    resolve_loss_value,
)
from .qdisc import BfifoSpec, LimitContext, PfifoSpec, QdiscSpec, can_mark, resolve_qdisc, resolve_shaper
from .topology import (
    MISSING_NETWORK,
    GraphSpec,
    NetLink,
    ParkingLotSpec,
    SenderPath,
    TopologySpec,
    net_links,
    sender_paths,
)
from .traffic import load_cdf, rtt_bins

#: Default sampling interval of ``flow_ts`` and ``queue_ts``.
DEFAULT_SAMPLE_INTERVAL_NS = 100_000_000


class ExperimentSection(_Model):
    """``[experiment]``: what is run, for how long, and what is recorded."""

    name: Name = Field(description="experiment name, e.g. 'quickstart'")
    description: str = Field("", description="free text")
    seed: int = Field(1, ge=0, lt=2**64, description="experiment seed, an integer in [0, 2^64)")
    workload_seed: int | None = Field(
        None,
        ge=0,
        lt=2**64,
        description="seed of the workload (arrivals, sizes, CCA mix, RTTs); default: the experiment seed",
    )
    duration: Duration = Field(description="simulated duration, e.g. '30s'")
    warmup: Duration = Field(0, description="start of the measurement window, e.g. '5s'")
    sample_interval: Duration = Field(
        DEFAULT_SAMPLE_INTERVAL_NS, description="interval of flow_ts/queue_ts samples, e.g. '100ms'; 0 disables"
    )
    sojourn_sample_every: int = Field(
        10, ge=0, le=2**32, description="keep every n-th packet's queueing delay in the sojourn table; 0 keeps none"
    )
    packet_events: bool = Field(
        False,
        description="true or false: record an events row per dropped or CE-marked packet (needed by M-BURST); "
        "false counts them only (flows, links, queue_ts), so memory does not grow with the duration",
    )
    backend: BackendName = Field(
        "sim", description="'sim' (the simulator) or 'linux' (real kernels in network namespaces, root only)"
    )


class Experiment(_Model):
    """A complete, validated experiment spec. Build it with :meth:`from_dict`,
    :meth:`from_toml` or :func:`load_spec` (which report problems as :class:`SpecError`)."""

    experiment: ExperimentSection = Field(description="the [experiment] table: name, duration, ...")
    bottleneck: BottleneckSpec | None = Field(
        None, description="the [bottleneck] table: rate, buffer, ... (the dumbbell; not with [topology])"
    )
    topology: TopologySpec | None = Field(
        None, description="the [topology] table: a parking lot or a graph (default: the dumbbell of [bottleneck])"
    )
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
            issues = _issues(e, cls)
            # Field errors stop validation before the cross checks; the missing network
            # (an optional key each, but one is required) is reported with them.
            if "bottleneck" not in data and "topology" not in data and all(p != "bottleneck" for p, _ in issues):
                at = sum(1 for p, _ in issues if p.startswith("experiment"))
                issues.insert(at, ("bottleneck", MISSING_NETWORK))
            raise SpecError(issues, source) from None

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

    # ---- the network (every topology through one view: links and sender paths)

    def links(self) -> list[NetLink]:
        """The network links (not the access links), in engine order."""
        return net_links(self)

    def paths(self) -> list[SenderPath]:
        """Each sender's path over the network links (routes resolved)."""
        return sender_paths(self)

    def sender_rtt(self, i: int) -> int:
        """Base RTT of sender ``i``: as given, or (graph) its route's propagation RTT."""
        rtt = self.senders[i].rtt
        return rtt if rtt is not None else self.paths()[i].propagation_rtt_ns

    def primary_link(self) -> NetLink:
        """The link summaries are about: the dumbbell's bottleneck, else the slowest link
        (the first of equals)."""
        links = self.links()
        return min(links, key=lambda ln: self._shaped_rate(ln))

    def max_bottleneck_rate(self) -> int:
        return max(r for ln in self.links() for r in (ln.spec.rate, *(c.rate for c in ln.spec.rate_schedule)))

    @staticmethod
    def _shaped_rate(link: NetLink) -> int:
        return link.spec.shaper.rate if link.spec.shaper is not None else link.spec.rate

    def shaped_rate(self, link: NetLink | None = None) -> int:
        """The rate that limits a link (default the primary one): the shaper's if there is one."""
        return self._shaped_rate(link or self.primary_link())

    def qdisc_spec(self, link: NetLink | None = None, reverse: bool = False) -> Any:
        """A link's qdisc spec (default the primary link's; ``reverse``: its reverse
        direction's); by default pfifo for a buffer in packets, else bfifo."""
        spec: BottleneckSpec | ReverseLinkSpec = (link or self.primary_link()).spec
        if reverse:
            spec = spec.reverse if isinstance(spec, BottleneckSpec) and spec.reverse else DEFAULT_REVERSE_LINK
        q = spec.qdisc
        if isinstance(q, str):  # set without validation (model_copy): parse the shorthand
            return TypeAdapter(QdiscSpec).validate_python(q)
        if q is not None:
            return q
        return (
            PfifoSpec(kind="pfifo", limit=None)
            if spec.buffer.kind == "packets"
            else BfifoSpec(kind="bfifo", limit=None)
        )

    def limit_context(self, link: NetLink | None = None, reverse: bool = False) -> LimitContext:
        """What a link's queue limits resolve against (``reverse``: its reverse direction,
        whose BDP is at the reverse rate over the same ``bdp_rtt``)."""
        link = link or self.primary_link()
        rtt = self.bdp_rtt_ns(link)
        if reverse:
            r = link.spec.reverse or DEFAULT_REVERSE_LINK
            rate = r.rate if r.rate is not None else link.spec.rate
            buffer = r.buffer
        else:
            rate, buffer = self.shaped_rate(link), link.spec.buffer
        return LimitContext(buffer, Fraction(rate * rtt, 8 * NS_PER_SEC), self.packet_bytes(), rate)

    def group_flows(self) -> dict[str, list[int]]:
        """Flow ids of each flow group (``flows[*].name``, default the CCA name)."""
        groups: dict[str, list[int]] = {}
        next_id = 0
        # Fixed groups are numbered first, in list order; flows arriving over time
        # get ids in arrival order, unknown here.
        for f in self.flows:
            ids = groups.setdefault(f.name or f.cca, [])
            if not f.is_lazy():
                ids.extend(range(next_id, next_id + f.count))
                next_id += f.count
        return groups

    def warnings(self) -> list[str]:
        """Things that are valid but probably not what the user meant."""
        out = []
        if any(f.ecn for f in self.flows) and not any(can_mark(self.qdisc_spec(ln)) for ln in self.links()):
            primary = self.primary_link()
            kind = self.qdisc_spec(primary).kind
            out.append(
                f"flows[*].ecn is set but {primary.path}.qdisc {kind!r} never marks: ECN-capable flows will only see "
                "drops; use an AQM with ecn (e.g. qdisc = {kind='codel', ecn=true}, or 'fq_codel')"
            )
        return out

    def packet_bytes(self) -> int:
        """Bytes on the wire of a full-sized segment of the largest MSS in the spec."""
        return max(f.mss for f in self.flows) + HEADER_BYTES

    def bdp_rtt_ns(self, link: NetLink | None = None) -> int:
        """The RTT of a link's BDP (default the primary link's): its ``bdp_rtt``, where
        'min' and 'max' range over the senders whose path crosses the link."""
        link = link or self.primary_link()
        b = link.spec.bdp_rtt
        if isinstance(b, int):
            return b
        if b not in ("min", "max"):
            return self.sender_rtt(next(i for i, s in enumerate(self.senders) if s.name == b))
        index = self.links().index(link)
        paths = self.paths()
        crossing = [i for i, p in enumerate(paths) if any(k == index for k, _ in p.hops)] or range(len(self.senders))
        rtts = [self.sender_rtt(i) for i in crossing]
        return min(rtts) if b == "min" else max(rtts)

    def buffer(self, link: NetLink | None = None) -> ResolvedBuffer:
        """Resolve a link's buffer (default the primary link's). BDP = rate × bdp_rtt / 8
        bytes (exact), with the initial rate. A limit in packets is ⌈bytes / packet_bytes⌉,
        a limit in bytes from packets is packets × packet_bytes, and k×BDP is ⌈k × BDP⌉ bytes."""
        link = link or self.primary_link()
        rtt = self.bdp_rtt_ns(link)
        bdp = Fraction(self.shaped_rate(link) * rtt, 8 * NS_PER_SEC)
        pkt = self.packet_bytes()
        buf = link.spec.buffer
        if buf.kind == "packets":
            packets = int(buf.value)
            nbytes = packets * pkt
        else:
            exact = Fraction(buf.value) if buf.kind == "bytes" else Fraction(buf.value) * bdp
            nbytes = math.ceil(exact)
            packets = max(1, math.ceil(exact / pkt))
        return ResolvedBuffer(self.qdisc_spec(link).kind, rtt, math.ceil(bdp), pkt, nbytes, packets)

    def _rwnd_bytes(self, flow: FlowSpec, buffer_bytes: int) -> int:
        """The flow's receive window; by default large enough never to limit it: twice
        its path's BDP plus ``buffer_bytes`` (the buffers on its path)."""
        if flow.rwnd is None:
            rtt = self.sender_rtt(self.sender_index(flow))
            path_bdp = math.ceil(Fraction(self.max_bottleneck_rate() * rtt, 8 * NS_PER_SEC))
            return max(DEFAULT_RWND_FLOOR_BYTES, 2 * (path_bdp + buffer_bytes))
        if flow.rwnd.kind == "packets":
            return int(flow.rwnd.value) * flow.mss
        return int(flow.rwnd.value)

    def resolve(self) -> dict[str, Any]:
        """The engine configuration (``crates/ccsim/src/config.rs``) as a JSON-ready dict.

        Flows are listed in spec order, one entry per ``[[flows]]`` table with its
        ``count``; the engine creates each flow when it starts: fixed groups' flows get
        consecutive ids in spec order, flows arriving over time follow in arrival order.
        """
        links = self.links()
        paths = self.paths()
        groups = self.group_flows()
        resolved = [self._resolve_link(ln, groups) for ln in links]
        path_buffer = [sum(self.buffer(links[k]).bytes for k, _ in p.hops) for p in paths]
        flows: list[dict[str, Any]] = []
        in_flight_cap: dict[int, int] = {}  # sender index -> packets its flows can have in flight
        # Per-flow RTTs: one extra sender (access links) per (sender, distinct RTT).
        rtt_senders: dict[tuple[int, int], int] = {}
        for f in self.flows:
            sender = self.sender_index(f)
            rwnd = self._rwnd_bytes(f, path_buffer[sender])
            in_flight_cap[sender] = in_flight_cap.get(sender, 0) + math.ceil(
                f.expected_count(self.experiment.duration)
            ) * (math.ceil(rwnd / f.mss) + 1)
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
            flow.update(self._traffic(f, sender, rtt_senders))
            # The engine creates each flow when it starts (memory stays O(entries) here).
            flows.append({"count": f.count, **flow})
        senders = []
        # (index of the spec's sender, name, base RTT): the spec's senders, then one per
        # (sender, distinct per-flow RTT), on the same route with their own access links.
        all_senders = [(i, s.name, self.sender_rtt(i)) for i, s in enumerate(self.senders)]
        for (i, rtt), _ in sorted(rtt_senders.items(), key=lambda kv: kv[1]):
            all_senders.append((i, f"{self.senders[i].name}@{format_duration(rtt)}", rtt))
        for i, name, rtt in all_senders:
            s = self.senders[i]
            if s.access_queue is None:
                queue = max(ACCESS_QUEUE_FLOOR_PACKETS, in_flight_cap.get(i, 0))
            elif s.access_queue.kind == "packets":
                queue = int(s.access_queue.value)
            else:
                queue = max(1, math.ceil(Fraction(s.access_queue.value) / self.packet_bytes()))
            sender_cfg = {
                "name": name,
                "rtt_ns": rtt,
                "access_rate_bps": s.access_rate
                if s.access_rate is not None
                else ACCESS_RATE_FACTOR * self.max_bottleneck_rate(),
                "access_queue_packets": queue,
                "delay_path": s.delay_path,
                "jitter_ns": s.jitter,
                "host": resolve_host(self.host, s.host),
                "access_loss": resolve_loss_value(s.access_loss),
                "access_reverse_loss": resolve_loss_value(s.access_reverse_loss),
            }
            if self.topology is not None:
                sender_cfg["route"] = list(paths[i].nodes)
            senders.append(sender_cfg)
        e = self.experiment
        return {
            "seed": e.seed,
            **({} if e.workload_seed is None else {"workload_seed": e.workload_seed}),
            "duration_ns": e.duration,
            "warmup_ns": e.warmup,
            "sample_interval_ns": e.sample_interval,
            "sojourn_sample_every": e.sojourn_sample_every,
            "packet_events": e.packet_events,
            "topology": self._resolve_topology(resolved, senders),
            "flows": flows,
        }

    def _resolve_link(
        self, link: NetLink, groups: dict[str, list[int]]
    ) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """The engine's forward and reverse ``LinkConfig`` of a link (reverse ``None``:
        the engine's default, a 1000-packet pfifo at the same rate, delay and jitter, no loss,
        which is also what an empty ``reverse`` table resolves to)."""
        b = link.spec
        ctx = self.limit_context(link)
        qdisc = resolve_qdisc(self.qdisc_spec(link), ctx, groups)
        if b.shaper is not None:
            qdisc = resolve_shaper(b.shaper, qdisc, ctx)
        forward = {
            "rate_bps": b.rate,
            "delay_ns": b.delay,
            "jitter_ns": b.jitter,
            "qdisc": qdisc,
            **resolve_loss(b.loss),
            "rate_schedule": [[c.at, c.rate] for c in b.rate_schedule],
            "limit_includes_head": b.limit_includes_head,
        }
        if b.reverse is None and b.reverse_loss == 0.0:
            return forward, None
        r = b.reverse or DEFAULT_REVERSE_LINK
        rctx = self.limit_context(link, reverse=True)
        reverse = {
            "rate_bps": rctx.rate_bps,
            "delay_ns": b.delay,
            "jitter_ns": b.jitter,
            "qdisc": resolve_qdisc(self.qdisc_spec(link, reverse=True), rctx, groups),
            **resolve_loss(b.reverse_loss),
            "rate_schedule": [[c.at, c.rate] for c in r.rate_schedule],
            "limit_includes_head": b.limit_includes_head,
        }
        return forward, reverse

    def _resolve_topology(
        self, resolved: list[tuple[dict[str, Any], dict[str, Any] | None]], senders: list[dict[str, Any]]
    ) -> dict[str, Any]:
        t = self.topology
        links = self.links()
        duplex = [{"name": ln.name, "forward": f, "reverse": r} for ln, (f, r) in zip(links, resolved, strict=True)]
        if isinstance(t, ParkingLotSpec):
            return {"kind": "parking_lot", "hops": duplex, "senders": senders}
        if isinstance(t, GraphSpec):
            ends = [{"from": ln.src, "to": ln.dst, "link": d} for ln, d in zip(t.links, duplex, strict=True)]
            return {"kind": "graph", "nodes": list(t.nodes), "links": ends, "senders": senders}
        forward, reverse = resolved[0]
        return {"kind": "dumbbell", "bottleneck": forward, "reverse_bottleneck": reverse, "senders": senders}

    def _traffic(self, f: FlowSpec, sender: int, rtt_senders: dict[tuple[int, int], int]) -> dict[str, Any]:
        """The engine's traffic fields of one flow entry (``crates/ccsim/src/traffic``)."""
        out: dict[str, Any] = {}
        if f.arrival == "interval":
            out["arrival"] = {"kind": "interval", "every_ns": f.interval}
        elif f.arrival == "uniform":
            out["arrival"] = {"kind": "uniform", "window_ns": f.window}
        elif f.arrival == "poisson":
            out["arrival"] = (
                {"kind": "poisson", "rate_per_s": f.arrival_rate}
                if f.arrival_rate is not None
                else {"kind": "poisson_load", "load_bps": float(f.load or 0)}
            )
        elif f.arrival == "empirical" and f.gaps is not None:
            gaps = [[v * 1e6, p] for v, p in load_cdf(f.gaps)]  # ms -> ns
            out["arrival"] = {"kind": "gaps", "gaps_ns": {"points": gaps, "interpolation": "linear"}}
        if f.sizes is not None:
            out["size_dist"] = {"points": [list(p) for p in load_cdf(f.sizes)], "interpolation": "linear"}
        if f.mix:
            out["cca_mix"] = [{"cca": m.cca, "cca_params": dict(m.params), "fraction": m.fraction} for m in f.mix]
        if f.rtts is not None:
            mix = []
            for rtt, mass in rtt_bins(f.rtts):
                idx = rtt_senders.setdefault((sender, rtt), len(self.senders) + len(rtt_senders))
                mix.append({"sender": idx, "fraction": mass})
            out["sender_mix"] = mix
        if f.opens_with_handshake:
            out["handshake"] = True
        if f.transport == "udp":
            out["app"] = {
                "kind": "udp",
                "rate_bps": f.rate or 0,
                "on_ns": f.on,
                "off_ns": f.off,
                "bursts": [{"start_ns": b.at, "end_ns": b.at + b.duration, "rate_bps": b.rate} for b in f.bursts],
                "packet_bytes": int(f.packet.value) if f.packet is not None else 1500,
            }
        elif f.rate is not None:
            out["app"] = {"kind": "rate_limited", "rate_bps": f.rate, "on_ns": f.on, "off_ns": f.off}
        return out

    def derived(self) -> dict[str, Any]:
        """Quantities computed from the spec that the manifest records (resolved buffer,
        measurement window, bottleneck rate): what metrics read, on every backend."""
        primary = self.primary_link()
        buf = self.buffer(primary)
        return {
            "buffer": {
                "qdisc": buf.qdisc,
                "bytes": buf.bytes,
                "packets": buf.packets,
                "bdp_bytes": buf.bdp_bytes,
                "bdp_rtt_ns": buf.bdp_rtt_ns,
                "packet_bytes": buf.packet_bytes,
            },
            "num_flows": round(sum(f.expected_count(self.experiment.duration) for f in self.flows)),
            "window": {"warmup_ns": self.experiment.warmup, "duration_ns": self.experiment.duration},
            "bottleneck": {
                "link": primary.name,
                # The senders whose data crosses it (what its utilization counts).
                "senders": [
                    s.name
                    for s, p in zip(self.senders, self.paths(), strict=True)
                    if any(self.links()[k] == primary for k, _ in p.hops)
                ],
                # The rate its utilization counts against: a shaper's rate when there
                # is one (the link's own rate is then its line rate).
                "rate_bps": self.shaped_rate(primary),
                "rate_schedule": [[c.at, c.rate] for c in primary.spec.rate_schedule],
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
