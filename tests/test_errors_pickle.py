"""Every exception class of the package pickles and unpickles intact, so errors cross
process boundaries (issue 19): a spec error in a `multiprocessing` worker reaches the
parent instead of hanging `Pool.map`."""

import importlib
import multiprocessing
import pickle
import pkgutil
from pathlib import Path

import pytest

import ccbench
from ccbench.backends import BackendError, BackendUnavailable
from ccbench.backends.linux.system import CommandError
from ccbench.errors import PreflightError, RunInterrupted
from ccbench.spec import SpecError

#: Constructor arguments of the classes that take more than a message.
SAMPLE_ARGS = {
    SpecError: ([("flows[0].cca", "'cubci' is not a known CCA"), ("experiment.duration", "required")], "spec.toml"),
    PreflightError: (["buffer below one packet", "memory above the machine's"],),
    RunInterrupted: (Path("runs/partial"),),
    BackendError: ("linux", ["not root", "iperf3 is missing"]),
    BackendUnavailable: ("linux", ["not root"]),
    CommandError: (["ip", "netns", "add", "x"], 1, "File exists"),
}


def all_exception_classes() -> list[type[BaseException]]:
    for mod in pkgutil.walk_packages(ccbench.__path__, "ccbench."):
        if mod.name.endswith(("_core", "__main__")):
            continue
        importlib.import_module(mod.name)
    import sys

    found = {}
    for name, module in list(sys.modules.items()):
        if not name.startswith("ccbench") or module is None:
            continue
        for obj in vars(module).values():
            if isinstance(obj, type) and issubclass(obj, BaseException) and obj.__module__.startswith("ccbench"):
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return [found[k] for k in sorted(found)]


CLASSES = all_exception_classes()
#: Parametrize by name and look the class up when the test runs: another test may have
#: re-imported a module, and pickle resolves classes by their current module.
NAMES = [f"{c.__module__}:{c.__qualname__}" for c in CLASSES]


def test_the_known_classes_are_found():
    names = {c.__name__ for c in CLASSES}
    assert {
        "SpecError",
        "EngineError",
        "EngineUnavailable",
        "ResultsError",
        "PreflightError",
        "OutputDirError",
    } <= names


@pytest.mark.parametrize("name", NAMES)
def test_round_trips_through_pickle(name):
    module, qualname = name.split(":")
    cls = getattr(importlib.import_module(module), qualname)
    args = next(
        (a for c, a in SAMPLE_ARGS.items() if c.__qualname__ == cls.__qualname__), ("something went wrong: 'x'",)
    )
    try:
        err = cls(*args)
    except TypeError as e:  # pragma: no cover - a new class with a richer constructor
        pytest.fail(f"{cls.__name__} needs sample arguments in SAMPLE_ARGS and a __reduce__: {e}")
    for protocol in (2, pickle.HIGHEST_PROTOCOL):
        back = pickle.loads(pickle.dumps(err, protocol=protocol))
        assert type(back) is cls
        assert str(back) == str(err)
        assert back.args == err.args
        for attr in ("issues", "source", "problems", "path", "backend", "argv", "returncode", "stderr"):
            assert getattr(back, attr, None) == getattr(err, attr, None), attr


def _load_bad_spec(i: int) -> str:
    ccbench.load_spec({"experiment": {"name": f"w{i}"}, "bottleneck": {}, "senders": [], "flows": []})
    return "unreachable"


def test_spec_error_in_a_pool_worker_is_raised_in_the_parent():
    with multiprocessing.get_context("fork").Pool(2) as pool:
        with pytest.raises(SpecError) as info:
            pool.map_async(_load_bad_spec, range(4)).get(timeout=60)
    assert any(path == "experiment.duration" for path, _ in info.value.issues)
    assert "experiment.duration" in str(info.value)
