"""Traffic of a flow group beyond "count flows at start": arrival processes, empirical
flow-size and RTT distributions (shipped ones by name, or the user's CDF files), CCA
mixes and rate-limited applications. The engine draws every flow from the
``experiment.workload_seed`` (``crates/ccsim/src/traffic``); this module only checks
and resolves. See ``docs/traffic.md``."""

from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationInfo, field_validator

from .. import pycca
from ..engine import CcaCatalog
from .fields import Duration, Name, Rate, _Model

#: Shipped distributions, one ``<name>.cdf`` file each, with their sources in the header.
DISTRIBUTIONS_DIR = Path(__file__).resolve().parent.parent / "data" / "distributions"

Arrival = Literal["fixed", "interval", "uniform", "poisson", "empirical"]


class BurstSpec(_Model):
    """One entry of ``flows[*].bursts``: an inelastic burst at ``rate`` for ``duration`` from ``at``."""

    at: Duration = Field(description="start of the burst, e.g. '32s'")
    duration: Duration = Field(description="length of the burst, e.g. '10s'")
    rate: Rate = Field(description="sending rate during the burst, e.g. '40Mbit'")


def check_cca_name(v: str, info: ValidationInfo, also: frozenset[str] = frozenset()) -> str:
    """A flow's or a mix entry's CCA: a ``python:`` CCA that resolves, or a name the
    engine's catalog (passed as validation context ``ccas``) knows, or one of ``also``."""
    if not v:
        raise ValueError("'' is not a CCA name")
    if pycca.is_python_cca(v):
        pycca.resolve(v)
        return v
    cat: CcaCatalog | None = (info.context or {}).get("ccas")
    if cat is not None and cat.get(v) is None and v not in also:
        raise ValueError(f"{v!r} is not a known CCA; known: {', '.join(cat.names())}")
    return v


class CcaShare(_Model):
    """One entry of ``flows[*].mix``: this CCA for ``fraction`` of the flows."""

    cca: Name = Field(description="congestion control algorithm of this share")
    fraction: float = Field(gt=0, le=1, description="share of the group's flows, e.g. 0.5")
    params: dict[str, Any] = Field(default_factory=dict, description="CCA parameter overrides")

    @field_validator("cca")
    @classmethod
    def _known(cls, v: str, info: ValidationInfo) -> str:
        return check_cca_name(v, info)


def shipped_distributions() -> list[str]:
    return sorted(p.stem for p in DISTRIBUTIONS_DIR.glob("*.cdf"))


@lru_cache(maxsize=64)
def load_cdf(ref: str) -> tuple[tuple[float, float], ...]:
    """The points ``(value, cumulative probability)`` of a shipped distribution (by
    name) or of a CDF file: one ``value cumulative`` pair per line, ``#`` comments,
    probabilities in [0, 1] or in percent (when the last is 100). Raises ``ValueError``
    with a message naming what is wrong."""
    path = DISTRIBUTIONS_DIR / f"{ref}.cdf" if "/" not in ref and "." not in ref else Path(ref)
    if not path.is_file():
        raise ValueError(
            f"{ref!r} is neither a shipped distribution ({', '.join(shipped_distributions())}) nor a readable CDF file"
        )
    points: list[tuple[float, float]] = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        text = line.split("#", 1)[0].split()
        if not text:
            continue
        try:
            v, p = float(text[0]), float(text[1])
        except (ValueError, IndexError):
            raise ValueError(f"{ref!r} line {n}: expected 'value cumulative_probability', got {line.strip()!r}") from None
        points.append((v, p))
    if not points:
        raise ValueError(f"{ref!r} has no points")
    scale = 100.0 if abs(points[-1][1] - 100.0) < 1e-9 else 1.0
    points = [(v, p / scale) for v, p in points]
    prev = (float("-inf"), 0.0)
    for v, p in points:
        if v < 0 or not (0.0 <= p <= 1.0) or v < prev[0] or p < prev[1]:
            raise ValueError(f"{ref!r}: values must be >= 0 and, like the probabilities, must not decrease")
        prev = (v, p)
    if abs(points[-1][1] - 1.0) > 1e-9:
        raise ValueError(f"{ref!r}: the last cumulative probability must be 1 (or 100 %)")
    return tuple(points)


def mean_of(points: tuple[tuple[float, float], ...]) -> float:
    """Mean of a linearly interpolated CDF (the engine's ``EmpiricalDist::mean``)."""
    mean, prev = points[0][0] * points[0][1], points[0]
    for v, p in points[1:]:
        mean += (prev[0] + v) / 2 * (p - prev[1])
        prev = (v, p)
    return mean


def mean_units_of(points: tuple[tuple[float, float], ...], unit: float) -> float:
    """Mean of ceil(X / unit), at least 1, over a linearly interpolated CDF (the engine's
    ``EmpiricalDist::mean_units``): the segments of ``unit`` bytes a flow needs."""

    def area(x: float) -> float:  # integral of ceil(t / unit) over [0, x]
        n = math.floor(x / unit)
        return unit * n * (n + 1) / 2 + (x - n * unit) * (n + 1)

    mean = points[0][1] * max(1, math.ceil(points[0][0] / unit))
    for (v0, p0), (v, p) in zip(points, points[1:], strict=False):
        mean += (p - p0) * ((area(v) - area(v0)) / (v - v0) if v > v0 else max(1, math.ceil(v / unit)))
    return mean


def rtt_bins(ref: str) -> list[tuple[int, float]]:
    """An RTT distribution (values in ms) as ``(rtt_ns, probability mass)`` bins: each
    point's value gets the share of flows up to its cumulative probability."""
    out: list[tuple[int, float]] = []
    prev = 0.0
    for v, p in load_cdf(ref):
        if p > prev:
            out.append((round(v * 1e6), p - prev))
        prev = p
    return out
