"""Every spec example in the README and docs validates, and the README's and the spec
reference's Python examples run (issue 19: documentation that works). Sweep and
kernel-validation examples are run by their own suites (tests/test_sweep*.py,
validation/)."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ccbench.spec import load_spec

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: A complete spec that a fragment (say, only [[senders]]) is merged into.
BASE = {
    "experiment": {"name": "doc", "duration": "2s"},
    "bottleneck": {"rate": "10Mbit", "delay": "1ms"},
    "senders": [{"name": "a", "rtt": "20ms"}],
    "flows": [{"cca": "cubic"}],
}


def blocks(lang: str) -> list[tuple[str, str]]:
    out = []
    for doc in DOCS:
        for i, m in enumerate(re.finditer(rf"```{lang}\n(.*?)```", doc.read_text(), re.S)):
            out.append((f"{doc.name}#{i}", m.group(1)))
    return out


TOML = [b for b in blocks("toml") if "[sweep" not in b[1]]
PYTHON = [b for b in blocks("python") if b[0].split("#")[0] in ("README.md", "spec.md", "python-cca.md")]


def test_examples_are_found():
    assert len(TOML) >= 3 and len(PYTHON) >= 2


@pytest.mark.parametrize("where, text", TOML, ids=[w for w, _ in TOML])
def test_toml_examples_validate(where, text):
    data = tomllib.loads(text)
    spec = {**BASE, **data}
    if "topology" in data:
        spec.pop("bottleneck")
    if "flows" in data and "senders" not in data and len(BASE["senders"]) == 1:
        spec["senders"] = BASE["senders"]
    for flow in spec["flows"]:
        if "sender" in flow and flow["sender"] not in {s["name"] for s in spec["senders"]}:
            pytest.fail(f"{where}: flow names an undefined sender")
    load_spec(spec)


@pytest.mark.engine
@pytest.mark.parametrize("where, code", PYTHON, ids=[w for w, _ in PYTHON])
def test_python_examples_run(where, code, tmp_path):
    shutil.copytree(ROOT / "specs", tmp_path / "specs")
    p = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, f"{where}:\n{code}\n{p.stderr[-3000:]}"


@pytest.mark.engine
def test_readme_cca_params_example_and_its_error():
    """The README's `params = { beta = 819 }` is valid for CUBIC; 0.8 is refused with
    the parameter's unit (an integer scaled by 1024) and default."""
    readme = (ROOT / "README.md").read_text()
    assert "params = { beta = 819 }" in readme
    spec = {**BASE, "flows": [{"cca": "cubic", "params": {"beta": 819}}]}
    load_spec(spec)
    spec["flows"][0]["params"] = {"beta": 0.8}
    with pytest.raises(ValueError, match=r"beta is an integer: .*scaled by 1024.*\(default 717\)"):
        load_spec(spec)
