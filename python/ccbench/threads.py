"""Idle BLAS threads (issue 19).

NumPy's OpenBLAS starts one worker thread per core when NumPy is imported; they burn
CPU doing nothing for ccbench's workloads (no large matrix products), about 0.1 CPU-s
per process. OpenBLAS reads ``OPENBLAS_NUM_THREADS`` once, when it is loaded, so the
limit has to be in a process's environment before NumPy is imported there:

- the CLI sets it in its own process at start-up (:func:`limit_blas_threads`);
- the local sweep executor starts its fork server and workers inside
  :func:`blas_limited_environ`, so workers are limited whoever started the sweep
  (the CLI or the Python API ``ccbench.sweep``);
- Dask's nanny sets the same variables for the worker processes it spawns
  (``distributed.nanny.pre-spawn-environ``).

A value the user set is always kept.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager

__all__ = ["BLAS_LIMITS", "blas_limited_environ", "limit_blas_threads"]

#: Environment variables that bound BLAS thread pools, and the bound.
BLAS_LIMITS: dict[str, str] = {"OPENBLAS_NUM_THREADS": "1"}


def limit_blas_threads(environ: MutableMapping[str, str] | None = None) -> None:
    """Set each :data:`BLAS_LIMITS` variable in ``environ`` (default ``os.environ``)
    unless it is already set."""
    env = os.environ if environ is None else environ
    for k, v in BLAS_LIMITS.items():
        env.setdefault(k, v)


@contextmanager
def blas_limited_environ() -> Iterator[None]:
    """Within the block, ``os.environ`` has the BLAS limits (where the user set none),
    so processes started inside it inherit them; afterwards the environment is as
    before."""
    added = [k for k in BLAS_LIMITS if k not in os.environ]
    limit_blas_threads()
    try:
        yield
    finally:
        for k in added:
            os.environ.pop(k, None)
