"""Running a sweep: plan, skip what is complete, execute the rest, record everything.

:func:`run_sweep` (``ccbench.sweep`` in Python, ``ccbench sweep`` on the command line)

1. expands the sweep spec into its plan (:func:`.plan.expand`);
2. takes the directory's lock, refuses a directory whose runs come from another
   engine version, and removes what interrupted writes left behind;
3. skips runs already complete (a run is complete iff ``runs/<id>/manifest.json`` says
   so) and runs recorded as failed unless ``retry_failed``; a ``runs/<id>`` that is
   not a complete run (damaged since) is recorded as failed, never overwritten;
4. records each invalid combination as failed without running it;
5. runs the rest on the executor, writing ``failed/<id>.json`` for each failure and
   rewriting ``index.parquet`` every few seconds and at the end.

Interrupting it (Ctrl-C, SIGKILL, a crash) loses no complete run; running it again
resumes.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .executors import DaskExecutor, Executor, LocalExecutor
from .plan import SweepPlan, SweepSpec, expand
from .progress import SweepProgress
from .store import (
    SWEEP_FORMAT_VERSION,
    SweepLayout,
    failure_row,
    read_json,
    read_manifest,
    row_from_manifest,
    write_index,
    write_json,
)
from .worker import RunTask, failure_record, write_streamed_run

__all__ = ["EngineChanged", "SweepBusy", "SweepReport", "run_sweep"]

#: Rewrite the index at most this often while a sweep runs (seconds).
INDEX_INTERVAL_S = 5.0


class EngineChanged(ValueError):
    """The directory holds runs of another engine version; they are never mixed."""


class SweepBusy(RuntimeError):
    """Another sweep process holds the directory's lock."""


@dataclass
class SweepReport:
    """What a sweep did. ``failed`` lists the failure records (``run_id``,
    ``error_type``, ``error``, ...); ``ok`` is true when every planned run is complete."""

    out_dir: Path
    name: str
    planned: int
    complete: int
    failed: list[dict[str, Any]] = field(default_factory=list)
    skipped: int = 0  # complete before this invocation
    ran: int = 0  # executed by this invocation (complete or failed)
    dropped: int = 0  # combinations removed by filters/exclude
    wall_time_s: float = 0.0
    executor: str = ""
    dry_run: bool = False
    plan: SweepPlan | None = None
    pending: int = 0

    @property
    def ok(self) -> bool:
        return not self.failed and self.complete == self.planned


def _plan_meta(plan: SweepPlan) -> list[dict[str, Any]]:
    return [
        {
            "plan_index": r.index,
            "run_id": r.run_id,
            "params": r.params,
            "repetition": r.repetition,
            "seed": r.seed,
            "est_packets": r.est_packets,
            "est_cpu_s": r.est_cpu_s,
            "error": r.error,
        }
        for r in plan.runs
    ]


def _check_engine(layout: SweepLayout, version: str) -> None:
    meta = read_json(layout.sweep_json)
    if meta is None:
        return
    old = meta.get("engine_version")
    if old == version:
        return
    complete = (
        sum(1 for d in layout.runs.iterdir() if d.is_dir() and (d / "manifest.json").is_file())
        if layout.runs.is_dir()
        else 0
    )
    if complete == 0:
        return
    raise EngineChanged(
        f"{layout.root} holds {complete} run(s) computed with engine {old}, but this ccbench has engine {version}. "
        "Runs of different engine versions are never mixed: sweep into a new directory "
        "(or move the old one aside) to recompute them with this engine"
    )


class _Lock:
    """An exclusive ``flock`` on ``DIR/.lock`` for the sweep's lifetime (released by
    the kernel if the process dies)."""

    def __init__(self, path: Path):
        self.path = path
        self.fd: int | None = None

    def __enter__(self) -> _Lock:
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self.fd)
            self.fd = None
            raise SweepBusy(f"another sweep is running in {self.path.parent} (it holds {self.path})") from None
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _make_executor(
    workers: int | None, dask: str | None, timeout: float | None, max_attempts: int, stream: bool
) -> Executor:
    if dask is not None:
        return DaskExecutor(dask, workers, stream=stream)
    return LocalExecutor(workers, timeout=timeout, max_attempts=max_attempts)


def run_sweep(
    spec: SweepSpec | str | os.PathLike[str] | Mapping[str, Any],
    out_dir: str | os.PathLike[str],
    *,
    workers: int | None = None,
    dask: str | None = None,
    executor: Executor | None = None,
    dry_run: bool = False,
    retry_failed: bool = False,
    timeout: float | None = None,
    max_attempts: int = 3,
    stream: bool = False,
    progress: bool = True,
    force: bool = False,
    only: Sequence[str] = (),
) -> SweepReport:
    """Run a sweep into ``out_dir`` (see the module docstring); returns a
    :class:`SweepReport`. ``workers``: local processes (default: one per core) or
    LocalCluster workers; ``dask``: ``"local"`` or a scheduler address; ``executor``:
    an executor object instead. ``dry_run`` plans and reports without running.
    ``timeout`` (seconds, local executor) stops a run that takes longer;
    ``max_attempts`` bounds the retries of a run whose worker dies. ``force`` runs
    what the pre-flight check (:mod:`ccbench.preflight`) would refuse only for its
    estimated cost; a run it refuses is recorded as failed (``PreflightError``).
    ``only``: filter expressions over the sweep's parameters that run a part of it
    (the index then lists that part; the runs keep the ids they have in the whole).

    Raises :class:`~.plan.SweepSpecError` for a bad sweep spec, :class:`EngineChanged`
    and :class:`SweepBusy` as described; a failing run is never an exception.
    """
    t0 = time.monotonic()
    plan = expand(spec if isinstance(spec, SweepSpec) else _load(spec), only=only)
    sweep = plan.spec
    layout = SweepLayout(out_dir)
    report = SweepReport(layout.root, sweep.name, len(plan.runs), 0, dropped=plan.dropped, dry_run=dry_run, plan=plan)
    columns = sweep.columns()

    if dry_run:
        state = _state(layout, plan, retry_failed) if layout.root.is_dir() else {}
        report.complete = sum(1 for s in state.values() if s == "complete")
        report.skipped = report.complete
        report.failed = [{"run_id": r.run_id, "error": r.error} for r in plan.invalid]
        report.pending = report.planned - report.complete
        return report

    layout.root.mkdir(parents=True, exist_ok=True)
    with _Lock(layout.lock):
        _check_engine(layout, plan.engine_version)
        layout.clean_temporaries()
        old = read_json(layout.sweep_json) or {}
        write_json(
            layout.sweep_json,
            {
                "format_version": SWEEP_FORMAT_VERSION,
                "name": sweep.name,
                "engine_version": plan.engine_version,
                "created_at": old.get("created_at") or datetime.now(timezone.utc).isoformat(),
                "updated_at": datetime.now(timezone.utc).isoformat(),
                "spec": sweep.to_dict(),
                "source": sweep.source,
                "columns": columns,
                "sweep_seed": sweep.seed,
                "plan": _plan_meta(plan),
            },
        )
        rows: dict[str, dict[str, Any]] = {}
        todo: list[RunTask] = []
        for run in plan.runs:
            row = _existing_row(layout, run.run_id, retry_failed)
            if row is not None and row["status"] == "complete":
                report.skipped += 1
            elif run.experiment is None:
                task = _task(run, layout, sweep.name, plan.engine_version)
                row = failure_record(task, "SpecError", run.error or "invalid combination")
                write_json(layout.failure(run.run_id), row)
            elif row is None and os.path.lexists(layout.run_dir(run.run_id)):
                # Runs are renamed into place complete, so this one was damaged since
                # (or is not ours): never overwrite it, say what to do.
                task = _task(run, layout, sweep.name, plan.engine_version)
                row = failure_record(
                    task, "DamagedRun",
                    f"{layout.run_dir(run.run_id)} exists but is not a complete run (its manifest is missing or "
                    "damaged); delete that directory and run the sweep again to recompute this run",
                )  # fmt: skip
                write_json(layout.failure(run.run_id), row)
            elif row is None:
                todo.append(_task(run, layout, sweep.name, plan.engine_version, force=force))
            rows[run.run_id] = _pending_row(run) if row is None else row
            rows[run.run_id]["plan_index"] = run.index
            rows[run.run_id]["est_packets"] = run.est_packets
            rows[run.run_id]["est_cpu_s"] = run.est_cpu_s
        write_index(layout, rows.values(), columns)

        exe = executor
        if workers is None and dask is None and any(_backend(r) == "linux" for r in plan.runs):
            # Kernel runs measure real time on this machine: running them side by side
            # would make them compete for the CPU and the network stack.
            workers = 1
        if todo and exe is None:
            exe = _make_executor(workers, dask, timeout, max_attempts, stream)
        report.executor = exe.describe() if exe is not None else ""
        last_index = time.monotonic()
        try:
            with SweepProgress(len(todo), name=sweep.name, enabled=progress) as bar:
                if todo and exe is not None:
                    results = exe.run(todo)
                    try:
                        for record in results:
                            record = _store(layout, record)
                            rows[record["run_id"]].update(record)
                            report.ran += 1
                            bar.update(record)
                            if time.monotonic() - last_index >= INDEX_INTERVAL_S:
                                write_index(layout, rows.values(), columns)
                                last_index = time.monotonic()
                    finally:
                        results.close()  # type: ignore[attr-defined]
        finally:
            if exe is not None and executor is None:
                exe.close()
            write_index(layout, rows.values(), columns)
            # Again at the end: workers of a killed earlier try may only now have died.
            layout.clean_temporaries()
    report.complete = sum(1 for r in rows.values() if r.get("status") == "complete")
    report.failed = [r for r in rows.values() if r.get("status") == "failed"]
    report.pending = sum(1 for r in rows.values() if r.get("status") == "pending")
    report.wall_time_s = time.monotonic() - t0
    return report


def _backend(run: Any) -> str:
    return str(getattr(run.experiment.experiment, "backend", "sim")) if run.experiment is not None else "sim"


def _load(spec: str | os.PathLike[str] | Mapping[str, Any]) -> SweepSpec:
    from .plan import load_sweep

    return load_sweep(spec if isinstance(spec, Mapping) else Path(spec))


def _task(run: Any, layout: SweepLayout, name: str, engine_version: str, *, force: bool = False) -> RunTask:
    return RunTask(
        run_id=run.run_id,
        spec=run.experiment.to_dict() if run.experiment is not None else {},
        out_root=str(layout.root.resolve()),
        name=name,
        params=run.params,
        repetition=run.repetition,
        seed=run.seed,
        engine_version=engine_version,
        plan_index=run.index,
        extra={"force": force},
    )


def _pending_row(run: Any) -> dict[str, Any]:
    return {
        "run_id": run.run_id,
        "plan_index": run.index,
        "status": "pending",
        "repetition": run.repetition,
        "seed": run.seed,
        "params": run.params,
    }


def _existing_row(layout: SweepLayout, run_id: str, retry_failed: bool) -> dict[str, Any] | None:
    """The index row of a run already in the directory: complete, or failed (unless
    its failure is to be retried); ``None`` if it is to be run."""
    manifest = read_manifest(layout.run_dir(run_id))
    if manifest is not None and manifest.get("status") == "complete":
        return row_from_manifest(manifest)
    failure = read_json(layout.failure(run_id))
    if failure is not None and not retry_failed:
        return failure_row(failure)
    return None


def _state(layout: SweepLayout, plan: SweepPlan, retry_failed: bool) -> dict[str, str]:
    out = {}
    for run in plan.runs:
        row = _existing_row(layout, run.run_id, retry_failed)
        out[run.run_id] = row["status"] if row is not None else "pending"
    return out


def _store(layout: SweepLayout, record: dict[str, Any]) -> dict[str, Any]:
    """Persist what a worker returned: streamed files, a failure record; clear a
    stale failure record when the run is now complete."""
    files = record.pop("files", None)
    if files is not None:
        write_streamed_run(layout.root, record["run_id"], files)
    if record.get("status") == "complete":
        layout.failure(record["run_id"]).unlink(missing_ok=True)
        return record
    write_json(layout.failure(record["run_id"]), record)
    return failure_row(record)
