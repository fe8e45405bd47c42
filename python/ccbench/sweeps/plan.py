"""Sweep specs and their expansion into a plan of runs.

A sweep spec is an experiment spec (the *base*) plus a ``[sweep]`` table::

    [sweep]
    name = "buffers"                 # default: the base experiment's name
    base = "quickstart.toml"         # optional: the base from another file (relative to this one)
    seed = 7                         # sweep seed (default: the base's experiment.seed)
    repetitions = 3                  # runs per combination, each with its own derived seed
    seeds = "per-repetition"         # or "per-run" (also mix the parameters into the seed)
    filters = ["not (k > 8 and rate_mbit < 50)"]   # keep a combination only if all hold
    exclude = [{ "flows[0].cca" = "reno", k = 16 }] # drop combinations matching every key

    [sweep.grid]                     # Cartesian product of these axes
    "bottleneck.rate" = ["10Mbit", "50Mbit"]
    k = [0.5, 1, 2]                  # a variable: a bare name, used by expressions

    [[sweep.zip]]                    # these lists advance together; crossed with the grid
    "senders[0].rtt" = ["20ms", "100ms"]
    "bottleneck.delay" = ["5ms", "25ms"]

    [sweep.derived]                  # computed per combination and repetition, in order
    "bottleneck.buffer" = "{k}BDP"   # k x the BDP of each combination's own rate and RTT
    "flows[1].start" = "{5 + 2 * rep}s"

An axis key with a dot or a bracket is a *path* into the experiment (``flows[0].cca``,
``flows[*].cca`` for every flow); a bare name is a *variable*. Expressions (see
:mod:`.expr`) see the variables, ``rep`` (0-based repetition) and ``seed``.

:func:`expand` returns the plan: one :class:`PlannedRun` per combination and
repetition, each with its parameters, derived seed, validated
:class:`~ccbench.spec.Experiment` (or the reason it is invalid) and content-addressed
run id.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .. import preflight
from ..spec import Experiment, SpecError
from .expr import ExpressionError, evaluate, render
from .store import RESERVED_COLUMNS

__all__ = [
    "RESERVED_COLUMNS",
    "PlannedRun",
    "SweepPlan",
    "SweepSection",
    "SweepSpec",
    "SweepSpecError",
    "derive_seed",
    "expand",
    "load_sweep",
    "run_id",
]

SECTIONS = ("experiment", "bottleneck", "senders", "flows", "host")
_VARIABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PATH_PART = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)((?:\[(?:\d+|\*)\])*)")
MAX_RUNS = 1_000_000


class SweepSpecError(ValueError):
    """A sweep spec is invalid; the message names the field (``sweep.grid.k``) and why."""


class SweepSection(BaseModel):
    """The ``[sweep]`` table (every field documented in ``docs/sweeps.md``)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    name: str | None = Field(None, description="sweep name (default: the base experiment's name)")
    base: str | None = Field(None, description="path of the base experiment spec, relative to the sweep file")
    seed: int | None = Field(None, ge=0, lt=2**64, description="sweep seed (default: the base's experiment.seed)")
    repetitions: int = Field(1, ge=1, le=100_000, description="runs per combination")
    seeds: Literal["per-repetition", "per-run"] = Field(
        "per-repetition",
        description="'per-repetition': repetition r has the same seed in every combination (common random numbers); "
        "'per-run': the parameters are mixed in too",
    )
    grid: dict[str, list[Any]] = Field(default_factory=dict, description="axes combined as a Cartesian product")
    zip: list[dict[str, list[Any]]] = Field(
        default_factory=list, description="groups of axes advanced together; each group is crossed with the grid"
    )
    derived: dict[str, Any] = Field(
        default_factory=dict, description="values computed per run: path or name = template"
    )
    filters: list[str] = Field(default_factory=list, description="expressions; a combination is kept if all are true")
    exclude: list[dict[str, Any]] = Field(
        default_factory=list, description="tables; a combination matching every key of one of them is dropped"
    )

    @field_validator("grid")
    @classmethod
    def _non_empty_axes(cls, v: dict[str, list[Any]]) -> dict[str, list[Any]]:
        for key, values in v.items():
            if not values:
                raise ValueError(f"axis {key!r} has no values")
        return v


@dataclass(frozen=True)
class SweepSpec:
    """A validated sweep: the ``[sweep]`` table and the base experiment (as data)."""

    sweep: SweepSection
    base: dict[str, Any]
    source: str | None = None

    @property
    def name(self) -> str:
        return self.sweep.name or str(self.base.get("experiment", {}).get("name", "sweep"))

    @property
    def seed(self) -> int:
        if self.sweep.seed is not None:
            return self.sweep.seed
        seed = self.base.get("experiment", {}).get("seed", 1)
        return seed if isinstance(seed, int) else 1

    def axes(self) -> list[str]:
        """The axis keys in spec order: grid axes, then each zip group's."""
        keys = list(self.sweep.grid)
        for group in self.sweep.zip:
            keys.extend(group)
        return keys

    def columns(self) -> list[str]:
        """The parameter columns of the index: axes, then derived keys."""
        return [*self.axes(), *(k for k in self.sweep.derived if k not in self.axes())]

    def to_dict(self) -> dict[str, Any]:
        return {"sweep": self.sweep.model_dump(mode="json", exclude_none=True), "base": self.base}


@dataclass
class PlannedRun:
    """One run of a sweep: a combination of axis values and a repetition."""

    index: int
    params: dict[str, Any]
    repetition: int
    seed: int
    run_id: str
    experiment: Experiment | None = None
    error: str | None = None
    est_packets: int | None = None  # data packets, an upper bound (ccbench.preflight.estimate)
    est_cpu_s: float | None = None  # engine CPU seconds, an estimate (ccbench.preflight.estimate)

    @property
    def valid(self) -> bool:
        return self.experiment is not None


@dataclass
class SweepPlan:
    spec: SweepSpec
    runs: list[PlannedRun] = field(default_factory=list)
    engine_version: str = ""
    dropped: int = 0  # combinations removed by filters and exclude

    @property
    def invalid(self) -> list[PlannedRun]:
        return [r for r in self.runs if not r.valid]


# --------------------------------------------------------------------------- loading


def _sweep_error(issues: list[tuple[str, str]], source: str | None) -> SweepSpecError:
    where = f"{source}: " if source else ""
    lines = [f"{p}: {m}" if p else m for p, m in issues]
    if len(lines) == 1:
        return SweepSpecError(f"{where}invalid sweep spec: {lines[0]}")
    return SweepSpecError(f"{where}invalid sweep spec ({len(lines)} problems):\n" + "\n".join(f"  {x}" for x in lines))


def load_sweep(spec: str | Path | Mapping[str, Any] | SweepSpec, *, base_dir: Path | None = None) -> SweepSpec:
    """Load a sweep spec from a TOML/JSON file or a dict (``{"sweep": {...}, ...base}``).

    The base experiment is ``sweep.base`` (a file, relative to the sweep file or
    ``base_dir``), or a ``[base]`` table, or else the file's own experiment tables.
    Raises :class:`SweepSpecError` naming the bad field.
    """
    if isinstance(spec, SweepSpec):
        return spec
    source: str | None = None
    if isinstance(spec, Mapping):
        data = dict(spec)
    else:
        path = Path(spec)
        source = str(path)
        text = path.read_bytes().decode("utf-8", errors="replace")
        try:
            data = json.loads(text) if path.suffix.lower() == ".json" else tomllib.loads(text)
        except (tomllib.TOMLDecodeError, json.JSONDecodeError) as e:
            raise SweepSpecError(
                f"{source}: not valid {'JSON' if path.suffix.lower() == '.json' else 'TOML'}: {e}"
            ) from None
        base_dir = path.parent
    raw = data.pop("sweep", None)
    if not isinstance(raw, Mapping):
        raise _sweep_error([("sweep", "a [sweep] table is required (axes, repetitions, seed, ...)")], source)
    try:
        section = SweepSection.model_validate(dict(raw))
    except ValidationError as e:
        raise _sweep_error([(f"sweep.{p}" if p else "sweep", m) for p, m in _issues_of(e)], source) from None
    inline_base = data.pop("base", None)
    if section.base is not None:
        if inline_base is not None or any(k in data for k in SECTIONS):
            raise _sweep_error(
                [("sweep.base", "give the base either as a file or as tables in this file, not both")], source
            )
        base_path = (base_dir or Path.cwd()) / section.base
        try:
            btext = base_path.read_bytes().decode("utf-8", errors="replace")
        except OSError as e:
            raise _sweep_error([("sweep.base", f"cannot read {str(base_path)!r}: {e.strerror or e}")], source) from None
        try:
            base = json.loads(btext) if base_path.suffix.lower() == ".json" else tomllib.loads(btext)
        except (tomllib.TOMLDecodeError, json.JSONDecodeError) as e:
            raise _sweep_error([("sweep.base", f"{str(base_path)!r} is not a valid spec file: {e}")], source) from None
    elif inline_base is not None:
        if not isinstance(inline_base, Mapping):
            raise _sweep_error([("base", "expected a table holding the base experiment")], source)
        base = dict(inline_base)
    else:
        base = data
    unknown = [k for k in data if k not in SECTIONS] if section.base is None and inline_base is None else list(data)
    if unknown:
        raise _sweep_error(
            [(k, f"unknown table; allowed: sweep, base, {', '.join(SECTIONS)}") for k in unknown], source
        )
    result = SweepSpec(section, copy.deepcopy(base), source)
    _check(result)
    return result


def _issues_of(e: ValidationError) -> list[tuple[str, str]]:
    out = []
    for err in e.errors(include_url=False):
        path = ".".join(str(p) for p in err["loc"])
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = f"unknown key; allowed keys: {', '.join(SweepSection.model_fields)}"
        out.append((path, msg))
    return out


def _parse_path(key: str) -> list[str | int]:
    """``flows[0].params.beta`` → ``["flows", 0, "params", "beta"]`` (``"*"`` for [*])."""
    parts: list[str | int] = []
    for piece in key.split("."):
        m = _PATH_PART.fullmatch(piece)
        if m is None:
            raise ValueError(f"{key!r} is not a valid path (like 'bottleneck.rate' or 'flows[0].cca')")
        parts.append(m.group(1))
        for idx in re.findall(r"\[(\d+|\*)\]", m.group(2)):
            parts.append("*" if idx == "*" else int(idx))
    return parts


def _is_variable(key: str) -> bool:
    return bool(_VARIABLE.match(key))


def _check(spec: SweepSpec) -> None:
    """Static checks of axis keys, zip lengths, expressions' names and sizes."""
    s = spec.sweep
    issues: list[tuple[str, str]] = []
    seen: dict[str, str] = {}

    def check_key(key: str, where: str) -> None:
        if key in seen:
            issues.append((where, f"{key!r} is already set by {seen[key]}"))
        seen[key] = where
        if _is_variable(key):
            if key in RESERVED_COLUMNS or key in SECTIONS:
                issues.append(
                    (
                        where,
                        f"{key!r} is a reserved name; reserved: {', '.join(sorted(RESERVED_COLUMNS | set(SECTIONS)))}",
                    )
                )
            return
        try:
            parts = _parse_path(key)
        except ValueError as e:
            issues.append((where, str(e)))
            return
        if parts[0] not in SECTIONS:
            issues.append((where, f"{key!r}: a path must start with one of {', '.join(SECTIONS)}"))
        elif parts[:2] == ["experiment", "seed"]:
            issues.append((where, "experiment.seed is set by the sweep: use sweep.seed and sweep.repetitions"))
        else:
            try:
                _set(copy.deepcopy(spec.base), parts, None, key)
            except ValueError as e:
                issues.append((where, str(e)))

    for key in s.grid:
        check_key(key, f"sweep.grid.{key}")
    for i, group in enumerate(s.zip):
        lengths = {k: len(v) for k, v in group.items()}
        if not group:
            issues.append((f"sweep.zip[{i}]", "an empty zip group"))
        if len(set(lengths.values())) > 1:
            issues.append((f"sweep.zip[{i}]", f"zipped axes must have equal lengths; got {lengths}"))
        if any(n == 0 for n in lengths.values()):
            issues.append((f"sweep.zip[{i}]", "an axis has no values"))
        for key in group:
            check_key(key, f"sweep.zip[{i}].{key}")
    for key in s.derived:
        check_key(key, f"sweep.derived.{key}")
    for i, rule in enumerate(s.exclude):
        for key in rule:
            if key not in seen:
                issues.append(
                    (f"sweep.exclude[{i}].{key}", f"not an axis or derived key; known: {', '.join(seen) or '(none)'}")
                )
    total = (
        math.prod(len(v) for v in s.grid.values())
        * math.prod(len(next(iter(g.values()))) for g in s.zip if g)
        * s.repetitions
    )
    if total > MAX_RUNS:
        issues.append(("sweep", f"{total} runs is too many (at most {MAX_RUNS})"))
    if issues:
        raise _sweep_error(issues, spec.source)


def _set(doc: Any, parts: list[str | int], value: Any, key: str) -> None:
    """Set ``value`` at ``parts`` in ``doc`` (dicts and lists), creating missing table
    keys; list indices must exist in the base. ``"*"`` applies to every element."""
    head, rest = parts[0], parts[1:]
    if head == "*":
        if not isinstance(doc, list):
            raise ValueError(f"{key!r}: [*] applies to an array, and this is not one")
        for i in range(len(doc)):
            _set(doc, [i, *rest], value, key)
        return
    if isinstance(head, int):
        if not isinstance(doc, list) or head >= len(doc):
            size = len(doc) if isinstance(doc, list) else 0
            raise ValueError(f"{key!r}: index {head} is out of range (the base has {size} entries there)")
    elif not isinstance(doc, dict):
        raise ValueError(f"{key!r}: {head!r} is not inside a table")
    if not rest:
        doc[head] = copy.deepcopy(value)
        return
    if isinstance(head, str) and head not in doc:
        doc[head] = {}
    _set(doc[head], rest, value, key)


# --------------------------------------------------------------------------- identity


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False, default=str)


def derive_seed(sweep_seed: int, repetition: int, params: Mapping[str, Any] | None = None) -> int:
    """The seed of a run: BLAKE2b of the sweep seed and the repetition (and, for
    ``seeds = "per-run"``, the parameters), truncated to 63 bits so that it fits a
    signed 64-bit column. Deterministic and distinct per repetition."""
    material = ["ccbench-sweep-seed/v1", sweep_seed, repetition]
    if params is not None:
        material.append(dict(params))
    digest = hashlib.blake2b(_canonical(material).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


def run_id(experiment: Experiment | None, engine_version: str, *, invalid_spec: Any = None) -> str:
    """A run's id: SHA-256 of its fully resolved spec (every default filled in), the
    engine configuration it resolves to (which includes the seed) and the engine
    version; 16 hex digits. An invalid combination is identified by its raw spec."""
    if experiment is not None:
        material: dict[str, Any] = {
            "spec": experiment.to_dict(),
            "engine_config": experiment.resolve(),
            "engine_version": engine_version,
        }
    else:
        material = {"invalid_spec": invalid_spec, "engine_version": engine_version}
    return hashlib.sha256(_canonical(material).encode()).hexdigest()[:16]


# --------------------------------------------------------------------------- expansion


def _combinations(s: SweepSection) -> list[dict[str, Any]]:
    axes: list[list[dict[str, Any]]] = [[{key: v} for v in values] for key, values in s.grid.items()]
    for group in s.zip:
        keys = list(group)
        axes.append([dict(zip(keys, vals, strict=True)) for vals in zip(*(group[k] for k in keys), strict=True)])
    out = []
    for combo in itertools.product(*axes):
        merged: dict[str, Any] = {}
        for part in combo:
            merged.update(part)
        out.append(merged)
    return out


def _matches(rule: Mapping[str, Any], params: Mapping[str, Any]) -> bool:
    return all(key in params and params[key] == want for key, want in rule.items())


def expand(
    spec: SweepSpec | str | Path | Mapping[str, Any],
    *,
    engine_version: str | None = None,
    only: Sequence[str] = (),
) -> SweepPlan:
    """Expand a sweep into its runs (combinations × repetitions, in spec order,
    repetitions innermost). Invalid combinations are kept in the plan with their error
    (they fail alone); a filter or template that cannot be evaluated is a
    :class:`SweepSpecError`. Two runs resolving to the same experiment are an error:
    an axis that changes nothing would otherwise duplicate runs. ``only`` adds filter
    expressions from outside the spec (``ccbench sweep --only``): a part of a sweep,
    with the same run ids as in the whole."""
    from .. import engine

    sweep = load_sweep(spec)
    version = engine_version if engine_version is not None else engine.engine_version()
    s = sweep.sweep
    plan = SweepPlan(sweep, engine_version=version)
    seen_ids: dict[str, PlannedRun] = {}
    for combo in _combinations(s):
        for rep in range(s.repetitions):
            params = dict(combo)
            names = {k: v for k, v in params.items() if _is_variable(k)}
            names["rep"] = rep
            seed_params = dict(combo) if s.seeds == "per-run" else None
            seed = derive_seed(sweep.seed, rep, seed_params)
            names["seed"] = seed
            for key, template in s.derived.items():
                try:
                    value = render(template, names) if isinstance(template, str) else template
                except ExpressionError as e:
                    raise _sweep_error([(f"sweep.derived.{key}", f"{template!r}: {e}")], sweep.source) from None
                params[key] = value
                if _is_variable(key):
                    names[key] = value
            keep = True
            for i, rule in enumerate(s.filters):
                try:
                    keep = keep and bool(evaluate(rule, names))
                except ExpressionError as e:
                    raise _sweep_error([(f"sweep.filters[{i}]", str(e))], sweep.source) from None
            for rule in only:
                try:
                    keep = keep and bool(evaluate(rule, names))
                except ExpressionError as e:
                    raise _sweep_error([(f"--only {rule!r}", str(e))], sweep.source) from None
            if keep and any(_matches(rule, params) for rule in s.exclude):
                keep = False
            if not keep:
                plan.dropped += 1
                continue
            doc = copy.deepcopy(sweep.base)
            for key, value in params.items():
                if not _is_variable(key):
                    _set(doc, _parse_path(key), value, key)
            doc.setdefault("experiment", {})
            if isinstance(doc["experiment"], dict):
                doc["experiment"]["seed"] = seed
            experiment: Experiment | None = None
            error: str | None = None
            try:
                experiment = Experiment.from_dict(doc)
            except SpecError as e:
                error = str(e)
            rid = run_id(experiment, version, invalid_spec=doc if experiment is None else None)
            run = PlannedRun(len(plan.runs), params, rep, seed, rid, experiment, error)
            if experiment is not None:
                cost = preflight.estimate(experiment)
                run.est_packets, run.est_cpu_s = cost.packets, cost.cpu_s
            if rid in seen_ids:
                other = seen_ids[rid]
                raise _sweep_error(
                    [
                        (
                            "sweep",
                            f"runs {other.params} (repetition {other.repetition}) and {params} (repetition {rep}) "
                            "resolve to the same experiment: an axis or variable changes nothing",
                        )
                    ],
                    sweep.source,
                )
            seen_ids[rid] = run
            plan.runs.append(run)
    return plan
