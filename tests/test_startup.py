"""Start-up stays light (issue 19): `ccbench --help`, `validate` and `list` do not
import pandas or pyarrow; `--help` and `import ccbench` not even pydantic or NumPy."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
QUICKSTART = ROOT / "specs" / "quickstart.toml"
HEAVY = ("pandas", "pyarrow", "pydantic", "numpy", "ccbench._core", "matplotlib")


def modules_after(code: str) -> dict:
    """Which heavy modules a fresh interpreter has loaded after running ``code``."""
    script = (
        "import sys, json\n"
        f"try:\n    {code}\nexcept SystemExit:\n    pass\n"
        f"print('@@' + json.dumps({{m: (m in sys.modules) for m in {HEAVY!r}}}))\n"
    )
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    line = [x for x in p.stdout.splitlines() if x.startswith("@@")][-1]
    return json.loads(line[2:])


def test_import_ccbench_is_light():
    loaded = modules_after("import ccbench; ccbench.__version__")
    assert not any(loaded.values()), loaded


def test_help_imports_nothing_heavy():
    loaded = modules_after("from ccbench.cli import main; main(['--help'])")
    assert not any(loaded.values()), loaded


@pytest.mark.parametrize("argv", [["validate", str(QUICKSTART)], ["list"], ["list", "ccas"]])
def test_validate_and_list_do_not_import_pandas_or_pyarrow(argv):
    loaded = modules_after(f"from ccbench.cli import main; main({argv!r})")
    assert not loaded["pandas"] and not loaded["pyarrow"], loaded


def test_lazy_names_resolve():
    import ccbench

    assert ccbench.SpecError.__name__ == "SpecError" and callable(ccbench.run)
    assert set(ccbench.__all__) <= set(dir(ccbench))
    with pytest.raises(AttributeError):
        ccbench.nope  # noqa: B018


def test_cli_limits_openblas_threads():
    p = subprocess.run(
        [sys.executable, "-c", "import os, ccbench.cli; print(os.environ['OPENBLAS_NUM_THREADS'])"],
        capture_output=True,
        text=True,
        timeout=60,
        env={k: v for k, v in __import__("os").environ.items() if k != "OPENBLAS_NUM_THREADS"},
    )
    assert p.stdout.strip() == "1"


def test_the_engine_alone_and_the_simulation_do_not_load_pandas_or_pyarrow(tmp_path):
    """Issue 19 (memory): importing the compiled engine loads no heavy library, and a
    run imports pandas and pyarrow only once the simulation is over (the progress
    callback sees none of them while the engine runs)."""
    engine_only = modules_after("import ccbench._core")
    assert not (engine_only["pandas"] or engine_only["pyarrow"] or engine_only["numpy"]), engine_only
    # The quickstart, five times longer: at 30 s it took under the engine's 0.1 s progress
    # interval on an idle machine once the engine got faster, and no call was seen (150 s:
    # 4 calls when idle). Not much longer: from about 250 s a table reaches a streamed
    # chunk during the run, and streaming writes Parquet through pyarrow.
    spec = tmp_path / "long-quickstart.toml"
    spec.write_text(QUICKSTART.read_text().replace('duration = "30s"', 'duration = "150s"'))
    assert 'duration = "150s"' in spec.read_text()
    code = (
        "import sys, ccbench\n"
        "seen = []\n"
        f"ccbench.run({str(spec)!r}, out_dir={str(tmp_path / 'run')!r}, "
        "progress=lambda s, d: seen.append(('pandas' in sys.modules, 'pyarrow' in sys.modules)))\n"
        "print('@@', len(seen), any(a or b for a, b in seen), 'pandas' in sys.modules)\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    _, calls, heavy_during, heavy_after = [x for x in p.stdout.splitlines() if x.startswith("@@")][-1].split()
    assert int(calls) > 0 and heavy_during == "False" and heavy_after == "True"
