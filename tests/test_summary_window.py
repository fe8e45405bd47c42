"""The run summary covers one window (issue 19): goodput, retransmissions and drops
all count from the warm-up to the end, from the engine's counters, so they do not
depend on sampling; runs without those counters say which window they use."""

from __future__ import annotations

import numpy as np
import pytest
from test_cli import QUICKSTART, fake_engine, invoke  # noqa: F401

import ccbench
from ccbench.metrics import in_window, link_drop_ratio, retransmissions

#: 3 Reno flows on a 0.5-BDP buffer: losses before and after the 2-s warm-up.
SPEC = """
[experiment]
name = "window"
duration = "6s"
warmup = "2s"
sample_interval = "{interval}"
[bottleneck]
rate = "10Mbit"
delay = "2ms"
buffer = "0.5BDP"
[[senders]]
name = "a"
rtt = "20ms"
[[flows]]
cca = "reno"
count = 3
"""


def run(tmp_path, interval: str):
    spec = tmp_path / f"w-{interval}.toml"
    spec.write_text(SPEC.format(interval=interval))
    return spec, ccbench.run(spec, out_dir=tmp_path / f"out-{interval}")


@pytest.mark.engine
def test_every_summary_figure_covers_the_window_and_does_not_depend_on_sampling(tmp_path):
    _, sampled = run(tmp_path, "100ms")
    spec0, unsampled = run(tmp_path, "0s")
    s, s0 = sampled.summary(), unsampled.summary()
    f = sampled.flows
    window_retx = int((f["segs_retrans"] - f["segs_retrans_at_warmup"]).sum())
    assert 0 < window_retx < int(f["segs_retrans"].sum()), "losses both before and after the warm-up"
    assert s["retransmissions"] == window_retx == retransmissions(in_window(f))
    assert s["windows"] == {
        "retransmissions": "measurement window",
        "drops": "link counters",
        "queue_delay": "sojourn time",
    }
    # drops from the link counters equal those from the queue samples at the warm-up and the end
    q = sampled.queue_ts
    q = q[q["link"].astype(str) == "bottleneck"]
    at = lambda t: int(q.loc[q["time_ns"] == t, "dropped_pkts"].iloc[0])  # noqa: E731
    assert s["drops"] == at(6_000_000_000) - at(2_000_000_000) > 0
    # sampling changes nothing: the unsampled run gives the same figures
    assert len(unsampled.queue_ts) == 0
    for k in ("retransmissions", "retransmission_pct", "drops", "drop_pct", "goodput_bps"):
        assert s0[k] == s[k], k
    # and the CLI prints them, labelled with their window
    r = invoke("run", spec0, "-o", tmp_path / "cli", "--quiet")
    assert r.exit_code == 0, r.output
    out = " ".join(r.stdout.split())
    assert f"retransmissions (window) {window_retx} (" in out
    assert f"bottleneck drops (window) {s['drops']} (" in out


def test_window_helpers_on_hand_made_tables():
    import pandas as pd

    flows = pd.DataFrame(
        {
            "segs_sent": [100, 50],
            "segs_retrans": [10, 0],
            "segs_delivered": [90, 50],
            "segs_sent_at_warmup": [40, 0],
            "segs_retrans_at_warmup": [4, 0],
            "segs_delivered_at_warmup": [36, 0],
        }
    )
    w = in_window(flows)
    assert w["segs_retrans"].tolist() == [6, 0] and w["segs_delivered"].tolist() == [54, 50]
    with pytest.raises(ValueError, match="at the warm-up"):
        in_window(flows.drop(columns=["segs_sent_at_warmup"]))
    links = pd.DataFrame(
        {
            "link": ["access", "bottleneck"],
            "enqueued_pkts": [5, 1000],
            "dropped_pkts": [0, 30],
            "enqueued_pkts_at_warmup": [1, 400],
            "dropped_pkts_at_warmup": [0, 10],
        }
    )
    d = link_drop_ratio(links)
    assert d == {"drops": 20.0, "arrivals": 620.0, "drop_pct": 100 * 20 / 620}
    assert link_drop_ratio(links, link="access")["drop_pct"] == 0.0
    with pytest.raises(ValueError, match="no link"):
        link_drop_ratio(links, link="nowhere")


@pytest.mark.usefixtures("fake_engine")
def test_a_run_without_window_counters_says_whole_run_and_unavailable(tmp_path):
    """The fake engine writes tables as runs before the counters existed: no
    ``*_at_warmup`` columns and no links table."""
    spec = tmp_path / "s.toml"
    spec.write_text(QUICKSTART.read_text().replace('sample_interval = "100ms"', 'sample_interval = "0s"'))
    res = ccbench.run(spec, out_dir=tmp_path / "o")
    # no queue samples and no link counters: drops are unavailable, never 0
    res.tables["queue_ts"] = res.tables["queue_ts"].slice(0, 0)
    s = res.summary()
    assert s["drops"] is None and np.isnan(s["drop_pct"])
    assert s["windows"]["retransmissions"] == "whole run" and s["windows"]["drops"] == "unavailable"
    assert s["retransmissions"] == int(res.flows["segs_retrans"].sum())
    r = invoke("run", spec, "-o", tmp_path / "cli", "--quiet")
    assert r.exit_code == 0, r.output
    assert "retransmissions (whole run)" in r.stdout
