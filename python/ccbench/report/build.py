"""Assembling the report pages from metrics and catalog figures."""

from __future__ import annotations

import base64
import html
import io
import json
import math
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from .. import __version__
from ..metrics import burst_recovery, by_size_bucket, fct_slowdown
from ..plots import CATALOG
from ..plots.grid import grid_axes
from ..runset import HEADLINE, OPTIONAL_RUN_METRICS, RunSet, run_metrics
from .assets import CSS, GRID_JS
from .sections import (
    equilibrium_table,
    more_run_metrics,
    overall_average_table,
    phase_table,
    relative_retransmissions_view,
    repetition_table,
)

Progress = Callable[[str, int, int], None]

RUN_FIGURES = ("throughput", "cwnd", "queue", "queue-delay", "queue-delay-cdf", "cca-state", "convergence", "mathis")
FCT_FIGURES = ("fct", "fct-slowdown")
SWEEP_FIGURES = (
    "jain-heatmap",
    "share-heatmap",
    "sender-throughput-vs-buffer",
    "retransmissions-vs-buffer",
    "queue-delay-cdf",
    "mathis",
)


def esc(x: Any) -> str:
    return html.escape(str(x), quote=True)


def fmt(v: Any) -> str:
    if v is None:
        return "—"
    if isinstance(v, (float, np.floating)):
        if not math.isfinite(v):
            return "—"
        return f"{v:.4g}" if abs(v) < 1e5 else f"{v:,.0f}"
    return str(v)


def table(
    df: pd.DataFrame,
    *,
    text_cols: Sequence[str] = (),
    row_class: Callable[[Any], str] | None = None,
    highlight: Callable[[Any, str], bool] | None = None,
) -> str:
    """An HTML table of ``df`` (values escaped, numbers formatted)."""
    head = "".join(f'<th class="{"text" if c in text_cols else ""}">{esc(c)}</th>' for c in df.columns)
    rows = []
    for _, r in df.iterrows():
        cls = row_class(r) if row_class else ""
        cells = []
        for c in df.columns:
            classes = ["text"] if c in text_cols else []
            if highlight is not None and highlight(r, c):
                classes.append("diff")
            cells.append(f'<td class="{" ".join(classes)}">{esc(fmt(r[c]))}</td>')
        rows.append(f'<tr class="{cls}">' + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def figure_html(fig: Any, caption: str, alt: str) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, metadata={"Software": None})
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return (
        f'<figure><img alt="{esc(alt)}" src="data:image/png;base64,{data}">'
        f"<figcaption>{esc(caption)}</figcaption></figure>"
    )


def figure_or_note(draw: Callable[[], Any], kind: str, caption: str | None = None) -> str:
    """A figure (caption: the catalog's summary of ``kind`` unless given), or a note
    saying why it could not be drawn (a report is still worth having when one
    figure's data is missing)."""
    try:
        fig = draw()
    except (ValueError, KeyError) as e:
        return f'<p class="note">{esc(kind)}: not drawn ({esc(e)})</p>'
    return figure_html(fig, caption if caption is not None else CATALOG[kind].summary, kind)


def page(title: str, meta: str, sections: list[tuple[str, str, str]], *, data_json: str = "") -> str:
    nav = "".join(f'<a href="#{sid}">{esc(name)}</a>' for sid, name, _ in sections)
    body = "".join(f'<section id="{sid}"><h2>{esc(name)}</h2>{content}</section>' for sid, name, content in sections)
    script = ""
    if data_json:
        script = f'<script type="application/json" id="ccb-data">{data_json}</script><script>{GRID_JS}</script>'
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body>"
        f'<header><h1>{esc(title)}</h1><div class="meta">{meta}</div></header>'
        f"<nav>{nav}</nav><main>{body}</main>{script}</body></html>"
    )


def _generated() -> str:
    return f"ccbench {esc(__version__)} · report generated {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}"


def _spec_block(manifest: dict[str, Any]) -> str:
    spec = json.dumps(manifest.get("spec", {}), indent=2, sort_keys=False, default=str)
    return f'<pre class="spec">{esc(spec)}</pre>'


def _summary_rows(s: dict[str, Any]) -> pd.DataFrame:
    rows = [
        ("total goodput [Mbit/s]", s["goodput_bps"] / 1e6),
        ("utilization φ (M-PHI)", s["utilization"]),
        ("Jain's index over flows (M-JFI)", s["jain"]),
        ("Jain's index over senders (M-JFI-SENDER)", s["jain_senders"]),
        (f"retransmissions, {s['windows']['retransmissions']} (M-RETX)", s["retransmissions"]),
        ("retransmissions, % of delivered (M-RETX-PCT)", s["retransmission_pct"]),
        (f"bottleneck drops ({s['windows']['drops']})", s["drops"]),
        ("drop ratio % (M-DROP)", s["drop_pct"]),
        ("mean queue [pkts] (M-QLEN)", s["queue"].get("mean_pkts")),
        ("SD queue [pkts] (M-QLEN)", s["queue"].get("std_pkts")),
        ("mean queue / buffer (M-NQ)", s["queue"].get("norm_mean")),
    ]
    return pd.DataFrame(rows, columns=["metric", "value"])


def run_report(rs: RunSet, progress: Progress | None) -> str:
    entry = rs.entries[0]
    res = entry.load()
    m = res.manifest
    has_fct = bool((res.flows["size_bytes"].to_numpy(dtype=np.int64) >= 0).any())
    recovery = burst_recovery(
        res.flows,
        res.flow_ts,
        duration_ns=int(res.engine_config["duration_ns"]),
        engine_flows=res.engine_config.get("flows"),
    )
    kinds = [*RUN_FIGURES, *(FCT_FIGURES if has_fct else ()), *(["burst-recovery"] if len(recovery) else [])]
    total = len(kinds) + 2
    step = 0

    def tick(what: str) -> None:
        nonlocal step
        step += 1
        if progress:
            progress(what, step, total)

    s = res.summary()
    flows = s["flows"].copy()
    flows["goodput_mbps"] = flows.pop("goodput_bps") / 1e6
    flows = flows.drop(columns=["window_start_ns", "window_end_ns"])
    link = res.link_config()
    delay_df = pd.DataFrame(
        [(k.replace("_ns", " [ms]"), v / 1e6) for k, v in s["queue_delay"].items() if k != "samples"],
        columns=["queueing delay", "value"],
    )
    summary_html = (
        '<div class="blocks"><div>'
        "<h3>Headline metrics (measurement window)</h3>"
        + table(_summary_rows(s), text_cols=["metric"])
        + "</div><div><h3>Per flow</h3>"
        + (
            table(flows, text_cols=["sender_name", "group", "cca"])
            if len(flows) <= 60
            else f'<p class="note">{len(flows)} flows: per-group view below.</p>'
        )
        + "</div><div><h3>Jain's index per group (M-JFI-GROUP)</h3>"
        + table(s["jain_by_group"], text_cols=["group"])
        + "</div><div><h3>Queueing delay at the bottleneck</h3>"
        + table(delay_df, text_cols=["queueing delay"])
        + (
            '<p class="note">From backlog × 8 / rate (the run has no sojourn samples).</p>'
            if s["windows"]["queue_delay"] != "sojourn time"
            else f'<p class="note">From {s["queue_delay"].get("samples", 0):,.0f} sojourn samples of the '
            "engine (every Nth packet dequeued, experiment.sojourn_sample_every), measurement window.</p>"
        )
        + "</div></div>"
    )
    tick("summary")
    if has_fct:
        sd = fct_slowdown(res.flows, capacity_bps=link["rate_bps"])
        summary_html += (
            "<h3>Flow completion (M-FCT, M-FCT-SLOWDOWN)</h3>"
            + table(
                by_size_bucket(sd, "fct_s").rename(
                    columns={"median": "median FCT [s]", "mean": "mean FCT [s]", "p99": "p99 FCT [s]"}
                ),
                text_cols=["bucket"],
            )
            + table(
                by_size_bucket(sd, "slowdown").rename(
                    columns={"median": "median slowdown", "mean": "mean slowdown", "p99": "p99 slowdown"}
                ),
                text_cols=["bucket"],
            )
        )
    if len(recovery):
        summary_html += (
            "<h3>Recovery after bursts (M-DOS-REC)</h3>"
            + table(
                pd.DataFrame(
                    {
                        "burst": recovery["burst"],
                        "from [s]": recovery["start_ns"] / 1e9,
                        "to [s]": recovery["end_ns"] / 1e9,
                        "pre-burst goodput [Mbit/s]": recovery["pre_bps"] / 1e6,
                        "recovery [s]": [
                            f"{r:.2f}" if ok else f"not recovered (≥ {r:.2f})"
                            for r, ok in zip(recovery["recovery_s"], recovery["recovered"], strict=True)
                        ],
                    }
                ),
                text_cols=["recovery [s]"],
            )
            + '<p class="note">Bursts are the flows with a stop time; the elephant traffic is the bulk flows '
            "without one. Recovery: the 10 s moving average of its goodput back at 90 % of its mean since the "
            "previous burst (D2 §4.5.2.4).</p>"
        )
    more = more_run_metrics(res)
    more_html = table(more, text_cols=["id", "metric", "value", "choice"])
    phases = phase_table(res)
    if phases is not None:
        more_html += "<h3>Throughput per phase of the rate schedule (M-PHASE-TPUT)</h3>" + table(phases)
    tick("metrics")
    figs = []
    for kind in kinds:
        figs.append(figure_or_note(partial(CATALOG[kind].function, rs), kind))
        tick(f"figure {kind}")
    meta = (
        f"run <b>{esc(m.get('name', ''))}</b> · {esc(m.get('spec', {}).get('experiment', {}).get('description', ''))} · "
        f"seed {esc(m.get('seed'))} · backend {esc(m.get('backend'))} · started {esc(m.get('started_at', ''))} · "
        f"engine {esc(m.get('versions', {}).get('engine', ''))} · wall {fmt(m.get('wall_time_s'))} s<br>{_generated()}"
    )
    return page(
        f"ccbench report: {m.get('name', rs.label)}",
        meta,
        [
            ("summary", "Summary", summary_html),
            ("figures", "Figures", f'<div class="figs">{"".join(figs)}</div>'),
            ("metrics", "More metrics", more_html),
            ("spec", "Spec", _spec_block(m)),
        ],
    )


def _json_value(v: Any) -> Any:
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return float(v) if math.isfinite(v) else None
    if v is None or isinstance(v, (bool, int, str)):
        return v
    return str(v)


def sweep_report(rs: RunSet, progress: Progress | None) -> str:
    total = len(rs.entries) + len(SWEEP_FIGURES)
    done = 0

    def per_run(i: int, n: int) -> None:
        if progress:
            progress("run metrics", i, total)

    t = run_metrics(rs, progress=per_run)
    done = len(rs.entries)
    axes = grid_axes(rs, t)
    rr_view = relative_retransmissions_view(t, axes)
    if rr_view is not None:
        t["rr"] = rr_view[0]
    extra = [c for c in (*OPTIONAL_RUN_METRICS, "rr") if c in t.columns and t[c].notna().any()]
    metric_cols = [c for c in t.columns if c in HEADLINE or c in extra or c.endswith((":mbps", ":share"))]
    records = [
        {k: _json_value(r[k]) for k in [*axes, "status", "run", *metric_cols] if k in t.columns}
        for _, r in t.iterrows()
    ]
    data_json = json.dumps({"axes": axes, "metrics": metric_cols, "runs": records}).replace("</", "<\\/")
    figs = []
    for kind in SWEEP_FIGURES:
        if kind in ("jain-heatmap", "share-heatmap", "sender-throughput-vs-buffer", "retransmissions-vs-buffer"):
            figs.append(figure_or_note(partial(CATALOG[kind].function, rs, table=t), kind))
        else:
            figs.append(figure_or_note(partial(CATALOG[kind].function, rs), kind))
        done += 1
        if progress:
            progress(f"figure {kind}", done, total)
    failed = t[t["status"] != "complete"]
    index_cols = ["run", "status", *[a for a in rs.axes if a in t.columns], "error"]
    index_html = (
        f"<p>{len(rs.entries)} runs: {len(rs.complete)} complete, "
        f'<span class="{"errors" if len(failed) else ""}">{len(failed)} failed</span>. '
        f"Axes: {esc(', '.join(rs.axes) or '(none vary)')}.</p>"
        + table(
            t[index_cols],
            text_cols=["run", "status", "error", *rs.axes],
            row_class=lambda r: "failed" if r["status"] != "complete" else "",
        )
    )
    metrics_html = table(
        t[["run", *axes, *[c for c in HEADLINE if c in t.columns], *extra]].round(6),
        text_cols=["run"],
        row_class=lambda r: "failed" if pd.isna(r.get("goodput_mbps")) else "",
    )
    derived_html = "<h3>Overall averages (M-AVG-PHI, M-AVG-J)</h3>" + table(
        overall_average_table(t, axes), text_cols=[a for a in axes if a not in ("buffer_bdp", "rate_mbps")] + ["(all)"]
    )
    equil = equilibrium_table(t, axes)
    if equil is not None:
        derived_html += (
            f"<h3>Equilibrium buffer (M-EQUIL): {esc(' vs '.join(equil.attrs['senders']))}</h3>"
            + table(equil)
            + '<p class="note">Where the two senders\' mean goodputs cross as the buffer grows '
            "(interpolated in log k); — when they do not cross in the grid.</p>"
        )
    if rr_view is not None:
        derived_html += (
            "<h3>Relative retransmissions (M-RR, M-AVG-RR)</h3>"
            + table(rr_view[1], text_cols=[a for a in rr_view[1].columns if a not in ("conditions", "Avg(RR)")])
            + '<p class="note">Each run\'s retransmissions over the mean of the CUBIC-only runs with the same '
            "other axes (D0 Eq. 4; column rr of the per-run metrics); Avg(RR) is the mean over conditions of "
            "the mean over each condition's runs.</p>"
        )
    reps = repetition_table(t, axes)
    if reps is not None:
        derived_html += "<h3>Jain's index over repetitions (M-STATS)</h3>" + table(reps)
    grid_html = (
        '<div id="grid-view"><div class="controls"></div><div class="out"></div></div>'
        '<p class="note">Pick the metric and the axes; the other axes are averaged (mean of the matching runs) '
        "or fixed at a value. Failed cells are marked.</p>"
    )
    first = rs.entries[0].manifest if rs.entries else {}
    meta = f"sweep <b>{esc(rs.label)}</b> · {len(rs.entries)} runs · {_generated()}"
    return page(
        f"ccbench report: {rs.label}",
        meta,
        [
            ("grid", "Grid view", grid_html),
            ("figures", "Figures", f'<div class="figs">{"".join(figs)}</div>'),
            ("derived", "Over the grid", derived_html),
            ("metrics", "Per-run metrics", metrics_html),
            ("runs", "Runs", index_html),
            ("spec", "Spec (first run)", _spec_block(first)),
        ],
        data_json=data_json,
    )
