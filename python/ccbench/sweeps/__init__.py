"""Sweeps: parameter grids with repetitions, resumable, on a local pool or Dask.

- :mod:`.plan`: the sweep spec (``[sweep]`` table) and its expansion into runs with
  derived seeds and content-addressed ids;
- :mod:`.runner`: :func:`run_sweep` (``ccbench.sweep``): resume, failure isolation;
- :mod:`.executors`: local process pool and Dask;
- :mod:`.store` / :mod:`.results`: the sweep directory, its index, loading.

Dask, DuckDB and polars are imported only where used.
"""

from .plan import PlannedRun, SweepPlan, SweepSpec, SweepSpecError, expand, load_sweep
from .results import SweepResults, is_sweep_dir, rebuild_index
from .runner import EngineChanged, SweepBusy, SweepReport, run_sweep

__all__ = [
    "EngineChanged",
    "PlannedRun",
    "SweepBusy",
    "SweepPlan",
    "SweepReport",
    "SweepResults",
    "SweepSpec",
    "SweepSpecError",
    "expand",
    "is_sweep_dir",
    "load_sweep",
    "rebuild_index",
    "run_sweep",
]
