"""``ccbench sweep`` and ``ccbench results`` (registered on the main CLI group).

    ccbench sweep SPEC [-o DIR] [--dry-run] [-j N | --dask local|tcp://host:8786]
                  [--retry-failed] [--timeout S] [--max-attempts N] [--stream] [--no-progress]
    ccbench sweep --suite NAME [--scale S] [--no-report] [the options above]
    ccbench results DIR [--status S] [-f COL=VALUE]... [--where SQL] [-c COLS] [--sort COL]
                  [--limit N] [--format table|csv|json]

Exit status of ``sweep``: 0 when every run is complete, 1 when some failed (the
summary says which and where to read why), 2 for bad input, 130 when interrupted.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import click
from rich.markup import escape
from rich.table import Table

from ..signals import exit_status

EXIT_RUNS_FAILED = 1

#: Columns shown by ``ccbench results`` after the parameters, with their headers.
_SHOWN = (
    ("goodput_bps", "goodput Mbit/s"),
    ("utilization", "util"),
    ("jain", "Jain"),
    ("retransmission_pct", "retrans %"),
    ("wall_time_s", "wall s"),
)


def _console() -> Any:
    from rich.console import Console

    # Wide in logs and pipes (rich would otherwise wrap at 80 columns).
    return Console(highlight=False, soft_wrap=False, width=None if sys.stdout.isatty() else 240)


def _fmt(value: Any, column: str = "") -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    if column == "goodput_bps":
        return f"{value / 1e6:.2f}"
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 1e6 else f"{value:.4g}"
    return str(value)


@click.command("sweep")
@click.argument("spec", type=click.Path(dir_okay=False, path_type=Path), required=False)
@click.option(
    "--suite",
    default=None,
    metavar="NAME",
    help="run a shipped reproduction suite (a study or one scenario id; `ccbench suites`) instead of SPEC",
)
@click.option(
    "--scale",
    type=click.Choice(["quick", "paper", "tiny"]),
    default="quick",
    show_default=True,
    help="with --suite: the study's own scale, or shrunk (docs/reproduction.md)",
)
@click.option(
    "-o",
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="sweep directory (default: runs/<sweep name>); rerunning into it resumes",
)
@click.option("--dry-run", is_flag=True, help="list the runs, their parameters and cost; run nothing")
@click.option(
    "-j",
    "--workers",
    type=click.IntRange(min=1),
    default=None,
    help="worker processes (default: one per core); with --dask local, LocalCluster workers",
)
@click.option(
    "--dask",
    "dask",
    metavar="ADDRESS",
    default=None,
    help="run on Dask: 'local' starts a LocalCluster, or a scheduler address such as tcp://host:8786",
)
@click.option("--retry-failed", is_flag=True, help="run again the runs recorded as failed")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="stop a run after this many seconds and record it as failed (local executor)",
)
@click.option(
    "--max-attempts",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    help="attempts of a run whose worker process dies",
)
@click.option(
    "--stream", is_flag=True, help="with --dask: workers send results back instead of writing to a shared directory"
)
@click.option("--force", is_flag=True, help="run what the pre-flight check refuses only for its estimated cost")
@click.option(
    "--only", "only", multiple=True, metavar="EXPR",
    help="run only the combinations where EXPR holds (a sweep filter over its parameters, e.g. "
    "'rate_mbit <= 1000'; repeatable); the runs keep their ids, so a later run without it completes the rest",
)  # fmt: skip
@click.option("--no-progress", is_flag=True, help="no progress bar or progress lines")
@click.option(
    "--no-report", is_flag=True,
    help="with --suite: run only, without building the study report (build it later with `ccbench suites --report DIR`)",
)  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="with --dry-run: print the plan as JSON lines")
def sweep_cmd(
    spec: Path | None, suite: str | None, scale: str, out_dir: Path | None, dry_run: bool, workers: int | None,
    dask: str | None, retry_failed: bool,
    timeout: float | None, max_attempts: int, stream: bool, force: bool, only: tuple[str, ...], no_progress: bool,
    no_report: bool, as_json: bool,
) -> None:  # fmt: skip
    """Run the sweep SPEC (an experiment spec with a [sweep] table) into a directory.

    Runs already complete there are skipped, so an interrupted or extended sweep
    resumes. See docs/sweeps.md."""
    from ..cli import _fail, _user_errors
    from .plan import load_sweep
    from .runner import EngineChanged, SweepBusy, run_sweep

    if stream and dask is None:
        _fail("--stream applies to the Dask executor; add --dask local or --dask tcp://host:8786")
    if (spec is None) == (suite is None):
        _fail("give either a sweep SPEC or --suite NAME")
    if no_report and suite is None:
        _fail("--no-report applies to --suite (a sweep of SPEC builds no report; `ccbench report DIR` writes one)")
    if suite is not None:
        from ..suites.cli import run_suite_cli

        run_suite_cli(
            suite, scale, out_dir, workers=workers, dask=dask, dry_run=dry_run, retry_failed=retry_failed,
            timeout=timeout, max_attempts=max_attempts, stream=stream, progress=not no_progress, force=force,
            only=only, report=not no_report,
        )  # fmt: skip
        return
    assert spec is not None
    with _user_errors():
        try:
            sweep = load_sweep(spec)
            target = out_dir if out_dir is not None else Path("runs") / sweep.name
            report = run_sweep(
                sweep, target, workers=workers, dask=dask, dry_run=dry_run, retry_failed=retry_failed,
                timeout=timeout, max_attempts=max_attempts, stream=stream, progress=not no_progress, force=force,
                only=only,
            )  # fmt: skip
        except (EngineChanged, SweepBusy) as e:
            _fail(str(e))
        except KeyboardInterrupt:
            click.echo(
                f"interrupted: complete runs are kept; run the same command again to resume ({target})", err=True
            )
            sys.exit(exit_status())
        except ConnectionError as e:
            _fail(str(e))
    if dry_run:
        _print_plan(report, target, as_json)
        return
    _print_report(report)
    if report.failed:
        sys.exit(EXIT_RUNS_FAILED)


def _print_plan(report: Any, target: Path, as_json: bool) -> None:
    from ..preflight import human_seconds
    from .runner import _state
    from .store import SweepLayout

    plan = report.plan
    layout = SweepLayout(target)
    state = _state(layout, plan, False) if layout.root.is_dir() else {}
    columns = plan.spec.columns()
    if as_json:
        for r in plan.runs:
            click.echo(json.dumps({
                "plan_index": r.index, "run_id": r.run_id, "state": "invalid" if r.error else state.get(r.run_id, "pending"),
                "params": r.params, "repetition": r.repetition, "seed": r.seed, "est_packets": r.est_packets, "est_cpu_s": r.est_cpu_s,
                "error": r.error,
            }, sort_keys=True))  # fmt: skip
        return
    t = Table(title=escape(f"sweep {plan.spec.name}: {len(plan.runs)} runs (dry run)"))
    for col in ("#", "run_id", "state", *columns, "rep", "seed", "est. packets", "est. CPU"):
        t.add_column(escape(col), justify="right" if col in ("#", "rep", "est. packets", "est. CPU") else "left")
    for r in plan.runs:
        st = "invalid" if r.error else state.get(r.run_id, "pending")
        t.add_row(
            str(r.index), r.run_id, st, *(escape(_fmt(r.params.get(c))) for c in columns), str(r.repetition),
            str(r.seed), f"{r.est_packets:,}" if r.est_packets is not None else "-",
            human_seconds(r.est_cpu_s) if r.est_cpu_s is not None else "-",
        )  # fmt: skip
    console = _console()
    console.print(t)
    total = sum(r.est_packets or 0 for r in plan.runs)
    pending = [r for r in plan.runs if state.get(r.run_id, "pending") == "pending" and not r.error]
    todo = sum(r.est_packets or 0 for r in pending)
    cpu = sum(r.est_cpu_s or 0.0 for r in pending)
    lines = [
        f"{len(plan.runs)} runs = {len(plan.runs) // plan.spec.sweep.repetitions} combinations x "
        f"{plan.spec.sweep.repetitions} repetition(s)" + (f"; {plan.dropped} run(s) dropped by filters/exclude" if plan.dropped else ""),
        f"already complete in {target}: {report.complete}; invalid: {len(plan.invalid)}",
        f"estimated cost (ccbench.preflight): {total:,} simulated data packets in all, "
        f"{todo:,} still to run, ~{human_seconds(cpu)} of engine CPU",
        f"engine {plan.engine_version}",
    ]  # fmt: skip
    for line in lines:
        console.print(escape(line))
    for r in plan.invalid[:10]:
        console.print(f"[red]invalid[/red] {r.run_id} {escape(json.dumps(r.params))}: {escape(r.error or '')}")


def _print_report(report: Any) -> None:
    console = _console()
    n_failed = len(report.failed)
    head = (
        f"sweep {report.name}: {report.planned} runs: {report.complete} complete "
        f"({report.skipped} already complete, {report.ran} run now), {n_failed} failed"
        + (f", {report.pending} pending" if report.pending else "")
    )
    console.print(escape(head))
    if report.executor:
        console.print(escape(f"executor: {report.executor}; wall time {report.wall_time_s:.1f} s"))
    console.print(escape(f"results: {report.out_dir} (index: {report.out_dir / 'index.parquet'})"))
    if n_failed:
        for rec in report.failed[:10]:
            console.print(
                f"[red]failed[/red] {rec.get('run_id')} "
                + escape(f"{json.dumps(rec.get('params', {}))}: {rec.get('error_type')}: {str(rec.get('error'))[:300]}")
            )
        if n_failed > 10:
            console.print(escape(f"... and {n_failed - 10} more"))
        console.print(
            escape(
                f"why: {report.out_dir / 'failed'}/<run_id>.json, or `ccbench results {report.out_dir} --status failed`; "
                "rerun with --retry-failed to try them again"
            )
        )


@click.command("results")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--status", type=click.Choice(["complete", "failed", "pending"]), default=None, help="only runs with this status"
)
@click.option(
    "-f",
    "--filter",
    "filters",
    multiple=True,
    metavar="COL=VALUE",
    help="only runs whose column equals the value (repeatable)",
)
@click.option("--where", default=None, metavar="SQL", help='a DuckDB SQL condition, e.g. "k >= 2 AND jain < 0.9"')
@click.option(
    "-c", "--columns", default=None, help="comma-separated columns to show (default: parameters and headline metrics)"
)
@click.option("--sort", "sort_by", default=None, metavar="COL", help="sort by this column (prefix '-' for descending)")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="show at most this many rows")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table", show_default=True)
def results_cmd(
    directory: Path, status: str | None, filters: tuple[str, ...], where: str | None, columns: str | None,
    sort_by: str | None, limit: int | None, fmt: str,
) -> None:  # fmt: skip
    """Print the index of the sweep in DIRECTORY, filtered and sorted."""
    from ..cli import _fail, _user_errors
    from .results import SweepResults

    with _user_errors():
        sw = SweepResults(directory)
        df = sw.runs
    if status is not None:
        df = df[df["status"] == status]
    for f in filters:
        col, sep, value = f.partition("=")
        if not sep or col not in df.columns:
            _fail(f"--filter {f!r}: expected COL=VALUE with COL one of: {', '.join(df.columns)}")
        series = df[col]
        try:
            mask = series.astype(float) == float(value) if series.dtype.kind in "iuf" else series.astype(str) == value
        except ValueError:
            _fail(f"--filter {f!r}: column {col!r} is numeric and {value!r} is not a number")
        df = df[mask]
    if where is not None:
        df = _where(df, where)
    if sort_by is not None:
        col = sort_by.lstrip("-")
        if col not in df.columns:
            _fail(f"--sort {sort_by!r}: not a column; columns: {', '.join(df.columns)}")
        df = df.sort_values(col, ascending=not sort_by.startswith("-"), kind="stable")
    total = len(df)
    if limit is not None:
        df = df.head(limit)
    if columns is not None:
        wanted = [c.strip() for c in columns.split(",") if c.strip()]
        unknown = [c for c in wanted if c not in df.columns]
        if unknown:
            _fail(f"--columns: unknown {', '.join(unknown)}; columns: {', '.join(df.columns)}")
    else:
        wanted = ["run_id", "status", *sw.columns, "repetition", *(c for c, _ in _SHOWN), "error"]
    df = df[wanted]
    if fmt == "csv":
        click.echo(df.to_csv(index=False), nl=False)
        return
    if fmt == "json":
        click.echo(df.to_json(orient="records", lines=True), nl=False)
        return
    headers = dict(_SHOWN)
    t = Table(
        title=escape(
            f"sweep {sw.name}: {total} of {len(sw.runs)} runs" + (f" (first {len(df)})" if len(df) < total else "")
        )
    )
    for c in wanted:
        t.add_column(escape(headers.get(c, "rep" if c == "repetition" else c)))
    for row in df.itertuples(index=False):
        cells = []
        for c, v in zip(wanted, row, strict=True):
            text = _fmt(v, c)
            cells.append(escape(text[:80] + ("…" if len(text) > 80 else "")))
        t.add_row(*cells)
    _console().print(t)
    counts = sw.runs["status"].value_counts().to_dict()
    _console().print(escape(", ".join(f"{n} {s}" for s, n in sorted(counts.items())) + f"; engine {sw.engine_version}"))


def _where(df: Any, condition: str) -> Any:
    """Filter with a DuckDB SQL condition over the index DataFrame."""
    from ..cli import _fail

    try:
        import duckdb
    except ImportError:
        _fail("--where needs DuckDB: pip install 'ccbench[sweep]' (or use --filter COL=VALUE)")
    con = duckdb.connect()
    try:
        con.register("runs", df)
        return con.execute(f"SELECT * FROM runs WHERE {condition}").df()
    except duckdb.Error as e:
        _fail(f'--where {condition!r}: {str(e).splitlines()[0]} (quote column names with dots: "bottleneck.rate")')
    finally:
        con.close()
