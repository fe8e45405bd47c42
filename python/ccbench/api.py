"""The Python entry points: run a spec, load results, list the CCAs."""

from __future__ import annotations

import os
import platform
import socket
import sys
import time
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from . import engine
from . import results as _results
from .results import FORMAT_VERSION, RunResult
from .spec import Experiment, load_spec

__all__ = ["list_ccas", "load", "load_spec", "run"]


def _versions() -> dict[str, str]:
    import numpy
    import pandas
    import pyarrow
    import pydantic

    from . import __version__

    return {
        "ccbench": __version__,
        "engine": engine.engine_version(),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "pandas": pandas.__version__,
        "pyarrow": pyarrow.__version__,
        "pydantic": pydantic.VERSION,
    }


def _host() -> dict[str, Any]:
    return {
        "hostname": socket.gethostname(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "python_implementation": platform.python_implementation(),
        "python_executable": sys.executable,
    }


def run(
    spec: str | os.PathLike[str] | Mapping[str, Any] | Experiment,
    out_dir: str | os.PathLike[str] | None = None,
    *,
    seed: int | None = None,
    overwrite: bool = False,
) -> RunResult:
    """Run one experiment on the simulation engine.

    ``spec`` is a TOML path, a dict or an :class:`Experiment`; ``seed`` overrides
    ``experiment.seed``. With ``out_dir`` the result is also saved there atomically.
    Raises :class:`~ccbench.spec.SpecError` for an invalid spec,
    :class:`~ccbench.engine.EngineError` when the engine rejects the configuration and
    :class:`~ccbench.engine.EngineUnavailable` when the engine is not built.
    """
    exp = load_spec(spec if not isinstance(spec, Experiment) else spec.to_dict())
    if seed is not None:
        exp = exp.with_seed(seed)
    if out_dir is not None and Path(out_dir).exists() and not overwrite:
        raise FileExistsError(f"{out_dir} already exists; choose another directory or overwrite it")
    config = exp.resolve()
    started = datetime.now(timezone.utc)
    t0 = time.perf_counter()
    cpu0 = time.process_time()
    raw = engine.run_config(config)
    wall = time.perf_counter() - t0
    engine_cpu = time.process_time() - cpu0
    manifest: dict[str, Any] = {
        "format_version": FORMAT_VERSION,
        "backend": "sim",
        "name": exp.experiment.name,
        "seed": exp.experiment.seed,
        "spec": exp.to_dict(),
        "derived": exp.derived(),
        "engine_config": config,
        "versions": _versions(),
        "host": _host(),
        "started_at": started.isoformat(),
        "wall_time_s": round(wall, 6),
        # CPU seconds of the simulation alone (no start-up, no file writing): the figure
        # comparable with ns-3's own `run_cpu_s`.
        "engine_cpu_s": round(engine_cpu, 6),
        "stats": {k: int(v) for k, v in raw.get("stats", {}).items()},
        "status": "complete",
    }
    result = RunResult(tables=_results.tables_from_engine(raw["tables"]), manifest=manifest)
    if out_dir is not None:
        _results.save(result, out_dir, overwrite=overwrite)
    return result


def load(path: str | os.PathLike[str]) -> RunResult:
    """Load a run directory written by :func:`run` (see ``docs/results-format.md``)."""
    return _results.load(path)


def list_ccas() -> list[dict[str, Any]]:
    """The engine's CCAs: ``[{name, summary, reference, params: [{name, default, doc}]}]``
    with each default decoded from JSON."""
    cat = engine.CcaCatalog.from_engine()
    return [
        {
            "name": c.name,
            "summary": c.summary,
            "reference": c.reference,
            "params": [{"name": p.name, "default": p.default, "doc": p.doc} for p in c.params],
        }
        for c in cat.ccas
    ]
