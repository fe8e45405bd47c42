"""Per-packet delay jitter (a link's and a sender's ``jitter``, netem's ``delay D J``):
the spec's checks, its effect on a simulated run's RTTs, and the linux backend's netem
arguments and up-front refusal."""

from __future__ import annotations

import copy
import os
import shutil
import subprocess

import numpy as np
import pytest
from fakes import FAKE_CCAS, PARKING_LOT, assert_tables_equal
from fakes import FAKE_KERNEL as KERNEL

import ccbench
from ccbench.backends import BackendError
from ccbench.backends.linux import system
from ccbench.backends.linux.netem import netem_args
from ccbench.backends.linux.plan import make_plan
from ccbench.spec import Experiment, SpecError

WITH_NETEM = system.KernelInfo("x", KERNEL.ccas, {**KERNEL.qdiscs, "netem": True}, True, {})

#: One window-limited flow (20 of the path's 34-packet BDP): no queue, so its RTT
#: samples are the path's propagation delays.
DUMBBELL = {
    "experiment": {"name": "j", "duration": "20s", "warmup": "5s", "seed": 1, "sample_interval": "100ms"},
    "bottleneck": {"rate": "10Mbit", "delay": "10ms", "buffer": "1BDP"},
    "senders": [{"name": "a", "rtt": "40ms"}],
    "flows": [{"cca": "cubic", "sender": "a", "rwnd": "20pkt"}],
}


def exp_of(d, **kw):
    return Experiment.from_dict(copy.deepcopy(d), ccas=FAKE_CCAS, **kw)


def issues_of(d):
    with pytest.raises(SpecError) as e:
        exp_of(d)
    return str(e.value)


# --- the spec


def test_jitter_defaults_to_none_and_resolves_to_the_engines_fields():
    cfg = exp_of(DUMBBELL).resolve()
    assert cfg["topology"]["bottleneck"]["jitter_ns"] == 0 and cfg["topology"]["senders"][0]["jitter_ns"] == 0
    d = copy.deepcopy(DUMBBELL)
    d["bottleneck"]["jitter"] = "2ms"
    d["bottleneck"]["reverse"] = {"rate": "5Mbit"}
    d["senders"][0]["jitter"] = "1ms"
    t = exp_of(d).resolve()["topology"]
    assert t["bottleneck"]["jitter_ns"] == t["reverse_bottleneck"]["jitter_ns"] == 2_000_000
    assert t["senders"][0]["jitter_ns"] == 1_000_000


def test_a_jitter_above_the_delay_it_varies_is_refused_by_name(tmp_path):
    rtts = tmp_path / "rtts.cdf"
    rtts.write_text("# ms cumulative\n25 0.25\n80 1\n")
    d = copy.deepcopy(DUMBBELL)
    d["bottleneck"]["jitter"] = "11ms"
    assert "bottleneck.jitter: '11ms' is not allowed: it must be at most bottleneck.delay (10ms)" in issues_of(d)
    # a topology link names its own field
    p = copy.deepcopy(PARKING_LOT)
    p["topology"]["hops"][0]["jitter"] = "1ms"  # hop 0 has no delay
    assert "topology.hops[0].jitter: '1ms' is not allowed: it must be at most topology.hops[0].delay (0s)" in issues_of(p)
    # a sender's: its access path carries 40 - 2 x 10 = 20 ms, 10 ms each way when split
    d = copy.deepcopy(DUMBBELL)
    d["senders"][0]["jitter"] = "10.5ms"
    msg = issues_of(d)
    assert "senders[0].jitter: '10.5ms' is not allowed: it must be at most the one-way delay it varies, 10ms" in msg
    assert "delay_path = 'split'" in msg
    d["senders"][0]["delay_path"] = "ack"  # all 20 ms on the ACK path
    assert exp_of(d).resolve()["topology"]["senders"][0]["jitter_ns"] == 10_500_000
    d["senders"][0]["rtt"] = "20ms"  # no access delay left to vary
    assert "senders[0].jitter: '10.5ms' is not allowed: it must be at most the one-way delay it varies, 0s" in issues_of(d)
    # a per-flow RTT is a sender of its own with the same jitter: its access delay too
    d = copy.deepcopy(DUMBBELL)
    d["senders"][0]["jitter"] = "5ms"
    d["flows"][0].update(arrival="poisson", arrival_rate=10, size="10KB", rtts=str(rtts))
    assert "flows[0].rtts: '25ms' is not allowed: it leaves 2.5ms of one-way access delay, less than the sender's " \
           "jitter (5ms)" in issues_of(d)  # fmt: skip
    with pytest.raises(SpecError, match=r"bottleneck.jitter"):
        exp_of({**DUMBBELL, "bottleneck": {**DUMBBELL["bottleneck"], "jitter": "-1ms"}})


# --- the simulator


def _rtt_stats(res):
    ts = res.tables["flow_ts"].to_pandas()
    srtt = ts.loc[ts["time_ns"] >= 5 * 10**9, "srtt_ns"].to_numpy(dtype=float)
    return float(np.std(srtt)), int(res.flows["min_rtt_ns"][0])


@pytest.mark.engine
def test_jitter_spreads_the_rtt_samples_and_packets_are_conserved(tmp_path):
    """±5 ms on each direction of the bottleneck: sRTT varies where it was flat, the
    least RTT sample falls below the base RTT (not below 40 - 2 x 5 ms), the engine's
    packet conservation holds, and the same seed gives the same tables."""
    plain = ccbench.run(exp_of(DUMBBELL), tmp_path / "plain")
    d = copy.deepcopy(DUMBBELL)
    d["bottleneck"]["jitter"] = "5ms"
    jit = ccbench.run(exp_of(d), tmp_path / "jit")
    again = ccbench.run(exp_of(d), tmp_path / "again")
    other = ccbench.run(exp_of(d).with_seed(2), tmp_path / "other")
    (sd0, min0), (sd1, min1) = _rtt_stats(plain), _rtt_stats(jit)
    assert sd0 < 0.1e6 and sd1 > 0.5e6, (sd0, sd1)
    assert min0 >= 40_000_000 and 30_000_000 <= min1 < 39_000_000, (min0, min1)
    for res in (plain, jit):
        s = res.manifest["stats"]
        assert s["data_pkts_sent"] == s["data_pkts_delivered"] + s["data_pkts_dropped"] + s["data_pkts_in_network"]
    for name in ("flows", "flow_ts", "links"):
        assert_tables_equal(jit.tables[name], again.tables[name], name)
    srtt = [r.tables["flow_ts"].column("srtt_ns").to_pylist() for r in (jit, other)]
    assert srtt[0] != srtt[1], "another seed, other delays"


# --- the linux backend


def test_netem_args_carry_the_jitter_after_the_delay():
    assert netem_args(10_000_000, (), 2_000_000) == ["netem", "delay", "10000us", "2000us", "limit", "100000"]
    assert netem_args(10_000_000, ("loss", "random", "1%"), 2_000_000) == [
        "netem", "delay", "10000us", "2000us", "loss", "random", "1%", "limit", "100000"]  # fmt: skip
    assert netem_args(10_000_000) == ["netem", "delay", "10000us", "limit", "100000"]


def _linux(d):
    d = copy.deepcopy(d)
    d["experiment"] = {**d["experiment"], "backend": "linux", "duration": "4s", "warmup": "1s"}
    return d


def test_this_kernel_refuses_jitter_up_front():
    p = _linux(PARKING_LOT)
    p["topology"]["hops"][1]["jitter"] = "1ms"
    p["senders"][0]["jitter"] = "1ms"
    p["senders"][0]["delay_path"] = "ack"
    with pytest.raises(BackendError) as e:
        make_plan(exp_of(p), KERNEL)
    text = str(e.value)
    assert "topology.hops[1].jitter = '1ms' (per-packet delay jitter) needs the netem qdisc, which this kernel does " \
           "not provide" in text  # fmt: skip
    assert "senders[0].jitter = '1ms' (per-packet delay jitter) needs the netem qdisc, which this kernel does not " \
           "provide" in text  # fmt: skip
    assert "2 problems" in text
    # with netem, the plan carries it; the delay line cannot vary its delay
    plan = make_plan(exp_of(p), WITH_NETEM)
    assert plan.senders[0].jitter_ns == 1_000_000
    assert [(q.link, q.jitter_ns) for q in plan.network.queues()][2:] == [("hop1", 1_000_000), ("hop1_rev", 1_000_000)]
    with pytest.raises(BackendError, match=r"linux.delay = 'delayline' with senders\[0\].jitter, topology.hops\[1\]"
                       r".jitter: the delay line holds every frame for the same delay"):  # fmt: skip
        make_plan(exp_of({**p, "linux": {"delay": "delayline"}}), WITH_NETEM)


def test_jitter_the_kernel_cannot_match_is_refused_on_a_netem_kernel():
    d = _linux(DUMBBELL)
    d["bottleneck"]["jitter"] = "1ms"  # runs (netem on the link, below)
    d["senders"][0]["jitter"] = "1ms"  # delay_path = 'split': half of it on the data path
    with pytest.raises(BackendError) as e:
        make_plan(exp_of(d), WITH_NETEM)
    assert e.value.problems == [
        "senders[0].jitter with delay_path = 'split': the linux backend adds a sender's whole delay on its ACK path "
        "(netem delay D J there), so only delay_path = 'ack' has the same per-packet delays on both backends"
    ]


class FakeTc:
    def __init__(self):
        self.calls: list[list[str]] = []

    def __call__(self, argv, **kw):
        self.calls.append(list(argv))
        return subprocess.CompletedProcess(argv, 0, "[]", "")


def test_netem_gets_the_jitter_after_the_rtts_are_measured(monkeypatch):
    """A link's netem is built with its delay alone (the idle RTT's minimum over pings
    must not be pulled down by the jitter) and changed to ``delay D J`` with the loss;
    a sender's jitter joins the netem that adds its delay on its ACK path."""
    from ccbench.backends.linux import netns
    from ccbench.backends.linux.network import NetworkTopology

    p = _linux(PARKING_LOT)
    p["topology"]["hops"][1]["jitter"] = "500us"
    p["topology"]["hops"][1]["loss"] = 0.01
    p["senders"][0]["jitter"] = "1ms"
    p["senders"][0]["delay_path"] = "ack"
    fake = FakeTc()
    monkeypatch.setattr(netns, "cmd", fake)
    topo = NetworkTopology(make_plan(exp_of(p), WITH_NETEM), run_id="t")
    topo._shape_all()
    roots = [(c[2], c[6], c[13:]) for c in fake.calls if c[7:8] == ["root"]]
    assert roots[2:] == [
        ("ccbl-t-n1", "k1", ["netem", "delay", "2000us", "limit", "100000"]),
        ("ccbl-t-n2", "k1", ["netem", "delay", "2000us", "limit", "100000"]),
    ]
    fake.calls.clear()
    topo.netem_loss({0: 5_000_000})
    stab = ["stab", "overhead", "-14"]
    assert fake.calls == [
        ["tc", "-n", "ccbl-t-n1", "qdisc", "change", "dev", "k1", "root", "handle", "1:", *stab, "netem", "delay",
         "2000us", "500us", "loss", "random", "1%", "limit", "100000"],
        ["tc", "-n", "ccbl-t-n2", "qdisc", "change", "dev", "k1", "root", "handle", "1:", *stab, "netem", "delay",
         "2000us", "500us", "limit", "100000"],
        ["tc", "-n", "ccbl-t-n0", "qdisc", "replace", "dev", "a0", "root", "netem", "delay", "5000us", "1000us",
         "limit", "100000"],
    ]  # fmt: skip


#: A dumbbell whose bottleneck has jitter (and loss both ways): sender a's path adds
#: delay and jitter of its own, b's adds delay, c's RTT is the bottleneck's alone.
JITTERED_DUMBBELL = {
    "experiment": {"name": "jd", "duration": "4s", "warmup": "1s", "backend": "linux"},
    "bottleneck": {"rate": "10Mbit", "delay": "10ms", "jitter": "2ms", "buffer": "20pkt", "loss": 0.01,
                   "reverse_loss": 0.02},  # fmt: skip
    "senders": [
        {"name": "a", "rtt": "40ms", "jitter": "1ms", "delay_path": "ack"},
        {"name": "b", "rtt": "30ms"},
        {"name": "c", "rtt": "20ms"},
    ],
    "flows": [{"cca": "cubic", "sender": s} for s in ("a", "b", "c")],
}


def test_a_dumbbells_bottleneck_jitter_puts_its_delay_on_the_link_with_netem():
    """With jitter, the bottleneck's delay leaves the senders' ACK paths for the link
    (each sender's path adds 2 D less); without it, the dumbbell folds it in as before;
    without netem, the spec is refused up front by the netem message alone."""
    plan = make_plan(exp_of(JITTERED_DUMBBELL), WITH_NETEM)
    assert plan.delay_method == "netem" and plan.bottleneck_netem_delay_ns == 10_000_000
    assert (plan.bottleneck.delay_ns, plan.bottleneck.jitter_ns) == (10_000_000, 2_000_000)
    assert [(s.route_rtt_ns, s.needs_delay, s.jitter_ns) for s in plan.senders] == [
        (20_000_000, True, 1_000_000), (20_000_000, True, 0), (20_000_000, False, 0)]  # fmt: skip
    manifest = plan.as_dict()
    assert (manifest["bottleneck_delay_on"], manifest["bottleneck_netem_delay_ns"]) == ("link", 10_000_000)
    assert [s["route_rtt_ns"] for s in manifest["senders"]] == [20_000_000] * 3
    still = copy.deepcopy(JITTERED_DUMBBELL)
    del still["bottleneck"]["jitter"], still["senders"][0]["jitter"]
    folded = make_plan(exp_of(still), WITH_NETEM)
    assert (folded.bottleneck_netem_delay_ns, folded.as_dict()["bottleneck_delay_on"]) == (0, "senders_ack_paths")
    assert [s.route_rtt_ns for s in folded.senders] == [0, 0, 0]
    assert [s.needs_delay for s in folded.senders] == [True, True, True]
    # a jittered bottleneck whose senders add nothing still gets netem (the link's delay)
    only_link = {**JITTERED_DUMBBELL, "senders": [{"name": "c", "rtt": "20ms"}], "flows": [{"cca": "cubic"}]}
    assert make_plan(exp_of(only_link), WITH_NETEM).delay_method == "netem"
    with pytest.raises(BackendError) as e:
        make_plan(exp_of(JITTERED_DUMBBELL), KERNEL)
    assert e.value.problems == [
        "bottleneck.loss = 0.01 (random loss) needs the netem qdisc, which this kernel does not provide",
        "bottleneck.jitter = '2ms' (per-packet delay jitter) needs the netem qdisc, which this kernel does not provide",
        "bottleneck.reverse_loss = 0.02 (random loss) needs the netem qdisc, which this kernel does not provide",
        "senders[0].jitter = '1ms' (per-packet delay jitter) needs the netem qdisc, which this kernel does not provide",
    ]
    with pytest.raises(BackendError, match=r"linux.delay = 'delayline' with senders\[0\].jitter, bottleneck.jitter: "
                       r"the delay line holds every frame for the same delay"):  # fmt: skip
        make_plan(exp_of({**JITTERED_DUMBBELL, "linux": {"delay": "delayline"}}), WITH_NETEM)


class Stop(Exception):
    """Ends a faked kernel run where its flows would start."""


def test_a_jittered_dumbbell_measures_the_rtts_then_jitters_the_link_and_the_acks(monkeypatch, tmp_path):
    """The kernel run's ``tc`` commands and pings in order (every command faked): the
    bottleneck's delay D is netem's, ahead of its tbf and on the receiver's egress (every
    ACK), built without jitter; the idle pings see 2 D, so each sender's ACK path adds its
    RTT less that; then the jitter (and loss) join those netems, after the last ping."""
    from ccbench.backends.linux import netns, runner

    idle = {"ccbl-t-s0": "20.060", "ccbl-t-s1": "20.070", "ccbl-t-s2": "20.050"}
    path = {"ccbl-t-s0": "40.010", "ccbl-t-s1": "30.020"}
    seen: list[list[str]] = []

    def fake(argv, **kw):
        argv = list(argv)
        out = ""
        if "ping" in argv:
            ns = argv[3]
            ms = (path if ns in path and ("ping", ns) in [tuple(c) for c in seen] else idle)[ns]
            seen.append(["ping", ns])
            out = f"rtt min/avg/max/mdev = {ms}/{ms}/{ms}/0.001 ms\n"
        elif argv[0] == "tc":
            seen.append(argv)
        return subprocess.CompletedProcess(argv, 0, out, "")

    def no_flows(*a, **kw):
        raise Stop

    monkeypatch.setattr(netns, "cmd", fake)
    monkeypatch.setattr(netns, "STATE_DIR", tmp_path)
    monkeypatch.setattr(runner, "Topology", lambda plan: netns.Topology(plan, run_id="t"))
    monkeypatch.setattr(runner, "popen_in_ns", no_flows)
    with pytest.raises(Stop):
        runner.run_plan(make_plan(exp_of(JITTERED_DUMBBELL), WITH_NETEM), WITH_NETEM)
    r, d = ["tc", "-n", "ccbl-t-r", "qdisc"], ["tc", "-n", "ccbl-t-d", "qdisc"]
    root = ["handle", "1:", "stab", "overhead", "-14"]
    assert seen == [
        # built: the link's delay alone, netem the root of b0 with the tbf and the fifo under it
        [*r, "replace", "dev", "b0", "root", *root, "netem", "delay", "10000us", "limit", "100000"],
        [*r, "add", "dev", "b0", "parent", "1:1", "handle", "2:", "tbf", "rate", "10000000bit", "burst", "3000",
         "limit", "100000000"],
        [*r, "add", "dev", "b0", "parent", "2:1", "handle", "10:", "pfifo", "limit", "20"],
        [*d, "replace", "dev", "eth0", "root", "netem", "delay", "10000us", "limit", "100000"],
        ["ping", "ccbl-t-s0"], ["ping", "ccbl-t-s1"], ["ping", "ccbl-t-s2"],
        # each sender's RTT less its idle path's (2 D + the veths'); c adds nothing
        [*r, "replace", "dev", "a0", "root", "netem", "delay", "19940us", "limit", "100000"],
        [*r, "replace", "dev", "a1", "root", "netem", "delay", "9930us", "limit", "100000"],
        ["ping", "ccbl-t-s0"], ["ping", "ccbl-t-s1"],
        # then the jitter: the bottleneck's with its loss, a's own, the ACKs' with reverse_loss
        [*r, "change", "dev", "b0", "root", *root, "netem", "delay", "10000us", "2000us", "loss", "random", "1%",
         "limit", "100000"],
        [*r, "replace", "dev", "a0", "root", "netem", "delay", "19940us", "1000us", "limit", "100000"],
        [*d, "replace", "dev", "eth0", "root", "netem", "delay", "10000us", "2000us", "loss", "random", "2%",
         "limit", "100000"],
    ]  # fmt: skip


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("tc") is None, reason="needs root and tc")
def test_tc_parses_netems_delay_with_jitter():
    """tc parses netem's options before asking the kernel, so on this kernel (no netem)
    a mistake in them still shows: tc must fail only on the missing qdisc kind."""
    ns = f"{system.NAMESPACE_PREFIX}probe-{os.getpid()}-jitter"
    system.cmd(["ip", "netns", "add", ns])
    try:
        for args, ok in [
            (netem_args(2_000_000, ("loss", "random", "1%"), 500_000), True),
            (["handle", "1:", "stab", "overhead", "-14", *netem_args(10_000_000, (), 10_000_000)], True),
            (["netem", "delay", "2000us", "500uz", "limit", "100000"], False),  # a misspelt unit
        ]:
            proc = system.cmd(["tc", "-n", ns, "qdisc", "add", "dev", "lo", "root", *args], check=False)
            assert (proc.returncode == 0 or "kind is unknown" in proc.stderr) == ok, (args, proc.stderr)
            system.cmd(["tc", "-n", ns, "qdisc", "del", "dev", "lo", "root"], check=False)
    finally:
        system.cmd(["ip", "netns", "del", ns], check=False)
