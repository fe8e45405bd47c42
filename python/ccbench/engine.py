"""The one place that talks to the compiled engine, ``ccbench._core``.

``_core`` is imported lazily, on first use, so that ``import ccbench`` (and everything
that does not run a simulation: spec validation with a given CCA catalog, results
loading, metrics) works in a checkout where the extension has not been built.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from types import ModuleType
from typing import Any

from .errors import CcbenchError, RunTooLarge

__all__ = [
    "CcaCatalog",
    "CcaInfo",
    "CcaParam",
    "EngineError",
    "EngineUnavailable",
    "catalog",
    "config_schema",
    "core",
    "engine_version",
    "result_schema",
    "run_config",
]

HEADER_BYTES = 52
"""IP + TCP + timestamp-option header bytes of every segment. Mirrors
``HEADER_BYTES`` in ``crates/ccsim/src/net/mod.rs`` (MSS 1448 gives 1500-byte packets);
used to turn a buffer in bytes into packets and back. Kept here so specs validate without
the compiled engine; ``tests/test_result_schema.py`` checks it against
``_core.result_schema()["header_bytes"]``."""

SYN_WIRE_BYTES = 60
"""Wire bytes of a SYN (IPv4 + TCP + Linux's SYN options). Mirrors ``SYN_WIRE_BYTES`` in
``crates/ccsim/src/net/mod.rs``, checked like ``HEADER_BYTES`` (``syn_wire_bytes``); a
target ``load`` counts it (``spec.flows.FlowSpec.mean_wire_bytes``)."""


class EngineUnavailable(CcbenchError, ImportError):
    """The compiled engine (``ccbench._core``) is not built or cannot be loaded."""


class EngineError(CcbenchError, ValueError):
    """The engine rejected a configuration or failed while running it."""


def core() -> ModuleType:
    """Import and return ``ccbench._core``, with a clear error when it is not built."""
    try:
        return importlib.import_module("ccbench._core")
    except ImportError as e:
        raise EngineUnavailable(
            f"the simulation engine (ccbench._core) is not available ({e}); build it with 'make install'"
        ) from e


def engine_available() -> bool:
    try:
        core()
    except EngineUnavailable:
        return False
    return True


def engine_version() -> str:
    return str(core().engine_version())


def result_schema() -> dict[str, Any]:
    """What the engine's recorder writes: ``{"tables": [{name, columns: [{name, type}]}],
    "stats": [key], "header_bytes": int, "udp_header_bytes": int, "syn_wire_bytes": int}``
    (docs/results-format.md)."""
    return dict(json.loads(core().result_schema()))


def config_schema() -> dict[str, Any]:
    """The JSON Schema of the resolved configuration the engine runs (what
    ``Experiment.resolve()`` produces), generated from ``crates/ccsim/src/config.rs``:
    every field, its type, whether it is required and the engine's default."""
    return dict(json.loads(core().config_schema()))


@dataclass(frozen=True)
class CcaParam:
    """One tunable parameter of a CCA: name, default (a JSON value) and doc line."""

    name: str
    default: Any
    doc: str = ""


@dataclass(frozen=True)
class CcaInfo:
    """A registered CCA, as ``_core.list_ccas()`` describes it."""

    name: str
    summary: str = ""
    reference: str = ""
    params: tuple[CcaParam, ...] = ()
    family: str = ""
    family_doc: str = ""


@dataclass(frozen=True)
class CcaCatalog:
    """The CCAs a spec may name, and a check of their parameters.

    :meth:`from_engine` reads the engine's registry and uses ``_core.check_cca`` for
    parameters; tests build one from a list of :class:`CcaInfo`, which then checks
    only parameter names.
    """

    ccas: tuple[CcaInfo, ...]
    use_engine_check: bool = field(default=False)

    @classmethod
    def from_engine(cls) -> CcaCatalog:
        raw = json.loads(core().list_ccas())
        ccas = tuple(
            CcaInfo(
                name=c["name"],
                summary=c.get("summary", ""),
                reference=c.get("reference", ""),
                family=c.get("family", ""),
                family_doc=c.get("family_doc", ""),
                params=tuple(
                    CcaParam(
                        p["name"],
                        json.loads(p["default"]) if isinstance(p["default"], str) else p["default"],
                        p.get("doc", ""),
                    )
                    for p in c.get("params", [])
                ),
            )
            for c in raw
        )
        return cls(ccas, use_engine_check=True)

    @classmethod
    def of(cls, ccas: Sequence[CcaInfo | str]) -> CcaCatalog:
        return cls(tuple(CcaInfo(c) if isinstance(c, str) else c for c in ccas))

    def names(self) -> list[str]:
        return [c.name for c in self.ccas]

    def get(self, name: str) -> CcaInfo | None:
        return next((c for c in self.ccas if c.name == name), None)

    @staticmethod
    def _param_hints(info: CcaInfo, params: dict[str, Any]) -> str:
        """What each given parameter means, in its unit, with its default: the engine's
        type errors ("expected u32") do not say that CUBIC's beta is scaled by 1024."""
        hints = [
            f"{p.name} is {_kind(p.default)}: {p.doc} (default {json.dumps(p.default)})"
            for p in info.params
            if p.name in params
        ]
        return "; " + "; ".join(hints) if hints else ""

    def check(self, name: str, params: dict[str, Any]) -> None:
        """Raise ``ValueError`` naming the problem if ``params`` do not fit CCA ``name``."""
        info = self.get(name)
        if info is None:
            raise ValueError(f"{name!r} is not a known CCA; known: {', '.join(self.names())}")
        if self.use_engine_check:
            try:
                core().check_cca(name, json.dumps(params))
            except ValueError as e:
                raise ValueError(f"{e}{self._param_hints(info, params)}") from None
            return
        known = [p.name for p in info.params]
        for key in params:
            if key not in known:
                raise ValueError(
                    f"{key!r} is not a parameter of CCA {name!r}; known: {', '.join(known) if known else '(none)'}"
                )


def _kind(default: Any) -> str:
    """The type of a parameter, read from its default."""
    if isinstance(default, bool):
        return "true or false"
    if isinstance(default, int):
        return "an integer"
    if isinstance(default, float):
        return "a number"
    return f"a {type(default).__name__}"


@cache
def _engine_catalog() -> CcaCatalog:
    return CcaCatalog.from_engine()


def catalog() -> CcaCatalog | None:
    """The engine's CCA catalog, or ``None`` when the engine is not built."""
    try:
        return _engine_catalog()
    except EngineUnavailable:
        return None


#: Signature of a progress callback: (simulated ns so far, duration ns, events so far).
ProgressCallback = Callable[[int, int, int], object]
#: Signature of a table sink: (table name, its columns as the binding gives them).
TableSink = Callable[[str, dict[str, Any]], object]


def run_config(
    config: dict[str, Any],
    *,
    progress: ProgressCallback | None = None,
    keep_partial: bool = False,
    max_recorded_bytes: int | None = None,
    progress_interval_s: float = 0.1,
    python_ccas: dict[str, Callable[[str], Any]] | None = None,
    sink: TableSink | None = None,
    chunk_rows: int = 1 << 18,
) -> dict[str, Any]:
    """Run a resolved engine configuration; returns the binding's raw result dict.

    The engine checks for Ctrl-C and calls ``progress`` every ``progress_interval_s`` of
    wall time; Ctrl-C raises ``KeyboardInterrupt``, unless ``keep_partial``, which
    returns the tables so far with ``"interrupted": True``. A run whose recorded
    samples and events outgrow ``max_recorded_bytes`` stops with :class:`RunTooLarge`.
    ``python_ccas`` maps each ``python:`` CCA name to a factory (:func:`ccbench.pycca.factories`);
    a hook that fails raises :class:`~ccbench.pycca.PythonCcaError` caused by the user's exception.
    With ``sink``, the tables that grow with simulated time are handed to
    ``sink(name, columns)`` in chunks of at least ``chunk_rows`` rows as the run goes
    (:class:`ccbench.runwriter.RunWriter` writes them to Parquet); the returned tables
    hold the rows after the last chunk.
    """
    text = json.dumps(config)
    mod = core()
    try:
        return mod.run(
            text,
            progress=progress,
            keep_partial=keep_partial,
            max_recorded_bytes=max_recorded_bytes,
            progress_interval_s=progress_interval_s,
            python_ccas=python_ccas or None,
            sink=sink,
            chunk_rows=chunk_rows,
        )
    except mod.CcaError as e:
        from .pycca import PythonCcaError

        raise PythonCcaError(str(e)) from e.__cause__
    except ValueError as e:
        raise EngineError(f"the engine rejected the configuration: {e}") from e
    except MemoryError as e:
        raise RunTooLarge(
            f"{e}; the run was stopped before exhausting memory. Record less (a larger "
            "experiment.sample_interval, fewer flows) or a shorter experiment.duration"
        ) from None
