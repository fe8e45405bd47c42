# ruff: noqa: F811  (the fixtures are imported from analysis_fixtures)
"""The HTML report: self-contained, opens offline in headless Chromium with every
figure rendered and no request; the sweep's grid view reacts to its pickers; the CLI
shows progress and clear errors."""

import re

import pytest
from analysis_fixtures import fixture_run, fixture_sweep, store_sweep  # noqa: F401
from browser import open_report
from click.testing import CliRunner

from ccbench.cli import cli
from ccbench.report import build_report

pytestmark = pytest.mark.engine

IMAGES_RENDERED = "Array.from(document.images).map(i => [i.alt, i.complete && i.naturalWidth > 0, i.naturalWidth])"


def _no_external_references(text: str) -> None:
    # no fetched resource other than inline data: URIs
    for attr in re.findall(r'(?:src|href)="([^"]*)"', text):
        assert attr.startswith(("data:", "#")), attr
    assert "http://" not in text and "https://" not in text and "@import" not in text


@pytest.fixture(scope="module")
def reports(fixture_run, fixture_sweep, tmp_path_factory):
    d = tmp_path_factory.mktemp("reports")
    steps = []
    run_html = build_report(fixture_run, d / "run.html", progress=lambda w, i, n: steps.append((w, i, n)))
    sweep_html = build_report(fixture_sweep, d / "sweep.html")
    return run_html, sweep_html, steps


def test_report_is_self_contained_and_reports_progress(reports):
    run_html, sweep_html, steps = reports
    for p in (run_html, sweep_html):
        _no_external_references(p.read_text())
    assert steps[-1][1] == steps[-1][2] and [s[1] for s in steps] == list(range(1, steps[-1][2] + 1))
    text = run_html.read_text()
    for needle in (
        "Headline metrics",
        "Jain's index per group",
        "Flow completion",
        "&quot;experiment&quot;",
        "cubic",
        "More metrics",
        "M-MATHIS-C",
        "M-CONV-JFI",
        "M-BURST",
        "M-EPS-CONV",
    ):
        assert needle in text, needle
    sweep = sweep_html.read_text()
    for needle in ("Over the grid", "Avg(φ)", "Equilibrium buffer (M-EQUIL): bbr-host vs cubic-host", "failed"):
        assert needle in sweep, needle


def test_run_report_renders_offline_in_chromium(reports, tmp_path):
    from playwright.sync_api import sync_playwright

    run_html, _, _ = reports
    with sync_playwright() as p:
        browser, page = open_report(p, run_html)
        try:
            images = page.page.evaluate(IMAGES_RENDERED)
            assert len(images) >= 9, images
            assert all(ok for _, ok, _ in images), [alt for alt, ok, _ in images if not ok]
            assert {"throughput", "cwnd", "queue", "cca-state", "fct"} <= {alt for alt, _, _ in images}
            assert page.requests == [] and page.failed == [], (page.requests, page.failed)
            assert page.console_errors == []
            page.page.screenshot(path=str(tmp_path / "run.png"), full_page=False)
            assert (tmp_path / "run.png").stat().st_size > 10_000
        finally:
            browser.close()


def test_sweep_report_grid_view_and_figures(reports):
    from playwright.sync_api import sync_playwright

    _, sweep_html, _ = reports
    with sync_playwright() as p:
        browser, page = open_report(p, sweep_html)
        pg = page.page
        try:
            images = pg.evaluate(IMAGES_RENDERED)
            assert len(images) >= 5 and all(ok for _, ok, _ in images), images
            assert page.requests == [] and page.failed == [] and page.console_errors == []
            # default view: metric over buffer_bdp (x) and rate_mbps (y): 2 rows × 3 buffers (one failed)
            cells = pg.eval_on_selector_all("#grid-view td", "tds => tds.map(t => t.textContent)")
            assert len(cells) == 6 and cells.count("failed") == 1 and cells.count("—") == 1
            # picking another metric and collapsing y changes the table
            pg.select_option("#grid-metric", "jain")
            pg.select_option("#grid-y", "(none)")
            cells = pg.eval_on_selector_all("#grid-view td", "tds => tds.map(t => t.textContent)")
            assert len(cells) == 3
            # the rate axis is now averaged, and can be fixed at one value
            pg.select_option("#grid-fix-rate_mbps", "20")
            fixed = pg.eval_on_selector_all("#grid-view td", "tds => tds.map(t => t.textContent)")
            assert fixed != cells and fixed[2] == "failed"
            assert page.console_errors == []
        finally:
            browser.close()


def test_cli_report_and_errors(fixture_run, tmp_path):
    r = CliRunner()
    out = tmp_path / "r.html"
    res = r.invoke(cli, ["report", str(fixture_run), "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert out.is_file() and str(out) in res.output
    res = r.invoke(cli, ["report", str(tmp_path / "missing")])
    assert res.exit_code == 2 and "does not exist" in res.output and "Traceback" not in res.output


def test_report_of_a_rate_schedule_has_phases_and_t90(tmp_path):
    from analysis_fixtures import make_run

    run = make_run(tmp_path / "sched", **{"bottleneck.rate_schedule": [{"at": "3s", "rate": "10Mbit"}]})
    text = build_report(run).read_text()
    assert "Throughput per phase of the rate schedule (M-PHASE-TPUT)" in text
    assert "time to 90 % of 10 Mbit/s after 3 s" in text


def test_report_of_a_sweep_written_by_ccbench_sweep(store_sweep, tmp_path):
    from playwright.sync_api import sync_playwright

    out = build_report(store_sweep, tmp_path / "store.html")
    with sync_playwright() as p:
        browser, page = open_report(p, out)
        pg = page.page
        try:
            images = pg.evaluate(IMAGES_RENDERED)
            assert len(images) >= 5 and all(ok for _, ok, _ in images), images
            assert page.requests == [] and page.failed == [] and page.console_errors == []
            # grid view over the sweep's variables: cca (x) × k (y); k = 4 failed for both CCAs
            assert pg.eval_on_selector_all("#grid-x option", "os => os.map(o => o.value)") == ["cca", "k"]
            cells = pg.eval_on_selector_all("#grid-view td", "tds => tds.map(t => t.textContent)")
            assert len(cells) == 6 and cells.count("failed") == 2
        finally:
            browser.close()
