"""The smaller hostile-input cases of issue 17: tc's lower-case rates, huge names
echoed in full, UTF-16 files, seed=True, `ccbench list` alone."""

import copy

import pytest
from test_cli import QUICKSTART, fake_engine, invoke  # noqa: F401

from ccbench import SpecError
from ccbench.spec import load_spec
from ccbench.units import parse_rate


@pytest.mark.parametrize("text, bps", [("10mbit", 10**7), ("1gbit", 10**9), ("2tbit", 2 * 10**12), ("10Mbit", 10**7)])
def test_tc_lower_case_rates(text, bps):
    assert parse_rate(text) == bps


def test_tc_bytes_per_second_is_not_guessed():
    with pytest.raises(ValueError, match="ambiguous: in tc 'mbps' means bytes per second"):
        parse_rate("10mbps")


def test_a_huge_name_is_not_echoed_in_full(base_spec, ccas):
    d = copy.deepcopy(base_spec)
    d["experiment"]["name"] = "x" * 100_000
    d["flows"][0]["cca"] = "y" * 100_000
    with pytest.raises(SpecError) as info:
        load_spec(d, ccas=ccas)
    text = str(info.value)
    assert len(text) < 1000 and "experiment.name" in text and "flows[0].cca" in text and "..." in text


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-be", "utf-8-sig", "utf-32"])
def test_unicode_spec_files_with_a_byte_order_mark(tmp_path, ccas, codec):
    p = tmp_path / "s.toml"
    raw = QUICKSTART.read_text().encode(codec)
    if codec == "utf-16-be":
        raw = b"\xfe\xff" + raw
    p.write_bytes(raw)
    assert load_spec(p, ccas=ccas).experiment.name == "quickstart"


def test_latin1_spec_is_reported_as_not_utf8(tmp_path, ccas):
    p = tmp_path / "s.toml"
    p.write_bytes(QUICKSTART.read_text().replace("quickstart", "caf\xe9").encode("latin-1"))
    with pytest.raises(SpecError, match="not UTF-8 text"):
        load_spec(p, ccas=ccas)


@pytest.mark.parametrize("seed", [True, False, -1, 2**64, 1.0, "3"])
def test_bad_seed_overrides_are_spec_errors(ccas, seed):
    exp = load_spec(QUICKSTART, ccas=ccas)
    with pytest.raises(SpecError, match="experiment.seed"):
        exp.with_seed(seed)


@pytest.mark.usefixtures("fake_engine")
def test_list_alone_lists_the_ccas():
    r = invoke("list")
    assert r.exit_code == 0, r.output
    # One line per CCA; parameters are shown by `ccbench describe` (issue 7).
    assert "cubic" in r.stdout and "ccbench describe" in r.stdout
