"""The on-disk layout of a sweep and its index (``docs/results-format.md``, "Sweeps")::

    DIR/
      sweep.json           format_version, name, engine_version, the sweep spec, the plan
      index.parquet        one row per planned run: id, status, parameters, timing, metrics
      runs/<run_id>/       one complete run each (the single-run format; its manifest
                           has a "sweep" section with the parameters and headline metrics)
      failed/<run_id>.json why a run failed (error type, message, traceback, attempts)

Every file is written atomically (temporary name, fsync, rename), so a sweep killed
at any moment leaves only complete runs, and the index can always be rebuilt from
``runs/`` and ``failed/`` (:func:`rebuild_index`).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from .. import rundir
from ..results import MANIFEST, _write_file, is_complete
from ..rundir import _fsync_dir, temp_sibling

__all__ = [
    "INDEX",
    "METRIC_COLUMNS",
    "RESERVED_COLUMNS",
    "SWEEP_FORMAT_VERSION",
    "SWEEP_JSON",
    "SweepLayout",
    "failure_row",
    "read_json",
    "row_from_manifest",
    "write_index",
    "write_json",
]

SWEEP_FORMAT_VERSION = 1
SWEEP_JSON = "sweep.json"
INDEX = "index.parquet"
#: Headline metrics in the index (names of :func:`ccbench.metrics.summary` values).
METRIC_COLUMNS = (
    "goodput_bps", "utilization", "jain", "jain_senders", "retransmissions", "retransmission_pct",
    "drops", "drop_pct", "queue_mean_pkts", "queue_std_pkts", "queue_norm_mean",
)  # fmt: skip
#: Fixed columns of the index, before and after the parameter columns.
_LEAD = ("run_id", "plan_index", "status", "repetition", "seed")
_TAIL_TYPES: dict[str, pa.DataType] = {
    "name": pa.string(),
    "engine_version": pa.string(),
    "started_at": pa.string(),
    "wall_time_s": pa.float64(),
    "engine_cpu_s": pa.float64(),
    "attempts": pa.int64(),
    "worker": pa.string(),
    "error_type": pa.string(),
    "error": pa.string(),
    "path": pa.string(),
    "est_packets": pa.int64(),
    "est_cpu_s": pa.float64(),
    "sim_packets": pa.int64(),
    "duration_s": pa.float64(),
    "rate_bps": pa.int64(),
    "buffer_bytes": pa.int64(),
    "buffer_packets": pa.int64(),
    "bdp_bytes": pa.int64(),
    "num_flows": pa.int64(),
    "ccas": pa.string(),
    **{m: (pa.int64() if m in ("retransmissions", "drops") else pa.float64()) for m in METRIC_COLUMNS},
}


#: Names an axis or variable may not take: the index's own columns, and ``rep``
#: (the repetition inside expressions).
RESERVED_COLUMNS = frozenset({*_LEAD, *_TAIL_TYPES, "rep"})


class SweepLayout:
    """Paths inside a sweep directory."""

    def __init__(self, root: str | os.PathLike[str]):
        self.root = Path(root)
        self.sweep_json = self.root / SWEEP_JSON
        self.index = self.root / INDEX
        self.runs = self.root / "runs"
        self.failed = self.root / "failed"
        self.lock = self.root / ".lock"

    def run_dir(self, run_id: str) -> Path:
        return self.runs / run_id

    def failure(self, run_id: str) -> Path:
        return self.failed / f"{run_id}.json"

    def is_sweep(self) -> bool:
        return self.sweep_json.is_file()

    def is_complete(self, run_id: str) -> bool:
        return is_complete(self.run_dir(run_id))

    def clean_temporaries(self) -> int:
        """Remove what interrupted writes of dead processes left behind: hidden
        temporary siblings ``.<name>.tmp-<host>-<pid>-<random>`` of runs (with
        :mod:`ccbench.rundir`'s rules), of ``index.parquet`` and of failure records.
        Returns how many."""
        n = 0
        for parent in (self.root, self.runs, self.failed):
            if not parent.is_dir():
                continue
            for entry in list(parent.iterdir()):
                m = rundir._SIBLING.match(entry.name)
                if m is None:
                    continue
                target = parent / m["name"]
                if entry.is_dir():
                    rundir.recover(target)
                    n += len(rundir.clean_stale_siblings(target))
                elif m["host"] == rundir._HOST and not rundir._pid_alive(
                    int(m["pid"]), rundir._created_ns(entry)
                ):
                    entry.unlink(missing_ok=True)
                    n += 1
        return n


def write_json(path: Path, data: Any) -> None:
    """Write JSON atomically: a hidden temporary file, fsync, rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_sibling(path)
    try:
        _write_file(tmp, (json.dumps(data, indent=2, sort_keys=True, default=str) + "\n").encode())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def read_json(path: Path) -> dict[str, Any] | None:
    """A JSON object from ``path``, or ``None`` if it is missing or damaged."""
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):  # ValueError: bad JSON or not UTF-8
        return None
    return data if isinstance(data, dict) else None


# --------------------------------------------------------------------------- index rows


def _finite(x: Any) -> float | None:
    try:
        f = float(x)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def headline_metrics(summary: Mapping[str, Any]) -> dict[str, Any]:
    """The index's metric columns from :func:`ccbench.metrics.summary`."""
    queue = summary.get("queue") or {}
    return {
        "goodput_bps": _finite(summary.get("goodput_bps")),
        "utilization": _finite(summary.get("utilization")),
        "jain": _finite(summary.get("jain")),
        "jain_senders": _finite(summary.get("jain_senders")),
        "retransmissions": int(summary.get("retransmissions", 0)),
        "retransmission_pct": _finite(summary.get("retransmission_pct")),
        "drops": int(summary.get("drops", 0)),
        "drop_pct": _finite(summary.get("drop_pct")),
        "queue_mean_pkts": _finite(queue.get("mean_pkts")),
        "queue_std_pkts": _finite(queue.get("std_pkts")),
        "queue_norm_mean": _finite(queue.get("norm_mean")),
    }


def row_from_manifest(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """The index row of a complete run, from its manifest alone."""
    sweep = manifest.get("sweep") or {}
    derived = manifest.get("derived") or {}
    buf = derived.get("buffer") or {}
    cfg = manifest.get("engine_config") or {}
    stats = manifest.get("stats") or {}
    flows = cfg.get("flows") or []
    return {
        "run_id": sweep.get("run_id"),
        "status": "complete",
        "repetition": sweep.get("repetition"),
        "seed": manifest.get("seed"),
        "params": dict(sweep.get("params") or {}),
        "name": manifest.get("name"),
        "engine_version": (manifest.get("versions") or {}).get("engine"),
        "started_at": manifest.get("started_at"),
        "wall_time_s": manifest.get("wall_time_s"),
        "engine_cpu_s": manifest.get("engine_cpu_s"),
        "attempts": sweep.get("attempts", 1),
        "worker": sweep.get("worker"),
        "error_type": None,
        "error": None,
        "path": f"runs/{sweep.get('run_id')}",
        "sim_packets": int(stats.get("data_pkts_sent", 0)) + int(stats.get("ack_pkts_sent", 0)),
        "duration_s": cfg.get("duration_ns", 0) / 1e9 if cfg else None,
        "rate_bps": (cfg.get("topology") or {}).get("bottleneck", {}).get("rate_bps"),
        "buffer_bytes": buf.get("bytes"),
        "buffer_packets": buf.get("packets"),
        "bdp_bytes": buf.get("bdp_bytes"),
        "num_flows": derived.get("num_flows"),
        "ccas": ",".join(sorted({str(f.get("cca")) for f in flows})),
        **(sweep.get("metrics") or {}),
    }


def failure_row(record: Mapping[str, Any]) -> dict[str, Any]:
    """The index row of a failed run, from its ``failed/<id>.json`` record."""
    return {
        "run_id": record.get("run_id"),
        "status": "failed",
        "repetition": record.get("repetition"),
        "seed": record.get("seed"),
        "params": dict(record.get("params") or {}),
        "name": record.get("name"),
        "engine_version": record.get("engine_version"),
        "started_at": record.get("started_at"),
        "wall_time_s": record.get("wall_time_s"),
        "attempts": record.get("attempts"),
        "worker": record.get("worker"),
        "error_type": record.get("error_type"),
        "error": record.get("error"),
        "path": f"failed/{record.get('run_id')}.json",
    }


def _param_array(values: list[Any]) -> pa.Array:
    """One parameter column: integers, floats, booleans or strings when all values
    are of that kind (missing values are null); anything mixed becomes text (JSON for
    tables and arrays)."""
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return pa.array(values, type=pa.bool_())
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return pa.array(values, type=pa.int64())
    if present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return pa.array([None if v is None else float(v) for v in values], type=pa.float64())

    def text(v: Any) -> str | None:
        if v is None or isinstance(v, str):
            return v
        return json.dumps(v, sort_keys=True)

    return pa.array([text(v) for v in values], type=pa.string())


def index_table(rows: Iterable[Mapping[str, Any]], param_columns: list[str]) -> pa.Table:
    """Build the index table (schema in ``docs/results-format.md``)."""
    rows = list(rows)
    cols: dict[str, pa.Array] = {
        "run_id": pa.array([r.get("run_id") for r in rows], type=pa.string()),
        "plan_index": pa.array([r.get("plan_index") for r in rows], type=pa.int64()),
        "status": pa.array([r.get("status") for r in rows], type=pa.string()),
        "repetition": pa.array([r.get("repetition") for r in rows], type=pa.int64()),
        "seed": pa.array([r.get("seed") for r in rows], type=pa.int64()),
    }
    for p in param_columns:
        cols[p] = _param_array([(r.get("params") or {}).get(p) for r in rows])
    for name, typ in _TAIL_TYPES.items():
        cols[name] = pa.array([r.get(name) for r in rows], type=typ)
    return pa.table(cols)


def write_index(layout: SweepLayout, rows: Iterable[Mapping[str, Any]], param_columns: list[str]) -> Path:
    """Write ``index.parquet`` atomically (temporary file, fsync, rename)."""
    table = index_table(rows, param_columns)
    tmp = temp_sibling(layout.index)
    try:
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink, compression="zstd")
        _write_file(tmp, sink.getvalue().to_pybytes())
        os.replace(tmp, layout.index)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(layout.root)
    return layout.index


def read_manifest(run_dir: Path) -> dict[str, Any] | None:
    return read_json(run_dir / MANIFEST)
