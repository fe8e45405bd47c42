"""The ``[[flows]]`` section: groups of identical TCP flows, their CCA and its parameters
(checked against the engine's CCA catalog when one is given as validation context)."""

from __future__ import annotations

import json
import math
from typing import Any, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from .. import pycca
from ..engine import HEADER_BYTES, SYN_WIRE_BYTES, CcaCatalog
from .fields import Duration, OptDuration, OptName, OptRate, OptSize, _Model
from .traffic import Arrival, BurstSpec, CcaShare, check_cca_name, load_cdf, mean_of, mean_units_of

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
        description="congestion control algorithm, e.g. 'cubic', or a Python one: 'python:mypkg.mymod:MyCca' "
        "('udp' with transport = 'udp')"
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
    arrival: Arrival = Field(
        "fixed",
        description="'fixed' (all at start), 'interval' (one every `interval`), 'uniform' (uniform over `window`), "
        "'poisson' (at `arrival_rate` or offering `load`), 'empirical' (gaps drawn from `gaps`)",
    )
    interval: OptDuration = Field(None, description="arrival = 'interval': time between flow starts, e.g. '25s'")
    window: OptDuration = Field(None, description="arrival = 'uniform': flows start uniformly in [start, start + window)")
    arrival_rate: float | None = Field(None, gt=0, description="arrival = 'poisson': flows per second")
    load: OptRate = Field(
        None,
        description="arrival = 'poisson': offered load on the wire, e.g. '40Mbit' (rate = load / mean wire bytes "
        "per flow: payload, each segment's headers, SYN and ACK)",
    )
    gaps: str | None = Field(
        None, description="arrival = 'empirical': inter-arrival times drawn from a distribution (ms): a CDF file"
    )
    sizes: str | None = Field(
        None, description="flow sizes drawn from a distribution: a shipped one ('websearch', ...) or a CDF file"
    )
    rtts: str | None = Field(None, description="per-flow base RTT drawn from a distribution (ms): a shipped name or a CDF file")
    mix: list[CcaShare] = Field(default_factory=list, description="CCA mix: [{cca='bbr', fraction=0.5}, ...]")
    rate: OptRate = Field(None, description="rate-limited application (like iperf3 -b), e.g. '40Mbit'")
    transport: Literal["tcp", "udp"] = Field(
        "tcp", description="'udp': an inelastic source sending at `rate` (and `bursts`), no congestion control"
    )
    bursts: list[BurstSpec] = Field(
        default_factory=list, description="transport = 'udp': bursts [{at='32s', duration='10s', rate='40Mbit'}]"
    )
    packet: OptSize = Field(None, description="transport = 'udp': datagram size on the wire (default 1500B)")
    handshake: bool | None = Field(
        None,
        description="each flow opens its connection with a three-way handshake (SYN, SYN-ACK, ACK as packets, "
        "Linux's retry timers) before sending; default: on for finite flows (`size`/`sizes`), off for bulk ones",
    )
    on: OptDuration = Field(None, description="with `rate`: on period of an on/off source")
    off: OptDuration = Field(None, description="with `rate`: off period of an on/off source")

    @model_validator(mode="before")
    @classmethod
    def _defaults(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        # Poisson and empirical arrivals continue until the end of the run unless
        # `count` caps them.
        if data.get("arrival") in ("poisson", "empirical") and "count" not in data:
            data = {**data, "count": MAX_FLOWS}
        # A UDP source has no CCA: its label is 'udp'.
        if data.get("transport") == "udp" and "cca" not in data:
            data = {**data, "cca": "udp"}
        return data

    @property
    def opens_with_handshake(self) -> bool:
        """Whether the flows open with a handshake: ``handshake`` if given, else yes for
        finite TCP flows (``size`` or ``sizes``), no for bulk ones and UDP sources."""
        if self.handshake is not None:
            return self.handshake
        return self.transport == "tcp" and (self.size is not None or self.sizes is not None)

    @model_validator(mode="after")
    def _traffic(self) -> FlowSpec:
        needs = {"interval": "interval", "uniform": "window"}
        for arrival, field in needs.items():
            if self.arrival == arrival and not getattr(self, field):
                raise ValueError(f"arrival = {arrival!r} needs `{field}` (a duration > 0)")
        for field, arrival in (("interval", "interval"), ("window", "uniform")):
            if getattr(self, field) is not None and self.arrival != arrival:
                raise ValueError(f"`{field}` is only for arrival = {arrival!r}")
        if self.arrival == "poisson":
            if (self.arrival_rate is None) == (self.load is None):
                raise ValueError("arrival = 'poisson' needs exactly one of `arrival_rate` (flows/s) or `load` (a rate)")
            if self.load is not None and self.size is None and self.sizes is None:
                raise ValueError("a target `load` needs finite flows: give `size` or `sizes`")
        elif self.arrival_rate is not None or self.load is not None:
            raise ValueError("`arrival_rate` and `load` are only for arrival = 'poisson'")
        if (self.arrival == "empirical") != (self.gaps is not None):
            raise ValueError("arrival = 'empirical' and `gaps` (an inter-arrival CDF, ms) go together")
        if self.gaps is not None and mean_of(load_cdf(self.gaps)) <= 0:
            raise ValueError(f"`gaps` {self.gaps!r}: the mean inter-arrival time must be > 0")
        if self.sizes is not None and self.size is not None:
            raise ValueError("give either `size` or `sizes`, not both")
        for ref in (self.sizes, self.rtts):
            if ref is not None:
                load_cdf(ref)
        if self.mix and abs(sum(m.fraction for m in self.mix) - 1.0) > 1e-9:
            raise ValueError(f"the `mix` fractions must add up to 1, not {sum(m.fraction for m in self.mix):g}")
        if (self.on is None) != (self.off is None) or ((self.on is not None) and self.rate is None):
            raise ValueError("`on` and `off` go together, with `rate` (an on/off source)")
        if self.transport == "udp":
            if self.cca != "udp":
                raise ValueError("a UDP source has no CCA: leave `cca` out (or 'udp')")
            if self.rate is None and not self.bursts:
                raise ValueError("transport = 'udp' needs `rate` or `bursts`")
            if self.size is not None or self.sizes is not None or self.mix or self.handshake is not None:
                raise ValueError("a UDP source takes no `size`, `sizes`, `mix` or `handshake`")
            if self.packet is not None and (self.packet.kind != "bytes" or not 28 < self.packet.value <= 65535):
                raise ValueError("`packet` must be a size in bytes in (28B, 65535B]")
        else:
            if self.cca == "udp":
                raise ValueError("'udp' is not a CCA: for an inelastic source set transport = 'udp'")
            if self.bursts or self.packet is not None:
                raise ValueError("`bursts` and `packet` are for transport = 'udp'")
        if self.on == 0 or self.rate == 0:
            raise ValueError("`rate` and `on` must be > 0")
        return self

    def expected_count(self, duration_ns: int) -> float:
        """Flows expected to arrive in a run of ``duration_ns`` (at most ``count``)."""
        if self.arrival not in ("poisson", "empirical"):
            return float(self.count)
        seconds = max(0, duration_ns - self.start) / 1e9
        if self.gaps is not None:
            rate = 1e3 / mean_of(load_cdf(self.gaps))
        elif self.arrival_rate is not None:
            rate = self.arrival_rate
        else:
            rate = float(self.load or 0) / (8 * self.mean_wire_bytes())
        return min(float(self.count), rate * seconds)

    def mean_size_bytes(self) -> float:
        """Mean flow size (bytes) of a finite group; NaN for bulk flows."""
        if self.sizes is not None:
            return mean_of(load_cdf(self.sizes))
        if self.size is None:
            return float("nan")
        return float(self.size.value) * (self.mss if self.size.kind == "packets" else 1)

    def mean_wire_bytes(self) -> float:
        """Mean bytes a flow of a finite group puts on the forward wire: its payload in
        segments of ``mss`` with their headers, plus its handshake's SYN and ACK; what a
        target ``load`` counts (the engine's ``traffic::mean_wire_bytes``)."""
        if self.sizes is not None:
            segments = mean_units_of(load_cdf(self.sizes), self.mss)
        else:
            segments = max(1, math.ceil(self.mean_size_bytes() / self.mss))
        handshake = SYN_WIRE_BYTES + HEADER_BYTES if self.opens_with_handshake else 0
        return self.mean_size_bytes() + HEADER_BYTES * segments + handshake

    def is_lazy(self) -> bool:
        """Flows that arrive over time (numbered after every fixed flow, in arrival order)."""
        return self.arrival != "fixed"

    @field_validator("cca", mode="before")
    @classmethod
    def _cca_class(cls, v: Any) -> Any:
        """A ``ccbench.Cca`` subclass given by object becomes its ``python:`` name."""
        return pycca.name_of(v) if isinstance(v, type) else v

    @field_validator("cca")
    @classmethod
    def _known_cca(cls, v: str, info: ValidationInfo) -> str:
        return check_cca_name(v, info, also=frozenset({"udp"}))

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
        if cat is not None and cca is not None and cca != "udp":
            try:
                cat.check(cca, v)
            except ValueError as e:
                raise ValueError(f"{v!r} is not valid for CCA {cca!r}: {e}") from None
        return v
