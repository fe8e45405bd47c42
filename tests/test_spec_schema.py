"""The spec's JSON Schema (`ccbench schema`): every shipped spec conforms to it, it
rejects what the spec rejects field by field, and its defaults are written as a spec
writes them and read back to the models' defaults."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import tomllib
from click.testing import CliRunner

from ccbench.cli import cli
from ccbench.spec.qdisc import CodelSpec, FqCodelSpec
from ccbench.spec.schema import spec_json_schema
from ccbench.units import parse_duration, parse_size

ROOT = Path(__file__).resolve().parent.parent
SPECS = sorted(
    p
    for p in [*ROOT.glob("specs/**/*.toml"), *ROOT.glob("validation/specs/*.toml")]
    if "sweeps" not in p.parts  # sweep files: a [sweep] table over a base spec
)


@pytest.fixture(scope="module")
def validator():
    schema = spec_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _leaves(e) -> set[str]:
    """Where an error is: for anyOf/oneOf, the locations where each branch failed."""
    if not e.context:
        return {"/".join(map(str, e.absolute_path))}
    return set().union(*(_leaves(c) for c in e.context))


def errors(validator, d):
    """Every location an error of ``d`` points at."""
    return sorted(set().union(*(_leaves(e) for e in validator.iter_errors(d))))


def test_every_shipped_spec_conforms(validator):
    assert len(SPECS) > 10
    for p in SPECS:
        assert errors(validator, tomllib.loads(p.read_text())) == [], p


def test_it_rejects_unknown_keys_and_kinds_where_they_are(validator, base_spec):
    assert errors(validator, base_spec) == []
    base_spec["bottleneck"]["bufer"] = "1BDP"
    assert "bottleneck" in errors(validator, base_spec)
    del base_spec["bottleneck"]["bufer"]
    base_spec["bottleneck"]["qdisc"] = "sfq"
    assert "bottleneck/qdisc" in errors(validator, base_spec)
    base_spec["bottleneck"]["qdisc"] = {"kind": "codel", "target": 5}
    assert "bottleneck/qdisc/target" in errors(validator, base_spec)
    base_spec["bottleneck"]["qdisc"] = {"kind": "codel", "target": "2ms", "ecn": True}
    assert errors(validator, base_spec) == []
    del base_spec["experiment"]["name"]
    assert errors(validator, base_spec) == ["experiment"]


def test_defaults_are_written_as_a_spec_writes_them():
    defs = spec_json_schema()["$defs"]
    codel = defs["CodelSpec"]["properties"]
    assert codel["interval"]["default"] == "100ms"
    assert parse_duration(codel["target"]["default"]) == CodelSpec(kind="codel").target
    memory = defs["FqCodelSpec"]["properties"]["memory_limit"]["default"]
    assert parse_size(memory) == FqCodelSpec(kind="fq_codel").memory_limit
    assert defs["FqCodelSpec"]["properties"]["ecn"]["default"] is True


def test_ccbench_schema_prints_or_writes_it(tmp_path):
    out = CliRunner().invoke(cli, ["schema"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output) == json.loads(json.dumps(spec_json_schema()))
    target = tmp_path / "spec.schema.json"
    assert CliRunner().invoke(cli, ["schema", "-o", str(target)]).exit_code == 0
    assert json.loads(target.read_text())["$schema"].endswith("2020-12/schema")
