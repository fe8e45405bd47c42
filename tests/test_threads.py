"""Idle BLAS threads are limited for the CLI and for sweep workers, whoever starts
the sweep (issue 19)."""

import subprocess
import sys
import textwrap

from ccbench.threads import BLAS_LIMITS, blas_limited_environ, limit_blas_threads


def test_limit_keeps_a_value_the_user_set():
    env = {"OPENBLAS_NUM_THREADS": "4"}
    limit_blas_threads(env)
    assert env == {"OPENBLAS_NUM_THREADS": "4"}
    env = {}
    limit_blas_threads(env)
    assert env == BLAS_LIMITS


def test_limited_environ_is_restored(monkeypatch):
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    import os

    with blas_limited_environ():
        assert os.environ["OPENBLAS_NUM_THREADS"] == "1"
    assert "OPENBLAS_NUM_THREADS" not in os.environ


def test_sweep_workers_started_from_python_are_limited():
    """A fresh interpreter without the variable (as a user's script calling
    ``ccbench.sweep``): the local executor's worker runs with the limit, and the
    caller's environment is left as it was."""
    code = textwrap.dedent(
        """
        import os
        os.environ.pop("OPENBLAS_NUM_THREADS", None)
        from ccbench.sweeps.executors import LocalExecutor
        ex = LocalExecutor(1)
        slot = ex._start()
        with open(f"/proc/{slot.process.pid}/environ", "rb") as f:
            env = f.read().split(b"\\0")
        ex._stop(slot, kill=False)
        print(b"OPENBLAS_NUM_THREADS=1" in env, "OPENBLAS_NUM_THREADS" in os.environ)
        """
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["True", "False"]
