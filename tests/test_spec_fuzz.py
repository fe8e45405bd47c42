"""Bad input never escapes as anything but a SpecError naming the field (API), or an
`error:` paragraph with exit status 2 (CLI): mutations of a valid spec."""

from __future__ import annotations

import copy
import os
import re
from typing import Any

import pytest
import tomllib
import tomlw
from click.testing import CliRunner
from conftest import BASE_SPEC
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ccbench import cli as cli_mod
from ccbench import engine
from ccbench.spec import Experiment, SpecError

Path_ = tuple[Any, ...]


def _paths(node: Any, prefix: Path_ = ()) -> list[Path_]:
    out: list[Path_] = []
    if isinstance(node, dict):
        for k, v in node.items():
            out.append((*prefix, k))
            out.extend(_paths(v, (*prefix, k)))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.append((*prefix, i))
            out.extend(_paths(v, (*prefix, i)))
    return out


def _dict_paths(node: Any) -> list[Path_]:
    return [()] + [p for p in _paths(node) if isinstance(_get(node, p), dict)]


def _get(node: Any, path: Path_) -> Any:
    for p in path:
        node = node[p]
    return node


def _text(path: Path_) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _mentions(msg: str, path: Path_) -> bool:
    """`msg` names `path`, or its nearest key-ending ancestor, literally or with list
    indices as [*] (for messages about a field across a list, like sender names)."""
    if "params" in path:  # CCA parameters are free-form data: the field is `params`
        path = path[: path.index("params") + 1]
    while path and isinstance(path[-1], int):
        path = path[:-1]
    if not path:
        return True  # the whole document: any message is about it
    text = _text(path)
    return text in msg or re.sub(r"\[\d+\]", "[*]", text) in msg


garbage = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(
        ["", "-1s", "0", "1e400s", "NaN", "10", "10MB/s", "2BDP", "900pkt", "1ms", "100Mbit", "min", "a", "cubic"]
    ),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)
cca_names = st.one_of(st.text(max_size=10), st.sampled_from(["cubci", "Cubic", "reno ", "bbr", "vegas", ""]))
key_names = st.one_of(st.text(min_size=1, max_size=10), st.sampled_from(["strat", "buffr", "rtt_ms", "CCA", "name "]))


@st.composite
def mutated(draw: st.DrawFn, int_range: bool = False) -> tuple[dict[str, Any], list[Path_]]:
    """A valid spec with 1-3 mutations; returns it and the paths touched."""
    spec = copy.deepcopy(BASE_SPEC)
    touched: list[Path_] = []
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["delete", "rename", "garbage", "cca", "extra"]))
        paths = _paths(spec)
        if op in ("delete", "rename", "garbage") and not paths:
            continue
        if op == "cca":
            flows = spec.get("flows")
            if not isinstance(flows, list) or not flows or not isinstance(flows[0], dict):
                continue
            i = draw(st.integers(0, len(flows) - 1))
            if not isinstance(flows[i], dict):
                continue
            flows[i]["cca"] = draw(cca_names)
            touched.append(("flows", i, "cca"))
        elif op == "extra":
            parent = draw(st.sampled_from(_dict_paths(spec)))
            key = draw(key_names)
            _get(spec, parent)[key] = draw(garbage)
            touched.append((*parent, key))
        else:
            path = draw(st.sampled_from(paths))
            parent, last = _get(spec, path[:-1]), path[-1]
            if op == "delete":
                if isinstance(parent, list):
                    parent.pop(last)
                else:
                    del parent[last]
                touched.append(path)
            elif op == "rename" and isinstance(parent, dict):
                new = draw(key_names)
                parent[new] = parent.pop(last)
                touched += [path, (*path[:-1], new)]
            else:
                value = draw(garbage)
                if int_range and isinstance(value, int) and not -(2**63) <= value < 2**63:
                    value = 0
                parent[last] = value
                touched.append(path)
    return spec, touched


def _check(msg: str, touched: list[Path_]) -> None:
    assert "Traceback" not in msg
    assert any(_mentions(msg, p) for p in touched), f"message names none of {[_text(p) for p in touched]}:\n{msg}"


@settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", 400)), deadline=None)
@given(mutated())
def test_mutated_specs_raise_spec_error_naming_the_field(case):
    spec, touched = case
    try:
        exp = Experiment.from_dict(spec, ccas=engine.catalog() or _fake())
    except SpecError as e:
        assert e.issues
        _check(str(e), touched)
        return
    exp.resolve()  # a mutation that left the spec valid must resolve


def _fake():
    from fakes import FAKE_CCAS

    return FAKE_CCAS


@pytest.fixture(scope="module")
def with_catalog():
    """CLI runs check CCA names against the engine's catalog, or the fake one."""
    with pytest.MonkeyPatch.context() as mp:
        if engine.catalog() is None:
            mp.setattr(engine, "catalog", _fake)
        yield


@settings(
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", 150)),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(mutated(int_range=True))
def test_mutated_specs_through_the_cli_exit_2_without_traceback(with_catalog, tmp_path_factory, case):
    spec, touched = case
    path = tmp_path_factory.mktemp("fuzz") / "spec.toml"
    text = tomlw.dumps(spec)
    tomllib.loads(text)  # the writer itself must produce valid TOML
    path.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(cli_mod.cli, ["validate", str(path)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output and "Traceback" not in result.stderr
    if result.exit_code == 0:
        return
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: ")
    _check(result.stderr, touched)
