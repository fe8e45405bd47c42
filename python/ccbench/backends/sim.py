"""The ``sim`` backend: the deterministic packet-level engine (``ccbench._core``)."""

from __future__ import annotations

import inspect
import time
from typing import TYPE_CHECKING, Any

from .. import engine, pycca
from ..results import tables_from_engine
from ..spec.qdisc import QDISC_KINDS
from . import BackendRun, BackendUnavailable, ProgressFn

if TYPE_CHECKING:
    from ..spec import Experiment

__all__ = ["SimBackend"]


class SimBackend:
    """Resolves the spec into the engine configuration and runs it in-process."""

    name = "sim"

    def capabilities(self) -> dict[str, Any]:
        cat = engine.catalog()
        return {
            "available": cat is not None,
            "reason": "" if cat is not None else "the engine (ccbench._core) is not built; run 'make install'",
            "ccas": cat.names() if cat is not None else [],
            "qdiscs": [*QDISC_KINDS, "tbf"],
            "delay": True,
            "loss": True,
            "deterministic": True,
        }

    def check(self, exp: Experiment) -> None:
        if not engine.engine_available():
            raise BackendUnavailable(self.name, ["the engine (ccbench._core) is not built; run 'make install'"])

    def versions(self) -> dict[str, str]:
        return {"engine": engine.engine_version()}

    def run(
        self,
        exp: Experiment,
        *,
        progress: ProgressFn | None = None,
        keep_partial: bool = False,
        max_recorded_bytes: int | None = None,
        sink: engine.TableSink | None = None,
        chunk_rows: int = 1 << 18,
    ) -> BackendRun:
        """Run ``exp``; Ctrl-C raises ``KeyboardInterrupt`` (with ``keep_partial``, the
        tables so far come back with ``manifest["interrupted"] = True``). With ``sink``
        the growing tables go to it in chunks while the run goes (:func:`engine.run_config`);
        the returned tables hold the rows after the last chunk."""
        config = exp.resolve()
        t0 = time.perf_counter()
        raw = engine.run_config(
            config,
            progress=_engine_progress(progress),
            keep_partial=keep_partial,
            max_recorded_bytes=max_recorded_bytes,
            python_ccas=pycca.factories(config["flows"]),
            sink=sink,
            chunk_rows=chunk_rows,
        )
        wall = time.perf_counter() - t0
        # The simulating thread's own CPU time, measured by the binding around the
        # engine call: other threads of this process (a parallel run, Python) do not
        # count, as they did with the process's CPU time.
        engine_cpu = float(raw["engine_cpu_s"])
        stats = {k: int(v) for k, v in raw.get("stats", {}).items()}
        return BackendRun(
            tables=tables_from_engine(raw["tables"]),
            manifest={
                "engine_config": config,
                # CPU seconds of the simulation alone (no start-up, no file writing): the
                # figure comparable with ns-3's own `run_cpu_s`.
                "engine_cpu_s": round(engine_cpu, 6),
                # Engine events per delivered data packet: the event model's cost measure.
                "engine_events_per_pkt": _events_per_pkt(stats),
                "stats": stats,
                **({"interrupted": True} if raw.get("interrupted") else {}),
            },
            wall_time_s=wall,
        )


def _events_per_pkt(stats: dict[str, int]) -> float | None:
    delivered = stats.get("data_pkts_delivered", 0)
    return round(stats["events_processed"] / delivered, 3) if delivered and "events_processed" in stats else None


def _engine_progress(progress: ProgressFn | None) -> engine.ProgressCallback | None:
    """Adapt ``progress(done_s, total_s)`` to the engine's ``(sim_ns, duration_ns,
    events)``; a callback with an ``events`` parameter also gets the event count."""
    if progress is None:
        return None
    try:
        takes_events = "events" in inspect.signature(progress).parameters
    except (TypeError, ValueError):
        takes_events = False
    fn: Any = progress
    if takes_events:
        return lambda sim_ns, duration_ns, events: fn(sim_ns / 1e9, duration_ns / 1e9, events=events)
    return lambda sim_ns, duration_ns, events: fn(sim_ns / 1e9, duration_ns / 1e9)
