"""From a spec to what the kernel run will build, and every reason it cannot.

:func:`make_plan` is pure (no system calls): given the spec and what the kernel
offers (:class:`~ccbench.backends.linux.system.KernelInfo`), it returns a
:class:`LinuxPlan` or raises :class:`~ccbench.backends.BackendError` listing every
missing thing at once, so a spec fails before anything is created.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...engine import HEADER_BYTES
from ...units import format_duration
from .. import BackendError
from .netem import netem_loss_args
from .netplan import NetworkPlan, QueuePlan, link_queue, loss_text, network_plan, require_jitter, require_netem
from .system import KernelInfo

if TYPE_CHECKING:
    from ...spec import Experiment

__all__ = [
    "FlowPlan",
    "KERNEL_CCA",
    "LinuxPlan",
    "NATURAL_RTT_NS",
    "SenderPlan",
    "make_plan",
]

#: ccbench CCA name -> the kernel's name, where they differ.
KERNEL_CCA = {"bbr1": "bbr"}
#: A sender RTT at or below this is left to the veth path (~50 µs here): no delay is
#: added, and the manifest records the measured idle RTT.
NATURAL_RTT_NS = 200_000
#: One iperf3 client and server per flow: more would swamp the two cores.
#: `[[flows]]` traffic fields (docs/traffic.md) only the simulator runs.
TRAFFIC_FIELDS = ("arrival", "sizes", "rtts", "mix", "on", "off", "transport", "bursts")
MAX_FLOWS = 64
#: Sampling finer than this costs more than the ``ss``/``tc`` calls can keep up with.
MIN_SAMPLE_INTERVAL_NS = 20_000_000
#: Used when the spec disables sampling (0): the window accounting needs samples.
FALLBACK_SAMPLE_INTERVAL_NS = 100_000_000
LINUX_DEFAULT_RTO_MIN_NS = 200_000_000
SERVER_PORT_BASE = 5201
CLIENT_PORT_BASE = 40001
#: Ethernet header bytes on a veth frame; the bottleneck's size table subtracts them so
#: that the rate and byte limits count IP packets, as the simulator does.
ETHERNET_HEADER = 14


@dataclass(frozen=True)
class FlowPlan:
    flow_id: int
    sender: int
    sender_name: str
    group: str
    cca: str
    kernel_cca: str
    start_ns: int
    stop_ns: int | None
    size_bytes: int | None
    mss: int
    rwnd_bytes: int | None
    #: A rate-limited application (``iperf3 -b``); None = as fast as TCP allows.
    rate_bps: int | None
    server_port: int
    client_port: int

    @property
    def iperf_seconds(self) -> int | None:
        """``iperf3 -t`` for a flow with a stop time (whole seconds)."""
        return None if self.stop_ns is None else (self.stop_ns - self.start_ns) // 1_000_000_000


@dataclass(frozen=True)
class SenderPlan:
    index: int
    name: str
    rtt_ns: int
    access_rate_bps: int | None
    access_queue_pkts: int | None
    initial_cwnd: int
    quickack: bool
    rto_min_ns: int
    ecn: bool
    gso_max_segs: int
    gso_max_size: int
    delay_path: str
    #: Round-trip propagation delay of the network links of its route (their own delay
    #: lines or netems add it; in the dumbbell 0, where the whole RTT is the sender's, or
    #: twice the bottleneck's delay when netem adds it on the link: ``bottleneck.jitter``).
    route_rtt_ns: int = 0
    #: Host overrides of its receiver's device (network topologies: one receiver each).
    gro_max_size: int = 65536
    #: netem loss arguments of its access link's data direction (the sender's egress) and
    #: ACK direction (the router's egress toward it); () = no random loss.
    access_loss_netem: tuple[str, ...] = ()
    access_reverse_loss_netem: tuple[str, ...] = ()
    #: Per-packet variation of the delay added on its ACK path (netem ``delay D J``).
    jitter_ns: int = 0

    @property
    def needs_delay(self) -> bool:
        return self.rtt_ns - self.route_rtt_ns > NATURAL_RTT_NS


@dataclass(frozen=True)
class LinuxPlan:
    duration_ns: int
    warmup_ns: int
    sample_interval_ns: int
    #: The dumbbell's bottleneck (beyond the dumbbell: the primary link's forward direction).
    bottleneck: QueuePlan
    mtu: int
    offloads: str  # "host" | "kernel"
    receiver_gro_max_size: int
    delay_method: str  # "none" | "delayline" | "netem"
    senders: tuple[SenderPlan, ...]
    flows: tuple[FlowPlan, ...]
    #: Routers, links and routes of a parking lot or graph (None: the dumbbell).
    network: NetworkPlan | None = None
    #: The dumbbell's ``bottleneck.reverse_loss``: netem loss arguments for the ACK
    #: direction, on the receiver's egress (it carries every ACK and nothing else).
    ack_loss_netem: tuple[str, ...] = ()
    #: The dumbbell's bottleneck delay that netem adds on the link, in each direction:
    #: only with ``bottleneck.jitter`` (``delay D J`` ahead of the bottleneck's tbf, and on
    #: the receiver's egress for the ACKs). 0: the bottleneck's delay is part of each
    #: sender's ACK-path delay, as without jitter.
    bottleneck_netem_delay_ns: int = 0

    @property
    def qdisc(self) -> str:
        return self.bottleneck.qdisc

    @property
    def limit(self) -> int:
        return self.bottleneck.limit

    def as_dict(self) -> dict[str, Any]:
        """For the manifest."""
        network = {"network": self.network.as_dict()} if self.network is not None else {}
        return {
            "duration_ns": self.duration_ns,
            "warmup_ns": self.warmup_ns,
            "sample_interval_ns": self.sample_interval_ns,
            "bottleneck": {**self.bottleneck.as_dict(), "size_table_overhead_bytes": -ETHERNET_HEADER},
            **network,
            "mtu": self.mtu,
            "offloads": self.offloads,
            "receiver_gro_max_size": self.receiver_gro_max_size,
            "delay_method": self.delay_method,
            "ack_loss_netem": list(self.ack_loss_netem),
            # where the dumbbell's bottleneck delay is added (beyond it: each link's own)
            "bottleneck_delay_on": (
                "network" if self.network is not None
                else "link" if self.bottleneck_netem_delay_ns else "senders_ack_paths"
            ),  # fmt: skip
            "bottleneck_netem_delay_ns": self.bottleneck_netem_delay_ns,
            "senders": [s.__dict__ for s in self.senders],
            "flows": [f.__dict__ for f in self.flows],
        }


def _linux_options(exp: Experiment) -> tuple[str, str]:
    opts = getattr(exp, "linux", None)
    offloads = getattr(opts, "offloads", "host") if opts is not None else "host"
    delay = getattr(opts, "delay", "auto") if opts is not None else "auto"
    return str(offloads), str(delay)


def make_plan(exp: Experiment, kernel: KernelInfo) -> LinuxPlan:
    """The kernel run for ``exp``; :class:`BackendError` lists every problem."""
    problems: list[str] = []

    def lacks_qdisc(kind: str) -> bool:
        return kernel.has_qdisc(kind) is False

    e = exp.experiment
    offloads, delay_opt = _linux_options(exp)
    mtu = max(f.mss for f in exp.flows) + HEADER_BYTES
    # --- the network: every shaped direction, and beyond the dumbbell the routes
    if lacks_qdisc("tbf"):
        problems.append("shaping the links needs the tbf qdisc, which this kernel does not provide")
    network = None
    if exp.topology is not None:
        network = network_plan(exp, mtu, kernel, problems)
        bottleneck = next(q for q in network.queues() if q.link == exp.primary_link().name)
    else:
        link = exp.links()[0]
        bottleneck = link_queue(exp, link, False, mtu, kernel, problems)
        if link.spec.reverse is not None:
            problems.append(
                "bottleneck.reverse: the linux backend's dumbbell does not shape the ACK direction; a parking lot of "
                "one hop ([topology] kind = 'parking_lot') shapes both directions of its link"
            )
        if link.spec.reverse_loss != 0.0:
            require_netem(
                f"bottleneck.reverse_loss = {loss_text(link.spec.reverse_loss)} (random loss)", kernel, problems
            )
    for i, s in enumerate(exp.senders):
        for field in ("access_loss", "access_reverse_loss"):
            loss = getattr(s, field)
            if loss != 0.0:
                require_netem(f"senders[{i}].{field} = {loss_text(loss)} (random loss)", kernel, problems)
        if s.jitter > 0:
            require_jitter(f"senders[{i}].jitter", s.jitter, kernel, problems)
            if s.delay_path != "ack":
                problems.append(
                    f"senders[{i}].jitter with delay_path = {s.delay_path!r}: the linux backend adds a sender's whole "
                    "delay on its ACK path (netem delay D J there), so only delay_path = 'ack' has the same per-packet "
                    "delays on both backends"
                )
    # --- delay emulation
    # The dumbbell folds its bottleneck's delay into each sender's ACK-path delay (one
    # delay element per sender, which the delay line can be), unless the bottleneck has
    # jitter (netem's, so the kernel has netem): then its delay D (with the jitter J) is
    # netem's on the link itself, ahead of its tbf and on the receiver's egress (every
    # ACK), so the data are jittered and reordered, and the senders' paths add 2 D less.
    link_delay = 0
    if network is None and exp.links()[0].spec.jitter > 0:
        link_delay = exp.links()[0].spec.delay
    routes_rtt = (
        [r.propagation_rtt_ns for r in network.routes] if network is not None else [2 * link_delay] * len(exp.senders)
    )
    needs_delay = any(exp.sender_rtt(i) - routes_rtt[i] > NATURAL_RTT_NS for i in range(len(exp.senders)))
    if network is not None:
        needs_delay = needs_delay or any(q.delay_ns > 0 for q in network.queues())
    needs_delay = needs_delay or link_delay > 0
    if delay_opt == "netem" and lacks_qdisc("netem"):
        problems.append(
            "linux.delay = 'netem': delay emulation needs the netem qdisc, which this kernel does not provide"
        )
    jittered = [f"senders[{i}].jitter" for i, s in enumerate(exp.senders) if s.jitter > 0]
    jittered += [f"{ln.path}.jitter" for ln in exp.links() if ln.spec.jitter > 0]
    if delay_opt == "delayline" and jittered:
        problems.append(
            f"linux.delay = 'delayline' with {', '.join(jittered)}: the delay line holds every frame for the same "
            "delay; per-packet jitter needs netem (linux.delay = 'auto' or 'netem')"
        )
    if not needs_delay:
        delay_method = "none"
    elif delay_opt == "auto":
        delay_method = "netem" if kernel.has_qdisc("netem") is True else "delayline"
    else:
        delay_method = delay_opt
    # --- sampling and size
    interval = e.sample_interval or FALLBACK_SAMPLE_INTERVAL_NS
    if interval < MIN_SAMPLE_INTERVAL_NS:
        problems.append(
            f"experiment.sample_interval = {format_duration(e.sample_interval)!r} is too fine for sampling the "
            f"kernel with ss and tc; use at least {format_duration(MIN_SAMPLE_INTERVAL_NS)}"
        )
    if e.packet_events:
        problems.append(
            "experiment.packet_events = true: per-packet drop and mark rows need the simulator; the kernel's qdiscs "
            "only count them (the linux backend's links and queue_ts tables have the counts)"
        )
    n_flows = round(sum(f.expected_count(e.duration) for f in exp.flows))
    if n_flows > MAX_FLOWS:
        problems.append(f"{n_flows} flows: the linux backend runs one iperf3 pair per flow, at most {MAX_FLOWS}")
    # --- flows
    rng = random.Random(e.seed)
    per_sender: dict[int, dict[str, set[Any]]] = {}
    flows: list[FlowPlan] = []
    for i, f in enumerate(exp.flows):
        path = f"flows[{i}]"
        kcca = KERNEL_CCA.get(f.cca, f.cca)
        if kcca not in kernel.ccas:
            problems.append(
                f"{path}.cca = {f.cca!r} needs the kernel CCA {kcca!r}, which this kernel does not provide "
                f"(it has: {', '.join(kernel.ccas) or 'none'})"
            )
        traffic = [
            k for k in TRAFFIC_FIELDS if getattr(f, k) != type(f).model_fields[k].get_default(call_default_factory=True)
        ]
        if traffic:
            named = [f"{k} = {getattr(f, k)!r}" if k in ("transport", "arrival") else k for k in traffic]
            problems.append(
                f"{path}: {', '.join(named)} (docs/traffic.md) are simulator features the linux backend does not run: "
                "it runs TCP flows that are bulk, sized (size) or rate-limited (rate, iperf3 -b), each started once at "
                f"its start (arrival = 'fixed', count copies), at most {MAX_FLOWS} in all"
            )
        if f.rate is not None and f.size is not None:
            problems.append(
                f"{path}.rate with {path}.size: the sized-flow tool sends as fast as TCP allows; the linux backend "
                "rate-limits bulk flows only (iperf3 -b)"
            )
        if f.handshake is False:
            problems.append(f"{path}.handshake = false: kernel connections always open with a handshake")
        if f.params:
            problems.append(
                f"{path}.params: CCA parameters cannot be set per flow in the kernel (module parameters are global); "
                "remove them for the linux backend"
            )
        if f.pacing and kcca != "bbr":
            problems.append(
                f"{path}.pacing = true for {f.cca!r} needs the fq qdisc on the sender, which the linux backend does not "
                "set up"
            )
        if f.stop is not None and (f.stop - f.start) % 1_000_000_000:
            problems.append(
                f"{path}.stop: iperf3 runs whole seconds, so stop - start must be a whole number of seconds "
                f"(it is {format_duration(f.stop - f.start)})"
            )
        sender = exp.sender_index(f)
        attrs = per_sender.setdefault(
            sender, {"initial_cwnd": set(), "delayed_ack": set(), "min_rto": set(), "ecn": set()}
        )
        attrs["initial_cwnd"].add(f.initial_cwnd)
        attrs["delayed_ack"].add(f.delayed_ack)
        attrs["min_rto"].add(f.min_rto)
        attrs["ecn"].add(f.ecn)
        size = None
        if f.size is not None:
            size = int(f.size.value) * (f.mss if f.size.kind == "packets" else 1)
        rwnd = None
        if f.rwnd is not None:
            rwnd = int(f.rwnd.value) * (f.mss if f.rwnd.kind == "packets" else 1)
        for _ in range(f.count):
            fid = len(flows)
            jitter = int(rng.random() * f.start_jitter) if f.start_jitter else 0
            flows.append(
                FlowPlan(
                    flow_id=fid,
                    sender=sender,
                    sender_name=exp.senders[sender].name,
                    group=f.name or f.cca,
                    cca=f.cca,
                    kernel_cca=kcca,
                    start_ns=f.start + jitter,
                    stop_ns=None if f.stop is None else f.stop + jitter,
                    size_bytes=size,
                    mss=f.mss,
                    rwnd_bytes=rwnd,
                    rate_bps=f.rate,
                    server_port=SERVER_PORT_BASE + fid,
                    client_port=CLIENT_PORT_BASE + fid,
                )
            )
    hosts: dict[str, dict[str, Any]] = exp.derived().get("hosts", {})
    gro_sizes = {int(hosts.get(s.name, {}).get("gro_max_size", 65536)) for s in exp.senders}
    if offloads == "host" and len(gro_sizes) > 1 and network is None:
        problems.append(
            f"the senders' hosts differ in gro_max_size ({', '.join(map(str, sorted(gro_sizes)))}); the kernel run "
            "has one receiving device, so they must agree"
        )
    senders: list[SenderPlan] = []
    for si, s in enumerate(exp.senders):
        host = hosts.get(s.name, {})
        attrs = per_sender.get(
            si, {"initial_cwnd": {10}, "delayed_ack": {True}, "min_rto": {LINUX_DEFAULT_RTO_MIN_NS}, "ecn": {False}}
        )
        for key, values in attrs.items():
            if len(values) > 1:
                problems.append(
                    f"senders[{si}] ({s.name!r}): its flows differ in {key} ({', '.join(map(str, sorted(values)))}); "
                    "the kernel sets it per route, so flows of one sender must agree"
                )
        queue = None
        if s.access_queue is not None:
            queue = (
                int(s.access_queue.value)
                if s.access_queue.kind == "packets"
                else max(1, math.ceil(int(s.access_queue.value) / exp.packet_bytes()))
            )
        senders.append(
            SenderPlan(
                index=si,
                name=s.name,
                rtt_ns=exp.sender_rtt(si),
                access_rate_bps=s.access_rate,
                access_queue_pkts=queue,
                initial_cwnd=min(attrs["initial_cwnd"]),
                quickack=not all(attrs["delayed_ack"]),
                rto_min_ns=min(attrs["min_rto"]),
                ecn=any(attrs["ecn"]),
                gso_max_segs=int(host.get("gso_max_segs", 65535)),
                gso_max_size=int(host.get("gso_max_size", 65536)),
                delay_path=str(getattr(s, "delay_path", "ack")),
                route_rtt_ns=routes_rtt[si],
                gro_max_size=int(host.get("gro_max_size", 65536)),
                access_loss_netem=netem_loss_args(s.access_loss),
                access_reverse_loss_netem=netem_loss_args(s.access_reverse_loss),
                jitter_ns=s.jitter,
            )
        )
    if problems:
        raise BackendError("linux", problems)
    return LinuxPlan(
        duration_ns=e.duration,
        warmup_ns=e.warmup,
        sample_interval_ns=interval,
        bottleneck=bottleneck,
        mtu=mtu,
        offloads=offloads,
        receiver_gro_max_size=max(gro_sizes) if gro_sizes else 65536,
        delay_method=delay_method,
        senders=tuple(senders),
        flows=tuple(flows),
        network=network,
        ack_loss_netem=netem_loss_args(exp.links()[0].spec.reverse_loss) if network is None else (),
        bottleneck_netem_delay_ns=link_delay,
    )
