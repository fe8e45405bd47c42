"""Random loss with netem on kernels that have it: the plan, tc's argument lists, and
the up-front refusal on kernels (like this one) that do not."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess

import pytest
from fakes import FAKE_CCAS
from fakes import FAKE_KERNEL as KERNEL

from ccbench.backends import BackendError
from ccbench.backends.linux import system
from ccbench.backends.linux.netem import netem_args, netem_loss_args
from ccbench.backends.linux.plan import make_plan
from ccbench.spec import Experiment

WITH_NETEM = system.KernelInfo("x", KERNEL.ccas, {**KERNEL.qdiscs, "netem": True}, True, {})
GE = {"model": "gilbert_elliott", "p": 0.01, "r": 0.3, "loss_good": 0.001, "loss_bad": 0.75}

DUMBBELL = {
    "experiment": {"name": "k", "duration": "4s", "backend": "linux"},
    "bottleneck": {"rate": "100Mbit", "buffer": "20pkt"},
    "senders": [
        {"name": "a", "rtt": "20ms", "access_loss": 0.001},
        {"name": "b", "rtt": "60us", "access_reverse_loss": GE},
    ],  # fmt: skip
    "flows": [{"cca": "cubic", "sender": "a"}, {"cca": "reno", "sender": "b"}],
}


def plan_of(d, kernel):
    return make_plan(Experiment.from_dict(copy.deepcopy(d), ccas=FAKE_CCAS), kernel)


def test_bernoulli_and_gilbert_elliott_map_onto_netems_loss_models():
    assert netem_loss_args(0.0) == ()
    assert netem_loss_args(0.001) == ("loss", "random", "0.1%")
    # gemodel p r 1-h 1-k: 1-h is the Bad state's loss, 1-k the Good state's
    exp = Experiment.from_dict(copy.deepcopy(DUMBBELL), ccas=FAKE_CCAS)
    assert netem_loss_args(exp.senders[1].access_reverse_loss) == ("loss", "gemodel", "1%", "30%", "75%", "0.1%")
    assert netem_args(20_000_000, ("loss", "random", "1%")) == [
        "netem", "delay", "20000us", "loss", "random", "1%", "limit", "100000"]  # fmt: skip
    assert netem_args() == ["netem", "limit", "100000"]


def test_a_kernel_with_netem_gets_each_access_directions_loss_in_the_plan():
    plan = plan_of(DUMBBELL, WITH_NETEM)
    a, b = plan.senders
    assert (a.access_loss_netem, a.access_reverse_loss_netem) == (("loss", "random", "0.1%"), ())
    assert b.access_loss_netem == ()
    assert b.access_reverse_loss_netem[:2] == ("loss", "gemodel")
    assert plan.delay_method == "netem"
    assert plan.as_dict()["senders"][0]["access_loss_netem"] == ("loss", "random", "0.1%")


def test_this_kernel_still_refuses_random_loss_up_front():
    with pytest.raises(BackendError) as e:
        plan_of(DUMBBELL, KERNEL)
    text = str(e.value)
    assert (
        "senders[0].access_loss = 0.001 (random loss) needs the netem qdisc, which this kernel does not provide" in text
    )
    assert "senders[1].access_reverse_loss = gilbert_elliott (random loss) needs the netem qdisc, which this kernel " \
           "does not provide" in text  # fmt: skip


def test_link_losses_and_access_loss_with_access_rate_are_planned_on_a_netem_kernel():
    d = copy.deepcopy(DUMBBELL)
    d["senders"][0]["access_rate"] = "50Mbit"
    d["bottleneck"]["loss"] = 0.01
    d["bottleneck"]["reverse_loss"] = GE
    plan = plan_of(d, WITH_NETEM)
    assert plan.bottleneck.loss_netem == ("loss", "random", "1%")
    assert plan.ack_loss_netem[:2] == ("loss", "gemodel")
    assert plan.senders[0].access_loss_netem == ("loss", "random", "0.1%")
    assert plan.as_dict()["bottleneck"]["loss_netem"] == ["loss", "random", "1%"]
    with pytest.raises(BackendError) as e:
        plan_of(d, KERNEL)
    text = str(e.value)
    assert "bottleneck.loss = 0.01 (random loss) needs the netem qdisc, which this kernel does not provide" in text
    assert "bottleneck.reverse_loss = gilbert_elliott (random loss) needs the netem qdisc" in text
    assert "4 problems" in text  # and the two access losses
    unprobed = system.KernelInfo("x", KERNEL.ccas, {}, False, {})
    with pytest.raises(BackendError, match=r"bottleneck.loss = 0.01 \(random loss\) needs the netem qdisc, which "
                       r"could not be probed \(probing needs root\)"):  # fmt: skip
        plan_of(d, unprobed)


class FakeTc:
    """Records the commands; ``tc -j qdisc show`` answers ``shown``."""

    def __init__(self, shown: str = "[]"):
        self.calls: list[list[str]] = []
        self.shown = shown

    def __call__(self, argv, **kw):
        self.calls.append(list(argv))
        return subprocess.CompletedProcess(argv, 0, self.shown, "")


def test_netem_sits_ahead_of_the_tbf_and_its_loss_is_a_change_of_it(monkeypatch):
    """Random loss on a shaped direction: netem is the root, tbf its child (tc-netem(8)'s
    rate-control set-up), the fifo the tbf's; loss comes later as a change of the root,
    rate changes go to the tbf under it, and the queue's drops are read from netem."""
    from ccbench.backends.linux import netns

    d = copy.deepcopy(DUMBBELL)
    d["senders"][0]["access_rate"] = "50Mbit"
    d["bottleneck"]["loss"] = 0.01
    d["bottleneck"]["reverse_loss"] = 0.02
    fake = FakeTc()
    monkeypatch.setattr(netns, "cmd", fake)
    topo = netns.Topology(plan_of(d, WITH_NETEM), run_id="t")
    topo._shape_all()
    r, s0 = ["tc", "-n", "ccbl-t-r", "qdisc"], ["tc", "-n", "ccbl-t-s0", "qdisc"]
    stab = ["stab", "overhead", "-14"]
    assert fake.calls == [
        [*r, "replace", "dev", "b0", "root", "handle", "1:", *stab, "netem", "limit", "100000"],
        [*r, "add", "dev", "b0", "parent", "1:1", "handle", "2:", "tbf", "rate", "100000000bit", "burst", "3000",
         "limit", "100000000"],
        [*r, "add", "dev", "b0", "parent", "2:1", "handle", "10:", "pfifo", "limit", "20"],
        [*s0, "replace", "dev", "eth0", "root", "handle", "1:", *stab, "netem", "limit", "100000"],
        [*s0, "add", "dev", "eth0", "parent", "1:1", "handle", "2:", "tbf", "rate", "50000000bit", "burst", "3000",
         "limit", "100000000"],
        [*s0, "add", "dev", "eth0", "parent", "2:1", "handle", "20:", "pfifo", "limit", "1000"],
    ]  # fmt: skip
    assert [p.drops_handle for _, p in topo.shaped()] == ["1:", "1:"]
    fake.calls.clear()
    topo.netem_loss({0: 19_900_000})
    assert fake.calls == [
        [*r, "change", "dev", "b0", "root", "handle", "1:", *stab, "netem", "loss", "random", "1%", "limit", "100000"],
        [*s0, "change", "dev", "eth0", "root", "handle", "1:", *stab, "netem", "loss", "random", "0.1%", "limit",
         "100000"],
        ["tc", "-n", "ccbl-t-r", "qdisc", "replace", "dev", "a1", "root", "netem", "loss", "gemodel", "1%", "30%",
         "75%", "0.1%", "limit", "100000"],
        # bottleneck.reverse_loss: every ACK leaves the receiver by eth0
        ["tc", "-n", "ccbl-t-d", "qdisc", "replace", "dev", "eth0", "root", "netem", "loss", "random", "2%", "limit",
         "100000"],
    ]  # fmt: skip
    fake.calls.clear()
    q, probe = topo.shaped()[0]
    topo.change_rate(q, probe, 40_000_000)
    assert [c[5:11] for c in fake.calls] == [
        ["dev", "b0", "parent", "1:1", "handle", "2:"], ["dev", "b0", "parent", "2:1", "handle", "10:"]]  # fmt: skip
    assert fake.calls[0][11:14] == ["tbf", "rate", "40000000bit"] and fake.calls[0][4] == "change"
    # without loss, tbf is the root as before (with the size table, also on a change)
    fake.calls.clear()
    plain = netns.Topology(plan_of({**DUMBBELL, "senders": [{"name": "a", "rtt": "20ms"}], "flows": [{"cca": "reno"}]},
                                   WITH_NETEM), run_id="t")  # fmt: skip
    plain._shape_all()
    assert fake.calls[0][5:14] == ["dev", "b0", "root", "handle", "1:", *stab, "tbf"]
    assert fake.calls[1][5:10] == ["dev", "b0", "parent", "1:1", "handle"] and len(fake.calls) == 2
    assert [p.drops_handle for _, p in plain.shaped()] == [None]


def test_a_queue_with_netem_ahead_counts_netems_drops(monkeypatch):
    """netem counts its random losses and every drop of the queue behind it (it hands
    each packet on to the tbf and counts a refusal as its own drop)."""
    from ccbench.backends.linux import sampling

    shown = json.dumps([
        {"kind": "netem", "handle": "1:", "dev": "b0", "drops": 9, "packets": 100, "bytes": 150000},
        {"kind": "tbf", "handle": "2:", "dev": "b0", "drops": 2, "packets": 100, "bytes": 150000},
        {"kind": "pfifo", "handle": "10:", "dev": "b0", "drops": 2, "packets": 100, "bytes": 150000, "qlen": 3,
         "backlog": 4500},
    ])  # fmt: skip
    monkeypatch.setattr(sampling, "cmd", FakeTc(shown))
    probes = [sampling.QueueProbe("bottleneck", "ns", "b0", "10:", "1:"), sampling.QueueProbe("plain", "ns", "b0", "10:")]
    s = sampling.Sampler(lambda: 0, 100_000_000, [], probes)
    s.sample_once()
    (_, l1, with_netem), (_, l2, own) = s.queues
    assert (l1, with_netem.dropped_pkts, with_netem.random_dropped_pkts, with_netem.backlog_pkts) == ("bottleneck", 9, 7, 3)
    assert (l2, own.dropped_pkts, own.random_dropped_pkts) == ("plain", 2, 0)


def test_a_network_on_a_netem_kernel_delays_and_loses_with_netem(monkeypatch):
    """Parking lots and graphs: with netem, each link direction's delay and loss are a
    netem ahead of its tbf (no delay-line namespaces), a sender's extra RTT is netem on
    its router's egress toward it, and access losses work as in the dumbbell."""
    from fakes import PARKING_LOT

    from ccbench.backends.linux import netns
    from ccbench.backends.linux.network import NetworkTopology

    d = copy.deepcopy(PARKING_LOT)
    d["topology"]["hops"][0]["loss"] = 0.01
    d["topology"]["hops"][1]["reverse_loss"] = 0.02
    d["senders"][2]["access_loss"] = 0.001
    d["senders"][1]["access_reverse_loss"] = 0.003
    plan = plan_of(d, WITH_NETEM)
    assert plan.delay_method == "netem"
    topo = NetworkTopology(plan, run_id="t")
    names = [n.removeprefix("ccbl-t-") for n in topo.namespaces()]
    assert names == ["n0", "n1", "n2", "s0", "s1", "s2", "d0", "d1", "d2"]  # no x<k>, no l<i>
    assert topo.link_delay_lines() == []
    fake = FakeTc()
    monkeypatch.setattr(netns, "cmd", fake)
    topo._shape_all()
    roots = [(c[2], c[6], c[10:]) for c in fake.calls if c[7:8] == ["root"]]
    assert roots == [
        ("ccbl-t-n0", "k0", ["stab", "overhead", "-14", "netem", "limit", "100000"]),  # hop 0 forward: loss later
        ("ccbl-t-n1", "k0", ["stab", "overhead", "-14", "tbf", "rate", "20000000bit", "burst", "3000", "limit",
                             "100000000"]),
        ("ccbl-t-n1", "k1", ["stab", "overhead", "-14", "netem", "delay", "2000us", "limit", "100000"]),
        ("ccbl-t-n2", "k1", ["stab", "overhead", "-14", "netem", "delay", "2000us", "limit", "100000"]),
    ]  # fmt: skip
    fake.calls.clear()
    topo.netem_loss({0: 5_000_000})
    assert [(c[2], c[4], c[6], c[-5:]) for c in fake.calls] == [
        ("ccbl-t-n0", "change", "k0", ["loss", "random", "1%", "limit", "100000"]),
        ("ccbl-t-n2", "change", "k1", ["loss", "random", "2%", "limit", "100000"]),
        ("ccbl-t-n0", "replace", "a1", ["loss", "random", "0.3%", "limit", "100000"]),
        ("ccbl-t-s2", "replace", "eth0", ["loss", "random", "0.1%", "limit", "100000"]),
    ]
    assert fake.calls[1][13:16] == ["netem", "delay", "2000us"]  # the change keeps the link's delay
    fake.calls.clear()
    topo.netem_delay(plan.senders[0], 5_000_000)
    assert fake.calls == [["tc", "-n", "ccbl-t-n0", "qdisc", "replace", "dev", "a0", "root", "netem", "delay",
                           "5000us", "limit", "100000"]]  # fmt: skip
    # the same spec without netem: refused by name; without the losses, delay lines
    with pytest.raises(BackendError, match=r"topology.hops\[0\].loss = 0.01 \(random loss\) needs the netem"):
        plan_of(d, KERNEL)
    line = NetworkTopology(plan_of(PARKING_LOT, KERNEL), run_id="t")
    assert line.plan.delay_method == "delayline" and "ccbl-t-x1" in line.namespaces()


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("tc") is None, reason="needs root and tc")
def test_tc_parses_the_netem_arguments_the_backend_builds():
    """tc parses netem's options before asking the kernel, so on this kernel (no netem) a
    mistake in them still shows: tc must fail only on the missing qdisc kind."""
    plan = plan_of(DUMBBELL, WITH_NETEM)
    lists = [netem_args(20_000_000, plan.senders[0].access_loss_netem),
             netem_args(0, plan.senders[1].access_reverse_loss_netem),
             # netem ahead of a tbf: the root, with the size table
             ["handle", "1:", "stab", "overhead", "-14", *netem_args(2_000_000, ("loss", "random", "1%"))]]  # fmt: skip
    misspelt = [*lists[1][:2], "gemodle", *lists[1][3:]]
    ns = f"{system.NAMESPACE_PREFIX}probe-{os.getpid()}-netem"
    system.cmd(["ip", "netns", "add", ns])
    try:
        for args in lists:
            proc = system.cmd(["tc", "-n", ns, "qdisc", "add", "dev", "lo", "root", *args], check=False)
            assert proc.returncode == 0 or "kind is unknown" in proc.stderr, (args, proc.stderr)
            system.cmd(["tc", "-n", ns, "qdisc", "del", "dev", "lo", "root"], check=False)
        proc = system.cmd(["tc", "-n", ns, "qdisc", "add", "dev", "lo", "root", *misspelt], check=False)
        assert proc.returncode != 0 and "kind is unknown" not in proc.stderr, (misspelt, proc.stderr)
    finally:
        system.cmd(["ip", "netns", "del", ns], check=False)


def test_each_directions_netem_goes_on_the_device_that_carries_only_that_direction(monkeypatch):
    from ccbench.backends.linux import netns

    calls: list[list[str]] = []
    monkeypatch.setattr(netns, "cmd", lambda argv, **kw: calls.append(list(argv)))
    d = copy.deepcopy(DUMBBELL)
    d["senders"][1]["rtt"] = "10ms"  # both senders delayed: netem delay and loss share a<1>
    topo = netns.Topology(plan_of(d, WITH_NETEM), run_id="t")
    topo.netem_loss({0: 19_900_000, 1: 9_900_000})
    assert calls == [
        ["tc", "-n", "ccbl-t-s0", "qdisc", "replace", "dev", "eth0", "root", "netem", "loss", "random", "0.1%",
         "limit", "100000"],
        ["tc", "-n", "ccbl-t-r", "qdisc", "replace", "dev", "a1", "root", "netem", "delay", "9900us", "loss", "gemodel",
         "1%", "30%", "75%", "0.1%", "limit", "100000"],
    ]  # fmt: skip
    calls.clear()
    line = netns.Topology(plan_of({**d, "linux": {"delay": "delayline"}}, WITH_NETEM), run_id="t")
    line.netem_loss({0: 19_900_000, 1: 9_900_000})
    assert [c[2] for c in calls] == ["ccbl-t-s0", "ccbl-t-r"] and calls[1][6] == "dl1"
    assert "delay" not in calls[1]  # the delay line holds the delay


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("tc") is None, reason="needs root and tc")
def test_the_queue_under_a_root_qdisc_is_built_changed_and_sampled_by_the_kernel(monkeypatch):
    """This kernel has no netem, so a tbf stands in for it as the root: the rest of the
    hierarchy the backend builds under netem (the link's tbf at ``parent 1:1 handle 2:``,
    the fifo at ``2:1``), a rate change of that tbf, and sampling the queue with the
    root's drops all run against the kernel."""
    from ccbench.backends.linux import netns, sampling

    d = copy.deepcopy(DUMBBELL)
    d["bottleneck"]["loss"] = 0.01
    topo = netns.Topology(plan_of(d, WITH_NETEM), run_id="t")
    stand_in = ["tbf", "rate", "1gbit", "burst", "100000", "limit", "100000000"]
    monkeypatch.setattr(topo, "netem_ahead", lambda q: stand_in if q.loss_netem else None)
    q = topo.plan.bottleneck
    ns = f"{system.NAMESPACE_PREFIX}probe-{os.getpid()}-layers"
    system.cmd(["ip", "netns", "add", ns])
    try:
        system.cmd(["ip", "-n", ns, "link", "add", "v0", "type", "veth", "peer", "name", "v1"])
        for dev in ("v0", "v1"):
            system.cmd(["ip", "-n", ns, "link", "set", dev, "up"])
        topo._shape(ns, "v0", q, "10:")
        probe = topo.probe(q, ns, "v0", "10:")
        assert probe.drops_handle == "1:"
        topo.change_rate(q, probe, 40_000_000)
        shown = {x["handle"]: x for x in json.loads(system.cmd(["tc", "-n", ns, "-j", "qdisc", "show", "dev", "v0"]).stdout)}
        assert (shown["1:"]["kind"], shown["1:"].get("root")) == ("tbf", True)
        assert (shown["2:"]["kind"], shown["2:"]["parent"]) == ("tbf", "1:1")
        assert shown["2:"]["options"]["rate"] in (40_000_000 // 8, 40_000_000), shown["2:"]  # changed under the root
        assert (shown["10:"]["kind"], shown["10:"]["parent"], shown["10:"]["options"]["limit"]) == ("pfifo", "2:1", 20)
        sampler = sampling.Sampler(lambda: 0, 100_000_000, [], [probe])
        sampler.sample_once()
        assert sampler.errors == [] and [link for _, link, _ in sampler.queues] == ["bottleneck"]
    finally:
        system.cmd(["ip", "netns", "del", ns], check=False)
