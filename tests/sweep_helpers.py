"""Shared helpers of the sweep tests: a tiny sweep spec (1-2 simulated seconds at a
few Mbit/s) and comparisons of sweep directories."""

from __future__ import annotations

import time
from pathlib import Path

import pyarrow.parquet as pq
from click.testing import CliRunner

from ccbench.cli import cli
from ccbench.results import TABLES
from ccbench.sweeps import SweepResults

TINY = """
[sweep]
name = "tiny"
seed = 5
repetitions = {reps}
[sweep.grid]
rate_mbit = {rates}
k = {ks}
[sweep.derived]
"bottleneck.rate" = "{{rate_mbit}}Mbit"
"bottleneck.buffer" = "{{k}}BDP"
"flows[1].start" = "{{100 + 100 * rep}}ms"
{extra}
[experiment]
name = "tiny"
duration = "{duration}"
warmup = "200ms"
sample_interval = "100ms"
[bottleneck]
rate = "1Mbit"
delay = "2ms"
limit_includes_head = false
[[senders]]
name = "a"
rtt = "20ms"
[[flows]]
cca = "cubic"
[[flows]]
cca = "reno"
# 0.5 BDP is 2 packets: with tc accounting (1 waiting + 1 in service) or Linux host
# noise a 1-s run can lose a tail and sit out a 200 ms RTO, which is real but not what
# these tests of the sweep machinery are about.
[host]
model = "ideal"
"""


def write_sweep(
    tmp_path: Path,
    *,
    reps: int = 2,
    rates=(2, 4),
    duration: str = "1s",
    extra: str = "",
    name: str = "s.toml",
    ks=(0.5, 2),
) -> Path:
    path = tmp_path / name
    path.write_text(TINY.format(reps=reps, rates=list(rates), ks=list(ks), duration=duration, extra=extra))
    return path


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def table_bytes(run_dir: Path) -> dict[str, object]:
    return {t: pq.read_table(run_dir / f"{t}.parquet") for t in TABLES}


def tables_equal(a, b) -> bool:
    """Arrow tables with equal values (NaN equal to NaN, unlike Table.equals)."""
    return a.schema == b.schema and a.to_pandas().equals(b.to_pandas())


def assert_same_runs(a: Path, b: Path) -> None:
    """Two sweep directories hold the same complete runs with equal tables."""
    ids_a = sorted(p.name for p in (a / "runs").iterdir())
    ids_b = sorted(p.name for p in (b / "runs").iterdir())
    assert ids_a == ids_b
    for rid in ids_a:
        ta, tb = table_bytes(a / "runs" / rid), table_bytes(b / "runs" / rid)
        for t in TABLES:
            assert tables_equal(ta[t], tb[t]), (rid, t)
    ia, ib = SweepResults(a).runs, SweepResults(b).runs
    cols = ["run_id", "status", "seed", "rate_mbit", "k", "goodput_bps", "jain", "sim_packets", "retransmissions"]
    assert (
        ia[cols]
        .sort_values("run_id")
        .reset_index(drop=True)
        .equals(ib[cols].sort_values("run_id").reset_index(drop=True))
    )


def wait_for(pred, timeout=60.0):
    t0 = time.monotonic()
    while not pred():
        if time.monotonic() - t0 > timeout:
            raise TimeoutError
        time.sleep(0.01)


def complete_runs(out: Path) -> int:
    runs = out / "runs"
    return sum(1 for p in runs.iterdir() if (p / "manifest.json").is_file()) if runs.is_dir() else 0
