"""NCF (docs/ncf.md, issue 11): the ``ncf`` qdisc in the spec, the shipped
``specs/ncf/`` scenarios, and telemetry end to end through the engine."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

import ccbench
from ccbench.spec import Experiment, SpecError, load_spec

NCF_DIR = Path(__file__).resolve().parent.parent / "specs" / "ncf"
NCF_SPECS = sorted(NCF_DIR.glob("*.toml"))
SWEEP = NCF_DIR / "sweeps" / "staggered-delay-sweep.toml"


def test_ncf_specs_are_shipped_for_the_expressible_scenarios():
    assert {p.stem for p in NCF_SPECS} >= {
        "staggered-4flows", "rtt-fairness-shallow", "rtt-fairness-deep", "inter-cca", "mice-flood",
        "parking-lot-elephants",
    }  # fmt: skip


def test_the_delay_sweep_expands_to_every_cca_rtt_and_interval():
    from ccbench.sweeps import expand, load_sweep

    plan = expand(load_sweep(SWEEP))
    assert len(plan.runs) == 4 * 4 * 2 and not plan.invalid


@pytest.mark.parametrize("path", NCF_SPECS, ids=lambda p: p.name)
def test_every_ncf_spec_validates_with_the_switch_on_the_bottleneck(path):
    cfg = load_spec(path).resolve()
    switches = [q for q in _qdiscs(cfg["topology"]) if q["kind"] == "ncf"]
    assert switches, path.name
    assert all(q["elephants"]["kind"] == "bfifo" and q["elephants"]["limit_bytes"] > 0 for q in switches)


def _qdiscs(node: object) -> list[dict]:
    """Every qdisc in a resolved topology (dumbbell, parking lot or graph)."""
    if isinstance(node, dict):
        own = [node["qdisc"]] if isinstance(node.get("qdisc"), dict) else []
        return own + [q for k, v in node.items() if k != "qdisc" for q in _qdiscs(v)]
    if isinstance(node, list):
        return [q for v in node for q in _qdiscs(v)]
    return []


def test_ncf_qdisc_resolves_with_documented_defaults(base_spec, ccas):
    base_spec["bottleneck"].update(buffer="500KB", qdisc="ncf")
    q = Experiment.from_dict(base_spec, ccas=ccas).resolve()["topology"]["bottleneck"]["qdisc"]
    assert q == {
        "kind": "ncf",
        "mice": {"kind": "bfifo", "limit_bytes": 500_000},
        "elephants": {"kind": "bfifo", "limit_bytes": 500_000},
        "elephant_threshold_bytes": 100_000,
        "idle_timeout_ns": 200_000_000,
        "feedback_threshold_bytes": 30_000,
        "feedback_interval_ns": 1_000_000,
        "rate_time_constant_ns": 10_000_000,
        "reported_rate": "link",
    }
    base_spec["bottleneck"]["qdisc"] = {"kind": "ncf", "mice_limit": "100pkt", "feedback_interval": "5ms"}
    q = Experiment.from_dict(base_spec, ccas=ccas).resolve()["topology"]["bottleneck"]["qdisc"]
    assert q["mice"]["limit_bytes"] == 150_000 and q["feedback_interval_ns"] == 5_000_000


@pytest.mark.parametrize(
    ("qdisc", "fragment"),
    [
        ({"kind": "ncf", "feedback_interval": "0s"}, "bottleneck.qdisc.feedback_interval: must be > 0"),
        ({"kind": "ncf", "idle_timeout": "0s"}, "bottleneck.qdisc.idle_timeout: must be > 0"),
        ({"kind": "ncf", "rate_time_constant": "0s"}, "bottleneck.qdisc.rate_time_constant: must be > 0"),
        ({"kind": "ncf", "elephant_threshold": "0B"}, "bottleneck.qdisc.elephant_threshold"),
        ({"kind": "ncf", "reported_rate": "mice"}, "bottleneck.qdisc.reported_rate"),
        ({"kind": "ncf", "telemetry": 1}, "allowed keys here: kind, limit, mice_limit"),
    ],
)
def test_bad_ncf_parameters_name_the_field(base_spec, ccas, qdisc, fragment):
    base_spec["bottleneck"]["qdisc"] = qdisc
    with pytest.raises(SpecError) as e:
        Experiment.from_dict(base_spec, ccas=ccas).resolve()
    assert fragment in str(e.value)


def _short(path: Path, duration: str) -> dict:
    d = copy.deepcopy(load_spec(path).to_dict())
    d["experiment"].update(duration=duration, warmup="0s")
    return d


@pytest.mark.engine
def test_every_ncf_spec_runs_on_the_engine():
    for path in NCF_SPECS:
        d = _short(path, "1s")
        for f in d["flows"]:
            f.update(start="0s", start_jitter="0s", count=min(f.get("count", 1), 20))
        res = ccbench.run(d)
        assert len(res.flows) == sum(f.get("count", 1) for f in d["flows"]), path.name


@pytest.mark.engine
def test_telemetry_reaches_ncf_senders_in_less_than_an_rtt():
    d = _short(NCF_SPECS[[p.stem for p in NCF_SPECS].index("staggered-4flows")], "3s")
    # Trace every telemetry: the switch sends a flow at most one per 1 ms.
    d["experiment"]["sample_interval"] = "1ms"
    d["flows"] = [
        {"name": "e1", "sender": "s", "cca": "ncf"},
        {"name": "e2", "sender": "s", "cca": "cubic", "start": "200ms"},
    ]
    d["bottleneck"]["qdisc"] = {"kind": "ncf", "reported_rate": "available"}
    res = ccbench.run(d)
    stats = res.manifest["stats"]
    ev = res.events
    fb = ev[ev["kind"] == "feedback"]
    assert len(fb) > 0 and stats["feedback_pkts_delivered"] == len(fb)
    assert stats["feedback_pkts_sent"] >= stats["feedback_pkts_delivered"] + stats["feedback_pkts_dropped"]
    delay = fb["time_ns"] - fb["value"]
    # The switch-to-sender path is the reverse access link: half of the 20 ms RTT.
    assert (delay >= 10_000_000).all() and (delay < 11_000_000).all(), delay.describe()
    assert set(fb["link"]) == {"bottleneck"} and fb["value2"].between(1, 2).all()
    # The NCF flow's traces carry the fair share of its latest telemetry: with
    # reported_rate = available, what the mice leave of the link over the elephants.
    # e2's first 100 KB go through the mice queue; once e2 is an elephant the two
    # share what the mice rate (a 10 ms low-pass filter) leaves, which still holds
    # e2's slow start: its third round alone is 58 KB over one 20 ms RTT, 23 Mbit/s,
    # of which the filter holds 1 - e^-2 = 86 % at the round's end, so the first
    # telemetries after the switch (at most 1 ms later) tell e1 less than
    # (200 - 10) / 2 = 95 Mbit/s. The filter then decays and, long after, two
    # elephants share the whole 200 Mbit/s. (At the spec's 80 ms samples the trace
    # showed the decayed dip only where its grid met it: 99.7 Mbit/s in one run,
    # below 99 in another.)
    ts = res.flow_ts
    share = ts[ts["flow_id"] == 0].dropna(subset=["cc_bw_bps"])
    assert share["cc_bw_bps"].between(50e6, 200e6).all() and share["cc_bw_bps"].min() < 95e6
    late = share[share["time_ns"] >= 1_000_000_000]["cc_bw_bps"]
    assert len(late) > 0 and ((late - 100e6).abs() < 0.001 * 100e6).all(), late.describe()


def test_profiling_ncf_puts_its_switch_on_every_bottleneck():
    from ccbench.profile.recipe import experiments

    for e in experiments("ncf", ["bbr1"]):
        base = e.sweep["base"]
        links = [base["bottleneck"]] if "bottleneck" in base else base["topology"]["hops"]
        assert links and all(link["qdisc"] == "ncf" for link in links), e.id
    assert not any("qdisc" in e.sweep["base"].get("bottleneck", {}) for e in experiments("cubic", []))
