"""Backends: what runs a validated spec and turns it into result tables.

Every backend takes the same :class:`~ccbench.spec.Experiment` and returns the same
tables (``docs/results-format.md``: the required columns always, the optional ones
when the backend can measure them). :func:`ccbench.api.run` adds the common manifest
keys (spec, ``derived``, versions, host, timing); metrics read only the spec,
``derived`` and the tables, so a new backend is one module here plus one line in
:data:`BACKENDS`.

=========  ============================================================
``sim``    the deterministic packet-level engine (``ccbench._core``)
``linux``  real Linux TCP stacks in network namespaces (root only)
=========  ============================================================
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # pyarrow only for the annotation: `ccbench list` must not import it
    import pyarrow as pa

    from ..spec import Experiment

__all__ = [
    "BACKENDS",
    "Backend",
    "BackendError",
    "BackendRun",
    "BackendUnavailable",
    "get_backend",
]


class BackendError(ValueError):
    """A backend cannot run this spec (it needs something the backend or this machine
    lacks). ``problems`` lists one sentence per missing thing."""

    def __init__(self, backend: str, problems: list[str]):
        self.backend = backend
        self.problems = problems
        if len(problems) == 1:
            text = f"the {backend} backend cannot run this spec: {problems[0]}"
        else:
            text = f"the {backend} backend cannot run this spec ({len(problems)} problems):\n" + "\n".join(
                f"  {p}" for p in problems
            )
        super().__init__(text)

    def __reduce__(self) -> tuple[type[BackendError], tuple[str, list[str]]]:
        # By constructor arguments, so the error crosses process boundaries (sweeps).
        return (type(self), (self.backend, self.problems))


class BackendUnavailable(BackendError):
    """The backend cannot run anything here (not root, a tool missing, engine not built)."""


ProgressFn = Callable[[float, float], None]
"""``progress(done_s, total_s)``: called now and then while a run is under way."""


@dataclass
class BackendRun:
    """What a backend returns: the result tables, and the manifest keys that only this
    backend knows (e.g. ``engine_config``/``stats`` for ``sim``; ``linux`` for the
    kernel run's topology, offloads and tool versions)."""

    tables: dict[str, pa.Table]
    manifest: dict[str, Any] = field(default_factory=dict)
    wall_time_s: float = 0.0


class Backend(Protocol):
    """The interface every backend implements."""

    name: str

    def capabilities(self) -> dict[str, Any]:
        """What this backend offers on this machine (printed by ``ccbench backends``)."""
        ...

    def check(self, exp: Experiment) -> None:
        """Raise :class:`BackendError` naming everything ``exp`` needs that is missing,
        before anything is started."""
        ...

    def versions(self) -> dict[str, str]:
        """Versions of what produced the results (engine, kernel, tools)."""
        ...

    def run(self, exp: Experiment, *, progress: ProgressFn | None = None) -> BackendRun:
        """Run ``exp`` (already checked) and return its tables."""
        ...


#: Backend name -> "module:attribute" of a zero-argument factory. Imported lazily, so
#: that the simulator path never imports the kernel machinery and vice versa.
BACKENDS: dict[str, str] = {
    "sim": "ccbench.backends.sim:SimBackend",
    "linux": "ccbench.backends.linux:LinuxBackend",
}


def get_backend(name: str) -> Backend:
    """The backend called ``name``; ``ValueError`` naming the known ones otherwise."""
    target = BACKENDS.get(name)
    if target is None:
        raise ValueError(f"{name!r} is not a backend; known: {', '.join(BACKENDS)}")
    module, attr = target.split(":")
    factory = getattr(importlib.import_module(module), attr)
    backend: Backend = factory()
    return backend
