import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from fakes import FAKE_CCAS, fake_run

from ccbench import engine
from ccbench.cli import cli
from ccbench.results import load
from ccbench.spec import load_spec

ROOT = Path(__file__).resolve().parent.parent
QUICKSTART = ROOT / "specs" / "quickstart.toml"


@pytest.fixture
def fake_engine(monkeypatch):
    """The CLI over a stand-in engine (tests/fakes.py), so that everything but the
    simulation itself is exercised without the compiled extension."""
    monkeypatch.setattr(engine, "catalog", lambda: FAKE_CCAS)
    monkeypatch.setattr(engine.CcaCatalog, "from_engine", classmethod(lambda cls: FAKE_CCAS))
    monkeypatch.setattr(engine, "run_config", fake_run)
    monkeypatch.setattr(engine, "engine_version", lambda: "fake-0")


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def assert_bad_input(result, *fragments):
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    for f in fragments:
        assert f in result.stderr, result.stderr


def test_validate_ok(fake_engine):
    r = invoke("validate", QUICKSTART)
    assert r.exit_code == 0, r.output
    assert "valid" in r.stdout and "834 packets" in r.stdout


def test_validate_json_is_the_resolved_config(fake_engine):
    r = invoke("validate", "--json", QUICKSTART)
    assert r.exit_code == 0
    assert json.loads(r.stdout) == load_spec(QUICKSTART, ccas=FAKE_CCAS).resolve()


def test_validate_bad_spec(fake_engine, tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text(QUICKSTART.read_text().replace('cca = "cubic"', 'cca = "cubci"'))
    assert_bad_input(
        invoke("validate", p), "error: ", "flows[0].cca: 'cubci' is not a known CCA; known: reno, cubic, bbr1"
    )


def test_validate_missing_file(fake_engine, tmp_path):
    assert_bad_input(invoke("validate", tmp_path / "nope.toml"), "error: cannot access", "nope.toml")


def test_validate_toml_syntax_error(fake_engine, tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text("[experiment\n")
    assert_bad_input(invoke("validate", p), "not valid TOML")


def test_run_writes_results_and_prints_a_summary(fake_engine, tmp_path):
    out = tmp_path / "runs" / "q"
    r = invoke("run", QUICKSTART, "-o", out)
    assert r.exit_code == 0, r.output
    for word in ("goodput", "Jain", "utilization", "retransmissions", "drops"):
        assert word in r.stdout
    res = load(out)
    assert res.manifest["name"] == "quickstart" and res.manifest["seed"] == 1
    assert res.manifest["versions"]["engine"] == "fake-0"
    assert res.manifest["derived"]["buffer"]["packets"] == 834
    assert res.manifest["engine_config"]["flows"][0]["start_jitter_ns"] == 1_000_000
    assert res.manifest["stats"]["sim_time_ns"] == 30 * 10**9
    assert len(res.flows) == 2
    # Once more into the same directory: refused, unless --overwrite.
    assert_bad_input(invoke("run", QUICKSTART, "-o", out), "already exists", "--overwrite")
    r = invoke("run", QUICKSTART, "-o", out, "--overwrite", "--seed", "5")
    assert r.exit_code == 0, r.output
    assert load(out).manifest["seed"] == 5


def test_run_many_flows_prints_per_group(fake_engine, tmp_path):
    spec = tmp_path / "many.toml"
    spec.write_text(QUICKSTART.read_text().replace("count = 2", "count = 50"))
    r = invoke("run", spec, "-o", tmp_path / "out")
    assert r.exit_code == 0, r.output
    assert "per-group goodput (50 flows)" in r.stdout


def test_run_engine_rejection_is_bad_input(fake_engine, monkeypatch, tmp_path):
    def reject(config, **_options):
        raise engine.EngineError("the engine rejected the configuration: flows[0].mss: 10 is not in [64, 65000]")

    monkeypatch.setattr(engine, "run_config", reject)
    assert_bad_input(invoke("run", QUICKSTART, "-o", tmp_path / "o"), "engine rejected", "flows[0].mss")
    assert not (tmp_path / "o").exists()


def test_run_without_engine_is_bad_input(monkeypatch, tmp_path):
    def missing():
        raise engine.EngineUnavailable(
            "the simulation engine (ccbench._core) is not available; build it with 'make install'"
        )

    monkeypatch.setattr(engine, "core", missing)
    monkeypatch.setattr(engine, "catalog", lambda: None)
    assert_bad_input(invoke("run", QUICKSTART, "-o", tmp_path / "o"), "make install")


def test_bad_seed_is_bad_input(fake_engine, tmp_path):
    assert_bad_input(invoke("run", QUICKSTART, "-o", tmp_path / "o", "--seed", "-3"), "experiment.seed")


def test_list_ccas(fake_engine):
    r = invoke("list", "ccas")
    assert r.exit_code == 0, r.output
    for word in ("reno", "cubic", "bbr1", "RFC 9438"):
        assert word in r.stdout


def test_describe_cca(fake_engine):
    r = invoke("describe", "cubic")
    assert r.exit_code == 0, r.output
    for word in ("cubic", "beta", "717", "RFC 9438"):
        assert word in r.stdout


def test_real_process_reports_errors_without_traceback(tmp_path):
    """Through a real interpreter (no CliRunner), as a user runs it."""
    p = tmp_path / "bad.toml"
    p.write_text('[experiment]\nname = "x"\nduration = "ten seconds"\n')
    proc = subprocess.run(
        [sys.executable, "-m", "ccbench", "validate", str(p)],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT / "python"), "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith("error: ")
    assert "experiment.duration: 'ten seconds' is not a duration" in proc.stderr
    assert "bottleneck: required key is missing" in proc.stderr
