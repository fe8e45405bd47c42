"""The experiment spec: typed models of the user's TOML file, and its resolution into
the engine configuration (``crates/ccsim/src/config.rs``).

A spec has four parts (every field, unit and default is listed in ``docs/spec.md``)::

    [experiment]      name, seed, duration, warmup, sample_interval, backend
    [bottleneck]      rate, delay, buffer, bdp_rtt, qdisc, loss, rate_schedule,
                      limit_includes_head
    [host]            model, timing_noise, gso_max_segs, gso_max_size, gro_max_size, hz
    [[senders]]       name, rtt, access_rate, access_queue, delay_path, host
    [[flows]]         name, sender, cca, params, count, start, stop, start_jitter, size,
                      mss, rwnd, initial_cwnd, delayed_ack, pacing, ecn, min_rto
    [linux]           offloads, delay (options of the linux backend; optional)

Loading never raises anything but :class:`SpecError` for a bad spec; its message names
every offending field by path (``flows[0].cca``), the bad value and what is allowed.
Unknown keys are rejected. :meth:`Experiment.resolve` turns a valid spec into the
engine's JSON-ready dict: integers in ns, bit/s and bytes, one entry per ``[[flows]]``
table with its ``count`` (expanded by the engine).

The package is split by concept: :mod:`.experiment` (the root model, resolution and
loading), :mod:`.network` (bottleneck and senders), :mod:`.flows`, :mod:`.fields` (typed
quantities), :mod:`.backend` (``experiment.backend`` and ``[linux]``), :mod:`.checks`
(cross-field rules) and :mod:`.errors`.
"""

from .backend import LinuxOptions
from .errors import SpecError, SpecWarning
from .experiment import DEFAULT_SAMPLE_INTERVAL_NS, Experiment, ExperimentSection, load_spec
from .flows import DEFAULT_MIN_RTO_NS, DEFAULT_RWND_FLOOR_BYTES, MAX_FLOWS, FlowSpec
from .host import IDEAL_HOST, LINUX_HOST, HostSpec, resolve_host
from .network import (
    ACCESS_QUEUE_FLOOR_PACKETS,
    ACCESS_RATE_FACTOR,
    BottleneckSpec,
    RateChange,
    ResolvedBuffer,
    SenderSpec,
)

__all__ = [
    "BottleneckSpec",
    "Experiment",
    "ExperimentSection",
    "FlowSpec",
    "LinuxOptions",
    "HostSpec",
    "IDEAL_HOST",
    "LINUX_HOST",
    "resolve_host",
    "RateChange",
    "ResolvedBuffer",
    "SenderSpec",
    "SpecError",
    "SpecWarning",
    "load_spec",
    "ACCESS_QUEUE_FLOOR_PACKETS",
    "ACCESS_RATE_FACTOR",
    "DEFAULT_MIN_RTO_NS",
    "DEFAULT_RWND_FLOOR_BYTES",
    "DEFAULT_SAMPLE_INTERVAL_NS",
    "MAX_FLOWS",
]
