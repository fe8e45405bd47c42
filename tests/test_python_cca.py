"""CCAs written in Python (ccbench.Cca) run by the compiled engine: the same tables as
the built-in Reno, naming by module, file and class object, parameters, determinism,
invariants under an erratic CCA, and errors that name the CCA, hook and time."""

from __future__ import annotations

import copy
import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner
from fakes import assert_tables_equal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ccbench
from ccbench.cli import cli
from ccbench.pycca import Cca, PythonCcaError, resolve
from ccbench.pycca_examples import Reno
from ccbench.spec import SpecError, load_spec

pytestmark = pytest.mark.engine

ROOT = Path(__file__).resolve().parent.parent
QUICKSTART = ROOT / "specs" / "quickstart.toml"
PY_RENO = "python:ccbench.pycca_examples:Reno"


def spec(cca: object = "reno", duration: str = "3s", seed: int = 1, **flow: object) -> dict:
    """The quickstart, shortened, with two flows of ``cca``."""
    d = copy.deepcopy(load_spec(QUICKSTART).to_dict())
    d["experiment"].update(duration=duration, warmup="1s", seed=seed)
    d["flows"] = [{"name": "f", "sender": "left", "cca": cca, "count": 2, **flow}]
    return d


def tables_without_cca_name(res: ccbench.RunResult) -> dict:
    return {name: (t.drop_columns(["cca"]) if "cca" in t.column_names else t) for name, t in res.tables.items()}


def test_python_reno_gives_the_builtin_renos_tables():
    builtin = ccbench.run(spec("reno"))
    python = ccbench.run(spec(PY_RENO))
    assert set(python.flows["cca"]) == {PY_RENO}
    a, b = tables_without_cca_name(builtin), tables_without_cca_name(python)
    for name in a:
        assert_tables_equal(b[name], a[name], name)
    # Not vacuous: the run had losses, so ssthresh and recovery were exercised.
    assert builtin.summary()["drops"] > 0


def test_a_class_by_object_a_file_and_parameters(tmp_path):
    class Halving(Reno):
        pass

    by_object = ccbench.run(spec(Halving))
    assert by_object.flows["cca"][0].endswith("Halving")
    path = tmp_path / "my_cca.py"
    path.write_text(
        textwrap.dedent(
            """
            from ccbench.pycca_examples import Aimd

            class Gentle(Aimd):
                def __init__(self, decrease=0.8):
                    super().__init__(increase=1, decrease=decrease)
            """
        )
    )
    gentle = ccbench.run(spec(f"python:{path}:Gentle", params={"decrease": 0.9}))
    halving = ccbench.run(spec(PY_RENO))
    # A gentler decrease keeps a larger window after losses: more drops per second.
    assert gentle.summary()["drops"] > halving.summary()["drops"]
    with pytest.raises(SpecError, match="do not fit"):
        load_spec(spec(f"python:{path}:Gentle", params={"beta": 1}))


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("python:no_such_module_xyz:Cca", "cannot import module"),
        ("python:ccbench.pycca_examples:Nope", "has no class"),
        ("python:ccbench.pycca:PREFIX", "not a subclass of ccbench.Cca"),
        ("python:nothing", "not a Python CCA name"),
        ("python:/no/such/file.py:X", "does not exist"),
    ],
)
def test_bad_names_are_spec_errors_naming_the_field(name, why):
    with pytest.raises(SpecError, match=why) as e:
        load_spec(spec(name))
    assert "flows[0].cca" in str(e.value)


class Raises(Reno):
    def cong_avoid(self, tp, sample):
        if tp.now > 500_000_000:
            raise ZeroDivisionError("user bug")
        super().cong_avoid(tp, sample)


class BadSsthresh(Reno):
    def ssthresh(self, tp):
        return 2.5


class BadCwnd(Reno):
    def cong_avoid(self, tp, sample):
        tp.cwnd = 0


@pytest.mark.parametrize(
    ("cls", "hook", "why", "user_frame"),
    [
        (Raises, "cong_avoid", "ZeroDivisionError: user bug", True),
        (BadSsthresh, "ssthresh", r"ssthresh\(\) return value must be an int, got 2.5", False),
        (BadCwnd, "cong_avoid", r"tp.cwnd must be an int in \[1,", True),
    ],
)
def test_a_failing_hook_ends_the_run_naming_cca_hook_and_time(tmp_path, cls, hook, why, user_frame):
    with pytest.raises(PythonCcaError, match=why) as e:
        ccbench.run(spec(cls), tmp_path / "r")
    msg = str(e.value)
    assert cls.__qualname__ in msg and f"in {hook}() at simulated time" in msg
    # The user's traceback, down to their line, when the error happened in their code.
    assert ("Traceback" in msg and "test_python_cca.py" in msg) == user_frame
    assert e.value.__cause__ is not None
    assert not (tmp_path / "r").exists()  # nothing half-written


def test_the_cli_runs_a_python_cca_and_reports_its_failure(tmp_path):
    d = spec(PY_RENO)
    path = tmp_path / "s.json"
    path.write_text(json.dumps(d))
    r = CliRunner().invoke(cli, ["run", str(path), "-o", str(tmp_path / "ok")])
    assert r.exit_code == 0, r.output
    d["flows"][0]["cca"] = "python:ccbench.pycca_examples:Aimd"
    d["flows"][0]["params"] = {"decrease": 2.0}
    path.write_text(json.dumps(d))
    r = CliRunner().invoke(cli, ["run", str(path), "-o", str(tmp_path / "bad")])
    assert r.exit_code != 0 and "decrease must be in (0, 1)" in r.output


class Erratic(Cca):
    """A CCA that sets arbitrary (valid) windows and pacing rates from the flow's seeded
    stream: the engine's invariants must hold whatever a user CCA does."""

    def __init__(self, max_cwnd: int = 400, pace: bool = False):
        self.max_cwnd = max_cwnd
        self.pace = pace

    def ssthresh(self, tp):
        return 1 + int(tp.random() * self.max_cwnd)

    def cong_avoid(self, tp, sample):
        if tp.random() < 0.05:
            tp.cwnd = 1 + int(tp.random() * self.max_cwnd)
        else:
            tp.cwnd = min(tp.cwnd + sample.acked_sacked, self.max_cwnd)

    def undo_cwnd(self, tp):
        return max(1, tp.prior_cwnd)

    def state(self, tp):
        return "erratic"


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), max_cwnd=st.integers(1, 2000))
def test_engine_invariants_hold_under_an_erratic_python_cca(seed, max_cwnd):
    d = spec(Erratic, duration="1500ms", seed=seed, params={"max_cwnd": max_cwnd})
    d["experiment"]["warmup"] = "500ms"
    res = ccbench.run(d)
    st_ = res.manifest["stats"]
    assert st_["data_pkts_sent"] == st_["data_pkts_delivered"] + st_["data_pkts_dropped"] + st_["data_pkts_in_network"]
    t = res.tables["flow_ts"]
    ids, times = t["flow_id"].to_pylist(), t["time_ns"].to_pylist()
    for flow in set(ids):
        mine = [x for f, x in zip(ids, times, strict=True) if f == flow]
        assert mine == sorted(mine)
    cwnd = t["cwnd_pkts"].to_pylist()
    # No upper bound: during recovery PRR sends ssthresh/prior_cwnd packets per delivered
    # one (RFC 6937, as Linux), which an ssthresh above cwnd makes large.
    assert cwnd and all(c >= 1 for c in cwnd)
    assert set(t["cc_state"].to_pylist()) == {"erratic"}
    # Determinism: the same seed gives the same tables, randomness included.
    again = ccbench.run(d)
    for name in res.tables:
        assert_tables_equal(again.tables[name], res.tables[name], name)


def test_resolve_by_file_is_cached(tmp_path):
    path = tmp_path / "c.py"
    path.write_text("from ccbench.pycca_examples import Reno as R\n")
    assert resolve(f"python:{path}:R") is resolve(f"python:{path}:R") is Reno
