"""``ccbench suites`` and the ``--suite`` path of ``ccbench sweep``.

    ccbench suites [NAME] [--scale quick|paper|tiny ...] [--needs] [--report DIR] [--json]
    ccbench sweep --suite NAME [--scale quick|paper|tiny] [-o DIR] [--no-report] [sweep options]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
from rich.markup import escape
from rich.table import Table

from ..signals import exit_status


def _console() -> Any:
    from rich.console import Console

    return Console(highlight=False, soft_wrap=False, width=None if sys.stdout.isatty() else 240)


def _status(sp: Any) -> str:
    sc = sp.scenario
    if sc.kind == "view":
        return "view over " + ", ".join(sc.view_of)
    if sc.kind == "undescribed":
        return "nothing to run: " + sc.undescribed
    if sp.error is not None:
        return "needs (below); 0 runnable"
    if sp.valid_runs == sp.runs:
        return "ready"
    return f"needs (below); {sp.valid_runs} of {sp.runs} runnable"


def _row(sp: Any) -> dict[str, Any]:
    from .catalog import needs

    return {
        "scenario": sp.scenario.id,
        "scale": sp.scale,
        "kind": sp.scenario.kind,
        "runs": sp.runs,
        "runnable": sp.valid_runs,
        "est_packets": sp.packets,
        "est_cpu_s": round(sp.cpu_s, 3),
        "status": _status(sp),
        "needs": needs(sp),
        "preserves": sp.scenario.preserves(sp.scale),
    }


@click.command("suites")
@click.argument("name", required=False)
@click.option(
    "--scale",
    "scales",
    type=click.Choice(["quick", "paper", "tiny"]),
    multiple=True,
    help="scales to size (repeatable; default: quick and paper)",
)
@click.option("--report", "report_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="(re)build the study report of the suite run in DIR instead of listing")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="one JSON object per scenario and scale")
def suites_cmd(name: str | None, scales: tuple[str, ...], report_dir: Path | None, as_json: bool) -> None:
    """List the reproduction suites: every scenario of the five studies with its size
    (runs, simulated packets, estimated engine CPU) and what it needs that is missing.

    Sizes are the pre-flight's estimates (docs/preflight.md). A scenario
    'needs' what its spec validation rejects today (an unknown key, table or CCA)."""
    from ..cli import _fail, _user_errors
    from ..preflight import human_seconds
    from .catalog import STUDIES, SuiteError, plan_scenario, scenarios, select

    if report_dir is not None:
        from .report import write_report

        with _user_errors():
            try:
                click.echo(str(write_report(report_dir)))
            except FileNotFoundError as e:
                _fail(str(e))
        return
    try:
        chosen = select(name) if name else scenarios()
    except SuiteError as e:
        _fail(str(e))
    scales = scales or ("quick", "paper")
    rows = [_row(plan_scenario(sc, s)) for sc in chosen for s in scales]
    if as_json:
        for r in rows:
            click.echo(json.dumps(r, sort_keys=True))
        return
    console = _console()
    t = Table(title="reproduction suites (ccbench sweep --suite NAME --scale quick|paper)")
    t.add_column("scenario")
    for s in scales:
        t.add_column(f"{s}: runs", justify="right")
        t.add_column(f"{s}: packets", justify="right")
        t.add_column(f"{s}: CPU", justify="right")
    t.add_column("status")
    by_id: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_id.setdefault(r["scenario"], []).append(r)
    study = None
    for sid, rs in by_id.items():
        if sid.split("/")[0] != study:
            study = sid.split("/")[0]
            doc, title = STUDIES[study]
            t.add_section()
            t.add_row(f"[bold]{escape(study)}[/bold] ({doc}: {escape(title)})")
        cells = []
        for r in rs:
            runs = f"{r['runnable']}/{r['runs']}" if r["runnable"] != r["runs"] else str(r["runs"])
            cells += [runs, f"{r['est_packets']:.2g}" if r["est_packets"] else "-",
                      human_seconds(r["est_cpu_s"]) if r["est_cpu_s"] else "-"]  # fmt: skip
        t.add_row(escape(sid), *(escape(c) for c in cells), escape(rs[-1]["status"]))
    console.print(t)
    needs_seen: dict[str, list[str]] = {}
    for sid, rs in by_id.items():
        for r in rs:
            for n in r["needs"]:
                needs_seen.setdefault(n, [])
                if sid not in needs_seen[n]:
                    needs_seen[n].append(sid)
    if needs_seen:
        console.print("[bold]needs[/bold] (what spec validation rejects today, and the scenarios it blocks):")
        for n, sids in needs_seen.items():
            console.print(escape(f"  {n}\n      {', '.join(sids)}"))
    for s in scales:
        total = [r for r in rows if r["scale"] == s]
        console.print(
            escape(
                f"{s}: {sum(r['runnable'] for r in total)} runnable runs of {sum(r['runs'] for r in total)}, "
                f"~{human_seconds(sum(r['est_cpu_s'] for r in total))} engine CPU (estimate)"
            )
        )


def run_suite_cli(name: str, scale: str, out_dir: Path | None, *, report: bool = True, **options: Any) -> None:
    """``ccbench sweep --suite NAME``: run every scenario, print one line each and
    where the report is (``report=False``, ``--no-report``: build none; ``ccbench suites
    --report DIR`` builds it later from the same directory). Exit 1 when a run that can run today failed, 0 otherwise (runs
    blocked by a missing capability are listed, not counted as failures)."""
    from ..cli import _fail, _user_errors
    from ..sweeps.runner import EngineChanged, SweepBusy
    from .catalog import SuiteError
    from .run import InlineExecutor, run_suite

    console = _console()
    if scale == "tiny" and options.get("workers") is None and options.get("dask") is None:
        # seconds of simulated time: starting worker processes would cost more than the runs
        options = {**options, "executor": InlineExecutor()}
    with _user_errors():
        try:
            dry = bool(options.get("dry_run"))
            outcome = run_suite(name, out_dir, scale=scale, report=report and not dry, **options)
        except (SuiteError, EngineChanged, SweepBusy) as e:
            _fail(str(e))
        except KeyboardInterrupt:
            click.echo("interrupted: complete runs are kept; run the same command again to resume", err=True)
            sys.exit(exit_status())
    for s in outcome.scenarios:
        if s.kind != "runs":
            console.print(escape(f"{s.id}: {s.kind} (no runs of its own)"))
            continue
        line = f"{s.id}: {s.complete}/{s.planned} complete"
        if dry:
            line = f"{s.id}: {s.planned} runs planned, {s.complete} already complete (dry run)"
        elif s.failed:
            line += f", {s.failed} failed ({len(s.unexpected_failures)} unexpectedly)"
        console.print(escape(line))
        for n in s.needs:
            console.print(escape(f"    needs {n}"))
        for rec in s.unexpected_failures[:5]:
            console.print(f"    [red]failed[/red] {escape(str(rec.get('run_id')))}: "
                          f"{escape(str(rec.get('error_type')))}: {escape(str(rec.get('error'))[:300])}")  # fmt: skip
    console.print(escape(f"suite {name} ({scale}): {outcome.out_dir}"))
    if outcome.report is not None:
        console.print(escape(f"report: {outcome.report}"))
    elif not dry:
        console.print(escape(f"report: not built (--no-report); build it with `ccbench suites --report {outcome.out_dir}`"))
    if not outcome.ok:
        sys.exit(1)
