"""Reproduction suites: the five source studies' scenarios as shipped sweep specs
(``suites/data/<study>/``), their sizes and missing capabilities
(:mod:`~ccbench.suites.catalog`), running them (:mod:`~ccbench.suites.run`) and the
study reports (:mod:`~ccbench.suites.report`). See docs/reproduction.md."""

from .catalog import SCALES, STUDIES, Scenario, SuiteError, needs, plan_scenario, scenario_sweep, scenarios, select
from .run import run_suite

__all__ = [
    "SCALES",
    "STUDIES",
    "Scenario",
    "SuiteError",
    "needs",
    "plan_scenario",
    "run_suite",
    "scenario_sweep",
    "scenarios",
    "select",
]
