"""The namespaces, links and queues of one kernel run, and their removal.

Topology (``P`` = ``ccbl-<run id>-``)::

    P s<i> eth0 ──veth── a<i> P r b0 ──veth── eth0 P d          (data: sender → receiver)
    P s<i> eth1 ◀─veth── out P l<i> in ◀─veth── dl<i> P r       (ACKs, only with a delay line)

``r`` routes between the senders and the receiver ``d``; the bottleneck is ``r``'s
egress ``b0`` (tbf for the rate, a pfifo/bfifo child for the queue). When a sender's
RTT needs added delay and the kernel has no netem, ``r`` routes that sender's ACKs
through namespace ``l<i>``, where the userspace delay line
(:mod:`ccbench.backends.linux.delayline`) holds each frame for the delay and passes it
to the sender's second interface. A bottleneck with ``jitter`` (netem kernels only) has
its delay on the link instead: ``netem delay D J`` as ``b0``'s root ahead of the tbf, and
on ``d``'s ``eth0``, which every ACK leaves by. Addresses are 10.201.<i>.0/24 (senders),
10.202.0.0/24 (receiver) and 10.203.<i>.0/24 (delay links), all inside the run's own
namespaces, which are connected to nothing else.

Every namespace of a run is listed in a state file (``/run/ccbench-linux/<id>.json``)
with the owner's pid before it is created, so ``ccbench linux cleanup`` can tell a
live run from a crashed one.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .netem import netem_args
from .netplan import TBF_BURST_PACKETS, QueuePlan
from .plan import ETHERNET_HEADER, LinuxPlan, SenderPlan
from .sampling import QueueProbe
from .system import NAMESPACE_PREFIX, CommandError, cmd, in_ns

__all__ = ["STATE_DIR", "Topology", "cleanup_leftovers", "list_our_namespaces", "new_run_id"]

STATE_DIR = Path(os.environ.get("CCBENCH_LINUX_STATE_DIR", "/run/ccbench-linux"))
RECEIVER_ADDR = "10.202.0.2"
BOTTLENECK_HANDLE = "10:"
ACCESS_HANDLE = "20:"
#: A shaped direction's root: tbf, or netem ahead of the tbf (then the tbf is its child ``2:``).
ROOT_HANDLE = "1:"
TBF_UNDER_NETEM = "2:"
#: The size table takes the Ethernet header off every packet (on the root, which sets the
#: length every child sees).
STAB = ("stab", "overhead", str(-ETHERNET_HEADER))
#: Receive/send buffers large enough never to limit a flow, as the simulator's default rwnd.
BUFFERS = ("net.ipv4.tcp_rmem=4096 131072 67108864", "net.ipv4.tcp_wmem=4096 16384 67108864",
           "net.ipv4.tcp_no_metrics_save=1")  # fmt: skip


def new_run_id() -> str:
    return uuid.uuid4().hex[:8]


def sender_addr(i: int) -> str:
    return f"10.201.{i}.1"


def mac(kind: int, i: int, side: int) -> str:
    """Locally administered, unique within a run: 02:cc:<kind>:<i hi>:<i lo>:<side>."""
    return f"02:cc:{kind:02x}:{(i >> 8) & 0xFF:02x}:{i & 0xFF:02x}:{side:02x}"


def _proc_start_time(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]  # field 22: starttime


def list_our_namespaces() -> list[str]:
    """Every network namespace whose name has our prefix."""
    out = cmd(["ip", "netns", "list"], check=False).stdout
    names = [line.split()[0] for line in out.splitlines() if line.strip()]
    return sorted(n for n in names if n.startswith(NAMESPACE_PREFIX))


def _kill_namespace_processes(ns: str) -> list[int]:
    pids = [int(p) for p in cmd(["ip", "netns", "pids", ns], check=False).stdout.split() if p.isdigit()]
    for sig in (signal.SIGTERM, signal.SIGKILL):
        alive = []
        for pid in pids:
            try:
                os.kill(pid, sig)
                alive.append(pid)
            except ProcessLookupError:
                pass
        if not alive:
            break
        time.sleep(0.3)
        pids = [p for p in alive if Path(f"/proc/{p}").exists()]
    return pids


def _delete_namespace(ns: str) -> None:
    _kill_namespace_processes(ns)
    cmd(["ip", "netns", "del", ns], check=False)


def _owner_alive(state: dict[str, Any]) -> bool:
    pid = int(state.get("pid", -1))
    return pid > 0 and _proc_start_time(pid) == state.get("pid_start")


def cleanup_leftovers(*, dry_run: bool = False) -> dict[str, list[str]]:
    """Remove the namespaces (with their interfaces and processes) and state files of
    runs whose owner is gone. Namespaces of a live run are left alone. Returns
    ``{"removed": [...], "kept": [...]}``."""
    live: set[str] = set()
    dead_states: list[Path] = []
    if STATE_DIR.is_dir():
        for path in sorted(STATE_DIR.glob("*.json")):
            try:
                state = json.loads(path.read_text())
            except (OSError, json.JSONDecodeError):
                dead_states.append(path)
                continue
            if _owner_alive(state):
                live.update(state.get("namespaces", []))
            else:
                dead_states.append(path)
    removed, kept = [], []
    for ns in list_our_namespaces():
        if ns in live or _probe_alive(ns):
            kept.append(ns)
            continue
        removed.append(ns)
        if not dry_run:
            _delete_namespace(ns)
    if not dry_run:
        for path in dead_states:
            path.unlink(missing_ok=True)
    return {"removed": removed, "kept": kept}


def _probe_alive(ns: str) -> bool:
    """A capability-probe namespace (``ccbl-probe-<pid>-<hex>``) of a live process."""
    parts = ns.removeprefix(NAMESPACE_PREFIX).split("-")
    if len(parts) == 3 and parts[0] == "probe" and parts[1].isdigit():
        return Path(f"/proc/{parts[1]}").exists()
    return False


@dataclass
class Topology:
    """Builds the run's namespaces from a :class:`LinuxPlan` and removes them."""

    plan: LinuxPlan
    run_id: str = field(default_factory=new_run_id)
    created: list[str] = field(default_factory=list)
    offload_report: dict[str, Any] = field(default_factory=dict)

    @property
    def prefix(self) -> str:
        return f"{NAMESPACE_PREFIX}{self.run_id}-"

    @property
    def router(self) -> str:
        return self.prefix + "r"

    @property
    def receiver(self) -> str:
        return self.prefix + "d"

    def sender_ns(self, i: int) -> str:
        return self.prefix + f"s{i}"

    def receiver_ns(self, sender: int) -> str:
        """The namespace of sender ``sender``'s receivers (the iperf3 servers)."""
        return self.receiver

    def receiver_addr(self, sender: int) -> str:
        return RECEIVER_ADDR

    def access_router(self, sender: int) -> str:
        """The router a sender is attached to (where its ACKs turn into its delay line)."""
        return self.router

    def access_queue(self, s: SenderPlan) -> QueuePlan | None:
        """A sender's shaped access link (only when the spec gives ``access_rate``)."""
        if s.access_rate_bps is None:
            return None
        return QueuePlan(f"access_fwd:{s.name}", s.access_rate_bps, (), "pfifo", s.access_queue_pkts or 1000,
                         TBF_BURST_PACKETS * self.plan.mtu, loss_netem=s.access_loss_netem)  # fmt: skip

    def probe(self, q: QueuePlan, ns: str, dev: str, handle: str) -> QueueProbe:
        """Where ``q``'s queue is sampled; with netem ahead of it, its drops are netem's
        (the random losses plus the queue's own, which netem counts as it hands packets on)."""
        return QueueProbe(q.link, ns, dev, handle, ROOT_HANDLE if self.netem_ahead(q) else None)

    def shaped(self) -> list[tuple[QueuePlan, QueueProbe]]:
        """Every shaped queue with where it is (sampled into ``queue_ts`` and ``links``)."""
        out = [(self.plan.bottleneck, self.probe(self.plan.bottleneck, self.router, "b0", BOTTLENECK_HANDLE))]
        out += self.access_shaped()
        return out

    def access_shaped(self) -> list[tuple[QueuePlan, QueueProbe]]:
        out = []
        for s in self.plan.senders:
            q = self.access_queue(s)
            if q is not None:
                out.append((q, self.probe(q, self.sender_ns(s.index), "eth0", ACCESS_HANDLE)))
        return out

    def link_netem_delay(self, q: QueuePlan) -> int:
        """A link direction's delay that netem adds ahead of its tbf. In the dumbbell, the
        bottleneck's only when it has jitter (:attr:`LinuxPlan.bottleneck_netem_delay_ns`);
        otherwise its delay is part of the senders' RTTs, added on their ACK paths."""
        return self.plan.bottleneck_netem_delay_ns if q.link == self.plan.bottleneck.link else 0

    def netem_ahead(self, q: QueuePlan) -> list[str] | None:
        """The netem that a shaped direction gets ahead of its tbf at build time (its
        delay; the loss is added by :meth:`netem_loss`), or None when it needs none."""
        delay = self.link_netem_delay(q)
        return netem_args(delay) if q.loss_netem or delay else None

    def link_delay_lines(self) -> list[dict[str, Any]]:
        """Delay lines inside network links (none in the dumbbell): ``delay_line_args`` dicts."""
        return []

    def delay_ns(self, i: int) -> str:
        return self.prefix + f"l{i}"

    def delayed_senders(self) -> list[SenderPlan]:
        return [s for s in self.plan.senders if s.needs_delay] if self.plan.delay_method != "none" else []

    def namespaces(self) -> list[str]:
        names = [self.router, self.receiver, *(self.sender_ns(s.index) for s in self.plan.senders)]
        if self.plan.delay_method == "delayline":
            names += [self.delay_ns(s.index) for s in self.delayed_senders()]
        return names

    # ---- state file

    def _state_path(self) -> Path:
        return STATE_DIR / f"{self.run_id}.json"

    def _write_state(self) -> None:
        STATE_DIR.mkdir(parents=True, exist_ok=True)
        state = {
            "pid": os.getpid(),
            "pid_start": _proc_start_time(os.getpid()),
            "namespaces": self.namespaces(),
            "created_at": time.time(),
        }
        tmp = self._state_path().with_suffix(".tmp")
        tmp.write_text(json.dumps(state))
        os.replace(tmp, self._state_path())

    # ---- building

    def _veth(
        self,
        ns_a: str,
        dev_a: str,
        mac_a: str,
        ns_b: str,
        dev_b: str,
        mac_b: str,
        *,
        host_a: dict[str, int] | None = None,
        host_b: dict[str, int] | None = None,
    ) -> None:
        cmd(["ip", "link", "add", dev_a, "netns", ns_a, "address", mac_a, "type", "veth",
             "peer", "name", dev_b, "netns", ns_b, "address", mac_b])  # fmt: skip
        for ns, dev, host in ((ns_a, dev_a, host_a), (ns_b, dev_b, host_b)):
            cmd(["ip", "-n", ns, "link", "set", "dev", dev, "mtu", str(self.plan.mtu)])
            self._offloads(ns, dev, host or {})
            cmd(["ip", "-n", ns, "link", "set", "dev", dev, "up"])

    def _offloads(self, ns: str, dev: str, host: dict[str, int]) -> None:
        """``offloads = "host"``: segmentation in software (TSO and GSO off), so the wire
        carries single packets as the simulator's links do, while the sizes of the skbs
        TCP builds follow the spec's host: ``gso_max_segs``/``gso_max_size`` on a
        sender's device (TCP builds GSO skbs even with device GSO off; 1 = one packet per
        send). GRO stays on everywhere -- veth reorders packets at high rates with GRO off
        -- with ``gro_max_size`` of one packet (no merging) except on the receiver's
        device, which gets the host's. ``host`` holds this device's overrides."""
        if self.plan.offloads == "host":
            segs = host.get("gso_max_segs", 1)
            size = host.get("gso_max_size", 65536)
            gro = host.get("gro_max_size", self.plan.mtu)
            cmd(in_ns(ns, "ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "on"))
            cmd(["ip", "-n", ns, "link", "set", "dev", dev, "gso_max_segs", str(segs), "gso_max_size", str(size),
                 "gro_max_size", str(gro)])  # fmt: skip
        features = cmd(in_ns(ns, "ethtool", "-k", dev), check=False).stdout
        wanted = ("tcp-segmentation-offload", "generic-segmentation-offload", "generic-receive-offload",
                  "tx-checksumming")  # fmt: skip
        report = {
            line.split(":")[0].strip(): line.split(":")[1].strip()
            for line in features.splitlines()
            if line.split(":")[0].strip() in wanted
        }
        link = cmd(["ip", "-n", ns, "-d", "-j", "link", "show", "dev", dev], check=False).stdout
        try:
            info = json.loads(link)[0]
            for key in ("gso_max_segs", "gso_max_size", "gro_max_size", "mtu"):
                if key in info:
                    report[key] = info[key]
        except (json.JSONDecodeError, IndexError, KeyError):
            pass
        self.offload_report[f"{ns.removeprefix(self.prefix)}/{dev}"] = report

    def _add_namespaces(self) -> None:
        self._write_state()
        for ns in self.namespaces():
            cmd(["ip", "netns", "add", ns])
            self.created.append(ns)
            cmd(["ip", "-n", ns, "link", "set", "dev", "lo", "up"])
            # no IPv6 chatter (router solicitations, neighbour discovery) on our links
            cmd(in_ns(ns, "sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1",
                      "net.ipv6.conf.default.disable_ipv6=1"))  # fmt: skip

    @staticmethod
    def _make_router(ns: str) -> None:
        cmd(in_ns(ns, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1", "net.ipv4.conf.all.rp_filter=0",
                  "net.ipv4.conf.default.rp_filter=0"))  # fmt: skip

    def _sender(self, s: SenderPlan, router: str) -> None:
        """Sender ``s``'s namespace and its link to ``router`` (device ``a<i>`` there)."""
        i, sn = s.index, self.sender_ns(s.index)
        # iperf3 sets TCP_CONGESTION after connect(): each flow starts with the
        # namespace's default CCA. A default of bbr would leave TCP's internal pacing
        # on (bbr_init sets SK_PACING_NEEDED; switching CCA keeps it), so "cubic" and
        # "reno" flows would be paced. reno never turns pacing on (and a child namespace
        # may only default to a CCA in tcp_allowed_congestion_control, "reno bbr" here).
        cmd(in_ns(sn, "sysctl", "-q", "-w", *BUFFERS, f"net.ipv4.tcp_ecn={1 if s.ecn else 0}",
                  "net.ipv4.tcp_congestion_control=reno",
                  "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0"))  # fmt: skip
        sender_host = {"gso_max_segs": s.gso_max_segs, "gso_max_size": s.gso_max_size}
        self._veth(sn, "eth0", mac(2, i, 1), router, f"a{i}", mac(2, i, 2), host_a=sender_host)
        cmd(["ip", "-n", sn, "addr", "add", f"{sender_addr(i)}/24", "dev", "eth0"])
        cmd(["ip", "-n", router, "addr", "add", f"10.201.{i}.254/24", "dev", f"a{i}"])
        route = ["ip", "-n", sn, "route", "add", "default", "via", f"10.201.{i}.254", "dev", "eth0",
                 "initcwnd", str(s.initial_cwnd)]  # fmt: skip
        if s.rto_min_ns != 200_000_000:
            route += ["rto_min", f"{s.rto_min_ns // 1000}us"]
        cmd(route)

    def _route_back(self, s: SenderPlan, receiver: str, via: str) -> None:
        """The receiver's route to sender ``s`` (``quickack`` when its flows disable delayed ACKs)."""
        back = ["ip", "-n", receiver, "route", "add", f"10.201.{s.index}.0/24", "via", via, "dev", "eth0"]
        if s.quickack:
            back += ["quickack", "1"]
        cmd(back)

    def build(self) -> None:
        """Create everything. On any failure the caller must call :meth:`teardown`."""
        self._add_namespaces()
        p = self.plan
        r, d = self.router, self.receiver
        self._make_router(r)
        cmd(in_ns(d, "sysctl", "-q", "-w", *BUFFERS))
        self._veth(r, "b0", mac(1, 0, 1), d, "eth0", mac(1, 0, 2), host_b={"gro_max_size": p.receiver_gro_max_size})
        cmd(["ip", "-n", r, "addr", "add", "10.202.0.1/24", "dev", "b0"])
        cmd(["ip", "-n", d, "addr", "add", f"{RECEIVER_ADDR}/24", "dev", "eth0"])
        for s in p.senders:
            self._sender(s, r)
            self._route_back(s, d, "10.202.0.1")
        for s in self.delayed_senders():
            if p.delay_method == "delayline":
                self._delay_link(s)
        self._shape_all()
        if p.bottleneck_netem_delay_ns:
            # the bottleneck's reverse direction: every ACK leaves the receiver by eth0
            # (its jitter and ``reverse_loss`` come with :meth:`netem_loss`)
            self._netem(d, "eth0", p.bottleneck_netem_delay_ns, ())

    def _shape_all(self) -> None:
        for q, probe in self.shaped():
            self._shape(probe.ns, probe.dev, q, probe.handle)

    def _delay_link(self, s: SenderPlan) -> None:
        """The sender's ACKs leave its router through namespace ``l<i>``, where the delay line holds them."""
        i, sn, ln, r = s.index, self.sender_ns(s.index), self.delay_ns(s.index), self.access_router(s.index)
        self._veth(r, f"dl{i}", mac(3, i, 1), ln, "in", mac(3, i, 2))
        self._veth(ln, "out", mac(3, i, 3), sn, "eth1", mac(3, i, 4))
        # checksums are computed before the frame leaves the router, so the delay line
        # can pass the bytes on as they are
        cmd(in_ns(r, "ethtool", "-K", f"dl{i}", "tx", "off"))
        cmd(["ip", "-n", r, "addr", "add", f"10.203.{i}.1/24", "dev", f"dl{i}"])
        cmd(["ip", "-n", r, "neigh", "replace", f"10.203.{i}.2", "lladdr", mac(3, i, 2), "dev", f"dl{i}",
             "nud", "permanent"])  # fmt: skip
        cmd(["ip", "-n", r, "route", "replace", f"{sender_addr(i)}/32", "via", f"10.203.{i}.2", "dev", f"dl{i}"])
        cmd(in_ns(sn, "sysctl", "-q", "-w", "net.ipv4.conf.eth1.rp_filter=0"))

    def delay_line_args(self, s: SenderPlan, delay_ns: int) -> dict[str, Any]:
        i = s.index
        return {"ns": self.delay_ns(i), "src_dev": "in", "dst_dev": "out", "delay_ns": delay_ns,
                "dst_mac": mac(3, i, 4), "src_mac": mac(3, i, 3)}  # fmt: skip

    def netem_delay(self, s: SenderPlan, delay_ns: int) -> None:
        """Delay the ACKs toward sender ``s`` with netem on the router (kernels that have it);
        :meth:`netem_loss` adds the loss after the path's RTT is measured."""
        self._netem(self.access_router(s.index), f"a{s.index}", delay_ns, ())

    def netem_loss(self, delays: dict[int, int]) -> None:
        """Random loss and per-packet delay jitter (kernels with netem), added after the
        idle path's RTT was measured so that ping sees no loss, and the minimum of its
        pings is not pulled below the mean delay by the jitter (the sender's added delay
        is the RTT less that minimum). A shaped direction (a link's, or an access link with
        ``access_rate``) has netem ahead of its tbf already: its loss is a change of that
        netem, so packets are lost on entry to the queue, as in the simulator. Unshaped,
        each direction has a device of its own: the sender's data leaves by ``eth0``; the
        ACKs toward it leave its router by ``a<i>`` (or ``dl<i>``, into the delay line),
        where netem may also hold the ACK path's added delay; the dumbbell's ACKs all
        leave the receiver by ``eth0`` (``bottleneck.reverse_loss``, and with
        ``bottleneck.jitter`` the bottleneck's reverse delay D J)."""
        for q, probe in self.shaped():
            delay = self.link_netem_delay(q)
            jitter = q.jitter_ns if delay else 0  # (the plan refuses jitter without netem's delay)
            if q.loss_netem or jitter:
                cmd(["tc", "-n", probe.ns, "qdisc", "change", "dev", probe.dev, "root", "handle", ROOT_HANDLE, *STAB,
                     *netem_args(delay, q.loss_netem, jitter)])  # fmt: skip
        for s in self.plan.senders:
            if s.access_loss_netem and s.access_rate_bps is None:
                self._netem(self.sender_ns(s.index), "eth0", 0, s.access_loss_netem)
            if s.access_reverse_loss_netem or s.jitter_ns:
                via_line = self.plan.delay_method == "delayline" and s.index in delays
                dev = f"dl{s.index}" if via_line else f"a{s.index}"
                netem_delay = delays.get(s.index, 0) if self.plan.delay_method == "netem" else 0
                self._netem(self.access_router(s.index), dev, netem_delay, s.access_reverse_loss_netem, s.jitter_ns)
        p = self.plan
        if p.ack_loss_netem or p.bottleneck_netem_delay_ns:
            self._netem(self.receiver, "eth0", p.bottleneck_netem_delay_ns, p.ack_loss_netem,
                        p.bottleneck.jitter_ns if p.bottleneck_netem_delay_ns else 0)  # fmt: skip

    @staticmethod
    def _netem(ns: str, dev: str, delay_ns: int, loss: tuple[str, ...], jitter_ns: int = 0) -> None:
        cmd(["tc", "-n", ns, "qdisc", "replace", "dev", dev, "root", *netem_args(delay_ns, loss, jitter_ns)])

    def _shape(self, ns: str, dev: str, q: QueuePlan, handle: str, verb: str = "replace") -> None:
        """tbf for the rate with the queue as its child; with netem ahead of it (loss on
        entry, or a link's delay), netem is the root and the tbf its child, the set-up
        of tc-netem(8)'s rate-control example: netem hands each packet on to the tbf
        when its delay is over, and the tbf shapes what leaves the device."""
        netem = self.netem_ahead(q)
        tc = ["tc", "-n", ns, "qdisc"]
        if netem is None:
            # (a change without the size table would remove it)
            cmd([*tc, verb, "dev", dev, "root", "handle", ROOT_HANDLE, *STAB, "tbf", *q.tbf_args()])
            tbf = ROOT_HANDLE
        else:
            if verb == "replace":
                cmd([*tc, "replace", "dev", dev, "root", "handle", ROOT_HANDLE, *STAB, *netem])
            cmd([*tc, "add" if verb == "replace" else "change", "dev", dev, "parent", f"{ROOT_HANDLE}1", "handle",
                 TBF_UNDER_NETEM, "tbf", *q.tbf_args()])  # fmt: skip
            tbf = TBF_UNDER_NETEM
        # Changing tbf resets a fifo child's limit to tbf's own, so the child is set again at once.
        cmd([*tc, "add" if verb == "replace" else "change", "dev", dev, "parent", f"{tbf}1", "handle", handle,
             *q.child()])  # fmt: skip

    def change_rate(self, q: QueuePlan, probe: QueueProbe, rate_bps: int) -> None:
        """A ``rate_schedule`` step of one shaped queue."""
        self._shape(probe.ns, probe.dev, dataclasses.replace(q, rate_bps=rate_bps), probe.handle, "change")

    def qdisc_report(self) -> dict[str, Any]:
        out = {}
        devices = [(probe.ns, probe.dev) for _, probe in self.shaped()]
        devices += [(self.sender_ns(s.index), "eth0") for s in self.plan.senders]
        devices += [(self.receiver_ns(s.index), "eth0") for s in self.plan.senders]
        for ns, dev in dict.fromkeys(devices):
            text = cmd(["tc", "-n", ns, "-j", "qdisc", "show", "dev", dev], check=False).stdout
            try:
                out[f"{ns.removeprefix(self.prefix)}/{dev}"] = json.loads(text)
            except json.JSONDecodeError:
                out[f"{ns.removeprefix(self.prefix)}/{dev}"] = text
        return out

    def ping(self, sender: int, count: int = 20) -> dict[str, float]:
        """RTT of the idle path from sender ``sender`` to the receiver, in ns."""
        proc = cmd(in_ns(self.sender_ns(sender), "ping", "-q", "-n", "-c", str(count), "-i", "0.01", "-W", "1",
                         self.receiver_addr(sender)), check=False)  # fmt: skip
        for line in proc.stdout.splitlines():
            if line.startswith("rtt") or line.startswith("round-trip"):
                mn, avg, mx = (float(x) for x in line.split("=")[1].split()[0].split("/")[:3])
                return {"min_ns": mn * 1e6, "avg_ns": avg * 1e6, "max_ns": mx * 1e6}
        raise CommandError(proc.args, proc.returncode, proc.stderr or proc.stdout)

    # ---- removal

    def teardown(self) -> list[str]:
        """Kill every process in our namespaces and delete them; return any that remain."""
        for ns in reversed(self.created):
            _delete_namespace(ns)
        left = [ns for ns in self.created if ns in list_our_namespaces()]
        if not left:
            self._state_path().unlink(missing_ok=True)
        self.created = left
        return left


def popen_in_ns(ns: str, argv: Sequence[str], *, stdout: Any, stderr: Any = subprocess.DEVNULL,
                env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:  # fmt: skip
    """Start a long-running tool inside ``ns``. ``setpriv --pdeathsig KILL`` makes the
    kernel kill it if this process dies (even by SIGKILL); its own session keeps a
    terminal's Ctrl-C from reaching it before we stop it in order."""
    return subprocess.Popen(
        ["setpriv", "--pdeathsig", "KILL", "--", *in_ns(ns, *argv)],
        stdout=stdout,
        stderr=stderr,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        env=env,
    )
