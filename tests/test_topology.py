"""Topologies in the spec: the parking lot and the general graph (routes, RTTs and
per-link buffers resolved in the front end), the errors for bad topologies (each
naming the field, the allowed values and the flows affected), and end to end through
the engine: a 2-bottleneck, 3-flow parking lot."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from ccbench.spec import Experiment, SpecError, load_spec

ROOT = Path(__file__).resolve().parent.parent


def parking_lot() -> dict[str, Any]:
    return load_spec(ROOT / "specs" / "parking-lot.toml", ccas=None).to_dict()


def graph() -> dict[str, Any]:
    return load_spec(ROOT / "specs" / "graph.toml", ccas=None).to_dict()


def issues(d: dict[str, Any]) -> dict[str, str]:
    with pytest.raises(SpecError) as e:
        Experiment.from_dict(d, ccas=None)
    return dict(e.value.issues)


def test_parking_lot_routes_each_sender_over_its_hops():
    x = Experiment.from_dict(parking_lot(), ccas=None)
    t = x.resolve()["topology"]
    assert t["kind"] == "parking_lot" and [h["name"] for h in t["hops"]] == ["hop0", "hop1"]
    assert [s["route"] for s in t["senders"]] == [["r0", "r1", "r2"], ["r0", "r1"], ["r1", "r2"]]
    # Each hop's 1-BDP buffer is at the smallest RTT of the senders crossing it.
    d = parking_lot()
    d["senders"][2]["rtt"] = "20ms"
    x = Experiment.from_dict(d, ccas=None)
    hop0, hop1 = x.links()
    assert x.buffer(hop0).bdp_rtt_ns == 40_000_000 and x.buffer(hop1).bdp_rtt_ns == 20_000_000
    assert x.resolve()["topology"]["hops"][1]["forward"]["qdisc"] == {"kind": "bfifo", "limit_bytes": 50_000}
    # The round trip through the spec's plain data is exact.
    assert Experiment.from_dict(x.to_dict(), ccas=None) == x


def test_graph_routes_by_shortest_delay_or_as_given_and_rtt_defaults_to_the_route():
    x = Experiment.from_dict(graph(), ccas=None)
    senders = x.resolve()["topology"]["senders"]
    assert [(s["route"], s["rtt_ns"]) for s in senders] == [(["a", "b", "d"], 20_000_000), (["a", "c", "d"], 60_000_000)]
    # Make the upper branch slower: the shortest path moves to a-c-d.
    d = graph()
    d["topology"]["links"][1]["delay"] = "30ms"
    x = Experiment.from_dict(d, ccas=None)
    assert x.resolve()["topology"]["senders"][0]["route"] == ["a", "c", "d"]
    # A route may cross a link against its forward direction (d->b->a: reverse of b-d, a-b).
    d = graph()
    d["senders"][1] = {"name": "slow", "route": ["d", "b", "a"]}
    path = Experiment.from_dict(d, ccas=None).paths()[1]
    assert path.hops == ((1, False), (0, False)) and path.propagation_rtt_ns == 20_000_000


def test_unreachable_destination_names_the_sender_and_its_flows():
    d = graph()
    d["topology"]["nodes"].append("island")
    d["senders"][0]["dst"] = "island"
    msg = issues(d)["senders[0].dst"]
    assert msg == "router 'island' is unreachable from router 'a': no chain of links joins them (used by flows[0])"


def test_routes_with_a_loop_a_gap_or_an_unknown_router_are_rejected():
    d = graph()
    d["senders"][1]["route"] = ["a", "b", "a", "c", "d"]
    assert issues(d)["senders[1].route[2]"] == "router 'a' appears twice: the route has a loop (used by flows[1])"
    d["senders"][1]["route"] = ["a", "d"]
    assert issues(d)["senders[1].route[1]"] == "no link joins 'a' and 'd' (used by flows[1])"
    d["senders"][1]["route"] = ["a", "x"]
    assert issues(d)["senders[1].route[1]"] == "'x' is not a router (topology.nodes: a, b, c, d) (used by flows[1])"
    d["senders"][1]["route"] = ["a", "b", "d"]
    d["senders"][1]["src"] = "c"
    assert issues(d)["senders[1].route"] == "starts at 'a', not at src 'c' (used by flows[1])"


def test_bad_link_references_name_the_field_and_the_routers():
    d = graph()
    d["topology"]["links"][2]["dst"] = "e"
    assert issues(d)["topology.links[2].dst"] == "'e' is not a router (topology.nodes: a, b, c, d)"
    d = graph()
    d["topology"]["links"].append({"src": "d", "dst": "b", "rate": "1Gbit"})
    msg = issues(d)["topology.links[4]"]
    assert msg.startswith("a second link between 'd' and 'b' (topology.links[1] is the first)")
    d = graph()
    d["topology"]["links"][0]["name"] = "b-d"
    assert "link names must be unique" in issues(d)["topology.links[1].name"]


def test_fields_of_another_topology_are_rejected():
    d = parking_lot()
    d["senders"][0]["route"] = ["r0", "r1"]
    d["senders"][1]["last_hop"] = 2
    got = issues(d)
    assert got["senders[0].route"] == "is only for topology.kind = 'graph' (this is a parking_lot)"
    assert got["senders[1].last_hop"] == "2 is not a hop index (topology.hops has 2: 0 to 1)"
    d = graph()
    d["senders"][0]["first_hop"] = 0
    assert issues(d)["senders[0].first_hop"] == "is only for topology.kind = 'parking_lot' (this is a graph)"
    d = parking_lot()
    d["bottleneck"] = {"rate": "10Mbit"}
    assert "is not allowed with topology.kind = 'parking_lot'" in issues(d)["bottleneck"]
    d = parking_lot()
    del d["topology"]
    assert issues(d)["bottleneck"].startswith("required key is missing")
    d = parking_lot()
    d["topology"]["kind"] = "ring"
    assert "topology" in " ".join(issues(d))


def test_rtt_below_the_path_propagation_is_rejected_per_topology():
    d = parking_lot()
    d["senders"][0]["rtt"] = "6ms"
    msg = issues(d)["senders[0].rtt"]
    assert "at least the propagation RTT of its path (8ms: twice the delays of topology.hops[0], topology.hops[1])" in msg
    d = parking_lot()
    d["senders"][1]["rtt"] = "6ms"  # cross0 crosses only hop0: 4 ms is enough
    Experiment.from_dict(d, ccas=None)
    d = parking_lot()
    del d["senders"][0]["rtt"]
    assert issues(d)["senders[0].rtt"].startswith("is required")


def test_dumbbell_resolution_is_unchanged_by_the_topology_layer(base_spec, ccas):
    t = Experiment.from_dict(base_spec, ccas=ccas).resolve()["topology"]
    assert list(t) == ["kind", "bottleneck", "reverse_bottleneck", "senders"]
    assert all("route" not in s for s in t["senders"])


@pytest.mark.engine
def test_parking_lot_end_to_end_long_flow_gets_less_and_links_carry_their_flows():
    import ccbench

    d = parking_lot()
    d["experiment"].update(duration="20s")
    res = ccbench.run(d)
    stats = res.manifest["stats"]
    assert stats["data_pkts_sent"] == stats["data_pkts_delivered"] + stats["data_pkts_dropped"] + stats["data_pkts_in_network"]
    f = res.flows.set_index("sender_name")
    goodput = (f["delivered_bytes"] - f["delivered_bytes_at_warmup"]) * 8 / 15
    assert goodput["long"] < 0.8 * goodput["cross0"] and goodput["long"] < 0.8 * goodput["cross1"], goodput
    links = res.links.set_index("link")["tx_bytes"]
    # hop0 carries long's and cross0's data, never cross1's (and hop1 the converse).
    assert links["hop0"] <= links["access_fwd:long"] + links["access_fwd:cross0"]
    assert links["hop1"] <= links["access_fwd:long"] + links["access_fwd:cross1"]
    assert links["hop0"] >= links["egress_fwd:long"] + links["egress_fwd:cross0"]
    q = res.queue_ts
    assert set(q["link"]) == {"hop0", "hop0_rev", "hop1", "hop1_rev"}
    # Plots default to the run's bottleneck: the slowest link, the first of equals.
    from ccbench.plots.timeseries import queue

    assert res.primary_link == "hop0"
    xs = queue(res).axes[0].lines[0].get_xdata()
    assert len(xs) == len(q[q["link"] == "hop0"]) > 100
    # So do `ccbench compare`'s overlays (a parking lot has no link named "bottleneck").
    from ccbench.plots.overlay import overlay_delay_cdf, overlay_queue

    assert len(overlay_queue([("pl", res)]).axes[0].lines[0].get_xdata()) == len(xs)
    assert overlay_delay_cdf([("pl", res)]).axes[0].lines
    assert q.groupby("link")["time_ns"].apply(lambda s: s.is_monotonic_increasing).all()


@pytest.mark.engine
def test_graph_end_to_end_runs_its_routes():
    import ccbench

    d = copy.deepcopy(graph())
    d["experiment"].update(duration="3s", warmup="1s")
    res = ccbench.run(d)
    links = res.links.set_index("link")["tx_bytes"]
    assert links["a-b"] >= links["egress_fwd:fast"] and links["a-c"] >= links["egress_fwd:slow"]
    assert links["a-b"] <= links["access_fwd:fast"]  # only fast's data crosses a->b
    assert res.flows.set_index("sender_name").loc["slow", "base_rtt_ns"] == 60_000_000
