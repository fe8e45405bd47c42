"""What runs on a worker: one sweep run, from its resolved spec to a complete run
directory, returning a small record (the run's index row, or its failure).

:func:`execute` never raises for a failing run: the engine error, bad spec or
exception is returned in the record, so one bad run cannot stop the sweep. It is a
plain picklable function of a picklable :class:`RunTask`, so the local process pool
and Dask workers call the same code.
"""

from __future__ import annotations

import os
import socket
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

__all__ = ["RunTask", "execute", "failure_record", "write_streamed_run"]


@dataclass(frozen=True)
class RunTask:
    """Everything a worker needs for one run."""

    run_id: str
    spec: dict[str, Any]  # the experiment, seed included (Experiment.to_dict())
    out_root: str  # the sweep directory
    name: str
    params: dict[str, Any]
    repetition: int
    seed: int
    engine_version: str
    plan_index: int
    attempt: int = 1
    #: Return the run's files instead of writing them (workers without the directory).
    stream: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


def _worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def failure_record(
    task: RunTask, error_type: str, error: str, *, tb: str = "", wall: float | None = None
) -> dict[str, Any]:
    return {
        "run_id": task.run_id,
        "plan_index": task.plan_index,
        "status": "failed",
        "repetition": task.repetition,
        "seed": task.seed,
        "params": task.params,
        "name": task.name,
        "engine_version": task.engine_version,
        "started_at": datetime.now(timezone.utc).isoformat(),
        "wall_time_s": wall,
        "attempts": task.attempt,
        "worker": _worker_name(),
        "error_type": error_type,
        "error": error,
        "traceback": tb,
    }


def execute(task: RunTask) -> dict[str, Any]:
    """Run one task and write (or, with ``task.stream``, return) its run directory.
    Returns the index row of the complete run or a failure record."""
    from .. import api, engine
    from .. import results as _results
    from .store import headline_metrics, read_manifest, row_from_manifest

    t0 = time.perf_counter()
    target = Path(task.out_root) / "runs" / task.run_id
    try:
        if not task.stream and _results.is_complete(target):
            # Computed already (e.g. by a worker presumed lost): identical by determinism.
            manifest = read_manifest(target) or {}
            row = row_from_manifest(manifest)
            row["plan_index"] = task.plan_index
            return row
        version = engine.engine_version()
        if version != task.engine_version:
            return failure_record(
                task,
                "EngineVersionMismatch",
                f"this worker ({_worker_name()}) has engine {version}, the sweep was planned with "
                f"{task.engine_version}; install the same ccbench on every worker",
            )
        warnings: list[str] = []

        def add_sweep_block(result: Any) -> None:
            # Before the run is saved, so its directory appears complete with them.
            result.manifest["sweep"] = {
                "name": task.name,
                "run_id": task.run_id,
                "params": task.params,
                "repetition": task.repetition,
                "attempts": task.attempt,
                "worker": _worker_name(),
                "metrics": headline_metrics(result.summary()),
                "warnings": warnings,  # the pre-flight check's (ccbench.preflight)
            }

        options: dict[str, Any] = {
            "force": bool(task.extra.get("force")),
            "on_warning": warnings.append,
            "before_save": add_sweep_block,
        }
        # Written straight into the run directory (or a temporary one to send back), so
        # the engine streams the growing tables there and memory does not grow with the
        # run's length (ccbench.runwriter).
        if task.stream:
            with tempfile.TemporaryDirectory(prefix="ccbench-run-") as tmp:
                path = Path(tmp) / task.run_id
                result = api.run(task.spec, path, **options)
                files = {p.name: p.read_bytes() for p in sorted(path.iterdir())}
            row = row_from_manifest(result.manifest)
            row["plan_index"] = task.plan_index
            row["files"] = files
            return row
        try:
            result = api.run(task.spec, target, **options)
            manifest = result.manifest
        except FileExistsError:
            if not _results.is_complete(target):
                raise
            manifest = read_manifest(target) or {}  # another worker completed it meanwhile
        row = row_from_manifest(manifest)
        row["plan_index"] = task.plan_index
        return row
    except Exception as e:  # noqa: BLE001 - isolation: every failure becomes a record
        return failure_record(
            task, type(e).__name__, str(e) or repr(e), tb=traceback.format_exc(), wall=time.perf_counter() - t0
        )


def write_streamed_run(out_root: Path, run_id: str, files: dict[str, bytes]) -> None:
    """Write a run returned by a streaming worker atomically into ``runs/<run_id>``."""
    from ..results import MANIFEST, _write_file
    from ..rundir import _fsync_dir, temp_sibling

    runs = out_root / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    target = runs / run_id
    if target.exists():
        return
    tmp = temp_sibling(target)
    tmp.mkdir()
    try:
        for name, data in files.items():
            if name != MANIFEST:
                _write_file(tmp / name, data)
        _write_file(tmp / MANIFEST, files[MANIFEST])  # last: it marks the run complete
        _fsync_dir(tmp)
        os.rename(tmp, target)
        _fsync_dir(runs)
    except BaseException:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
        raise
