"""docs/ccas.md is the registry's table (`ccbench list ccas --markdown`), and
`ccbench describe` works for Python CCAs too."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import ccbench
from ccbench.cli import cli

pytestmark = pytest.mark.engine

DOC = Path(__file__).resolve().parent.parent / "docs" / "ccas.md"


def test_docs_ccas_md_is_the_generated_table():
    r = CliRunner().invoke(cli, ["list", "ccas", "--markdown"])
    assert r.exit_code == 0, r.output
    assert DOC.read_text() == r.output, "regenerate: ccbench list ccas --markdown > docs/ccas.md"
    for c in ccbench.list_ccas():
        assert f"### `{c['name']}`" in r.output
        for p in c["params"]:
            assert f"| `{p['name']}` |" in r.output


def test_describe_a_python_cca():
    d = ccbench.describe_cca("python:ccbench.pycca_examples:Aimd")
    assert d["family"] == "python" and d["summary"].startswith("Generalized AIMD")
    assert [(p["name"], p["default"]) for p in d["params"]] == [("increase", 1), ("decrease", 0.5)]
    r = CliRunner().invoke(cli, ["describe", "python:ccbench.pycca_examples:Aimd"])
    assert r.exit_code == 0 and "decrease" in r.output
    r = CliRunner().invoke(cli, ["describe", "python:nope_mod:X"])
    assert r.exit_code == 2 and "cannot import module" in r.output
