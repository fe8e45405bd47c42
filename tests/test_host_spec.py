"""The [host] table and per-sender host overrides: presets, layering, errors, and what
reaches the engine configuration and the manifest."""

import pytest

from ccbench.spec import IDEAL_HOST, LINUX_HOST, SpecError, load_spec


def spec(**extra):
    d = {
        "experiment": {"name": "h", "duration": "2s"},
        "bottleneck": {"rate": "100Mbit", "buffer": "50pkt"},
        "senders": [{"name": "a", "rtt": "10ms"}, {"name": "b", "rtt": "10ms"}],
        "flows": [{"cca": "cubic", "sender": "a"}, {"cca": "cubic", "sender": "b"}],
    }
    d.update(extra)
    return d


def hosts(d):
    return [s["host"] for s in load_spec(d, ccas=None).resolve()["topology"]["senders"]]


def test_default_host_is_linux():
    assert hosts(spec()) == [LINUX_HOST, LINUX_HOST]


def test_ideal_preset_and_field_overrides_layer_per_sender():
    d = spec(host={"model": "ideal", "hz": 250})
    d["senders"][1]["host"] = {"gso_max_segs": 4}
    a, b = hosts(d)
    assert a == {**IDEAL_HOST, "hz": 250}
    assert b == {**IDEAL_HOST, "hz": 250, "gso_max_segs": 4}


def test_a_sender_naming_its_own_model_ignores_the_global_table():
    d = spec(host={"timing_noise": 3})
    d["senders"][0]["host"] = {"model": "linux"}
    a, b = hosts(d)
    assert a == LINUX_HOST
    assert b == {**LINUX_HOST, "timing_noise": 3.0}


def test_delay_path_and_tc_accounting_reach_the_engine():
    d = spec()
    d["senders"][0]["delay_path"] = "ack"
    d["bottleneck"]["limit_includes_head"] = False
    cfg = load_spec(d, ccas=None).resolve()
    assert [s["delay_path"] for s in cfg["topology"]["senders"]] == ["ack", "split"]
    assert cfg["topology"]["bottleneck"]["limit_includes_head"] is False


@pytest.mark.parametrize(
    "host, field",
    [
        ({"model": "bsd"}, "host.model"),
        ({"gso_max_segs": 0}, "host.gso_max_segs"),
        ({"hz": 7}, "host.hz"),
        ({"timing_noise": -1}, "host.timing_noise"),
        ({"gro": True}, "host.gro"),
    ],
)
def test_bad_host_values_name_the_field(host, field):
    with pytest.raises(SpecError) as e:
        load_spec(spec(host=host), ccas=None)
    assert field in str(e.value)


def test_bad_sender_override_names_the_sender_path():
    d = spec()
    d["senders"][1]["host"] = {"gso_max_segs": 70000}
    with pytest.raises(SpecError) as e:
        load_spec(d, ccas=None)
    assert "senders[1].host.gso_max_segs" in str(e.value)
    d = spec()
    d["senders"][0]["delay_path"] = "sideways"
    with pytest.raises(SpecError) as e:
        load_spec(d, ccas=None)
    assert "senders[0].delay_path" in str(e.value)


def test_manifest_records_the_resolved_hosts(tmp_path):
    import ccbench

    d = spec()
    d["senders"][1]["host"] = {"model": "ideal"}
    r = ccbench.run(d, tmp_path / "run")
    m = ccbench.load(tmp_path / "run").manifest
    assert m["derived"]["hosts"] == {"a": LINUX_HOST, "b": IDEAL_HOST}
    assert m["engine_config"]["topology"]["senders"][1]["host"] == IDEAL_HOST
    assert r.flows.delivered_bytes.min() > 0


def test_ideal_host_is_deterministic_and_linux_host_differs_by_seed():
    import ccbench

    ideal = spec(host={"model": "ideal"})
    a = ccbench.run(ideal, seed=3).flows.delivered_bytes.tolist()
    b = ccbench.run(ideal, seed=3).flows.delivered_bytes.tolist()
    assert a == b
    linux = spec()
    x = ccbench.run(linux, seed=3).flows.delivered_bytes.tolist()
    assert x == ccbench.run(linux, seed=3).flows.delivered_bytes.tolist()
    assert x != ccbench.run(linux, seed=4).flows.delivered_bytes.tolist()
