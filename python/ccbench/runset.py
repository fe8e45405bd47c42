"""A run or a sweep on disk, as the analysis tools (plots, reports, comparisons) see it.

A **run** is a directory with a ``manifest.json`` (``docs/results-format.md``). A
**sweep** is a directory holding run directories at any depth (up to
:data:`MAX_DEPTH`). A run directory whose manifest is missing, unreadable or not
``"complete"`` is a **failed** run: it is listed with its error (from
``error.json``/``error.txt`` or the manifest's ``error``) and NaN metrics, never
silently dropped. So is each ``failed/<run_id>.json`` record of a sweep (the sweep
store writes its failures there, with their parameters).

A sweep's **axes** are the parameters that vary between its runs: the ones the
sweep recorded in each manifest (``manifest["sweep"]["params"]`` or
``manifest["params"]``) when present, else every leaf of the validated spec
(``manifest["spec"]``, flattened to dotted names such as ``bottleneck.buffer`` or
``flows[1].cca``) whose value differs between runs.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .results import MANIFEST, ResultsError, RunResult, link_config, load
from .units import parse_rate

__all__ = ["HEADLINE", "MAX_DEPTH", "OPTIONAL_RUN_METRICS", "RunEntry", "RunSet", "flatten", "natural_key", "open_results", "run_metrics"]

MAX_DEPTH = 4
#: Where a sweep records its failed runs, one JSON file each.
FAILED_DIR = "failed"
#: The sweep store's description of the sweep (its variables among others).
SWEEP_JSON = "sweep.json"
_ERROR_FILES = ("error.json", "error.txt")


@dataclass
class RunEntry:
    """One run of a run set: its directory, ``status`` (``"complete"`` or
    ``"failed"``), parameters, and error text for a failed run."""

    path: Path
    name: str
    status: str
    manifest: dict[str, Any] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    _result: RunResult | None = field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        return self.status == "complete"

    def load(self) -> RunResult:
        if not self.ok:
            raise ResultsError(f"{self.path}: the run failed: {self.error}")
        if self._result is None:
            self._result = load(self.path)
        return self._result


@dataclass
class RunSet:
    """A run (``kind == "run"``, one entry) or a sweep (``kind == "sweep"``)."""

    root: Path
    kind: str
    entries: list[RunEntry]
    axes: list[str]

    @property
    def complete(self) -> list[RunEntry]:
        return [e for e in self.entries if e.ok]

    @property
    def failed(self) -> list[RunEntry]:
        return [e for e in self.entries if not e.ok]

    @property
    def label(self) -> str:
        return self.root.name or str(self.root)


def flatten(obj: Any, prefix: str = "") -> dict[str, Any]:
    """Nested dicts and lists as one level with dotted / indexed names."""
    out: dict[str, Any] = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.update(flatten(v, f"{prefix}.{k}" if prefix else str(k)))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out.update(flatten(v, f"{prefix}[{i}]"))
    else:
        out[prefix] = obj
    return out


def _read_error(path: Path, manifest: dict[str, Any]) -> str:
    for name in _ERROR_FILES:
        p = path / name
        if p.is_file():
            text = p.read_text(errors="replace").strip()
            if name.endswith(".json"):
                try:
                    data = json.loads(text)
                    return str(data.get("error", data)) if isinstance(data, dict) else str(data)
                except json.JSONDecodeError:
                    pass
            return text
    if manifest.get("error"):
        return str(manifest["error"])
    if manifest:
        return f"status {manifest.get('status')!r}"
    return "no manifest.json (the run did not complete)"


def _entry(path: Path, root: Path) -> RunEntry:
    manifest: dict[str, Any] = {}
    try:
        loaded = json.loads((path / MANIFEST).read_text())
        if isinstance(loaded, dict):
            manifest = loaded
    except (OSError, json.JSONDecodeError):
        pass
    status = "complete" if manifest.get("status") == "complete" else "failed"
    rel = path.relative_to(root).as_posix() if path != root else path.name
    params = manifest.get("sweep", {}).get("params") if isinstance(manifest.get("sweep"), dict) else None
    if params is None:
        params = manifest.get("params")
    return RunEntry(
        path=path,
        name=rel or path.name,
        status=status,
        manifest=manifest,
        params=dict(params) if isinstance(params, dict) else {},
        error=None if status == "complete" else _read_error(path, manifest),
    )


def _failure_records(root: Path) -> list[RunEntry]:
    """Failed runs a sweep recorded as ``failed/<run_id>.json`` (the sweep store's
    layout: ``{"run_id", "params", "error_type", "error", ...}``)."""
    out = []
    for p in sorted((root / FAILED_DIR).glob("*.json")) if (root / FAILED_DIR).is_dir() else []:
        try:
            rec = json.loads(p.read_text())
        except (OSError, json.JSONDecodeError) as e:
            rec = {"error": f"unreadable failure record: {e}"}
        if not isinstance(rec, dict):
            rec = {"error": str(rec)}
        kind = f"{rec['error_type']}: " if rec.get("error_type") else ""
        params = rec.get("params")
        out.append(
            RunEntry(
                path=p,
                name=p.relative_to(root).as_posix(),
                status="failed",
                manifest={},
                params=dict(params) if isinstance(params, dict) else {},
                error=f"{kind}{rec.get('error', 'no error message')}",
            )
        )
    return out


def _looks_like_run(path: Path) -> bool:
    return (path / MANIFEST).exists() or any((path / n).exists() for n in _ERROR_FILES)


def _walk(root: Path, depth: int) -> Iterator[Path]:
    try:
        children = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError:
        return
    for child in children:
        if _looks_like_run(child):
            yield child
        elif depth > 1:
            yield from _walk(child, depth - 1)


def _params_from_path(entry: RunEntry) -> dict[str, str]:
    """``key=value`` components of a run's path inside the sweep (a failed run has no
    manifest to read its parameters from)."""
    out = {}
    for part in Path(entry.name).parts:
        if "=" in part:
            k, v = part.split("=", 1)
            out[k] = v
    return out


def _sweep_variables(root: Path) -> list[str] | None:
    """The sweep's own variables (``[sweep.grid]`` and ``[[sweep.zip]]`` keys) from
    the sweep store's ``sweep.json``; None without one. Derived values (a buffer of
    ``{k}BDP``, a start per repetition) follow from these and are not axes."""
    try:
        spec = json.loads((root / SWEEP_JSON).read_text()).get("spec", {}).get("sweep", {})
    except (OSError, json.JSONDecodeError, AttributeError):
        return None
    if not isinstance(spec, dict):
        return None
    names = list(spec.get("grid") or {})
    for group in spec.get("zip") or []:
        names += [k for k in (group or {}) if k not in names]
    return names


def _axes(entries: list[RunEntry], root: Path | None = None) -> list[str]:
    if any(e.params for e in entries):
        keys: list[str] = []
        for e in entries:
            keys += [k for k in e.params if k not in keys]
        variables = _sweep_variables(root) if root is not None else None
        if variables:
            keys = [k for k in variables if k in keys]
        # only what varies is an axis
        return [k for k in keys if len({json.dumps(e.params.get(k), default=str) for e in entries}) > 1]
    flat = [flatten(e.manifest.get("spec", {})) for e in entries if e.ok]
    keys = []
    for f in flat:
        keys += [k for k in f if k not in keys]
    varying = [k for k in keys if len({json.dumps(f.get(k), sort_keys=True, default=str) for f in flat}) > 1]
    path_keys = {k: k for e in entries for k in _params_from_path(e)}
    for e in entries:
        f = flatten(e.manifest.get("spec", {}))
        e.params = {k: f.get(k) for k in varying}
        if not e.ok:
            # match path components to axes by their last name (buffer=2BDP -> bottleneck.buffer)
            from_path = _params_from_path(e)
            for k in varying:
                short = k.rsplit(".", 1)[-1]
                if short in from_path and k not in path_keys:
                    e.params[k] = from_path[short]
                elif k in from_path:
                    e.params[k] = from_path[k]
    return [k for k in varying if k != "experiment.name"]


def open_results(path: str | os.PathLike[str]) -> RunSet:
    """Open ``path`` as a run or a sweep; a clear :class:`ResultsError` if it is
    neither."""
    root = Path(path)
    if not root.exists():
        raise ResultsError(f"{root} does not exist")
    if not root.is_dir():
        raise ResultsError(f"{root} is not a directory (expected a run or a sweep directory)")
    if (root / MANIFEST).exists():
        entry = _entry(root, root)
        if not entry.ok:
            raise ResultsError(f"{root} is not a complete run: {entry.error}")
        return RunSet(root=root, kind="run", entries=[entry], axes=[])
    entries = [_entry(p, root) for p in _walk(root, MAX_DEPTH)] + _failure_records(root)
    if not entries:
        raise ResultsError(f"{root} holds no run (no manifest.json in it or its subdirectories)")
    return RunSet(root=root, kind="sweep", entries=entries, axes=_axes(entries, root))


def _num(v: Any) -> Any:
    return float(v) if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) else v


#: Headline metric columns of :func:`run_metrics`, with their labels.
HEADLINE = {
    "goodput_mbps": "total goodput [Mbit/s]",
    "utilization": "utilization φ (M-PHI)",
    "jain": "Jain's index, flows (M-JFI)",
    "jain_senders": "Jain's index, senders (M-JFI-SENDER)",
    "retransmissions": "retransmissions (M-RETX)",
    "retransmission_pct": "retransmissions [% of delivered] (M-RETX-PCT)",
    "drop_pct": "bottleneck drops [%] (M-DROP)",
    "queue_mean_pkts": "mean queue [pkts] (M-QLEN)",
    "queue_norm_mean": "mean queue / buffer (M-NQ)",
    "delay_p50_ms": "median queueing delay [ms]",
    "delay_p99_ms": "99th-percentile queueing delay [ms]",
}
#: Per-run metrics that apply to some runs only (NaN for the others), with labels.
OPTIONAL_RUN_METRICS = {
    "fct_median_s": "median FCT of the finite flows [s] (M-FCT)",
    "fct_slowdown_median": "median FCT slowdown (M-FCT-SLOWDOWN)",
    "flows_completed": "finite flows completed (M-FLOWCOUNT)",
}


def _numeric_axes(e: RunEntry) -> dict[str, float]:
    """``buffer_bdp`` and ``rate_mbps`` of a run: from its manifest, or for a failed
    run from its parameters (``"2BDP"``, ``"20Mbit"``) so that it keeps its place
    in the grid."""
    out: dict[str, float] = {}
    derived = e.manifest.get("derived", {}).get("buffer", {})
    name = e.manifest.get("derived", {}).get("bottleneck", {}).get("link", "bottleneck")
    rate = link_config(e.manifest.get("engine_config", {}), name).get("rate_bps")
    if derived.get("bdp_bytes"):
        out["buffer_bdp"] = derived["bytes"] / derived["bdp_bytes"]
    if rate is not None:
        out["rate_mbps"] = rate / 1e6
    for k, v in e.params.items():
        short = k.rsplit(".", 1)[-1]
        if short == "buffer" and "buffer_bdp" not in out and isinstance(v, str) and v.upper().endswith("BDP"):
            with contextlib.suppress(ValueError):
                out["buffer_bdp"] = float(v[:-3])
        if short == "rate" and "rate_mbps" not in out and v is not None:
            with contextlib.suppress(ValueError):
                out["rate_mbps"] = parse_rate(v) / 1e6
    return out


def _metrics_of(result: RunResult) -> dict[str, Any]:
    s = result.summary()
    row: dict[str, Any] = {
        "goodput_mbps": s["goodput_bps"] / 1e6,
        "utilization": s["utilization"],
        "jain": s["jain"],
        "jain_senders": s["jain_senders"],
        "retransmissions": float(s["retransmissions"]),
        "retransmission_pct": s["retransmission_pct"],
        "drop_pct": s["drop_pct"],
        "queue_mean_pkts": s["queue"].get("mean_pkts", math.nan),
        "queue_norm_mean": s["queue"].get("norm_mean", math.nan),
        "delay_p50_ms": s["queue_delay"].get("p50_ns", math.nan) / 1e6,
        "delay_p99_ms": s["queue_delay"].get("p99_ns", math.nan) / 1e6,
    }
    from .metrics import aggregate_goodput, fct_slowdown

    cfg = result.engine_config
    flows = result.flows
    if (flows["size_bytes"].to_numpy(dtype=np.int64) >= 0).any():
        sd = fct_slowdown(flows, capacity_bps=result.link_config()["rate_bps"])
        row["fct_median_s"] = float(sd["fct_s"].median())
        row["fct_slowdown_median"] = float(sd["slowdown"].median())
        row["flows_completed"] = float(sd["completed"].sum())
    warm, dur = int(cfg.get("warmup_ns", 0)), int(cfg["duration_ns"])
    for by, prefix in (("sender_name", "sender"), ("cca", "cca")):
        agg = aggregate_goodput(result.flows, warmup_ns=warm, duration_ns=dur, by=by)
        for r in agg.itertuples(index=False):
            key = getattr(r, by)
            row[f"{prefix}:{key}:mbps"] = r.goodput_bps / 1e6
            row[f"{prefix}:{key}:share"] = r.share
    return row


def run_metrics(rs: RunSet, progress: Callable[[int, int], None] | None = None) -> pd.DataFrame:
    """One row per run: ``run`` (its name), ``status``, ``error``, the axes, the
    buffer in BDPs (``buffer_bdp``), the bottleneck rate (``rate_mbps``), the
    :data:`HEADLINE` metrics, and per sender and per CCA the goodput
    (``sender:<name>:mbps``, ``cca:<name>:mbps``) and share (``…:share``, M-SHARE).
    Failed runs have NaN metrics. ``progress(done, total)`` is called after each run."""
    rows = []
    total = len(rs.entries)
    for i, e in enumerate(rs.entries):
        row: dict[str, Any] = {"run": e.name, "status": e.status, "error": e.error or ""}
        row.update({k: _num(e.params.get(k)) for k in rs.axes})
        rep = (e.manifest.get("sweep") or {}).get("repetition") if isinstance(e.manifest.get("sweep"), dict) else None
        if rep is not None:
            row["repetition"] = rep
        row.update(_numeric_axes(e))
        if e.ok:
            try:
                row.update(_metrics_of(e.load()))
            except (ResultsError, OSError, KeyError, ValueError) as err:
                row["status"], row["error"] = "failed", f"unreadable: {err}"
        rows.append(row)
        if progress is not None:
            progress(i + 1, total)
    df = pd.DataFrame(rows)
    for c in HEADLINE:
        if c not in df.columns:
            df[c] = np.nan
    return df


def natural_key(value: Any) -> tuple[int, float, str]:
    """Sort key for axis values: numbers (and texts that start with one, like
    ``"0.5BDP"``, ``"100Mbit"``) by value, then the rest by text; None last."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return (2, 0.0, "")
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return (0, float(value), "")
    text = str(value)

    m = re.match(r"\s*([-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)", text)
    if m:
        return (0, float(m.group(1)), text)
    return (1, 0.0, text)
