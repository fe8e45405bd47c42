"""The linux backend's plan of a parking lot or graph (no root needed): the routes
come from the spec's routing, every link direction is shaped with its own rate and
queue, and whatever this kernel cannot build fails up front naming its field. The
kernel run itself is in test_linux_backend.py."""

import copy

import pytest
from fakes import FAKE_CCAS, PARKING_LOT
from fakes import FAKE_KERNEL as KERNEL

from ccbench.backends import BackendError
from ccbench.backends.linux import system
from ccbench.backends.linux.plan import make_plan
from ccbench.spec import Experiment

GRAPH = {
    "experiment": {"name": "g", "duration": "4s", "warmup": "1s", "backend": "linux"},
    "topology": {
        "kind": "graph",
        "nodes": ["a", "b", "c"],
        "links": [
            {"src": "a", "dst": "b", "rate": "20Mbit", "buffer": "50pkt"},
            {"src": "b", "dst": "c", "rate": "20Mbit", "buffer": "50pkt"},
            {"src": "a", "dst": "c", "rate": "10Mbit", "buffer": "50pkt", "reverse": {"rate": "5Mbit", "buffer": "30pkt"}},
        ],
    },
    "senders": [
        {"name": "x", "src": "a", "dst": "c", "route": ["a", "b", "c"], "rtt": "1ms"},
        {"name": "y", "src": "c", "dst": "a", "rtt": "1ms"},
    ],
    "flows": [{"cca": "bbr1", "sender": "x"}, {"cca": "reno", "sender": "y"}],
}


def plan_of(d, kernel=KERNEL):
    return make_plan(Experiment.from_dict(copy.deepcopy(d), ccas=FAKE_CCAS), kernel)


def test_a_sender_within_the_veth_path_rtt_gets_no_delay_line():
    d = copy.deepcopy(PARKING_LOT)
    d["senders"][1]["rtt"] = "100us"
    assert [s.needs_delay for s in plan_of(d).senders] == [True, False, True]


def test_parking_lot_plan_routes_each_sender_over_its_hops():
    plan = plan_of(PARKING_LOT)
    net = plan.network
    assert net is not None and net.nodes == ("r0", "r1", "r2")
    assert [ln.name for ln in net.links] == ["hop0", "hop1"]
    assert [(ln.src, ln.dst) for ln in net.links] == [(0, 1), (1, 2)]
    assert [r.hops for r in net.routes] == [((0, True), (1, True)), ((0, True),), ((1, True),)]
    assert [r.nodes for r in net.routes] == [(0, 1, 2), (0, 1), (1, 2)]
    hop0, hop1 = net.links
    # each direction shaped: the forward with its buffer, the reverse a 1000-packet pfifo at the same rate
    assert (hop0.forward.rate_bps, hop0.forward.qdisc, hop0.forward.limit) == (20_000_000, "pfifo", 50)
    assert (hop1.forward.qdisc, hop1.forward.limit, hop1.forward.delay_ns) == ("pfifo", 50, 2_000_000)
    assert (hop1.reverse.link, hop1.reverse.rate_bps, hop1.reverse.limit, hop1.reverse.delay_ns) == (
        "hop1_rev", 10_000_000, 1000, 2_000_000
    )
    # the summary's link (the slowest) is the plan's bottleneck
    assert plan.bottleneck.link == "hop1"
    # a sender's own delay is its RTT beyond its route's propagation RTT
    assert [s.route_rtt_ns for s in plan.senders] == [4_000_000, 0, 4_000_000]
    assert [s.needs_delay for s in plan.senders] == [True, True, True]
    assert plan.delay_method == "delayline"
    assert plan.as_dict()["network"]["routes"][0] == {"nodes": ["r0", "r1", "r2"], "links": ["hop0", "hop1"]}


def test_graph_plan_follows_given_and_shortest_routes_and_shapes_the_reverse():
    plan = plan_of(GRAPH)
    net = plan.network
    assert net is not None
    # x's route is given; y's is the shortest path, over link a-c against its forward direction
    assert [r.hops for r in net.routes] == [((0, True), (1, True)), ((2, False),)]
    ac = net.links[2]
    assert (ac.reverse.link, ac.reverse.rate_bps, ac.reverse.limit) == ("a-c_rev", 5_000_000, 30)
    assert plan.delay_method == "delayline"  # 1 ms RTTs are above the veth path's own


def test_a_link_the_kernel_cannot_build_fails_up_front_naming_it():
    d = copy.deepcopy(PARKING_LOT)
    d["topology"]["hops"][1]["qdisc"] = "fq_codel"
    d["topology"]["hops"][0]["loss"] = 0.01
    d["topology"]["hops"][0]["reverse"] = {"qdisc": "codel"}
    d["senders"][2]["access_loss"] = 0.001
    with pytest.raises(BackendError) as e:
        plan_of(d)
    text = str(e.value)
    assert "topology.hops[1].qdisc = 'fq_codel' needs the fq_codel qdisc, which this kernel does not provide" in text
    assert "topology.hops[0].loss = 0.01 (random loss) needs the netem qdisc" in text
    assert "topology.hops[0].reverse.qdisc = 'codel' needs the codel qdisc, which this kernel does not provide" in text
    assert "senders[2].access_loss = 0.001 (random loss) needs the netem qdisc" in text
    assert "4 problems" in text


def test_netem_delay_for_a_network_is_refused_without_netem_and_the_dumbbell_reverse_is_refused():
    d = {**copy.deepcopy(PARKING_LOT), "linux": {"delay": "netem"}}
    with pytest.raises(BackendError, match="linux.delay = 'netem': delay emulation needs the netem qdisc"):
        plan_of(d)
    assert plan_of({**d, "linux": {"delay": "auto"}}).delay_method == "delayline"
    dumbbell = {
        "experiment": {"name": "k", "duration": "4s", "backend": "linux"},
        "bottleneck": {"rate": "100Mbit", "buffer": "20pkt", "reverse": {"rate": "10Mbit"}},
        "senders": [{"name": "a", "rtt": "60us"}],
        "flows": [{"cca": "cubic"}],
    }
    with pytest.raises(BackendError, match="bottleneck.reverse: the linux backend's dumbbell does not shape the ACK"):
        plan_of(dumbbell)


def test_a_shaper_below_the_link_rate_becomes_tbf_with_the_link_rate_as_peak():
    d = copy.deepcopy(PARKING_LOT)
    d["topology"]["hops"][0]["shaper"] = {"rate": "5Mbit", "burst": "30000B"}
    q = plan_of(d).network.links[0].forward
    assert (q.rate_bps, q.burst_bytes, q.peakrate_bps, q.mtu_bytes) == (5_000_000, 30000, 20_000_000, 1500)
    assert q.tbf_args()[:8] == ["rate", "5000000bit", "burst", "30000", "peakrate", "20000000bit", "mtu", "1500"]
    d["topology"]["hops"][0]["rate_schedule"] = [{"at": "2s", "rate": "10Mbit"}]
    with pytest.raises(BackendError, match=r"topology.hops\[0\].rate_schedule with topology.hops\[0\].shaper"):
        plan_of(d)


def test_a_rate_limited_flow_runs_iperf3_with_its_rate_and_on_off_is_refused():
    from ccbench.backends.linux.runner import _client_argv

    d = copy.deepcopy(PARKING_LOT)
    d["flows"][1]["rate"] = "4Mbit"
    plan = plan_of(d)
    assert [f.rate_bps for f in plan.flows] == [None, 4_000_000, None]
    argv = _client_argv(plan, plan.flows[1], "10.202.1.2")
    assert argv[argv.index("-b") + 1] == "4000000" and argv[argv.index("-c") + 1] == "10.202.1.2"
    assert "-b" not in _client_argv(plan, plan.flows[0], "10.202.0.2")
    d["flows"][1].update(on="1s", off="1s")
    d["flows"][2].update(rate="1Mbit", size="1MB")
    with pytest.raises(BackendError) as e:
        plan_of(d)
    assert "flows[1]: on, off (docs/traffic.md) are simulator features the linux backend does not run: it runs " \
           "TCP flows that are bulk, sized (size) or rate-limited (rate, iperf3 -b)" in str(e.value)  # fmt: skip
    assert "flows[2].rate with flows[2].size: the sized-flow tool sends as fast as TCP allows" in str(e.value)


def test_inelastic_traffic_workloads_and_packet_events_are_refused_by_name():
    """Nothing the kernel run cannot do is dropped silently: UDP cross traffic, flow
    arrival processes (mice floods) and per-packet rows fail up front, naming the field."""
    d = copy.deepcopy(PARKING_LOT)
    d["experiment"]["packet_events"] = True
    d["flows"][1] = {"transport": "udp", "rate": "4Mbit", "sender": "cross0"}
    d["flows"][2].update(arrival="poisson", arrival_rate=2.0, sizes="websearch")
    with pytest.raises(BackendError) as e:
        plan_of(d)
    text = str(e.value)
    assert "flows[1]: transport = 'udp' (docs/traffic.md) are simulator features the linux backend does not run" in text
    assert "flows[2]: arrival = 'poisson', sizes (docs/traffic.md) are simulator features" in text
    assert "experiment.packet_events = true: per-packet drop and mark rows need the simulator" in text


def test_a_kernel_with_the_aqms_gets_them_under_the_tbf_with_the_spec_parameters():
    """Where the kernel has them (not this one), the AQMs go under the link's tbf with
    the spec's parameters as tc arguments; what no kernel qdisc does is refused."""
    full = system.KernelInfo("x", KERNEL.ccas, {k: True for k in system.PROBED_QDISCS}, True, {})
    d = copy.deepcopy(PARKING_LOT)
    d["topology"]["hops"][0]["qdisc"] = {"kind": "fq_codel", "ecn": True, "target": "2ms"}
    d["topology"]["hops"][1]["qdisc"] = {"kind": "red", "limit": "100KB", "min": "10KB", "max": "30KB", "ecn": True}
    d["topology"]["hops"][1]["reverse"] = {"qdisc": {"kind": "pie", "target": "20ms"}}
    hop0, hop1 = plan_of(d, full).network.links
    assert hop0.forward.child() == ["fq_codel", "limit", "50", "flows", "1024", "quantum", "1500",
                                    "memory_limit", "33554432", "target", "2000us", "interval", "100000us", "ecn"]  # fmt: skip
    assert hop1.forward.child()[:9] == ["red", "limit", "100000", "min", "10000", "max", "30000", "avpkt", "1000"]
    assert hop1.forward.child()[-1] == "ecn" and (hop1.forward.qdisc, hop1.forward.limit) == ("red", 100000)
    assert hop1.reverse.child()[:7] == ["pie", "limit", "1000", "target", "20000us", "tupdate", "15000us"]
    assert hop0.reverse.child() == ["pfifo", "limit", "1000"]
    d["topology"]["hops"][0]["qdisc"] = "prio"
    with pytest.raises(BackendError, match=r"topology.hops\[0\].qdisc = 'prio' is not supported by the linux backend"):
        plan_of(d, full)
