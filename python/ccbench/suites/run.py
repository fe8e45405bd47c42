"""Running a reproduction suite: each scenario's sweep into its own directory, then the
study report over them.

    OUT/suite.json                  {"suite", "scale", "scenarios": [...]}
    OUT/<scenario name>/            one sweep directory per scenario (docs/sweeps.md)
    OUT/report.html, OUT/report.md  the study report (ccbench.suites.report)
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..sweeps.executors import Executor
from ..sweeps.worker import RunTask, execute
from .catalog import ScenarioPlan, needs, plan_scenario, select

__all__ = ["SUITE_JSON", "InlineExecutor", "ScenarioOutcome", "SuiteOutcome", "run_suite", "suite_dirs"]

SUITE_JSON = "suite.json"


@dataclass
class ScenarioOutcome:
    id: str
    kind: str
    directory: Path | None
    planned: int = 0
    complete: int = 0
    failed: int = 0
    needs: list[str] = field(default_factory=list)
    # runs that failed for another reason than a missing capability
    unexpected_failures: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class SuiteOutcome:
    name: str
    scale: str
    out_dir: Path
    scenarios: list[ScenarioOutcome]
    report: Path | None = None

    @property
    def ok(self) -> bool:
        """Every run that can run today completed."""
        return not any(s.unexpected_failures for s in self.scenarios)


def default_dir(name: str, scale: str) -> Path:
    return Path("runs") / "suites" / f"{name.replace('/', '-')}-{scale}"


def _needed_run(rec: dict[str, Any]) -> bool:
    """A failed run whose cause is a spec the library cannot express yet."""
    return rec.get("error_type", "SpecError") == "SpecError"


def run_suite(
    name: str,
    out_dir: str | os.PathLike[str] | None = None,
    *,
    scale: str = "quick",
    report: bool = True,
    **sweep_options: Any,
) -> SuiteOutcome:
    """Run the suite ``name`` (a study such as ``"recipe"`` or one scenario id) at
    ``scale`` (``paper``, ``quick`` or ``tiny``) into ``out_dir``; resumable like any
    sweep. Scenarios that need a missing capability run what they can; their needs are
    in the outcome and the report. ``report=False`` runs only: the study report (which
    reads every run's tables, minutes for the largest scenarios) is left for
    :func:`~ccbench.suites.report.write_report` (``ccbench suites --report DIR``) to build
    later from the same directory. ``sweep_options`` go to :func:`ccbench.sweeps.run_sweep`."""
    from ..sweeps.runner import run_sweep

    chosen = select(name)
    root = Path(out_dir) if out_dir is not None else default_dir(name, scale)
    root.mkdir(parents=True, exist_ok=True)
    (root / SUITE_JSON).write_text(
        json.dumps({"suite": name, "scale": scale, "scenarios": [s.id for s in chosen]}, indent=2) + "\n"
    )
    outcomes = []
    for sc in chosen:
        sp: ScenarioPlan = plan_scenario(sc, scale)
        out = ScenarioOutcome(sc.id, sc.kind, None, needs=needs(sp))
        if sc.kind == "runs" and sp.plan is not None:
            target = root / sc.name
            rep = run_sweep(sp.plan.spec, target, **sweep_options)
            out.directory = target
            out.planned, out.complete, out.failed = rep.planned, rep.complete, len(rep.failed)
            out.unexpected_failures = [r for r in rep.failed if not _needed_run(r)]
        outcomes.append(out)
    result = SuiteOutcome(name, scale, root, outcomes)
    if report:
        from .report import write_report

        result.report = write_report(root)
    return result


def suite_dirs(root: str | os.PathLike[str]) -> tuple[dict[str, Any], dict[str, Path]]:
    """The suite.json of a suite directory and each scenario's sweep directory."""
    path = Path(root)
    try:
        meta = json.loads((path / SUITE_JSON).read_text())
    except (OSError, ValueError):
        raise FileNotFoundError(
            f"{path}: not a suite directory (no readable {SUITE_JSON}); run `ccbench sweep --suite`"
        ) from None
    dirs = {sid: path / sid.split("/", 1)[1] for sid in meta.get("scenarios", [])}
    return meta, {k: v for k, v in dirs.items() if (v / "sweep.json").exists()}



class InlineExecutor(Executor):
    """Runs each task in this process, one after the other (``sweeps.worker.execute``,
    the same function every executor runs): no worker start-up, for tiny suites and
    tests. ``ccbench sweep --suite ... --scale tiny`` uses it."""

    workers = 1

    def run(self, tasks: Sequence[RunTask]) -> Iterator[dict[str, Any]]:
        for task in tasks:
            yield execute(task)

    def describe(self) -> str:
        return "inline (this process)"
