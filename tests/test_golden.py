"""Golden summaries: every shipped spec (``specs/*.toml``, ``specs/ncf/*.toml``), run
cut to :data:`GOLDEN_DURATION_NS` past its last flow's start, gives a readable, quantized summary that must
match the one committed in ``tests/golden/<dir>-<name>.txt``. A change of simulated
behaviour shows up as a reviewed diff of those files, never as a surprise.

After an intended change, rewrite them and review the diff::

    make golden        # = CCBENCH_UPDATE_GOLDEN=1 pytest tests/test_golden.py

The engine is deterministic (same spec, seed and version: bit-identical tables), so
a mismatch is a behaviour change; figures are rounded to 3 significant digits only to
keep the files readable and the diffs small.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import ccbench
from ccbench.spec import load_spec
from ccbench.units import parse_duration

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden"
SPECS = sorted((ROOT / "specs").glob("*.toml")) + sorted((ROOT / "specs" / "ncf").glob("*.toml"))
#: Runs are cut to this much simulated time after the last flow starts (keeps the
#: whole file well under 60 s of CPU).
GOLDEN_DURATION_NS = 5_000_000_000
#: Groups with more flows than this are summarized per group, not per flow.
PER_FLOW_LIMIT = 12
UPDATE = os.environ.get("CCBENCH_UPDATE_GOLDEN") == "1"


def q(x: float) -> str:
    """``x`` to 3 significant digits (integers below 1000 exactly)."""
    if x is None or (isinstance(x, float) and not np.isfinite(x)):
        return "-"
    if float(x).is_integer() and abs(x) < 1000:
        return str(int(x))
    return f"{float(x):.3g}"


def shortened(path: Path) -> tuple[dict[str, Any], int]:
    """The spec as a dict with its duration cut to :data:`GOLDEN_DURATION_NS` past its
    last flow's latest start (rate changes after the cut dropped, a warm-up that no longer
    fits cut to a fifth of the run), and that duration."""
    d = load_spec(path).to_dict()
    e = d["experiment"]
    last_start = max(parse_duration(f.get("start", "0s")) + parse_duration(f.get("start_jitter", "0s")) for f in d["flows"])
    duration = min(parse_duration(e.get("duration", "30s")), last_start + GOLDEN_DURATION_NS)
    e["duration"] = f"{duration}ns"
    if parse_duration(e.get("warmup", "0s")) >= duration // 2:
        e["warmup"] = f"{duration // 5}ns"
    links = [d["bottleneck"]] if "bottleneck" in d else []
    links += d.get("topology", {}).get("hops", []) + d.get("topology", {}).get("links", [])
    for link in links:
        if "rate_schedule" in link:
            link["rate_schedule"] = [c for c in link["rate_schedule"] if parse_duration(c["at"]) < duration]
    return d, duration


def _flow_line(label: str, df: pd.DataFrame) -> str:
    n = len(df)
    finite = df[df["size_bytes"] >= 0]
    fct = finite.loc[finite["completed"], "fct_ns"] / 1e6
    parts = [
        f"{label}: n={n}",
        f"cca={','.join(sorted(set(df['cca'].astype(str))))}",
        f"delivered_MB={q(df['delivered_bytes'].sum() / 1e6)}",
        f"sent={q(df['segs_sent'].sum())}",
        f"retrans={q(df['segs_retrans'].sum())}",
        f"rtos={q(df['rtos'].sum())}",
    ]
    if len(finite):
        parts.append(f"completed={int(finite['completed'].sum())}/{len(finite)}")
        parts.append(f"fct_ms_median={q(float(fct.median()) if len(fct) else float('nan'))}")
    if "setup_ns" in df:
        setup = df.loc[df["setup_ns"] >= 0, "setup_ns"] / 1e6
        if len(setup):
            parts.append(f"setup_ms_median={q(float(setup.median()))}")
            parts.append(f"syn_retrans={int(df['syn_retrans'].sum())}")
    return " ".join(parts)


def golden_summary(path: Path, *, seed: int | None = None) -> str:
    spec, duration = shortened(path)
    if seed is not None:
        spec["experiment"]["seed"] = seed
    res = ccbench.run(spec)
    flows = res.flows
    st = res.manifest["stats"]
    lines = [f"# {path.relative_to(ROOT)}, first {duration / 1e9:g} s"]
    lines.append(
        "packets: "
        + " ".join(
            f"{k}={q(st.get(k, 0))}"
            for k in (
                "data_pkts_sent",
                "data_pkts_dropped",
                "ack_pkts_sent",
                "handshake_pkts_sent",
                "handshake_pkts_dropped",
                "feedback_pkts_sent",
            )
        )
    )
    for group, df in flows.groupby(flows["group"].astype(str), sort=True):
        if len(df) <= PER_FLOW_LIMIT:
            for _, row in df.iterrows():
                lines.append(_flow_line(f"flow {row['flow_id']} ({group})", df.loc[[row.name]]))
        else:
            lines.append(_flow_line(f"group {group}", df))
    links = res.links
    for _, link in links.iterrows():
        lines.append(
            f"link {link['link']}: tx_pkts={q(link['tx_pkts'])} dropped={q(link['dropped_pkts'])} "
            f"marked={q(link['ecn_marked_pkts'])}"
        )
    return "\n".join(lines) + "\n"


def golden_file(path: Path) -> Path:
    rel = path.relative_to(ROOT / "specs").with_suffix("")
    return GOLDEN / ("-".join(rel.parts) + ".txt")


@pytest.mark.parametrize("path", SPECS, ids=lambda p: str(p.relative_to(ROOT / "specs")))
def test_shipped_spec_matches_its_golden_summary(path: Path) -> None:
    got = golden_summary(path)
    file = golden_file(path)
    if UPDATE:
        file.parent.mkdir(exist_ok=True)
        file.write_text(got)
        return
    assert file.exists(), f"no golden summary {file.name}: run `make golden` and review it"
    want = file.read_text()
    if got != want:
        diff = "".join(difflib.unified_diff(want.splitlines(True), got.splitlines(True), str(file), "this run"))
        pytest.fail(f"{path.name}: the simulated behaviour changed (review, then `make golden`):\n{diff}")


def test_every_shipped_spec_has_a_golden_summary_and_no_stale_ones() -> None:
    want = {golden_file(p).name for p in SPECS}
    have = {p.name for p in GOLDEN.glob("*.txt")}
    assert want == have, f"missing {sorted(want - have)}, stale {sorted(have - want)}"


def test_a_behaviour_change_shows_as_a_diff() -> None:
    # Another seed moves the start jitter: the quantized summary must notice.
    path = ROOT / "specs" / "quickstart.toml"
    assert golden_summary(path, seed=12345) != golden_file(path).read_text()
