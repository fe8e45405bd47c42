"""Sweep specs: grid and zip expansion, derived values, filters, seeds, run ids and
the errors a bad sweep spec gets. No simulation runs here."""

from __future__ import annotations

import copy
import math
from pathlib import Path

import pytest

from ccbench.sweeps import SweepSpecError, expand, load_sweep
from ccbench.sweeps.expr import ExpressionError, evaluate, render
from ccbench.sweeps.plan import RESERVED_COLUMNS, derive_seed

ROOT = Path(__file__).resolve().parent.parent
V = "test-engine-1"

BASE = {
    "experiment": {"name": "t", "duration": "2s", "warmup": "500ms"},
    "bottleneck": {"rate": "5Mbit", "delay": "5ms"},
    "senders": [{"name": "a", "rtt": "40ms"}],
    "flows": [{"cca": "cubic"}, {"cca": "reno", "start": "100ms"}],
}


def sweep(**section):
    return {"sweep": section, **copy.deepcopy(BASE)}


def test_grid_is_the_cartesian_product_in_spec_order():
    plan = expand(
        sweep(grid={"bottleneck.rate": ["5Mbit", "10Mbit"], "flows[0].cca": ["cubic", "reno", "bbr1"]}),
        engine_version=V,
    )
    assert [tuple(r.params.values()) for r in plan.runs] == [
        ("5Mbit", "cubic"), ("5Mbit", "reno"), ("5Mbit", "bbr1"),
        ("10Mbit", "cubic"), ("10Mbit", "reno"), ("10Mbit", "bbr1"),
    ]  # fmt: skip
    for r in plan.runs:
        assert r.experiment.bottleneck.rate == {"5Mbit": 5_000_000, "10Mbit": 10_000_000}[r.params["bottleneck.rate"]]
        assert r.experiment.flows[0].cca == r.params["flows[0].cca"]
        assert r.experiment.flows[1].cca == "reno"  # untouched
    assert len({r.run_id for r in plan.runs}) == 6


def test_zip_advances_together_and_crosses_the_grid():
    plan = expand(
        sweep(
            grid={"flows[0].cca": ["cubic", "reno"]},
            zip=[{"senders[0].rtt": ["20ms", "100ms", "200ms"], "bottleneck.delay": ["2ms", "10ms", "20ms"]}],
        ),
        engine_version=V,
    )
    assert len(plan.runs) == 2 * 3
    pairs = {(r.experiment.senders[0].rtt, r.experiment.bottleneck.delay) for r in plan.runs}
    assert pairs == {(20_000_000, 2_000_000), (100_000_000, 10_000_000), (200_000_000, 20_000_000)}


def test_zip_of_unequal_lengths_is_an_error_naming_the_group():
    with pytest.raises(SweepSpecError, match=r"sweep\.zip\[0\].*equal lengths"):
        load_sweep(sweep(zip=[{"senders[0].rtt": ["20ms", "40ms"], "bottleneck.delay": ["1ms"]}]))


def test_derived_buffer_is_k_times_the_bdp_of_each_bandwidth():
    plan = expand(
        sweep(
            grid={"rate_mbit": [5, 20], "k": [0.5, 2]},
            derived={"bottleneck.rate": "{rate_mbit}Mbit", "bottleneck.buffer": "{k}BDP"},
        ),
        engine_version=V,
    )
    assert len(plan.runs) == 4
    for r in plan.runs:
        rate = r.params["rate_mbit"] * 1_000_000
        bdp = rate * 0.040 / 8  # min RTT 40 ms
        assert r.params["bottleneck.buffer"] == f"{r.params['k']:g}BDP"
        assert r.experiment.buffer().bytes == math.ceil(r.params["k"] * bdp)


def test_derived_start_offset_per_repetition_and_typed_templates():
    plan = expand(
        sweep(repetitions=3, derived={"flows[1].start": "{100 + 250 * rep}ms", "flows[0].count": "{1 + rep}"}),
        engine_version=V,
    )
    assert [r.experiment.flows[1].start for r in plan.runs] == [100_000_000, 350_000_000, 600_000_000]
    assert [r.experiment.flows[0].count for r in plan.runs] == [1, 2, 3]
    assert [r.params["flows[0].count"] for r in plan.runs] == [1, 2, 3]  # an int, not "1"


def test_star_path_sets_every_flow():
    plan = expand(sweep(grid={"flows[*].cca": ["bbr1", "reno"]}), engine_version=V)
    assert [[f.cca for f in r.experiment.flows] for r in plan.runs] == [["bbr1", "bbr1"], ["reno", "reno"]]


def test_seeds_are_deterministic_distinct_per_repetition_and_common_across_combinations():
    spec = sweep(seed=11, repetitions=4, grid={"flows[0].cca": ["cubic", "reno"]})
    a, b = expand(spec, engine_version=V), expand(spec, engine_version=V)
    assert [r.seed for r in a.runs] == [r.seed for r in b.runs]
    assert [r.run_id for r in a.runs] == [r.run_id for r in b.runs]
    seeds = [r.seed for r in a.runs]
    assert len(set(seeds[:4])) == 4  # distinct per repetition
    assert seeds[:4] == seeds[4:]  # common random numbers across combinations
    assert all(0 <= s < 2**63 for s in seeds)
    assert all(r.experiment.experiment.seed == r.seed for r in a.runs)
    other = expand(sweep(seed=12, repetitions=4, grid={"flows[0].cca": ["cubic", "reno"]}), engine_version=V)
    assert not set(seeds) & {r.seed for r in other.runs}


def test_per_run_seeds_mix_in_the_parameters():
    plan = expand(
        sweep(seed=11, repetitions=2, seeds="per-run", grid={"flows[0].cca": ["cubic", "reno"]}), engine_version=V
    )
    assert len({r.seed for r in plan.runs}) == 4
    assert plan.runs[0].seed == derive_seed(11, 0, {"flows[0].cca": "cubic"})


def test_sweep_seed_defaults_to_the_base_seed():
    spec = sweep(repetitions=2)
    spec["experiment"]["seed"] = 99
    assert [r.seed for r in expand(spec, engine_version=V).runs] == [derive_seed(99, 0), derive_seed(99, 1)]


def test_filters_and_exclude_drop_combinations():
    plan = expand(
        sweep(
            grid={"k": [1, 2, 4], "flows[0].cca": ["cubic", "reno"]},
            derived={"bottleneck.buffer": "{k}BDP"},
            filters=["k < 4 or rep == 0"],
            exclude=[{"k": 2, "flows[0].cca": "reno"}],
            repetitions=2,
        ),
        engine_version=V,
    )
    got = {(r.params["k"], r.params["flows[0].cca"], r.repetition) for r in plan.runs}
    want = {(k, c, rep) for k in (1, 2, 4) for c in ("cubic", "reno") for rep in (0, 1)}
    want -= {(2, "reno", 0), (2, "reno", 1), (4, "cubic", 1), (4, "reno", 1)}
    assert got == want
    assert plan.dropped == 12 - len(want)


def test_an_invalid_combination_stays_in_the_plan_with_its_error():
    plan = expand(sweep(grid={"experiment.warmup": ["500ms", "5s"]}), engine_version=V)
    ok, bad = plan.runs
    assert ok.valid and ok.error is None
    assert not bad.valid and "experiment.warmup" in bad.error and "below experiment.duration" in bad.error
    assert plan.invalid == [bad] and bad.run_id != ok.run_id


def test_run_id_depends_on_the_resolved_spec_seed_and_engine_version():
    spec = sweep(repetitions=2)
    a = expand(spec, engine_version=V)
    assert a.runs[0].run_id != a.runs[1].run_id  # seeds differ
    b = expand(spec, engine_version="test-engine-2")
    assert {r.run_id for r in a.runs}.isdisjoint(r.run_id for r in b.runs)
    # An equivalent spelling of the same experiment is the same run.
    spelled = sweep(repetitions=2)
    spelled["bottleneck"]["rate"] = "5000kbit"
    assert [r.run_id for r in expand(spelled, engine_version=V).runs] == [r.run_id for r in a.runs]


def test_an_axis_that_changes_nothing_is_an_error():
    with pytest.raises(SweepSpecError, match="resolve to the same experiment"):
        expand(sweep(grid={"unused": [1, 2]}), engine_version=V)


@pytest.mark.parametrize(
    ("section", "fragment"),
    [
        ({"repetitons": 2}, "sweep.repetitons: unknown key"),
        ({"repetitions": 0}, "sweep.repetitions"),
        ({"grid": {"bottleneck.rate": []}}, "has no values"),
        (
            {"grid": {"nowhere.rate": ["1Mbit"]}},
            "sweep.grid.nowhere.rate: 'nowhere.rate': a path must start with one of",
        ),
        ({"grid": {"flows[5].cca": ["reno"]}}, "index 5 is out of range"),
        ({"grid": {"experiment.seed": [1, 2]}}, "use sweep.seed and sweep.repetitions"),
        ({"grid": {"seed": [1, 2]}}, "'seed' is a reserved name"),
        ({"grid": {"k": [1]}, "zip": [{"k": [2]}]}, "'k' is already set by sweep.grid.k"),
        ({"exclude": [{"q": 1}]}, "sweep.exclude[0].q: not an axis or derived key"),
        ({"derived": {"bottleneck.buffer": "{kk}BDP"}}, "sweep.derived.bottleneck.buffer: '{kk}BDP'"),
        ({"filters": ["__import__('os')"]}, "sweep.filters[0]"),
        ({"seeds": "random"}, "sweep.seeds"),
    ],
)
def test_bad_sweep_specs_name_the_field(section, fragment):
    with pytest.raises(SweepSpecError) as e:
        expand(sweep(**section), engine_version=V)
    assert fragment in str(e.value)


def test_a_spec_without_a_sweep_table_is_refused():
    with pytest.raises(SweepSpecError, match=r"a \[sweep\] table is required"):
        load_sweep(copy.deepcopy(BASE))


def test_base_from_another_file(tmp_path):
    (tmp_path / "base.toml").write_text((ROOT / "specs" / "quickstart.toml").read_text())
    (tmp_path / "s.toml").write_text(
        '[sweep]\nbase = "base.toml"\nrepetitions = 2\n[sweep.grid]\n"flows[0].count" = [1, 2]\n'
    )
    plan = expand(tmp_path / "s.toml", engine_version=V)
    assert plan.spec.name == "quickstart" and len(plan.runs) == 4
    assert plan.runs[0].experiment.bottleneck.rate == 100_000_000
    (tmp_path / "s2.toml").write_text('[sweep]\nbase = "missing.toml"\n')
    with pytest.raises(SweepSpecError, match="sweep.base: cannot read"):
        load_sweep(tmp_path / "s2.toml")


def test_shipped_sweep_specs_expand():
    for path in sorted((ROOT / "specs" / "sweeps").glob("*.toml")):
        plan = expand(path, engine_version=V)
        assert plan.runs and not plan.invalid, path
        assert all(r.est_packets and r.est_packets > 0 for r in plan.runs)


def test_cost_estimate_is_the_preflight_estimate_and_scales_with_rate_and_duration():
    from ccbench.preflight import estimate

    plan = expand(
        sweep(grid={"bottleneck.rate": ["5Mbit", "10Mbit"], "experiment.duration": ["2s", "4s"]}), engine_version=V
    )
    est = {(r.params["bottleneck.rate"], r.params["experiment.duration"]): r.est_packets for r in plan.runs}
    for r in plan.runs:
        assert (r.est_packets, r.est_cpu_s) == (estimate(r.experiment).packets, estimate(r.experiment).cpu_s)
    assert est[("10Mbit", "4s")] == pytest.approx(4 * est[("5Mbit", "2s")], rel=0.01)


def test_axis_names_may_not_shadow_index_columns():
    assert {"run_id", "status", "goodput_bps", "jain", "wall_time_s", "rep"} <= RESERVED_COLUMNS
    with pytest.raises(SweepSpecError, match="'jain' is a reserved name"):
        load_sweep(sweep(grid={"jain": [1, 2]}))


# --------------------------------------------------------------------------- expressions


def test_expressions_evaluate_arithmetic_comparisons_and_functions():
    names = {"k": 2, "cca": "bbr1", "rep": 3}
    assert evaluate("k * 1.5 + rep // 2", names) == 4.0
    assert evaluate("cca in ('bbr1', 'bbr3') and not k > 4", names) is True
    assert evaluate("max(k, rep) if cca == 'bbr1' else 0", names) == 3
    assert render("{k}BDP", {"k": 2.0}) == "2BDP"
    assert render("{k}BDP", {"k": 0.25}) == "0.25BDP"
    assert render("{{literal}} {k}", {"k": 1}) == "{literal} 1"
    assert render("{k * 2}", {"k": 3}) == 6


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os').system('true')",
        "k.real",
        "open('x')",
        "(lambda: 1)()",
        "[x for x in (1, 2)]",
        "2 ** 10 ** 10",
        "k[",
    ],
)
def test_expressions_refuse_anything_else(text):
    with pytest.raises(ExpressionError):
        evaluate(text, {"k": 1})


def test_template_errors():
    with pytest.raises(ExpressionError, match="without a closing"):
        render("{k", {"k": 1})
    with pytest.raises(ExpressionError, match="unknown name 'q'"):
        render("{q}ms", {"k": 1})


def test_docs_describe_every_sweep_key_and_index_column():
    from ccbench.sweeps.plan import SweepSection
    from ccbench.sweeps.store import _LEAD, _TAIL_TYPES

    sweeps_doc = (ROOT / "docs" / "sweeps.md").read_text()
    for key in SweepSection.model_fields:
        assert f"| `{key}` |" in sweeps_doc, f"sweep.{key} is not documented"
    fmt = (ROOT / "docs" / "results-format.md").read_text()
    for col in (*_LEAD, *_TAIL_TYPES):
        assert f"| `{col}` |" in fmt, f"index column {col} is not documented"
