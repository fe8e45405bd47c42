"""Type stub of the compiled engine binding (crates/ccsim-py)."""

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["engine_version", "list_ccas", "check_cca", "run"]

_Column = npt.NDArray[Any] | tuple[npt.NDArray[np.uint32], list[str]]

def engine_version() -> str: ...
def list_ccas() -> str:
    """JSON list of {name, summary, reference, params: [{name, default (JSON text), doc}]}."""

def check_cca(name: str, params_json: str) -> None:
    """Raise ValueError if `name` is unknown or `params_json` does not fit it."""

def run(
    config_json: str,
    progress: Callable[[int, int, int], object] | None = None,
    keep_partial: bool = False,
    max_recorded_bytes: int | None = None,
    progress_interval_s: float = 0.1,
) -> dict[str, Any]:
    """Run a resolved config; {"tables": {name: {column: _Column}}, "stats": {name: int},
    "interrupted": bool}. Ctrl-C raises KeyboardInterrupt (or, with keep_partial, returns
    the tables so far with "interrupted": True); `progress(sim_ns, duration_ns, events)`
    is called every progress_interval_s; MemoryError when the recorded rows outgrow
    max_recorded_bytes. Raises ValueError for an invalid config, RuntimeError for an
    engine bug."""
