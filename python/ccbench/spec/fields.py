"""Field types of the spec: quantities with units (rates, durations, sizes), loss
probabilities and names, each parsed by :mod:`ccbench.units` and bounded to what the
engine can store; and the strict, frozen base model every section derives from."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Annotated, Any, Union

from pydantic import BaseModel, ConfigDict, PlainSerializer, PlainValidator, WithJsonSchema

from ..units import (
    DURATION_FORMS,
    RATE_FORMS,
    SIZE_FORMS,
    Size,
    format_duration,
    format_rate,
    parse_duration,
    parse_rate,
    parse_size,
)

#: Largest integer any quantity may resolve to (the engine stores u64 and, for
#: "none" sentinels in tables, i64).
_MAX_INT = 2**62


def _bounded(parse: Callable[[object], int], what: str) -> Callable[[object], int]:
    def validate(value: object) -> int:
        n = parse(value)
        if n >= _MAX_INT:
            raise ValueError(f"{value!r} is too large for a {what}")
        return n

    return validate


def _optional(fn: Callable[[object], Any]) -> Callable[[object], Any]:
    return lambda v: None if v is None else fn(v)


def _opt_ser(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda v: None if v is None else fn(v)


def _size(value: object) -> Size:
    s = parse_size(value)
    if s.kind != "bdp" and s.value >= _MAX_INT:
        raise ValueError(f"{value!r} is too large for a size")
    if s.kind == "bdp" and s.value > 10**6:
        raise ValueError(f"{value!r} is too large a BDP multiple (at most 1e6)")
    return s


def _loss(value: object) -> float:
    """A loss probability: a number in [0, 1) or a percentage text like ``"0.1%"``."""
    forms = "a probability in [0, 1) such as 0.001, or a percentage such as '0.1%'"
    p: float
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a loss probability; expected {forms}")
    if isinstance(value, (int, float)):
        p = float(value)
    elif isinstance(value, str) and value.strip().endswith("%"):
        try:
            p = float(value.strip()[:-1]) / 100
        except ValueError:
            raise ValueError(f"{value!r} is not a loss probability; expected {forms}") from None
    else:
        raise ValueError(f"{value!r} is not a loss probability; expected {forms}")
    if not (math.isfinite(p) and 0.0 <= p < 1.0):
        raise ValueError(f"{value!r} is not a loss probability in [0, 1); expected {forms}")
    return p


_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.+-]{0,63}$")


def _name(value: object) -> str:
    if not isinstance(value, str) or not _NAME.match(value):
        raise ValueError(
            f"{value!r} is not a valid name: use 1-64 letters, digits, '_', '-', '.', '+', starting with a letter"
        )
    return value


def _bdp_rtt(value: object) -> str | int:
    """``"min"``, ``"max"``, a sender name, or a duration (ns)."""
    forms = "'min', 'max', a sender name, or a duration such as '100ms'"
    if isinstance(value, str) and value in ("min", "max"):
        return value
    if isinstance(value, str) and _NAME.match(value):
        return value  # a sender name; checked against the senders later
    try:
        ns = _bounded(parse_duration, "duration")(value)
    except ValueError:
        raise ValueError(f"{value!r} is not a valid bdp_rtt; expected {forms}") from None
    if ns == 0:
        raise ValueError(f"{value!r} is not a valid bdp_rtt: the RTT must be > 0")
    return ns


def _quantity_schema(forms: str, optional: bool = False) -> WithJsonSchema:
    """The JSON schema of a quantity written as text with a unit (or 0)."""
    alternatives: list[dict[str, Any]] = [{"type": "string"}, {"const": 0}]
    if optional:
        alternatives.append({"type": "null"})
    return WithJsonSchema({"anyOf": alternatives, "description": forms})


_LOSS_SCHEMA = WithJsonSchema(
    {
        "anyOf": [{"type": "number", "minimum": 0, "exclusiveMaximum": 1}, {"type": "string", "pattern": "%$"}],
        "description": "a probability in [0, 1) such as 0.001, or a percentage such as '0.1%'",
    }
)
_NAME_SCHEMA = {"type": "string", "pattern": _NAME.pattern}

Rate = Annotated[
    int,
    PlainValidator(_bounded(parse_rate, "rate")),
    PlainSerializer(format_rate, return_type=str),
    _quantity_schema(RATE_FORMS),
]
Duration = Annotated[
    int,
    PlainValidator(_bounded(parse_duration, "duration")),
    PlainSerializer(format_duration, return_type=str),
    _quantity_schema(DURATION_FORMS),
]
OptRate = Annotated[
    Union[int, None],
    PlainValidator(_optional(_bounded(parse_rate, "rate"))),
    PlainSerializer(_opt_ser(format_rate)),
    _quantity_schema(RATE_FORMS, optional=True),
]
OptDuration = Annotated[
    Union[int, None],
    PlainValidator(_optional(_bounded(parse_duration, "duration"))),
    PlainSerializer(_opt_ser(format_duration)),
    _quantity_schema(DURATION_FORMS, optional=True),
]
SizeField = Annotated[
    Size, PlainValidator(_size), PlainSerializer(str, return_type=str), _quantity_schema(SIZE_FORMS)
]
OptSize = Annotated[
    Union[Size, None],
    PlainValidator(_optional(_size)),
    PlainSerializer(_opt_ser(str)),
    _quantity_schema(SIZE_FORMS, optional=True),
]
Loss = Annotated[float, PlainValidator(_loss), _LOSS_SCHEMA]
Name = Annotated[str, PlainValidator(_name), WithJsonSchema(_NAME_SCHEMA)]
OptName = Annotated[
    Union[str, None], PlainValidator(_optional(_name)), WithJsonSchema({"anyOf": [_NAME_SCHEMA, {"type": "null"}]})
]
BdpRtt = Annotated[
    Union[str, int],
    PlainValidator(_bdp_rtt),
    PlainSerializer(lambda v: format_duration(v) if isinstance(v, int) else v),
    WithJsonSchema({"type": "string", "description": "'min', 'max', a sender name, or a duration such as '100ms'"}),
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
