"""The developer commands of issue 17: `make install` goes into a virtual environment,
never the system Python; `make bench` can be run again over its own output."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def make_dry_run(*args: str, **env: str) -> str:
    """The commands `make` would run (``-n``: nothing is executed)."""
    clean = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PY", "MAKEFLAGS", "MFLAGS")}
    p = subprocess.run(
        ["make", "-n", "-C", str(ROOT), *args], capture_output=True, text=True, env={**clean, **env}, timeout=60
    )
    assert p.returncode == 0, p.stderr
    return p.stdout


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_install_uses_a_virtual_environment():
    pip = [line for line in make_dry_run("install").splitlines() if "pip install" in line]
    assert pip and all(line.startswith(f"{ROOT}/.venv/bin/python -m pip install") for line in pip), pip
    assert "python3 -m venv --system-site-packages" in make_dry_run("install")  # created when missing
    # The active virtual environment wins; an explicit PY= is the way to opt out.
    active = make_dry_run("install", VIRTUAL_ENV="/opt/some-venv")
    assert "/opt/some-venv/bin/python -m pip install -e" in active
    assert not [line for line in active.splitlines() if line.startswith(f"{ROOT}/.venv/bin/python")]


@pytest.mark.engine
@pytest.mark.skipif(not Path("/usr/bin/time").exists(), reason="benchmarks/run.sh needs /usr/bin/time")
def test_the_benchmark_runs_again_over_its_own_output(tmp_path):
    """`make bench` is benchmarks/run.sh: a second run replaces its earlier results
    (scenario a alone, without the ns-3 side, to keep it cheap)."""
    env = {
        **os.environ,
        "NS3_DIR": str(tmp_path / "no-ns3"),
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
    }
    env.pop("WRITE", None)
    out = tmp_path / "bench-out"
    started = []
    for _ in range(2):
        p = subprocess.run(
            ["bash", str(ROOT / "benchmarks" / "run.sh"), str(out), "a"], capture_output=True, text=True, env=env,
            timeout=600,
        )  # fmt: skip
        assert p.returncode == 0, p.stderr[-2000:]
        assert "| a | ccbench |" in p.stdout
        started.append(json.loads((out / "ccbench-a" / "manifest.json").read_text())["started_at"])
    assert started[0] != started[1]  # replaced, not kept
    assert sorted(p.name for p in out.iterdir()) == ["ccbench-a", "ccbench-a.log", "ccbench-a.time"]
    assert "bench-out" in make_dry_run("bench")  # `make bench` is this script
