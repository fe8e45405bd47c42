"""The Python entry points: run a spec, load results, list the CCAs."""

from __future__ import annotations

import os
import platform
import socket
import sys
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from . import engine
from . import results as _results
from .backends import BACKENDS, Backend, ProgressFn, get_backend
from .errors import PreflightWarning, RunInterrupted
from .results import FORMAT_VERSION, RunResult
from .runwriter import STREAM_CHUNK_ROWS, RunWriter
from .spec import Experiment, SpecWarning, load_spec

__all__ = ["backends", "describe_cca", "list_ccas", "load", "load_spec", "run", "spec_backend", "sweep"]


def _versions(backend: Backend) -> dict[str, str]:
    import numpy
    import pandas
    import pyarrow
    import pydantic

    from . import __version__

    return {
        "ccbench": __version__,
        **backend.versions(),
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
    backend: str | None = None,
    progress: ProgressFn | None = None,
    force: bool = False,
    save_partial: bool = False,
    on_warning: Callable[[str], None] | None = None,
    before_save: Callable[[RunResult], None] | None = None,
) -> RunResult:
    """Run one experiment on a backend: ``"sim"`` (the simulation engine, the default)
    or ``"linux"`` (real kernels in network namespaces; needs root).

    ``spec`` is a TOML path, a dict or an :class:`Experiment`; ``seed`` overrides
    ``experiment.seed``; ``backend`` overrides ``experiment.backend``. With ``out_dir``
    the result is also saved there atomically (``out_dir`` may be new or an empty
    directory; a previous run is replaced only with ``overwrite``; see
    :mod:`ccbench.rundir`).

    Before a simulation, the pre-flight check (:mod:`ccbench.preflight`) refuses a run
    that cannot work or fit (:class:`~ccbench.errors.PreflightError`; estimated cost
    above the thresholds is refused unless ``force``) and reports its warnings to
    ``on_warning`` (default: :func:`warnings.warn` with :class:`PreflightWarning`).
    ``progress(done_s, total_s)`` is called about ten times a second; a callback with
    an ``events`` parameter also gets the engine's event count
    (:class:`ccbench.progress.ProgressDisplay` draws it).

    Ctrl-C raises ``KeyboardInterrupt`` within a fraction of a second and writes
    nothing; with ``save_partial`` the simulated part is saved to ``out_dir`` with
    ``"status": "interrupted"`` and :class:`~ccbench.errors.RunInterrupted` (a
    ``KeyboardInterrupt``) is raised carrying its path.

    ``before_save(result)`` is called with the complete result before it is saved (or
    returned, without ``out_dir``): it may read every table and add manifest keys (a
    sweep adds its metrics), so the run directory appears with them at once.

    Raises :class:`~ccbench.spec.SpecError` for an invalid spec,
    :class:`~ccbench.backends.BackendError` when the backend cannot run it (naming what
    is missing), :class:`~ccbench.engine.EngineError` when the engine rejects the
    configuration and :class:`~ccbench.engine.EngineUnavailable` when the engine is not built.
    """
    if isinstance(spec, Experiment):
        exp = load_spec(spec.to_dict())
    elif isinstance(spec, Mapping):
        exp = load_spec(spec)
    else:
        exp = load_spec(os.fspath(spec))
    if seed is not None:
        exp = exp.with_seed(seed)
    for message in exp.warnings():
        if on_warning is not None:
            on_warning(message)
        else:
            warnings.warn(message, SpecWarning, stacklevel=2)
    if out_dir is not None:
        # Before any run: never let a long run end on "cannot write there".
        _results.prepare_target(out_dir, overwrite=overwrite)
    name = backend if backend is not None else spec_backend(exp)
    runner = get_backend(name)
    runner.check(exp)
    options: dict[str, Any] = {}
    if name == "sim":
        from . import preflight

        check = preflight.check(exp, out_dir)
        check.raise_if_refused(force=force)
        for message in check.all_warnings(force=force):
            if on_warning is not None:
                on_warning(message)
            else:
                warnings.warn(message, PreflightWarning, stacklevel=2)
        options = {
            "keep_partial": save_partial and out_dir is not None,
            "max_recorded_bytes": preflight.recorded_bytes_budget(),
        }
    # With a directory to write to, the simulator streams its growing tables into it
    # while it runs (ccbench.runwriter): memory then depends on flows and the sample
    # interval, not on the simulated time.
    writer = RunWriter(out_dir, overwrite=overwrite) if out_dir is not None and name == "sim" else None
    if writer is not None:
        options.update(sink=writer.sink, chunk_rows=STREAM_CHUNK_ROWS)
    try:
        result, interrupted = _run_and_save(
            exp, name, runner, progress, options, _Saving(out_dir, overwrite, writer, before_save)
        )
    except BaseException:
        if writer is not None:
            writer.abort()
        raise
    if interrupted:
        raise RunInterrupted(result.path)
    return result


@dataclass
class _Saving:
    """Where and how :func:`run` saves a result."""

    out_dir: str | os.PathLike[str] | None
    overwrite: bool
    writer: RunWriter | None
    before_save: Callable[[RunResult], None] | None


def _run_and_save(
    exp: Experiment, name: str, runner: Backend, progress: ProgressFn | None, options: dict[str, Any], saving: _Saving
) -> tuple[RunResult, bool]:
    """Run ``exp`` on ``runner``, add the common manifest keys and save the result."""
    started = datetime.now(timezone.utc)
    out = runner.run(exp, progress=progress, **options)
    interrupted = bool(out.manifest.pop("interrupted", False))
    _results.check_columns(out.tables)
    manifest: dict[str, Any] = {
        "format_version": FORMAT_VERSION,
        "backend": name,
        "name": exp.experiment.name,
        "seed": exp.experiment.seed,
        "spec": exp.to_dict(),
        "derived": exp.derived(),
        "versions": _versions(runner),
        "host": _host(),
        "started_at": started.isoformat(),
        "wall_time_s": round(out.wall_time_s, 6),
        **out.manifest,
        "status": "interrupted" if interrupted else "complete",
    }
    result = RunResult(tables=out.tables, manifest=manifest)
    if saving.writer is not None:
        saving.writer.commit(result, before_save=saving.before_save)
        return result, interrupted
    if saving.before_save is not None:
        saving.before_save(result)
    if saving.out_dir is not None:
        _results.save(result, saving.out_dir, overwrite=saving.overwrite)
    return result, interrupted


def spec_backend(exp: Experiment) -> str:
    """The backend a spec asks for (``experiment.backend``; ``"sim"`` by default)."""
    return str(getattr(exp.experiment, "backend", None) or "sim")


def backends() -> dict[str, dict[str, Any]]:
    """Every backend's capabilities on this machine (what ``ccbench backends`` prints)."""
    return {name: get_backend(name).capabilities() for name in BACKENDS}


def load(path: str | os.PathLike[str], *, allow_partial: bool = False) -> Any:
    """Load a run directory written by :func:`run` (a :class:`RunResult`), or a sweep
    directory written by :func:`sweep` (a :class:`~ccbench.sweeps.SweepResults`); see
    ``docs/results-format.md``. ``allow_partial`` also reads a run saved on Ctrl-C with
    ``save_partial`` (status ``"interrupted"``)."""
    from .sweeps.results import SweepResults, is_sweep_dir

    if is_sweep_dir(path):
        return SweepResults(path)
    return _results.load(path, allow_partial=allow_partial)


def sweep(spec: Any, out_dir: str | os.PathLike[str], **options: Any) -> Any:
    """Run a sweep (a sweep spec file, dict or :class:`~ccbench.sweeps.SweepSpec`) into
    ``out_dir``, resuming whatever is already complete there; returns a
    :class:`~ccbench.sweeps.SweepReport`. Options: ``workers``, ``dask`` ("local" or
    "tcp://host:8786"), ``dry_run``, ``retry_failed``, ``timeout``, ``max_attempts``,
    ``stream``, ``progress`` (see :func:`ccbench.sweeps.run_sweep` and ``docs/sweeps.md``)."""
    from .sweeps import run_sweep

    return run_sweep(spec, out_dir, **options)


def list_ccas() -> list[dict[str, Any]]:
    """The engine's CCAs: ``[{name, family, family_doc, summary, reference, params:
    [{name, default, doc}]}]`` with each default decoded from JSON."""
    cat = engine.CcaCatalog.from_engine()
    return [_cca_dict(c) for c in cat.ccas]


def describe_cca(name: str) -> dict[str, Any]:
    """One CCA as :func:`list_ccas` describes it (a ``python:`` name: its class's
    docstring and constructor parameters); ``ValueError`` naming the known CCAs if
    ``name`` is not one of them."""
    from . import pycca

    if pycca.is_python_cca(name):
        return pycca.describe(name)
    cat = engine.CcaCatalog.from_engine()
    info = cat.get(name)
    if info is None:
        raise ValueError(f"{name!r} is not a known CCA; known: {', '.join(cat.names())}")
    return _cca_dict(info)


def _cca_dict(c: engine.CcaInfo) -> dict[str, Any]:
    return {
        "name": c.name,
        "family": c.family,
        "family_doc": c.family_doc,
        "summary": c.summary,
        "reference": c.reference,
        "params": [{"name": p.name, "default": p.default, "doc": p.doc} for p in c.params],
    }
