"""A parking lot or graph in namespaces: a router namespace per node, a veth pair per
link, a receiver per sender at the end of its route, and a route per sender in every
router it crosses.

Layout (``P`` = ``ccbl-<run id>-``; ``k`` a link, ``i`` a sender, ``j`` a router)::

    P s<i> eth0 ──veth── a<i> P n<src> … k<k> ──veth── k<k> … P n<dst> e<i> ──veth── eth0 P d<i>
    a link with a delay:  P n<u> k<k> ──veth── xs P x<k> xd ──veth── k<k> P n<v>

Each link direction's egress (``k<k>`` in the router it leaves) gets ``tbf`` with the
direction's rate and a ``pfifo``/``bfifo`` child with its limit, as the dumbbell's
bottleneck does; the reverse direction (ACKs, and the data of senders routed against
the link) by default a 1000-packet pfifo at the forward rate, as in the simulator.
On a kernel with netem, a link direction's delay (and random loss) is a netem ahead of
its tbf. Without netem, a link with a propagation delay runs through namespace ``x<k>``, which has no
addresses and no forwarding: two delay lines there (:mod:`.delayline`), one per
direction, hold each frame for the link's delay (the routers reach each other's
addresses through permanent neighbour entries, as the delay lines pass only IPv4).
A sender's RTT beyond its route's propagation RTT is added on its ACK path as in the
dumbbell (namespace ``l<i>`` between its first router and its second interface).

Addresses: sender i 10.201.i.1/24 (its router 10.201.i.254), receiver i
10.202.i.2/24 (its router 10.202.i.1), link k 10.204.k.1 at ``src`` and 10.204.k.2 at
``dst``; each router routes 10.202.i.0/24 (data) and 10.201.i.0/24 (ACKs) along
sender i's route, so every flow crosses the links the spec's routing gives it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .netns import BOTTLENECK_HANDLE, BUFFERS, Topology, mac
from .netplan import LinkPlan, NetworkPlan, QueuePlan
from .sampling import QueueProbe
from .system import cmd, in_ns

__all__ = ["NetworkTopology"]

#: MAC kinds (:func:`mac`): network links and receivers (1-3 are the dumbbell's).
LINK_MAC, RECEIVER_MAC = 4, 5


def link_addr(k: int, src_side: bool) -> str:
    return f"10.204.{k}.{1 if src_side else 2}"


@dataclass
class NetworkTopology(Topology):
    """Builds a :class:`NetworkPlan`'s routers, links and routes (see the module)."""

    @property
    def net(self) -> NetworkPlan:
        assert self.plan.network is not None
        return self.plan.network

    def node_ns(self, j: int) -> str:
        return self.prefix + f"n{j}"

    def link_ns(self, k: int) -> str:
        return self.prefix + f"x{k}"

    def receiver_ns(self, sender: int) -> str:
        return self.prefix + f"d{sender}"

    def receiver_addr(self, sender: int) -> str:
        return f"10.202.{sender}.2"

    def access_router(self, sender: int) -> str:
        return self.node_ns(self.net.routes[sender].nodes[0])

    def delayed_links(self) -> list[LinkPlan]:
        """Links whose delay a delay line in namespace ``x<k>`` adds (with netem: none)."""
        if self.plan.delay_method != "delayline":
            return []
        return [ln for ln in self.net.links if ln.forward.delay_ns > 0]

    def link_netem_delay(self, q: QueuePlan) -> int:
        """With netem (``delay_method = "netem"``), a link direction's delay is netem's,
        ahead of its tbf: every packet entering the link waits the same delay before the
        queue instead of after it, so the queue sees the same arrivals shifted by the
        delay and hands them on at the same times as a queue followed by the delay."""
        return q.delay_ns if self.plan.delay_method == "netem" else 0

    def namespaces(self) -> list[str]:
        p = self.plan
        names = [self.node_ns(j) for j in range(len(self.net.nodes))]
        names += [self.sender_ns(s.index) for s in p.senders] + [self.receiver_ns(s.index) for s in p.senders]
        names += [self.link_ns(ln.index) for ln in self.delayed_links()]
        if self.plan.delay_method == "delayline":
            names += [self.delay_ns(s.index) for s in self.delayed_senders()]
        return names

    def shaped(self) -> list[tuple[QueuePlan, QueueProbe]]:
        out = []
        for ln in self.net.links:
            dev = f"k{ln.index}"
            out.append((ln.forward, self.probe(ln.forward, self.node_ns(ln.src), dev, BOTTLENECK_HANDLE)))
            out.append((ln.reverse, self.probe(ln.reverse, self.node_ns(ln.dst), dev, BOTTLENECK_HANDLE)))
        return out + self.access_shaped()

    def link_delay_lines(self) -> list[dict[str, Any]]:
        out = []
        for ln in self.delayed_links():
            k = ln.index
            # forward: from the src router (side xs) to the dst router; reverse the other way
            out.append({"ns": self.link_ns(k), "src_dev": "xs", "dst_dev": "xd", "delay_ns": ln.forward.delay_ns,
                        "dst_mac": mac(LINK_MAC, k, 2), "src_mac": mac(LINK_MAC, k, 4), "what": ln.forward.link})  # fmt: skip
            out.append({"ns": self.link_ns(k), "src_dev": "xd", "dst_dev": "xs", "delay_ns": ln.reverse.delay_ns,
                        "dst_mac": mac(LINK_MAC, k, 1), "src_mac": mac(LINK_MAC, k, 3), "what": ln.reverse.link})  # fmt: skip
        return out

    # ---- building

    def build(self) -> None:
        """Create everything. On any failure the caller must call :meth:`teardown`."""
        self._add_namespaces()
        for j in range(len(self.net.nodes)):
            self._make_router(self.node_ns(j))
        for ln in self.net.links:
            self._link(ln)
        for s in self.plan.senders:
            route = self.net.routes[s.index]
            self._sender(s, self.node_ns(route.nodes[0]))
            self._receiver(s.index, self.node_ns(route.nodes[-1]), s.gro_max_size)
            self._route_back(s, self.receiver_ns(s.index), f"10.202.{s.index}.1")
            self._routes(s.index)
        if self.plan.delay_method == "delayline":
            for s in self.delayed_senders():
                self._delay_link(s)
        self._shape_all()

    def _link(self, ln: LinkPlan) -> None:
        k, dev = ln.index, f"k{ln.index}"
        u, v = self.node_ns(ln.src), self.node_ns(ln.dst)
        delay_line = ln in self.delayed_links()
        if not delay_line:
            self._veth(u, dev, mac(LINK_MAC, k, 1), v, dev, mac(LINK_MAC, k, 2))
        else:
            x = self.link_ns(k)
            self._veth(u, dev, mac(LINK_MAC, k, 1), x, "xs", mac(LINK_MAC, k, 3))
            self._veth(x, "xd", mac(LINK_MAC, k, 4), v, dev, mac(LINK_MAC, k, 2))
        cmd(["ip", "-n", u, "addr", "add", f"{link_addr(k, True)}/24", "dev", dev])
        cmd(["ip", "-n", v, "addr", "add", f"{link_addr(k, False)}/24", "dev", dev])
        if delay_line:
            for ns, peer, peer_mac in ((u, link_addr(k, False), mac(LINK_MAC, k, 3)),
                                       (v, link_addr(k, True), mac(LINK_MAC, k, 4))):  # fmt: skip
                # the delay lines pass the bytes on as they are: checksums are completed
                # before a frame leaves the router, and ARP does not cross them
                cmd(in_ns(ns, "ethtool", "-K", dev, "tx", "off"))
                cmd(["ip", "-n", ns, "neigh", "replace", peer, "lladdr", peer_mac, "dev", dev, "nud", "permanent"])

    def _receiver(self, i: int, router: str, gro_max_size: int) -> None:
        d = self.receiver_ns(i)
        cmd(in_ns(d, "sysctl", "-q", "-w", *BUFFERS))
        host = {"gro_max_size": gro_max_size} if self.plan.offloads == "host" else {}
        self._veth(router, f"e{i}", mac(RECEIVER_MAC, i, 1), d, "eth0", mac(RECEIVER_MAC, i, 2), host_b=host)
        cmd(["ip", "-n", router, "addr", "add", f"10.202.{i}.1/24", "dev", f"e{i}"])
        cmd(["ip", "-n", d, "addr", "add", f"{self.receiver_addr(i)}/24", "dev", "eth0"])

    def _routes(self, i: int) -> None:
        """Sender ``i``'s data (to 10.202.i.0/24) forward along its route and its ACKs
        (to 10.201.i.0/24) back, in every router of the route but the ends (there the
        subnet is directly connected)."""
        route = self.net.routes[i]
        for step, (k, forward) in enumerate(route.hops):
            ln = self.net.links[k]
            here, there = self.node_ns(route.nodes[step]), self.node_ns(route.nodes[step + 1])
            # the router the data enters from is the link's src end when it runs forward
            here_is_src = forward
            cmd(["ip", "-n", here, "route", "add", f"10.202.{i}.0/24", "via", link_addr(k, not here_is_src),
                 "dev", f"k{ln.index}"])  # fmt: skip
            cmd(["ip", "-n", there, "route", "add", f"10.201.{i}.0/24", "via", link_addr(k, here_is_src),
                 "dev", f"k{ln.index}"])  # fmt: skip
