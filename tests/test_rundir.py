"""What --overwrite may replace, and atomic replacement that survives a crash
(issue 17): nothing the user owns is ever deleted."""

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from fakes import fake_run
from test_cli import QUICKSTART, assert_bad_input, fake_engine, invoke  # noqa: F401

from ccbench import rundir
from ccbench.errors import OutputDirError
from ccbench.results import RunResult, load, save, tables_from_engine
from ccbench.spec import Experiment

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def result(base_spec, ccas):
    cfg = Experiment.from_dict(base_spec, ccas=ccas).resolve()
    raw = fake_run(cfg)
    return RunResult(tables_from_engine(raw["tables"]), {"engine_config": cfg, "stats": raw["stats"], "seed": 1})


def snapshot(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def test_foreign_file_in_target_is_never_deleted(result, tmp_path):
    target = tmp_path / "mine"
    target.mkdir()
    (target / "thesis.tex").write_text("years of work")
    for overwrite in (False, True):
        with pytest.raises(OutputDirError, match=r"not a ccbench run directory.*thesis\.tex"):
            save(result, target, overwrite=overwrite)
    assert snapshot(target) == {"thesis.tex": b"years of work"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine"]


def test_a_file_as_target_is_refused(result, tmp_path):
    f = tmp_path / "notes.txt"
    f.write_text("keep")
    with pytest.raises(OutputDirError, match="not a directory"):
        save(result, f, overwrite=True)
    assert f.read_text() == "keep"


def test_symlink_target_is_refused_not_followed(result, tmp_path):
    real = tmp_path / "real"
    save(result, real)
    before = snapshot(real)
    link = tmp_path / "link"
    link.symlink_to(real)
    for overwrite in (False, True):
        with pytest.raises(OutputDirError, match="symbolic link"):
            save(result, link, overwrite=overwrite)
    assert link.is_symlink() and snapshot(real) == before
    # a dangling link is refused too (never replaced by a real directory)
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    with pytest.raises(OutputDirError, match="symbolic link"):
        save(result, dangling, overwrite=True)
    assert dangling.is_symlink() and not (tmp_path / "nowhere").exists()


def test_empty_directory_receives_a_run(result, tmp_path):
    target = tmp_path / "empty"
    target.mkdir()
    save(result, target)
    assert load(target).manifest["seed"] == 1


def test_previous_run_replaced_only_with_overwrite(result, tmp_path):
    target = tmp_path / "run"
    save(result, target)
    with pytest.raises(FileExistsError, match="already exists"):
        save(result, target)
    result.manifest["seed"] = 7
    save(result, target, overwrite=True)
    assert load(target).manifest["seed"] == 7
    assert [p.name for p in tmp_path.iterdir()] == ["run"]


@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2", "two-renames"])
def test_crash_mid_replacement_loses_neither_run(result, tmp_path, exchange):
    """A process killed in the middle of replacing a run (os._exit at the injected
    crash point) leaves both runs complete on disk; the next write repairs and cleans."""
    target = tmp_path / "run"
    script = textwrap.dedent(
        f"""
        import os, sys
        sys.path[:0] = [{str(ROOT / "tests")!r}, {str(ROOT / "python")!r}]
        from fakes import fake_run, FAKE_CCAS
        from conftest import BASE_SPEC
        from ccbench import rundir
        from ccbench.results import RunResult, save, tables_from_engine
        from ccbench.spec import Experiment
        cfg = Experiment.from_dict(BASE_SPEC, ccas=FAKE_CCAS).resolve()
        raw = fake_run(cfg)
        res = RunResult(tables_from_engine(raw["tables"]), {{"seed": 1}})
        save(res, {str(target)!r})
        if not {exchange!r}:
            rundir._exchange = lambda a, b: False
        rundir.crash_point = lambda step: os._exit(9)
        res.manifest["seed"] = 2
        save(res, {str(target)!r}, overwrite=True)
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 9, proc.stderr
    on_disk = {p.name: seed_of(p) for p in tmp_path.iterdir()}
    assert all(rundir.is_run_dir(p) for p in tmp_path.iterdir()), on_disk
    if exchange:  # swapped in one step: the new run in place, the old one beside it
        assert on_disk.pop("run") == 2 and list(on_disk.values()) == [1]
    else:  # between the renames: the target is missing, old and new both beside it
        assert "run" not in on_disk and sorted(on_disk.values()) == [1, 2]
    # The next write repairs the target (the old run comes back if it was missing),
    # then removes the dead process's siblings.
    result.manifest["seed"] = 3
    if not exchange:
        with pytest.raises(FileExistsError):  # restored, so it is a run again
            save(result, target)
        assert load(target).manifest["seed"] == 1
    save(result, target, overwrite=True)
    assert load(target).manifest["seed"] == 3
    assert [p.name for p in tmp_path.iterdir()] == ["run"]


def seed_of(p: Path) -> int:
    return json.loads((p / "manifest.json").read_text())["seed"]


def test_two_renames_crash_restores_the_old_run(result, tmp_path):
    """With the fallback (no renameat2), the old run is put back by recover()."""
    target = tmp_path / "run"
    save(result, target)
    old = rundir.temp_sibling(target, "old").with_name(f".run.old-{rundir._HOST}-999999999-{'a' * 12}")
    os.rename(target, old)  # what a dead process leaves between the renames
    assert rundir.recover(target) == old
    assert load(target).manifest["seed"] == 1 and not old.exists()


def test_stale_temp_siblings_of_dead_processes_are_cleaned(result, tmp_path):
    target = tmp_path / "run"
    dead = tmp_path / f".run.tmp-{rundir._HOST}-999999999-{'b' * 12}"
    dead.mkdir()
    (dead / "flows.parquet").write_bytes(b"half")
    live = tmp_path / f".run.tmp-{rundir._HOST}-{os.getppid()}-{'c' * 12}"  # our parent is alive
    live.mkdir()
    foreign = tmp_path / ".run.tmp-not-ours"
    foreign.mkdir()
    save(result, target)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted(["run", live.name, foreign.name])


def test_siblings_of_zombies_and_reused_pids_count_as_dead(tmp_path):
    # A SIGKILLed sweep's workers stay zombies where PID 1 reaps nothing (containers):
    # their pid still answers kill(pid, 0), yet they will never finish their write.
    zombie = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        deadline = time.monotonic() + 60  # a guard against a hang only
        while Path(f"/proc/{zombie.pid}/stat").read_text().split(") ")[1][0] != "Z":
            assert time.monotonic() < deadline, "the child never exited"
            time.sleep(0.01)
        assert not rundir._pid_alive(zombie.pid)
        sibling = tmp_path / f".run.tmp-{rundir._HOST}-{zombie.pid}-{'d' * 12}"
        sibling.mkdir()
        assert rundir.clean_stale_siblings(tmp_path / "run") == [sibling]
    finally:
        zombie.wait()
    # A live process that started after the sibling was made only reuses its pid.
    parent = os.getppid()
    assert rundir._pid_alive(parent)
    assert rundir._pid_alive(parent, created_ns=time.time_ns())
    assert not rundir._pid_alive(parent, created_ns=0)


# ------------------------------------------------------------------ from the CLI


@pytest.mark.usefixtures("fake_engine")
def test_cli_overwrite_on_working_directory_deletes_nothing(tmp_path, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    spec = work / "spec.toml"
    spec.write_text(QUICKSTART.read_text())
    (work / "data.csv").write_text("1,2\n")
    before = snapshot(work)
    monkeypatch.chdir(work)
    assert_bad_input(
        invoke("run", "spec.toml", "-o", str(work), "--overwrite"), "not a ccbench run directory", "spec.toml"
    )
    assert_bad_input(invoke("run", "spec.toml", "-o", ".", "--overwrite"), "not a ccbench run directory")
    assert snapshot(work) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["work"]


@pytest.mark.usefixtures("fake_engine")
def test_cli_symlink_and_foreign_dir_refused_before_simulating(tmp_path, monkeypatch):
    from ccbench import engine

    ran = []
    monkeypatch.setattr(engine, "run_config", lambda *a, **k: ran.append(1) or fake_run(*a))
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert_bad_input(invoke("run", QUICKSTART, "-o", tmp_path / "link", "--overwrite"), "symbolic link")
    assert ran == []


@pytest.mark.usefixtures("fake_engine")
def test_cli_accepts_an_empty_directory_and_the_cwd_when_empty(tmp_path, monkeypatch):
    empty = tmp_path / "empty"
    empty.mkdir()
    r = invoke("run", QUICKSTART, "-o", empty)
    assert r.exit_code == 0, r.output
    assert load(empty).manifest["name"] == "quickstart"
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    r = invoke("run", QUICKSTART, "-o", ".")
    assert r.exit_code == 0, r.output
    assert os.path.samefile(os.getcwd(), here)  # filled in place, not replaced under the shell
    assert load(here).manifest["name"] == "quickstart"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


@pytest.mark.usefixtures("fake_engine")
def test_cli_disk_full_while_writing_names_the_target_not_the_temp_dir(tmp_path, monkeypatch):
    """The pre-flight check passed, then the disk filled up while the tables were
    written: the message names the directory the user gave, and nothing is left."""
    from ccbench import results

    def full(table, path):
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr(results, "_write_parquet", full)
    target = tmp_path / "run"
    r = invoke("run", QUICKSTART, "-o", target)
    assert_bad_input(r, f"{target}: cannot write the run there: No space left on device")
    assert ".tmp-" not in r.stderr and list(tmp_path.iterdir()) == []
