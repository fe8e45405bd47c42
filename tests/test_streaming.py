"""A run written to a directory streams its growing tables (flow_ts, queue_ts, sojourn,
events) to Parquet in row groups while it runs (ccbench.runwriter): the files hold the
same rows as a run kept in memory, the same spec and seed give the same bytes, a
failure leaves nothing behind, and the run's memory does not grow with its length."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

import ccbench
from ccbench import api
from ccbench.results import Tables, load

pytestmark = pytest.mark.engine

SPEC: dict[str, Any] = {
    "experiment": {"name": "stream", "duration": "4s", "warmup": "1s", "seed": 5, "sample_interval": "10ms"},
    "bottleneck": {"rate": "20Mbit", "delay": "5ms", "buffer": "0.5BDP"},
    "senders": [{"name": "a", "rtt": "40ms"}],
    "flows": [{"sender": "a", "cca": "reno", "count": 8}, {"sender": "a", "cca": "cubic", "count": 2, "start": "1s"}],
}


def _run(tmp_path: Path, name: str, chunk_rows: int, monkeypatch: pytest.MonkeyPatch) -> ccbench.RunResult:
    monkeypatch.setattr(api, "STREAM_CHUNK_ROWS", chunk_rows)
    return ccbench.run(copy.deepcopy(SPEC), tmp_path / name)


def test_streamed_files_hold_the_in_memory_tables_and_are_deterministic(tmp_path, monkeypatch):
    kept = ccbench.run(copy.deepcopy(SPEC))  # no directory: nothing is streamed
    first = _run(tmp_path, "a", 500, monkeypatch)
    _run(tmp_path, "b", 500, monkeypatch)
    assert isinstance(first.tables, Tables)
    groups = {t: pq.ParquetFile(tmp_path / "a" / f"{t}.parquet").metadata.num_row_groups for t in kept.tables}
    assert groups["flow_ts"] >= 6 and groups["sojourn"] >= 2 and groups["flows"] == 1, groups
    loaded = load(tmp_path / "a")
    for name in kept.tables:
        want = kept.table(name)
        assert first.table(name).equals(want), name  # the run's own result reads its files
        assert loaded.table(name).equals(want), name
        assert (tmp_path / "a" / f"{name}.parquet").read_bytes() == (tmp_path / "b" / f"{name}.parquet").read_bytes()
    assert first.summary()["goodput_bps"] == kept.summary()["goodput_bps"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b"]  # no temporary directory left


def test_a_failing_write_mid_run_leaves_no_run_and_no_temporary_directory(tmp_path, monkeypatch):
    from ccbench import runwriter

    calls = []

    def full_disk(self, name, table):
        calls.append(name)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        real(self, name, table)

    real = runwriter.RunWriter.append
    monkeypatch.setattr(runwriter.RunWriter, "append", full_disk)
    with pytest.raises(OSError, match="No space left"):
        _run(tmp_path, "run", 500, monkeypatch)
    assert len(calls) == 3  # the run stopped at the failing chunk
    assert list(tmp_path.iterdir()) == []


PEAK = textwrap.dedent(
    """
    import json, sys
    import ccbench
    result = ccbench.run(json.loads(sys.argv[1]), sys.argv[2])
    result.summary()
    # VmHWM is this process's own peak; ru_maxrss carries pytest's over the vfork.
    print(next(line.split()[1] for line in open('/proc/self/status') if line.startswith('VmHWM')))
    """
)


def _peak_rss_kib(tmp_path: Path, duration_s: int) -> int:
    spec = copy.deepcopy(SPEC)
    spec["experiment"].update(duration=f"{duration_s}s", sample_interval="1ms")
    spec["flows"] = [{"sender": "a", "cca": "reno", "count": 200}]
    out = subprocess.run(
        [sys.executable, "-c", PEAK, json.dumps(spec), str(tmp_path / f"d{duration_s}")],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(out.stdout.split()[-1])


def test_memory_of_a_run_does_not_grow_with_its_length(tmp_path):
    # 200 flows sampled every 1 ms: 1,600,000 flow_ts rows at 8 s, 3,200,000 at 16 s.
    # Held in memory, the extra 1.6 M rows would take 256 MB in the engine alone (160
    # bytes a row); streamed, the engine holds a chunk at a time and the peak stays flat.
    # Both lengths are past the first chunks, where the peak steps up once: a chunk being
    # written on the writer thread while the next one grows (measured peaks 234, 257,
    # 265 and 275 MB at 4, 8, 12 and 20 s; 216 and 420 MB for 2 and 8 s without streaming).
    short, long = _peak_rss_kib(tmp_path, 8), _peak_rss_kib(tmp_path, 16)
    extra_rows = 200 * 8_000
    growth = (long - short) * 1024
    assert growth < 0.15 * extra_rows * 160, f"peak RSS {short} -> {long} KiB for {extra_rows} more rows"
    assert pq.ParquetFile(tmp_path / "d16" / "flow_ts.parquet").metadata.num_rows == 200 * 16_000


def test_before_save_sees_every_streamed_row_and_its_manifest_keys_are_saved(tmp_path, monkeypatch):
    seen = {}

    def before_save(result):
        seen["rows"] = result.tables["flow_ts"].num_rows
        result.manifest["extra"] = {"rows": seen["rows"]}

    monkeypatch.setattr(api, "STREAM_CHUNK_ROWS", 500)
    result = ccbench.run(copy.deepcopy(SPEC), tmp_path / "run", before_save=before_save)
    assert seen["rows"] == len(result.flow_ts) == 10 * 400 - 2 * 100  # 2 flows start at 1 s
    assert load(tmp_path / "run").manifest["extra"] == {"rows": seen["rows"]}
    assert result.tables.path("sojourn") == tmp_path / "run" / "sojourn.parquet"  # moved with the run
