"""Type stub of the compiled engine binding (crates/ccsim-py)."""

from collections.abc import Callable
from typing import Any, final

import numpy as np
import numpy.typing as npt

__all__ = ["engine_version", "list_ccas", "check_cca", "qdisc_config", "result_schema", "config_schema", "run", "CcaError", "TcpState", "AckSample", "RateSample"]

_Column = npt.NDArray[Any] | tuple[npt.NDArray[np.uint32], list[str]]

def engine_version() -> str: ...
def list_ccas() -> str:
    """JSON list of {name, summary, reference, params: [{name, default (JSON text), doc}]}."""

def check_cca(name: str, params_json: str) -> None:
    """Raise ValueError if `name` is unknown or `params_json` does not fit it."""

def qdisc_config(config_json: str) -> str:
    """The engine's reading of a qdisc configuration, omitted fields at its defaults."""

def result_schema() -> str:
    """JSON {"tables": [{name, columns: [{name, type}]}], "stats": [key], "header_bytes": int,
    "udp_header_bytes": int, "syn_wire_bytes": int}: the result tables, manifest stats keys and header sizes as the
    engine's recorder defines them."""

def config_schema() -> str:
    """JSON Schema (draft 2020-12) of the resolved configuration `run` accepts, generated
    from the engine's config types: fields, types, required fields and defaults."""

def run(
    config_json: str,
    progress: Callable[[int, int, int], object] | None = None,
    keep_partial: bool = False,
    max_recorded_bytes: int | None = None,
    progress_interval_s: float = 0.1,
    python_ccas: dict[str, Callable[[str], Any]] | None = None,
    sink: Callable[[str, dict[str, Any]], object] | None = None,
    chunk_rows: int = 262_144,
) -> dict[str, Any]:
    """Run a resolved config; {"tables": {name: {column: _Column}}, "stats": {name: int},
    "engine_cpu_s": float (CPU time of the simulating thread), "interrupted": bool}. Ctrl-C raises KeyboardInterrupt (or, with keep_partial, returns
    the tables so far with "interrupted": True); `progress(sim_ns, duration_ns, events)`
    is called every progress_interval_s; MemoryError when the recorded rows outgrow
    max_recorded_bytes. Raises ValueError for an invalid config, RuntimeError for an
    engine bug. `python_ccas` maps `python:` CCA names to factories(params_json) -> Cca;
    a failing hook raises CcaError caused by the user's exception. With `sink`, each
    growing table (flow_ts, queue_ts, sojourn, events) is handed to `sink(name, columns)`
    in chunks of at least `chunk_rows` rows while the run goes; the returned tables hold
    the rows after the last chunk."""

class CcaError(RuntimeError):
    """A Python CCA raised, or returned or set a bad value, during a run."""

@final
class TcpState:
    """The connection state a Python CCA hook reads and writes (windows in packets,
    times in ns, pacing_rate in bytes/s)."""

    cwnd: int
    ssthresh: int
    cwnd_cnt: int
    pacing_rate: int
    @property
    def cwnd_clamp(self) -> int: ...
    @property
    def now(self) -> int: ...
    @property
    def mss(self) -> int: ...
    @property
    def ca_state(self) -> str: ...
    @property
    def prior_cwnd(self) -> int: ...
    @property
    def packets_out(self) -> int: ...
    @property
    def in_flight(self) -> int: ...
    @property
    def retrans_out(self) -> int: ...
    @property
    def delivered(self) -> int: ...
    @property
    def delivered_ce(self) -> int: ...
    @property
    def lost(self) -> int: ...
    @property
    def delivered_time(self) -> int: ...
    @property
    def srtt(self) -> int: ...
    @property
    def min_rtt(self) -> int | None: ...
    @property
    def is_cwnd_limited(self) -> bool: ...
    @property
    def app_limited(self) -> bool: ...
    @property
    def pacing_enabled(self) -> bool: ...
    def in_slow_start(self) -> bool: ...
    def random(self) -> float: ...

@final
class RateSample:
    """The delivery-rate sample of one ACK (packets, ns)."""

    @property
    def delivered(self) -> int: ...
    @property
    def delivered_ce(self) -> int: ...
    @property
    def interval(self) -> int: ...
    @property
    def rtt(self) -> int | None: ...
    @property
    def losses(self) -> int: ...
    @property
    def acked_sacked(self) -> int: ...
    @property
    def prior_in_flight(self) -> int: ...
    @property
    def tx_in_flight(self) -> int: ...
    @property
    def lost(self) -> int: ...
    @property
    def is_app_limited(self) -> bool: ...
    @property
    def is_retrans(self) -> bool: ...
    @property
    def delivery_rate(self) -> float | None: ...

@final
class AckSample:
    """What one ACK did (packets, ns)."""

    @property
    def pkts_acked(self) -> int: ...
    @property
    def acked_sacked(self) -> int: ...
    @property
    def rtt(self) -> int | None: ...
    @property
    def prior_in_flight(self) -> int: ...
    @property
    def ece(self) -> bool: ...
    @property
    def advanced_una(self) -> bool: ...
    @property
    def rs(self) -> RateSample: ...
