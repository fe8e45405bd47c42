import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from fakes import assert_tables_equal, fake_run

from ccbench import results
from ccbench.results import FORMAT_VERSION, ResultsError, RunResult, is_complete, load, save, tables_from_engine
from ccbench.spec import Experiment

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def result(base_spec, ccas):
    cfg = Experiment.from_dict(base_spec, ccas=ccas).resolve()
    raw = fake_run(cfg)
    return RunResult(
        tables_from_engine(raw["tables"]), {"engine_config": cfg, "stats": raw["stats"], "seed": cfg["seed"]}
    )


def test_engine_columns_become_arrow_with_dictionary_strings(result):
    flows = result.tables["flows"]
    assert flows.schema.field("cca").type == pa.dictionary(pa.int32(), pa.string())
    assert flows.schema.field("flow_id").type == pa.uint64()
    assert flows.schema.field("stop_ns").type == pa.int64()
    assert flows.schema.field("completed").type == pa.bool_()
    assert result.flows["cca"].tolist() == ["cubic", "cubic", "reno"]
    assert isinstance(result.flows["cca"].dtype, pd.CategoricalDtype)
    assert list(result.tables) == ["flows", "flow_ts", "queue_ts", "events"]


def test_save_load_round_trip(result, tmp_path):
    out = save(result, tmp_path / "run")
    assert out == tmp_path / "run"
    assert sorted(p.name for p in out.iterdir()) == [
        "events.parquet",
        "flow_ts.parquet",
        "flows.parquet",
        "manifest.json",
        "queue_ts.parquet",
    ]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["format_version"] == FORMAT_VERSION and manifest["status"] == "complete"
    back = load(out)
    for name, table in result.tables.items():
        assert_tables_equal(back.tables[name], table, name)
    assert back.manifest["engine_config"] == result.manifest["engine_config"]
    pd.testing.assert_frame_equal(back.flows, result.flows)
    assert back.path == out


def test_parquet_bytes_are_deterministic(result, tmp_path):
    a, b = save(result, tmp_path / "a"), save(result, tmp_path / "b")
    for name in result.tables:
        assert (a / f"{name}.parquet").read_bytes() == (b / f"{name}.parquet").read_bytes()


def test_existing_target_needs_overwrite(result, tmp_path):
    save(result, tmp_path / "run")
    with pytest.raises(FileExistsError):
        save(result, tmp_path / "run")
    result.manifest["seed"] = 42
    save(result, tmp_path / "run", overwrite=True)
    assert load(tmp_path / "run").manifest["seed"] == 42
    assert [p.name for p in tmp_path.iterdir()] == ["run"]  # nothing left beside it


def test_failure_mid_write_leaves_nothing(result, tmp_path, monkeypatch):
    calls = []
    real = results._write_parquet

    def failing(table, path):
        calls.append(path)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real(table, path)

    monkeypatch.setattr(results, "_write_parquet", failing)
    with pytest.raises(OSError, match="No space"):
        save(result, tmp_path / "run")
    assert list(tmp_path.iterdir()) == []


def test_crash_mid_write_never_looks_complete(tmp_path):
    """A process killed while writing (os._exit, no cleanup) leaves at most a hidden
    temporary directory without a manifest, and no target directory."""
    script = textwrap.dedent(
        f"""
        import os, sys
        sys.path[:0] = [{str(ROOT / "python")!r}, {str(ROOT / "tests")!r}]
        from ccbench import results
        from ccbench.results import RunResult, tables_from_engine
        from ccbench.spec import Experiment
        from conftest import BASE_SPEC
        from fakes import FAKE_CCAS, fake_run
        cfg = Experiment.from_dict(BASE_SPEC, ccas=FAKE_CCAS).resolve()
        res = RunResult(tables_from_engine(fake_run(cfg)["tables"]), {{"engine_config": cfg}})
        def crashing(real):
            def write(*args):  # (path, bytes) or (table, path)
                if any(getattr(a, "name", None) == os.environ["CRASH_AT"] for a in args if not isinstance(a, bytes)):
                    os._exit(9)
                real(*args)
            return write
        results._write_file = crashing(results._write_file)
        results._write_parquet = crashing(results._write_parquet)
        results.save(res, {str(tmp_path / "run")!r})
        """
    )
    for crash_at in ("flow_ts.parquet", "manifest.json"):
        proc = subprocess.run(
            [sys.executable, "-c", script], env={**os.environ, "CRASH_AT": crash_at}, capture_output=True, text=True
        )
        assert proc.returncode == 9, proc.stderr
        assert not (tmp_path / "run").exists()
        leftovers = list(tmp_path.iterdir())
        assert leftovers and all(p.name.startswith(".run.tmp-") for p in leftovers)
        for p in leftovers:
            assert not is_complete(p)
            with pytest.raises(ResultsError, match="not a complete run"):
                load(p)


def test_load_rejects_incomplete_or_foreign_dirs(result, tmp_path):
    with pytest.raises(ResultsError):
        load(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ResultsError, match="no manifest.json"):
        load(tmp_path / "empty")
    out = save(result, tmp_path / "run")
    m = json.loads((out / "manifest.json").read_text())
    (out / "manifest.json").write_text(json.dumps({**m, "format_version": 999}))
    with pytest.raises(ResultsError, match="format_version 999"):
        load(out)
    (out / "manifest.json").write_text(json.dumps({**m, "status": "running"}))
    with pytest.raises(ResultsError, match="status"):
        load(out)
    assert not is_complete(out)
