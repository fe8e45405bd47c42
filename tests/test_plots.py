# ruff: noqa: F811  (the fixtures are imported from analysis_fixtures)
"""Every catalog plot renders from stored results (a run and a sweep with a failed
run) in PNG, SVG and PDF; bad requests are clear errors."""

import xml.etree.ElementTree as ET

import pytest
from analysis_fixtures import fixture_run, fixture_sweep  # noqa: F401
from click.testing import CliRunner

from ccbench.cli import cli
from ccbench.plots import CATALOG, FORMATS, draw, save_figure
from ccbench.runset import open_results

pytestmark = pytest.mark.engine


def _check_file(path, fmt):
    data = path.read_bytes()
    assert len(data) > 2000, f"{path} is suspiciously small"
    if fmt == "png":
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
    elif fmt == "pdf":
        assert data[:5] == b"%PDF-"
    else:
        root = ET.fromstring(data)
        assert root.tag.endswith("svg")


def _has_marks(fig) -> bool:
    for ax in fig.axes:
        if ax.lines or ax.images or ax.patches or ax.collections:
            return True
    return False


@pytest.mark.parametrize("kind", list(CATALOG))
@pytest.mark.parametrize("source", ["run", "sweep"])
def test_every_plot_renders_in_every_format(kind, source, fixture_run, fixture_sweep, tmp_path):
    data = open_results(fixture_run if source == "run" else fixture_sweep)
    if CATALOG[kind].needs == "sweep" and source == "run":
        with pytest.raises(ValueError, match="needs a sweep"):
            draw(data, kind)
        return
    fig = draw(data, kind)
    assert fig.axes and _has_marks(fig), f"{kind} drew nothing"
    for fmt in FORMATS:
        _check_file(save_figure(fig, tmp_path / f"{kind}.{fmt}"), fmt)


def test_svg_and_pdf_are_deterministic(fixture_run, tmp_path):
    data = open_results(fixture_run)
    for fmt in ("svg", "pdf"):
        a = save_figure(draw(data, "throughput"), tmp_path / f"a.{fmt}").read_bytes()
        b = save_figure(draw(data, "throughput"), tmp_path / f"b.{fmt}").read_bytes()
        assert a == b, fmt


def test_heatmap_marks_the_failed_cell(fixture_sweep):
    fig = draw(fixture_sweep, "jain-heatmap")
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "failed" in texts  # buffer 8 BDP at 20 Mbit/s
    assert sum(1 for t in texts if t.replace(".", "").isdigit()) == 4  # the four complete cells


def test_cli_plot_writes_the_file_and_rejects_bad_requests(fixture_run, fixture_sweep, tmp_path):
    r = CliRunner()
    out = tmp_path / "t.svg"
    res = r.invoke(cli, ["plot", str(fixture_run), "throughput", "-o", str(out), "-O", "by=cca"])
    assert res.exit_code == 0, res.output
    _check_file(out, "svg")
    res = r.invoke(cli, ["plot", str(fixture_sweep), "share-heatmap", "-O", "of=sender:bbr-host", "-f", "pdf"])
    assert res.exit_code == 0, res.output
    _check_file(fixture_sweep / "plots" / "share-heatmap.pdf", "pdf")
    for args, message in (
        ([str(fixture_run), "nope"], "unknown plot kind 'nope'; kinds: throughput"),
        ([str(fixture_run), "jain-heatmap"], "needs a sweep"),
        ([str(fixture_run), "throughput", "-O", "colour=red"], "has no option colour; options: run, by"),
        ([str(fixture_run), "throughput", "-O", "by=nonsense"], "by must be one of flow, group"),
        ([str(tmp_path / "missing"), "throughput"], "does not exist"),
        ([str(fixture_sweep), "share-heatmap", "-O", "of=cca:nope"], "no share 'cca:nope'"),
        ([str(fixture_sweep), "jain-heatmap", "-O", "x=colour"], "'colour' is not an axis"),
        ([str(fixture_run), "throughput", "-o", str(tmp_path / "x.gif")], "format 'gif' is not supported"),
    ):
        res = r.invoke(cli, ["plot", *args])
        assert res.exit_code == 2, (args, res.output)
        assert message in res.output, (message, res.output)
        assert "Traceback" not in res.output


def test_cli_plot_list(fixture_run):
    res = CliRunner().invoke(cli, ["plot", str(fixture_run), "--list"])
    assert res.exit_code == 0
    for kind in CATALOG:
        assert kind in res.output
