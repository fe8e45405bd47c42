"""ccbench: reproducible benchmarking of TCP congestion control.

>>> import ccbench
>>> result = ccbench.run("specs/quickstart.toml", out_dir="runs/quickstart")  # doctest: +SKIP
>>> result.summary()  # doctest: +SKIP

``import ccbench`` is light: the names below are imported on first use (PEP 562), so
the command line starts fast and pydantic, pandas, pyarrow and the compiled engine
(``ccbench._core``) are loaded only by what needs them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: Public name -> module that defines it.
_LAZY = {
    "run": "api",
    "load": "api",
    "load_spec": "api",
    "list_ccas": "api",
    "describe_cca": "api",
    "sweep": "api",
    "RunResult": "results",
    "Experiment": "spec",
    "SpecError": "spec",
    "CcbenchError": "errors",
    "OutputDirError": "errors",
    "PreflightError": "errors",
    "PreflightWarning": "errors",
    "ResultsError": "errors",
    "RunInterrupted": "errors",
    "RunTooLarge": "errors",
    "EngineError": "engine",
    "EngineUnavailable": "engine",
    "Cca": "pycca",
    "PythonCcaError": "pycca",
}

__all__ = [
    "Cca",
    "CcbenchError",
    "EngineError",
    "EngineUnavailable",
    "Experiment",
    "OutputDirError",
    "PreflightError",
    "PreflightWarning",
    "PythonCcaError",
    "ResultsError",
    "RunInterrupted",
    "RunResult",
    "RunTooLarge",
    "SpecError",
    "__version__",
    "describe_cca",
    "list_ccas",
    "load",
    "load_spec",
    "run",
    "sweep",
]

if TYPE_CHECKING:
    from .api import describe_cca, list_ccas, load, load_spec, run, sweep
    from .engine import EngineError, EngineUnavailable
    from .errors import (
        CcbenchError,
        OutputDirError,
        PreflightError,
        PreflightWarning,
        ResultsError,
        RunInterrupted,
        RunTooLarge,
    )
    from .pycca import Cca, PythonCcaError
    from .results import RunResult
    from .spec import Experiment, SpecError


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ccbench' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
