"""The CCA catalog from the engine: `ccbench list ccas`, `ccbench describe`, and
their Python equivalents (issue 7)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

import ccbench
from ccbench.cli import cli

pytestmark = pytest.mark.engine

# The studies' set and the Linux CCAs the library provides, with their families.
EXPECTED_FAMILIES = {
    "reno": "loss",
    "cubic": "loss/high-speed",
    "bbr1": "model",
    "scalable": "loss/high-speed",
    "highspeed": "loss/high-speed",
    "bic": "loss/high-speed",
    "htcp": "loss/high-speed",
    "vegas": "delay",
    "westwood": "loss",
    "illinois": "loss+delay",
    "hybla": "loss",
    "dctcp": "ecn",
    "compound": "loss+delay",
    "ledbat": "scavenger",
    "copa": "delay",
    "vivace": "rate/learning",
}


def test_every_cca_has_a_family_reference_and_summary() -> None:
    ccas = {c["name"]: c for c in ccbench.list_ccas()}
    for name, family in EXPECTED_FAMILIES.items():
        assert name in ccas, f"{name} missing from the registry"
        assert ccas[name]["family"] == family
    for c in ccas.values():
        assert c["summary"] and c["reference"] and c["family"], c
        assert c["family_doc"], f"{c['name']}: family {c['family']!r} is not described"


def test_list_ccas_prints_one_line_per_cca() -> None:
    res = CliRunner().invoke(cli, ["list", "ccas"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0].split() == ["name", "family", "reference"]
    names = [ln.split()[0] for ln in lines[1:-1]]  # one line per CCA, no wrapping
    assert names == [c["name"] for c in ccbench.list_ccas()]
    assert "loss/high-speed" in res.output and "RFC 3649" in res.output


def test_describe_shows_parameters_defaults_and_references() -> None:
    d = ccbench.describe_cca("vegas")
    assert {p["name"]: p["default"] for p in d["params"]} == {"alpha": 2, "beta": 4, "gamma": 1}
    res = CliRunner().invoke(cli, ["describe", "vegas"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    for text in ("family: delay", "tcp_vegas.c", "alpha", "Brakmo"):
        assert text in res.output


def test_describe_unknown_cca_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match="known: .*vegas"):
        ccbench.describe_cca("vegsa")
    res = CliRunner().invoke(cli, ["describe", "vegsa"])
    assert res.exit_code == 2
    assert "vegsa" in res.output and "vegas" in res.output
