"""Queue disciplines in the spec: kinds with tc defaults, overrides, limits from the
buffer, shaper and loss models, the ECN warning, and what the engine does with them."""

from __future__ import annotations

import warnings

import pytest

from ccbench.spec import Experiment, SpecError, SpecWarning


def make(d, ccas):
    return Experiment.from_dict(d, ccas=ccas)


def qdisc_of(d, ccas):
    return make(d, ccas).resolve()["topology"]["bottleneck"]["qdisc"]


@pytest.mark.parametrize(
    "kind,expect",
    [
        ("codel", {"target_ns": 5_000_000, "interval_ns": 100_000_000, "ecn": False, "ce_threshold_ns": None}),
        ("fq_codel", {"flows": 1024, "ecn": True, "memory_limit_bytes": 32 * 2**20, "quantum_bytes": 1500}),
        ("pie", {"target_ns": 15_000_000, "tupdate_ns": 15_000_000, "alpha": 2, "beta": 20, "ecn": False}),
        ("fq_pie", {"flows": 1024, "ecn_prob": 10, "target_ns": 15_000_000}),
        ("red", {"probability": 0.02, "avpkt_bytes": 1000, "bandwidth_bps": 10_000_000, "burst_pkts": None}),
    ],
)
def test_kind_names_give_tc_defaults(base_spec, ccas, kind, expect):
    base_spec["bottleneck"]["qdisc"] = kind
    q = qdisc_of(base_spec, ccas)
    assert q["kind"] == kind
    for k, v in expect.items():
        assert q[k] == v, k


def test_limit_comes_from_the_buffer_in_each_kinds_unit(base_spec, ccas):
    base_spec["bottleneck"]["buffer"] = "900pkt"
    base_spec["bottleneck"]["qdisc"] = "codel"
    assert qdisc_of(base_spec, ccas)["limit_packets"] == 900
    base_spec["bottleneck"]["qdisc"] = {"kind": "red"}
    q = qdisc_of(base_spec, ccas)
    # 900 packets of 1500 bytes; tc: max = limit / 4, min = max / 3.
    assert q["limit_bytes"] == 900 * 1500
    assert q["max_bytes"] == 900 * 1500 // 4
    assert q["min_bytes"] == 900 * 1500 // 4 // 3
    base_spec["bottleneck"]["qdisc"] = {"kind": "red", "min": 0.1, "max": "500KB", "limit": "2MB", "ecn": True}
    q = qdisc_of(base_spec, ccas)
    assert (q["min_bytes"], q["max_bytes"], q["limit_bytes"], q["ecn"]) == (200_000, 500_000, 2_000_000, True)


def test_shaper_wraps_the_qdisc_and_sets_the_bdp(base_spec, ccas):
    base_spec["bottleneck"].update(rate="1Gbit", shaper={"rate": "100Mbit", "burst": "64KB"}, qdisc="fq_codel")
    x = make(base_spec, ccas)
    q = x.resolve()["topology"]["bottleneck"]["qdisc"]
    assert q["kind"] == "tbf" and q["rate_bps"] == 100_000_000 and q["burst_bytes"] == 64_000
    assert q["child"]["kind"] == "fq_codel"
    # BDP at the shaped rate: 100 Mbit/s x 40 ms (min RTT) / 8.
    assert x.derived()["buffer"]["bdp_bytes"] == 500_000
    # ... and utilization counts against the shaped rate, not the line rate
    assert x.derived()["bottleneck"]["rate_bps"] == 100_000_000


def test_gilbert_elliott_and_reverse_loss(base_spec, ccas):
    base_spec["bottleneck"]["loss"] = {"model": "gilbert_elliott", "p": 0.01, "r": 0.25}
    base_spec["bottleneck"]["reverse_loss"] = "1%"
    topo = make(base_spec, ccas).resolve()["topology"]
    assert topo["bottleneck"]["gilbert_elliott"] == {"p": 0.01, "r": 0.25, "loss_good": 0.0, "loss_bad": 1.0}
    assert topo["reverse_bottleneck"]["loss"] == 0.01


def test_prio_by_group_maps_flows_to_bands(base_spec, ccas):
    base_spec["bottleneck"]["qdisc"] = {"kind": "prio", "band_of": {"reno": 0}}
    q = qdisc_of(base_spec, ccas)
    # flows: two of group "c", then one of group "reno".
    assert q["classifier"] == {"by": "flow", "band_of_flow": [1, 1, 0], "default_band": 1}


def test_ecn_with_a_qdisc_that_never_marks_warns(base_spec, ccas):
    for f in base_spec["flows"]:
        f["ecn"] = True
    assert any("never marks" in w for w in make(base_spec, ccas).warnings())
    base_spec["bottleneck"]["qdisc"] = "fq_codel"
    assert make(base_spec, ccas).warnings() == []
    base_spec["bottleneck"]["qdisc"] = {"kind": "fq_codel", "ecn": False}
    assert make(base_spec, ccas).warnings()


def test_round_trip_keeps_qdisc_tables(base_spec, ccas):
    base_spec["bottleneck"]["qdisc"] = {"kind": "pie", "ecn": True, "target": "20ms"}
    x = make(base_spec, ccas)
    assert make(x.to_dict(), ccas) == x


def test_bad_qdisc_parameters_name_the_field(base_spec, ccas):
    base_spec["bottleneck"]["qdisc"] = {"kind": "pie", "alpha": 99}
    with pytest.raises(SpecError) as e:
        make(base_spec, ccas)
    assert e.value.issues[0][0] == "bottleneck.qdisc.alpha"


@pytest.mark.engine
@pytest.mark.parametrize("kind", ["red", "codel", "fq_codel", "pie", "fq_pie"])
def test_each_aqm_runs_and_keeps_the_queue_below_a_fifo(kind):
    from ccbench import engine

    def spec(qdisc):
        return {
            "experiment": {"name": "aqm", "duration": "8s", "warmup": "3s", "sample_interval": "10ms"},
            "bottleneck": {"rate": "20Mbit", "delay": "5ms", "buffer": "4BDP", "qdisc": qdisc},
            "senders": [{"name": "a", "rtt": "40ms"}],
            "flows": [{"cca": "reno", "count": 4, "ecn": kind == "fq_codel"}],
        }

    def mean_backlog(qdisc):
        raw = engine.run_config(Experiment.from_dict(spec(qdisc)).resolve())
        q = raw["tables"]["queue_ts"]
        codes, names = q["link"]
        on = (codes == names.index("bottleneck")) & (q["time_ns"] >= 3e9)
        return float(q["backlog_bytes"][on].mean()), raw

    fifo, _ = mean_backlog("bfifo")
    aqm, raw = mean_backlog(kind)
    assert aqm < 0.5 * fifo, (kind, aqm, fifo)
    s = raw["stats"]
    assert s["data_pkts_sent"] == s["data_pkts_delivered"] + s["data_pkts_dropped"] + s["data_pkts_in_network"]
    if kind == "fq_codel":
        # Counted per flow (per-packet ecn_mark rows need experiment.packet_events).
        assert raw["tables"]["flows"]["ecn_marked_pkts"].sum() > 0, "fq_codel marks ECN-capable flows"


@pytest.mark.engine
def test_a_shaped_links_utilization_counts_against_the_shaper_rate():
    """A 1 Gbit/s line shaped to 10 Mbit/s: one flow fills the shaped rate, so its
    utilization is near 1 (0.01 if the line rate were counted)."""
    from ccbench import api

    d = {
        "experiment": {"name": "shaped", "duration": "4s", "warmup": "1s"},
        "bottleneck": {"rate": "1Gbit", "shaper": {"rate": "10Mbit", "burst": "30000B"}, "buffer": "2BDP"},
        "senders": [{"name": "a", "rtt": "20ms"}],
        "flows": [{"cca": "cubic"}],
    }
    util = api.run(d).summary()["utilization"]
    assert 0.85 < util <= 1.02, util


@pytest.mark.engine
def test_api_run_warns_about_ecn_without_marking(tmp_path):
    from ccbench import api

    d = {
        "experiment": {"name": "w", "duration": "1s"},
        "bottleneck": {"rate": "10Mbit"},
        "senders": [{"name": "a", "rtt": "20ms"}],
        "flows": [{"cca": "reno", "ecn": True}],
    }
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api.run(d)
    assert any(issubclass(w.category, SpecWarning) for w in caught)


def test_cli_validate_prints_the_ecn_warning(tmp_path):
    from click.testing import CliRunner

    from ccbench.cli import cli

    spec = tmp_path / "e.toml"
    spec.write_text(
        '[experiment]\nname = "e"\nduration = "2s"\n[bottleneck]\nrate = "10Mbit"\n'
        '[[senders]]\nname = "a"\nrtt = "20ms"\n[[flows]]\ncca = "reno"\necn = true\n'
    )
    r = CliRunner().invoke(cli, ["validate", str(spec)])
    assert r.exit_code == 0, r.output
    assert "never marks" in r.output


#: Fields of the engine's qdisc configuration that the spec derives from the link
#: (its buffer, packet size), not from a default of the kind.
_LINK_DERIVED = {"kind", "limit_packets", "limit_bytes", "min_bytes", "max_bytes", "mtu_bytes", "quantum_bytes"}


def _link_derived_only(q):
    """``q`` with only the link-derived fields (and child qdiscs reduced the same way)."""
    return {k: (_link_derived_only(v) if isinstance(v, dict) else v) for k, v in q.items() if k in _LINK_DERIVED or isinstance(v, dict)}


@pytest.mark.engine
@pytest.mark.parametrize("kind", ["pfifo", "bfifo", "red", "codel", "fq_codel", "pie", "fq_pie", "ncf"])
def test_spec_defaults_are_the_engines_defaults(base_spec, ccas, kind):
    """The spec resolves a bare kind name with its defaults; the engine, given only the
    link-derived fields, fills the rest with its own serde defaults: they must agree."""
    import json

    from ccbench import _core

    base_spec["bottleneck"]["qdisc"] = kind
    ours = qdisc_of(base_spec, ccas)
    minimal = _link_derived_only(ours)
    assert len(minimal) < len(ours) or kind in ("pfifo", "bfifo")
    engines = json.loads(_core.qdisc_config(json.dumps(minimal)))
    assert engines == ours


@pytest.mark.engine
def test_the_engine_names_a_bad_qdisc_configuration():
    from ccbench import _core

    with pytest.raises(ValueError, match="not a qdisc configuration: unknown variant `sfq`"):
        _core.qdisc_config('{"kind": "sfq"}')
