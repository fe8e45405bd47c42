"""The shipped reproduction suites: one sweep spec per scenario id of
``../shared/spec/experiments.md``, grouped per source study.

A scenario file (``suites/data/<study>/<name>.toml``) is a sweep spec
(``docs/sweeps.md``) at the study's own scale (``paper``), plus a ``[suite]`` table:

- ``scenario`` (the id, e.g. ``"elephants/inter-cca-grid"``), ``title``, ``source``
  (section, figures and tables of the study), ``report`` (the table layout, see
  :mod:`ccbench.suites.report`), ``notes`` (every choice the study leaves open);
- ``[suite.quick]`` and ``[suite.tiny]``: how the scale shrinks. Each may hold
  ``sweep`` (keys merged into ``[sweep]``; ``grid`` and ``derived`` per axis),
  ``base`` (dotted paths set in the base experiment) and ``preserves`` (what the
  shrink keeps, printed by ``ccbench suites`` and in docs/reproduction.md). ``tiny``
  applies on top of ``quick``; it exists for the test suite (seconds of simulated time);
- ``[[suite.claim]]``: a result the study states without numbers, as a comparison of
  two sets of cells (``text``, ``source``, ``metric``, ``lower`` or ``higher`` and
  ``than``: cells by parameter, ``per``: the parameters compared separately); the
  report says whether our runs support it (:mod:`ccbench.suites.report`).

What a scenario needs that does not exist yet is never hard-coded here: it is what the
spec validation says (an unknown key, table or CCA), collected per scenario by
:func:`needs` and labelled with the issue that adds it by :data:`NEEDS_HINTS`.
"""

from __future__ import annotations

import copy
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = [
    "SCALES",
    "STUDIES",
    "Scenario",
    "SuiteError",
    "needs",
    "needs_of",
    "plan_errors",
    "unexplained",
    "plan_scenario",
    "scenario_sweep",
    "scenarios",
    "select",
]

#: The studies in the order of experiments.md, with their document key and title.
STUDIES: dict[str, tuple[str, str]] = {
    "elephants": ("D0", "Elephants Sharing the Highway (SC-W 2023)"),
    "tcp10g": ("D1", "A Comparison of TCP Congestion Control Algorithms in 10G Networks"),
    "recipe": ("D2", "CCA benchmarking recipe (dissertation, Ch. 3-4)"),
    "bbr": ("D2", "BBR case study (dissertation, Ch. 5)"),
    "ncf": ("D2", "NCF case study (dissertation, Ch. 6)"),
    "atscale": ("D3", "Revisiting TCP CC Throughput Models & Fairness At Scale (IMC 2021)"),
    "aqm-ns3": ("D4", "TCP x AQM interactions (ns-3)"),
}
SCALES = ("paper", "quick", "tiny")

#: Spec-validation messages that name a capability another issue adds: (regex over
#: the error text, label). Only labels: a scenario's needs are always its errors.
NEEDS_HINTS: tuple[tuple[str, str], ...] = (
    (
        r"'sage' is not a known CCA",
        "Sage, which does not exist here: a learned CCA whose policy is the Sage authors' pre-trained neural "
        "network (D2 ran the 7-day model of their repository on Linux 4.19); ccbench ships no such model and "
        "cannot train an equivalent, and a hand-written stand-in would not be Sage. Its runs wait for that model "
        "to be run as a Python CCA (docs/python-cca.md)",
    ),
    (r"\btopology\b", "multi-bottleneck topologies (issue #15)"),
    (r"\b(workloads?|traffic|mice|dos|rate_limit)\b", "traffic and workloads (issue #8)"),
    (r"neither a shipped distribution", "a flow-size or RTT distribution not shipped (give it as a CDF file; docs/traffic.md)"),
    (r"not a known CCA", "a CCA not in the library (`ccbench list ccas`; issue #7 adds the studies' set)"),
)


class SuiteError(ValueError):
    """An unknown suite or scenario, or a bad scale."""


@dataclass
class Scenario:
    id: str
    study: str
    title: str
    source: str
    report: str
    notes: str
    path: Path
    doc: dict[str, Any]  # the sweep spec without [suite]
    scales: dict[str, dict[str, Any]] = field(default_factory=dict)
    view_of: list[str] = field(default_factory=list)  # an aggregation over other scenarios: no runs
    undescribed: str = ""  # why there is nothing to run (the source describes no setup)
    figures: list[dict[str, Any]] = field(default_factory=list)  # [[suite.figure]] (ccbench.suites.figures)
    claims: list[dict[str, Any]] = field(default_factory=list)  # [[suite.claim]] (ccbench.suites.report)

    @property
    def kind(self) -> str:
        """``runs`` (a sweep), ``view`` (tables over other scenarios' runs) or
        ``undescribed`` (claimed in the source without a setup)."""
        return "view" if self.view_of else "undescribed" if self.undescribed else "runs"

    @property
    def name(self) -> str:
        return self.id.split("/", 1)[1]

    def preserves(self, scale: str) -> str:
        if scale == "paper":
            return "the study's own scale"
        if self.kind == "view":
            return "as the scenarios it aggregates"
        return str(self.scales.get(scale, {}).get("preserves", ""))


def _data_dir() -> Path:
    return Path(str(resources.files("ccbench.suites") / "data"))


def _load(path: Path, study: str) -> Scenario:
    doc = tomllib.loads(path.read_text(encoding="utf-8"))
    meta = doc.pop("suite", None)
    if not isinstance(meta, dict) or "scenario" not in meta:
        raise SuiteError(f"{path}: a [suite] table with 'scenario' is required")
    sid = str(meta["scenario"])
    if not sid.startswith(study + "/"):
        raise SuiteError(f"{path}: scenario {sid!r} is not in study {study!r}")
    return Scenario(
        id=sid,
        study=study,
        title=str(meta.get("title", "")),
        source=str(meta.get("source", "")),
        report=str(meta.get("report", "grid")),
        notes=str(meta.get("notes", "")).strip(),
        path=path,
        doc=doc,
        scales={s: dict(meta.get(s, {})) for s in ("quick", "tiny")},
        view_of=[str(v) for v in meta.get("view_of", [])],
        undescribed=str(meta.get("undescribed", "")),
        figures=[dict(f) for f in meta.get("figure", [])],
        claims=[dict(c) for c in meta.get("claim", [])],
    )


def scenarios(data_dir: Path | None = None) -> list[Scenario]:
    """Every shipped scenario, in study order then file order."""
    root = data_dir or _data_dir()
    out = []
    for study in STUDIES:
        for path in sorted(p for p in (root / study).glob("*.toml") if not p.name.startswith("_")):
            out.append(_load(path, study))
    return out


def select(name: str, data_dir: Path | None = None) -> list[Scenario]:
    """A study's scenarios (``recipe``) or one scenario (``recipe/q2-staggered``)."""
    every = scenarios(data_dir)
    chosen = [s for s in every if s.study == name or s.id == name]
    if not chosen:
        known = ", ".join([*STUDIES, *(s.id for s in every)])
        raise SuiteError(f"unknown suite {name!r}; known: {known}")
    return chosen


def _set_path(doc: Any, dotted: str, value: Any) -> None:
    """Set ``value`` at a sweep-style path (``flows[*].start``, ``a.b[0].c``) in ``doc``;
    ``[*]`` sets every element, missing tables are created."""
    from ..sweeps.plan import _parse_path

    def put(cur: Any, parts: list[str | int]) -> None:
        part, rest = parts[0], parts[1:]
        if part == "*":
            for i in range(len(cur)):
                put(cur, [i, *rest])
            return
        if not rest:
            cur[part] = copy.deepcopy(value)
            return
        if isinstance(part, str) and part not in cur:
            cur[part] = [] if isinstance(rest[0], int) else {}
        put(cur[part], rest)

    put(doc, _parse_path(dotted))


def _apply(doc: dict[str, Any], shrink: Mapping[str, Any]) -> None:
    sweep = doc.setdefault("sweep", {})
    for key, value in dict(shrink.get("sweep", {})).items():
        if key in ("grid", "derived") and isinstance(value, Mapping):
            table = sweep.setdefault(key, {})
            for axis, v in value.items():
                if v is None or v == []:
                    table.pop(axis, None)
                else:
                    table[axis] = copy.deepcopy(v)
        else:
            sweep[key] = copy.deepcopy(value)
    base = doc["base"]
    for dotted, value in dict(shrink.get("base", {})).items():
        _set_path(base, dotted, value)


def scenario_sweep(sc: Scenario, scale: str = "paper") -> dict[str, Any]:
    """The sweep spec (as data, base inline) of a scenario at a scale."""
    if scale not in SCALES:
        raise SuiteError(f"unknown scale {scale!r}; allowed: {', '.join(SCALES)}")
    doc = copy.deepcopy(sc.doc)
    sweep = doc.pop("sweep", {})
    if "base" not in doc:
        base_file = sweep.pop("base", None)
        if base_file is not None:
            base = tomllib.loads((sc.path.parent / str(base_file)).read_text(encoding="utf-8"))
            base.update(doc)  # the scenario's own tables replace the shared base's
            doc = base
        doc = {"base": doc}
    doc["sweep"] = sweep
    doc["sweep"].setdefault("name", sc.id.replace("/", "-"))
    if scale in ("quick", "tiny"):
        _apply(doc, sc.scales.get("quick", {}))
    if scale == "tiny":
        _apply(doc, sc.scales.get("tiny", {}))
    return doc


@dataclass
class ScenarioPlan:
    scenario: Scenario
    scale: str
    plan: Any = None  # ccbench.sweeps.plan.SweepPlan, or None when the sweep itself is refused
    error: str | None = None  # the sweep spec refused as a whole

    @property
    def runs(self) -> int:
        return len(self.plan.runs) if self.plan is not None else 0

    @property
    def valid_runs(self) -> int:
        return sum(1 for r in self.plan.runs if r.valid) if self.plan is not None else 0

    @property
    def packets(self) -> int:
        return sum(r.est_packets or 0 for r in self.plan.runs) if self.plan is not None else 0

    @property
    def cpu_s(self) -> float:
        return sum(r.est_cpu_s or 0.0 for r in self.plan.runs) if self.plan is not None else 0.0

    def errors(self) -> list[str]:
        return plan_errors(self.plan, self.error)


def plan_errors(plan: Any, error: str | None = None) -> list[str]:
    """The distinct validation errors of a sweep plan's runs, or the sweep's own."""
    if error is not None:
        return [error]
    if plan is None:
        return []
    return sorted({r.error for r in plan.runs if r.error})


def plan_scenario(sc: Scenario, scale: str = "paper") -> ScenarioPlan:
    """Expand a scenario's sweep; a sweep refused as a whole is kept with its error."""
    from ..sweeps.plan import SweepSpecError, expand

    if sc.kind != "runs":
        return ScenarioPlan(sc, scale)
    try:
        return ScenarioPlan(sc, scale, plan=expand(scenario_sweep(sc, scale)))
    except SweepSpecError as e:
        return ScenarioPlan(sc, scale, error=str(e))


def _problem_lines(errors: Iterable[str]) -> list[str]:
    out: list[str] = []
    for text in errors:
        lines = [ln.strip() for ln in text.splitlines()]
        body = [ln for ln in lines[1:] if ln] if len(lines) > 1 else [re.sub(r"^.*?invalid[^:]*:\s*", "", lines[0])]
        out.extend(body)
    return out


def _normalize(line: str) -> str:
    """One problem per kind: indexes folded (``flows[3].cca`` -> ``flows[i].cca``) and
    the list of known values dropped."""
    line = re.sub(r"\[\d+\]", "[i]", line)
    return re.sub(r";\s*(known|reserved|allowed[^:]*):.*$", "", line)


def needs(sp: ScenarioPlan) -> list[str]:
    """What the scenario needs that is missing: the distinct validation problems of
    its runs (or of the sweep), each labelled with the issue that adds it when the
    message names one in :data:`NEEDS_HINTS`."""
    return needs_of(sp.errors())


def needs_of(errors: Iterable[str]) -> list[str]:
    """:func:`needs` of any list of validation errors (a sweep's, a profile's)."""
    seen: dict[str, None] = {}
    for line in _problem_lines(errors):
        line = _normalize(line)
        label = next((lab for pat, lab in NEEDS_HINTS if re.search(pat, line)), None)
        seen[f"{label}: {line}" if label else line] = None
    return list(seen)


def unexplained(sp: ScenarioPlan) -> list[str]:
    """Problems that no :data:`NEEDS_HINTS` label explains: a mistake in the suite
    itself (the tests require none)."""
    return [
        _normalize(line)
        for line in _problem_lines(sp.errors())
        if not any(re.search(pat, _normalize(line)) for pat, _ in NEEDS_HINTS)
    ]
