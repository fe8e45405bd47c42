"""Results of one run: Arrow tables plus a manifest, and their on-disk format.

A run directory (format described column by column in ``docs/results-format.md``)::

    runs/quickstart/
      manifest.json       format_version, resolved spec and engine config, seed,
                          versions, host, timing, status, engine stats
      flows.parquet       one row per flow
      flow_ts.parquet     per-flow samples every sample_interval
      queue_ts.parquet    per-queue samples
      events.parquet      drops, cwnd reductions, RTOs, flow starts/completions, ...

:func:`save` is atomic: everything is written into a hidden temporary directory beside
the target, flushed to disk, and only then renamed into place, so a crash never
leaves a directory that looks like a complete run. :func:`load` accepts only a
directory whose manifest says ``"status": "complete"``.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

__all__ = [
    "COLUMNS",
    "FORMAT_VERSION",
    "TABLES",
    "ResultsError",
    "RunResult",
    "is_complete",
    "load",
    "save",
    "tables_from_engine",
]

#: Version of the on-disk format; bumped on any incompatible change.
FORMAT_VERSION = 1
#: The tables of a run and their columns, in the engine's order (each documented with
#: its unit in docs/results-format.md).
COLUMNS: dict[str, tuple[str, ...]] = {
    "flows": (
        "flow_id", "sender", "sender_name", "group", "cca", "start_ns", "stop_ns", "size_bytes",
        "base_rtt_ns", "mss", "delivered_bytes", "delivered_bytes_at_warmup", "completed", "fct_ns",
        "end_ns", "segs_sent", "segs_retrans", "segs_lost", "segs_delivered", "cwnd_reductions",
        "rtos", "undos", "min_rtt_ns", "srtt_ns",
    ),
    "flow_ts": (
        "time_ns", "flow_id", "delivered_bytes", "cwnd_pkts", "ssthresh_pkts", "srtt_ns", "min_rtt_ns",
        "pacing_rate_bps", "inflight_pkts", "inflight_bytes", "retrans_total", "lost_total", "ca_state",
        "cc_state", "cc_bw_bps", "cc_min_rtt_ns", "cc_pacing_gain", "cc_cwnd_gain", "cc_inflight_hi_pkts",
        "cc_inflight_lo_pkts", "cc_bw_lo_bps",
    ),
    "queue_ts": (
        "time_ns", "link", "backlog_bytes", "backlog_pkts", "enqueued_pkts", "dequeued_pkts",
        "dequeued_bytes", "dropped_pkts", "ecn_marked_pkts",
    ),
    "events": ("time_ns", "kind", "flow_id", "link", "reason", "value", "value2"),
}  # fmt: skip
#: The tables of a run, in the order they are written.
TABLES = tuple(COLUMNS)
MANIFEST = "manifest.json"


class ResultsError(ValueError):
    """A results directory is missing, incomplete or of an unknown format."""


def _column(name: str, col: Any) -> pa.Array:
    """One engine column as an Arrow array: a NumPy array, or a dictionary-encoded
    string column given as ``(codes: uint32 array, values: list[str])``."""
    if isinstance(col, tuple):
        codes, values = col
        indices = pa.array(np.asarray(codes, dtype=np.int32), type=pa.int32())
        return pa.DictionaryArray.from_arrays(indices, pa.array(list(values), type=pa.string()))
    arr = np.asarray(col)
    if arr.dtype == object:
        raise ResultsError(f"column {name!r}: unexpected object column from the engine")
    return pa.array(arr)


def tables_from_engine(raw_tables: Mapping[str, Mapping[str, Any]]) -> dict[str, pa.Table]:
    """Convert the binding's ``{"tables": {...}}`` part into Arrow tables (columns in
    the engine's order, strings dictionary-encoded)."""
    out: dict[str, pa.Table] = {}
    for tname, cols in raw_tables.items():
        names = list(cols)
        out[tname] = pa.table([_column(n, cols[n]) for n in names], names=names)
    return out


@dataclass
class RunResult:
    """The tables and manifest of one run.

    ``tables`` maps a table name to a ``pyarrow.Table``; ``.flows``, ``.flow_ts``,
    ``.queue_ts`` and ``.events`` give them as pandas DataFrames (strings as
    categoricals). ``manifest`` is the dict written to ``manifest.json``.
    """

    tables: dict[str, pa.Table]
    manifest: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None

    def table(self, name: str) -> pd.DataFrame:
        if name not in self.tables:
            raise KeyError(f"no table {name!r}; tables: {', '.join(self.tables)}")
        return self.tables[name].to_pandas()

    @property
    def flows(self) -> pd.DataFrame:
        return self.table("flows")

    @property
    def flow_ts(self) -> pd.DataFrame:
        return self.table("flow_ts")

    @property
    def queue_ts(self) -> pd.DataFrame:
        return self.table("queue_ts")

    @property
    def events(self) -> pd.DataFrame:
        return self.table("events")

    @property
    def engine_config(self) -> dict[str, Any]:
        return dict(self.manifest.get("engine_config", {}))

    @property
    def stats(self) -> dict[str, int]:
        return dict(self.manifest.get("stats", {}))

    def summary(self) -> dict[str, Any]:
        """The headline metrics of the run (see :func:`ccbench.metrics.summary`)."""
        from .metrics import summary

        return summary(self)


# --------------------------------------------------------------------------- writing


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_file(path: Path, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _write_parquet(table: pa.Table, path: Path) -> None:
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd")
    _write_file(path, sink.getvalue().to_pybytes())


def save(result: RunResult, out_dir: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
    """Write ``result`` to ``out_dir`` atomically and return the directory.

    Files go into ``.<name>.tmp-<random>`` beside the target and are fsynced; the
    manifest is written last; then the directory is renamed into place. An existing
    target is an error unless ``overwrite`` is set, in which case it is replaced
    (moved aside first, removed after the new run is in place).
    """
    target = Path(out_dir)
    parent = target.parent
    parent.mkdir(parents=True, exist_ok=True)
    if target.exists() and not overwrite:
        raise FileExistsError(f"{target} already exists; choose another directory or overwrite it")
    tmp = parent / f".{target.name}.tmp-{uuid.uuid4().hex[:12]}"
    tmp.mkdir()
    try:
        for name, table in result.tables.items():
            _write_parquet(table, tmp / f"{name}.parquet")
        manifest = dict(result.manifest)
        manifest.setdefault("format_version", FORMAT_VERSION)
        manifest["tables"] = {name: f"{name}.parquet" for name in result.tables}
        manifest["status"] = "complete"
        _write_file(tmp / MANIFEST, (json.dumps(manifest, indent=2, sort_keys=True, default=str) + "\n").encode())
        _fsync_dir(tmp)
        old: Path | None = None
        if target.exists():
            old = parent / f".{target.name}.old-{uuid.uuid4().hex[:12]}"
            os.rename(target, old)
        os.rename(tmp, target)
        _fsync_dir(parent)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    result.manifest = manifest
    result.path = target
    return target


# --------------------------------------------------------------------------- reading


def _read_manifest(path: Path) -> dict[str, Any]:
    mpath = path / MANIFEST
    if not path.is_dir():
        raise ResultsError(f"{path} is not a results directory")
    if not mpath.is_file():
        raise ResultsError(f"{path} has no {MANIFEST}: it is not a complete run")
    try:
        manifest = json.loads(mpath.read_text())
    except json.JSONDecodeError as e:
        raise ResultsError(f"{mpath} is not valid JSON ({e}): the run is damaged") from None
    if not isinstance(manifest, dict):
        raise ResultsError(f"{mpath} is not a JSON object")
    return manifest


def is_complete(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` holds a complete run (its manifest says so)."""
    try:
        return _read_manifest(Path(path)).get("status") == "complete"
    except ResultsError:
        return False


def load(path: str | os.PathLike[str]) -> RunResult:
    """Load a run directory written by :func:`save`."""
    p = Path(path)
    manifest = _read_manifest(p)
    if manifest.get("status") != "complete":
        raise ResultsError(f"{p}: status is {manifest.get('status')!r}, not 'complete'")
    version = manifest.get("format_version")
    if version != FORMAT_VERSION:
        raise ResultsError(f"{p}: format_version {version!r} is not supported (this ccbench reads {FORMAT_VERSION})")
    tables = {name: pq.read_table(p / fname) for name, fname in manifest.get("tables", {}).items()}
    return RunResult(tables=tables, manifest=manifest, path=p)
