"""Reproduction suites: every scenario id of experiments.md is shipped, every suite spec
validates at every scale, what a scenario needs comes from spec validation, each study
runs at the tiny scale and writes its report, published values are compared."""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from ccbench.cli import cli
from ccbench.suites import STUDIES, needs, plan_scenario, scenario_sweep, scenarios, select
from ccbench.suites.catalog import unexplained
from ccbench.suites.run import InlineExecutor, run_suite
from ccbench.sweeps.plan import expand

EXPERIMENTS_MD = Path(__file__).resolve().parents[1] / ".." / "shared" / "spec" / "experiments.md"


@functools.cache
def planned(sid: str, scale: str):
    """Each scenario is planned once per scale for the whole module (the paper scale
    validates ~9,500 runs)."""
    return plan_scenario(select(sid)[0], scale)


def catalog_ids() -> set[str]:
    """The scenario ids of experiments.md's index table (section 0)."""
    text = EXPERIMENTS_MD.read_text(encoding="utf-8")
    index = text.split("## 0. Index of scenarios", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `([a-z0-9-]+/[a-z0-9-]+)` \|", index, flags=re.M))


def test_every_scenario_of_the_catalog_is_shipped_once():
    ids = [s.id for s in scenarios()]
    assert len(ids) == len(set(ids))
    expected = catalog_ids()
    assert len(expected) == 46  # D0 3 + D1 4 + D2 30 + D3 5 + D4 4 (experiments.md "Counts")
    assert set(ids) == expected
    assert {s.study for s in scenarios()} == set(STUDIES)


@pytest.mark.parametrize("scale", ["paper", "quick", "tiny"])
def test_every_suite_spec_validates_and_every_problem_is_a_named_need(scale):
    for sc in scenarios():
        sp = planned(sc.id, scale)
        assert unexplained(sp) == [], (sc.id, scale)
        if sc.kind != "runs":
            assert sp.runs == 0 and not needs(sp)
            continue
        # a scenario either runs everything, or says what it needs
        assert (sp.valid_runs == sp.runs and sp.error is None) == (not needs(sp)), sc.id
        if sp.plan is not None:
            assert sp.runs > 0


def test_quick_is_smaller_than_paper_and_fits_in_minutes():
    quick = paper = 0.0
    for sc in scenarios():
        q, p = planned(sc.id, "quick"), planned(sc.id, "paper")
        assert q.packets <= p.packets, sc.id
        quick += q.cpu_s
        paper += p.cpu_s
    assert quick < 30 * 60  # upper bound of engine CPU for every quick suite together
    assert paper > 100 * quick


def test_quick_keeps_buffers_in_bdp_multiples_of_the_scaled_rate():
    (sc,) = select("recipe/q1-buffer-sizes")
    plan = plan_scenario(sc, "quick").plan
    seen = set()
    for run in plan.runs:
        if not run.valid:
            continue
        d = run.experiment.derived()
        k = run.params["k"]
        rate = d["bottleneck"]["rate_bps"]
        assert rate == 20_000_000
        assert d["buffer"]["bdp_bytes"] == rate * 100_000_000 // 8 // 1_000_000_000
        assert abs(d["buffer"]["bytes"] - k * d["buffer"]["bdp_bytes"]) <= 1
        seen.add(k)
    assert seen == {0.25, 1, 4, 16}


def test_needs_come_from_validation_not_a_list(tmp_path):
    """Giving what the library lacks (here the MAWI flow sizes, as a CDF file) makes the
    same scenario ready; the traffic fields it uses (#8) validate as they are."""
    (sc,) = select("bbr/mawi-same-cca")
    sp = plan_scenario(sc, "tiny")
    assert sp.valid_runs == 0 and any("distribution" in n and "'mawi'" in n for n in needs(sp))
    doc = scenario_sweep(sc, "tiny")
    cdf = tmp_path / "mawi.cdf"
    cdf.write_text("# a stand-in\n100 0\n1000 0.5\n100000 1\n")
    doc["base"]["flows"][0]["sizes"] = str(cdf)
    plan = expand(doc)
    assert plan.runs and all(r.valid for r in plan.runs)
    # the traffic scenarios written before #8 landed validate with its fields
    for name in ("recipe/q2-dos", "recipe/q2-cross-traffic-inelastic", "ncf/parking-lot-facebook"):
        (sc,) = select(name)
        sp = plan_scenario(sc, "tiny")
        assert sp.valid_runs == sp.runs > 0 and not needs(sp), name


def _run_tiny(name: str, out: Path):
    outcome = run_suite(name, out, scale="tiny", executor=InlineExecutor(), progress=False)
    assert outcome.ok, [s.unexpected_failures for s in outcome.scenarios]
    report = (out / "report.md").read_text()
    for s in outcome.scenarios:
        assert f"`{s.id}`" in report
        sp = planned(s.id, "tiny")
        assert s.complete == sp.valid_runs, s.id
        for n in s.needs:
            assert n in report  # never dropped silently
        if sp.valid_runs:
            section = report.split(f"`{s.id}`", 1)[1].split("\n### ", 1)[0]
            assert "| reps |" in section or "| reps" in section, s.id
    assert (out / "report.html").stat().st_size > 1000
    return outcome, report


@pytest.mark.parametrize("study", ["aqm-ns3", "ncf"])
def test_a_study_runs_tiny_and_writes_its_report(tmp_path, study):
    _, report = _run_tiny(study, tmp_path / study)
    # the scenarios' [[suite.figure]]s are drawn and linked from the report
    figures = sorted((tmp_path / study).glob("fig-*.png"))
    assert figures and all(f.stat().st_size > 1000 for f in figures)
    assert all(f"]({f.name})" in report for f in figures)
    if study == "ncf":
        # the mice flood runs (a stated setup, experiments.md 3.6.14) and is judged against the claim
        section = report.split("`ncf/mice-flood`", 1)[1].split("\n### ", 1)[0]
        assert "| elephant loss Mbit/s |" in section and "| mice FCT median ms |" in section
        claims = [ln for ln in section.splitlines() if ln.startswith("| NCF isolates")]
        assert len(claims) == 2 and all(re.search(r"\| (supports|CONTRADICTS) \|", ln) for ln in claims), claims


@pytest.mark.parametrize("study", ["elephants", "tcp10g", "recipe", "bbr", "atscale"])
def test_every_other_study_runs_tiny_and_writes_its_report(tmp_path, study):
    outcome, report = _run_tiny(study, tmp_path / study)
    if study == "elephants":
        # the Table 3 view is computed from the two grids: CUBIC-vs-CUBIC has RR 1
        assert re.search(r"\| cubic-self \| bfifo \| [0-9.]+ \| [0-9.]+ \| 1 \|", report)
        # ... and the published values (Table 3 for the paper scale, the authors' 100 Mbit/s
        # rows for quick) are printed next to ours, but a tiny run is judged by neither
        shown = [ln for ln in report.splitlines() if "pairing=cubic-self, aqm=bfifo" in ln]
        assert len(shown) == 4 and all(re.search(r"\| [0-9.]+ \|  \| for the (paper|quick) scale: not judged here", ln)
                                       for ln in shown), shown  # fmt: skip
        assert "0 disagreement(s)" in report


def test_published_values_are_compared_and_disagreements_flagged(tmp_path):
    from ccbench.suites.report import scenario_table, write_report

    out = tmp_path / "al"
    run_suite("aqm-ns3/al-common", out, scale="tiny", executor=InlineExecutor(), progress=False, report=False)
    ours = float(scenario_table(select("aqm-ns3/al-common")[0], out / "al-common")["JFI flows"].iloc[0])
    pub = tmp_path / "published.toml"
    pub.write_text(
        f'[[value]]\nscenario = "aqm-ns3/al-common"\nmetric = "JFI flows"\nsource = "fixture A"\n'
        f"value = {ours + 0.01}\ntolerance = 0.05\n\n"
        f'[[value]]\nscenario = "aqm-ns3/al-common"\nmetric = "JFI flows"\nsource = "fixture B"\n'
        f"value = {ours + 0.4}\ntolerance = 0.05\n\n"
        f'[[value]]\nscenario = "aqm-ns3/al-common"\nmetric = "util"\nsource = "fixture C"\n'
    )
    write_report(out, published=pub)
    report = (out / "report.md").read_text()
    line_a = next(ln for ln in report.splitlines() if "fixture A" in ln)
    line_b = next(ln for ln in report.splitlines() if "fixture B" in ln)
    line_c = next(ln for ln in report.splitlines() if "fixture C" in ln)
    assert "agrees" in line_a and "DISAGREES" not in line_a
    assert "DISAGREES" in line_b and "-0.4" in line_b
    assert "not in experiments.md" in line_c
    assert "1 disagreement(s)" in report
    assert 'class="bad"' in (out / "report.html").read_text()


def test_a_claim_is_supported_or_contradicted_by_our_cells():
    """A claim without numbers ([[suite.claim]]) is judged per group of its `per`
    parameters: it fires (CONTRADICTS) where the claimed cells are not lower, and holds
    (supports) where they are."""
    import pandas as pd

    from ccbench.suites.report import _claims

    (sc,) = select("ncf/mice-flood")
    table = pd.DataFrame(
        {
            "variant": ["ncf", "cubic-fifo", "cubic-ncf", "ncf", "cubic-fifo", "cubic-ncf"],
            "buffer_kb": ["250", "250", "250", "500", "500", "500"],
            "elephant loss Mbit/s": [29.7, 34.8, 34.1, 33.0, 32.4, 32.6],
            "mice FCT median ms": [30.5, 38.8, 30.0, 30.1, 39.0, 31.0],
        }
    )
    rows = _claims(sc, table)
    loss = rows[rows["metric"] == "elephant loss Mbit/s"].set_index("where")["verdict"].to_dict()
    assert loss == {
        "variant=ncf lower than variant=cubic-fifo (buffer_kb=250)": "supports",
        "variant=ncf lower than variant=cubic-fifo (buffer_kb=500)": "CONTRADICTS",
    }
    assert set(rows[rows["metric"] == "mice FCT median ms"]["verdict"]) == {"supports"}
    # no matching cells: said, never judged
    assert set(_claims(sc, table.drop(columns=["mice FCT median ms"]))["verdict"]) >= {"not measured (no matching run)"}


def test_cli_lists_suites_with_sizes_and_needs():
    r = CliRunner().invoke(cli, ["suites", "--json", "--scale", "quick"])
    assert r.exit_code == 0, r.output
    rows = [json.loads(line) for line in r.output.splitlines()]
    assert {x["scenario"] for x in rows} == {s.id for s in scenarios()}
    blocked = next(x for x in rows if x["scenario"] == "bbr/mawi-same-cca")
    assert blocked["runnable"] == 0 and any("'mawi'" in n for n in blocked["needs"])
    # Sage is listed as what it is (a learned model we do not have), its scenarios' other runs as runnable
    sage = next(x for x in rows if x["scenario"] == "recipe/q1-buffer-sizes")
    assert 0 < sage["runnable"] < sage["runs"] and any(n.startswith("Sage, which does not exist") for n in sage["needs"])
    ready = next(x for x in rows if x["scenario"] == "bbr/sync-intra")
    assert ready["runnable"] == ready["runs"] > 0 and ready["est_packets"] > 0 and ready["est_cpu_s"] > 0
    assert ready["preserves"]
    r = CliRunner().invoke(cli, ["suites", "bbr"])
    assert r.exit_code == 0 and "bbr/sync-intra" in r.output and "ready" in r.output
    r = CliRunner().invoke(cli, ["suites", "nope"])
    assert r.exit_code != 0 and "unknown suite 'nope'" in r.output


def test_cli_sweep_suite_runs_and_reports(tmp_path):
    out = tmp_path / "s"
    r = CliRunner().invoke(
        cli, ["sweep", "--suite", "bbr/mawi-same-cca", "--scale", "tiny", "-o", str(out), "--no-progress"]
    )
    # every run needs the MAWI distribution: nothing runs, nothing fails unexpectedly
    assert r.exit_code == 0, r.output
    assert "needs a flow-size or RTT distribution not shipped" in r.output
    assert (out / "report.html").exists()
    r = CliRunner().invoke(cli, ["sweep", str(tmp_path / "x.toml"), "--suite", "bbr"])
    assert r.exit_code != 0 and "either a sweep SPEC or --suite" in r.output


def test_cli_sweep_suite_no_report_runs_only_and_the_report_comes_later(tmp_path):
    """--no-report runs the scenario's sweep and leaves the study report (minutes for the
    largest scenarios) for later: `ccbench report DIR` then builds that same report, not
    a generic sweep report over the suite's runs."""
    from ccbench.sweeps.results import SweepResults

    out = tmp_path / "al"
    args = ["sweep", "--suite", "aqm-ns3/al-common", "--scale", "tiny", "-o", str(out), "--no-progress"]
    r = CliRunner().invoke(cli, [*args, "--no-report"])
    assert r.exit_code == 0, r.output
    assert f"ccbench suites --report {out}" in r.output
    runs = SweepResults(out / "al-common").runs
    assert len(runs) == planned("aqm-ns3/al-common", "tiny").valid_runs > 0
    assert set(runs["status"]) == {"complete"}
    assert not [p.name for p in out.iterdir() if p.name.startswith(("report", "fig-"))]
    r = CliRunner().invoke(cli, ["report", str(out)])
    assert r.exit_code == 0, r.output
    later = (out / "report.md").read_text()
    assert later.startswith("# Reproduction suite `aqm-ns3/al-common` (tiny scale)") and "| reps |" in later
    assert "Reproduction suite" in (out / "report.html").read_text()
    assert sorted(out.glob("fig-*.png"))
    # the same report as a run that builds it at the end (the runs are complete: resumed)
    for p in out.iterdir():
        if p.is_file() and p.name.startswith("report"):
            p.unlink()
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    assert (out / "report.md").read_text() == later
    r = CliRunner().invoke(cli, ["report", str(out), "-o", str(tmp_path / "x.html")])
    assert r.exit_code == 2 and "suite directory" in r.output and not (tmp_path / "x.html").exists()
    r = CliRunner().invoke(cli, ["sweep", str(tmp_path / "x.toml"), "--no-report"])
    assert r.exit_code == 2 and "--no-report applies to --suite" in r.output


def test_shipped_published_values_reach_the_comparison():
    """Every shipped entry with a value names a scenario, a metric of that scenario's
    table and cells the suite runs: a table holding exactly the published numbers
    agrees everywhere, one 20 % off disagrees everywhere (no entry is silently
    'not measured' because its labels do not match ours)."""
    import pandas as pd

    from ccbench.suites.report import _comparisons, load_published

    shipped = load_published()
    with_value = [p for p in shipped if p.value is not None]
    assert len(with_value) >= 78  # D0 Table 3: 9 pairings x 3 AQMs x 3 metrics, less CUBIC's RR
    assert all(p.scenario in {s.id for s in scenarios()} for p in shipped)
    summary = select("elephants/overall-summary")[0]
    sweeps = {sid: scenario_sweep(select(sid)[0], "paper")["sweep"] for sid in
              ("elephants/inter-cca-grid", "elephants/intra-cca-grid")}  # fmt: skip
    pairings = {f"{p}-cubic" for p in sweeps["elephants/inter-cca-grid"]["grid"]["pair"]}
    pairings |= {f"{p}-self" for p in sweeps["elephants/intra-cca-grid"]["grid"]["pair"]}
    # Each bandwidth runs with each AQM (zipped with that AQM's tc settings).
    aqms = {a for group in sweeps["elephants/inter-cca-grid"]["zip"] for a in group.get("aqm", [])}
    # Table 3 (every bandwidth) for the paper scale, the authors' 100 Mbit/s rows for quick
    for scale, other in (("paper", "quick"), ("quick", "paper")):
        d0 = [p for p in with_value if p.scenario == summary.id and p.scale == scale]
        assert len(d0) == 78
        assert {p.where["pairing"] for p in d0} == pairings and {p.where["aqm"] for p in d0} == aqms
        for factor, verdict in ((1.0, "agrees"), (1.2, "DISAGREES")):
            cells: dict[tuple[str, str], dict[str, object]] = {}
            for p in d0:
                cell = cells.setdefault((p.where["pairing"], p.where["aqm"]), dict(p.where))
                cell[p.metric] = float(p.value or 0.0) * factor
            table = pd.DataFrame(list(cells.values()))
            rows = _comparisons(summary, table, shipped, scale)
            assert len(rows) == len([p for p in shipped if p.scenario == summary.id])
            judged = [r for r in rows if f"({scale} scale)" in r["where"]]
            assert len(judged) == 78 and all(str(r["verdict"]).startswith(verdict) for r in judged), judged
            # the other scale's entries are shown with ours, never judged
            shown = [r for r in rows if f"({other} scale)" in r["where"]]
            assert len(shown) == 78 and all(r["verdict"] == f"for the {other} scale: not judged here" for r in shown)


@pytest.mark.parametrize("sid", ["elephants/inter-cca-grid", "elephants/intra-cca-grid"])
def test_d0_bottleneck_is_the_tc_the_authors_ran(sid):
    """D0's bottleneck, from its authors' dataset (deployment/fabric-setup.ipynb):
    `tbf rate <rate> burst 1570000 limit <k x BDP>` at the root of a 100 Gbit/s port,
    the AQM its child; RED is `red limit <k x BDP> avpkt 1000 min 30000 max 30001
    bandwidth <rate>`, without ECN; every bandwidth runs with every AQM, at both
    scales; the hosts send through 25 Gbit/s NICs."""
    for scale, cells in (("paper", 5 * 6 * 3), ("quick", 3 * 3)):
        runs = [r for r in planned(sid, scale).plan.runs if r.repetition == 0]
        assert len({(r.params["rate_mbit"], r.params["k"], r.params["aqm"]) for r in runs}) == cells
        for r in runs:
            assert r.experiment is not None, r.error
            topo = r.experiment.resolve()["topology"]
            rate = r.params["rate_mbit"] * 1_000_000
            limit = r.params["k"] * rate * 0.062 / 8
            tbf = topo["bottleneck"]["qdisc"]
            assert topo["bottleneck"]["rate_bps"] == 100_000_000_000
            assert (tbf["kind"], tbf["rate_bps"], tbf["burst_bytes"]) == ("tbf", rate, 1_570_000)
            assert r.experiment.derived()["bottleneck"]["rate_bps"] == rate  # what utilization counts
            assert all(s["access_rate_bps"] == 25_000_000_000 for s in topo["senders"])
            q = tbf["child"]
            assert q["kind"] == {"bfifo": "bfifo", "fq_codel": "fq_codel", "red": "red"}[r.params["aqm"]]
            if q["kind"] != "fq_codel":
                assert abs(q["limit_bytes"] - limit) <= 1
            if q["kind"] == "red":
                assert (q["min_bytes"], q["max_bytes"], q["avpkt_bytes"]) == (30_000, 30_001, 1000)
                assert q["bandwidth_bps"] == rate
                assert not q["ecn"] and not q["adaptive"]


def test_a_report_over_a_part_of_a_scenario_is_not_judged_against_the_whole(tmp_path):
    """A study's value over its whole grid is not judged against ours over a part of it
    (``sweep --only``): the report says how much it covers; once the rest has run, the
    same value is judged."""
    from ccbench.suites.report import scenario_table, write_report

    out = tmp_path / "qb"
    opts = {"scale": "tiny", "executor": InlineExecutor(), "progress": False, "report": False}
    run_suite("recipe/q1-buffer-sizes", out, only=["cca == 'cubic'"], **opts)  # one of its two runs
    ours = float(scenario_table(select("recipe/q1-buffer-sizes")[0], out / "q1-buffer-sizes")["util"].mean())
    pub = tmp_path / "published.toml"
    pub.write_text(
        f'[[value]]\nscenario = "recipe/q1-buffer-sizes"\nmetric = "util"\nsource = "fixture"\n'
        f"value = {ours + 0.4}\ntolerance = 0.05\n"
    )
    write_report(out, published=pub)
    report = (out / "report.md").read_text()
    line = next(ln for ln in report.splitlines() if "fixture" in ln)
    assert "not judged: ours cover 1 of its 2 runs" in line and "DISAGREES" not in line, line
    assert "This report covers 1 of its 2 runs" in report and "0 disagreement(s)" in report
    run_suite("recipe/q1-buffer-sizes", out, **opts)
    write_report(out, published=pub)
    report = (out / "report.md").read_text()
    assert "DISAGREES" in next(ln for ln in report.splitlines() if "fixture" in ln)
    assert "This report covers" not in report
