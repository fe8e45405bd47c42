"""``experiment.packet_events``: per-packet drop/mark rows are opt-in; the flows table
counts drops and marks either way, and the loss metrics read whichever is there."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest

import ccbench
from ccbench.metrics import loss_and_halving_rates
from ccbench.spec import Experiment, SpecError, load_spec

ROOT = Path(__file__).resolve().parent.parent
QUICKSTART = ROOT / "specs" / "quickstart.toml"


def quick(packet_events: bool | None) -> dict:
    d = copy.deepcopy(load_spec(QUICKSTART).to_dict())
    d["experiment"].update(duration="6s", warmup="2s")
    if packet_events is not None:
        d["experiment"]["packet_events"] = packet_events
    return d


def test_packet_events_default_off_and_resolved():
    exp = Experiment.from_dict(quick(None))
    assert exp.experiment.packet_events is False
    assert exp.resolve()["packet_events"] is False
    assert Experiment.from_dict(quick(True)).resolve()["packet_events"] is True


@pytest.mark.parametrize("bad", ["yes", 1, "true"])
def test_packet_events_must_be_a_bool(bad):
    d = quick(None)
    d["experiment"]["packet_events"] = bad
    with pytest.raises(SpecError, match=r"experiment\.packet_events"):
        Experiment.from_dict(d)


@pytest.mark.engine
def test_drop_counters_match_the_rows_and_the_metrics_agree(tmp_path):
    with_rows = ccbench.run(Experiment.from_dict(quick(True)), tmp_path / "with")
    without = ccbench.run(Experiment.from_dict(quick(False)), tmp_path / "without")
    ev, flows = with_rows.events, with_rows.flows
    drops = ev[(ev["kind"].astype(str) == "drop") & (ev["value2"] == 1.0)]
    assert len(drops) > 0
    per_flow = drops.groupby("flow_id").size().reindex(flows["flow_id"], fill_value=0).to_numpy()
    assert (flows["dropped_pkts"].to_numpy() == per_flow).all()
    warm = with_rows.manifest["derived"]["window"]["warmup_ns"]
    early = drops[drops["time_ns"] < warm].groupby("flow_id").size().reindex(flows["flow_id"], fill_value=0)
    assert (flows["dropped_pkts_at_warmup"].to_numpy() == early.to_numpy()).all()
    assert int(flows["dropped_pkts"].sum()) == with_rows.manifest["stats"]["data_pkts_dropped"]
    # Off: no per-packet rows, the same flows table, the same loss rates.
    assert not (without.events["kind"].astype(str).isin(["drop", "ecn_mark"])).any()
    assert without.flows.equals(flows)
    for w in (None, warm):
        a = loss_and_halving_rates(flows, with_rows.events, warmup_ns=w)
        b = loss_and_halving_rates(without.flows, without.events, warmup_ns=w)
        np.testing.assert_array_equal(a["drops"].to_numpy(), b["drops"].to_numpy())
        np.testing.assert_array_equal(a["p_loss"].to_numpy(), b["p_loss"].to_numpy())
