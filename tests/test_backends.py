"""The backend seam and the linux backend's parts that need no root: spec checks that
fail up front, output parsers, table building, comparison tolerances, CLI messages."""

import copy
import json
import math

import pyarrow as pa
import pydantic
import pytest
from click.testing import CliRunner
from fakes import FAKE_CCAS, fake_run
from fakes import FAKE_KERNEL as KERNEL

from ccbench import api, engine
from ccbench.backends import BackendError, BackendUnavailable, get_backend
from ccbench.backends.compare import compare_results, run_metrics
from ccbench.backends.linux import ROOT_MESSAGE, system
from ccbench.backends.linux.plan import NATURAL_RTT_NS, make_plan
from ccbench.backends.linux.sampling import parse_ss, parse_tc
from ccbench.backends.linux.tables import value_at
from ccbench.cli import cli
from ccbench.results import OPTIONAL_COLUMNS, REQUIRED_COLUMNS, ResultsError, RunResult, check_columns
from ccbench.results import tables_from_engine as tables_of
from ccbench.spec import Experiment

DUMBBELL = {
    "experiment": {"name": "k", "duration": "4s", "warmup": "1s", "backend": "linux"},
    "bottleneck": {"rate": "100Mbit", "buffer": "20pkt", "qdisc": "pfifo"},
    "senders": [{"name": "a", "rtt": "60us"}],
    "flows": [{"cca": "cubic"}, {"cca": "bbr1"}],
}


def spec():
    return Experiment.from_dict(copy.deepcopy(DUMBBELL), ccas=FAKE_CCAS)


# -- the seam


def test_unknown_backend_names_the_known_ones():
    with pytest.raises(ValueError, match="'ns3' is not a backend; known: sim, linux"):
        get_backend("ns3")


def test_spec_backend_field_defaults_to_sim_and_rejects_others():
    d = copy.deepcopy(DUMBBELL)
    del d["experiment"]["backend"]
    assert api.spec_backend(Experiment.from_dict(d, ccas=FAKE_CCAS)) == "sim"
    d["experiment"]["backend"] = "ns3"
    with pytest.raises(ValueError, match=r"experiment.backend.*'sim'.*'linux'"):
        Experiment.from_dict(d, ccas=FAKE_CCAS)


def test_check_columns_requires_the_required_and_allows_leaving_out_the_optional():
    exp = spec()
    tables = tables_of(fake_run(exp.resolve())["tables"])
    check_columns(tables)  # the simulator's full set
    trimmed = {n: t.drop_columns([c for c in OPTIONAL_COLUMNS[n] if c in t.column_names]) for n, t in tables.items()}
    check_columns(trimmed)
    with pytest.raises(ResultsError, match="flows: required columns missing: segs_retrans"):
        check_columns({**tables, "flows": tables["flows"].drop_columns(["segs_retrans"])})
    with pytest.raises(ResultsError, match="columns not in the format: bogus"):
        check_columns(
            {**tables, "events": tables["events"].append_column("bogus", pa.array([0] * len(tables["events"])))}
        )
    assert "cc_inflight_hi_pkts" in OPTIONAL_COLUMNS["flow_ts"] and "delivered_bytes" in REQUIRED_COLUMNS["flow_ts"]


def test_metrics_need_only_required_columns():
    exp = spec()
    tables = tables_of(fake_run(exp.resolve(), goodput_bps=[40e6, 50e6])["tables"])
    trimmed = {n: t.drop_columns([c for c in OPTIONAL_COLUMNS[n] if c in t.column_names]) for n, t in tables.items()}
    manifest = {"spec": exp.to_dict(), "derived": exp.derived()}
    full, lean = RunResult(tables, manifest).summary(), RunResult(trimmed, manifest).summary()
    assert lean["utilization"] == full["utilization"] and lean["jain"] == full["jain"]
    assert lean["utilization"] == pytest.approx(0.9, rel=1e-3)


def test_sim_backend_through_the_api(monkeypatch):
    monkeypatch.setattr(engine, "engine_available", lambda: True)
    monkeypatch.setattr(engine, "run_config", fake_run)
    monkeypatch.setattr(engine, "engine_version", lambda: "fake-0")
    res = api.run(spec(), backend="sim")
    assert res.manifest["backend"] == "sim"
    assert res.manifest["engine_config"]["duration_ns"] == 4 * 10**9
    assert res.manifest["derived"]["window"] == {"warmup_ns": 10**9, "duration_ns": 4 * 10**9}


# -- failing up front


def test_non_root_is_told_root_is_needed(monkeypatch, tmp_path):
    monkeypatch.setattr(system, "is_root", lambda: False)
    with pytest.raises(BackendUnavailable, match="needs root"):
        api.run(spec())
    path = tmp_path / "k.json"
    path.write_text(json.dumps(spec().to_dict()))
    r = CliRunner().invoke(cli, ["run", "--backend", "linux", "-o", str(tmp_path / "out"), str(path)])
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert ROOT_MESSAGE in r.stderr
    assert not (tmp_path / "out").exists()


def test_fq_codel_fails_up_front_naming_it():
    exp = spec()
    exp = exp.model_copy(update={"bottleneck": exp.bottleneck.model_copy(update={"qdisc": "fq_codel"})})
    with pytest.raises(
        BackendError,
        match=r"bottleneck.qdisc = 'fq_codel' needs the fq_codel qdisc, which this kernel does not provide",
    ):
        make_plan(exp, KERNEL)


def test_netem_delay_fails_up_front_naming_it():
    exp = Experiment.from_dict({**DUMBBELL, "linux": {"delay": "netem"}}, ccas=FAKE_CCAS)
    with pytest.raises(BackendError, match="delay emulation needs the netem qdisc, which this kernel does not provide"):
        make_plan(exp, KERNEL)


def test_every_missing_thing_is_listed_at_once():
    d = copy.deepcopy(DUMBBELL)
    d["bottleneck"]["loss"] = 0.001
    d["flows"] = [{"cca": "cubic", "params": {"beta": 700}}, {"cca": "reno", "pacing": True}]
    fake = system.KernelInfo("x", ("reno", "bbr"), dict(KERNEL.qdiscs), True, {})
    with pytest.raises(BackendError) as e:
        make_plan(Experiment.from_dict(d, ccas=FAKE_CCAS), fake)
    text = str(e.value)
    assert "4 problems" in text
    assert "random loss) needs the netem qdisc" in text
    assert "flows[0].cca = 'cubic' needs the kernel CCA 'cubic', which this kernel does not provide" in text
    assert "flows[0].params: CCA parameters cannot be set per flow" in text
    assert "flows[1].pacing = true for 'reno' needs the fq qdisc" in text


def test_flows_of_one_sender_must_agree_on_per_route_settings():
    d = copy.deepcopy(DUMBBELL)
    d["flows"][1]["initial_cwnd"] = 4
    with pytest.raises(BackendError, match=r"differ in initial_cwnd \(4, 10\)"):
        make_plan(Experiment.from_dict(d, ccas=FAKE_CCAS), KERNEL)


def test_plan_maps_ccas_jitters_starts_and_chooses_the_delay_line():
    plan = make_plan(spec(), KERNEL)
    assert [f.kernel_cca for f in plan.flows] == ["cubic", "bbr"]
    assert all(0 <= f.start_ns < 1_000_000 for f in plan.flows)
    assert plan.delay_method == "none" and plan.limit == 20 and plan.mtu == 1500
    assert make_plan(spec(), KERNEL).flows == plan.flows  # the seed decides the jitter
    d = copy.deepcopy(DUMBBELL)
    d["senders"][0]["rtt"] = "20ms"
    far = make_plan(Experiment.from_dict(d, ccas=FAKE_CCAS), KERNEL)
    assert far.delay_method == "delayline" and far.senders[0].rtt_ns > NATURAL_RTT_NS
    assert len({f.client_port for f in far.flows}) == 2


def test_plan_takes_offloads_from_the_spec_host():
    linux = make_plan(spec(), KERNEL)
    assert (linux.senders[0].gso_max_segs, linux.receiver_gro_max_size, linux.offloads) == (65535, 65536, "host")
    d = copy.deepcopy(DUMBBELL)
    d["host"] = {"model": "ideal"}
    ideal = make_plan(Experiment.from_dict(d, ccas=FAKE_CCAS), KERNEL)
    assert (ideal.senders[0].gso_max_segs, ideal.receiver_gro_max_size) == (1, 0)
    d["senders"].append({"name": "b", "rtt": "60us", "host": {"gro_max_size": 3000}})
    d["flows"][1]["sender"], d["flows"][0]["sender"] = "b", "a"
    with pytest.raises(BackendError, match=r"hosts differ in gro_max_size \(0, 3000\)"):
        make_plan(Experiment.from_dict(d, ccas=FAKE_CCAS), KERNEL)


# -- parsers and tables

SS = """ESTAB 0      571960 10.201.0.1:40001 10.202.0.2:5201
\t bbr wscale:10,10 rto:204 rtt:1.294/0.44 mss:1448 pmtu:1500 rcvmss:536 advmss:1448 cwnd:88 ssthresh:136 bytes_sent:14928917 bytes_acked:14532166 segs_out:10313 segs_in:4233 data_segs_out:10311 bbr:(bw:97344528bps,mrtt:0.009,pacing_gain:1.25,cwnd_gain:2) send 787783617bps lastrcv:1232 pacing_rate 120463856bps delivery_rate 52985704bps delivered:10038 busy:1228ms unacked:8 retrans:1/42 lost:1 sacked:2 rcv_space:14480 minrtt:0.009 snd_wnd:607232
ESTAB 0      0      10.201.0.1:51250 10.202.0.2:5201
\t cubic wscale:10,10 rto:204 rtt:0.068/0.036 ato:40 mss:1448 cwnd:13 bytes_sent:183 bytes_acked:184 data_segs_out:3 send 2214588235bps delivered:4 app_limited minrtt:0.024
LISTEN 0 5 0.0.0.0:5201 0.0.0.0:*
\t cubic cwnd:10
"""


def test_parse_ss_reads_every_field_we_use():
    a, b = parse_ss(SS)
    assert a.local_port == 40001 and a.cc == "bbr"
    assert (a.cwnd, a.ssthresh, a.bytes_acked, a.data_segs_out, a.delivered) == (88, 136, 14532166, 10311, 10038)
    assert a.srtt_ns == 1_294_000 and a.min_rtt_ns == 9_000
    assert (a.retrans_now, a.retrans_total, a.lost, a.sacked, a.unacked) == (1, 42, 1, 2, 8)
    assert a.pacing_rate_bps == 120463856 and a.delivery_rate_bps == 52985704
    assert a.bbr == {"bw": 97344528.0, "mrtt": 0.009, "pacing_gain": 1.25, "cwnd_gain": 2.0}
    assert b.local_port == 51250 and b.ssthresh == -1 and b.retrans_total == 0 and b.bbr == {}


def test_parse_tc_picks_the_child_qdisc():
    text = json.dumps(
        [
            {"kind": "tbf", "handle": "1:", "bytes": 1, "packets": 1, "drops": 0, "backlog": 10500, "qlen": 7},
            {
                "kind": "pfifo",
                "handle": "10:",
                "bytes": 15488564,
                "packets": 10340,
                "drops": 266,
                "backlog": 9000,
                "qlen": 6,
            },
        ]
    )
    q = parse_tc(text, "10:")
    assert (q.backlog_bytes, q.backlog_pkts, q.sent_pkts, q.dropped_pkts, q.marked_pkts) == (9000, 6, 10340, 266, 0)
    assert parse_tc(text, "20:") is None and parse_tc("not json", "10:") is None


def test_value_at_interpolates_counters():
    assert value_at([10, 20], [100, 200], 5) == 0
    assert value_at([10, 20], [100, 200], 15) == 150
    assert value_at([10, 20], [100, 200], 25) == 200
    assert value_at([], [], 25) == 0


# -- comparison


def _run(goodputs, retrans_scale=1.0):
    exp = spec()
    raw = fake_run(exp.resolve(), goodput_bps=goodputs)
    tables = tables_of(raw["tables"])
    flows = tables["flows"]
    i = flows.column_names.index("segs_retrans")
    scaled = pa.array([int(x * retrans_scale) for x in flows["segs_retrans"].to_pylist()], type=pa.uint64())
    tables["flows"] = flows.set_column(i, "segs_retrans", scaled)
    return RunResult(tables, {"spec": exp.to_dict(), "derived": exp.derived()})


def test_compare_reports_differences_against_the_tolerances():
    same = compare_results([_run([45e6, 45e6])], [_run([45e6, 45e6])])
    assert same.all_within
    rows = {r["metric"]: r for r in same.rows}
    assert rows["share:cubic"]["a"] == pytest.approx(0.5) and rows["share:cubic"]["tolerance"] == "±5 pp"
    assert rows["jain"]["tolerance"] == "±0.03" and rows["retransmissions"]["tolerance"] == "×2"
    assert rows["goodput_mbps"]["within"] is None
    off = compare_results([_run([45e6, 45e6])], [_run([60e6, 30e6], retrans_scale=3.0)])
    rows = {r["metric"]: r for r in off.rows}
    assert not off.all_within
    assert rows["share:bbr1"]["within"] is False and rows["share:bbr1"]["difference"] == pytest.approx(-1 / 6, abs=1e-3)
    assert rows["utilization"]["within"] is True  # same total
    assert rows["retransmissions"]["within"] is False and rows["retransmissions"]["difference"] > 2
    md = off.to_markdown()
    assert md.splitlines()[0] == "| metric | sim | linux | difference | tolerance | within |" and "**no**" in md
    assert math.isnan(rows["srtt_ms"]["difference"]) or rows["srtt_ms"]["within"] is not None


def test_per_group_retransmissions_cover_the_measurement_window():
    """The per-group counts are over the same window as the total (the summary's): a
    deep buffer's slow-start losses before the warm-up are not in either."""
    run = _run([45e6, 45e6])
    flows = run.tables["flows"]
    retrans = flows["segs_retrans"].to_pylist()
    at_warmup = {
        "segs_retrans_at_warmup": [r // 3 for r in retrans],
        "segs_sent_at_warmup": [v // 2 for v in flows["segs_sent"].to_pylist()],
        "segs_delivered_at_warmup": [v // 2 for v in flows["segs_delivered"].to_pylist()],
    }
    for col, vals in at_warmup.items():
        flows = flows.append_column(col, pa.array(vals, type=pa.uint64()))
    run.tables["flows"] = flows
    m = run_metrics(run)
    per_group = [m[k] for k in m if k.startswith("retransmissions:")]
    assert sorted(per_group) == sorted(float(r - r // 3) for r in retrans)
    assert sum(per_group) == m["retransmissions"]


def test_backends_command_lists_both(monkeypatch):
    r = CliRunner().invoke(cli, ["backends", "--json"])
    assert r.exit_code == 0, r.output
    caps = json.loads(r.stdout)
    assert set(caps) == {"sim", "linux"}
    assert "root" in caps["linux"] and "ccas" in caps["linux"]


def test_capabilities_say_up_front_what_a_kernel_without_netem_cannot_do(monkeypatch):
    monkeypatch.setattr(system, "kernel_info", lambda: KERNEL)
    caps = get_backend("linux").capabilities()
    assert caps["netem"] is False
    assert caps["delay"] == "userspace delay line (no netem in this kernel)"
    assert caps["loss"] == "none: random loss needs netem, which this kernel does not provide"
    with_netem = system.KernelInfo("x", KERNEL.ccas, {**KERNEL.qdiscs, "netem": True}, True, {})
    monkeypatch.setattr(system, "kernel_info", lambda: with_netem)
    caps = get_backend("linux").capabilities()
    assert (caps["netem"], caps["delay"]) == (True, "netem") and caps["loss"].startswith("netem")


def test_sim_capabilities_list_every_queue_a_spec_can_ask_for():
    """`ccbench backends` must not hide the simulator's AQMs: the qdisc kinds it lists
    are exactly those a bottleneck accepts by name (``qdisc = "<kind>"``), plus the tbf
    shaper and htb (which needs its classes)."""
    listed = set(get_backend("sim").capabilities()["qdiscs"])
    candidates = listed | {"pfifo", "red", "codel", "fq_codel", "pie", "fq_pie", "cake", "sfq", "fq", "netem"}
    accepted = set()
    for kind in sorted(candidates - {"tbf"}):
        try:
            Experiment.model_validate(
                {
                    "experiment": {"name": "q", "duration": "1s"},
                    "bottleneck": {"rate": "10Mbit/s", "buffer": "100 packets", "qdisc": kind},
                    "senders": [{"name": "s", "rtt": "10ms"}],
                    "flows": [{"cca": "reno"}],
                }
            )
            accepted.add(kind)
        except pydantic.ValidationError:
            pass
    assert {"red", "codel", "fq_codel", "pie"} <= accepted
    assert listed == accepted | {"tbf", "htb"}


def test_linux_cleanup_needs_root(monkeypatch):
    monkeypatch.setattr(system, "is_root", lambda: False)
    r = CliRunner().invoke(cli, ["linux", "cleanup"])
    assert r.exit_code == 2 and "cleanup needs root" in r.stderr


class _ScaledSim:
    """A stand-in "kernel": the fake engine's run with every flow's goodput scaled."""

    name = "linux"

    def __init__(self, goodputs):
        self.goodputs = goodputs

    def capabilities(self):
        return {"available": True}

    def check(self, exp):
        pass

    def versions(self):
        return {"kernel": "fake"}

    def run(self, exp, *, progress=None):
        from ccbench.backends import BackendRun

        raw = fake_run(exp.resolve(), goodput_bps=self.goodputs)
        return BackendRun(tables_of(raw["tables"]), {"linux": {}}, 0.1)


@pytest.mark.parametrize("goodputs,status", [(None, 0), ([80e6, 10e6], 1)])
def test_compare_backends_command(monkeypatch, tmp_path, goodputs, status):
    import ccbench.backends as backends_mod
    from ccbench.backends.sim import SimBackend

    monkeypatch.setattr(engine, "catalog", lambda: FAKE_CCAS)
    monkeypatch.setattr(engine, "engine_available", lambda: True)
    monkeypatch.setattr(engine, "run_config", fake_run)
    monkeypatch.setattr(engine, "engine_version", lambda: "fake-0")
    fake_kernel = _ScaledSim(goodputs)

    def pick(name):
        return fake_kernel if name == "linux" else SimBackend()

    monkeypatch.setattr(backends_mod, "get_backend", pick)
    monkeypatch.setattr(api, "get_backend", pick)
    path = tmp_path / "k.json"
    path.write_text(json.dumps(spec().to_dict()))
    r = CliRunner().invoke(cli, ["compare-backends", str(path), "--seeds", "2", "--reps", "1", "--markdown",
                                 "-o", str(tmp_path / "runs")])  # fmt: skip
    assert r.exit_code == status, r.output
    assert "| metric | sim | linux | difference | tolerance | within |" in r.stdout
    assert ("**no**" in r.stdout) == bool(status)
    assert "srtt_ms | 100 | 100 |" in r.stdout  # both columns from the stand-ins, no real kernel run
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["linux-0", "sim-0", "sim-1"]
    bad = CliRunner().invoke(cli, ["compare-backends", str(path), "--seeds", "0"])
    assert bad.exit_code == 2 and "--seeds and --reps must be at least 1" in bad.stderr


def test_kernel_connections_always_handshake():
    d = copy.deepcopy(DUMBBELL)
    d["flows"][0]["handshake"] = True
    d["flows"][0]["size"] = "1MB"
    make_plan(Experiment.from_dict(d, ccas=FAKE_CCAS), KERNEL)
    d["flows"][0]["handshake"] = False
    with pytest.raises(BackendError, match=r"flows\[0\].handshake = false: kernel connections always open"):
        make_plan(Experiment.from_dict(d, ccas=FAKE_CCAS), KERNEL)


def test_a_run_without_engine_config_reads_its_links_from_the_spec():
    """A kernel run records no engine configuration: plots and metrics that need a
    link's rate or the duration read the recorded spec's resolution instead."""
    res = RunResult({}, {"spec": spec().to_dict(), "backend": "linux"})
    assert res.engine_config["duration_ns"] == 4_000_000_000
    assert res.link_config()["rate_bps"] == 100_000_000
    assert res.link_config("bottleneck")["qdisc"] == {"kind": "pfifo", "limit_packets": 20}
