"""The pre-flight check (issues 17 and 19): valid specs that cannot work or fit are
refused or warned about before any simulation, quickly and in little memory."""

import copy
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from fakes import FAKE_CCAS
from tomlw import dumps

from ccbench import preflight
from ccbench.errors import PreflightError
from ccbench.spec import load_spec

ROOT = Path(__file__).resolve().parent.parent

TINY_RTT = {
    "experiment": {"name": "tiny", "duration": "10s"},
    "bottleneck": {"rate": "100Mbit"},
    "senders": [{"name": "a", "rtt": "60us"}],
    "flows": [{"cca": "cubic"}],
}


def spec(**changes) -> dict:
    d = copy.deepcopy(TINY_RTT)
    d["senders"][0]["rtt"] = "20ms"
    for section, values in changes.items():
        if section == "flows":
            d["flows"][0].update(values)
        elif section == "senders":
            d["senders"][0].update(values)
        else:
            d[section].update(values)
    return d


def check(d: dict, **kw) -> preflight.Preflight:
    return preflight.check(load_spec(d, ccas=FAKE_CCAS), **kw)


def test_default_buffer_below_one_packet_is_an_error():
    report = check(TINY_RTT)
    assert len(report.errors) == 1
    msg = report.errors[0]
    assert "750 bytes" in msg and "1500-byte packet" in msg and "flows[0].mss" in msg and "1pkt" in msg
    with pytest.raises(PreflightError, match="less than one 1500-byte packet"):
        report.raise_if_refused(force=True)  # --force does not make a 0-packet buffer work


def test_buffer_check_uses_the_largest_mss():
    d = spec(bottleneck={"buffer": "3000B"})
    d["flows"].append({"cca": "reno", "mss": 8948})
    assert "9000-byte packet" in check(d).errors[0] and "flows[1].mss" in check(d).errors[0]
    assert check(spec(bottleneck={"buffer": "1pkt"})).errors == []


def test_one_nanosecond_samples_are_refused_by_disk_when_streamed_and_by_memory_when_held(tmp_path):
    """A streamed run holds one chunk of samples at a time, so 10^10 samples are
    refused for their size on disk; a run without a directory holds them in memory."""
    d = spec(experiment={"sample_interval": "1ns"})
    for report in (check(d, out_dir=tmp_path / "run"), check(d, streamed=True)):
        errors = report.errors
        assert any("free on its file system" in e and "experiment.sample_interval (1ns)" in e for e in errors), errors
    report = check(d)  # ccbench.run(spec) without out_dir
    assert any("memory" in e and "experiment.sample_interval (1ns)" in e for e in report.errors), report.errors


def test_streamed_estimate_is_near_the_measured_corescale_peak_and_in_memory_counts_whole_tables():
    """CoreScale (5,000 flows, 10 Gbit/s, 60 s) measured 512 MB peak RSS streamed
    (docs/benchmarks.md, "Memory of a run"); the estimate is an upper bound, not wildly
    above. Without an output directory the whole tables are held, three times."""
    exp = load_spec(ROOT / "benchmarks" / "specs" / "corescale.toml", ccas=FAKE_CCAS)
    streamed = preflight.estimate(exp, streamed=True)
    assert 512e6 <= streamed.memory_bytes <= 1.5 * 512e6, streamed.memory_bytes
    held = preflight.estimate(exp, streamed=False)
    whole_flow_ts = preflight.TABLE_COPIES * held.rows["flow_ts"] * preflight.ROW_BYTES["flow_ts"]
    assert held.rows == streamed.rows and held.disk_bytes == streamed.disk_bytes
    assert held.memory_bytes >= whole_flow_ts > 2 * streamed.memory_bytes


def test_a_million_flows_need_force_and_name_count():
    report = check(spec(experiment={"duration": "1s"}, flows={"count": 1_000_000}))
    problems = report.errors + report.needs_force
    assert any("flows[*].count" in p or "1,000,000" in p for p in problems), problems
    with pytest.raises(PreflightError):
        report.raise_if_refused()


def test_years_of_simulation_are_refused_and_name_the_driver():
    report = check(spec(experiment={"duration": "1e9s", "sample_interval": "0s"}))
    text = " ".join(report.errors + report.needs_force)
    assert re.search(r"[\d,]+ (days|years) of CPU", text) and "experiment.duration (1000000000s)" in text
    with pytest.raises(PreflightError, match="--force"):
        report.raise_if_refused()


def test_cost_warning_above_threshold():
    report = check(spec(experiment={"duration": "600s"}, bottleneck={"rate": "10Gbit"}), cpu_warn_s=60)
    assert any("CPU" in w and "experiment.duration (600s)" in w for w in report.warnings), report.warnings
    assert report.errors == [] and report.estimate.packets > 10**8


def test_a_shaped_link_is_estimated_at_its_shapers_rate():
    """A 100 Gbit/s port shaped to 100 Mbit/s (D0's bottleneck) carries at most the
    shaper's rate and one bucket: the estimate matches the plain 100 Mbit/s link's,
    and a 25 Gbit/s access link is not reported as the limit."""
    plain = check(spec(experiment={"duration": "60s"})).estimate.packets
    d = spec(experiment={"duration": "60s"}, bottleneck={"rate": "100Gbit", "shaper": {"rate": "100Mbit", "burst": "1570000B"}})
    d["senders"][0]["access_rate"] = "25Gbit"
    report = check(d)
    assert plain < report.estimate.packets <= plain + 1_570_000 // 1500 + 1
    assert not any("access_rate" in w for w in report.warnings), report.warnings


def test_meaningless_results_are_warned():
    d = spec(experiment={"duration": "1s"}, flows={"start": "900ms", "start_jitter": "500ms"})
    d["senders"][0].update(rtt="200ms", access_rate="10Mbit")
    w = " ".join(check(d).warnings)
    assert "may never start" in w and "nothing can be delivered" in w
    assert "senders[0].access_rate (10Mbit) is below bottleneck.rate (100Mbit)" in w


def test_quickstart_is_clean():
    report = preflight.check(load_spec(ROOT / "specs" / "quickstart.toml", ccas=FAKE_CCAS))
    assert report.errors == report.needs_force == report.warnings == []


def test_unwritable_output_directory_is_an_error(tmp_path, monkeypatch):
    ro = tmp_path / "ro"
    ro.mkdir()
    # As root every directory is writable, so stand in for a read-only one.
    monkeypatch.setattr(preflight.os, "access", lambda p, mode: Path(p) != ro)
    report = check(spec(), out_dir=ro / "run")
    assert any("not writable" in e and str(ro) in e for e in report.errors), report.errors
    assert check(spec(), out_dir=tmp_path / "fine").errors == []


def test_full_disk_is_an_error(tmp_path, monkeypatch):
    import shutil

    monkeypatch.setattr(shutil, "disk_usage", lambda p: shutil._ntuple_diskusage(10, 10, 1000))
    report = check(spec(), out_dir=tmp_path / "run")
    assert any("free on its file system" in e for e in report.errors), report.errors


@pytest.mark.parametrize(
    "case, fragments",
    [
        ("tiny-rtt", ["less than one 1500-byte packet"]),
        ("1ns", ["free on its file system", "experiment.sample_interval (1ns)"]),
        ("million", ["--force", "flows[*].count"]),
        ("1e9s", ["days of CPU", "experiment.duration"]),
    ],
)
def test_cli_refuses_before_simulating_fast_and_small(tmp_path, case, fragments):
    """From a real process: each hostile case is refused by `validate` and by `run`
    within 2 s and 500 MB, and `run` leaves no results directory. The 2 s are CPU
    seconds of the whole process (interpreter start and imports included), measured
    by the process itself: wall time on a shared machine says more about the load."""
    d = {
        "tiny-rtt": TINY_RTT,
        "1ns": spec(experiment={"sample_interval": "1ns"}),
        # Streamed, a million flows of 1 s take ~4.6 GiB (4 KiB a flow): over the
        # warning threshold set below, whatever this machine's memory.
        "million": spec(experiment={"duration": "1s"}, flows={"count": 1_000_000}),
        "1e9s": spec(experiment={"duration": "1e9s"}),
    }[case]
    path = tmp_path / "s.toml"
    path.write_text(dumps(d))
    for cmd in (
        ["validate", str(path)],
        ["validate", "--json", str(path)],
        ["run", str(path), "-o", str(tmp_path / "o")],
    ):
        code = (
            "import resource, sys; from ccbench.cli import main\n"
            f"try:\n    main({cmd!r})\n"
            "finally:\n    u = resource.getrusage(resource.RUSAGE_SELF)\n"
            # VmHWM is this process's own peak; ru_maxrss would carry pytest's own over
            # (subprocess forks with vfork, and exec keeps the larger of the two)
            "    hwm = next(line.split()[1] for line in open('/proc/self/status') if line.startswith('VmHWM'))\n"
            "    print('maxrss_kb', hwm, 'cpu_s', u.ru_utime + u.ru_stime, file=sys.stderr)\n"
        )
        env = {**os.environ, "CCBENCH_MEMORY_WARN": "2GiB"}
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
        assert p.returncode == 2, (cmd, p.stdout[-500:], p.stderr[-2000:])
        assert "Traceback" not in p.stderr
        for f in fragments:
            assert f in p.stderr, (cmd, p.stderr)
        usage = p.stderr.split("maxrss_kb")[-1].split()
        rss_mb, cpu_s = int(usage[0]) / 1024, float(usage[2])
        assert rss_mb < 500, (cmd, rss_mb)
        assert cpu_s < 2, (cmd, cpu_s)  # measured 0.25-0.4 s
        assert len(p.stdout) < 10_000  # --json prints no per-flow expansion
        if case == "tiny-rtt" and cmd[1] != "--json" and cmd[0] == "validate":
            assert "750 bytes = less than one 1500-byte packet (bfifo" in p.stdout, p.stdout  # not "= 1 packets"
    assert not (tmp_path / "o").exists()


@pytest.mark.engine
def test_a_run_outgrowing_its_memory_budget_stops_with_a_clear_error(tmp_path, monkeypatch):
    """The estimate can be wrong; the engine then stops the run when what it records
    passes the budget (RunTooLarge, a MemoryError) instead of failing an allocation,
    which would abort the interpreter. A 1 MiB budget stands in for a full machine."""
    from test_cli import invoke

    import ccbench
    from ccbench.errors import RunTooLarge

    monkeypatch.setattr(preflight, "recorded_bytes_budget", lambda: 2**20)
    d = spec(experiment={"duration": "10s", "sample_interval": "1ms"})  # ~3 MB of samples
    with pytest.raises(RunTooLarge, match=r"over the budget of 1 MB.*stopped before exhausting memory"):
        ccbench.run(d, tmp_path / "api")
    assert not (tmp_path / "api").exists()
    path = tmp_path / "s.toml"
    path.write_text(dumps(d))
    r = invoke("run", path, "-o", tmp_path / "cli")
    assert r.exit_code == 2 and "stopped before exhausting memory" in r.stderr, r.output
    assert "Traceback" not in r.output and not (tmp_path / "cli").exists()
    monkeypatch.undo()
    assert ccbench.run(d).stats["sim_time_ns"] == 10 * 10**9  # the same run fits the real budget


def test_a_mice_flood_counts_the_mice_alive_at_once_not_every_mouse():
    """recipe/q2-cross-traffic-inelastic at paper scale offers 1.77 M mice over 300 s, at
    most a few thousand alive at once: measured 1.97 GB peak RSS (CUBIC, 1/4 BDP;
    docs/preflight.md). Counting 4 KiB for every mouse estimated 7.9 GiB and refused the
    run without --force."""
    from ccbench.suites.catalog import plan_scenario, select

    (scenario,) = select("recipe/q2-cross-traffic-inelastic")
    run = next(r for r in plan_scenario(scenario, "paper").plan.runs if r.valid and r.params["k"] == 0.25)
    report = preflight.check(run.experiment, streamed=True)
    assert report.estimate.flows > 1_700_000
    assert 1.97e9 <= report.estimate.memory_bytes <= 1.5 * 1.97e9, report.estimate.memory_bytes
    assert not report.needs_force, report.needs_force


def per_packet(d: dict) -> float:
    """The estimate's CPU per packet, without the per-flow set-up."""
    est = check(d).estimate
    return (est.cpu_s - est.flows * preflight.CPU_S_PER_FLOW) / est.packets


def test_the_cpu_estimate_per_packet_grows_with_the_flows_alive_at_once():
    """Measured (docs/preflight.md): 2-20 flows run at 2.0-2.8 M packets per CPU-s,
    200-500 at 10-25 Gbit/s at 0.26-1.15 M. The estimate is flat up to 20 flows alive and
    slower above; a Poisson group of 50,000 short flows (hundreds alive at once) is
    estimated faster than 2,000 flows alive."""
    few, twenty, many = (per_packet(spec(flows={"count": n})) for n in (2, 20, 2000))
    assert few == twenty and many > 2.5 * twenty
    mice = spec(experiment={"duration": "10s"})
    mice["flows"].append({"cca": "cubic", "arrival": "poisson", "arrival_rate": 5_000, "size": "1KB"})
    alive = preflight.estimate(load_spec(mice, ccas=FAKE_CCAS)).flows
    assert alive > 45_000 and twenty < per_packet(mice) < many


def test_the_cpu_estimate_weighs_the_ccas_and_the_qdisc():
    """Measured per delivered packet against CUBIC through a pfifo
    (benchmarks/cca_cost.py): BBRv1 1.6x, fq_codel 1.4x; a mix weighs its shares. The
    elephants sample that ran 2.5x its estimate was BBRv1 through fq_codel."""
    cubic = per_packet(spec())
    assert per_packet(spec(flows={"cca": "reno"})) == cubic
    assert per_packet(spec(flows={"cca": "bbr1"})) == pytest.approx(preflight.CCA_COST["bbr1"] * cubic)
    fq = spec(flows={"cca": "bbr1"}, bottleneck={"qdisc": "fq_codel"})
    assert per_packet(fq) == pytest.approx(preflight.CCA_COST["bbr1"] * preflight.QDISC_COST["fq_codel"] * cubic)
    half = spec(flows={"mix": [{"cca": "bbr1", "fraction": 0.5}, {"cca": "cubic", "fraction": 0.5}], "count": 10})
    assert per_packet(half) == pytest.approx((preflight.CCA_COST["bbr1"] + 1) / 2 * cubic)
    assert per_packet(spec(flows={"pacing": True})) == pytest.approx(preflight.PACED_CLASSIC_COST * cubic)
    assert "for the CCAs and the qdisc" in check(fq).estimate.cpu_driver
