"""Random loss with netem on kernels that have it: the plan, tc's argument lists, and
the up-front refusal on kernels (like this one) that do not."""

from __future__ import annotations

import copy
import os
import shutil

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


def test_what_netem_is_not_chained_with_yet_is_refused_by_name():
    d = copy.deepcopy(DUMBBELL)
    d["senders"][0]["access_rate"] = "50Mbit"
    d["bottleneck"]["loss"] = 0.01
    with pytest.raises(BackendError) as e:
        plan_of(d, WITH_NETEM)
    text = str(e.value)
    assert "senders[0].access_loss = 0.001 (random loss) with senders[0].access_rate" in text
    assert (
        "bottleneck.loss = 0.01 (random loss) needs the netem qdisc, which the linux backend does not drive yet" in text
    )
    assert "2 problems" in text


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("tc") is None, reason="needs root and tc")
def test_tc_parses_the_netem_arguments_the_backend_builds():
    """tc parses netem's options before asking the kernel, so on this kernel (no netem) a
    mistake in them still shows: tc must fail only on the missing qdisc kind."""
    plan = plan_of(DUMBBELL, WITH_NETEM)
    lists = [netem_args(20_000_000, plan.senders[0].access_loss_netem),
             netem_args(0, plan.senders[1].access_reverse_loss_netem)]  # fmt: skip
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
