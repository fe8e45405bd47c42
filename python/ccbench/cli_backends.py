"""CLI commands about backends: ``ccbench backends``, ``ccbench linux cleanup`` and
``ccbench compare-backends``, and a progress bar for kernel runs (which take real
time). Registered on the ``ccbench`` group by :mod:`ccbench.cli`."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from .cli import _console, _fail, _user_errors, cli
from .signals import exit_status

#: The shell's status for a command ended by SIGTERM (128 + 15).
EXIT_TERMINATED = 143


@contextmanager
def _interruptible() -> Iterator[None]:
    """Ctrl-C or SIGTERM during a kernel run: the run has already stopped its tools and
    removed its namespaces (in ``finally``) by the time this sees the exception."""
    from .backends.linux.runner import Terminated

    try:
        yield
    except (KeyboardInterrupt, Terminated) as e:
        click.echo("interrupted: the kernel run was stopped and its namespaces removed; nothing was saved", err=True)
        sys.exit(EXIT_TERMINATED if isinstance(e, Terminated) else exit_status())


def run_with_progress(exp: Any, target: Path, *, overwrite: bool, backend: str | None) -> Any:
    """``api.run`` with a progress bar over the experiment's duration."""
    from . import api

    with _interruptible(), Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.completed:.0f}/{task.total:.0f} s"),
        TimeRemainingColumn(), console=_console(), transient=True,
    ) as bar:  # fmt: skip
        task = bar.add_task(
            f"{backend or api.spec_backend(exp)}: {exp.experiment.name}", total=exp.experiment.duration / 1e9
        )

        def progress(done: float, total: float) -> None:
            bar.update(task, completed=done, total=total)

        return api.run(exp, target, overwrite=overwrite, backend=backend, progress=progress)


@cli.command("backends")
@click.option("--json", "as_json", is_flag=True, help="print the capabilities as JSON")
def backends_cmd(as_json: bool) -> None:
    """What each backend offers on this machine (CCAs, qdiscs, netem, offloads, root)."""
    from . import api

    with _user_errors():
        caps = api.backends()
    if as_json:
        click.echo(json.dumps(caps, indent=2, default=str))
        return
    t = Table(title="backends")
    t.add_column("backend", style="bold")
    t.add_column("available")
    t.add_column("details")
    for name, c in caps.items():
        details = []
        for key, value in c.items():
            if key in ("available", "reason"):
                continue
            if isinstance(value, dict):
                value = ", ".join(f"{k}={'yes' if v is True else 'no' if v is False else v}" for k, v in value.items())
            elif isinstance(value, list):
                value = " ".join(map(str, value))
            details.append(f"{key}: {value}")
        avail = "yes" if c.get("available") else f"no: {c.get('reason', '')}"
        t.add_row(escape(name), escape(avail), escape("\n".join(details)))
    _console().print(t)


@cli.group("linux")
def linux_group() -> None:
    """The linux backend's housekeeping."""


@linux_group.command("cleanup")
@click.option("--dry-run", is_flag=True, help="list what would be removed")
def linux_cleanup_cmd(dry_run: bool) -> None:
    """Remove what crashed kernel runs left: namespaces named ccbl-* (with their links
    and processes) whose run is no longer alive. Live runs are left alone."""
    from .backends.linux import ROOT_MESSAGE, system
    from .backends.linux.netns import cleanup_leftovers

    if not system.is_root():
        _fail(ROOT_MESSAGE.replace("the linux backend needs root", "cleanup needs root"))
    with _user_errors():
        done = cleanup_leftovers(dry_run=dry_run)
    verb = "would remove" if dry_run else "removed"
    click.echo(
        f"{verb} {len(done['removed'])} namespace(s)" + (f": {' '.join(done['removed'])}" if done["removed"] else "")
    )
    if done["kept"]:
        click.echo(f"kept {len(done['kept'])} namespace(s) of live runs: {' '.join(done['kept'])}")


@cli.command("compare-backends")
@click.argument("spec", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--seeds", type=int, default=1, show_default=True, help="simulator runs (seeds from the spec's)")
@click.option("--reps", type=int, default=1, show_default=True, help="kernel runs")
@click.option("-o", "--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), help="keep every run here")
@click.option("--markdown", is_flag=True, help="print the table as Markdown (for docs)")
@click.option("--json", "as_json", is_flag=True, help="print the comparison as JSON")
def compare_backends_cmd(
    spec: Path, seeds: int, reps: int, out_dir: Path | None, markdown: bool, as_json: bool
) -> None:
    """Run SPEC on the simulator and on the kernel and compare each metric against the
    stated tolerances (share ±5 pp, Jain ±0.03, utilization ±2 pp, retransmissions ×2,
    sRTT ±15 %). Exit status 1 when a metric is outside its tolerance."""
    from .backends.compare import compare_backends

    console = _console()
    with _user_errors(), _interruptible():
        total = seeds + reps
        done = [0]

        def on_run(backend: str, k: int, count: int) -> None:
            done[0] += 1
            console.print(f"[{done[0]}/{total}] {backend} run {k + 1} of {count}", highlight=False)

        cmp = compare_backends(spec, seeds=seeds, reps=reps, out_dir=out_dir, on_run=on_run)
    if as_json:
        click.echo(json.dumps({"spec": cmp.spec_name, "backends": cmp.backends, "rows": cmp.rows, "runs": cmp.runs},
                              indent=2, default=_json_default))  # fmt: skip
    elif markdown:
        click.echo(cmp.to_markdown())
    else:
        a, b = cmp.backends
        t = Table(title=escape(f"{cmp.spec_name}: {a} ({seeds} seed(s)) vs {b} ({reps} run(s))"))
        for col in ("metric", a, b, "difference", "tolerance", "within"):
            t.add_column(col)
        for line in cmp.to_markdown().splitlines()[2:]:
            cells = [c.strip() for c in line.strip("|").split("|")]
            t.add_row(*(escape(c.replace("**", "")) for c in cells))
        console.print(t)
    if not cmp.all_within:
        sys.exit(1)


def _json_default(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, tuple):
        return list(x)
    return str(x)
