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
the target, flushed to disk, and only then swapped into place, so a crash never
leaves a directory that looks like a complete run; what it may replace (an empty
directory, a previous run with ``overwrite``, nothing else) is decided by
:mod:`ccbench.rundir`. :func:`load` accepts only a directory whose manifest says
``"status": "complete"`` and raises :class:`ResultsError` for any damage.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import rundir
from .errors import ResultsError

if TYPE_CHECKING:  # numpy, pandas and pyarrow are imported when first needed (start-up time)
    import pandas as pd
    import pyarrow as pa

__all__ = [
    "COLUMNS",
    "FORMAT_VERSION",
    "OPTIONAL_COLUMNS",
    "REQUIRED_COLUMNS",
    "TABLES",
    "ResultsError",
    "RunResult",
    "Tables",
    "check_columns",
    "is_complete",
    "load",
    "prepare_target",
    "save",
    "tables_from_engine",
]

#: Version of the on-disk format; bumped on any incompatible change.
FORMAT_VERSION = 1
#: The tables of a run and their columns, in the engine's order (each documented with
#: its unit in docs/results-format.md). Kept here so results load without the compiled
#: engine; tests/test_result_schema.py checks it against ``_core.result_schema()``.
COLUMNS: dict[str, tuple[str, ...]] = {
    "flows": (
        "flow_id", "sender", "sender_name", "group", "cca", "start_ns", "stop_ns", "size_bytes",
        "base_rtt_ns", "mss", "delivered_bytes", "delivered_bytes_at_warmup", "completed", "fct_ns",
        "end_ns", "segs_sent", "segs_retrans", "segs_lost", "segs_delivered", "cwnd_reductions",
        "rtos", "undos", "app_limited_samples", "min_rtt_ns", "srtt_ns", "segs_sent_at_warmup",
        "segs_retrans_at_warmup", "segs_delivered_at_warmup", "dropped_pkts", "dropped_pkts_at_warmup",
        "ecn_marked_pkts", "ecn_marked_pkts_at_warmup", "setup_ns", "syn_retrans", "setup_failed",
    ),
    "flow_ts": (
        "time_ns", "flow_id", "delivered_bytes", "cwnd_pkts", "ssthresh_pkts", "srtt_ns", "min_rtt_ns",
        "pacing_rate_bps", "inflight_pkts", "inflight_bytes", "retrans_total", "lost_total", "ca_state",
        "cc_state", "cc_bw_bps", "cc_min_rtt_ns", "cc_pacing_gain", "cc_cwnd_gain", "cc_inflight_hi_pkts",
        "cc_inflight_lo_pkts", "cc_bw_lo_bps",
    ),
    "queue_ts": (
        "time_ns", "link", "backlog_bytes", "backlog_pkts", "enqueued_pkts", "dequeued_pkts",
        "dequeued_bytes", "dropped_pkts", "ecn_marked_pkts", "tail_drops", "aqm_drops", "random_drops",
        "sojourn_mean_ns", "sojourn_max_ns", "aqm_prob", "aqm_dropping", "aqm_avg_bytes",
    ),
    "events": ("time_ns", "kind", "flow_id", "link", "reason", "value", "value2"),
    "links": (
        "link", "rate_bps", "delay_ns", "tx_pkts", "tx_bytes", "enqueued_pkts", "dropped_pkts",
        "ecn_marked_pkts", "recorded", "enqueued_pkts_at_warmup", "dropped_pkts_at_warmup",
        "ecn_marked_pkts_at_warmup",
    ),
    "sojourn": ("time_ns", "link", "sojourn_ns"),
}  # fmt: skip
#: Columns a backend may leave out because it cannot measure them (a kernel run has no
#: ``cc_inflight_hi_pkts``, no count of undone reductions, no Linux ``ca_state`` from
#: ``ss``). Metrics use only the required columns, so they work on every backend; the
#: counters at the warm-up (``*_at_warmup``), which runs written before they existed
#: lack, are used when present and the summary says which window a figure covers.
OPTIONAL_COLUMNS: dict[str, tuple[str, ...]] = {
    "flows": (
        "segs_lost", "cwnd_reductions", "rtos", "undos", "app_limited_samples", "segs_sent_at_warmup",
        "segs_retrans_at_warmup", "segs_delivered_at_warmup", "dropped_pkts", "dropped_pkts_at_warmup",
        "ecn_marked_pkts", "ecn_marked_pkts_at_warmup", "setup_ns", "syn_retrans", "setup_failed",
    ),
    "flow_ts": (
        "ssthresh_pkts", "pacing_rate_bps", "inflight_pkts", "inflight_bytes", "lost_total", "ca_state",
        "cc_state", "cc_bw_bps", "cc_min_rtt_ns", "cc_pacing_gain", "cc_cwnd_gain", "cc_inflight_hi_pkts",
        "cc_inflight_lo_pkts", "cc_bw_lo_bps",
    ),
    "queue_ts": (
        "tail_drops", "aqm_drops", "random_drops", "sojourn_mean_ns", "sojourn_max_ns", "aqm_prob",
        "aqm_dropping", "aqm_avg_bytes",
    ),
    "events": (),
    "links": ("enqueued_pkts_at_warmup", "dropped_pkts_at_warmup", "ecn_marked_pkts_at_warmup"),
    "sojourn": (),
}  # fmt: skip
#: Tables a backend may leave out (the simulator writes them; a kernel run has no
#: per-packet sojourn times, and counters only for the queues it shapes).
OPTIONAL_TABLES = ("links", "sojourn")
#: Columns every backend writes.
REQUIRED_COLUMNS: dict[str, tuple[str, ...]] = {
    t: tuple(c for c in cols if c not in OPTIONAL_COLUMNS[t]) for t, cols in COLUMNS.items()
}
#: The tables of a run, in the order they are written.
TABLES = tuple(COLUMNS)
MANIFEST = "manifest.json"


def _column(name: str, col: Any) -> pa.Array:
    """One engine column as an Arrow array: a NumPy array, or a dictionary-encoded
    string column given as ``(codes: uint32 array, values: list[str])``."""
    import numpy as np
    import pyarrow as pa

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
    import pyarrow as pa

    out: dict[str, pa.Table] = {}
    for tname, cols in raw_tables.items():
        names = list(cols)
        out[tname] = pa.table([_column(n, cols[n]) for n in names], names=names)
    return out


class Tables(MutableMapping[str, "pa.Table"]):
    """A run's tables by name, in write order. A table given as the path of its Parquet
    file (one the run streamed to disk while it ran, :mod:`ccbench.runwriter`) is read
    from there when first used, so a run's largest tables are not held in memory by a
    caller who does not look at them."""

    def __init__(self, tables: Mapping[str, pa.Table | Path] | None = None) -> None:
        self._items: dict[str, pa.Table | Path] = dict(tables or {})

    def __getitem__(self, name: str) -> pa.Table:
        value = self._items[name]
        if isinstance(value, Path):
            import pyarrow.parquet as pq

            value = self._items[name] = pq.read_table(value)
        return value

    def __setitem__(self, name: str, table: pa.Table) -> None:
        self._items[name] = table

    def __delitem__(self, name: str) -> None:
        del self._items[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def relocate(self, old: Path, new: Path) -> None:
        """Tables not read yet whose files were in directory ``old`` are now in ``new``."""
        for name, value in self._items.items():
            if isinstance(value, Path) and value.parent == old:
                self._items[name] = new / value.name

    def path(self, name: str) -> Path | None:
        """The Parquet file of table ``name`` while it has not been read, else ``None``."""
        value = self._items[name]
        return value if isinstance(value, Path) else None

    def column_names(self, name: str) -> list[str]:
        """The columns of table ``name``, without reading a table that is still on disk."""
        value = self._items[name]
        if isinstance(value, Path):
            import pyarrow.parquet as pq

            return list(pq.read_schema(value).names)
        return list(value.column_names)

    def __repr__(self) -> str:
        state = {n: "on disk" if isinstance(v, Path) else f"{v.num_rows} rows" for n, v in self._items.items()}
        return f"Tables({state})"


def _column_names(tables: Mapping[str, pa.Table], name: str) -> list[str]:
    return tables.column_names(name) if isinstance(tables, Tables) else list(tables[name].column_names)


def check_columns(tables: Mapping[str, pa.Table]) -> None:
    """Raise :class:`ResultsError` unless every table is present with all its required
    columns and no column outside the format (a backend's contract)."""
    problems = []
    for tname in TABLES:
        if tname not in tables:
            if tname not in OPTIONAL_TABLES:
                problems.append(f"table {tname!r} is missing")
            continue
        names = set(_column_names(tables, tname))
        missing = [c for c in REQUIRED_COLUMNS[tname] if c not in names]
        unknown = sorted(names - set(COLUMNS[tname]))
        if missing:
            problems.append(f"{tname}: required columns missing: {', '.join(missing)}")
        if unknown:
            problems.append(f"{tname}: columns not in the format: {', '.join(unknown)}")
    if problems:
        raise ResultsError("results do not follow the format: " + "; ".join(problems))


def link_config(engine_config: Mapping[str, Any], name: str) -> dict[str, Any]:
    """The engine ``LinkConfig`` of the network link called ``name`` (a forward
    direction; ``NAME_rev`` gives its reverse, ``None`` there meaning the default) in
    any topology of an engine configuration; ``{}`` if there is none."""
    t = engine_config.get("topology", {})
    if t.get("kind", "dumbbell") == "dumbbell":
        duplex = [{"name": "bottleneck", "forward": t.get("bottleneck"), "reverse": t.get("reverse_bottleneck")}]
    else:
        duplex = t.get("hops") or [ln["link"] for ln in t.get("links", [])]
    for d in duplex:
        if d["name"] == name:
            return dict(d["forward"] or {})
        if f"{d['name']}_rev" == name:
            return dict(d["reverse"] or {})
    return {}


@dataclass
class RunResult:
    """The tables and manifest of one run.

    ``tables`` maps a table name to a ``pyarrow.Table`` (a :class:`Tables` when a
    run streamed some of them to disk: those are read when first used); ``.flows``,
    ``.flow_ts``, ``.queue_ts`` and ``.events`` give them as pandas DataFrames (strings
    as categoricals). ``manifest`` is the dict written to ``manifest.json``.
    """

    tables: MutableMapping[str, pa.Table]
    manifest: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None
    _spec_config: dict[str, Any] | None = field(default=None, init=False, repr=False, compare=False)

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
    def links(self) -> pd.DataFrame:
        """One row per link: configuration and byte counters at the end of the run."""
        return self.table("links")

    @property
    def sojourn(self) -> pd.DataFrame:
        """Sampled per-packet queueing delays of the recorded queues."""
        return self.table("sojourn")

    @property
    def engine_config(self) -> dict[str, Any]:
        """The engine configuration of the run's spec: as the simulator recorded it, or
        for a backend that records none (``linux``) resolved from the recorded spec, so
        that what plots and metrics read of it (duration, a link's rate, delay and queue)
        is the spec's on every backend."""
        cfg = self.manifest.get("engine_config")
        if cfg is None and "spec" in self.manifest:
            if self._spec_config is None:
                from .spec import load_spec

                self._spec_config = load_spec(self.manifest["spec"], ccas=None).resolve()
            cfg = self._spec_config
        return dict(cfg or {})

    def link_config(self, name: str | None = None) -> dict[str, Any]:
        """The engine configuration (``LinkConfig``: rate, delay, qdisc, rate schedule, ...)
        of network link ``name`` (default: the one summaries are about,
        ``derived.bottleneck.link``); ``{}`` when the run has no such link."""
        return link_config(self.engine_config, name or self.primary_link)

    @property
    def primary_link(self) -> str:
        """Name of the link summaries and plots are about by default: the dumbbell's
        ``bottleneck``, else a topology's slowest link (``derived.bottleneck.link``)."""
        return str(self.derived.get("bottleneck", {}).get("link", "bottleneck"))

    @property
    def derived(self) -> dict[str, Any]:
        """The manifest's ``derived`` block (measurement window, bottleneck rate and
        buffer, ...), rebuilt from the recorded spec for runs written before a key was
        added. Metrics read only this, the spec and the tables."""
        from .spec import load_spec

        derived = dict(self.manifest.get("derived", {}))
        if not {"window", "bottleneck"} <= derived.keys() and "spec" in self.manifest:
            derived = {**load_spec(self.manifest["spec"], ccas=None).derived(), **derived}
        return derived

    @property
    def stats(self) -> dict[str, int]:
        return dict(self.manifest.get("stats", {}))

    def summary(self) -> dict[str, Any]:
        """The headline metrics of the run (see :func:`ccbench.metrics.summary`)."""
        from .metrics import summary

        return summary(self)


# --------------------------------------------------------------------------- writing


def _write_file(path: Path, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _write_parquet(table: pa.Table, path: Path) -> None:
    """Write ``table`` straight into the file (no in-memory copy of the encoded file)
    and flush it to disk."""
    import pyarrow.parquet as pq

    with open(path, "wb") as f:
        pq.write_table(table, f, compression="zstd")
        f.flush()
        os.fsync(f.fileno())


def prepare_target(out_dir: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
    """Check, before any work, that ``out_dir`` may receive a run (see
    :mod:`ccbench.rundir`): repair a replacement a crash interrupted, remove stale
    temporary siblings of dead processes, and refuse symlinks, files and directories
    that are not runs. Returns the target as an absolute path (so that ``.`` has a
    name and a parent)."""
    target = Path(os.path.abspath(out_dir))
    rundir.recover(target)
    rundir.clean_stale_siblings(target)
    rundir.check_target(target, overwrite=overwrite)
    return target


def save(result: RunResult, out_dir: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
    """Write ``result`` to ``out_dir`` atomically and return the directory.

    ``out_dir`` may be absent or an empty directory; a previous run there is replaced
    only with ``overwrite``; anything else is refused (:mod:`ccbench.rundir`). Files go
    into a hidden sibling ``.<name>.tmp-...`` and are fsynced, the manifest last; then
    the directory is swapped into place atomically.
    """
    from .runwriter import RunWriter

    return RunWriter(out_dir, overwrite=overwrite).commit(result)


# --------------------------------------------------------------------------- reading

_TABLE_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
_MAX_MANIFEST_BYTES = 64 * 2**20


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _read_manifest(path: Path) -> dict[str, Any]:
    mpath = path / MANIFEST
    if not path.is_dir():
        hint = ""
        olds = [p for kind, p in rundir._stale_siblings(path) if kind == "old"] if not path.exists() else []
        if olds:
            hint = f" (an interrupted replacement left the previous run at {olds[0]}; writing a run there restores it)"
        raise ResultsError(f"{path} is not a results directory{hint}")
    if not mpath.is_file():
        raise ResultsError(f"{path} has no {MANIFEST}: it is not a complete run")
    try:
        if mpath.stat().st_size > _MAX_MANIFEST_BYTES:
            raise ResultsError(f"{mpath} is larger than {_MAX_MANIFEST_BYTES >> 20} MiB: it is not a ccbench manifest")
        manifest = json.loads(mpath.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        raise ResultsError(f"{mpath} is not valid JSON ({_short(str(e))}): the run is damaged") from None
    except OSError as e:
        raise ResultsError(f"cannot read {mpath}: {e.strerror or e}") from None
    if not isinstance(manifest, dict):
        raise ResultsError(f"{mpath} is not a JSON object")
    return manifest


def is_complete(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` holds a complete run (its manifest says so)."""
    try:
        return _read_manifest(Path(path)).get("status") == "complete"
    except ResultsError:
        return False


def _table_path(run: Path, name: Any, fname: Any) -> Path:
    """The file of table ``name``, confined to the run directory."""
    if not isinstance(name, str) or not _TABLE_NAME.match(name):
        raise ResultsError(f"{run}: manifest names a table {_short(name)}, which is not a table name")
    if (
        not isinstance(fname, str)
        or not fname
        or "/" in fname
        or "\\" in fname
        or fname in (".", "..")
        or "\0" in fname
    ):
        raise ResultsError(
            f"{run}: table {name!r} is stored at {_short(fname)}, outside the run directory; only plain file names inside it are read"
        )
    fpath = run / fname
    try:
        inside = fpath.resolve(strict=True).parent == run.resolve(strict=True)
    except (OSError, RuntimeError):
        raise ResultsError(f"{run}: table {name!r} ({_short(fname)}) is missing: the run is damaged") from None
    if not inside:
        raise ResultsError(f"{run}: table {name!r} ({_short(fname)}) links outside the run directory")
    if not fpath.is_file():
        raise ResultsError(f"{run}: table {name!r} ({_short(fname)}) is not a file")
    return fpath


def _read_table(run: Path, name: str, fpath: Path) -> pa.Table:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(fpath)
        names = table.column_names  # a damaged schema can hold undecodable names (UnicodeDecodeError)
    except (pa.ArrowException, OSError, ValueError) as e:
        raise ResultsError(
            f"{run}: table {name!r} ({fpath.name}) cannot be read ({_short(str(e), 160)}): the run is damaged"
        ) from None
    missing = [c for c in REQUIRED_COLUMNS.get(name, ()) if c not in names]
    if missing:
        raise ResultsError(
            f"{run}: table {name!r} ({fpath.name}) lacks column(s) {', '.join(missing)}: the file is damaged or not this table"
        )
    return table


def load(path: str | os.PathLike[str], *, allow_partial: bool = False) -> RunResult:
    """Load a run directory written by :func:`save`. Any damage (missing or unreadable
    files, wrong columns, table paths leaving the directory, an unknown format) raises
    :class:`ResultsError` naming it. A run saved by ``--save-partial`` (status
    ``"interrupted"``) is read only with ``allow_partial``."""
    p = Path(path)
    manifest = _read_manifest(p)
    status = manifest.get("status")
    if status != "complete" and not (allow_partial and status == "interrupted"):
        hint = (
            " (an interrupted run saved with --save-partial: load it with allow_partial=True)"
            if status == "interrupted"
            else ""
        )
        raise ResultsError(f"{p}: status is {_short(status)}, not 'complete'{hint}")
    version = manifest.get("format_version")
    if version != FORMAT_VERSION:
        raise ResultsError(
            f"{p}: format_version {_short(version)} is not supported (this ccbench reads {FORMAT_VERSION})"
        )
    entries = manifest.get("tables", {})
    if not isinstance(entries, dict):
        raise ResultsError(f"{p}: manifest 'tables' is {_short(entries)}, not a table of names to files")
    tables = {name: _read_table(p, name, _table_path(p, name, fname)) for name, fname in entries.items()}
    return RunResult(tables=tables, manifest=manifest, path=p)
