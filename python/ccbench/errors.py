"""The errors ccbench raises on purpose, in one light module (no heavy imports).

Every class derives from :class:`CcbenchError` and from the built-in exception a caller
would expect (``ValueError`` for bad input, ``ImportError`` for a missing engine), and
every one pickles and unpickles intact, so an error raised in a worker process (a sweep
executor, ``multiprocessing.Pool.map``) reaches the parent unchanged.
"""

from __future__ import annotations

__all__ = [
    "CcbenchError",
    "OutputDirError",
    "PreflightError",
    "PreflightWarning",
    "ResultsError",
    "RunInterrupted",
    "RunTooLarge",
]


class CcbenchError(Exception):
    """Base of every error ccbench raises on purpose."""


class ResultsError(CcbenchError, ValueError):
    """A results directory is missing, incomplete, damaged or of an unknown format."""


class OutputDirError(CcbenchError, ValueError):
    """The output directory must not receive a run (a symlink, a file, a directory that
    is not a ccbench run), even with ``overwrite``."""


class PreflightError(CcbenchError, ValueError):
    """The pre-flight check found that a valid spec cannot run well here (a buffer
    smaller than one packet, more memory than the machine has, an unwritable output
    directory). ``problems`` lists the messages."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        if len(self.problems) == 1:
            text = self.problems[0]
        else:
            text = f"{len(self.problems)} problems:\n" + "\n".join(f"  {p}" for p in self.problems)
        super().__init__(text)

    def __reduce__(self) -> tuple[type[PreflightError], tuple[list[str]]]:
        return (type(self), (self.problems,))


class RunTooLarge(CcbenchError, MemoryError):
    """A run was stopped because what it records outgrew its memory budget (instead of
    failing an allocation, which would abort the process)."""

    def __reduce__(self) -> tuple[type[RunTooLarge], tuple[object, ...]]:
        # MemoryError's own __new__ cannot rebuild a subclass; rebuild by constructor.
        return (type(self), self.args)


class PreflightWarning(UserWarning):
    """The pre-flight check's warnings (a flow that cannot deliver, a slow access link,
    a long estimated run), issued with :func:`warnings.warn` from the Python API."""


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a run started with ``save_partial``: what was simulated is saved
    at ``path`` with ``"status": "interrupted"``. A ``KeyboardInterrupt``, so code that
    does not know about partial runs still stops."""

    def __init__(self, path: object = None):
        self.path = path
        super().__init__(f"interrupted; the part simulated so far is saved in {path}" if path else "interrupted")

    def __reduce__(self) -> tuple[type[RunInterrupted], tuple[object]]:
        return (type(self), (self.path,))
