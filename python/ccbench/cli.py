"""The ``ccbench`` command line.

    ccbench run SPEC [-o DIR] [--seed N] [--overwrite]
    ccbench validate SPEC [--json]
    ccbench list ccas

Bad input (an invalid spec, a configuration the engine rejects, an unreadable file)
prints one paragraph starting with ``error:`` on stderr and exits with status 2;
it never shows a traceback.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from . import __version__
from .engine import EngineError, EngineUnavailable
from .results import ResultsError
from .spec import SpecError

EXIT_BAD_INPUT = 2


def _fail(message: str) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(EXIT_BAD_INPUT)


@contextmanager
def _user_errors() -> Iterator[None]:
    """Turn the errors a user can cause into one paragraph on stderr and exit 2."""
    try:
        yield
    except SpecError as e:
        _fail(str(e))
    except EngineUnavailable as e:
        _fail(str(e))
    except (EngineError, ResultsError) as e:
        _fail(str(e))
    except FileExistsError as e:
        _fail(f"{e} (pass --overwrite to replace it)")
    except OSError as e:
        name = f" {e.filename}" if getattr(e, "filename", None) else ""
        _fail(f"cannot access{name}: {e.strerror or e}")
    except ValueError as e:
        _fail(str(e))
    except RuntimeError as e:  # an engine bug, not bad input: no traceback, but not status 2
        click.echo(f"error: {e}", err=True)
        sys.exit(1)


def _console() -> Console:
    return Console(highlight=False, soft_wrap=False)


def _mbit(bps: float) -> str:
    return "-" if not math.isfinite(bps) else f"{bps / 1e6:.2f}"


def _num(x: float, fmt: str = "{:.3f}") -> str:
    return "-" if x is None or (isinstance(x, float) and not math.isfinite(x)) else fmt.format(x)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
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
    help="results directory (default: runs/<experiment name>)",
)
@click.option("--seed", type=int, default=None, help="override experiment.seed")
@click.option("--overwrite", is_flag=True, help="replace an existing results directory")
def run_cmd(spec: Path, out_dir: Path | None, seed: int | None, overwrite: bool) -> None:
    """Run the experiment SPEC (a TOML file) and write its results."""
    from . import api
    from .spec import load_spec

    with _user_errors():
        exp = load_spec(spec)
        if seed is not None:
            exp = exp.with_seed(seed)
        target = out_dir if out_dir is not None else Path("runs") / exp.experiment.name
        result = api.run(exp, target, overwrite=overwrite)
        _print_summary(result, target)


def _print_summary(result: Any, target: Path) -> None:
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
    lines = [
        ("total goodput", f"{_mbit(s['goodput_bps'])} Mbit/s"),
        ("Jain's index (all flows)", _num(s["jain"])),
        *([("Jain's index (per sender)", _num(s["jain_senders"]))] if math.isfinite(s["jain_senders"]) else []),
        ("utilization", _num(s["utilization"])),
        ("retransmissions (whole run)", f"{s['retransmissions']} ({_num(s['retransmission_pct'], '{:.2f}')}% of delivered)"),
        ("bottleneck drops (window)", f"{s['drops']} ({_num(s['drop_pct'], '{:.2f}')}% of arrivals)"),
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
def validate_cmd(spec: Path, as_json: bool) -> None:
    """Check the experiment SPEC without running it."""
    from .engine import catalog
    from .spec import load_spec

    with _user_errors():
        exp = load_spec(spec)
        config = exp.resolve()
        if as_json:
            click.echo(json.dumps(config, indent=2))
            return
        d = exp.derived()
        buf = d["buffer"]
        click.echo(
            f"{spec}: valid. {exp.experiment.name}: {d['num_flows']} flows from {len(exp.senders)} sender(s), "
            f"{exp.experiment.duration / 1e9:g} s; bottleneck buffer {buf['bytes']} bytes = {buf['packets']} packets "
            f"({buf['qdisc']}; BDP {buf['bdp_bytes']} bytes at RTT {buf['bdp_rtt_ns'] / 1e6:g} ms)."
        )
        if catalog() is None:
            click.echo("note: the engine is not built, so CCA names and parameters were not checked.", err=True)


@cli.group("list")
def list_group() -> None:
    """List what the engine provides."""


@list_group.command("ccas")
def list_ccas_cmd() -> None:
    """The congestion control algorithms, with their parameters and defaults."""
    from . import api

    with _user_errors():
        ccas = api.list_ccas()
    t = Table(title="congestion control algorithms")
    t.add_column("name", style="bold")
    t.add_column("summary")
    t.add_column("parameters (default)")
    for c in ccas:
        params = "\n".join(
            f"{p['name']} = {json.dumps(p['default'])}" + (f"  {p['doc']}" if p["doc"] else "") for p in c["params"]
        )
        t.add_row(
            escape(c["name"]),
            escape(c["summary"] + (f"\n{c['reference']}" if c["reference"] else "")),
            escape(params or "-"),
        )
    _console().print(t)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    cli.main(args=argv, prog_name="ccbench")


if __name__ == "__main__":
    main()
