"""The network part of a kernel run's plan: what each link direction's queue is (tbf
for the rate, a fifo child for the queue, the delay after it) and, beyond the
dumbbell, the routers, links and each sender's route.

Pure (no system calls), like :mod:`.plan`: every link field the kernel cannot do is
added to ``problems`` naming its spec field, so a spec fails before anything is
created. Routes come from the spec's own routing (:meth:`Experiment.paths`: given, or
the shortest path), so a flow crosses the same links on both backends.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...spec.qdisc import resolve_qdisc, resolve_shaper
from ...spec.topology import GraphSpec, NetLink, ParkingLotSpec
from ...units import format_duration
from .aqm import KERNEL_QDISCS, child_args
from .netem import NETEM_MAX_JITTER_NS, netem_loss_args
from .system import KernelInfo

if TYPE_CHECKING:
    from ...spec import Experiment

__all__ = [
    "LinkPlan",
    "NetworkPlan",
    "QueuePlan",
    "RoutePlan",
    "link_queue",
    "loss_text",
    "require_jitter",
    "require_netem",
    "network_plan",
]

#: tbf bucket: two full-sized packets (a smaller bucket makes tbf's timer the limit).
TBF_BURST_PACKETS = 2
#: Routers, links and senders are numbered into addresses (10.204.<link>.x,
#: 10.201.<sender>.x, ...), so each count stays below 250.
MAX_LINKS = 250
MAX_SENDERS = 250


@dataclass(frozen=True)
class QueuePlan:
    """One direction of a link as the kernel builds it: ``tbf`` (rate, bucket and, for
    a spec shaper below the link rate, the link rate as tbf's peak rate) with the
    link's queue discipline as its child (``child``: its ``tc`` arguments), then
    ``delay_ns`` of propagation."""

    link: str  # its name in queue_ts, links and events
    rate_bps: int
    rate_schedule: tuple[tuple[int, int], ...]
    qdisc: str  # a kind of aqm.KERNEL_QDISCS
    limit: int  # bytes for bfifo and red, else packets
    burst_bytes: int
    peakrate_bps: int | None = None
    mtu_bytes: int | None = None
    delay_ns: int = 0
    #: ``tc`` arguments of the child qdisc (default: the fifo of ``qdisc`` and ``limit``).
    child_args: tuple[str, ...] = ()
    #: netem's loss arguments for the direction's random loss (on entry, ahead of the
    #: tbf, as the simulator loses packets on a link's entry); () = none.
    loss_netem: tuple[str, ...] = ()
    #: Per-packet variation of ``delay_ns`` (netem ``delay D J``, added with the loss).
    jitter_ns: int = 0

    def child(self) -> list[str]:
        return list(self.child_args) or [self.qdisc, "limit", str(self.limit)]

    def tbf_args(self) -> list[str]:
        """The ``tc ... tbf`` arguments (``limit`` is the child's business)."""
        args = ["rate", f"{self.rate_bps}bit", "burst", str(self.burst_bytes)]
        if self.peakrate_bps is not None:
            args += ["peakrate", f"{self.peakrate_bps}bit", "mtu", str(self.mtu_bytes)]
        return [*args, "limit", "100000000"]

    def as_dict(self) -> dict[str, Any]:
        return {
            "link": self.link,
            "rate_bps": self.rate_bps,
            "rate_schedule": [list(c) for c in self.rate_schedule],
            "shaper": "tbf",
            "tbf_burst_bytes": self.burst_bytes,
            "tbf_peakrate_bps": self.peakrate_bps,
            "qdisc": self.qdisc,
            "limit": self.limit,
            "limit_unit": "bytes" if self.qdisc in ("bfifo", "red") else "packets",
            "child": self.child(),
            "delay_ns": self.delay_ns,
            "loss_netem": list(self.loss_netem),
            "jitter_ns": self.jitter_ns,
        }


@dataclass(frozen=True)
class LinkPlan:
    """A network link between routers ``src`` and ``dst`` (indices into the nodes)."""

    index: int
    name: str
    src: int
    dst: int
    forward: QueuePlan
    reverse: QueuePlan


@dataclass(frozen=True)
class RoutePlan:
    """A sender's route: the routers its data crosses (indices) and the links between
    them as (link index, data in the link's forward direction?)."""

    nodes: tuple[int, ...]
    hops: tuple[tuple[int, bool], ...]
    propagation_rtt_ns: int


@dataclass(frozen=True)
class NetworkPlan:
    kind: str  # "parking_lot" | "graph"
    nodes: tuple[str, ...]
    links: tuple[LinkPlan, ...]
    routes: tuple[RoutePlan, ...]  # one per sender

    def queues(self) -> list[QueuePlan]:
        return [q for ln in self.links for q in (ln.forward, ln.reverse)]

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "nodes": list(self.nodes),
            "links": [
                {
                    "name": ln.name,
                    "src": self.nodes[ln.src],
                    "dst": self.nodes[ln.dst],
                    "forward": ln.forward.as_dict(),
                    "reverse": ln.reverse.as_dict(),
                }
                for ln in self.links
            ],  # fmt: skip
            "routes": [
                {"nodes": [self.nodes[n] for n in r.nodes], "links": [self.links[k].name for k, _ in r.hops]}
                for r in self.routes
            ],
        }


def require_netem(what: str, kernel: KernelInfo, problems: list[str]) -> None:
    """A spec field that needs netem: a problem unless the kernel has it."""
    has = kernel.has_qdisc("netem")
    if has is not True:
        problems.append(f"{what} needs the netem qdisc, which " + (
            "this kernel does not provide" if has is False else "could not be probed (probing needs root)"
        ))  # fmt: skip


def require_jitter(field: str, jitter_ns: int, kernel: KernelInfo, problems: list[str]) -> None:
    """A spec ``jitter``: netem's ``delay D J``, so it needs netem and fits netem's s32."""
    what = f"{field} = {format_duration(jitter_ns)!r} (per-packet delay jitter)"
    require_netem(what, kernel, problems)
    if jitter_ns > NETEM_MAX_JITTER_NS:
        problems.append(f"{what}: netem's jitter is at most {format_duration(NETEM_MAX_JITTER_NS)} (32-bit ns)")


def loss_text(loss: Any) -> str:
    return f"{loss:g}" if isinstance(loss, float) else "gilbert_elliott"


def link_queue(
    exp: Experiment, link: NetLink, reverse: bool, mtu: int, kernel: KernelInfo, problems: list[str]
) -> QueuePlan:
    """The kernel queue of one direction of ``link``; what it cannot build goes to
    ``problems`` (and a placeholder fifo is returned so that checking goes on)."""
    b, path = link.spec, link.path
    rpath = f"{path}.reverse" if reverse else path
    qspec = exp.qdisc_spec(link, reverse=reverse)
    ctx = exp.limit_context(link, reverse=reverse)
    kind = qspec.kind
    if kind not in KERNEL_QDISCS or kernel.has_qdisc(kind) is False:
        if kind not in KERNEL_QDISCS:
            problems.append(
                f"{rpath}.qdisc = {kind!r} is not supported by the linux backend ({', '.join(KERNEL_QDISCS)})"
            )
        else:
            problems.append(f"{rpath}.qdisc = {kind!r} needs the {kind} qdisc, which this kernel does not provide")
        resolved: dict[str, Any] = {"kind": "pfifo", "limit_packets": 1000}
    else:
        resolved = resolve_qdisc(qspec, ctx, {})
    loss = b.reverse_loss if reverse else b.loss
    if loss != 0.0:
        field = f"{path}.reverse_loss" if reverse else f"{path}.loss"
        require_netem(f"{field} = {loss_text(loss)} (random loss)", kernel, problems)
    if b.jitter > 0 and not reverse:  # one message for both directions
        require_jitter(f"{path}.jitter", b.jitter, kernel, problems)
    if not b.limit_includes_head and not reverse:
        problems.append(
            f"{path}.limit_includes_head = false: the kernel's tbf + fifo counts the packet waiting for tokens "
            "in the queue's limit (true)"
        )
    if reverse:
        r = b.reverse
        rate = ctx.rate_bps
        schedule = tuple((c.at, c.rate) for c in (r.rate_schedule if r is not None else []))
    else:
        rate = b.rate
        schedule = tuple((c.at, c.rate) for c in b.rate_schedule)
    burst, peak, peak_mtu = TBF_BURST_PACKETS * mtu, None, None
    if b.shaper is not None and not reverse:
        shaped = resolve_shaper(b.shaper, resolved, ctx)
        if schedule:
            problems.append(
                f"{path}.rate_schedule with {path}.shaper: the kernel's tbf would change the shaper's rate, "
                "not the link's; give one or the other"
            )
        if b.shaper.rate < b.rate:
            # the bucket drains at the link's rate (tbf's peak rate), then the shaper's rate holds
            peak = b.shaper.peakrate if b.shaper.peakrate is not None and b.shaper.peakrate < b.rate else b.rate
            rate, burst, peak_mtu = b.shaper.rate, int(shaped["burst_bytes"]), int(shaped["mtu_bytes"])
    limit = int(resolved["limit_bytes"] if "limit_bytes" in resolved else resolved["limit_packets"])
    name = f"{link.name}_rev" if reverse else link.name
    return QueuePlan(
        name, rate, schedule, resolved["kind"], limit, burst, peak, peak_mtu, b.delay, tuple(child_args(resolved)),
        netem_loss_args(loss), b.jitter,
    )  # fmt: skip


def network_plan(exp: Experiment, mtu: int, kernel: KernelInfo, problems: list[str]) -> NetworkPlan:
    """A parking lot's or graph's routers, links (both directions shaped) and routes."""
    t = exp.topology
    assert isinstance(t, (ParkingLotSpec, GraphSpec))
    links = exp.links()
    if len(links) > MAX_LINKS:
        problems.append(f"topology: {len(links)} links; the linux backend builds at most {MAX_LINKS}")
    if len(exp.senders) > MAX_SENDERS:
        problems.append(f"senders: {len(exp.senders)}; the linux backend builds at most {MAX_SENDERS}")
    if isinstance(t, ParkingLotSpec):
        nodes = tuple(f"r{i}" for i in range(len(t.hops) + 1))
        ends = [(i, i + 1) for i in range(len(t.hops))]
    else:
        nodes = tuple(t.nodes)
        ends = [(nodes.index(ln.src), nodes.index(ln.dst)) for ln in t.links]
    plans = []
    for k, (ln, (src, dst)) in enumerate(zip(links, ends, strict=True)):
        fwd = link_queue(exp, ln, False, mtu, kernel, problems)
        rev = link_queue(exp, ln, True, mtu, kernel, problems)
        plans.append(LinkPlan(k, ln.name, src, dst, fwd, rev))
    routes = []
    for p in exp.paths():  # the spec has checked each sender's RTT against its route's
        routes.append(RoutePlan(tuple(nodes.index(n) for n in p.nodes), p.hops, p.propagation_rtt_ns))
    return NetworkPlan(t.kind, nodes, tuple(plans), tuple(routes))
