"""Executors: where a sweep's runs execute.

Both take a list of :class:`~.worker.RunTask` and yield one record per task as runs
finish (in completion order). A run whose worker dies is retried (up to
``max_attempts``) and then recorded as failed; it is never silently lost.

- :class:`LocalExecutor` (default): ``workers`` long-lived worker processes (one per
  core by default) started from a ``forkserver``, each fed one task at a time over a
  pipe. Because the parent knows which run each process holds, a process that dies
  (killed, out of memory, crashed) costs exactly that run one attempt, and a run over
  its ``timeout`` is stopped by killing its process.
- :class:`DaskExecutor`: a ``distributed`` cluster (``tcp://host:8786``) or a
  ``LocalCluster`` started for the sweep (``"local"``). Dask's scheduler reschedules
  the runs of a lost worker itself (``distributed.scheduler.allowed-failures``);
  a run that keeps killing workers comes back as ``KilledWorker`` and is recorded.
  Workers write into the shared sweep directory, or with ``stream=True`` send the
  run's files back to the client, which writes them.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection, wait
from typing import Any

from ..signals import exit_with
from ..threads import blas_limited_environ
from .worker import RunTask, execute, failure_record

__all__ = ["DaskExecutor", "Executor", "LocalExecutor", "default_workers"]


def default_workers() -> int:
    """One worker per core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


class Executor:
    """The interface: ``run(tasks)`` yields a record per task; ``describe()`` says where."""

    workers: int

    def run(self, tasks: Sequence[RunTask]) -> Iterator[dict[str, Any]]:  # pragma: no cover - interface
        raise NotImplementedError

    def describe(self) -> str:  # pragma: no cover - interface
        raise NotImplementedError

    def close(self) -> None:
        pass


# --------------------------------------------------------------------------- local


def _worker_loop(conn: Connection, sweep_pid: int) -> None:
    """A worker process: run the tasks the sweep sends until it sends ``None``; end
    the moment the sweep's process is gone (:func:`ccbench.signals.exit_with`)."""
    exit_with(sweep_pid)
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        conn.send(execute(task))


@dataclass
class _Slot:
    process: Any
    conn: Connection
    task: RunTask | None = None
    started: float = 0.0


class LocalExecutor(Executor):
    """A pool of worker processes on this machine (see the module docstring)."""

    def __init__(self, workers: int | None = None, *, timeout: float | None = None, max_attempts: int = 3):
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be at least 1, not {workers}")
        self.workers = workers or default_workers()
        self.timeout = timeout
        self.max_attempts = max(1, max_attempts)
        self._ctx = multiprocessing.get_context("forkserver")
        # The fork server imports ccbench once; each worker forks from it ready to run.
        self._ctx.set_forkserver_preload(["ccbench.sweeps.worker", "ccbench.api", "ccbench.metrics"])
        self._slots: list[_Slot] = []

    def describe(self) -> str:
        return f"local pool, {self.workers} worker process{'es' if self.workers != 1 else ''}"

    def _start(self) -> _Slot:
        parent, child = self._ctx.Pipe()
        proc = self._ctx.Process(
            target=_worker_loop, args=(child, os.getpid()), name="ccbench-sweep-worker", daemon=True
        )
        # The fork server (started by the first worker) and so every worker it forks
        # get the BLAS thread limit before they import NumPy (ccbench.threads).
        with blas_limited_environ():
            proc.start()
        child.close()
        return _Slot(proc, parent)

    def busy(self) -> list[tuple[int, str, float]]:
        """``(pid, run_id, seconds running)`` of each worker running a task now (for
        monitoring and tests)."""
        now = time.monotonic()
        return [
            (s.process.pid, s.task.run_id, now - s.started)
            for s in list(self._slots)
            if s.task is not None and s.process.pid is not None
        ]

    def _stop(self, slot: _Slot, *, kill: bool) -> None:
        try:
            if kill:
                slot.process.kill()
            else:
                slot.conn.send(None)
        except (OSError, ValueError):
            pass
        slot.process.join(timeout=None if kill else 5)
        if slot.process.is_alive():
            slot.process.kill()
            slot.process.join()
        slot.conn.close()

    def run(self, tasks: Sequence[RunTask]) -> Iterator[dict[str, Any]]:
        queue: deque[RunTask] = deque(tasks)
        n = min(self.workers, len(queue))
        self._slots = [self._start() for _ in range(n)]
        try:
            while queue or any(s.task is not None for s in self._slots):
                for i, slot in enumerate(self._slots):
                    if slot.task is None and queue:
                        next_task = queue.popleft()
                        try:
                            slot.conn.send(next_task)
                        except OSError:  # the idle worker died: replace it; the task never started
                            queue.appendleft(next_task)
                            self._stop(slot, kill=True)
                            self._slots[i] = self._start()
                            continue
                        slot.task = next_task
                        slot.started = time.monotonic()
                busy = [s for s in self._slots if s.task is not None]
                ready = wait([s.conn for s in busy] + [s.process.sentinel for s in busy], timeout=self._wait_time(busy))
                for i, slot in enumerate(self._slots):
                    task = slot.task
                    if task is None:
                        continue
                    if slot.conn in ready:
                        try:
                            record = slot.conn.recv()
                        except (EOFError, OSError):
                            record = None
                        if record is not None:
                            slot.task = None
                            yield record
                            continue
                    if slot.process.sentinel in ready or not slot.process.is_alive():
                        code = slot.process.exitcode
                        self._stop(slot, kill=True)
                        self._slots[i] = self._start()
                        yield from self._lost(task, f"the worker process died (exit code {code})", queue)
                    elif self.timeout is not None and time.monotonic() - slot.started > self.timeout:
                        self._stop(slot, kill=True)
                        self._slots[i] = self._start()
                        yield failure_record(
                            task, "Timeout", f"the run took longer than {self.timeout:g} s and was stopped",
                            wall=time.monotonic() - slot.started,
                        )  # fmt: skip
        finally:
            self.close()

    def _wait_time(self, busy: list[_Slot]) -> float | None:
        if self.timeout is None or not busy:
            return None
        now = time.monotonic()
        return max(0.0, min(s.started + self.timeout - now for s in busy)) + 0.01

    def _lost(self, task: RunTask, why: str, queue: deque[RunTask]) -> Iterator[dict[str, Any]]:
        if task.attempt < self.max_attempts:
            queue.appendleft(replace(task, attempt=task.attempt + 1))
            return
        yield failure_record(task, "WorkerLost", f"{why}; gave up after {task.attempt} attempts")

    def close(self) -> None:
        for slot in self._slots:
            self._stop(slot, kill=slot.task is not None)
        self._slots = []


# --------------------------------------------------------------------------- dask


class DaskExecutor(Executor):
    """Runs on a Dask ``distributed`` cluster: ``address`` is ``tcp://host:port`` or
    ``"local"`` (a ``LocalCluster`` of ``workers`` single-threaded processes on
    loopback, closed with the executor)."""

    def __init__(
        self,
        address: str = "local",
        workers: int | None = None,
        *,
        stream: bool = False,
        connect_timeout: float = 15.0,
    ):
        try:
            from distributed import Client, LocalCluster
        except ImportError as e:  # pragma: no cover - dask is a declared extra
            raise RuntimeError("the Dask executor needs dask[distributed]: pip install 'ccbench[dask]'") from e
        self.address = address
        self.stream = stream
        self._cluster = None
        if address == "local":
            n = workers or default_workers()
            self._cluster = LocalCluster(
                n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address="127.0.0.1:0"
            )
            self._client = Client(self._cluster)
        else:
            try:
                self._client = Client(address, timeout=f"{connect_timeout}s")
            except OSError as e:
                raise ConnectionError(f"cannot reach the Dask scheduler at {address}: {e}") from None
        self.workers = len(self._client.scheduler_info().get("workers", {})) or (workers or 0)

    @property
    def client(self) -> Any:
        return self._client

    def describe(self) -> str:
        where = "LocalCluster" if self._cluster is not None else self.address
        return f"Dask ({where}, {self.workers} worker{'s' if self.workers != 1 else ''})"

    def run(self, tasks: Sequence[RunTask]) -> Iterator[dict[str, Any]]:
        from distributed import as_completed
        from distributed.client import FutureCancelledError
        from distributed.scheduler import KilledWorker

        if self.stream:
            tasks = [replace(t, stream=True) for t in tasks]
        by_key = {f"ccbench-run-{t.run_id}": t for t in tasks}
        futures = [self._client.submit(execute, t, key=k, pure=False) for k, t in by_key.items()]
        try:
            for future in as_completed(futures):
                task = by_key[future.key]
                try:
                    yield future.result()
                except KilledWorker as e:
                    yield failure_record(task, "WorkerLost", f"Dask workers died running this run: {e}")
                except FutureCancelledError as e:
                    yield failure_record(task, "Cancelled", f"the run was cancelled: {e}")
                except Exception as e:  # noqa: BLE001 - anything the cluster reports is a failed run
                    yield failure_record(task, type(e).__name__, str(e))
                finally:
                    future.release()
        finally:
            for f in futures:
                f.cancel()

    def close(self) -> None:
        self._client.close()
        if self._cluster is not None:
            self._cluster.close()
