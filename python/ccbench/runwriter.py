"""Writing a run directory while the run goes: the engine's growing tables are
streamed to Parquet in row groups, so a run's memory does not grow with its length.

A :class:`RunWriter` owns a hidden temporary sibling of the target directory (the
atomic scheme of :mod:`ccbench.rundir`): the engine hands it each chunk of a growing
table (``flow_ts``, ``queue_ts``, ``sojourn``, ``events``) as soon as the chunk is
full, and it appends the chunk to that table's Parquet file as one row group. At the
end, :meth:`RunWriter.commit` appends the last rows, writes the other tables and the
manifest (last) and swaps the directory into place; until then nothing that looks
like a run exists at the target, and an interruption or a crash leaves only the
temporary sibling, which :meth:`abort` (or the next run's stale-sibling clean-up)
removes. A completed run is never touched until the new one is complete.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from . import results, rundir
from .results import FORMAT_VERSION, MANIFEST, RunResult, Tables, prepare_target, tables_from_engine

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.parquet as pq

__all__ = ["STREAM_CHUNK_ROWS", "RunWriter"]

#: Rows of a growing table the engine holds before it hands them over as one row group
#: (2^18: 42 MB of ``flow_ts`` in the engine, a few MB of zstd Parquet).
STREAM_CHUNK_ROWS = 1 << 18


class RunWriter:
    """A run directory being written (see the module's docstring)."""

    def __init__(self, out_dir: str | os.PathLike[str], *, overwrite: bool = False) -> None:
        self.target = prepare_target(out_dir, overwrite=overwrite)
        self.overwrite = overwrite
        self.target.parent.mkdir(parents=True, exist_ok=True)
        self.tmp = rundir.temp_sibling(self.target)
        self.tmp.mkdir()
        self._streams: dict[str, tuple[IO[bytes], pq.ParquetWriter]] = {}

    def sink(self, name: str, columns: Mapping[str, Any]) -> None:
        """The engine's callback for a full chunk of table ``name`` (its columns as the
        binding gives them)."""
        self.append(name, tables_from_engine({name: columns})[name])

    def append(self, name: str, table: pa.Table) -> None:
        """Append ``table`` to the streamed table ``name`` as one row group."""
        import pyarrow.parquet as pq

        if name not in self._streams:
            f = open(self.tmp / f"{name}.parquet", "wb")  # noqa: SIM115 - closed in _close_streams
            self._streams[name] = (f, pq.ParquetWriter(f, table.schema, compression="zstd"))
        if table.num_rows:
            self._streams[name][1].write_table(table, row_group_size=table.num_rows)

    @property
    def streamed(self) -> list[str]:
        """The tables written in chunks so far."""
        return list(self._streams)

    def _close_streams(self) -> None:
        for f, writer in self._streams.values():
            writer.close()
            f.flush()
            os.fsync(f.fileno())
            f.close()

    def commit(self, result: RunResult, *, before_save: Callable[[RunResult], None] | None = None) -> Path:
        """Write ``result`` (for a streamed table, its rows after the last chunk) and
        the manifest into the temporary directory and swap it into place. Afterwards
        ``result.tables`` reads the streamed tables from their files when first used.
        ``before_save(result)`` is called once every table is written, before the
        manifest: it may read every table (streamed ones from their files) and add
        manifest keys."""
        try:
            for name, table in result.tables.items():
                if name in self._streams:
                    self.append(name, table)
                else:
                    results._write_parquet(table, self.tmp / f"{name}.parquet")
            self._close_streams()
            if self._streams:
                files = {name: self.tmp / f"{name}.parquet" for name in self._streams}
                result.tables = Tables({n: files.get(n, t) for n, t in result.tables.items()})
            if before_save is not None:
                before_save(result)
            manifest = dict(result.manifest)
            manifest.setdefault("format_version", FORMAT_VERSION)
            manifest["tables"] = {name: f"{name}.parquet" for name in result.tables}
            manifest.setdefault("status", "complete")
            text = json.dumps(manifest, indent=2, sort_keys=True, default=str) + "\n"
            results._write_file(self.tmp / MANIFEST, text.encode())
            rundir._fsync_dir(self.tmp)
            rundir.place(self.tmp, self.target, overwrite=self.overwrite)
        except OSError as e:
            self.abort()
            if isinstance(e, FileExistsError) or e.errno is None:
                raise
            # Name the target the user gave, not the hidden temporary sibling (a full or
            # read-only disk found while writing, after the pre-flight check passed).
            raise OSError(e.errno, f"cannot write the run there: {e.strerror or e}", str(self.target)) from e
        except BaseException:
            self.abort()
            raise
        if isinstance(result.tables, Tables):
            result.tables.relocate(self.tmp, self.target)
        result.manifest = manifest
        result.path = self.target
        return self.target

    def abort(self) -> None:
        """Remove everything written so far (the target is untouched)."""
        for f, writer in self._streams.values():
            try:
                writer.close()
            except Exception:  # noqa: BLE001 - the file is removed anyway
                pass
            f.close()
        self._streams.clear()
        shutil.rmtree(self.tmp, ignore_errors=True)
