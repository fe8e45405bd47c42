"""Running a performance profile and writing its report.

    OUT/profile.json     cca, competitors, scale, backend, engine version; per experiment:
                         question, title, needs, runs, the table (records); the findings
    OUT/<experiment>/    one sweep directory per experiment (docs/sweeps.md): resumable
    OUT/report.html      the report, organised by the recipe's three questions
"""

from __future__ import annotations

import html
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..suites.catalog import needs_of, plan_errors
from ..suites.report import CSS, html_table, sweep_table
from .recipe import QUESTIONS, experiments
from .rules import Finding, evaluate_rules, load_rules

__all__ = ["PROFILE_JSON", "Profile", "is_profile_dir", "load_profile", "run_profile", "write_profile_report"]

PROFILE_JSON = "profile.json"


@dataclass
class Profile:
    cca: str
    vs: list[str]
    scale: str
    backend: str
    out_dir: Path
    experiments: list[dict[str, Any]] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    report: Path | None = None

    def table(self, experiment: str) -> pd.DataFrame:
        for e in self.experiments:
            if e["id"] == experiment:
                return pd.DataFrame.from_records(e["table"])
        raise KeyError(f"no experiment {experiment!r}; known: {', '.join(e['id'] for e in self.experiments)}")

    @property
    def fired(self) -> list[Finding]:
        return [f for f in self.findings if f.fired]

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": "ccbench-profile/1", "cca": self.cca, "vs": self.vs, "scale": self.scale,
            "backend": self.backend, "experiments": self.experiments,
            "findings": [f.to_dict() for f in self.findings],
        }  # fmt: skip


def _clean(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None if math.isnan(v) else ("inf" if v > 0 else "-inf")
    return v


def run_profile(
    cca: str,
    vs: list[str] | tuple[str, ...] = (),
    out_dir: str | os.PathLike[str] | None = None,
    *,
    scale: str = "quick",
    backend: str = "sim",
    rules: str | os.PathLike[str] | None = None,
    only: list[str] | tuple[str, ...] = (),
    **sweep_options: Any,
) -> Profile:
    """Run the recipe for ``cca`` (any name a spec accepts, a Python CCA included once
    the library takes them) against CUBIC and ``vs``; write ``profile.json`` and the
    HTML report into ``out_dir`` (default ``runs/profile-<cca>-<scale>``). Resumable:
    complete runs are kept. ``only`` restricts the profile to those experiment ids (the
    rules of the others are then "not evaluated"). ``sweep_options`` go to
    :func:`ccbench.sweeps.run_sweep`."""
    from ..sweeps.plan import SweepSpecError, expand
    from ..sweeps.runner import run_sweep

    rule_list = load_rules(rules)
    root = Path(out_dir) if out_dir is not None else Path("runs") / f"profile-{cca.replace(':', '_')}-{scale}"
    root.mkdir(parents=True, exist_ok=True)
    prof = Profile(cca, list(vs), scale, backend, root)
    tables: dict[str, pd.DataFrame] = {}
    params: dict[str, list[str]] = {}
    if backend == "linux":
        sweep_options.setdefault("workers", 1)  # kernel runs measure real time: one at a time
    chosen = experiments(cca, list(vs), scale, backend)
    unknown = sorted(set(only) - {e.id for e in chosen})
    if unknown:
        raise ValueError(f"unknown experiment(s) {', '.join(unknown)}; known: {', '.join(e.id for e in chosen)}")
    for exp in (e for e in chosen if not only or e.id in only):
        entry: dict[str, Any] = {"id": exp.id, "question": exp.question, "title": exp.title, "layout": exp.layout}
        try:
            plan, error = expand(exp.sweep), None
        except SweepSpecError as e:
            plan, error = None, str(e)
        entry["needs"] = needs_of(plan_errors(plan, error))
        entry["runs"] = len(plan.runs) if plan is not None else 0
        table = pd.DataFrame()
        if plan is not None and any(r.valid for r in plan.runs):
            rep = run_sweep(plan.spec, root / exp.id, **sweep_options)
            entry["complete"] = rep.complete
            # what the backend cannot run on this machine (netem for random loss on the
            # linux backend, ...) is a missing capability, like a spec the library rejects
            entry["needs"] += list(dict.fromkeys(
                str(f.get("error")) for f in rep.failed if f.get("error_type") == "BackendError"
            ))  # fmt: skip
            entry["failed"] = [
                {"params": f.get("params"), "error_type": f.get("error_type"), "error": str(f.get("error"))[:500]}
                for f in rep.failed
                if f.get("error_type", "SpecError") not in ("SpecError", "BackendError")
            ]
            if rep.complete:
                table = sweep_table(root / exp.id, exp.layout, all_variables=True)
        tables[exp.id] = table
        params[exp.id] = [c for c in table.columns if c in (plan.spec.columns() if plan is not None else [])]
        entry["params"] = params[exp.id]
        entry["table"] = [{k: _clean(v) for k, v in row.items()} for row in table.to_dict(orient="records")]
        prof.experiments.append(entry)
    prof.findings = evaluate_rules(rule_list, tables, params)
    (root / PROFILE_JSON).write_text(json.dumps(prof.to_dict(), indent=1, default=str) + "\n")
    prof.report = write_profile_report(prof)
    return prof


def is_profile_dir(path: str | os.PathLike[str]) -> bool:
    return (Path(path) / PROFILE_JSON).is_file()


def load_profile(path: str | os.PathLike[str]) -> Profile:
    p = Path(path)
    try:
        d = json.loads((p / PROFILE_JSON).read_text())
    except (OSError, ValueError) as e:
        raise FileNotFoundError(f"{p}: not a profile directory (no readable {PROFILE_JSON}): {e}") from None
    prof = Profile(d["cca"], list(d.get("vs", [])), d["scale"], d["backend"], p, list(d["experiments"]))
    prof.findings = [Finding(**f) for f in d.get("findings", [])]
    return prof


def _findings_html(findings: list[Finding]) -> str:
    rows = []
    for f in findings:
        mark = {"fired": "&#9873; flagged", "not fired": "not flagged", "not evaluated": "not evaluated"}[f.status]
        cls = ' class="bad"' if f.fired else ""
        val = "-" if f.value is None else ("never" if f.value == math.inf else f"{f.value:.4g}")
        rows.append(
            f"<tr><td{cls}>{mark}</td><td>{html.escape(f.rule)}</td><td>{html.escape(f.text or '')}</td>"
            f"<td><code>{html.escape(f.condition)}</code></td><td>{val}</td></tr>"
        )
    head = "<tr><th>flag</th><th>rule</th><th>finding</th><th>condition</th><th>value</th></tr>"
    return f"<table><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table>" if rows else ""


#: The profile's figures: experiment -> [[suite.figure]]-style specs (ccbench.suites.figures).
FIGURES: dict[str, list[dict[str, Any]]] = {
    "q1-buffers": [{"x": "k", "y": "JFI flows", "logx": True, "title": "Jain's index vs buffer (BDP)"},
                   {"x": "k", "y": "retx %", "logx": True, "title": "retransmissions vs buffer (BDP)"}],
    "q1-random-loss": [{"x": "loss", "y": "util", "logx": True, "title": "utilization vs random loss"}],
    "q2-competing": [{"x": "k", "y": "share[x]", "series": "other", "logx": True,
                      "title": "the CCA's share against each competitor vs buffer (BDP)"}],
}  # fmt: skip


def _figures(prof: Profile, experiment: str, table: pd.DataFrame) -> list[str]:
    from ..suites.figures import draw

    out = []
    for i, spec in enumerate(FIGURES.get(experiment, []), start=1):
        name = f"fig-{experiment}-{i}.png"
        if draw(table, spec, prof.out_dir / name) is None:
            cap = html.escape(str(spec["title"]))
            out.append(f'<figure><img src="{name}" alt="{cap}"><figcaption>{cap}</figcaption></figure>')
    return out


def write_profile_report(prof: Profile) -> Path:
    """``report.html``: the headline findings, then per question each experiment's
    table, its needs and its findings."""
    parts = [
        f"<h1>Performance profile: {html.escape(prof.cca)}</h1>",
        f"<p>Against CUBIC{''.join(', ' + html.escape(v) for v in prof.vs)}; scale {prof.scale}; "
        f"backend {prof.backend}. Rules: docs/profile.md.</p>",
        "<h2>Headline findings</h2>",
    ]
    fired = prof.fired
    parts.append(
        "<ul>" + "".join(f"<li class=bad>{html.escape(prof.cca)} {html.escape(f.text)} [{f.rule}]</li>" for f in fired)
        + "</ul>" if fired else "<p>No rule flagged a finding.</p>"
    )  # fmt: skip
    for q, question in QUESTIONS.items():
        parts.append(f"<h2>{q}: {html.escape(question)}</h2>")
        for e in (e for e in prof.experiments if e["question"] == q):
            parts.append(f"<h3>{html.escape(e['id'])}: {html.escape(e['title'])}</h3>")
            if e["needs"]:
                parts.append("<p class=needs>Not run (needs):</p><ul class=needs>"
                             + "".join(f"<li>{html.escape(n)}</li>" for n in e["needs"]) + "</ul>")  # fmt: skip
            for f in e.get("failed", []):
                parts.append(f"<p class=bad>failed run {html.escape(json.dumps(f['params']))}: "
                             f"{html.escape(str(f['error_type']))}: {html.escape(f['error'])}</p>")  # fmt: skip
            table = pd.DataFrame.from_records(e["table"]).replace({"inf": math.inf, "-inf": -math.inf})
            if not table.empty:
                parts.append(html_table(table))
                parts.extend(_figures(prof, e["id"], table))
            parts.append(_findings_html([f for f in prof.findings if f.experiment == e["id"]]))
    out = prof.out_dir / "report.html"
    page = f"<!doctype html><meta charset=utf-8><title>ccbench profile {html.escape(prof.cca)}</title>"
    out.write_text(page + f"<style>{CSS}</style>" + "\n".join(parts), encoding="utf-8")
    return out
