"""The ``[[flows]]`` section: groups of identical TCP flows, their CCA and its parameters
(checked against the engine's CCA catalog when one is given as validation context)."""

from __future__ import annotations

import json
from typing import Any

from pydantic import Field, ValidationInfo, field_validator

from .. import pycca
from ..engine import CcaCatalog
from .fields import Duration, OptDuration, OptName, OptSize, _Model

#: Linux's minimum RTO (``TCP_RTO_MIN``).
DEFAULT_MIN_RTO_NS = 200_000_000
#: Floor of the default receive window; see :meth:`Experiment.resolve`.
DEFAULT_RWND_FLOOR_BYTES = 64 * 2**20
MAX_FLOWS = 1_000_000


class FlowSpec(_Model):
    """``[[flows]]``: one or more identical TCP flows (``count``) from one sender."""

    name: OptName = Field(None, description="group label of these flows in the result tables; default: the CCA name")
    sender: OptName = Field(None, description="name of the sending host; may be omitted when there is one sender")
    cca: str = Field(
        description="congestion control algorithm, e.g. 'cubic', or a Python one: 'python:mypkg.mymod:MyCca'"
    )
    params: dict[str, Any] = Field(default_factory=dict, description="CCA parameter overrides")
    count: int = Field(1, ge=1, le=MAX_FLOWS, description="number of identical flows")
    start: Duration = Field(0, description="start time, e.g. '15s'")
    stop: OptDuration = Field(None, description="stop time (bulk flows stop sending); default: run to the end")
    start_jitter: Duration = Field(
        1_000_000, description="each flow's start is delayed by a seeded uniform draw in [0, start_jitter)"
    )
    size: OptSize = Field(None, description="bytes to transfer ('10MB', '100pkt' = 100 x mss); default: bulk")
    mss: int = Field(1448, ge=64, le=65000, description="payload bytes per segment")
    rwnd: OptSize = Field(None, description="receive window (bytes or packets); default: large enough never to limit")
    initial_cwnd: int = Field(10, ge=1, le=1_000_000, description="initial congestion window (packets)")
    delayed_ack: bool = Field(True, description="receiver delays ACKs (Linux-like)")
    pacing: bool = Field(False, description="pace a classic CCA (model-based CCAs always pace)")
    ecn: bool = Field(False, description="negotiate ECN")
    min_rto: Duration = Field(DEFAULT_MIN_RTO_NS, description="minimum retransmission timeout (Linux: 200ms)")

    @field_validator("cca", mode="before")
    @classmethod
    def _cca_class(cls, v: Any) -> Any:
        """A ``ccbench.Cca`` subclass given by object becomes its ``python:`` name."""
        return pycca.name_of(v) if isinstance(v, type) else v

    @field_validator("cca")
    @classmethod
    def _known_cca(cls, v: str, info: ValidationInfo) -> str:
        if pycca.is_python_cca(v):
            pycca.resolve(v)
            return v
        cat: CcaCatalog | None = (info.context or {}).get("ccas")
        if cat is not None and cat.get(v) is None:
            raise ValueError(f"{v!r} is not a known CCA; known: {', '.join(cat.names())}")
        if not v:
            raise ValueError("'' is not a CCA name")
        return v

    @field_validator("params")
    @classmethod
    def _cca_params(cls, v: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        try:
            json.dumps(v, allow_nan=False)
        except (TypeError, ValueError):
            raise ValueError(
                f"{v!r} is not valid: CCA parameters must be plain numbers, strings, booleans, arrays or tables"
            ) from None
        cat: CcaCatalog | None = (info.context or {}).get("ccas")
        cca = info.data.get("cca")
        if isinstance(cca, str) and pycca.is_python_cca(cca):
            pycca.check_params(cca, v)
            return v
        if cat is not None and cca is not None:
            try:
                cat.check(cca, v)
            except ValueError as e:
                raise ValueError(f"{v!r} is not valid for CCA {cca!r}: {e}") from None
        return v
