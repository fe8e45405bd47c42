"""`ccbench.load` on damaged sweep directories (issues 17 and 9): whatever is truncated,
corrupted, deleted or made to point elsewhere, reading a sweep raises ResultsError or
works (the index is rebuilt from the runs), never anything else."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sweep_helpers import invoke, write_sweep

import ccbench
from ccbench.results import ResultsError
from ccbench.sweeps import SweepResults, run_sweep

pytestmark = pytest.mark.engine


@pytest.fixture(scope="module")
def good_sweep(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("sweep")
    spec = write_sweep(tmp, reps=1, rates=(2,), ks=(0.5, 2))
    # one failed run too (0.01 BDP is less than a packet), so failed/ has a record
    spec.write_text(spec.read_text().replace("k = [0.5, 2]", "k = [0.01, 0.5, 2]"))
    report = run_sweep(spec, tmp / "out", workers=1, progress=False)
    assert report.complete == 2 and len(report.failed) == 1
    return tmp / "out"


def copy_sweep(good: Path, dest: Path) -> Path:
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(good, dest, symlinks=True)
    return dest


def read_everything(path: Path) -> None:
    """What a user reads from a sweep: the index, runs x flows, one time series, each run."""
    sw = ccbench.load(path)
    runs = sw.runs
    assert {"run_id", "status"} <= set(runs.columns)
    _ = sw.flows
    done = runs.loc[runs["status"] == "complete", "run_id"].tolist()
    sw.time_series("queue_ts", run_ids=done[:1], columns=["time_ns"])
    for rid in done:
        sw.run(rid)


def test_the_good_sweep_reads(good_sweep):
    read_everything(good_sweep)


def run_ids(sweep: Path) -> list[str]:
    return sorted(p.name for p in (sweep / "runs").iterdir())


def test_an_unreadable_index_is_rebuilt_from_the_runs(good_sweep, tmp_path):
    want = SweepResults(good_sweep).runs.sort_values("run_id").reset_index(drop=True)
    for damage in (b"", b"PAR1 not parquet", None):
        d = copy_sweep(good_sweep, tmp_path / "s")
        if damage is None:
            (d / "index.parquet").unlink()
        else:
            (d / "index.parquet").write_bytes(damage)
        got = SweepResults(d).runs.sort_values("run_id").reset_index(drop=True)
        cols = ["run_id", "status", "seed", "k", "goodput_bps", "error_type"]
        assert got[cols].equals(want[cols])
        r = invoke("results", d, "--format", "csv", "-c", "run_id,status")
        assert r.exit_code == 0 and len(r.stdout.strip().splitlines()) == 4, r.output


def test_an_index_with_a_damaged_string_is_rebuilt(good_sweep, tmp_path):
    """A flipped byte inside a string column leaves a parquet file that reads, with
    invalid UTF-8 that fails only when pandas converts it (hypothesis found it)."""
    d = copy_sweep(good_sweep, tmp_path / "s")
    raw = (d / "index.parquet").read_bytes()
    at = raw.index(b"complete")  # a status, stored as it is
    (d / "index.parquet").write_bytes(raw[:at] + bytes([raw[at] ^ 0xFF]) + raw[at + 1 :])
    read_everything(d)
    assert sorted(SweepResults(d).runs["status"]) == ["complete", "complete", "failed"]
    r = invoke("results", d, "--format", "csv", "-c", "run_id,status")
    assert r.exit_code == 0 and len(r.stdout.strip().splitlines()) == 4, r.output


def test_run_ids_that_leave_runs_are_refused(good_sweep, tmp_path):
    outside = tmp_path / "outside"
    copy_sweep(good_sweep / "runs" / run_ids(good_sweep)[0], outside)  # a real run, elsewhere
    # in the index
    d = copy_sweep(good_sweep, tmp_path / "s")
    t = pq.read_table(d / "index.parquet")
    ids = t.column("run_id").to_pylist()
    ids[ids.index(run_ids(good_sweep)[0])] = "../../outside"
    pq.write_table(t.set_column(0, "run_id", pa.array(ids, type=pa.string())), d / "index.parquet")
    with pytest.raises(ResultsError, match=r"'../../outside', which is not a ccbench run id"):
        _ = SweepResults(d).flows
    with pytest.raises(ResultsError, match="not a ccbench run id"):
        SweepResults(d).run("../../outside")
    # in sweep.json's plan, when the index has to be rebuilt
    d = copy_sweep(good_sweep, tmp_path / "s")
    (d / "index.parquet").unlink()
    meta = json.loads((d / "sweep.json").read_text())
    meta["plan"][0]["run_id"] = "/etc"
    (d / "sweep.json").write_text(json.dumps(meta))
    with pytest.raises(ResultsError, match="'/etc', which is not a ccbench run id"):
        _ = SweepResults(d).runs
    r = invoke("results", d)
    assert r.exit_code == 2 and "not a ccbench run id" in r.stderr and "Traceback" not in r.output


def _files(sweep: Path) -> list[str]:
    return sorted(str(p.relative_to(sweep)) for p in sweep.rglob("*") if p.is_file() and p.name != ".lock")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), how=st.sampled_from(["truncate", "flip", "garbage", "delete", "swap"]), where=st.floats(0, 1))
def test_fuzz_damaged_sweeps_raise_only_results_error(good_sweep, tmp_path, data, how, where):
    d = copy_sweep(good_sweep, tmp_path / "fuzz")
    files = _files(d)
    victim = d / data.draw(st.sampled_from(files))
    raw = victim.read_bytes()
    at = int(where * max(len(raw) - 1, 0))
    if how == "truncate":
        victim.write_bytes(raw[:at])
    elif how == "flip" and raw:
        victim.write_bytes(raw[:at] + bytes([raw[at] ^ 0xFF]) + raw[at + 1 :])
    elif how == "garbage":
        victim.write_bytes(os.urandom(max(at, 1)))
    elif how == "delete":
        victim.unlink()
    elif how == "swap":
        other = d / data.draw(st.sampled_from(files))
        if other != victim:
            tmp = victim.with_name("swap.tmp")
            os.rename(victim, tmp)
            os.rename(other, victim)
            os.rename(tmp, other)
    try:
        read_everything(d)
    except ResultsError as e:
        assert str(e) and len(str(e)) < 800
    r = invoke("results", d, "--format", "csv")
    assert r.exit_code in (0, 2) and "Traceback" not in r.output, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)


def test_a_damaged_run_is_reported_not_overwritten_and_recomputed_once_deleted(good_sweep, tmp_path):
    d = copy_sweep(good_sweep, tmp_path / "s")
    victim = run_ids(good_sweep)[0]
    before = (d / "runs" / victim / "flows.parquet").read_bytes()
    (d / "runs" / victim / "manifest.json").write_bytes(b'{"status": "comp')
    spec = good_sweep.parent / "s.toml"  # written by the fixture
    r = invoke("sweep", spec, "-o", d, "--no-progress")
    assert r.exit_code == 1 and "DamagedRun" in r.stdout and "delete that directory" in r.stdout, r.output
    assert (d / "runs" / victim / "flows.parquet").read_bytes() == before  # left as it was
    shutil.rmtree(d / "runs" / victim)
    r = invoke("sweep", spec, "-o", d, "--retry-failed", "--no-progress")
    assert "2 complete (1 already complete, 2 run now), 1 failed" in r.stdout, r.output  # + the refused one
    assert SweepResults(d).runs.set_index("run_id").loc[victim, "status"] == "complete"
    assert (d / "runs" / victim / "flows.parquet").read_bytes() == before  # the same run, recomputed


def test_a_column_name_that_is_not_utf8_is_a_results_error(good_sweep, tmp_path):
    # A flipped byte in a column's name in a Parquet footer: pyarrow reads the file,
    # then fails to decode the name (UnicodeDecodeError) when the runs' tables meet.
    d = copy_sweep(good_sweep, tmp_path / "name")
    victim = sorted(d.glob("runs/*/flows.parquet"))[0]
    raw = victim.read_bytes()
    footer = len(raw) - 8 - int.from_bytes(raw[-8:-4], "little")
    victim.write_bytes(raw[:footer] + raw[footer:].replace(b"delivered_bytes", b"delivered\x8cbytes"))
    with pytest.raises(ResultsError):
        _ = ccbench.load(d).flows
