"""``ccbench profile`` and the profile branch of ``ccbench compare``.

    ccbench profile CCA [--vs OTHER ...] [--scale quick|full] [--backend sim|linux]
                    [-o DIR] [--rules FILE] [-j N] [--no-progress]
    ccbench compare PROFILE_DIR PROFILE_DIR... [-o FILE]
"""

from __future__ import annotations

import html
import math
import sys
from pathlib import Path
from typing import Any

import click
from rich.markup import escape
from rich.table import Table

from ..signals import exit_status

#: Per experiment, the headline number ``compare`` shows: (experiment, metric, how).
HEADLINES = (
    ("q1-buffers", "util", "min"),
    ("q1-buffers", "queue/buffer", "max"),
    ("q1-buffers", "retx %", "max"),
    ("q1-bw-changes", "t90_3_ma5s", "max"),
    ("q1-random-loss", "util", "min"),
    ("q2-staggered", "conv_s", "max"),
    ("q2-rtt", "JFI flows", "min"),
    ("q2-competing", "share[x]", "min"),
    ("q2-competing", "share[x]", "max"),
    ("q2-elastic", "phase2_median_mbps/ideal", "min"),
)


def _console() -> Any:
    from rich.console import Console

    return Console(highlight=False, soft_wrap=False, width=None if sys.stdout.isatty() else 240)


@click.command("profile")
@click.argument("cca")
@click.option("--vs", "vs", multiple=True, metavar="OTHER", help="a competing CCA for Q2 (repeatable; CUBIC always)")
@click.option("--scale", type=click.Choice(["quick", "full"]), default="quick", show_default=True,
              help="quick: 20 Mbit/s, 40 s, 1 repetition; full: the recipe's 100 Mbit/s, 300 s, 3 repetitions")  # fmt: skip
@click.option("--backend", type=click.Choice(["sim", "linux"]), default="sim", show_default=True)
@click.option("-o", "--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="profile directory (default runs/profile-CCA-SCALE); rerunning resumes")  # fmt: skip
@click.option("--rules", type=click.Path(dir_okay=False, exists=True, path_type=Path), default=None,
              help="a rules file replacing the shipped one (docs/profile.md)")  # fmt: skip
@click.option("--only", multiple=True, metavar="EXPERIMENT", help="run only this experiment (repeatable; docs/profile.md)")
@click.option("-j", "--workers", type=click.IntRange(min=1), default=None, help="worker processes")
@click.option("--no-progress", is_flag=True, help="no progress bars")
def profile_cmd(
    cca: str, vs: tuple[str, ...], scale: str, backend: str, out_dir: Path | None, rules: Path | None,
    only: tuple[str, ...], workers: int | None, no_progress: bool,
) -> None:  # fmt: skip
    """Run the recipe's performance profile of CCA (Q1 path unpredictability, Q2 cross
    traffic, Q3 workload dynamics) and write an HTML report with its headline findings,
    flagged by the rules of docs/profile.md. Experiments that need a capability the
    library lacks are listed as such."""
    from ..cli import _fail, _user_errors
    from ..suites.run import InlineExecutor
    from .run import run_profile

    options: dict[str, Any] = {"workers": workers}
    if scale == "quick" and backend == "sim" and workers is None:
        # seconds of engine CPU in all: starting worker processes per experiment costs more
        options = {"executor": InlineExecutor()}
    with _user_errors():
        try:
            prof = run_profile(cca, list(vs), out_dir, scale=scale, backend=backend, rules=rules, only=only,
                               progress=not no_progress, **options)  # fmt: skip
        except ValueError as e:
            _fail(str(e))
        except KeyboardInterrupt:
            click.echo("interrupted: complete runs are kept; run the same command again to resume", err=True)
            sys.exit(exit_status())
    console = _console()
    for q in ("Q1", "Q2", "Q3"):
        for exp in (x for x in prof.experiments if x["question"] == q):
            state = f"{exp.get('complete', 0)}/{exp['runs']} runs"
            if exp["needs"]:
                state += "; needs " + "; ".join(exp["needs"])
            console.print(escape(f"{q} {exp['id']}: {state}"))
    console.print("[bold]headline findings[/bold]")
    for f in prof.fired:
        console.print(escape(f"  {prof.cca} {f.text} [{f.rule}]"))
    if not prof.fired:
        console.print("  none flagged")
    console.print(escape(f"report: {prof.report}"))
    if any(e.get("failed") for e in prof.experiments):
        sys.exit(1)


def _headline(prof: Any, experiment: str, metric: str, how: str) -> float:
    try:
        t = prof.table(experiment)
    except KeyError:
        return math.nan
    if t.empty or metric not in t.columns:
        return math.nan
    v = [float("inf") if x == "inf" else float(x) for x in t[metric] if x is not None]
    v = [x for x in v if not math.isnan(x)]
    return (min(v) if how == "min" else max(v)) if v else math.nan


def compare_profiles(sources: list[Path], out_file: Path | None) -> None:
    """``ccbench compare`` of profile directories: the flags of every rule and the
    headline numbers side by side."""
    from ..suites.report import CSS
    from .run import load_profile

    profs = [load_profile(s) for s in sources]
    labels = [f"{p.cca} ({p.scale}, {p.backend})" for p in profs]
    rules = list(dict.fromkeys(f.rule for p in profs for f in p.findings))
    t = Table(title="profiles side by side (flagged findings: docs/profile.md)")
    t.add_column("rule / metric")
    for lab in labels:
        t.add_column(escape(lab), justify="right")
    rows: list[list[str]] = []
    for rule in rules:
        cells = []
        for p in profs:
            f = next((f for f in p.findings if f.rule == rule), None)
            cells.append("-" if f is None else "FLAGGED" if f.fired else f.status)
        rows.append([rule, *cells])
    for exp, metric, how in HEADLINES:
        rows.append([f"{how} {metric} ({exp})", *(_num(_headline(p, exp, metric, how)) for p in profs)])
    for r in rows:
        t.add_row(*(escape(c) if c != "FLAGGED" else "[bold red]FLAGGED[/]" for c in r))
    _console().print(t)
    if out_file is not None:
        head = "".join(f"<th>{html.escape(c)}</th>" for c in ["rule / metric", *labels])
        body = "".join(
            "<tr>" + "".join(f"<td{' class=bad' if c == 'FLAGGED' else ''}>{html.escape(c)}</td>" for c in r) + "</tr>"
            for r in rows
        )
        out_file.write_text(
            f"<!doctype html><meta charset=utf-8><title>ccbench profiles</title><style>{CSS}</style>"
            f"<h1>Profiles side by side</h1><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
        )
        click.echo(str(out_file))


def _num(x: float) -> str:
    return "never" if x == math.inf else "-" if math.isnan(x) else f"{x:.3g}"
