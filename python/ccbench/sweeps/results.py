"""Reading a sweep directory: the index and tidy tables across runs.

``ccbench.load(DIR)`` on a sweep directory returns a :class:`SweepResults`::

    sw = ccbench.load("runs/buffers")
    sw.runs                   # the index: one row per planned run (pandas)
    sw.flows                  # runs x flows: every complete run's flows table + its parameters
    sw.time_series("flow_ts", run_ids=[...])   # on demand, with run_id and parameters
    sw.run(run_id)            # one run as a RunResult

The index is a plain Parquet file, so DuckDB or polars query it without Python's help::

    duckdb -c "SELECT \"bottleneck.rate\", avg(jain) FROM 'runs/buffers/index.parquet' GROUP BY 1"

Damage (issue 17) raises :class:`~ccbench.results.ResultsError` and nothing else: an
unreadable index is rebuilt from the runs' manifests (it is only a summary of them);
run ids read from the index or ``sweep.json`` must be run ids (16 hex digits), so a
damaged file cannot point outside ``runs/``; a damaged table names its run.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from functools import cached_property
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ..results import TABLES, ResultsError, RunResult
from ..results import load as load_run
from .store import SWEEP_FORMAT_VERSION, SweepLayout, failure_row, read_json, read_manifest, row_from_manifest

__all__ = ["SweepResults", "load_sweep_results", "rebuild_index"]

#: What :func:`~.plan.run_id` makes: 16 hex digits of a SHA-256.
_RUN_ID = re.compile(r"[0-9a-f]{16}")
#: Columns every index has (``docs/results-format.md``); one without them is damaged.
_INDEX_KEYS = ("run_id", "status")


def checked_run_id(run_id: object, where: object) -> str:
    """``run_id`` if it is a run id, else :class:`ResultsError`: a damaged index or
    plan must not name a path outside ``runs/``."""
    if isinstance(run_id, str) and _RUN_ID.fullmatch(run_id):
        return run_id
    raise ResultsError(
        f"{where} names run {str(run_id)[:40]!r}, which is not a ccbench run id (16 hex digits): it is damaged"
    )


def rebuild_index(path: str | os.PathLike[str]) -> pa.Table:
    """Rebuild the index of a sweep directory from ``sweep.json``, ``runs/`` and
    ``failed/`` alone (what :func:`~.runner.run_sweep` keeps in ``index.parquet``).
    Raises :class:`ResultsError` when they are too damaged to say what the sweep holds."""
    from .store import index_table

    layout = SweepLayout(path)
    meta = read_json(layout.sweep_json) or {}
    rows = []
    try:
        for entry in meta.get("plan", []):
            rid = checked_run_id(entry["run_id"], layout.sweep_json)
            manifest = read_manifest(layout.run_dir(rid))
            failure = read_json(layout.failure(rid))
            if manifest is not None and manifest.get("status") == "complete":
                row = row_from_manifest(manifest)
            elif failure is not None:
                row = failure_row(failure)
            else:
                row = {"run_id": rid, "status": "pending", "params": entry.get("params"), "seed": entry.get("seed"),
                       "repetition": entry.get("repetition")}  # fmt: skip
            row["run_id"] = rid  # the plan's, whatever a damaged manifest says
            row["plan_index"] = entry.get("plan_index")
            row["est_packets"] = entry.get("est_packets")
            row["est_cpu_s"] = entry.get("est_cpu_s")
            rows.append(row)
        return index_table(rows, list(meta.get("columns", [])))
    except (KeyError, TypeError, ValueError, AttributeError, pa.ArrowException) as e:
        if isinstance(e, ResultsError):
            raise
        raise ResultsError(
            f"{layout.root}: cannot rebuild the sweep's index, its files are damaged ({e!r:.200})"
        ) from None


class SweepResults:
    """The results of a sweep directory (see the module docstring)."""

    def __init__(self, path: str | os.PathLike[str]):
        self.layout = SweepLayout(path)
        self.path = self.layout.root
        meta = read_json(self.layout.sweep_json)
        if meta is None:
            raise ResultsError(f"{self.path} is not a sweep directory (no readable sweep.json)")
        if meta.get("format_version") != SWEEP_FORMAT_VERSION:
            raise ResultsError(
                f"{self.path}: sweep format_version {meta.get('format_version')!r} is not supported "
                f"(this ccbench reads {SWEEP_FORMAT_VERSION})"
            )
        self.meta = meta
        self.name: str = meta.get("name", "")
        self.engine_version: str = meta.get("engine_version", "")
        self.columns: list[str] = list(meta.get("columns", []))

    def __repr__(self) -> str:
        s = self.runs["status"].value_counts().to_dict()
        return f"SweepResults({str(self.path)!r}, name={self.name!r}, runs={len(self.runs)}, status={s})"

    @cached_property
    def index(self) -> pa.Table:
        """The index as an Arrow table (read from ``index.parquet``; rebuilt from the
        runs when it is missing or damaged)."""
        try:
            table = pq.read_table(self.layout.index)
            names = set(table.column_names)
            table.validate(full=True)  # a flipped byte in a string column is invalid UTF-8 only here
        except (OSError, pa.ArrowException, UnicodeDecodeError):  # a damaged footer can hold a non-UTF-8 name
            return rebuild_index(self.path)
        if not set(_INDEX_KEYS) <= names:
            return rebuild_index(self.path)
        return table

    @property
    def runs(self) -> pd.DataFrame:
        """One row per planned run: ``run_id``, ``status``, the parameter columns,
        timing and headline metrics (``docs/results-format.md``)."""
        return self.index.to_pandas()

    @property
    def failed(self) -> pd.DataFrame:
        df = self.runs
        return df[df["status"] == "failed"].reset_index(drop=True)

    def run(self, run_id: str) -> RunResult:
        """One complete run."""
        return load_run(self.layout.run_dir(checked_run_id(run_id, "the run id given")))

    def _complete_ids(self, run_ids: Iterable[str] | None) -> list[str]:
        df = self.runs
        done = df.loc[df["status"] == "complete", "run_id"].tolist()
        if run_ids is None:
            return done
        wanted = [checked_run_id(r, "the run ids given") for r in run_ids]
        missing = [r for r in wanted if r not in set(done)]
        if missing:
            raise KeyError(f"not complete runs of this sweep: {', '.join(missing[:5])}")
        return wanted

    def table(self, name: str, run_ids: Iterable[str] | None = None, columns: list[str] | None = None) -> pd.DataFrame:
        """Table ``name`` of the given complete runs (default: all), concatenated, with
        ``run_id`` and the parameter columns in front. A parameter named like a column
        of the table (a sweep variable ``cca`` and the flows' ``cca``) comes as
        ``param.<name>``, so the table's own column keeps its meaning."""
        if name not in TABLES:
            raise KeyError(f"no table {name!r}; tables: {', '.join(TABLES)}")
        ids = [checked_run_id(rid, self.layout.index) for rid in self._complete_ids(run_ids)]
        try:
            params = self.runs.set_index("run_id")[["repetition", "seed", *self.columns]]
        except KeyError as e:
            raise ResultsError(f"{self.layout.index} lacks the sweep's columns {e}: it is damaged") from None
        parts = []
        for rid in ids:
            path = self.layout.run_dir(rid) / f"{name}.parquet"
            try:
                t = pq.read_table(path, columns=columns)
            except (OSError, pa.ArrowException, UnicodeDecodeError) as e:  # a flipped byte in a column's name
                raise ResultsError(f"cannot read {path} (run {rid}): {str(e)[:200]}") from None
            t = t.append_column("run_id", pa.array([rid] * t.num_rows, type=pa.string()))
            parts.append(t)
        if not parts:
            return pd.DataFrame(columns=["run_id", "repetition", "seed", *self.columns, *(columns or [])])
        # Dictionary columns may have different dictionaries per run: unify them.
        try:
            table = pa.concat_tables(parts, promote_options="permissive").unify_dictionaries()
        except (pa.ArrowException, UnicodeDecodeError) as e:  # a column's name may be damaged (not UTF-8)
            raise ResultsError(
                f"the {name} tables of {self.path}'s runs do not fit together (a damaged run?): {str(e)[:200]}"
            ) from None
        try:
            df = table.to_pandas()
        except (pa.ArrowException, UnicodeDecodeError) as e:  # a flipped byte in a string column reads, then fails to convert
            raise ResultsError(f"the {name} tables of {self.path}'s runs cannot be read (a damaged run?): {str(e)[:200]}") from None
        params = params.rename(columns={c: f"param.{c}" for c in params.columns if c in df.columns})
        df = df.join(params, on="run_id")
        front = ["run_id", *params.columns]
        return df[front + [c for c in df.columns if c not in front]]

    @property
    def flows(self) -> pd.DataFrame:
        """Runs × flows: one row per flow of every complete run, with its run's
        parameters (tidy: one observation per row)."""
        return self.table("flows")

    def time_series(
        self, name: str = "flow_ts", run_ids: Iterable[str] | None = None, columns: list[str] | None = None
    ) -> pd.DataFrame:
        """A time-series table (``flow_ts`` or ``queue_ts``) across runs, loaded on
        demand; pass ``run_ids``/``columns`` to keep it small."""
        if name not in ("flow_ts", "queue_ts", "events"):
            raise KeyError(f"{name!r} is not a time-series table; choose flow_ts, queue_ts or events")
        return self.table(name, run_ids, columns)


def load_sweep_results(path: str | os.PathLike[str]) -> SweepResults:
    return SweepResults(path)


def is_sweep_dir(path: str | os.PathLike[str]) -> bool:
    return SweepLayout(Path(path)).is_sweep()


__all__ += ["is_sweep_dir"]
