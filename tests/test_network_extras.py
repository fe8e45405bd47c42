"""HTB classes for flow groups, loss on access links per direction, and the sojourn
sampling rate: from the spec to the engine configuration, and end to end."""

from __future__ import annotations

from typing import Any

import pytest

from ccbench.spec import Experiment, SpecError


def spec(base: dict[str, Any], **bottleneck: Any) -> dict[str, Any]:
    base["bottleneck"].update(bottleneck)
    return base


def two_groups(base: dict[str, Any]) -> dict[str, Any]:
    flow = base["flows"][0]
    base["flows"] = [{**flow, "name": "capped", "count": 1}, {**flow, "name": "free", "count": 2}]
    return base


def test_htb_classes_resolve_with_tc_defaults_and_group_classification(base_spec, ccas):
    d = two_groups(base_spec)
    d["bottleneck"]["qdisc"] = {
        "kind": "htb",
        "classes": [{"groups": ["capped"], "rate": "10Mbit"}, {"rate": "10Mbit", "ceil": "100Mbit", "prio": 1}],
    }
    q = Experiment.from_dict(d, ccas=ccas).resolve()["topology"]["bottleneck"]["qdisc"]
    assert q["kind"] == "htb" and q["rate_bps"] == Experiment.from_dict(d, ccas=ccas).bottleneck.rate
    assert q["classifier"] == {"by": "flow", "band_of_flow": [0, 1, 1], "default_band": 1}
    c0, c1 = q["classes"]
    assert (c0["rate_bps"], c0["ceil_bps"], c0["burst_bytes"], c0["prio"]) == (10_000_000, None, None, 0)
    assert (c1["ceil_bps"], c1["prio"]) == (100_000_000, 1)
    assert c0["child"]["kind"] == "pfifo"  # the link's buffer


def test_htb_mistakes_name_the_field(base_spec, ccas):
    d = two_groups(base_spec)
    d["bottleneck"]["qdisc"] = {
        "kind": "htb",
        "classes": [
            {"groups": ["capped", "nope"], "rate": "10Mbit", "ceil": "5Mbit"},
            {"groups": ["capped"], "rate": "10Mbit"},
        ],
    }
    with pytest.raises(SpecError) as e:
        Experiment.from_dict(d, ccas=ccas)
    issues = dict(e.value.issues)
    assert issues["bottleneck.qdisc.classes[0].ceil"] == "must be at least bottleneck.qdisc.classes[0].rate"
    assert "'nope' is not a flow group (groups: capped, free)" in issues["bottleneck.qdisc.classes[0].groups"]
    assert "'capped' is already in bottleneck.qdisc.classes[0]" in issues["bottleneck.qdisc.classes[1].groups"]


def test_access_loss_per_direction_and_sojourn_sampling_reach_the_engine(base_spec, ccas):
    d = base_spec
    d["senders"][0]["access_loss"] = "1%"
    d["senders"][0]["access_reverse_loss"] = {"model": "gilbert_elliott", "p": 0.01, "r": 0.5}
    d["experiment"]["sojourn_sample_every"] = 1
    cfg = Experiment.from_dict(d, ccas=ccas).resolve()
    s = cfg["topology"]["senders"][0]
    assert s["access_loss"] == 0.01
    assert s["access_reverse_loss"] == {"p": 0.01, "r": 0.5, "loss_good": 0.0, "loss_bad": 1.0}
    assert cfg["sojourn_sample_every"] == 1
    d["experiment"]["sojourn_sample_every"] = -1
    with pytest.raises(SpecError) as e:
        Experiment.from_dict(d, ccas=ccas)
    assert "experiment.sojourn_sample_every" in dict(e.value.issues)


@pytest.mark.engine
def test_htb_caps_a_group_end_to_end(base_spec):
    import ccbench

    d = two_groups(base_spec)
    d["experiment"].update(duration="8s", warmup="3s")
    d["bottleneck"].update(
        rate="50Mbit",
        qdisc={
            "kind": "htb",
            "classes": [{"groups": ["capped"], "rate": "5Mbit"}, {"rate": "5Mbit", "ceil": "50Mbit"}],
        },
    )
    res = ccbench.run(d)
    f = res.flows
    goodput = (f["delivered_bytes"] - f["delivered_bytes_at_warmup"]) * 8 / 5
    capped = goodput[f["group"] == "capped"].sum()
    free = goodput[f["group"] == "free"].sum()
    # Held near its 5 Mbit/s (a third of the link would be its fair share); the window's
    # edges can move a few hundred kB of out-of-order data in or out of it.
    assert 4.0e6 < capped < 5.5e6, capped
    assert free > 40e6, free
