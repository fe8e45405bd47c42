"""The ``ccbench`` command line.

    ccbench run SPEC [-o DIR] [--seed N] [--overwrite] [--force] [--quiet] [--save-partial]
    ccbench validate SPEC [--json] [--force]
    ccbench list [ccas]
    ccbench sweep SPEC [-o DIR] [--dry-run] [-j N | --dask ADDRESS] ...   (ccbench.sweeps.cli)
    ccbench results DIR [--status S] [--where SQL] ...
    ccbench plot RUN_OR_SWEEP KIND [-o FILE] [-f png|svg|pdf] [-O key=value ...]
    ccbench report RUN_OR_SWEEP [-o FILE]
    ccbench compare DIR DIR... [-o FILE] [--threshold 0.05]
    ccbench backends
    ccbench linux cleanup
    ccbench compare-backends SPEC [--seeds N --reps M]

Bad input (an invalid spec, a configuration the engine rejects, an unreadable file, a
run the pre-flight check refuses) prints one paragraph starting with ``error:`` on
stderr and exits with status 2; it never shows a traceback. Ctrl-C stops a run within
a fraction of a second and exits with status 130.

Start-up is kept short (``ccbench --help`` imports neither pydantic, pandas, pyarrow
nor the engine): heavy modules are imported inside the commands that need them.
"""

from __future__ import annotations

from .threads import limit_blas_threads

# NumPy's OpenBLAS starts a worker thread per core that burns CPU doing nothing for
# our workloads; one is enough. Set before anything imports NumPy; inherited by the
# processes a command starts (sweep workers).
limit_blas_threads()

import json  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from contextlib import contextmanager  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import TYPE_CHECKING, Any, NoReturn  # noqa: E402

import click  # noqa: E402

from . import __version__  # noqa: E402
from .errors import CcbenchError  # noqa: E402
from .signals import exit_status  # noqa: E402

if TYPE_CHECKING:
    from rich.console import Console

EXIT_BAD_INPUT = 2


def _fail(message: str) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(EXIT_BAD_INPUT)


@contextmanager
def _user_errors() -> Iterator[None]:
    """Turn the errors a user can cause into one paragraph on stderr and exit 2."""
    try:
        yield
    except KeyboardInterrupt as e:
        path = getattr(e, "path", None)
        saved = (
            f"; the part simulated so far is saved in {path} (status 'interrupted')"
            if path
            else "; nothing was written"
        )
        click.echo(f"interrupted{saved}", err=True)
        sys.exit(exit_status())
    except BrokenPipeError:
        raise  # the reader went away (`| head`): click exits quietly, as for `list`
    except FileExistsError as e:
        _fail(f"{e} (pass --overwrite to replace it)")
    except CcbenchError as e:  # SpecError, EngineError, ResultsError, PreflightError, ...
        _fail(str(e))
    except OSError as e:
        name = f" {e.filename}" if getattr(e, "filename", None) else ""
        _fail(f"cannot access{name}: {e.strerror or e}")
    except ValueError as e:
        _fail(str(e))
    except RuntimeError as e:  # an engine bug, not bad input: no traceback, but not status 2
        click.echo(f"error: {e}", err=True)
        sys.exit(1)


def _console() -> Console:
    from rich.console import Console

    return Console(highlight=False, soft_wrap=False)


def _warn(message: str) -> None:
    click.echo(f"warning: {message}", err=True)


def _mbit(bps: float) -> str:
    return "-" if not math.isfinite(bps) else f"{bps / 1e6:.2f}"


def _num(x: float, fmt: str = "{:.3f}") -> str:
    return "-" if x is None or (isinstance(x, float) and not math.isfinite(x)) else fmt.format(x)


class _LazyGroup(click.Group):
    """A group whose commands in :data:`LAZY` live in modules that import heavy
    libraries (sweeps: pandas, pyarrow, dask; backends: rich.progress, the linux
    backend); they are imported only when
    invoked, and ``--help`` lists them with the short help given here."""

    LAZY: dict[str, tuple[str, str, str]] = {
        "sweep": ("ccbench.sweeps.cli", "sweep_cmd", "Run the sweep SPEC (an experiment spec with a [sweep] table)..."),
        "results": (
            "ccbench.sweeps.cli",
            "results_cmd",
            "Print the index of the sweep in DIRECTORY, filtered and sorted.",
        ),
        "backends": (
            "ccbench.cli_backends",
            "backends_cmd",
            "What each backend offers on this machine (CCAs, qdiscs,...",
        ),
        "linux": ("ccbench.cli_backends", "linux_group", "The linux backend's housekeeping."),
        "compare-backends": (
            "ccbench.cli_backends",
            "compare_backends_cmd",
            "Run SPEC on the simulator and on the kernel and compare each...",
        ),
        # reproduction suites and the recipe's performance profile (ccbench.suites, ccbench.profile)
        "suites": ("ccbench.suites.cli", "suites_cmd", "List the reproduction suites: every scenario of the five..."),
        "profile": ("ccbench.profile.cli", "profile_cmd", "Run the recipe's performance profile of CCA (Q1 path..."),
    }

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.LAZY})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.LAZY and cmd_name not in self.commands:
            import importlib

            module, attr, _ = self.LAZY[cmd_name]
            self.add_command(getattr(importlib.import_module(module), attr), cmd_name)
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            if name in self.LAZY and name not in self.commands:
                rows.append((name, self.LAZY[name][2]))
                continue
            cmd = self.get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                rows.append(
                    (name, cmd.get_short_help_str(formatter.width - 6 - max(len(n) for n in self.list_commands(ctx))))
                )
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(version=__version__, prog_name="ccbench")
def cli() -> None:
    """ccbench: reproducible benchmarking of TCP congestion control."""


@cli.command("run")
@click.argument("spec", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "-o",
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="results directory: new, empty, or a previous run with --overwrite (default: runs/<experiment name>)",
)
@click.option("--seed", type=int, default=None, help="override experiment.seed")
@click.option("--overwrite", is_flag=True, help="replace a previous ccbench run in the results directory")
@click.option(
    "--backend",
    type=click.Choice(["sim", "linux"]),
    default=None,
    help="override experiment.backend: 'sim' (simulator) or 'linux' (real kernels in namespaces; root)",
)
@click.option("--force", is_flag=True, help="run even when the estimated memory or CPU time is over the thresholds")
@click.option("-q", "--quiet", is_flag=True, help="no progress display and no warnings")
@click.option(
    "--save-partial", is_flag=True, help="on Ctrl-C, save what was simulated (status 'interrupted') instead of nothing"
)
def run_cmd(
    spec: Path,
    out_dir: Path | None,
    seed: int | None,
    overwrite: bool,
    backend: str | None,
    force: bool,
    quiet: bool,
    save_partial: bool,
) -> None:
    """Run the experiment SPEC (a TOML file) and write its results."""
    from . import api
    from .progress import ProgressDisplay, choose_mode
    from .spec import load_spec

    with _user_errors():
        exp = load_spec(spec)
        if seed is not None:
            exp = exp.with_seed(seed)
        target = out_dir if out_dir is not None else Path("runs") / exp.experiment.name
        if (backend or api.spec_backend(exp)) != "sim":
            from .cli_backends import run_with_progress

            result = run_with_progress(exp, target, overwrite=overwrite, backend=backend)
            _print_summary(result, target)
            return
        display = ProgressDisplay(choose_mode(quiet), label=exp.experiment.name)
        try:
            result = api.run(
                exp,
                target,
                overwrite=overwrite,
                force=force,
                progress=display,
                save_partial=save_partial,
                on_warning=(lambda _m: None) if quiet else _warn,
            )
        finally:
            display.close()
        _print_summary(result, target)


def _setup_line(s: dict[str, Any]) -> list[tuple[str, str]]:
    """The handshakes' connection setup, when flows opened with one."""
    c = s.get("connection_setup")
    if not c:
        return []
    text = (
        f"{c['established']:.0f} of {c['connections']:.0f} established, median {_num(c['median_s'] * 1e3)} ms, "
        f"p99 {_num(c['p99_s'] * 1e3)} ms; {c['syn_resent']:.0f} resent their SYN, {c['failed']:.0f} failed"
    )
    return [("connection setup", text)]


def _drops_line(result: Any, s: dict[str, Any]) -> tuple[str, str]:
    """The bottleneck's drops over the window: from the engine's link counters (or the
    queue samples of a backend without them); unavailable is said, never shown as 0."""
    if s["drops"] is None:
        return ("bottleneck drops (window)", "unavailable: this run has neither link counters nor queue samples")
    return ("bottleneck drops (window)", f"{s['drops']} ({_num(s['drop_pct'], '{:.2f}')}% of arrivals)")


def _delay_line(s: dict[str, Any]) -> list[tuple[str, str]]:
    d = s.get("queue_delay") or {}
    if not d.get("samples"):
        return []
    return [("queueing delay p50 / p99", f"{d['p50_ns'] / 1e6:.2f} / {d['p99_ns'] / 1e6:.2f} ms")]


def _print_summary(result: Any, target: Path) -> None:
    from rich.markup import escape
    from rich.table import Table

    s = result.summary()
    console = _console()
    per_flow = s["flows"]
    if len(per_flow) <= 20:
        t = Table(title=escape(f"{result.manifest.get('name', '')}: per-flow goodput (measurement window)"))
        for col in ("flow", "group", "cca", "sender", "goodput Mbit/s", "retrans"):
            t.add_column(col, justify="right" if col in ("flow", "goodput Mbit/s", "retrans") else "left")
        for r in per_flow.itertuples(index=False):
            t.add_row(
                str(r.flow_id),
                escape(str(r.group)),
                escape(str(r.cca)),
                escape(str(r.sender_name)),
                _mbit(r.goodput_bps),
                str(r.segs_retrans),
            )
    else:
        t = Table(title=escape(f"{result.manifest.get('name', '')}: per-group goodput ({len(per_flow)} flows)"))
        for col in ("group", "flows", "mean goodput Mbit/s", "Jain"):
            t.add_column(col)
        jg = s["jain_by_group"].set_index("group")["jain"]
        for g, df in per_flow.groupby(per_flow["group"].astype(str), sort=True):
            t.add_row(
                escape(g), str(len(df)), _mbit(float(df["goodput_bps"].mean())), _num(float(jg.get(g, float("nan"))))
            )
    console.print(t)
    if "fct_by_size" in s:
        ft = Table(title="FCT slowdown (oFCT / eFCT) by flow size")
        for col in ("size", "flows", "completed", "median", "mean", "p99"):
            ft.add_column(col, justify="left" if col == "size" else "right")
        for r in s["fct_by_size"].itertuples(index=False):
            ft.add_row(escape(str(r.bucket)), str(r.flows), str(r.completed), _num(r.median), _num(r.mean), _num(r.p99))
        console.print(ft)
    lines = [
        ("total goodput", f"{_mbit(s['goodput_bps'])} Mbit/s"),
        ("Jain's index (all flows)", _num(s["jain"])),
        *([("Jain's index (per sender)", _num(s["jain_senders"]))] if math.isfinite(s["jain_senders"]) else []),
        ("utilization", _num(s["utilization"])),
        (
            f"retransmissions ({'window' if s['windows']['retransmissions'] == 'measurement window' else 'whole run'})",
            f"{s['retransmissions']} ({_num(s['retransmission_pct'], '{:.2f}')}% of delivered)",
        ),
        _drops_line(result, s),
        *_delay_line(s),
        *_setup_line(s),
        ("wall time", f"{result.manifest.get('wall_time_s', float('nan')):.2f} s"),
        ("results", str(target)),
    ]
    summary = Table(show_header=False, box=None)
    summary.add_column(style="bold")
    summary.add_column()
    for k, v in lines:
        summary.add_row(escape(k), escape(v))
    console.print(summary)


@cli.command("validate")
@click.argument("spec", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="print the resolved engine configuration as JSON")
@click.option("--force", is_flag=True, help="accept estimated memory or CPU time over the thresholds, as run --force")
def validate_cmd(spec: Path, as_json: bool, force: bool) -> None:
    """Check the experiment SPEC without running it: fields, then the pre-flight check
    (buffer, memory, cost estimate) that `ccbench run` makes before simulating."""
    from . import preflight
    from .engine import catalog
    from .spec import load_spec

    with _user_errors():
        exp = load_spec(spec)
        config = exp.resolve()
        check = preflight.check(exp, streamed=True)
        if as_json:
            check.raise_if_refused(force=force)
            click.echo(json.dumps(config, indent=2))
            return
        d = exp.derived()
        buf = d["buffer"]
        # A byte limit below one packet holds none (the pre-flight check refuses it).
        packets = (
            f"less than one {buf['packet_bytes']}-byte packet"
            if buf["bytes"] < buf["packet_bytes"]
            else f"{buf['packets']} packets"
        )
        click.echo(
            f"{spec}: valid. {exp.experiment.name}: {d['num_flows']} flows from {len(exp.senders)} sender(s), "
            f"{exp.experiment.duration / 1e9:g} s; bottleneck buffer {buf['bytes']} bytes = {packets} "
            f"({buf['qdisc']}; BDP {buf['bdp_bytes']} bytes at RTT {buf['bdp_rtt_ns'] / 1e6:g} ms)."
        )
        click.echo(check.estimate.describe() + ".")
        for message in [*exp.warnings(), *check.all_warnings(force=force)]:
            _warn(message)
        if catalog() is None:
            click.echo("note: the engine is not built, so CCA names and parameters were not checked.", err=True)
        check.raise_if_refused(force=force)


@cli.command("schema")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="write it here, not to stdout")
@click.option("--results", is_flag=True, help="the result tables' columns and types, stats keys and header sizes instead")
@click.option("--engine", is_flag=True, help="the JSON Schema of the resolved engine configuration instead")
def schema_cmd(output: Path | None, results: bool, engine: bool) -> None:
    """Print the JSON Schema of an experiment spec (fields, types, defaults) for editors
    and other tools; `ccbench validate` also checks the cross-field rules. With
    --results: the engine's description of what a run writes (docs/results-format.md).
    With --engine: the schema of the resolved configuration the engine runs, generated
    from its Rust types (the engine's defaults included)."""
    from .engine import config_schema, result_schema
    from .spec.schema import spec_json_schema

    if results and engine:
        raise click.UsageError("--results and --engine: give at most one")
    schema = result_schema() if results else config_schema() if engine else spec_json_schema()
    text = json.dumps(schema, indent=2) + "\n"
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text)


@cli.group("list", invoke_without_command=True)
@click.pass_context
def list_group(ctx: click.Context) -> None:
    """List what the engine provides (alone: the CCAs)."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(list_ccas_cmd)


@list_group.command("ccas")
@click.option("--markdown", is_flag=True, help="print docs/ccas.md: every CCA with its parameters")
def list_ccas_cmd(markdown: bool = False) -> None:
    """The congestion control algorithms: name, family, reference (one line each).

    `ccbench describe CCA` shows one with its parameters and defaults."""
    from rich.markup import escape

    from . import api

    with _user_errors():
        ccas = api.list_ccas()
    if markdown:
        from .cca_table import markdown as table

        click.echo(table(ccas), nl=False)
        return
    # Plain aligned lines, one per CCA, cut at the terminal width (never wrapped).
    w_name = max((len(c["name"]) for c in ccas), default=4)
    w_family = max((len(c["family"]) for c in ccas), default=6)
    console = _console()
    console.print(f"[bold]{'name':<{w_name}}  {'family':<{w_family}}  reference[/bold]", overflow="ellipsis", no_wrap=True)
    for c in ccas:
        line = f"{c['name']:<{w_name}}  {c['family']:<{w_family}}  {c['reference']}"
        console.print(escape(line), overflow="ellipsis", no_wrap=True, highlight=False)
    console.print(f"{len(ccas)} CCAs; `ccbench describe NAME` shows one with its parameters.", highlight=False)


@cli.command("describe")
@click.argument("cca")
def describe_cmd(cca: str) -> None:
    """One CCA: what it is, its family, references, parameters and defaults."""
    from rich.markup import escape
    from rich.table import Table

    from . import api

    with _user_errors():
        c = api.describe_cca(cca)
    console = _console()
    console.print(f"[bold]{escape(c['name'])}[/bold]: {escape(c['summary'])}")
    family = c["family"] + (f" ({c['family_doc']})" if c["family_doc"] else "")
    console.print(f"family: {escape(family)}")
    console.print(f"references: {escape(c['reference'])}")
    if not c["params"]:
        console.print("parameters: none")
        return
    t = Table(title="parameters (override per flow group with params = { name = value })")
    t.add_column("name", style="bold", no_wrap=True)
    t.add_column("default", no_wrap=True)
    t.add_column("meaning")
    for p in c["params"]:
        t.add_row(escape(p["name"]), escape(json.dumps(p["default"])), escape(p["doc"]))
    console.print(t)


def _plot_options(pairs: tuple[str, ...]) -> dict[str, Any]:
    """``key=value`` pairs; values are read as JSON when they parse (numbers, true),
    else kept as text."""
    out: dict[str, Any] = {}
    for pair in pairs:
        if "=" not in pair:
            raise ValueError(f"option {pair!r} is not key=value")
        k, v = pair.split("=", 1)
        try:
            out[k.strip()] = json.loads(v)
        except json.JSONDecodeError:
            out[k.strip()] = v
    return out


@cli.command("plot")
@click.argument("source", type=click.Path(path_type=Path))
@click.argument("kind", required=False)
@click.option(
    "-o",
    "--out",
    "out_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="output file (default: SOURCE/plots/KIND.FORMAT)",
)
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(["png", "svg", "pdf"]),
    default=None,
    help="file format (default: from --out's suffix, else png)",
)
@click.option(
    "-O",
    "--option",
    "options",
    multiple=True,
    metavar="KEY=VALUE",
    help="a plot option, e.g. -O by=group -O x=buffer_bdp (repeatable)",
)
@click.option("--list", "list_kinds", is_flag=True, help="list the plot kinds and their options")
def plot_cmd(
    source: Path, kind: str | None, out_file: Path | None, fmt: str | None, options: tuple[str, ...], list_kinds: bool
) -> None:
    """Draw plot KIND of the run or sweep in SOURCE (see --list)."""
    from rich.markup import escape
    from rich.table import Table

    from . import plots
    from .runset import open_results

    with _user_errors():
        if list_kinds or kind is None:
            t = Table(title="plot kinds")
            t.add_column("kind", no_wrap=True, style="bold")
            for col in ("needs", "what", "options"):
                t.add_column(col)
            for k, p in plots.CATALOG.items():
                t.add_row(k, p.needs, escape(p.summary), ", ".join(p.options))
            _console().print(t)
            if kind is None and not list_kinds:
                _fail("give a plot KIND (listed above)")
            return
        data = open_results(source)
        fmt = fmt or (out_file.suffix.lstrip(".") if out_file is not None and out_file.suffix else "png")
        target = out_file if out_file is not None else source / "plots" / f"{kind}.{fmt}"
        written = plots.render(data, kind, target, fmt, **_plot_options(options))
        click.echo(str(written))


@cli.command("report")
@click.argument("source", type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--out",
    "out_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="output HTML file (default: SOURCE/report.html)",
)
def report_cmd(source: Path, out_file: Path | None) -> None:
    """Write a self-contained HTML report of the run or sweep in SOURCE."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from .report import build_report

    with _user_errors():
        console = Console(stderr=True, highlight=False)
        with Progress(
            TextColumn("report"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.description}"),
            TimeElapsedColumn(),
            console=console,
            transient=True,
            disable=not console.is_terminal,
        ) as bar:
            task = bar.add_task("", total=None)

            def progress(what: str, done: int, total: int) -> None:
                bar.update(task, description=what, completed=done, total=total)
                if not console.is_terminal:
                    click.echo(f"report: {done}/{total} {what}", err=True)

            written = build_report(source, out_file, progress=progress)
        click.echo(str(written))


@cli.command("compare")
@click.argument("sources", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--out",
    "out_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="also write an HTML page with the tables and overlaid figures",
)
@click.option(
    "--threshold",
    type=float,
    default=0.05,
    show_default=True,
    help="relative difference from the first source that is highlighted",
)
def compare_cmd(sources: tuple[Path, ...], out_file: Path | None, threshold: float) -> None:
    """Compare runs or sweeps side by side; the first is the baseline. Profile
    directories (`ccbench profile`) are compared by their findings and headlines."""
    from rich.markup import escape
    from rich.table import Table

    from .profile.run import is_profile_dir

    if sources and all(is_profile_dir(s) for s in sources):
        from .profile.cli import compare_profiles

        with _user_errors():
            compare_profiles(list(sources), out_file)
        return

    from .compare import compare, relative_difference, write_html
    from .runset import HEADLINE

    with _user_errors():
        c = compare(list(sources), threshold=threshold)
        t = Table(title=escape(f"compare (baseline {c.labels[0]}; highlighted: > {threshold:.0%} from it)"))
        t.add_column("metric")
        for lab in c.labels:
            t.add_column(escape(lab), justify="right")
        base = c.labels[0]
        for metric, r in c.summary.iterrows():
            cells = []
            for lab in c.labels:
                text = _num(float(r[lab]), "{:.4g}")
                d = relative_difference(float(r[lab]), float(r[base]))
                if lab != base and math.isfinite(d) and d != 0:
                    text += f" ({d:+.1%})"
                cells.append(f"[bold yellow]{escape(text)}[/]" if c.differs(str(metric), lab) else escape(text))
            t.add_row(escape(HEADLINE.get(str(metric), str(metric))), *cells)
        _console().print(t)
        if out_file is not None:
            click.echo(str(write_html(c, out_file)))


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point. SIGTERM stops a command as Ctrl-C does
    (:mod:`ccbench.signals`)."""
    from .signals import sigterm_as_interrupt

    sigterm_as_interrupt()
    cli.main(args=argv, prog_name="ccbench")


if __name__ == "__main__":
    main()
