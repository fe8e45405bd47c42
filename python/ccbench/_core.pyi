"""Type stub of the compiled engine binding (crates/ccsim-py)."""

from typing import Any

import numpy as np
import numpy.typing as npt

Column = npt.NDArray[Any] | tuple[npt.NDArray[np.uint32], list[str]]

def engine_version() -> str: ...
def list_ccas() -> str:
    """JSON list of {name, summary, reference, params: [{name, default (JSON text), doc}]}."""

def check_cca(name: str, params_json: str) -> None:
    """Raise ValueError if `name` is unknown or `params_json` does not fit it."""

def run(config_json: str) -> dict[str, Any]:
    """Run a resolved config; {"tables": {name: {column: Column}}, "stats": {name: int}}.
    Raises ValueError for an invalid config, RuntimeError for an engine bug."""
