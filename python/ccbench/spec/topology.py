"""The ``[topology]`` section: networks beyond the dumbbell, and the one view of every
topology the rest of the spec uses (:class:`NetLink`, :class:`SenderPath`).

* no ``[topology]`` (or none given): the dumbbell of ``[bottleneck]``;
* ``kind = "parking_lot"``: ``[[topology.hops]]`` in series (routers ``r0`` … ``rk``,
  hop i from ``r{i}`` to ``r{i+1}``); each sender crosses hops ``first_hop`` to
  ``last_hop`` (default: all of them — the long flow);
* ``kind = "graph"``: ``nodes`` (routers) and ``[[topology.links]]`` from ``src`` to
  ``dst``; each sender goes from router ``src`` to router ``dst`` by the shortest path
  (by propagation delay, then fewest hops) or by its given ``route``.

Every network link has the fields of ``[bottleneck]`` (rate, delay, buffer, qdisc,
shaper, loss, reverse_loss, rate_schedule, ...); its reverse direction carries ACKs
(and the data of senders routed against it) as the dumbbell's does. Routes are
resolved here, so the engine configuration lists each sender's routers explicitly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Literal, Union

from pydantic import Discriminator, Field, Tag

from .fields import Name, OptName, _Model
from .network import BottleneckSpec

if TYPE_CHECKING:
    import networkx as nx

    from .experiment import Experiment


#: The problem of a spec with neither ``[bottleneck]`` nor ``[topology]``.
MISSING_NETWORK = (
    "required key is missing (the dumbbell's [bottleneck] table, or a [topology] table with "
    "kind = 'parking_lot' or 'graph')"
)


class LinkSpec(BottleneckSpec):
    """A network link of a parking lot or graph: the fields of ``[bottleneck]`` and a name."""

    name: OptName = Field(None, description="name in the result tables (reverse: name + '_rev'); default per topology")


class ParkingLotSpec(_Model):
    """``[topology] kind = "parking_lot"``: bottlenecks in series."""

    kind: Literal["parking_lot"] = Field(description="'parking_lot'")
    hops: list[LinkSpec] = Field(
        min_length=1,
        max_length=250,
        description="the links in series, [[topology.hops]] (default names hop0, hop1, ...)",
    )


class GraphLinkSpec(LinkSpec):
    """A link of a graph: forward direction ``src`` → ``dst``."""

    src: Name = Field(description="router at the forward direction's start")
    dst: Name = Field(description="router at the forward direction's end")


class GraphSpec(_Model):
    """``[topology] kind = "graph"``: routers and the links between them."""

    kind: Literal["graph"] = Field(description="'graph'")
    nodes: list[Name] = Field(min_length=2, description="router names")
    links: list[GraphLinkSpec] = Field(min_length=1, description="[[topology.links]] (default names src-dst)")


def _kind(value: object) -> str | None:
    return value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)


TopologySpec = Annotated[
    Union[Annotated[ParkingLotSpec, Tag("parking_lot")], Annotated[GraphSpec, Tag("graph")]], Discriminator(_kind)
]


@dataclass(frozen=True)
class NetLink:
    """A network link (not an access link) of any topology."""

    #: Field path of its spec, e.g. ``bottleneck`` or ``topology.hops[1]``.
    path: str
    #: Name of its forward direction in the tables.
    name: str
    spec: BottleneckSpec


@dataclass(frozen=True)
class SenderPath:
    """A sender's resolved path: the routers its data crosses and the links between them."""

    nodes: tuple[str, ...]
    #: (index into :func:`net_links`, forward?) per hop.
    hops: tuple[tuple[int, bool], ...]
    #: Round-trip propagation delay of the network links of the path (ns).
    propagation_rtt_ns: int


def net_links(x: Experiment) -> list[NetLink]:
    """The network links of a spec, in engine order."""
    t = x.topology
    if isinstance(t, ParkingLotSpec):
        return [NetLink(f"topology.hops[{i}]", h.name or f"hop{i}", h) for i, h in enumerate(t.hops)]
    if isinstance(t, GraphSpec):
        return [NetLink(f"topology.links[{i}]", ln.name or f"{ln.src}-{ln.dst}", ln) for i, ln in enumerate(t.links)]
    assert x.bottleneck is not None  # checked: a dumbbell has one
    return [NetLink("bottleneck", "bottleneck", x.bottleneck)]


def topology_issues(x: Experiment) -> list[tuple[str, str]]:
    """Problems with the topology and the senders' places in it (each names its field)."""
    t = x.topology
    issues: list[tuple[str, str]] = []
    kind = "dumbbell" if t is None else t.kind
    if t is None and x.bottleneck is None:
        issues.append(("bottleneck", MISSING_NETWORK))
    if t is not None and x.bottleneck is not None:
        issues.append(("bottleneck", f"is not allowed with topology.kind = {kind!r}: give each link in [topology]"))
    for i, s in enumerate(x.senders):
        p = f"senders[{i}]"
        if not isinstance(t, ParkingLotSpec):
            for field in ("first_hop", "last_hop"):
                if getattr(s, field) is not None:
                    issues.append((f"{p}.{field}", f"is only for topology.kind = 'parking_lot' (this is a {kind})"))
        if not isinstance(t, GraphSpec):
            for field in ("src", "dst", "route"):
                if getattr(s, field) is not None:
                    issues.append((f"{p}.{field}", f"is only for topology.kind = 'graph' (this is a {kind})"))
        if s.rtt is None and not isinstance(t, GraphSpec):
            issues.append((f"{p}.rtt", "is required (only in a graph does it default to the route's propagation RTT)"))
    names = [ln.name for ln in net_links(x)] if (t is not None or x.bottleneck is not None) else []
    for i, n in enumerate(names):
        if n in names[:i] or n in (f"{m}_rev" for m in names):
            issues.append((f"{net_links(x)[i].path}.name", f"{n!r} is not allowed: link names must be unique"))
    if isinstance(t, ParkingLotSpec):
        k = len(t.hops)
        for i, s in enumerate(x.senders):
            first = 0 if s.first_hop is None else s.first_hop
            last = k - 1 if s.last_hop is None else s.last_hop
            for field, v in (("first_hop", first), ("last_hop", last)):
                if not 0 <= v < k:
                    issues.append(
                        (f"senders[{i}].{field}", f"{v} is not a hop index (topology.hops has {k}: 0 to {k - 1})")
                    )
            if first > last:
                issues.append((f"senders[{i}].last_hop", f"{last} is before senders[{i}].first_hop ({first})"))
    if isinstance(t, GraphSpec):
        issues.extend(_graph_issues(x, t))
    return issues


def _known(nodes: list[str]) -> str:
    return ", ".join(nodes)


def _graph_issues(x: Experiment, g: GraphSpec) -> list[tuple[str, str]]:
    issues: list[tuple[str, str]] = []
    for i, n in enumerate(g.nodes):
        if n in g.nodes[:i]:
            issues.append((f"topology.nodes[{i}]", f"{n!r} is not allowed: router names must be unique"))
    pairs: dict[frozenset[str], int] = {}
    for i, ln in enumerate(g.links):
        for field in ("src", "dst"):
            v = getattr(ln, field)
            if v not in g.nodes:
                issues.append(
                    (f"topology.links[{i}].{field}", f"{v!r} is not a router (topology.nodes: {_known(g.nodes)})")
                )
        if ln.src == ln.dst:
            issues.append(
                (f"topology.links[{i}].dst", f"{ln.dst!r} is not allowed: a link joins two different routers")
            )
        pair = frozenset((ln.src, ln.dst))
        if pair in pairs:
            issues.append(
                (
                    f"topology.links[{i}]",
                    f"a second link between {ln.src!r} and {ln.dst!r} (topology.links[{pairs[pair]}] is the first); "
                    "routes name routers, so parallel links are not allowed",
                )
            )
        pairs.setdefault(pair, i)
    if issues:
        return issues
    for i, s in enumerate(x.senders):
        p = f"senders[{i}]"
        users = _users(x, s.name)
        if s.route is None and (s.src is None or s.dst is None):
            issues.append((p, f"needs src and dst routers, or a route (topology.nodes: {_known(g.nodes)}){users}"))
            continue
        for field in ("src", "dst"):
            v = getattr(s, field)
            if v is not None and v not in g.nodes:
                issues.append((f"{p}.{field}", f"{v!r} is not a router (topology.nodes: {_known(g.nodes)}){users}"))
        if s.route is not None:
            issues.extend(_route_issues(g, s.route, s.src, s.dst, f"{p}.route", users))
        elif not any(path.startswith(p) for path, _ in issues) and s.src is not None and s.dst is not None:
            if s.src == s.dst:
                issues.append(
                    (f"{p}.dst", f"{s.dst!r} is the sender's own router (src); a route needs two routers{users}")
                )
            elif not _has_path(g, s.src, s.dst):
                issues.append(
                    (
                        f"{p}.dst",
                        f"router {s.dst!r} is unreachable from router {s.src!r}: no chain of links joins them{users}",
                    )
                )
    return issues


def _users(x: Experiment, sender: str) -> str:
    """' (used by flows[0], flows[2])': the flows a sender's problem affects."""
    idx = [f"flows[{j}]" for j, f in enumerate(x.flows) if (f.sender or x.senders[0].name) == sender]
    return f" (used by {', '.join(idx)})" if idx else ""


def _route_issues(
    g: GraphSpec, route: list[str], src: str | None, dst: str | None, path: str, users: str
) -> list[tuple[str, str]]:
    issues: list[tuple[str, str]] = []
    linked = {frozenset((ln.src, ln.dst)) for ln in g.links}
    if len(route) < 2:
        return [(path, f"{route!r} is not allowed: a route lists at least two routers{users}")]
    for k, n in enumerate(route):
        if n not in g.nodes:
            issues.append((f"{path}[{k}]", f"{n!r} is not a router (topology.nodes: {_known(g.nodes)}){users}"))
        elif n in route[:k]:
            issues.append((f"{path}[{k}]", f"router {n!r} appears twice: the route has a loop{users}"))
        elif k > 0 and frozenset((route[k - 1], n)) not in linked:
            issues.append((f"{path}[{k}]", f"no link joins {route[k - 1]!r} and {n!r}{users}"))
    if src is not None and route[0] != src:
        issues.append((path, f"starts at {route[0]!r}, not at src {src!r}{users}"))
    if dst is not None and route[-1] != dst:
        issues.append((path, f"ends at {route[-1]!r}, not at dst {dst!r}{users}"))
    return issues


def _has_path(g: GraphSpec, src: str, dst: str) -> bool:
    import networkx as nx

    return bool(nx.has_path(_nx_graph(g), src, dst))


def _nx_graph(g: GraphSpec) -> nx.Graph:
    """The routers and links as an undirected graph; a link's weight is its propagation
    delay with a tie-break of one unit per hop (routes have at most 250 hops).
    networkx is imported here, not at module load: it costs half a second and only
    graph topologies need it."""
    import networkx as nx

    graph = nx.Graph()
    graph.add_nodes_from(g.nodes)
    for ln in g.links:
        graph.add_edge(ln.src, ln.dst, weight=1024 * ln.delay + 1)
    return graph


def sender_paths(x: Experiment) -> list[SenderPath]:
    """Each sender's path (the spec has passed :func:`topology_issues`)."""
    t = x.topology
    links = net_links(x)
    if isinstance(t, ParkingLotSpec):
        out = []
        for s in x.senders:
            first = 0 if s.first_hop is None else s.first_hop
            last = len(t.hops) - 1 if s.last_hop is None else s.last_hop
            out.append(
                _path(
                    links, tuple(f"r{i}" for i in range(first, last + 2)), [(i, True) for i in range(first, last + 1)]
                )
            )
        return out
    if isinstance(t, GraphSpec):
        import networkx as nx

        graph = _nx_graph(t)
        index = {frozenset((ln.src, ln.dst)): i for i, ln in enumerate(t.links)}
        out = []
        for s in x.senders:
            nodes = s.route if s.route is not None else nx.shortest_path(graph, s.src, s.dst, weight="weight")
            hops = [
                (index[frozenset((a, b))], t.links[index[frozenset((a, b))]].src == a)
                for a, b in zip(nodes, nodes[1:], strict=False)
            ]
            out.append(_path(links, tuple(nodes), hops))
        return out
    return [_path(links, ("A", "B"), [(0, True)]) for _ in x.senders]


def _path(links: list[NetLink], nodes: tuple[str, ...], hops: list[tuple[int, bool]]) -> SenderPath:
    # The reverse direction has the forward's delay (the engine's default reverse link).
    return SenderPath(nodes, tuple(hops), sum(2 * links[i].spec.delay for i, _ in hops))
