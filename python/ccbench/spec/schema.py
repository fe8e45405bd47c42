"""The spec's JSON Schema (``ccbench schema``): what editors and other tools can check a
spec against before ccbench sees it. It is generated from the spec's models, so it
never disagrees with them about fields, types and defaults; the cross-field rules
(``checks.py``) and the engine's limits are not in it: ``ccbench validate`` checks those.
"""

from __future__ import annotations

from typing import Any

from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from .experiment import Experiment

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


class _SpecJsonSchema(GenerateJsonSchema):
    """Defaults written as a spec writes them: a duration default as ``"100ms"``, not
    its nanoseconds, a size as ``"32MiB"`` (the fields' own serializers)."""

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        ser = schema["schema"].get("serialization")
        default = schema.get("default")
        if default is not None and ser is not None and ser.get("type") == "function-plain":
            schema = {**schema, "default": ser["function"](default)}
        return super().default_schema(schema)


def spec_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of an experiment spec (TOML or JSON)."""
    schema = Experiment.model_json_schema(schema_generator=_SpecJsonSchema)
    return {"$schema": SCHEMA_DIALECT, **schema}
