import json
import math
from pathlib import Path

import pytest

from ccbench.spec import Experiment, SpecError, load_spec

SPECS = Path(__file__).resolve().parent.parent / "specs"


def make(d, ccas):
    return Experiment.from_dict(d, ccas=ccas)


def test_quickstart_resolves_to_the_documented_config(ccas):
    exp = load_spec(SPECS / "quickstart.toml", ccas=ccas)
    cfg = exp.resolve()
    assert cfg["duration_ns"] == 30 * 10**9
    assert cfg["warmup_ns"] == 5 * 10**9
    assert cfg["sample_interval_ns"] == 100 * 10**6
    link = cfg["topology"]["bottleneck"]
    # 1 BDP = 100 Mbit/s x 100 ms / 8 = 1 250 000 B = ceil(833.3) packets of 1500 B.
    assert link["qdisc"] == {"kind": "pfifo", "limit_packets": 834}
    assert link["rate_bps"] == 100_000_000
    assert [(f["cca"], f["count"]) for f in cfg["flows"]] == [("cubic", 2)]
    assert exp.derived()["buffer"] == {
        "qdisc": "pfifo",
        "bytes": 1_250_000,
        "packets": 834,
        "bdp_bytes": 1_250_000,
        "bdp_rtt_ns": 100_000_000,
        "packet_bytes": 1500,
    }


@pytest.mark.parametrize("path", sorted(SPECS.glob("*.toml")), ids=lambda p: p.name)
def test_every_shipped_spec_validates(path, ccas):
    exp = load_spec(path, ccas=ccas)
    json.dumps(exp.resolve())


def test_resolved_config_has_exactly_the_engine_fields(base_spec, ccas):
    cfg = make(base_spec, ccas).resolve()
    # Mirrors crates/ccsim/src/config.rs (deny_unknown_fields) plus start_jitter_ns.
    assert set(cfg) == {
        "seed", "duration_ns", "warmup_ns", "sample_interval_ns", "sojourn_sample_every", "packet_events",
        "topology", "flows",
    }  # fmt: skip
    assert set(cfg["topology"]) == {"kind", "bottleneck", "reverse_bottleneck", "senders"}
    assert set(cfg["topology"]["bottleneck"]) == {
        "rate_bps", "delay_ns", "jitter_ns", "qdisc", "loss", "gilbert_elliott", "rate_schedule", "limit_includes_head",
    }  # fmt: skip
    assert set(cfg["topology"]["senders"][0]) == {
        "name", "rtt_ns", "access_rate_bps", "access_queue_packets", "delay_path", "jitter_ns", "host",
        "access_loss", "access_reverse_loss",
    }  # fmt: skip
    assert set(cfg["topology"]["senders"][0]["host"]) == {
        "timing_noise", "gso_max_segs", "gso_max_size", "gro_max_size", "hz",
    }  # fmt: skip
    assert set(cfg["flows"][0]) == {
        "count", "sender", "group", "cca", "cca_params", "start_ns", "start_jitter_ns", "stop_ns", "size_bytes",
        "mss", "rwnd_bytes", "initial_cwnd", "delayed_ack", "pacing", "ecn", "min_rto_ns",
    }  # fmt: skip
    for f in cfg["flows"]:
        for k in ("count", "start_ns", "start_jitter_ns", "mss", "rwnd_bytes", "initial_cwnd", "min_rto_ns", "sender"):
            assert isinstance(f[k], int) and not isinstance(f[k], bool)


def test_flows_keep_count_in_spec_order(base_spec, ccas):
    base_spec["flows"][0]["count"] = 3
    cfg = make(base_spec, ccas).resolve()
    assert [(f["count"], f["group"], f["sender"], f["cca"]) for f in cfg["flows"]] == [
        (3, "c", 0, "cubic"), (1, "reno", 1, "reno"),
    ]  # fmt: skip
    reno = cfg["flows"][1]
    assert reno["start_ns"] == 10**9 and reno["stop_ns"] == 8 * 10**9 and reno["size_bytes"] == 10**7
    assert cfg["flows"][0]["cca_params"] == {"beta": 700}
    assert cfg["flows"][0]["stop_ns"] is None and cfg["flows"][0]["size_bytes"] is None


def test_a_million_flows_stay_one_entry(base_spec, ccas):
    """count is passed to the engine, not expanded in Python (issue 17): the resolved
    config of a million flows is as small as that of one."""
    base_spec["flows"][0]["count"] = 999_999
    exp = make(base_spec, ccas)
    cfg = exp.resolve()
    assert [f["count"] for f in cfg["flows"]] == [999_999, 1]
    assert len(json.dumps(cfg)) < 5000 and exp.derived()["num_flows"] == 1_000_000


def test_defaults(ccas):
    exp = make(
        {
            "experiment": {"name": "d", "duration": "10s"},
            "bottleneck": {"rate": "1Gbit"},
            "senders": [{"name": "s", "rtt": "20ms"}],
            "flows": [{"cca": "reno"}],
        },
        ccas,
    )
    cfg = exp.resolve()
    assert cfg["seed"] == 1 and cfg["warmup_ns"] == 0 and cfg["sample_interval_ns"] == 100_000_000
    link = cfg["topology"]["bottleneck"]
    # Default buffer 1 BDP in bytes -> bfifo: 1 Gbit/s x 20 ms / 8 = 2.5 MB.
    assert link == {
        "rate_bps": 10**9,
        "delay_ns": 0,
        "jitter_ns": 0,  # a constant delay
        "qdisc": {"kind": "bfifo", "limit_bytes": 2_500_000},
        "loss": 0.0,
        "gilbert_elliott": None,
        "rate_schedule": [],
        "limit_includes_head": True,  # tc accounting (tbf + pfifo)
    }
    s = cfg["topology"]["senders"][0]
    assert s["access_rate_bps"] == 10 * 10**9  # 10x the bottleneck
    assert s["delay_path"] == "split" and s["jitter_ns"] == 0
    assert s["host"] == {"timing_noise": 1.0, "gso_max_segs": 65535, "gso_max_size": 65536,
                         "gro_max_size": 65536, "hz": 250}  # fmt: skip
    f = cfg["flows"][0]
    assert f["group"] == "reno" and f["sender"] == 0
    assert f["mss"] == 1448 and f["initial_cwnd"] == 10 and f["delayed_ack"] is True
    assert f["pacing"] is False and f["ecn"] is False and f["min_rto_ns"] == 200_000_000
    assert f["start_jitter_ns"] == 1_000_000
    assert f["rwnd_bytes"] == 64 * 2**20  # the floor: 2 x (2.5 MB BDP + 2.5 MB buffer) < 64 MiB
    # The access queue can hold every packet the sender's flows may have in flight.
    assert s["access_queue_packets"] >= f["rwnd_bytes"] / f["mss"]


def test_default_rwnd_never_limits_a_big_path(ccas):
    exp = make(
        {
            "experiment": {"name": "big", "duration": "10s"},
            "bottleneck": {"rate": "25Gbit", "buffer": "16BDP"},
            "senders": [{"name": "s", "rtt": "62ms"}],
            "flows": [{"cca": "cubic"}],
        },
        ccas,
    )
    bdp = 25 * 10**9 * 62 // 8000  # 193 750 000 B
    assert exp.resolve()["flows"][0]["rwnd_bytes"] == 2 * (bdp + 16 * bdp)


@pytest.mark.parametrize(
    ("buffer", "bdp_rtt", "qdisc", "expect"),
    [
        ("1BDP", "min", None, {"kind": "bfifo", "limit_bytes": 500_000}),  # 100M x 40ms
        ("1BDP", "max", None, {"kind": "bfifo", "limit_bytes": 1_250_000}),  # 100M x 100ms
        ("2BDP", "a", "pfifo", {"kind": "pfifo", "limit_packets": 1667}),  # 2.5 MB / 1500 = 1666.7
        ("0.25BDP", "b", "pfifo", {"kind": "pfifo", "limit_packets": 84}),  # 125 000 / 1500 = 83.3
        ("0.5BDP", "62ms", None, {"kind": "bfifo", "limit_bytes": 387_500}),  # explicit RTT
        ("900pkt", "min", None, {"kind": "pfifo", "limit_packets": 900}),
        ("900pkt", "min", "bfifo", {"kind": "bfifo", "limit_bytes": 900 * 1500}),
        ("3MB", "min", None, {"kind": "bfifo", "limit_bytes": 3_000_000}),
        ("3MB", "min", "pfifo", {"kind": "pfifo", "limit_packets": 2000}),
        ("64KiB", "min", None, {"kind": "bfifo", "limit_bytes": 65536}),
    ],
)
def test_buffer_arithmetic(base_spec, ccas, buffer, bdp_rtt, qdisc, expect):
    base_spec["bottleneck"].update(buffer=buffer, bdp_rtt=bdp_rtt)
    if qdisc:
        base_spec["bottleneck"]["qdisc"] = qdisc
    exp = make(base_spec, ccas)
    assert exp.resolve()["topology"]["bottleneck"]["qdisc"] == expect
    buf = exp.buffer()
    assert buf.packets == math.ceil(buf.bytes / 1500) or buffer.endswith("pkt")


def test_bdp_uses_the_packet_size_of_the_largest_mss(base_spec, ccas):
    base_spec["flows"][1]["mss"] = 8948  # jumbo: 9000-byte packets
    base_spec["bottleneck"].update(buffer="1BDP", bdp_rtt="max", qdisc="pfifo")
    assert make(base_spec, ccas).buffer().packets == math.ceil(1_250_000 / 9000)


def test_rate_schedule_and_loss(base_spec, ccas):
    base_spec["bottleneck"]["rate_schedule"] = [{"at": "3s", "rate": "50Mbit"}, {"at": "6s", "rate": "200Mbit"}]
    base_spec["bottleneck"]["loss"] = "0.1%"
    cfg = make(base_spec, ccas).resolve()
    link = cfg["topology"]["bottleneck"]
    assert link["rate_schedule"] == [[3 * 10**9, 50 * 10**6], [6 * 10**9, 200 * 10**6]]
    assert link["loss"] == pytest.approx(0.001)
    # Access links default to 10x the highest scheduled rate.
    assert cfg["topology"]["senders"][0]["access_rate_bps"] == 2 * 10**9


def test_to_dict_round_trips(base_spec, ccas):
    exp = make(base_spec, ccas)
    again = make(exp.to_dict(), ccas)
    assert again == exp
    assert again.resolve() == exp.resolve()


def test_seed_override(base_spec, ccas):
    exp = make(base_spec, ccas).with_seed(99)
    assert exp.resolve()["seed"] == 99
    with pytest.raises(SpecError, match="experiment.seed"):
        exp.with_seed(-1)


def issues_of(d, ccas):
    with pytest.raises(SpecError) as e:
        make(d, ccas)
    return str(e.value)


def test_unknown_cca_lists_the_known_ones(base_spec, ccas):
    base_spec["flows"][0]["cca"] = "cubci"
    msg = issues_of(base_spec, ccas)
    assert "flows[0].cca: 'cubci' is not a known CCA; known: reno, cubic, bbr1" in msg


def test_a_mix_entry_checks_its_cca_like_a_flow(base_spec, ccas):
    # One check (spec.traffic.check_cca_name) serves flows[*].cca and flows[*].mix[*].cca;
    # 'udp' is a flow's transport marker, not a CCA a mix may name.
    for bad, why in [("cubci", "'cubci' is not a known CCA; known: reno, cubic, bbr1"), ("udp", "'udp' is not a known CCA")]:
        base_spec["flows"][0]["mix"] = [{"cca": bad, "fraction": 0.5}, {"cca": "reno", "fraction": 0.5}]
        assert f"flows[0].mix[0].cca: {why}" in issues_of(base_spec, ccas)
    base_spec["flows"][0]["cca"] = ""
    del base_spec["flows"][0]["mix"]
    assert "flows[0].cca: '' is not a CCA name" in issues_of(base_spec, ccas)


def test_unknown_cca_param(base_spec, ccas):
    base_spec["flows"][0]["params"] = {"betta": 0.5}
    msg = issues_of(base_spec, ccas)
    assert "flows[0].params" in msg and "'betta'" in msg and "beta" in msg


def test_unknown_key_is_named_with_the_allowed_ones(base_spec, ccas):
    base_spec["bottleneck"]["buffr"] = "1BDP"
    msg = issues_of(base_spec, ccas)
    assert "bottleneck.buffr: unknown key 'buffr'" in msg and "buffer" in msg and "rate_schedule" in msg


def test_missing_key(base_spec, ccas):
    del base_spec["bottleneck"]["rate"]
    assert "bottleneck.rate: required key is missing" in issues_of(base_spec, ccas)


def test_bad_unit_names_path_value_and_forms(base_spec, ccas):
    base_spec["senders"][1]["rtt"] = "40 parsecs"
    msg = issues_of(base_spec, ccas)
    assert "senders[1].rtt: '40 parsecs'" in msg and "ms" in msg


@pytest.mark.parametrize(
    ("mutate", "fragment"),
    [
        (
            lambda d: d["flows"][1].update(sender="c"),
            "flows[1].sender: 'c' is not a sender name (senders[*].name: a, b)",
        ),
        (lambda d: d["flows"][0].pop("sender"), "flows[0].sender: is required when there are several senders"),
        (
            lambda d: d["flows"][1].update(stop="0.5s"),
            "flows[1].stop: '500ms' is not allowed: it must be after flows[1].start",
        ),
        (lambda d: d["flows"][1].update(start="10s"), "flows[1].start"),
        (lambda d: d["experiment"].update(warmup="10s"), "experiment.warmup"),
        (lambda d: d["experiment"].update(duration="0s"), "experiment.duration"),
        (
            lambda d: d["bottleneck"].update(delay="30ms"),
            "senders[1].rtt: '40ms' is not allowed: it must be > 0 and at least twice bottleneck.delay",
        ),
        (lambda d: d["bottleneck"].update(bdp_rtt="z"), "bottleneck.bdp_rtt: 'z'"),
        (lambda d: d["bottleneck"].update(buffer="0pkt"), "bottleneck.buffer"),
        (lambda d: d["bottleneck"].update(rate="0"), "bottleneck.rate"),
        (
            lambda d: d["bottleneck"].update(
                rate_schedule=[{"at": "5s", "rate": "1Mbit"}, {"at": "4s", "rate": "1Mbit"}]
            ),
            "bottleneck.rate_schedule[1].at",
        ),
        (
            lambda d: d["bottleneck"].update(rate_schedule=[{"at": "50s", "rate": "1Mbit"}]),
            "bottleneck.rate_schedule[0].at",
        ),
        (lambda d: d["bottleneck"].update(qdisc="wred"), "bottleneck.qdisc: 'wred' is not a known kind; allowed: 'pfifo'"),
        (lambda d: d["bottleneck"].update(qdisc={"kind": "codel", "targt": "5ms"}), "allowed keys here: kind, limit, target"),
        (lambda d: d["bottleneck"].update(qdisc={"kind": "red", "min": 0.5, "max": 0.2}), "bottleneck.qdisc.min: RED needs"),
        (lambda d: d["bottleneck"].update(loss={"model": "gilbert_elliott", "p": 2, "r": 0.1}), "bottleneck.loss.p"),
        (lambda d: d["bottleneck"].update(shaper={"rate": "10Mbit", "burst": "100B"}), "bottleneck.shaper.burst"),
        (lambda d: d["bottleneck"].update(qdisc={"kind": "prio", "band_of": {"zz": 0}}), "bottleneck.qdisc.band_of: 'zz' is not a flow group"),
        (lambda d: d["bottleneck"].update(loss=1.0), "bottleneck.loss"),
        (
            lambda d: d["senders"][1].update(name="a"),
            "senders[1].name: 'a' is not allowed: sender names must be unique",
        ),
        (lambda d: d["senders"][1].update(name="min"), "senders[1].name: 'min' is reserved"),
        (lambda d: d["senders"].clear(), "senders: at least one [[senders]] table is required"),
        (lambda d: d["flows"][1].update(size="2BDP"), "flows[1].size"),
        (lambda d: d["flows"][1].update(rwnd="100B"), "flows[1].rwnd"),
        (lambda d: d["flows"][0].update(count=0), "flows[0].count: 0 is not valid"),
        (lambda d: d["flows"][0].update(mss=10), "flows[0].mss: 10 is not valid"),
        (lambda d: d["flows"][0].update(pacing="yes"), "flows[0].pacing: 'yes' is not valid"),
        (lambda d: d["experiment"].update(seed=2**64), "experiment.seed"),
        (lambda d: d["experiment"].update(name="has space"), "experiment.name: 'has space' is not a valid name"),
        (
            lambda d: d.update(flows={"cca": "reno"}),
            "flows: {'cca': 'reno'} is not valid: expected an array of tables ([[flows]])",
        ),
    ],
)
def test_invalid_specs_name_the_field(base_spec, ccas, mutate, fragment):
    mutate(base_spec)
    assert fragment in issues_of(base_spec, ccas)


def test_several_problems_are_all_reported(base_spec, ccas):
    base_spec["flows"][0]["cca"] = "nope"
    base_spec["bottleneck"]["rate"] = "fast"
    with pytest.raises(SpecError) as e:
        make(base_spec, ccas)
    paths = [p for p, _ in e.value.issues]
    assert "flows[0].cca" in paths and "bottleneck.rate" in paths


def test_toml_syntax_error_is_a_spec_error(tmp_path, ccas):
    p = tmp_path / "bad.toml"
    p.write_text("[experiment\nname = 'x'\n")
    with pytest.raises(SpecError, match="not valid TOML"):
        load_spec(p, ccas=ccas)


def test_without_a_catalog_cca_names_are_not_checked(base_spec):
    base_spec["flows"][0]["cca"] = "anything"
    base_spec["flows"][0]["params"] = {"x": 1}
    exp = Experiment.from_dict(base_spec, ccas=None)
    assert exp.resolve()["flows"][0]["cca"] == "anything"
