"""``ccbench report DIR``: one self-contained HTML file for a run or a sweep — the
spec, summary tables and figures (PNG inlined as data URIs, CSS and JavaScript
inline: no network access, no external file). A sweep's report adds the run index
(failed runs with their errors), the per-run metrics, the grid figures and an
interactive grid view with pickers for the metric and the axes."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from ..results import ResultsError
from ..runset import RunSet, open_results
from .build import run_report, sweep_report

__all__ = ["Progress", "build_report"]

#: ``progress(what, done, total)``: called as each step finishes.
Progress = Callable[[str, int, int], None]


def build_report(
    source: str | os.PathLike[str] | RunSet,
    out: str | os.PathLike[str] | None = None,
    *,
    progress: Progress | None = None,
) -> Path:
    """Write the report of the run or sweep ``source`` to ``out`` (default
    ``SOURCE/report.html``) atomically and return its path. A suite directory
    (``ccbench sweep --suite``, with or without ``--no-report``) or a profile directory
    gets its own report, written into it, as ``ccbench suites --report`` does."""
    if not isinstance(source, RunSet):
        own = _directory_report(Path(source), out)
        if own is not None:
            return own
    rs = source if isinstance(source, RunSet) else open_results(source)
    target = Path(out) if out is not None else rs.root / "report.html"
    html = run_report(rs, progress) if rs.kind == "run" else sweep_report(rs, progress)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    tmp.write_text(html, encoding="utf-8")
    os.replace(tmp, target)
    return target


def _directory_report(root: Path, out: str | os.PathLike[str] | None) -> Path | None:
    """The report of a suite or profile directory, or None for any other. Their runs
    would open as one sweep of unrelated scenarios, whose generic report would replace
    their own ``report.html``."""
    from ..profile.run import is_profile_dir, load_profile, write_profile_report
    from ..suites.run import SUITE_JSON

    kind = "suite" if (root / SUITE_JSON).is_file() else "profile" if is_profile_dir(root) else None
    if kind is None:
        return None
    if out is not None:
        raise ResultsError(f"{root} is a {kind} directory: its report (report.html) is written into it; drop -o/out")
    if kind == "suite":
        from ..suites.report import write_report

        return write_report(root)
    return write_profile_report(load_profile(root))
