# ruff: noqa: F811  (the fixtures are imported from analysis_fixtures)
"""ccbench compare: tables with the differences highlighted, overlaid figures,
clear errors."""

import math

import pytest
from analysis_fixtures import fixture_run, fixture_sweep, make_run  # noqa: F401
from browser import open_report
from click.testing import CliRunner

from ccbench.cli import cli
from ccbench.compare import compare, relative_difference, write_html

pytestmark = pytest.mark.engine


def test_relative_difference():
    assert relative_difference(110, 100) == pytest.approx(0.1)
    assert relative_difference(90, -100) == pytest.approx(1.9)
    assert relative_difference(0, 0) == 0
    assert math.isnan(relative_difference(1, 0))
    assert math.isnan(relative_difference(float("nan"), 1))


@pytest.fixture(scope="module")
def other_run(tmp_path_factory):
    # the same experiment with a deeper buffer: less loss, more queue
    return make_run(tmp_path_factory.mktemp("cmp") / "deep", **{"bottleneck.buffer": "4BDP"})


def test_compare_runs(fixture_run, other_run, tmp_path):
    c = compare([fixture_run, fixture_run, other_run])
    assert c.labels == ["1:run", "2:run", "3:deep"]
    base, same, deep = c.labels
    s = c.summary
    assert s.loc["jain", base] == s.loc["jain", same]
    assert not c.differs("jain", same)  # identical runs never differ
    assert s.loc["queue_mean_pkts", deep] > 1.5 * s.loc["queue_mean_pkts", base]
    assert c.differs("queue_mean_pkts", deep)
    assert c.cells() is None  # runs, not sweeps
    out = write_html(c, tmp_path / "c.html")
    text = out.read_text()
    assert text.count('class="diff"') >= 1 and "http" not in text
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser, page = open_report(p, out)
        try:
            images = page.page.evaluate("Array.from(document.images).map(i => i.complete && i.naturalWidth > 0)")
            assert len(images) == 3 and all(images)
            assert page.requests == [] and page.failed == [] and page.console_errors == []
        finally:
            browser.close()


def test_compare_sweeps_cell_by_cell(fixture_sweep, tmp_path):
    c = compare([fixture_sweep, fixture_sweep], threshold=0.0)
    cells = c.cells("jain")
    assert cells is not None and len(cells) == 5  # 4 complete cells and the failed one
    delta = cells[f"Δ {c.labels[1]}"]
    assert (delta.dropna() == 0).all() and delta.isna().sum() == 1  # the failed cell has no value on either side
    assert c.summary.loc["runs (complete)", c.labels[0]] == 4
    out = write_html(c, tmp_path / "s.html")
    assert out.read_text().count("<img") == 4


def test_cli_compare(fixture_run, other_run, tmp_path):
    r = CliRunner()
    out = tmp_path / "cmp.html"
    res = r.invoke(cli, ["compare", str(fixture_run), str(other_run), "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "queue_mean_pkts" in res.output or "mean queue" in res.output
    assert out.is_file()
    res = r.invoke(cli, ["compare", str(fixture_run)])
    assert res.exit_code == 2 and "at least two" in res.output
    res = r.invoke(cli, ["compare", str(fixture_run), str(tmp_path / "missing")])
    assert res.exit_code == 2 and "does not exist" in res.output
    res = r.invoke(cli, ["compare", str(fixture_run), str(other_run), "--threshold", "-1"])
    assert res.exit_code == 2 and "threshold" in res.output
