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


def test_a_reverse_table_configures_the_ack_direction(base_spec, ccas):
    d = spec(base_spec, reverse={"rate": "10Mbit", "buffer": "2BDP", "qdisc": "codel"})
    d["bottleneck"]["reverse"]["rate_schedule"] = [{"at": "4s", "rate": "1Mbit"}]
    t = Experiment.from_dict(d, ccas=ccas).resolve()["topology"]
    r = t["reverse_bottleneck"]
    # 2 BDP at the reverse rate over the bottleneck's bdp_rtt (the minimum RTT, 40 ms).
    assert (r["rate_bps"], r["delay_ns"]) == (10_000_000, t["bottleneck"]["delay_ns"])
    assert r["qdisc"]["kind"] == "codel" and r["qdisc"]["limit_packets"] == 2 * 50_000 // 1500 + 1
    assert r["rate_schedule"] == [[4_000_000_000, 1_000_000]]
    # An empty table is the engine's default reverse link; none at all leaves it to the engine.
    d["bottleneck"]["reverse"] = {}
    r = Experiment.from_dict(d, ccas=ccas).resolve()["topology"]["reverse_bottleneck"]
    assert (r["rate_bps"], r["qdisc"], r["rate_schedule"]) == (100_000_000, {"kind": "pfifo", "limit_packets": 1000}, [])
    del d["bottleneck"]["reverse"]
    assert Experiment.from_dict(d, ccas=ccas).resolve()["topology"]["reverse_bottleneck"] is None


def test_reverse_mistakes_name_the_reverse_field(base_spec, ccas):
    d = spec(base_spec, reverse={"rate": "0bit", "qdisc": {"kind": "red", "min": 0.5, "max": 0.4}})
    d["bottleneck"]["reverse"]["rate_schedule"] = [{"at": "20s", "rate": "1Mbit"}]
    with pytest.raises(SpecError) as e:
        Experiment.from_dict(d, ccas=ccas)
    fields = {path for path, _ in e.value.issues}
    assert {"bottleneck.reverse.rate", "bottleneck.reverse.rate_schedule[0].at"} <= fields
    d["bottleneck"]["reverse"] = {"qdisc": {"kind": "red", "min": 0.5, "max": 0.4}}
    with pytest.raises(SpecError) as e:
        Experiment.from_dict(d, ccas=ccas)
    assert "bottleneck.reverse.qdisc.min" in {path for path, _ in e.value.issues}
    d["bottleneck"]["reverse"] = {"delay": "5ms"}
    with pytest.raises(SpecError, match="bottleneck.reverse.delay"):
        Experiment.from_dict(d, ccas=ccas)


@pytest.mark.engine
def test_a_slow_reverse_link_delays_or_drops_the_acks_and_its_schedule_applies(base_spec):
    import ccbench

    d = base_spec
    d["experiment"].update(duration="6s", warmup="2s")
    d["host"] = {"model": "ideal"}  # one ACK per two segments, no GRO merging
    d["bottleneck"].update(rate="50Mbit")
    d["flows"] = [{"sender": "b", "cca": "cubic"}]

    def run(reverse: dict[str, Any] | None) -> tuple[float, float, Any]:
        """Goodput, median smoothed RTT (s) and the reverse link's queue samples."""
        if reverse is not None:
            d["bottleneck"]["reverse"] = reverse
        res = ccbench.run(d)
        f, ts, q = res.flows, res.flow_ts, res.queue_ts
        goodput = float((f["delivered_bytes"] - f["delivered_bytes_at_warmup"]).sum() * 8 / 4)
        srtt = float(ts[ts["time_ns"] >= 2e9]["srtt_ns"].median()) / 1e9
        return goodput, srtt, q[(q["link"] == "bottleneck_rev") & (q["time_ns"] >= 2e9)]

    free, free_rtt, _ = run(None)
    # 0.4 Mbit/s carries about 960 ACKs of 52 bytes a second, half of what 50 Mbit/s
    # of data asks for: with a deep reverse queue the ACKs wait (RTT up, goodput down) ...
    deep, deep_rtt, deep_q = run({"rate": "400kbit", "buffer": "1000pkt"})
    # ... with a shallow one they are dropped instead (cumulative ACKs lose little).
    shallow, shallow_rtt, shallow_q = run({"rate": "400kbit", "buffer": "20pkt"})
    sped_up, sped_up_rtt, _ = run({"rate": "400kbit", "buffer": "1000pkt", "rate_schedule": [{"at": "1s", "rate": "50Mbit"}]})
    assert free > 0.9 * 50e6 * 1448 / 1500 and free_rtt < 0.1, (free, free_rtt)
    assert deep < 0.6 * free and deep_rtt > free_rtt + 0.1, (deep, deep_rtt)
    assert deep_q["backlog_pkts"].mean() > 100
    assert shallow_q["backlog_pkts"].max() <= 20 and shallow_q["dropped_pkts"].iloc[-1] > 1000
    full_shallow_queue_s = 20 * 52 * 8 / 400e3  # 21 ms of ACKs at most
    assert shallow_rtt < free_rtt + full_shallow_queue_s + 0.005 and shallow > deep, (shallow, shallow_rtt)
    assert sped_up > 0.95 * free and sped_up_rtt < free_rtt + 0.01, (sped_up, sped_up_rtt)


def hierarchy(d: dict[str, Any]) -> dict[str, Any]:
    """Groups a1 and a2 under an inner class "a" capped at 15 Mbit/s; b beside it."""
    flow = d["flows"][0]
    d["flows"] = [{**flow, "name": g, "count": 1} for g in ("a1", "a2", "b")]
    d["bottleneck"].update(
        rate="50Mbit",
        qdisc={
            "kind": "htb",
            "classes": [
                {"name": "a", "rate": "15Mbit"},
                {"parent": "a", "groups": ["a1"], "rate": "5Mbit", "ceil": "50Mbit"},
                {"parent": "a", "groups": ["a2"], "rate": "5Mbit", "ceil": "50Mbit"},
                {"groups": ["b"], "rate": "5Mbit", "ceil": "50Mbit"},
            ],
        },
    )
    return d


def test_htb_inner_classes_resolve_to_parent_indices(base_spec, ccas):
    q = Experiment.from_dict(hierarchy(base_spec), ccas=ccas).resolve()["topology"]["bottleneck"]["qdisc"]
    assert [c["parent"] for c in q["classes"]] == [None, 0, 0, None]
    assert q["classes"][0]["child"] is None and q["classes"][1]["child"]["kind"] == "pfifo"
    assert q["classifier"]["band_of_flow"] == [1, 2, 3]


def test_htb_hierarchy_mistakes_name_the_field(base_spec, ccas):
    d = hierarchy(base_spec)
    classes = d["bottleneck"]["qdisc"]["classes"]
    classes[0], classes[1] = classes[1], classes[0]
    with pytest.raises(SpecError, match=r"classes\[0\]\.parent: 'a' must be the name of an earlier class \(list a parent"):
        Experiment.from_dict(d, ccas=ccas)
    d = hierarchy(base_spec)
    d["bottleneck"]["qdisc"]["classes"][0]["groups"] = ["b"]
    with pytest.raises(SpecError, match="'a' is an inner class"):
        Experiment.from_dict(d, ccas=ccas)
    d = hierarchy(base_spec)
    d["bottleneck"]["qdisc"]["classes"][3]["name"] = "a"
    with pytest.raises(SpecError, match=r"classes\[3\]\.name: 'a' is already the name"):
        Experiment.from_dict(d, ccas=ccas)


@pytest.mark.engine
def test_htb_inner_class_caps_its_children_end_to_end(base_spec):
    import ccbench

    d = hierarchy(base_spec)
    d["experiment"].update(duration="8s", warmup="3s")
    res = ccbench.run(d)
    f = res.flows.set_index("group")
    goodput = (f["delivered_bytes"] - f["delivered_bytes_at_warmup"]) * 8 / 5
    # a1 and a2 borrow only through "a": 15 Mbit/s of wire rate together; b the rest.
    payload = 1448 / 1500
    assert 0.85 * 15e6 * payload < goodput["a1"] + goodput["a2"] < 15e6 * payload * 1.03, goodput
    assert goodput["b"] > 0.85 * 35e6 * payload, goodput
