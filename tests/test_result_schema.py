"""The Python side's copies of the results format (column lists, header size, stats
keys, the documented types) agree with the engine's own description of what it
records (`_core.result_schema()`, built from the recorder in crates/ccsim/src/trace)."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import ccbench
from ccbench.cli import cli
from ccbench.engine import HEADER_BYTES, SYN_WIRE_BYTES
from ccbench.results import COLUMNS, OPTIONAL_COLUMNS, TABLES
from ccbench.spec import load_spec

pytestmark = pytest.mark.engine

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "results-format.md").read_text()


@pytest.fixture(scope="module")
def schema() -> dict:
    from ccbench import _core

    return json.loads(_core.result_schema())


def test_ccbench_schema_results_prints_it(schema, tmp_path):
    out = CliRunner().invoke(cli, ["schema", "--results"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output) == schema == ccbench.engine.result_schema()
    target = tmp_path / "results.schema.json"
    assert CliRunner().invoke(cli, ["schema", "--results", "-o", str(target)]).exit_code == 0
    assert json.loads(target.read_text())["header_bytes"] == HEADER_BYTES


def engine_tables(schema: dict) -> dict[str, list[tuple[str, str]]]:
    return {t["name"]: [(c["name"], c["type"]) for c in t["columns"]] for t in schema["tables"]}


def test_the_python_column_lists_are_the_engines(schema):
    tables = engine_tables(schema)
    assert tuple(tables) == TABLES
    for name, cols in tables.items():
        assert tuple(c for c, _ in cols) == COLUMNS[name], name
        assert set(OPTIONAL_COLUMNS[name]) <= set(COLUMNS[name]), name


def test_the_header_sizes_are_the_engines(schema):
    assert HEADER_BYTES == schema["header_bytes"] == 52
    assert schema["udp_header_bytes"] == 28
    assert SYN_WIRE_BYTES == schema["syn_wire_bytes"] == 60


def documented_types(table: str) -> dict[str, str]:
    """`| `column` | type |` rows of the table's section of docs/results-format.md."""
    section = re.split(rf"\n## {table}\b", DOC, maxsplit=1)[1].split("\n## ", 1)[0]
    return dict(re.findall(r"^\| `(\w+)` \| (\w+) \|", section, flags=re.M))


def test_the_documented_types_are_the_engines(schema):
    for name, cols in engine_tables(schema).items():
        assert documented_types(name) == dict(cols), name


def test_every_stats_key_is_documented(schema):
    line = next(row for row in DOC.splitlines() if row.startswith("| `stats` |"))
    for key in schema["stats"]:
        assert f"`{key}`" in line, f"stats key {key} is not documented"


def test_a_run_writes_exactly_the_described_tables_types_and_stats(tmp_path, schema):
    import pyarrow as pa

    d = copy.deepcopy(load_spec(ROOT / "specs" / "quickstart.toml").to_dict())
    d["experiment"].update(duration="1s", warmup="0.2s", seed=3)
    ccbench.run(d, tmp_path / "r")
    res = ccbench.load(tmp_path / "r")
    arrow = {"uint64": pa.uint64(), "int64": pa.int64(), "float64": pa.float64(), "bool": pa.bool_()}
    for name, cols in engine_tables(schema).items():
        fields = res.tables[name].schema
        assert [f.name for f in fields] == [c for c, _ in cols], name
        for field, (col, typ) in zip(fields, cols, strict=True):
            if typ == "string":
                assert pa.types.is_dictionary(field.type) and field.type.value_type == pa.string(), (name, col)
            else:
                assert field.type == arrow[typ], (name, col, field.type)
    assert sorted(res.stats) == sorted(schema["stats"])  # the manifest sorts its keys
