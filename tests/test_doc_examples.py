"""Every example in the README and docs/*.md works (issue 19: documentation that
works): each TOML block validates (sweep specs through the sweep planner), each
Python block runs, and each ``ccbench`` command of a shell block runs, in document
order in a scratch directory holding a copy of ``specs/``. What cannot run here (root,
a SLURM cluster, the hours-long validation procedures) is listed in the ``SKIP_*``
tables with the reason and the suite that covers it; a command or block that is
neither run nor listed fails :func:`test_every_example_is_run_or_excused`.

Costs are kept down by running the sweep examples on a shrunk copy of
``specs/sweeps/buffer-grid.toml`` (same variables and keys, fewer values and a
shorter duration); the commands are exactly the documented ones.
"""

import re
import shlex
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from ccbench.spec import load_spec
from ccbench.sweeps.plan import expand

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
SHELL_LANGS = ("", "sh", "bash", "console")


@dataclass(frozen=True)
class Block:
    doc: str
    index: int
    lang: str
    text: str

    @property
    def id(self) -> str:
        return f"{self.doc}#{self.index}"


def all_blocks() -> list[Block]:
    out = []
    for doc in DOCS:
        for i, m in enumerate(re.finditer(r"^[ \t]*```(\w*)\n(.*?)^[ \t]*```", doc.read_text(), re.S | re.M)):
            out.append(Block(doc.name, i, m.group(1), textwrap.dedent(m.group(2))))
    return out


BLOCKS = all_blocks()
TOML = [b for b in BLOCKS if b.lang == "toml"]

#: Python blocks that cannot run here, by a text they contain: the reason.
SKIP_PYTHON = {
    "dask_jobqueue": "needs a SLURM cluster; the Dask executor runs on a LocalCluster in tests/test_sweep_dask.py",
    "random.Random(12).sample": "20 paper-scale elephants runs (about 10 min of CPU); the scenario planner it uses "
    "is tested in tests/test_suites.py",
}
#: Python blocks that take minutes (a text they contain: the run to make first, if any);
#: the slow suite runs them.
SLOW_PYTHON: dict[str, tuple[str, str] | None] = {
    "runs/validation/v1-60us-100p": ("validation/specs/v1-60us-100p.toml", "runs/validation/v1-60us-100p"),
    "run_profile(": None,  # a quick-scale profile (tests/test_profile.py runs profiles at a tiny scale)
    "run_suite(": None,  # a quick-scale suite (tests/test_suites.py runs suites at a tiny scale)
}
#: Shell blocks of these documents are procedures, not examples: the reason.
SKIP_SHELL_DOCS = {
    "validation.md": "validation procedures against ns-3 and the kernel (root, tens of minutes); "
    "their results are recorded in docs/validation.md and re-run by validation/",
}
#: Command lines that cannot run here, by their first word(s): the reason.
SKIP_COMMANDS = {
    "sudo": "needs root and network namespaces: tests/test_linux_backend.py (root) and validation/",
    "python tests/browser.py": "a headless-Chromium screenshot; tests/test_report.py loads the report in Chromium",
    "duckdb": "needs the duckdb command-line tool; the same query runs through polars in docs/sweeps.md",
    "python -": "a timing benchmark (engine CPU of a Python CCA against the built-in one); "
    "tests/test_python_cca.py runs Python CCAs",
    "ccbench sweep --suite": "a study suite (minutes at quick scale, hours at paper scale); "
    "tests/test_suites.py runs suites at a tiny scale",
    "ccbench profile": "a CCA profile (minutes at quick scale); tests/test_profile.py runs profiles at a tiny scale",
    "ccbench suites --report": "reads a suite run (ccbench sweep --suite); tests/test_suites.py covers the report",
    "ccbench compare runs/profile-": "compares two profile runs (ccbench profile); tests/test_compare.py covers compare",
    "git clone https://github.com/PoSeiDon-Workflows/": "fetches the D0 authors' dataset (a third-party repository)",
    "python validation/d0_dataset.py": "compares a paper-scale elephants run (an hour of CPU) with the authors' dataset",
}
#: Files a transcript's command reads that the document describes in words.
TRANSCRIPT_FILES = {
    "tiny-rtt.toml": """
        [experiment]
        name = "tiny-rtt"
        duration = "10s"
        [bottleneck]
        rate = "100Mbit"
        [[senders]]
        name = "s"
        rtt = "60us"
        [[flows]]
        cca = "cubic"
    """,
}
#: A synopsis, not a command: placeholders in capitals, [optional] parts, shell variables.
PLACEHOLDER = re.compile(r"\b(SPEC|DIR|KIND|FILE|SOURCE)\b|\[-|\$[\w{]")


def python_blocks(slow: bool) -> list[Block]:
    out = []
    for b in BLOCKS:
        if b.lang != "python" or any(k in b.text for k in SKIP_PYTHON):
            continue
        if any(k in b.text for k in SLOW_PYTHON) == slow:
            out.append(b)
    return out


@dataclass(frozen=True)
class Command:
    where: str
    line: str
    #: For a transcript (``$ cmd`` then its output): the documented output.
    output: str = ""


#: First words of command lines: a plain block with none of them is output, a file
#: tree or a diagram, not commands.
COMMAND_WORDS = ("ccbench", "sudo", "python", "python3", "duckdb")


def logical_lines(text: str) -> list[tuple[int, str]]:
    """``(index of the first physical line, command)``: comments dropped, lines ending
    in a backslash or inside an open quote joined to the next."""
    out: list[tuple[int, str]] = []
    pending, first = "", 0
    heredoc: str | None = None
    for i, raw in enumerate(text.splitlines()):
        if heredoc is not None:  # a here-document belongs to the command that opened it
            out[-1] = (out[-1][0], out[-1][1] + "\n" + raw)
            if raw.strip() == heredoc:
                heredoc = None
            continue
        if not pending:
            first = i
        line = (pending + " " + raw.strip()).strip() if pending else raw.strip()
        try:
            shlex.split(line.removeprefix("$ ").rstrip("\\"))
            open_quote = False
        except ValueError:
            open_quote = True
        if line.endswith("\\") or open_quote:
            pending = line.rstrip("\\").rstrip()
            continue
        pending = ""
        out.append((first, line))
        m = re.search(r"<<-?\s*'?(\w+)'?", line)
        if m:
            heredoc = m.group(1)
    return out


def commands() -> tuple[list[Command], list[tuple[str, str, str]]]:
    """The runnable ``ccbench`` command lines of every shell block, in document order,
    and the lines skipped with their reasons ``(where, line, reason)``."""
    run, skipped = [], []
    for b in BLOCKS:
        if b.lang not in SHELL_LANGS:
            continue
        lines = b.text.splitlines()
        transcript = any(line.startswith("$ ") for line in lines)
        logical = [(i, line) for i, line in logical_lines(b.text) if not transcript or line.startswith("$ ")]
        cleaned = [(i, re.sub(r"\s+#.*$", "", line.removeprefix("$ ")).strip()) for i, line in logical]
        cleaned = [(i, line) for i, line in cleaned if line and not line.startswith("#")]
        if b.lang == "" and not transcript and not any(line.split()[0] in COMMAND_WORDS for _, line in cleaned):
            continue  # output, a file tree or a diagram
        for i, line in cleaned:
            if b.doc in SKIP_SHELL_DOCS:
                skipped.append((b.id, line, SKIP_SHELL_DOCS[b.doc]))
                continue
            reason = next((r for k, r in SKIP_COMMANDS.items() if line.startswith(k)), None)
            if reason is None and PLACEHOLDER.search(line):
                reason = "a synopsis with placeholders"
            if reason is not None:
                skipped.append((b.id, line, reason))
            elif line.split()[0] == "ccbench":
                output = ""
                if transcript:
                    following = []
                    for nxt in lines[i + 1 :]:
                        if nxt.startswith("$ "):
                            break
                        following.append(nxt)
                    output = "\n".join(following).strip()
                run.append(Command(b.id, line, output))
            else:
                skipped.append((b.id, line, ""))  # neither run nor excused: the guard test fails
    return run, skipped


def shrink_sweep(path: Path) -> None:
    """The buffer-grid sweep with the same keys but 2 runs of 4 s instead of 66 of 20 s."""
    text = path.read_text()
    for old, new in (
        ("repetitions = 3", "repetitions = 1"),
        ("rate_mbit = [10, 50, 100]", "rate_mbit = [10]"),
        ("k = [0.5, 1, 2, 8]", "k = [1, 2]"),
        ('duration = "20s"', 'duration = "4s"'),
        ('warmup = "5s"', 'warmup = "1s"'),
    ):
        assert old in text, f"shrink_sweep: {old!r} is no longer in {path.name}; update the test"
        text = text.replace(old, new)
    path.write_text(text)


def workdir(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "specs", tmp_path / "specs")
    shrink_sweep(tmp_path / "specs" / "sweeps" / "buffer-grid.toml")
    (tmp_path / "docs" / "img").mkdir(parents=True)
    for name, text in TRANSCRIPT_FILES.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    return tmp_path


# --------------------------------------------------------------------------- the guard


def test_examples_are_found():
    cmds, _ = commands()
    assert len(TOML) >= 3 and len(python_blocks(False)) >= 4 and len(cmds) >= 10


def test_every_example_is_run_or_excused():
    _, skipped = commands()
    unexcused = [(where, line) for where, line, reason in skipped if not reason]
    assert not unexcused, f"doc commands neither run nor listed in SKIP_COMMANDS: {unexcused}"
    for b in BLOCKS:
        assert b.lang in (*SHELL_LANGS, "toml", "python"), f"{b.id}: code block in {b.lang!r} is not tested"


def test_the_guard_sees_an_unknown_command(monkeypatch):
    fake = Block("fake.md", 0, "sh", "make-coffee --now\nccbench validate specs/quickstart.toml\n")
    monkeypatch.setattr(sys.modules[__name__], "BLOCKS", [fake])
    cmds, skipped = commands()
    assert [c.line for c in cmds] == ["ccbench validate specs/quickstart.toml"]
    assert skipped == [("fake.md#0", "make-coffee --now", "")]


# --------------------------------------------------------------------------- TOML


@pytest.mark.parametrize("block", TOML, ids=[b.id for b in TOML])
def test_toml_examples_validate(block):
    data = tomllib.loads(block.text)
    if "sweep" in data:
        assert expand(data, engine_version="test").runs, f"{block.id}: the sweep expands to no run"
        return
    spec = {**BASE, **data}
    if "topology" in data:
        spec.pop("bottleneck")
    if "flows" in data and "senders" not in data and len(BASE["senders"]) == 1:
        spec["senders"] = BASE["senders"]
    for flow in spec["flows"]:
        if "sender" in flow and flow["sender"] not in {s["name"] for s in spec["senders"]}:
            pytest.fail(f"{block.id}: flow names an undefined sender")
    load_spec(spec)


# --------------------------------------------------------------------------- Python


def run_python(blocks: list[Block], cwd: Path) -> None:
    for b in blocks:
        p = subprocess.run([sys.executable, "-c", b.text], cwd=cwd, capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, f"{b.id}:\n{b.text}\n{p.stderr[-3000:]}"


FAST_PY_DOCS = sorted({b.doc for b in python_blocks(False)})


@pytest.mark.engine
@pytest.mark.parametrize("doc", FAST_PY_DOCS)
def test_python_examples_run(doc, tmp_path):
    """The document's Python blocks, in order, in one scratch directory."""
    run_python([b for b in python_blocks(False) if b.doc == doc], workdir(tmp_path))


@pytest.mark.slow
@pytest.mark.engine
def test_python_examples_that_read_long_runs(tmp_path):
    cwd = workdir(tmp_path)
    shutil.copytree(ROOT / "validation" / "specs", cwd / "validation" / "specs")
    for b in python_blocks(True):
        for key, prerequisite in SLOW_PYTHON.items():
            if key in b.text and prerequisite is not None and not (cwd / prerequisite[1]).exists():
                ccbench_cmd(f"ccbench run {prerequisite[0]} -o {prerequisite[1]}", cwd)
        run_python([b], cwd)


# --------------------------------------------------------------------------- commands


def ccbench_cmd(line: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "ccbench", *shlex.split(line)[1:]]
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=600)


CMD_DOCS = sorted({c.where.split("#")[0] for c in commands()[0]})


@pytest.mark.engine
@pytest.mark.parametrize("doc", CMD_DOCS)
def test_commands_run(doc, tmp_path):
    """The document's ``ccbench`` commands, in order, in one scratch directory; a
    transcript's command must fail when its documented output is an error, with that
    error's opening words."""
    cwd = workdir(tmp_path)
    for c in (c for c in commands()[0] if c.where.startswith(doc + "#")):
        p = ccbench_cmd(c.line, cwd)
        if c.output.startswith("error:"):
            assert p.returncode != 0, f"{c.where}: {c.line} succeeded but the doc shows an error"
            assert c.output.splitlines()[0][:60] in " ".join((p.stderr + p.stdout).split()), (
                f"{c.where}: {c.line}:\n{p.stderr[-2000:]}"
            )
        else:
            assert p.returncode == 0, f"{c.where}: {c.line}\n{p.stdout[-1500:]}\n{p.stderr[-3000:]}"


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
