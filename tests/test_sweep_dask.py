"""Sweeps on a real Dask cluster: LocalCluster scheduler and worker processes on
loopback. Results equal the local executor's; a worker killed mid-sweep loses no run."""

from __future__ import annotations

import os
import signal
import threading

import pytest
from sweep_helpers import assert_same_runs, complete_runs, invoke, wait_for, write_sweep

from ccbench.sweeps import SweepResults, run_sweep
from ccbench.sweeps.executors import DaskExecutor

pytestmark = pytest.mark.engine
distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def dask_local():
    """The executor of ``--dask local -j 2``: a LocalCluster of 2 worker processes.
    One cluster for the module: starting one takes seconds."""
    exe = DaskExecutor("local", 2)
    yield exe
    exe.close()


def test_dask_local_cluster_results_equal_the_local_executor(tmp_path, dask_local):
    spec = write_sweep(tmp_path, reps=2, rates=(2, 4))
    run_sweep(spec, tmp_path / "local", workers=2, progress=False)
    report = run_sweep(spec, tmp_path / "dask", executor=dask_local, progress=False)
    assert report.ok and report.complete == 8 and report.executor == "Dask (LocalCluster, 2 workers)"
    assert_same_runs(tmp_path / "local", tmp_path / "dask")
    # the runs really ran in other processes than the local pool's
    workers = set(SweepResults(tmp_path / "dask").runs["worker"])
    assert len(workers) >= 1 and not workers & set(SweepResults(tmp_path / "local").runs["worker"])


def test_cli_on_a_scheduler_address_with_streamed_results(tmp_path, dask_local):
    spec = write_sweep(tmp_path, reps=1, rates=(2, 4))
    run_sweep(spec, tmp_path / "local", workers=2, progress=False)
    address = dask_local.client.scheduler.address
    r = invoke("sweep", spec, "-o", tmp_path / "dask", "--dask", address, "--stream", "--no-progress")
    assert r.exit_code == 0, r.output
    assert "4 complete" in r.stdout and f"Dask ({address}" in r.stdout
    assert_same_runs(tmp_path / "local", tmp_path / "dask")


def test_an_unreachable_scheduler_is_a_clear_error():
    with pytest.raises(ConnectionError, match="cannot reach the Dask scheduler at tcp://127.0.0.1:9"):
        DaskExecutor("tcp://127.0.0.1:9", connect_timeout=1)


def test_killing_a_dask_worker_mid_sweep_loses_no_run(tmp_path, dask_local):
    spec = write_sweep(tmp_path, reps=3, rates=(40, 60, 80, 100), duration="2s")
    out = tmp_path / "out"
    client = dask_local.client
    pids = client.run(os.getpid)
    killed: list[tuple[str, list[str]]] = []

    def killer():
        wait_for(lambda: complete_runs(out) >= 2)
        for _ in range(500):
            busy = {w: keys for w, keys in client.processing().items() if keys}
            if busy:
                addr, keys = next(iter(busy.items()))
                os.kill(pids[addr], signal.SIGKILL)
                killed.append((addr, list(keys)))
                return
            threading.Event().wait(0.01)

    t = threading.Thread(target=killer, daemon=True)
    t.start()
    report = run_sweep(spec, out, executor=dask_local, progress=False)
    t.join(timeout=30)
    assert killed, "no worker was busy to be killed"
    assert report.ok and report.complete == 24 and not report.failed
    runs = SweepResults(out).runs
    assert runs["run_id"].is_unique and set(runs["status"]) == {"complete"}
    # the runs the dead worker held are complete and loadable (rerun elsewhere, or
    # found complete if the worker had written them just before it died)
    lost = sorted(k.removeprefix("ccbench-run-") for k in killed[0][1])
    assert lost and set(runs.set_index("run_id").loc[lost, "status"]) == {"complete"}
    sw = SweepResults(out)
    assert all(sw.run(rid).flows.shape[0] == 2 for rid in lost)
    client.wait_for_workers(2, timeout=60)
