"""End to end through the compiled engine (skipped when it is not built, unless
CCBENCH_REQUIRE_ENGINE=1): the quickstart from the API and the CLI, the table
contract, and determinism."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from click.testing import CliRunner
from fakes import assert_tables_equal

import ccbench
from ccbench.cli import cli
from ccbench.results import COLUMNS, TABLES
from ccbench.spec import load_spec

pytestmark = pytest.mark.engine

ROOT = Path(__file__).resolve().parent.parent
QUICKSTART = ROOT / "specs" / "quickstart.toml"


def short(seed: int = 1, duration: str = "4s") -> dict:
    """The quickstart, shortened, as a dict."""
    d = copy.deepcopy(load_spec(QUICKSTART).to_dict())
    d["experiment"].update(duration=duration, warmup="1s", seed=seed)
    return d


def test_quickstart_from_the_api(tmp_path):
    res = ccbench.run(QUICKSTART, tmp_path / "q")
    assert (tmp_path / "q" / "manifest.json").is_file()
    assert list(res.tables) == list(TABLES)
    for name in TABLES:
        assert tuple(res.tables[name].column_names) == COLUMNS[name], name
    flows = res.flows
    assert len(flows) == 2 and set(flows["cca"]) == {"cubic"}
    assert (flows["start_ns"] < 1_000_000).all()  # start jitter is below 1 ms
    s = res.summary()
    # Two bulk flows keep a 1-BDP-buffered link busy: goodput is close to capacity
    # (about 1448/1500 of it; in-order delivery may run slightly ahead of the wire when
    # a hole at the warm-up boundary is filled) and both flows get a real share.
    assert 0.85 < s["utilization"] < 0.98
    assert (s["flows"]["goodput_bps"] > 5e6).all()
    assert s["drops"] > 0 and s["retransmissions"] > 0
    m = res.manifest
    assert m["versions"]["engine"] == ccbench.engine.engine_version()
    assert m["stats"]["sim_time_ns"] == 30 * 10**9
    back = ccbench.load(tmp_path / "q")
    for name in TABLES:
        assert_tables_equal(back.tables[name], res.tables[name], name)


def test_quickstart_from_the_cli(tmp_path):
    out = tmp_path / "runs" / "quickstart"
    r = CliRunner().invoke(cli, ["run", str(QUICKSTART), "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert "Jain" in r.stdout and "utilization" in r.stdout
    assert ccbench.load(out).manifest["name"] == "quickstart"


def test_same_seed_same_bytes(tmp_path):
    a = ccbench.run(short(seed=11), tmp_path / "a")
    b = ccbench.run(short(seed=11), tmp_path / "b")
    for name in TABLES:
        assert_tables_equal(a.tables[name], b.tables[name], name)
        assert (tmp_path / "a" / f"{name}.parquet").read_bytes() == (tmp_path / "b" / f"{name}.parquet").read_bytes(), (
            name
        )
    assert a.manifest["stats"] == b.manifest["stats"]


def test_different_seed_different_start_jitter():
    a = ccbench.run(short(seed=1))
    b = ccbench.run(short(seed=2))
    assert a.flows["start_ns"].tolist() != b.flows["start_ns"].tolist()


def test_every_shipped_spec_is_accepted_by_the_engine():
    for path in sorted((ROOT / "specs").glob("*.toml")):
        d = load_spec(path).to_dict()
        d["experiment"].update(duration="1s", warmup="0s")
        for f in d["flows"]:
            f["start"] = "0s"
        for link in [d["bottleneck"]] if "bottleneck" in d else d["topology"].get("hops", d["topology"].get("links")):
            link["rate_schedule"] = []
        res = ccbench.run(d)
        expected = load_spec(d).derived()["num_flows"]
        if any(f.get("arrival", "fixed") == "poisson" for f in d["flows"]):
            # Poisson arrivals: the expected count, give or take 4 standard deviations.
            assert abs(len(res.flows) - expected) <= 4 * expected**0.5 + 1, path.name
        else:
            assert len(res.flows) == expected, path.name


def test_list_ccas_from_the_engine():
    ccas = ccbench.list_ccas()
    names = [c["name"] for c in ccas]
    assert "reno" in names and "cubic" in names
    r = CliRunner().invoke(cli, ["list", "ccas"])
    assert r.exit_code == 0 and "cubic" in r.stdout


def test_engine_rejections_are_reported_not_raised_raw(tmp_path):
    d = short()
    d["flows"][0]["params"] = {"beta": "lots"}
    with pytest.raises(ccbench.SpecError, match=r"flows\[0\]\.params"):
        ccbench.run(d)
