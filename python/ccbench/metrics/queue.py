"""Queueing family: metrics.md §4 and §7, **M-QLEN** (mean and standard deviation
of the queue length), **M-NQ** (the same normalized by the buffer size), **M-QOCC**
(median occupancy and the relative difference of medians), **M-DROP** (packet drop
ratio at the bottleneck), and queueing-delay percentiles.

Queueing delay comes from **sojourn samples** when the run has them: a table
``sojourn`` with columns ``time_ns`` (dequeue time), ``link`` and ``sojourn_ns``
(time the packet spent in the queue), one row per sampled packet — the contract this
module expects from the network layer's recording. Until a run carries it,
:func:`backlog_delay` estimates the delay as the drain time of the backlog,
backlog_bytes · 8 / rate, which is exact for a FIFO at a constant rate.

All functions read the ``queue_ts`` samples of one link (default ``"bottleneck"``)
within a window [start_ns, end_ns] (pass the warm-up as ``start_ns`` for the
measurement window).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    import pyarrow as pa

    from ..results import RunResult

__all__ = [
    "backlog_delay",
    "delay_percentiles",
    "delay_samples",
    "drop_ratio",
    "link_drop_ratio",
    "median_occupancy",
    "occupancy",
    "queue_delay_percentiles",
    "relative_median_difference",
    "sojourn_percentiles",
]


def _link(queue_ts: pd.DataFrame, link: str) -> pd.DataFrame:
    df = queue_ts[queue_ts["link"].astype(str) == link]
    return df.sort_values("time_ns", kind="stable")


def occupancy(
    queue_ts: pd.DataFrame,
    *,
    link: str = "bottleneck",
    start_ns: int = 0,
    end_ns: int | None = None,
    limit_packets: int | None = None,
    limit_bytes: int | None = None,
) -> dict[str, float]:
    """M-QLEN: mean and (population) standard deviation of the backlog samples in the
    window, in packets and bytes; with a buffer limit also M-NQ (``norm_mean``,
    ``norm_std``: backlog / limit). NaN when there are no samples."""
    df = _link(queue_ts, link)
    t = df["time_ns"].to_numpy(dtype=np.int64)
    keep = (t >= start_ns) & (t <= end_ns if end_ns is not None else True)
    pk = df["backlog_pkts"].to_numpy(dtype=float)[keep]
    by = df["backlog_bytes"].to_numpy(dtype=float)[keep]
    nan = float("nan")
    out = {
        "samples": float(pk.size),
        "mean_pkts": float(pk.mean()) if pk.size else nan,
        "std_pkts": float(pk.std()) if pk.size else nan,
        "mean_bytes": float(by.mean()) if by.size else nan,
        "std_bytes": float(by.std()) if by.size else nan,
    }
    if limit_packets:
        out["norm_mean"] = out["mean_pkts"] / limit_packets
        out["norm_std"] = out["std_pkts"] / limit_packets
    elif limit_bytes:
        out["norm_mean"] = out["mean_bytes"] / limit_bytes
        out["norm_std"] = out["std_bytes"] / limit_bytes
    return out


def drop_ratio(queue_ts: pd.DataFrame, *, link: str = "bottleneck", start_ns: int = 0) -> dict[str, float]:
    """M-DROP: dropped / arriving packets × 100 at ``link`` from ``start_ns`` to the
    last sample, **[impl. choice]** arrivals = enqueued + dropped (a packet refused at
    the tail is counted as dropped, not enqueued). Counters are read at the last
    sample at or before ``start_ns`` (0 before the first sample) and at the last
    sample. Returns ``drops``, ``arrivals`` and ``drop_pct`` (NaN if no arrivals)."""
    df = _link(queue_ts, link)
    if df.empty:
        return {"drops": 0.0, "arrivals": 0.0, "drop_pct": float("nan")}
    t = df["time_ns"].to_numpy(dtype=np.int64)
    drops = df["dropped_pkts"].to_numpy(dtype=np.int64)
    enq = df["enqueued_pkts"].to_numpy(dtype=np.int64)
    i0 = int(np.searchsorted(t, start_ns, side="right")) - 1
    d0, e0 = (int(drops[i0]), int(enq[i0])) if i0 >= 0 else (0, 0)
    d = int(drops[-1]) - d0
    arrivals = d + int(enq[-1]) - e0
    return {
        "drops": float(d),
        "arrivals": float(arrivals),
        "drop_pct": 100.0 * d / arrivals if arrivals else float("nan"),
    }


def link_drop_ratio(links: pd.DataFrame, *, link: str = "bottleneck") -> dict[str, float]:
    """M-DROP over the measurement window from the engine's per-link counters (the
    ``links`` table: final counts less the counts at the warm-up), with
    :func:`drop_ratio`'s definition (arrivals = enqueued + dropped). Unlike
    :func:`drop_ratio` it does not depend on queue samples (``sample_interval = 0``
    records none). ``ValueError`` if the table lacks ``link`` or the counters at the
    warm-up."""
    need = ("enqueued_pkts_at_warmup", "dropped_pkts_at_warmup")
    if any(c not in links.columns for c in need):
        raise ValueError("the links table has no counters at the warm-up")
    row = links[links["link"].astype(str) == link]
    if row.empty:
        raise ValueError(f"no link {link!r} in the links table")
    r = row.iloc[0]
    d = int(r["dropped_pkts"]) - int(r["dropped_pkts_at_warmup"])
    arrivals = d + int(r["enqueued_pkts"]) - int(r["enqueued_pkts_at_warmup"])
    return {
        "drops": float(d),
        "arrivals": float(arrivals),
        "drop_pct": 100.0 * d / arrivals if arrivals else float("nan"),
    }


def median_occupancy(
    queue_ts: pd.DataFrame, *, link: str = "bottleneck", start_ns: int = 0, unit: str = "bytes"
) -> float:
    """M-QOCC (D2 Ch. 6): the median backlog (``unit`` ``"bytes"`` or ``"pkts"``) of
    the samples from ``start_ns`` on. NaN without samples."""
    if unit not in ("bytes", "pkts"):
        raise ValueError(f"unit must be 'bytes' or 'pkts', not {unit!r}")
    df = _link(queue_ts, link)
    x = df.loc[df["time_ns"].to_numpy(dtype=np.int64) >= start_ns, f"backlog_{unit}"].to_numpy(dtype=float)
    return float(np.median(x)) if x.size else float("nan")


def relative_median_difference(median_x: float, median_ref: float) -> float:
    """M-QOCC comparison (D2 Ch. 6): ``(median_X − median_ref) / median_ref``; NaN
    when the reference median is zero."""
    return (median_x - median_ref) / median_ref if median_ref else float("nan")


def delay_percentiles(
    sojourn: pd.DataFrame,
    *,
    link: str = "bottleneck",
    start_ns: int = 0,
    q: tuple[float, ...] = (0.5, 0.9, 0.95, 0.99),
) -> dict[str, float]:
    """Queueing-delay percentiles (metrics.md §7, from sojourn samples): ``mean_ns``
    and ``p50_ns`` … for the ``sojourn_ns`` of the packets dequeued at ``link`` from
    ``start_ns`` on. Works on the ``sojourn`` table or on :func:`backlog_delay`'s
    output (same columns). NaN without samples."""
    # One boolean mask and one selected copy, then one partition for all quantiles:
    # at scale the samples number millions, and every intermediate copy counts.
    keep = sojourn["time_ns"].to_numpy(dtype=np.int64) >= start_ns
    if "link" in sojourn.columns:
        keep &= (sojourn["link"] == link).to_numpy(dtype=bool)
    x = sojourn["sojourn_ns"].to_numpy()[keep].astype(float)
    out = {"samples": float(x.size), "mean_ns": float(x.mean()) if x.size else float("nan")}
    quantiles = np.quantile(x, q) if x.size else [float("nan")] * len(q)
    for p, v in zip(q, quantiles, strict=True):
        out[f"p{round(p * 100):d}_ns"] = float(v)
    return out


def _link_rows(table: pa.Table, link: str) -> pa.Table:
    """The rows of ``link`` in an Arrow table with a ``link`` column, selected in Arrow:
    the sojourn table has millions of rows at scale, and a pandas copy of all of them
    (with a string per row to compare) would be the largest allocation of a run."""
    import pyarrow as pa
    import pyarrow.compute as pc

    col = table.column("link")
    if not pa.types.is_dictionary(col.type):
        return table.filter(pc.equal(col, link))
    # Compare the dictionary codes, chunk by chunk (each chunk has its own dictionary).
    masks = []
    for chunk in col.chunks:
        codes = pc.indices_nonzero(pc.equal(chunk.dictionary, link)).cast(chunk.indices.type)
        masks.append(pc.is_in(chunk.indices, value_set=codes))
    return table.filter(pa.chunked_array(masks, type=pa.bool_()))


def sojourn_percentiles(
    batches: Callable[[], Iterable[pa.RecordBatch]],
    *,
    link: str = "bottleneck",
    start_ns: int = 0,
    q: tuple[float, ...] = (0.5, 0.9, 0.95, 0.99),
) -> dict[str, float]:
    """:func:`delay_percentiles` of the ``sojourn`` table's samples, read batch by batch
    in two passes (``batches()`` gives the table's record batches afresh each time), so
    that the memory needed does not grow with the number of samples: the first pass
    counts them in buckets of 1/512 relative width, the second keeps only the samples
    in the buckets that hold the ranks the percentiles need. The percentiles are exact
    (NumPy's linear interpolation between the two nearest ranks)."""
    counts = np.zeros(_BUCKETS, dtype=np.int64)
    total = 0
    for values in _window_values(batches(), link, start_ns):
        counts += np.bincount(_bucket(values), minlength=_BUCKETS)
        # Exact integer sum in two halves (no uint64 overflow whatever the values).
        total += (int((values >> np.uint64(32)).sum()) << 32) + int((values & np.uint64(0xFFFFFFFF)).sum())
    n = int(counts.sum())
    out = {"samples": float(n), "mean_ns": total / n if n else float("nan")}
    if not n:
        return out | {f"p{round(p * 100):d}_ns": float("nan") for p in q}
    index = np.array(q, dtype=float) * (n - 1)
    below = np.floor(index).astype(np.int64)
    ranks = sorted({int(r) for r in below} | {min(int(r) + 1, n - 1) for r in below})
    first = np.concatenate(([0], np.cumsum(counts)))  # rank of each bucket's smallest sample
    wanted = sorted({int(np.searchsorted(first, r, side="right")) - 1 for r in ranks})
    kept: dict[int, list[np.ndarray]] = {b: [] for b in wanted}
    for values in _window_values(batches(), link, start_ns):
        buckets = _bucket(values)
        for b in wanted:
            kept[b].append(values[buckets == b])
    sorted_kept = {b: np.sort(np.concatenate(v)) for b, v in kept.items()}

    def at(rank: int) -> float:
        b = int(np.searchsorted(first, rank, side="right")) - 1
        return float(sorted_kept[b][rank - first[b]])

    for p, i, lo in zip(q, index, below, strict=True):
        low, high = at(int(lo)), at(min(int(lo) + 1, n - 1))
        t = float(i - lo)
        # NumPy's lerp (numpy.lib._function_base_impl._lerp), for the same result.
        out[f"p{round(p * 100):d}_ns"] = high - (high - low) * (1 - t) if t >= 0.5 else low + (high - low) * t
    return out


#: Sample buckets of :func:`sojourn_percentiles`: 1,024 per power of two above 2^10 ns.
_BUCKETS = 64 * 1024
_POWERS = np.array([1 << k for k in range(64)], dtype=np.uint64)


def _bucket(values: np.ndarray) -> np.ndarray:
    """Monotone bucket numbers: a value's top 10 bits and how many low bits were dropped."""
    shift = np.maximum(np.searchsorted(_POWERS, values, side="right") - 10, 0).astype(np.uint64)
    return (shift * 1024 + (values >> shift)).astype(np.int64)


def _window_values(batches: Iterable[pa.RecordBatch], link: str, start_ns: int) -> Iterator[np.ndarray]:
    """The ``sojourn_ns`` (uint64) of ``link``'s samples from ``start_ns`` on, batch by batch."""
    import pyarrow as pa
    import pyarrow.compute as pc

    for batch in batches:
        col = batch.column("link")
        if pa.types.is_dictionary(col.type):
            codes = pc.indices_nonzero(pc.equal(col.dictionary, link)).cast(col.indices.type)
            mine = pc.is_in(col.indices, value_set=codes)
        else:
            mine = pc.equal(col, link)
        keep = pc.and_(mine, pc.greater_equal(batch.column("time_ns"), pa.scalar(start_ns, pa.uint64())))
        yield batch.column("sojourn_ns").filter(keep).to_numpy(zero_copy_only=False).astype(np.uint64, copy=False)


def queue_delay_percentiles(
    result: RunResult, link: str | None = None, *, start_ns: int = 0
) -> tuple[dict[str, float], str]:
    """:func:`delay_percentiles` of ``link``'s queueing delay from ``start_ns`` on, and
    where the samples come from (as :func:`delay_samples` says). Sojourn samples are
    read batch by batch (:func:`sojourn_percentiles`), from their Parquet file when the
    run streamed them there, so that a long run's millions of samples are never all in
    memory at once. ``KeyError`` as :func:`delay_samples`."""
    link = link or result.primary_link
    if "sojourn" in result.tables:
        return sojourn_percentiles(lambda: _sojourn_batches(result), link=link, start_ns=start_ns), "sojourn time"
    delays, source = delay_samples(result, link)
    return delay_percentiles(delays, link=link, start_ns=start_ns), source


def _sojourn_batches(result: RunResult) -> Iterator[pa.RecordBatch]:
    from ..results import Tables

    columns = ["time_ns", "link", "sojourn_ns"]
    path = result.tables.path("sojourn") if isinstance(result.tables, Tables) else None
    if path is None:
        yield from result.tables["sojourn"].select(columns).to_batches(max_chunksize=1 << 16)
        return
    import pyarrow.parquet as pq

    # Column chunks read through a 1 MiB buffer, not whole: a third of the memory.
    with pq.ParquetFile(path, buffer_size=1 << 20) as f:
        yield from f.iter_batches(columns=columns, batch_size=1 << 16, use_threads=False)


def backlog_delay(
    queue_ts: pd.DataFrame, *, rate_bps: int, rate_schedule: tuple | list = (), link: str = "bottleneck"
) -> pd.DataFrame:
    """An estimate of the queueing delay a packet arriving at each sample would see:
    backlog_bytes · 8 / rate (rate from the link's schedule at that time). Columns
    ``time_ns``, ``link``, ``sojourn_ns`` — the ``sojourn`` table's contract, so the
    delay functions and plots take either."""
    df = _link(queue_ts, link)
    t = df["time_ns"].to_numpy(dtype=np.int64)
    change_t = np.array([0, *(int(c[0]) for c in rate_schedule)], dtype=np.int64)
    change_r = np.array([int(rate_bps), *(int(c[1]) for c in rate_schedule)], dtype=float)
    rate = change_r[np.searchsorted(change_t, t, side="right") - 1]
    return pd.DataFrame(
        {"time_ns": t, "link": link, "sojourn_ns": df["backlog_bytes"].to_numpy(dtype=float) * 8e9 / rate}
    )


def delay_samples(result: RunResult, link: str | None = None) -> tuple[pd.DataFrame, str]:
    """The queueing-delay samples of ``link`` (default: the run's bottleneck,
    ``RunResult.primary_link``) — columns ``time_ns``, ``link``, ``sojourn_ns`` — and
    how they were obtained: the engine's sojourn samples when the run has them
    (``"sojourn time"``), else :func:`backlog_delay`'s estimate (``"backlog × 8 / rate"``)."""
    link = link or result.primary_link
    if "sojourn" in result.tables:
        return _link_rows(result.tables["sojourn"], link).to_pandas(), "sojourn time"
    b = result.link_config(link)
    if "rate_bps" not in b:
        raise KeyError(f"no link {link!r} in the run's configuration")
    est = backlog_delay(result.queue_ts, rate_bps=b["rate_bps"], rate_schedule=b.get("rate_schedule", []), link=link)
    return est, "backlog × 8 / rate"
