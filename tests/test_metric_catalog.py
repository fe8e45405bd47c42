"""Every metric id of the specification is implemented and documented, and each
function cites its id."""

import inspect
import re
from pathlib import Path

from ccbench.metrics.catalog import METRICS

ROOT = Path(__file__).resolve().parent.parent
ID = re.compile(r"\bM-[A-Z0-9]+(?:-[A-Z0-9]+)*\b")
SPEC_CANDIDATES = (ROOT.parent / "shared" / "spec" / "metrics.md", Path("/work/shared/spec/metrics.md"))


def ids_in(path: Path) -> set[str]:
    return set(ID.findall(path.read_text()))


def test_catalog_covers_exactly_the_specified_ids():
    # the specification when it is reachable (../shared), and always our docs,
    # which repeat its ids with the function computing each
    spec = next((p for p in SPEC_CANDIDATES if p.is_file()), None)
    documented = ids_in(ROOT / "docs" / "metrics.md")
    if spec is not None:
        assert ids_in(spec) == documented, "docs/metrics.md and the specification list different ids"
    assert len(documented) >= 47
    assert sorted(documented - set(METRICS)) == [], "metrics without an implementation"
    assert sorted(set(METRICS) - documented) == [], "catalog ids that the specification does not define"


def test_docs_name_the_function_of_every_id():
    text = (ROOT / "docs" / "metrics.md").read_text()
    for mid, funcs in METRICS.items():
        row = next((line for line in text.splitlines() if line.startswith(f"| {mid} |")), None)
        assert row is not None, f"docs/metrics.md has no row for {mid}"
        for f in funcs:
            assert f"`{f.__name__}`" in row, f"docs/metrics.md row {mid} does not name {f.__name__}"


def test_each_function_cites_its_id_and_its_module_lists_it():
    for mid, funcs in METRICS.items():
        assert funcs, mid
        for f in funcs:
            doc = inspect.getdoc(f) or ""
            assert mid in doc, f"{f.__module__}.{f.__name__} does not cite {mid}"
            module_doc = inspect.getmodule(f).__doc__ or ""
            assert mid in module_doc, f"{f.__module__} docstring does not list {mid}"
