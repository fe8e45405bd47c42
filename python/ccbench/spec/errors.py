"""The one error a bad spec raises, and the translation of pydantic's validation errors
into messages that name the field by path, the bad value and what is allowed."""

from __future__ import annotations

import re
import types
import typing
from typing import Annotated, Any, Union

from pydantic import BaseModel, Tag, ValidationError

from ..errors import CcbenchError


class SpecError(CcbenchError, ValueError):
    """A spec is invalid. ``issues`` lists (field path, message) pairs; ``str()`` is a
    readable paragraph naming each field, the bad value and what is allowed."""

    def __init__(self, issues: list[tuple[str, str]], source: str | None = None):
        self.issues = issues
        self.source = source
        super().__init__(self._text())

    def __reduce__(self) -> tuple[type[SpecError], tuple[list[tuple[str, str]], str | None]]:
        # Pickle by constructor arguments, so the error crosses process boundaries.
        return (type(self), (self.issues, self.source))

    def _text(self) -> str:
        where = f"{self.source}: " if self.source else ""
        lines = [_cap(f"{path}: {msg}" if path else msg) for path, msg in self.issues]
        if len(lines) == 1:
            return f"{where}invalid spec: {lines[0]}"
        return f"{where}invalid spec ({len(lines)} problems):\n" + "\n".join(f"  {line}" for line in lines)


class SpecWarning(UserWarning):
    """A spec is valid but probably not what was meant (e.g. ECN with a qdisc that never marks)."""


def _path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _unwrap(tp: Any) -> Any:
    """Strip Annotated/Optional to the model or list type inside."""
    while True:
        origin = typing.get_origin(tp)
        if origin is Annotated:
            tp = typing.get_args(tp)[0]
        elif origin in (Union, types.UnionType):
            args = [a for a in typing.get_args(tp) if a is not type(None)]
            tp = args[0] if len(args) == 1 else tp
            if len(args) != 1:
                return tp
        else:
            return tp


def _union_members(tp: Any) -> list[tuple[str | None, Any]]:
    """(tag, type) of each member of a union (tags from ``Annotated[..., Tag(...)]``)."""
    out = []
    for arg in typing.get_args(tp):
        if arg is type(None):
            continue
        tag = None
        if typing.get_origin(arg) is Annotated:
            tag = next((m.tag for m in typing.get_args(arg)[1:] if isinstance(m, Tag)), None)
        out.append((tag, arg))
    return out


def _walk(root: type[BaseModel], loc: tuple[int | str, ...]) -> tuple[tuple[int | str, ...], Any]:
    """The user-facing location (union member tags removed) and the model it ends in."""
    tp: Any = root
    clean: list[int | str] = []
    for part in loc:
        tp = _unwrap(tp) if tp is not None else None
        if typing.get_origin(tp) in (Union, types.UnionType):
            member = next(
                (t for tag, t in _union_members(tp) if part == tag or part == getattr(_unwrap(t), "__name__", None)),
                None,
            )
            if member is not None:
                tp = member
                continue
        if isinstance(part, str) and part.startswith("function-"):
            continue  # pydantic names a validator function; not part of the user's path
        clean.append(part)
        if tp is None:
            continue
        if isinstance(part, int):
            args = typing.get_args(tp)
            tp = args[0] if typing.get_origin(tp) is list and args else None
        elif isinstance(tp, type) and issubclass(tp, BaseModel) and part in tp.model_fields:
            tp = tp.model_fields[part].annotation
        else:
            tp = None
    tp = _unwrap(tp) if tp is not None else None
    return tuple(clean), tp if isinstance(tp, type) and issubclass(tp, BaseModel) else None


def _model_at(root: type[BaseModel], loc: tuple[int | str, ...]) -> Any:
    return _walk(root, loc)[1]


_LONG_WORD = re.compile(r"(\S{60})\S{20,}")


def _cap(line: str, limit: int = 2000) -> str:
    """One issue line with every very long word (a quoted 100,000-character name)
    cut to 60 characters, and the line itself cut at ``limit``."""
    line = _LONG_WORD.sub(lambda m: f"{m.group(1)}...", line)
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


_ARRAY_OF_TABLES = {"senders", "flows", "rate_schedule"}


def _issues(err: ValidationError, root: type[BaseModel]) -> list[tuple[str, str]]:
    """The (field path, message) pairs of ``err``, raised validating the model ``root``."""
    issues: list[tuple[str, str]] = []
    for e in err.errors(include_url=False):
        raw = tuple(e["loc"])
        loc, _ = _walk(root, raw)
        path = _path(loc)
        kind = e["type"]
        ctx = e.get("ctx") or {}
        if kind == "spec_cross":
            issues.extend(tuple(i) for i in ctx["issues"])
        elif kind == "extra_forbidden":
            model = _model_at(root, raw[:-1])
            allowed = ", ".join(model.model_fields) if model is not None else "?"
            issues.append((path, f"unknown key {str(loc[-1])!r}; allowed keys here: {allowed}"))
        elif kind == "missing":
            model = _model_at(root, raw[:-1])
            field = model.model_fields.get(str(loc[-1])) if model is not None else None
            hint = f" ({field.description})" if field is not None and field.description else ""
            issues.append((path, f"required key is missing{hint}"))
        elif kind == "union_tag_invalid":
            issues.append((path, f"{ctx.get('tag')!r} is not a known kind; allowed: {ctx.get('expected_tags')}"))
        elif kind == "union_tag_not_found":
            issues.append((path, f"{_short(e['input'])} is not valid: give a kind name or a table with 'kind'/'model'"))
        elif kind == "value_error":
            msg = e["msg"].removeprefix("Value error, ")
            issues.append((path, msg))
        elif kind == "model_type":
            where = "" if loc and isinstance(loc[-1], int) else f" ([{path}])"
            issues.append((path, f"{_short(e['input'])} is not valid: expected a table{where}"))
        elif kind == "list_type" and loc and loc[-1] in _ARRAY_OF_TABLES:
            issues.append((path, f"{_short(e['input'])} is not valid: expected an array of tables ([[{path}]])"))
        elif kind == "too_short" and loc and loc[-1] in _ARRAY_OF_TABLES:
            issues.append((path, f"at least one [[{path}]] table is required"))
        else:
            msg = e["msg"]
            issues.append((path, f"{_short(e['input'])} is not valid: {msg[:1].lower()}{msg[1:]}"))
    return issues
