"""Running sweeps on the local executor: the results store, resume after SIGKILL,
failure isolation, lost workers, timeouts, engine-version changes, the CLI.

Simulations are tiny (1-2 simulated seconds at a few Mbit/s) to keep the suite fast.
"""

from __future__ import annotations

import fcntl
import io
import json
import os
import re
import signal
import subprocess
import sys
import threading

import pytest
from sweep_helpers import assert_same_runs, complete_runs, invoke, table_bytes, tables_equal, wait_for, write_sweep

import ccbench
from ccbench.results import TABLES
from ccbench.sweeps import EngineChanged, SweepBusy, SweepResults, expand, run_sweep
from ccbench.sweeps.executors import LocalExecutor
from ccbench.sweeps.progress import SweepProgress

pytestmark = pytest.mark.engine


def test_sweep_writes_runs_and_a_queryable_index(tmp_path):
    spec = write_sweep(tmp_path)
    report = ccbench.sweep(spec, tmp_path / "out", workers=2, progress=False)
    assert report.ok and report.planned == report.complete == 8 and report.ran == 8
    sw = ccbench.load(tmp_path / "out")
    assert isinstance(sw, SweepResults)
    runs = sw.runs
    assert len(runs) == 8 and set(runs["status"]) == {"complete"}
    assert list(runs.columns[:5]) == ["run_id", "plan_index", "status", "repetition", "seed"]
    assert runs["rate_mbit"].dtype.kind == "i" and runs["k"].dtype.kind == "f"
    assert runs["bottleneck.buffer"].tolist()[:2] == ["0.5BDP", "0.5BDP"]
    plan = expand(spec)
    assert runs["run_id"].tolist() == [r.run_id for r in plan.runs]
    for r in runs.itertuples():
        assert r.rate_bps == r.rate_mbit * 1_000_000
        # In-order bytes over a 0.8 s window: data buffered behind a hole at the window's
        # start may count in it, so goodput can exceed the payload rate slightly. (With
        # a 2-packet buffer and the default Linux host's bursts it can also be low.)
        assert 0 < r.goodput_bps <= 1.1 * r.rate_bps
        m = json.loads((tmp_path / "out" / r.path / "manifest.json").read_text())
        s = m["stats"]  # conservation, per run
        assert s["data_pkts_sent"] == s["data_pkts_delivered"] + s["data_pkts_dropped"] + s["data_pkts_in_network"]
        assert m["sweep"]["params"]["k"] == r.k and m["seed"] == r.seed
    # runs x flows, tidy, with the parameters
    flows = sw.flows
    assert len(flows) == 8 * 2 and {"run_id", "rate_mbit", "k", "flow_id", "delivered_bytes"} <= set(flows.columns)
    ts = sw.time_series("queue_ts", run_ids=runs["run_id"][:2], columns=["time_ns", "backlog_pkts"])
    assert set(ts["run_id"]) == set(runs["run_id"][:2]) and "backlog_pkts" in ts.columns
    # DuckDB and polars read the index without ccbench.
    import duckdb
    import polars as pl

    idx = tmp_path / "out" / "index.parquet"
    n = duckdb.connect().execute(f"SELECT count(*) FROM '{idx}' WHERE k = 2 AND status = 'complete'").fetchall()[0][0]
    assert n == 4
    assert pl.read_parquet(idx).filter(pl.col("rate_mbit") == 4).height == 4


def test_a_sweep_run_equals_running_its_spec_directly(tmp_path):
    spec = write_sweep(tmp_path, reps=1, rates=(3,))
    run_sweep(spec, tmp_path / "out", workers=1, progress=False)
    plan = expand(spec)
    direct = ccbench.run(plan.runs[1].experiment)
    swept = ccbench.load(tmp_path / "out").run(plan.runs[1].run_id)
    for t in TABLES:
        assert tables_equal(direct.tables[t], swept.tables[t]), t


def test_resume_skips_complete_runs_and_a_deleted_run_is_recomputed_alone(tmp_path):
    spec = write_sweep(tmp_path)
    out = tmp_path / "out"
    run_sweep(spec, out, workers=2, progress=False)
    again = run_sweep(spec, out, workers=2, progress=False)
    assert again.ok and again.ran == 0 and again.skipped == 8
    ids = sorted(p.name for p in (out / "runs").iterdir())
    victim = ids[3]
    before = table_bytes(out / "runs" / victim)
    inodes = {rid: (out / "runs" / rid / "manifest.json").stat().st_ino for rid in ids if rid != victim}
    import shutil

    shutil.rmtree(out / "runs" / victim)
    third = run_sweep(spec, out, workers=2, progress=False)
    assert third.ok and third.ran == 1 and third.skipped == 7
    after = table_bytes(out / "runs" / victim)
    assert all(tables_equal(before[t], after[t]) for t in TABLES)
    assert inodes == {rid: (out / "runs" / rid / "manifest.json").stat().st_ino for rid in inodes}
    # Extending the sweep runs only the new combinations.
    bigger = write_sweep(tmp_path, rates=(2, 4, 6), name="s2.toml")
    fourth = run_sweep(bigger, out, workers=2, progress=False)
    assert fourth.ok and fourth.ran == 4 and fourth.skipped == 8


def test_resume_after_sigkill_equals_an_uninterrupted_sweep(tmp_path):
    # Runs long enough (~0.1 s each) that the kill lands mid-sweep.
    spec = write_sweep(tmp_path, reps=3, rates=(40, 60, 80, 100), duration="2s")
    killed, clean = tmp_path / "killed", tmp_path / "clean"
    cmd = [sys.executable, "-m", "ccbench", "sweep", str(spec), "-o", str(killed), "-j", "2", "--no-progress"]
    proc = subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: complete_runs(killed) >= 3)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the sweep and its workers, at once
        proc.wait()
    done_at_kill = complete_runs(killed)
    assert 3 <= done_at_kill < 24, "the kill should land mid-sweep"
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "24 complete" in r.stdout
    resumed = SweepResults(killed).runs
    assert len(resumed) == 24 and resumed["run_id"].is_unique and set(resumed["status"]) == {"complete"}
    assert not [p for p in (killed / "runs").iterdir() if p.name.startswith(".")]  # no leftovers
    run_sweep(spec, clean, workers=2, progress=False)
    assert_same_runs(killed, clean)


def test_an_invalid_combination_fails_alone_and_is_reported(tmp_path):
    # warmup 200ms >= duration for the 200ms duration: invalid; the others run.
    spec = write_sweep(tmp_path, reps=1, extra='[[sweep.zip]]\n"experiment.duration" = ["1s", "200ms"]\n')
    out = tmp_path / "out"
    r = invoke("sweep", spec, "-o", out, "-j", "2")
    assert r.exit_code == 1, r.output
    assert "8 runs: 4 complete" in r.stdout and "4 failed" in r.stdout
    assert "experiment.warmup" in r.stdout and "--retry-failed" in r.stdout and "failed/" in r.stdout
    runs = SweepResults(out).runs
    bad = runs[runs["status"] == "failed"]
    assert len(bad) == 4 and set(bad["experiment.duration"]) == {"200ms"} and set(bad["error_type"]) == {"SpecError"}
    rec = json.loads((out / "failed" / f"{bad['run_id'].iloc[0]}.json").read_text())
    assert rec["status"] == "failed" and "below experiment.duration" in rec["error"]
    listed = invoke("results", out, "--status", "failed", "--format", "json")
    assert listed.exit_code == 0 and len(listed.stdout.strip().splitlines()) == 4
    again = invoke("sweep", spec, "-o", out, "--retry-failed")
    assert again.exit_code == 1 and "4 already complete, 4 run now" not in again.stdout


def test_a_run_the_preflight_check_refuses_fails_alone(tmp_path):
    # 0.01 BDP of 2 Mbit/s x 20 ms is 50 bytes: less than one packet.
    spec = write_sweep(tmp_path, reps=1, rates=(2,), ks=(0.01, 1))
    report = run_sweep(spec, tmp_path / "out", workers=2, progress=False)
    assert report.complete == 1 and len(report.failed) == 1
    (bad,) = report.failed
    assert bad["error_type"] == "PreflightError" and "less than one" in bad["error"] and bad["params"]["k"] == 0.01


def test_a_killed_local_worker_costs_its_run_one_attempt(tmp_path):
    spec = write_sweep(tmp_path, reps=2, rates=(60, 80, 100), duration="3s")
    out = tmp_path / "out"
    killed: list[str] = []
    executor = LocalExecutor(2)

    def kill_one_mid_run() -> bool:
        """Freeze a busy worker; if the run it holds is not on disk yet, it cannot
        have answered, so killing it now certainly loses that run (no timing involved)."""
        for pid, _, _ in executor.busy():
            os.kill(pid, signal.SIGSTOP)
            holding = [rid for p, rid, _ in executor.busy() if p == pid]
            if holding and not (out / "runs" / holding[0] / "manifest.json").exists():
                os.kill(pid, signal.SIGKILL)
                killed.append(holding[0])
                return True
            os.kill(pid, signal.SIGCONT)
        return False

    def killer():
        wait_for(lambda: complete_runs(out) >= 2)
        wait_for(kill_one_mid_run, timeout=120)

    t = threading.Thread(target=killer, daemon=True)
    t.start()
    report = run_sweep(spec, out, executor=executor, progress=False)
    t.join(timeout=10)
    assert killed, "the killer thread did not find a worker"
    assert report.ok and report.complete == 12
    runs = SweepResults(out).runs
    assert runs.set_index("run_id").loc[killed[0], "attempts"] == 2
    assert (runs["attempts"] == 2).sum() == 1 and runs["attempts"].max() == 2


def test_a_run_over_its_timeout_is_stopped_and_recorded(tmp_path):
    # The 2 Mbit/s runs take about 0.1 s of CPU, so 5 s of wall time leaves room for a
    # loaded machine; the 20 Gbit/s ones (33 M packets, tens of CPU seconds) cannot
    # finish in 5 s even on an idle fast one.
    spec = write_sweep(tmp_path, reps=1, rates=(2, 20000), duration="20s")
    report = run_sweep(spec, tmp_path / "out", workers=2, timeout=5.0, progress=False)
    assert report.complete == 2 and len(report.failed) == 2
    assert {f["error_type"] for f in report.failed} == {"Timeout"}
    assert {f["params"]["rate_mbit"] for f in report.failed} == {20000}


def test_an_engine_version_change_is_reported_not_mixed(tmp_path):
    spec = write_sweep(tmp_path, reps=1, rates=(2,))
    out = tmp_path / "out"
    run_sweep(spec, out, workers=1, progress=False)
    meta = json.loads((out / "sweep.json").read_text())
    meta["engine_version"] = "0.0.1-old"
    (out / "sweep.json").write_text(json.dumps(meta))
    with pytest.raises(EngineChanged, match="engine 0.0.1-old"):
        run_sweep(spec, out, progress=False)
    r = invoke("sweep", spec, "-o", out)
    assert r.exit_code == 2 and "never mixed" in r.stderr and "Traceback" not in r.output


def test_a_second_sweep_in_the_same_directory_is_refused(tmp_path):
    spec = write_sweep(tmp_path, reps=1, rates=(2,))
    out = tmp_path / "out"
    out.mkdir()
    fd = os.open(out / ".lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        with pytest.raises(SweepBusy, match="another sweep is running"):
            run_sweep(spec, out, progress=False)
    finally:
        os.close(fd)


def test_dry_run_lists_runs_and_cost_and_runs_nothing(tmp_path):
    spec = write_sweep(tmp_path)
    out = tmp_path / "out"
    r = invoke("sweep", spec, "-o", out, "--dry-run")
    assert r.exit_code == 0, r.output
    assert "8 runs = 4 combinations x 2 repetition(s)" in r.stdout and "simulated data packets" in r.stdout
    assert not out.exists()
    lines = [json.loads(x) for x in invoke("sweep", spec, "-o", out, "--dry-run", "--json").stdout.splitlines()]
    assert len(lines) == 8 and all(x["state"] == "pending" and x["est_packets"] > 0 for x in lines)
    run_sweep(spec, out, workers=2, progress=False)
    lines = [json.loads(x) for x in invoke("sweep", spec, "-o", out, "--dry-run", "--json").stdout.splitlines()]
    assert {x["state"] for x in lines} == {"complete"}


def test_results_command_filters_sorts_and_rejects_bad_columns(tmp_path):
    spec = write_sweep(tmp_path)
    out = tmp_path / "out"
    run_sweep(spec, out, workers=2, progress=False)
    r = invoke("results", out, "-f", "k=2", "--sort", "-goodput_bps", "-c", "run_id,k,goodput_bps", "--format", "csv")
    assert r.exit_code == 0, r.output
    rows = r.stdout.strip().splitlines()
    assert rows[0] == "run_id,k,goodput_bps" and len(rows) == 5
    goodputs = [float(x.split(",")[2]) for x in rows[1:]]
    assert goodputs == sorted(goodputs, reverse=True)
    w = invoke("results", out, "--where", "rate_mbit = 4 AND repetition = 1", "--format", "json")
    assert w.exit_code == 0 and len(w.stdout.strip().splitlines()) == 2
    table = invoke("results", out)
    assert table.exit_code == 0 and "8 complete" in table.stdout
    bad = invoke("results", out, "-c", "nope")
    assert bad.exit_code == 2 and "unknown nope" in bad.stderr
    bad_sql = invoke("results", out, "--where", "nope > 1")
    assert bad_sql.exit_code == 2 and "Traceback" not in bad_sql.output
    missing = invoke("results", tmp_path / "nowhere")
    assert missing.exit_code == 2 and "not a sweep directory" in missing.stderr


def test_progress_lines_in_a_log(tmp_path, capfd):
    spec = write_sweep(tmp_path, reps=1, rates=(2,))
    run_sweep(spec, tmp_path / "out", workers=1, progress=True)
    err = capfd.readouterr().err
    assert "sweep tiny: 2 runs to do" in err and "2/2 (2 done · 0 failed · 0 remaining)" in err


def test_failed_runs_are_kept_until_retry_failed_reruns_exactly_them(tmp_path):
    spec = write_sweep(tmp_path, reps=1, rates=(2, 4))
    out = tmp_path / "out"
    # 1 ms is far too short for any run: every run fails with a Timeout.
    first = run_sweep(spec, out, workers=2, timeout=0.001, progress=False)
    assert first.complete == 0 and {f["error_type"] for f in first.failed} == {"Timeout"}
    failed_ids = sorted(f["run_id"] for f in first.failed)
    assert sorted(p.stem for p in (out / "failed").iterdir()) == failed_ids
    # Without --retry-failed a rerun keeps the failures and runs nothing.
    again = invoke("sweep", spec, "-o", out, "--no-progress")
    assert again.exit_code == 1 and "0 run now" in again.stdout and "--retry-failed" in again.stdout
    assert set(SweepResults(out).runs["status"]) == {"failed"}
    # With it, exactly the failed runs run (here: all four), and their records go.
    retried = invoke("sweep", spec, "-o", out, "--retry-failed", "--no-progress")
    assert retried.exit_code == 0, retried.output
    assert "4 complete (0 already complete, 4 run now)" in retried.stdout
    runs = SweepResults(out).runs
    assert sorted(runs["run_id"]) == failed_ids and set(runs["status"]) == {"complete"}
    assert list((out / "failed").iterdir()) == []
    # Once complete, --retry-failed has nothing to do.
    assert "0 run now" in invoke("sweep", spec, "-o", out, "--retry-failed", "--no-progress").stdout


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_a_live_bar_with_eta_on_a_terminal():
    stream = _Terminal()
    with SweepProgress(3, name="grid", stream=stream) as bar:
        assert bar.interactive
        bar.update({"run_id": "a", "status": "complete"})
        bar.update({"run_id": "b", "status": "failed", "error_type": "SpecError", "error": "bad [k]"})
        assert bar.eta() is not None and bar.remaining == 1
        bar.update({"run_id": "c", "status": "complete"})
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", stream.getvalue())  # colours and cursor moves
    assert "grid" in text and "━" in text and "3/3" in text and "eta" in text
    assert "2 done · 1 failed · 0 remaining" in text
    assert "run b failed: SpecError: bad [k]" in text  # markup in the message is escaped, not eaten


def test_progress_in_a_log_is_plain_lines_with_an_eta():
    stream = io.StringIO()
    with SweepProgress(3, name="grid", stream=stream, interval=0) as bar:
        assert not bar.interactive
        bar.update({"run_id": "a", "status": "complete"})
        bar.update({"run_id": "b", "status": "failed", "error_type": "Timeout", "error": "too long"})
        bar.update({"run_id": "c", "status": "complete"})
    lines = stream.getvalue().splitlines()
    assert lines[0] == "sweep grid: 3 runs to do"
    assert re.fullmatch(
        r"sweep grid: 1/3 \(1 done · 0 failed · 2 remaining\), elapsed 0:00:\d\d, eta \d+:\d\d:\d\d", lines[1]
    )
    assert lines[2] == "sweep grid: run b failed: Timeout: too long"
    assert lines[-1].startswith("sweep grid: 3/3 (2 done · 1 failed · 0 remaining)") and "eta" not in lines[-1]
    assert "\x1b[" not in stream.getvalue()  # no terminal control codes in a log
    quiet = io.StringIO()
    with SweepProgress(3, name="grid", stream=quiet, enabled=False) as bar:
        bar.update({"run_id": "a", "status": "complete"})
    assert quiet.getvalue() == ""


def test_the_local_pool_defaults_to_one_worker_per_core():
    assert LocalExecutor().workers == len(os.sched_getaffinity(0))
    assert LocalExecutor(3).describe() == "local pool, 3 worker processes"
    with pytest.raises(ValueError, match="at least 1"):
        LocalExecutor(0)
    r = invoke("sweep", "unused.toml", "-o", "unused", "-j", "0")
    assert r.exit_code == 2 and "'-j' / '--workers': 0 is not in the range" in r.output


def test_only_runs_a_part_of_a_sweep_with_the_ids_it_has_in_the_whole(tmp_path):
    """``--only EXPR`` keeps the combinations where EXPR holds; the same command without
    it then runs just the rest; a bad expression is an error naming --only."""
    spec = write_sweep(tmp_path)  # rates 2, 4 x k 0.5, 2 x 2 repetitions = 8 runs
    whole = {r.run_id for r in expand(spec).runs if r.params["rate_mbit"] == 2}
    part = expand(spec, only=["rate_mbit == 2"])
    assert {r.run_id for r in part.runs} == whole and len(whole) == 4 and part.dropped == 4
    out = tmp_path / "out"
    r = invoke("sweep", spec, "-o", out, "-j", "1", "--only", "rate_mbit == 2", "--no-progress")
    assert r.exit_code == 0, r.output
    assert set(SweepResults(out).runs["run_id"]) == whole
    rest = invoke("sweep", spec, "-o", out, "-j", "1", "--no-progress")
    assert rest.exit_code == 0 and "(4 already complete, 4 run now)" in rest.output, rest.output
    assert len(SweepResults(out).runs) == 8
    bad = invoke("sweep", spec, "-o", out, "--only", "nosuch > 1", "--dry-run")
    assert bad.exit_code == 2 and "--only 'nosuch > 1'" in bad.output and "Traceback" not in bad.output, bad.output
