"""The documents that mirror code stay in step with it."""

from pathlib import Path

from ccbench.results import COLUMNS
from ccbench.spec import BottleneckSpec, ExperimentSection, FlowSpec, HostSpec, SenderSpec

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_results_format_documents_every_column():
    text = (DOCS / "results-format.md").read_text()
    for table, cols in COLUMNS.items():
        assert f"## {table}" in text, table
        for c in cols:
            assert f"| `{c}` |" in text, f"{table}.{c} is not documented"


def test_spec_doc_documents_every_field():
    text = (DOCS / "spec.md").read_text()
    for model in (ExperimentSection, BottleneckSpec, SenderSpec, FlowSpec, HostSpec):
        for name in model.model_fields:
            assert f"| `{name}` |" in text, f"{model.__name__}.{name} is not documented"
