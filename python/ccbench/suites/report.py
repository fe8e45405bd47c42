"""Study reports: a suite directory (``ccbench sweep --suite``) as the study's tables.

One section per scenario, in the study's order: what was run (title, the study's
figures and tables, the scale and what the scale preserves, every setup choice the
study leaves open), what could not run (its needs), and the table of our numbers per
grid cell (means over ``reps`` repetitions) with the layout's own columns
(:mod:`ccbench.suites.metrics`). Views (``elephants/overall-summary``) are computed
from the scenarios they aggregate.

**Published values.** ``suites/data/published.toml`` lists, per scenario, where the
study publishes each result (``source``) and, where we have it, the value with the
tolerance within which ours agrees. Every entry appears in the report: with a value,
next to ours with the difference and ``agrees`` / ``DISAGREES``; without one, as
"not in experiments.md" (the catalog records setups only), never dropped. An entry may
hold for one ``scale`` only (D0's Table 3 averages every bandwidth: ``paper``; the
authors' 100 Mbit/s rows: ``quick``): on a report of another scale it is shown with
ours but not judged.

**Claims.** A result a study states without numbers (``[[suite.claim]]`` of a scenario,
e.g. "NCF's elephants lose less to a mice flood than CUBIC's in one FIFO") is checked
against our cells: ``supports`` or ``CONTRADICTS``, counted with the disagreements.
"""

from __future__ import annotations

import html
import json
import math
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .catalog import STUDIES, Scenario, ScenarioPlan, needs, plan_scenario, scenarios

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["Published", "html_table", "load_published", "md_table", "scenario_table", "sweep_table", "write_report"]

#: Index metrics shown in every table: column -> (header, scale factor).
BASE_METRICS: dict[str, tuple[str, float]] = {
    "goodput_bps": ("goodput Mbit/s", 1e-6),
    "utilization": ("util", 1.0),
    "jain": ("JFI flows", 1.0),
    "jain_senders": ("JFI senders", 1.0),
    "retransmission_pct": ("retx %", 1.0),
    "drop_pct": ("drop %", 1.0),
    "queue_norm_mean": ("queue/buffer", 1.0),
}


@dataclass
class Published:
    scenario: str
    metric: str
    source: str
    where: dict[str, Any]
    value: float | None = None
    tolerance: float | None = None
    scale: str | None = None  # the one scale whose runs it compares with; None: every scale


def load_published(path: str | os.PathLike[str] | None = None) -> list[Published]:
    """The published-values file (default: the shipped ``data/published.toml``)."""
    from .catalog import _data_dir

    p = Path(path) if path is not None else _data_dir() / "published.toml"
    doc = tomllib.loads(p.read_text(encoding="utf-8"))
    out = []
    for i, e in enumerate(doc.get("value", [])):
        try:
            out.append(
                Published(
                    scenario=str(e["scenario"]),
                    metric=str(e["metric"]),
                    source=str(e["source"]),
                    where=dict(e.get("where", {})),
                    value=float(e["value"]) if "value" in e else None,
                    tolerance=float(e["tolerance"]) if "tolerance" in e else None,
                    scale=str(e["scale"]) if "scale" in e else None,
                )
            )
        except KeyError as k:
            raise ValueError(f"{p}: value[{i}] lacks {k}; required: scenario, metric, source") from None
    return out


def _label(v: Any) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    if isinstance(v, str) and v.startswith("{"):
        try:
            d = json.loads(v)
            return str(d.get("kind", v)) + "".join(f" {k}={x}" for k, x in d.items() if k != "kind")
        except ValueError:
            return v
    return str(v)


def _shown_params(runs: pd.DataFrame, columns: list[str]) -> list[str]:
    """The parameter columns that vary, without a path column that merely mirrors a
    variable zipped or derived with it (``bottleneck.qdisc`` beside ``aqm``)."""
    varying = [c for c in columns if runs[c].astype(str).nunique() > 1]
    variables = [c for c in varying if c.isidentifier()]
    text = runs[varying].astype(str)

    def mirrors(path: str) -> bool:
        return any(
            text.groupby(v)[path].nunique().max() == 1 and text.groupby(path)[v].nunique().max() == 1
            for v in variables
        )

    shown = [c for c in varying if c.isidentifier() or not mirrors(c)]
    return shown or columns[:1]


def _extras(sw: Any, layout: str, run_ids: list[str]) -> pd.DataFrame:
    from .metrics import LAYOUT_EXTRAS

    fn = LAYOUT_EXTRAS.get(layout)
    if fn is None or not run_ids:
        return pd.DataFrame(index=pd.Index(run_ids, name="run_id"))
    rows = {rid: fn(sw.run(rid)) for rid in run_ids}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("run_id")


def scenario_table(sc: Scenario, sweep_dir: str | os.PathLike[str]) -> pd.DataFrame:
    """Our numbers for one scenario (:func:`sweep_table` with the scenario's layout;
    every variable shown, so that each table says its setting even when constant)."""
    return sweep_table(sweep_dir, sc.report, all_variables=True)


def sweep_table(sweep_dir: str | os.PathLike[str], layout: str = "grid", *, all_variables: bool = False) -> pd.DataFrame:
    """One row per grid cell of a sweep (the parameter columns that vary; with
    ``all_variables`` every variable, constant or not, for rules that select cells),
    ``reps`` complete repetitions, and the means of the index metrics and of the
    layout's extras (:data:`ccbench.suites.metrics.LAYOUT_EXTRAS`)."""
    from ..sweeps.results import SweepResults

    sw = SweepResults(sweep_dir)
    runs = sw.runs
    runs = runs[runs["status"] == "complete"]
    if runs.empty:
        return pd.DataFrame()
    params = _shown_params(runs, sw.columns)
    if all_variables:
        params = list(dict.fromkeys([*(c for c in sw.columns if c.isidentifier()), *params]))
    extras = _extras(sw, layout, list(runs["run_id"]))
    data = runs.set_index("run_id").join(extras)
    metric_cols = [c for c in BASE_METRICS if c in data.columns] + list(extras.columns)
    values = data[metric_cols].apply(pd.to_numeric, errors="coerce")
    for c, (_, factor) in BASE_METRICS.items():
        if c in values.columns:
            values[c] = values[c] * factor
    keys = data[params].map(_label) if hasattr(data, "map") else data[params].applymap(_label)
    table = pd.concat([keys, values], axis=1).groupby(params, sort=False, dropna=False)
    out = table.mean(numeric_only=True)
    out.insert(0, "reps", table.size())
    out = out.reset_index().rename(columns={c: h for c, (h, _) in BASE_METRICS.items()})
    return out.dropna(axis=1, how="all")


def _match(table: pd.DataFrame, where: dict[str, Any]) -> pd.DataFrame:
    sel = table
    for k, v in where.items():
        if k not in sel.columns:
            return sel.iloc[0:0]
        sel = sel[sel[k].astype(str) == _label(v)]
    return sel


def _comparisons(
    sc: Scenario, table: pd.DataFrame, published: list[Published], scale: str | None = None, partial: str = ""
) -> list[dict[str, Any]]:
    """One row per published entry of the scenario; entries for another scale than the
    report's are shown with ours but not judged, and so are all of them when the report
    covers only ``partial`` a part of the scenario's runs (``sweep --only``): a study's
    value over its whole grid is not ours over a part of it."""
    rows = []
    for p in (p for p in published if p.scenario == sc.id):
        where = ", ".join(f"{k}={v}" for k, v in p.where.items()) or "all cells"
        if p.scale is not None:
            where += f" ({p.scale} scale)"
        row: dict[str, Any] = {"where": where, "metric": p.metric, "source": p.source}
        sel = _match(table, p.where) if not table.empty else table
        ours = float(sel[p.metric].mean()) if p.metric in sel.columns and len(sel) else math.nan
        row["ours"] = ours
        if p.value is None:
            row.update(published="not in experiments.md", difference="", verdict="no published value to compare")
        elif p.scale is not None and scale is not None and p.scale != scale:
            row.update(published=p.value, difference="", verdict=f"for the {p.scale} scale: not judged here")
        elif partial:
            row.update(published=p.value, difference="", verdict=f"not judged: ours cover {partial}")
        elif not math.isfinite(ours):
            row.update(published=p.value, difference="", verdict="not measured (no matching run)")
        else:
            diff = ours - p.value
            tol = p.tolerance if p.tolerance is not None else 0.1 * abs(p.value)
            row.update(
                published=p.value,
                difference=diff,
                verdict="agrees" if abs(diff) <= tol else f"DISAGREES (|difference| > {tol:g})",
            )
        rows.append(row)
    return rows


def _cells(where: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in where.items())


def _claims(sc: Scenario, table: pd.DataFrame) -> pd.DataFrame:
    """The scenario's claims (``[[suite.claim]]``), one row per group of a claim's
    ``per`` parameters: the mean of ``metric`` over the claimed cells (``lower`` or
    ``higher``) and over the cells they are compared with (``than``), and whether ours
    support the claim."""
    rows: list[dict[str, Any]] = []
    for c in sc.claims:
        metric, per = str(c["metric"]), [str(x) for x in c.get("per", [])]
        direction = "lower" if "lower" in c else "higher"
        mine, other = dict(c[direction]), dict(c["than"])
        head = {"claim": str(c["text"]), "metric": metric}
        source = str(c.get("source", ""))
        claimed = _match(table, mine) if not table.empty else table
        compared = _match(table, other) if not table.empty else table
        if metric not in table.columns or claimed.empty or compared.empty or any(k not in table for k in per):
            rows.append({**head, "where": f"{_cells(mine)} {direction} than {_cells(other)}", "ours": math.nan,
                         "compared with": math.nan, "verdict": "not measured (no matching run)", "source": source})  # fmt: skip
            continue
        groups = [dict(zip(per, k, strict=True)) for k in claimed[per].drop_duplicates().itertuples(index=False)]
        for sel in groups or [{}]:
            a = float(_match(claimed, sel)[metric].mean())
            b = float(_match(compared, sel)[metric].mean())
            if not (math.isfinite(a) and math.isfinite(b)):
                verdict = "not measured (no matching run)"
            else:
                verdict = "supports" if (a < b if direction == "lower" else a > b) else "CONTRADICTS"
            where = f"{_cells(mine)} {direction} than {_cells(other)}" + (f" ({_cells(sel)})" if sel else "")
            rows.append({**head, "where": where, "ours": a, "compared with": b, "verdict": verdict, "source": source})
    return pd.DataFrame(rows)


def elephants_runs(dirs: dict[str, Path]) -> pd.DataFrame:
    """The complete runs of D0's two grids (those in ``dirs``), with their ``pairing``
    (``bbr1-cubic``, ``cubic-self``, ...)."""
    from ..sweeps.results import SweepResults

    frames = []
    for sid in ("elephants/inter-cca-grid", "elephants/intra-cca-grid"):
        if sid in dirs:
            r = SweepResults(dirs[sid]).runs
            r = r[r["status"] == "complete"].copy()
            r["pairing"] = r["pair"].astype(str) + ("-cubic" if sid.startswith("elephants/inter") else "-self")
            frames.append(r)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def elephants_summary(runs: pd.DataFrame) -> pd.DataFrame:
    """D0 Table 3 over ``runs`` (:func:`elephants_runs`): per pairing x AQM, average
    utilization and Jain's index over all buffers and bandwidths (means of cell means),
    and relative retransmissions: each run's retransmissions over those of
    CUBIC-vs-CUBIC in the same condition, averaged (M-RR)."""
    if runs.empty:
        return pd.DataFrame()
    cond = ["aqm", "k", "rate_mbit", "repetition"]
    ref = runs[runs["pairing"] == "cubic-self"].set_index(cond)["retransmissions"]
    key = pd.MultiIndex.from_frame(runs[cond])
    base = ref.reindex(key).to_numpy(dtype=float)
    runs["rr"] = np.where(base > 0, runs["retransmissions"].to_numpy(dtype=float) / base, np.nan)
    cells = runs.groupby(["pairing", "aqm", "k", "rate_mbit"], sort=False).mean(numeric_only=True)
    out = cells.groupby(["pairing", "aqm"], sort=False)[["utilization", "jain_senders", "rr"]].mean()
    return out.reset_index().rename(
        columns={"utilization": "avg util (M-AVG-PHI)", "jain_senders": "avg JFI (M-AVG-J)", "rr": "RR (M-RR)"}
    )


def _coverage(sc: Scenario, dirs: dict[str, Path], plan_of: Callable[[str], ScenarioPlan]) -> str:
    """'' when every runnable run the report's scale plans for the scenario (for each
    scenario a view covers; ``plan_of``) is complete in ``dirs``; otherwise 'N of M runs',
    said when a sweep ran a part of it (``--only``) or is still under way."""
    from ..sweeps.results import SweepResults

    done = planned = 0
    for sid in sc.view_of if sc.kind == "view" else [sc.id]:
        sp = plan_of(sid)
        planned += sum(1 for r in sp.plan.runs if r.valid) if sp.plan is not None else 0
        if sid in dirs:
            runs = SweepResults(dirs[sid]).runs
            done += int((runs["status"] == "complete").sum())
    return "" if done >= planned else f"{done:,} of its {planned:,} runs"


def _figures(sc: Scenario, table: pd.DataFrame, root: Path, md: list[str], ht: list[str]) -> None:
    """The scenario's figures as PNG files beside the report, linked from both pages."""
    from .figures import draw

    if table.empty:
        return
    for i, spec in enumerate(sc.figures, start=1):
        name = f"fig-{sc.id.replace('/', '-')}-{i}.png"
        skipped = draw(table, spec, root / name)
        caption = html.escape(str(spec.get("title", "")))
        if skipped:
            md.append(f"\n_{spec.get('title', 'figure')}: {skipped}_\n")
            ht.append(f"<p><em>{caption}: {html.escape(skipped)}</em></p>")
        else:
            md.append(f"\n![{spec.get('title', name)}]({name})\n")
            ht.append(f'<figure><img src="{name}" alt="{caption}"><figcaption>{caption}</figcaption></figure>')


def _fmt(v: Any) -> str:
    if isinstance(v, (float, np.floating)):
        if math.isinf(v):
            return "never" if v > 0 else "-inf"  # a time-to-event not reached
        return "-" if math.isnan(v) else f"{float(v):.4g}"
    return str(v)


def md_table(df: pd.DataFrame) -> str:
    if df.empty:
        return "_no complete runs_\n"
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(_fmt(v).replace("|", "/") for v in row) + " |")
    return "\n".join(lines) + "\n"


def html_table(df: pd.DataFrame, flag_col: str | None = None) -> str:
    if df.empty:
        return "<p><em>no complete runs</em></p>"
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    body = []
    for row in df.itertuples(index=False):
        cells = []
        for c, v in zip(df.columns, row, strict=True):
            text = html.escape(_fmt(v))
            cls = ' class="bad"' if c == flag_col and ("DISAGREES" in text or "CONTRADICTS" in text) else ""
            cells.append(f"<td{cls}>{text}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


CSS = """body{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em}
table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:13px}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}
th{background:#f0f0f0}.bad{background:#fdd;font-weight:bold}.needs{color:#a40}pre{white-space:pre-wrap}"""


def write_report(root: str | os.PathLike[str], published: str | os.PathLike[str] | None = None) -> Path:
    """Write ``report.md`` and ``report.html`` for the suite run in ``root``; returns the
    HTML path."""
    from .run import suite_dirs

    root = Path(root)
    meta, dirs = suite_dirs(root)
    scale = str(meta.get("scale", "quick"))
    pub = load_published(published)
    by_id = {s.id: s for s in scenarios()}
    plans: dict[str, ScenarioPlan] = {}

    def plan_of(sid: str) -> ScenarioPlan:  # each scenario expanded once
        if sid not in plans:
            plans[sid] = plan_scenario(by_id[sid], scale)
        return plans[sid]

    md: list[str] = [f"# Reproduction suite `{meta['suite']}` ({scale} scale)\n"]
    ht: list[str] = [f"<h1>Reproduction suite <code>{html.escape(str(meta['suite']))}</code> ({scale} scale)</h1>"]
    study = None
    disagreements = 0
    for sid in meta.get("scenarios", []):
        sc = by_id.get(sid)
        if sc is None:
            continue
        if sc.study != study:
            study = sc.study
            doc, title = STUDIES[study]
            md.append(f"\n## {doc}: {title}\n")
            ht.append(f"<h2>{doc}: {html.escape(title)}</h2>")
        md.append(f"\n### `{sc.id}`: {sc.title}\n\nStudy: {sc.source}. Scale: {scale} ({sc.preserves(scale)}).\n")
        ht.append(f"<h3><code>{html.escape(sc.id)}</code>: {html.escape(sc.title)}</h3>")
        ht.append(f"<p>Study: {html.escape(sc.source)}. Scale: {scale} ({html.escape(sc.preserves(scale))}).</p>")
        if sc.notes:
            md.append(f"\nSetup choices: {' '.join(sc.notes.split())}\n")
            ht.append(f"<p><em>Setup choices:</em> {html.escape(' '.join(sc.notes.split()))}</p>")
        if sc.kind == "undescribed":
            md.append(f"\nNothing to run: {sc.undescribed}.\n")
            ht.append(f"<p class=needs>Nothing to run: {html.escape(sc.undescribed)}.</p>")
            continue
        missing = needs(plan_of(sc.id))
        if missing:
            md.append("\nNot run (needs):\n" + "".join(f"- {n}\n" for n in missing))
            ht.append("<p class=needs>Not run (needs):</p><ul class=needs>"
                      + "".join(f"<li>{html.escape(n)}</li>" for n in missing) + "</ul>")  # fmt: skip
        if sc.kind == "view":
            table = elephants_summary(elephants_runs(dirs)) if sc.report == "elephants-summary" else pd.DataFrame()
        else:
            table = scenario_table(sc, dirs[sid]) if sid in dirs else pd.DataFrame()
        md.append("\n" + md_table(table))
        ht.append(html_table(table))
        _figures(sc, table, root, md, ht)
        partial = _coverage(sc, dirs, plan_of) if sc.kind in ("runs", "view") else ""
        if partial:
            md.append(f"\nThis report covers {partial} (a part of the scenario, e.g. `sweep --only`).\n")
            ht.append(f"<p class=needs>This report covers {html.escape(partial)} (a part of the scenario).</p>")
        comp = _comparisons(sc, table, pub, scale, partial)
        if comp:
            cdf = pd.DataFrame(comp)[["where", "metric", "source", "published", "ours", "difference", "verdict"]]
            disagreements += int(cdf["verdict"].astype(str).str.startswith("DISAGREES").sum())
            md.append("\nPublished results:\n\n" + md_table(cdf))
            ht.append("<p>Published results:</p>" + html_table(cdf, flag_col="verdict"))
        claims = _claims(sc, table)
        if not claims.empty:
            disagreements += int(claims["verdict"].astype(str).str.startswith("CONTRADICTS").sum())
            md.append("\nClaims of the study (stated without numbers):\n\n" + md_table(claims))
            ht.append("<p>Claims of the study (stated without numbers):</p>" + html_table(claims, flag_col="verdict"))
    summary = f"{disagreements} disagreement(s) with published values or claims (flagged DISAGREES / CONTRADICTS below)."
    md.insert(1, f"\n{summary}\n")
    ht.insert(1, f"<p><strong>{html.escape(summary)}</strong></p>")
    (root / "report.md").write_text("".join(md), encoding="utf-8")
    out = root / "report.html"
    page = f"<!doctype html><meta charset=utf-8><title>ccbench suite {html.escape(str(meta['suite']))}</title>"
    out.write_text(page + f"<style>{CSS}</style>" + "\n".join(ht), encoding="utf-8")
    return out
