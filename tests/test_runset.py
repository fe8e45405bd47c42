# ruff: noqa: F811  (the fixtures are imported from analysis_fixtures)
"""Opening runs and sweeps: axes, failed runs, clear errors."""

import json
import math

import pytest
from analysis_fixtures import fixture_run, fixture_sweep, store_sweep  # noqa: F401

from ccbench.results import ResultsError
from ccbench.runset import flatten, natural_key, open_results, run_metrics


def test_flatten_and_natural_order():
    assert flatten({"a": {"b": 1}, "f": [{"c": "x"}, {"c": "y"}]}) == {"a.b": 1, "f[0].c": "x", "f[1].c": "y"}
    assert sorted(["100Mbit", "10Mbit", "0.5BDP", None, "abc", 2], key=natural_key) == [
        "0.5BDP",
        2,
        "10Mbit",
        "100Mbit",
        "abc",
        None,
    ]


def test_open_errors(tmp_path):
    with pytest.raises(ResultsError, match="does not exist"):
        open_results(tmp_path / "nope")
    with pytest.raises(ResultsError, match="holds no run"):
        open_results(tmp_path)
    (tmp_path / "f.txt").write_text("x")
    with pytest.raises(ResultsError, match="not a directory"):
        open_results(tmp_path / "f.txt")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "manifest.json").write_text(json.dumps({"status": "running"}))
    with pytest.raises(ResultsError, match="not a complete run"):
        open_results(bad)


@pytest.mark.engine
def test_sweep_axes_failed_runs_and_metrics(fixture_run, fixture_sweep):
    run = open_results(fixture_run)
    assert run.kind == "run" and run.axes == []
    sw = open_results(fixture_sweep)
    assert sw.kind == "sweep"
    assert sw.axes == ["bottleneck.buffer", "bottleneck.rate"]
    assert len(sw.complete) == 4 and len(sw.failed) == 1
    failed = sw.failed[0]
    assert "simulated failure" in failed.error
    assert failed.params == {"bottleneck.buffer": "8BDP", "bottleneck.rate": "20Mbit"}  # from its path
    t = run_metrics(sw).set_index("run")
    row = t.loc["buffer=8BDP/rate=20Mbit"]
    assert row["status"] == "failed" and math.isnan(row["jain"])
    assert row["buffer_bdp"] == 8 and row["rate_mbps"] == 20  # keeps its place in the grid
    ok = t[t["status"] == "complete"]
    assert sorted(ok["buffer_bdp"].unique()) == [0.5, 2.0]
    assert (ok["utilization"] > 0.8).all() and (ok["utilization"] <= 1).all()
    shares = ok["sender:bbr-host:share"] + ok["sender:cubic-host:share"]
    assert shares.to_numpy() == pytest.approx(1.0)
    with pytest.raises(ResultsError, match="failed"):
        failed.load()


@pytest.mark.engine
def test_sweep_store_layout(fixture_run, tmp_path):
    """runs/<id>/ with the parameters in the manifest's "sweep" section, and
    failed/<id>.json records (the sweep store's layout)."""
    import shutil

    for i, (buf, rep) in enumerate([("1BDP", 0), ("1BDP", 1), ("2BDP", 0)]):
        d = tmp_path / "runs" / f"id{i}"
        shutil.copytree(fixture_run, d)
        m = json.loads((d / "manifest.json").read_text())
        m["sweep"] = {"run_id": f"id{i}", "repetition": rep, "params": {"buffer": buf, "cca": "bbr1"}}
        (d / "manifest.json").write_text(json.dumps(m))
    (tmp_path / "failed").mkdir()
    (tmp_path / "failed" / "id3.json").write_text(
        json.dumps(
            {
                "run_id": "id3",
                "params": {"buffer": "2BDP", "cca": "bbr1"},
                "error_type": "EngineError",
                "error": "rejected",
            }
        )
    )
    (tmp_path / "failed" / "id4.json").write_text("{not json")
    sw = open_results(tmp_path)
    assert sw.axes == ["buffer", "cca"]
    assert [e.name for e in sw.failed] == ["failed/id3.json", "failed/id4.json"]
    assert sw.failed[0].error == "EngineError: rejected" and "unreadable" in sw.failed[1].error
    t = run_metrics(sw)
    assert list(t["status"]) == ["complete"] * 3 + ["failed"] * 2
    assert t.loc[3, "buffer"] == "2BDP" and math.isnan(t.loc[3, "jain"])


@pytest.mark.engine
def test_a_sweep_written_by_ccbench_sweep(store_sweep):
    sw = open_results(store_sweep)
    assert sw.axes == ["cca", "k"]  # the sweep's variables, not its derived values
    assert len(sw.complete) == 8 and len(sw.failed) == 4
    assert all(e.params["k"] == 4 and "delay" in e.error for e in sw.failed)
    t = run_metrics(sw)
    assert sorted(t["repetition"].dropna().unique()) == [0, 1]
    assert t[t["status"] == "failed"]["buffer_bdp"].tolist() == [4.0] * 4  # from the "4BDP" parameter
    from ccbench.plots.grid import grid_axes

    assert grid_axes(sw, t) == ["cca", "k"]  # buffer_bdp adds nothing: k determines it
