"""Headline findings of a profile: documented rules (``profile/rules.toml``,
docs/profile.md) evaluated over the profile's tables.

A rule selects the grid cells of one experiment (``where``, a sweep expression over the
cell's parameters), aggregates one metric over them (``min``, ``max`` or ``mean``) and
compares the result with a threshold. A rule whose experiment did not run (it needs a
missing capability) or whose metric is absent is reported as not evaluated, never as
"did not fire".
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd

from ..sweeps.expr import ExpressionError, evaluate

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["Finding", "Rule", "evaluate_rule", "evaluate_rules", "load_rules"]

_AGG: dict[str, Callable[[list[float]], float]] = {"min": min, "max": max, "mean": lambda v: sum(v) / len(v)}
_OPS: dict[str, Callable[[float, float], bool]] = {
    "<": lambda a, b: a < b, ">": lambda a, b: a > b, "<=": lambda a, b: a <= b, ">=": lambda a, b: a >= b,
}


@dataclass(frozen=True)
class Rule:
    id: str
    question: str
    experiment: str
    metric: str
    where: str
    agg: str
    op: str
    threshold: float
    finding: str
    nan_fires: bool = False

    def describe(self) -> str:
        sel = f" where {self.where}" if self.where else ""
        return f"{self.agg}({self.metric}{sel}) {self.op} {self.threshold:g} in {self.experiment}"


@dataclass
class Finding:
    rule: str
    question: str
    experiment: str
    status: str  # "fired", "not fired", "not evaluated"
    value: float | None
    text: str
    condition: str
    cells: int

    @property
    def fired(self) -> bool:
        return self.status == "fired"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def load_rules(path: str | os.PathLike[str] | None = None) -> list[Rule]:
    """The rules of ``path`` (default: the shipped ``rules.toml``); a malformed rule is
    a ``ValueError`` naming it and the field."""
    p = Path(path) if path is not None else Path(str(resources.files("ccbench.profile") / "rules.toml"))
    try:
        doc = tomllib.loads(p.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise ValueError(f"{p}: cannot read the rules: {e}") from None
    rules = []
    for i, r in enumerate(doc.get("rule", [])):
        where = f"{p}: rule[{i}] ({r.get('id', '?')})"
        missing = [k for k in ("id", "question", "experiment", "metric", "agg", "op", "threshold", "finding") if k not in r]
        if missing:
            raise ValueError(f"{where}: missing {', '.join(missing)}")
        if r["agg"] not in _AGG:
            raise ValueError(f"{where}: agg {r['agg']!r} is not one of {', '.join(_AGG)}")
        if r["op"] not in _OPS:
            raise ValueError(f"{where}: op {r['op']!r} is not one of {', '.join(_OPS)}")
        rules.append(
            Rule(
                id=str(r["id"]), question=str(r["question"]), experiment=str(r["experiment"]),
                metric=str(r["metric"]), where=str(r.get("where", "")), agg=str(r["agg"]), op=str(r["op"]),
                threshold=float(r["threshold"]), finding=str(r["finding"]), nan_fires=bool(r.get("nan_fires", False)),
            )  # fmt: skip
        )
    return rules


def _typed(v: Any) -> Any:
    try:
        return float(v) if isinstance(v, str) and v.strip() not in ("", "nan") else v
    except ValueError:
        return v


def evaluate_rule(rule: Rule, table: pd.DataFrame | None, params: list[str]) -> Finding:
    def result(status: str, value: float | None, cells: int, text: str = "") -> Finding:
        return Finding(rule.id, rule.question, rule.experiment, status, value, text, rule.describe(), cells)

    if table is None or table.empty or rule.metric not in table.columns:
        return result("not evaluated", None, 0, "the experiment did not run" if table is None or table.empty
                      else f"no column {rule.metric!r}")  # fmt: skip
    values = []
    for _, row in table.iterrows():
        names = {p: _typed(row[p]) for p in params if p in row.index and p.isidentifier()}
        if rule.where:
            try:
                if not evaluate(rule.where, names):
                    continue
            except ExpressionError as e:
                return result("not evaluated", None, 0, f"its 'where' cannot be evaluated here: {e}")
        values.append(float(row[rule.metric]))
    if not values:
        return result("not evaluated", None, 0, "no grid cell matches its 'where'")
    missing = [v for v in values if math.isnan(v)]
    finite = [v for v in values if not math.isnan(v)]
    if missing and rule.nan_fires:
        return result("fired", math.inf, len(values), _never(rule))
    if not finite:
        return result("not evaluated", None, len(values), "the metric is missing in every cell")
    value = _AGG[rule.agg](finite)
    fired = _OPS[rule.op](value, rule.threshold)
    try:
        text = "" if not fired else _never(rule) if math.isinf(value) else rule.finding.format(value=value)
    except (ValueError, KeyError):
        text = rule.finding
    return result("fired" if fired else "not fired", value, len(values), text)


def evaluate_rules(rules: list[Rule], tables: dict[str, pd.DataFrame], params: dict[str, list[str]]) -> list[Finding]:
    """Every rule over the profile's tables (experiment id -> table, and the table's
    parameter columns)."""
    return [evaluate_rule(r, tables.get(r.experiment), params.get(r.experiment, [])) for r in rules]


def _never(rule: Rule) -> str:
    """The finding for a time that was never reached: its text without the number."""
    return rule.finding.split("(")[0].strip() + " (not reached before the run ended)"
