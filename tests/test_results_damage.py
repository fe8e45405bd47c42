"""`load` on damaged result directories (issue 17): truncated, swapped, corrupted and
path-traversing tables all raise ResultsError naming the damage, nothing else."""

import json
import os
import shutil
from pathlib import Path

import pytest
from fakes import fake_run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ccbench.results import ResultsError, RunResult, load, save, tables_from_engine
from ccbench.spec import Experiment


@pytest.fixture(scope="module")
def good_run(tmp_path_factory):
    from conftest import BASE_SPEC
    from fakes import FAKE_CCAS

    cfg = Experiment.from_dict(BASE_SPEC, ccas=FAKE_CCAS).resolve()
    raw = fake_run(cfg)
    res = RunResult(tables_from_engine(raw["tables"]), {"engine_config": cfg, "stats": raw["stats"], "seed": 1})
    return save(res, tmp_path_factory.mktemp("good") / "run")


def copy_run(good: Path, dest: Path) -> Path:
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(good, dest, symlinks=True)
    return dest


def edit_manifest(run: Path, fn) -> None:
    m = json.loads((run / "manifest.json").read_text())
    fn(m)
    (run / "manifest.json").write_text(json.dumps(m))


def test_good_run_loads(good_run):
    assert len(load(good_run).flows) == 3


@pytest.mark.parametrize(
    "fname, fragment",
    [
        ("/etc/passwd", "outside the run directory"),
        ("../other/flows.parquet", "outside the run directory"),
        ("..", "outside the run directory"),
        ("sub/flows.parquet", "outside the run directory"),
        ("", "outside the run directory"),
        (17, "outside the run directory"),
        ("missing.parquet", "missing"),
    ],
)
def test_table_paths_are_confined_to_the_run(good_run, tmp_path, fname, fragment):
    other = tmp_path / "other"
    other.mkdir()
    shutil.copy(good_run / "flows.parquet", other / "flows.parquet")
    run = copy_run(good_run, tmp_path / "run")
    edit_manifest(run, lambda m: m["tables"].__setitem__("flows", fname))
    with pytest.raises(ResultsError, match=fragment):
        load(run)


def test_symlinked_table_leaving_the_run_is_refused(good_run, tmp_path):
    outside = tmp_path / "outside.parquet"
    shutil.copy(good_run / "flows.parquet", outside)
    run = copy_run(good_run, tmp_path / "run")
    (run / "flows.parquet").unlink()
    (run / "flows.parquet").symlink_to(outside)
    with pytest.raises(ResultsError, match="links outside"):
        load(run)


def test_swapped_tables_are_detected(good_run, tmp_path):
    run = copy_run(good_run, tmp_path / "run")
    os.rename(run / "flows.parquet", run / "x")
    os.rename(run / "events.parquet", run / "flows.parquet")
    os.rename(run / "x", run / "events.parquet")
    with pytest.raises(ResultsError, match="lacks column"):
        load(run)


@pytest.mark.parametrize(
    "manifest_bytes, fragment",
    [
        (b"", "not valid JSON"),
        (b"\xff\xfe{\x00}\x00", "not valid JSON"),
        (b"[1, 2]", "not a JSON object"),
        (b'{"status": "complete", "format_version": 1, "tables": [1]}', "not a table of names"),
        (b'{"status": "complete", "format_version": 99}', "format_version 99"),
        (b'{"status": "running", "format_version": 1}', "status is 'running'"),
        (b"[" * 100_000, "not valid JSON"),
    ],
)
def test_damaged_manifest(good_run, tmp_path, manifest_bytes, fragment):
    run = copy_run(good_run, tmp_path / "run")
    (run / "manifest.json").write_bytes(manifest_bytes)
    with pytest.raises(ResultsError, match=fragment):
        load(run)


def test_missing_pieces(good_run, tmp_path):
    with pytest.raises(ResultsError, match="not a results directory"):
        load(tmp_path / "absent")
    run = copy_run(good_run, tmp_path / "run")
    (run / "queue_ts.parquet").unlink()
    with pytest.raises(ResultsError, match="missing"):
        load(run)
    (run / "queue_ts.parquet").mkdir()
    with pytest.raises(ResultsError, match="not a file"):
        load(run)
    (run / "manifest.json").unlink()
    with pytest.raises(ResultsError, match="no manifest.json"):
        load(run)


TABLE_FILES = ["flows.parquet", "flow_ts.parquet", "queue_ts.parquet", "events.parquet", "manifest.json"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    victim=st.sampled_from(TABLE_FILES),
    how=st.sampled_from(["truncate", "flip", "garbage", "swap"]),
    where=st.floats(0, 1),
    other=st.sampled_from(TABLE_FILES),
)
def test_fuzz_damaged_runs_raise_only_results_error(good_run, tmp_path, victim, how, where, other):
    run = copy_run(good_run, tmp_path / "fuzz")
    path = run / victim
    data = path.read_bytes()
    at = int(where * max(len(data) - 1, 0))
    if how == "truncate":
        path.write_bytes(data[:at])
    elif how == "flip":
        path.write_bytes(data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1 :])
    elif how == "garbage":
        path.write_bytes(os.urandom(max(at, 1)))
    elif other != victim:
        tmp = run / "swap.tmp"
        os.rename(path, tmp)
        os.rename(run / other, path)
        os.rename(tmp, run / other)
    try:
        res = load(run)
    except ResultsError as e:
        assert str(e) and len(str(e)) < 600
        return
    # Damage that load cannot see (a flipped byte in a compressed page that still
    # decodes, a no-op swap) must still give tables with their key columns.
    for name, table in res.tables.items():
        assert table.num_columns > 0, name
