"""The pre-flight check shared by ``ccbench validate`` and ``ccbench run``: before any
simulation, find the valid specs that cannot work or cannot fit, and estimate the cost.

* **errors** (the run is refused): a bottleneck buffer smaller than one packet of the
  largest MSS; an estimated memory above the machine's memory; an output directory
  that cannot receive the run (not writable, too little free space for the tables a
  streamed run writes, e.g. samples every nanosecond);
* **warnings that need ``--force``** (``force=True``): estimated memory above
  ``memory_warn_bytes`` (default a quarter of the machine's memory) or CPU time above
  ``cpu_refuse_s`` (default one day);
* **warnings**: CPU time above ``cpu_warn_s`` (default 10 minutes), flows that start
  (with their jitter) or have their first RTT beyond the end of the run, access links
  slower than the bottleneck.

Every estimate comes from the spec alone, documented in ``docs/preflight.md`` with how
far it was measured to be from the runs' own figures: the packet count and memory are
upper bounds, the CPU time an estimate (it weighs the flows alive at once, the CCAs and
the queue discipline, but not the machine's load). The figures of speed and
memory per flow were measured on this project's machine (see ``docs/benchmarks.md``). The thresholds can also be set with
the environment variables ``CCBENCH_MEMORY_WARN`` (a size such as ``8GiB``),
``CCBENCH_CPU_WARN_S`` and ``CCBENCH_CPU_REFUSE_S``.
"""

from __future__ import annotations

import math
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import PreflightError
from .pycca import is_python_cca
from .units import format_duration, format_rate, parse_size

if TYPE_CHECKING:
    from .spec import Experiment

__all__ = ["Estimate", "Preflight", "check", "human_seconds", "machine_memory_bytes", "recorded_bytes_budget"]

#: Simulated data packets per CPU-second of the engine with up to
#: ``FLOWS_AT_FULL_SPEED`` flows alive at once: below the 2.0-2.8 million measured with
#: 2-20 flows (docs/benchmarks.md; docs/preflight.md, "How good the CPU estimate is").
PACKETS_PER_CPU_S = 1.5e6
#: Above this many flows alive at once the cost of a packet grows with the flows: their
#: state no longer stays in the caches (docs/benchmarks.md, "Flow count").
FLOWS_AT_FULL_SPEED = 20
#: How much a packet's cost grows per doubling of the flows alive at once above
#: ``FLOWS_AT_FULL_SPEED``: the slowdown is 1 + this x log2(flows / 20). Fitted to 48 runs
#: of 1-5,000 flows measured on this machine (docs/preflight.md): 200-500 flows at
#: 10-25 Gbit/s ran at 0.26-1.15 M packets per CPU-s, 2,000 at 0.90 M.
SLOWDOWN_PER_FLOW_DOUBLING = 0.3
#: What a delivered packet costs the engine with a CCA or a queue discipline, relative to
#: CUBIC through a pfifo (the benchmarks behind ``PACKETS_PER_CPU_S`` are CUBIC and Reno):
#: the CCAs that pace schedule a pacing timer per packet or burst, and the AQMs do more per
#: packet than a FIFO. Measured by ``benchmarks/cca_cost.py`` (20 flows, 1 Gbit/s, 20 ms,
#: 1 BDP, 10 s, each alternated with CUBIC/pfifo; benchmarks/results/cca-cost.jsonl,
#: docs/preflight.md), rounded to 0.1; CCAs within 5 % of CUBIC are not listed (1.0).
CCA_COST = {"bbr1": 1.6, "bbr2": 1.3, "bbr3": 1.3, "vivace": 1.3, "copa": 1.1, "lp": 1.2}
#: A classic CCA with ``pacing = true`` (measured: paced CUBIC).
PACED_CLASSIC_COST = 1.2
#: A Python CCA: a Python call per hook (measured: ``ccbench.pycca_examples.Reno``; a CCA
#: doing more work per ACK costs more).
PYTHON_CCA_COST = 2.2
#: The primary link's queue discipline (``prio`` and the FIFOs: 1.0). RED measured 1.1 in
#: that scenario, but the RED runs among the elephants samples (docs/preflight.md) ran
#: cheaper than their FIFO peers (5.5 events per packet against 8.5: its early drops keep
#: the shaper's queue short), so it is left at 1.0.
QDISC_COST = {"fq_codel": 1.4, "fq_pie": 1.4, "codel": 1.2, "pie": 1.1}
#: Engine CPU seconds per flow for setting it up and starting it (measured: 10,000
#: flows of a 1 s run, see docs/preflight.md), rounded up.
CPU_S_PER_FLOW = 20e-6
#: Engine memory per flow alive (sender, receiver, CCA, scoreboard at rest, flows row):
#: measured peak RSS growth per flow with 100,000 flows all alive, rounded up.
BYTES_PER_FLOW = 4096
#: Memory a finished flow leaves until the run ends beyond its flows-table row and that
#: row's copies (counted apart, 200 bytes each): the engine's record of it and what the
#: allocators keep. Measured (recipe/q2-cross-traffic-inelastic at paper scale, 1.77
#: million mice in 300 s, ``/usr/bin/time -v``): 1.97 GB peak RSS with at most 2,907
#: mice alive at once (CUBIC, 1/4 BDP) and 2.02 GB with 47,237 (16 BDP), i.e. 1,015 and
#: 942 bytes per flow after the base and the flows alive, of which 400 are the row's two
#: copies; rounded up. Counted for every flow of the spec.
BYTES_PER_FLOW_RECORD = 640
#: Memory per packet in flight or queued (packet in a link, scoreboard entry).
BYTES_PER_PACKET_IN_NETWORK = 256
#: Bytes of one row in memory: flow_ts, queue_ts, events (mirrors the engine's
#: ``ROW_BYTES`` in crates/ccsim/src/trace/recorder.rs).
ROW_BYTES = {"flow_ts": 160, "queue_ts": 68, "events": 44}
#: A run without an output directory (``ccbench.run(spec)``) holds each table whole,
#: about three times at the peak: engine columns, NumPy/Arrow copies, and the summary's
#: frames.
TABLE_COPIES = 3
#: A run with an output directory streams its growing tables to Parquet in chunks of
#: ``STREAM_CHUNK_ROWS`` rows (ccbench.runwriter): at most one chunk per table is held,
#: twice (the engine's chunk and its Arrow copy being written). Measured
#: (docs/benchmarks.md "Memory of a run", ``/usr/bin/time -f %M``): CoreScale (5,000
#: flows, 10 Gbit/s) peaks at 404 MB for 15 s and 512 MB for 60 s simulated; 200 flows
#: sampled every 1 ms at 221 MB for 4 s and 231 MB for 12 s, so the tables' share does
#: not grow with the run's length.
STREAM_COPIES = 2
#: Memory the summary's two passes over the sojourn samples leave behind per sample
#: (Arrow's reader and the allocators keep what they used): CoreScale went from 404 MB
#: at 15 s to 512 MB at 60 s simulated with about 4.3 million more samples (5.7 million
#: per simulated minute), 108 MB / 4.3 M = 25 bytes, rounded up.
BYTES_PER_SOJOURN_SAMPLE = 32
#: Python with NumPy, pandas, pyarrow and the engine loaded.
BASE_BYTES = 200 * 2**20
#: Parquet (zstd) output relative to the in-memory tables, rounded up.
DISK_FRACTION = 0.5
#: Links sampled into queue_ts per run (bottleneck and its reverse).
RECORDED_LINKS = 2
#: Events rows per flow (start, stop, completion, ...) and per packet (drops, marks:
#: assumed at most 5% of packets; the engine's row budget stops a run that exceeds it).
EVENT_ROWS_PER_FLOW = 4
EVENT_ROWS_PER_PACKET = 0.05

DEFAULT_CPU_WARN_S = 600.0
DEFAULT_CPU_REFUSE_S = 86_400.0


def machine_memory_bytes() -> int:
    """Physical memory, or the cgroup limit when one is set lower."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    try:
        text = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if text.isdigit():
            total = min(total, int(text))
    except OSError:
        pass
    return total


def recorded_bytes_budget() -> int:
    """How much the engine may record (samples, events) before it stops the run with
    :class:`~ccbench.errors.RunTooLarge`: what leaves room for the copies the tables
    go through (:data:`TABLE_COPIES`) in this machine's memory."""
    return max(64 * 2**20, (machine_memory_bytes() - BASE_BYTES) // (TABLE_COPIES + 1))


def _env_float(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name, default))
    except ValueError:
        return default


def _env_size(name: str) -> int | None:
    text = os.environ.get(name)
    if not text:
        return None
    try:
        return int(parse_size(text).value)
    except ValueError:
        return None


def _mb(n: float) -> str:
    if n < 2**20:
        return f"{n / 1024:,.0f} KiB"
    return f"{n / 2**20:,.0f} MiB" if n < 10 * 2**30 else f"{n / 2**30:,.1f} GiB"


def human_seconds(seconds: float) -> str:
    """A duration for people: '12.3 s', '15 min', '2.5 h', '64 days', '3 years'."""
    if seconds != seconds or seconds == float("inf"):
        return "?"
    if seconds < 120:
        return f"{seconds:.1f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 86400 * 3:
        return f"{seconds / 3600:.1f} h"
    if seconds < 86400 * 365 * 3:
        return f"{seconds / 86400:,.0f} days"
    return f"{seconds / (86400 * 365):,.0f} years"


@dataclass(frozen=True)
class Estimate:
    """Upper-bound estimates of a run's work and footprint, from the spec alone."""

    flows: int
    packets: int
    cpu_s: float
    rows: dict[str, int]
    memory_bytes: int
    disk_bytes: int
    #: The spec fields that drive the CPU and memory figures, for the messages.
    cpu_driver: str
    memory_driver: str
    #: What drives the size on disk (the tables' rows), for the messages.
    disk_driver: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "flows": self.flows,
            "packets": self.packets,
            "cpu_s": self.cpu_s,
            "rows": dict(self.rows),
            "memory_bytes": self.memory_bytes,
            "disk_bytes": self.disk_bytes,
        }

    def describe(self) -> str:
        rows = sum(self.rows.values())
        return (
            f"estimate: at most {self.packets:,} data packets, ~{human_seconds(self.cpu_s)} of CPU, "
            f"{rows:,} table rows, ~{_mb(self.memory_bytes)} of memory, ~{_mb(self.disk_bytes)} on disk"
        )


@dataclass
class Preflight:
    """What the check found. ``errors`` refuse the run; ``needs_force`` refuse it
    unless forced; ``warnings`` are only said."""

    estimate: Estimate
    errors: list[str] = field(default_factory=list)
    needs_force: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def raise_if_refused(self, *, force: bool = False) -> None:
        problems = self.errors + (
            [] if force else [f"{m} (pass --force / force=True to run anyway)" for m in self.needs_force]
        )
        if problems:
            raise PreflightError(problems)

    def all_warnings(self, *, force: bool = False) -> list[str]:
        return (self.needs_force if force else []) + self.warnings


def _sampled_rows(exp: Experiment, f: Any, samples: int, rate_bps: int) -> int:
    """``flow_ts`` rows of one flow group: a bulk or fixed flow may run the whole time;
    a finite flow arriving over time runs about its transfer time plus a few RTTs."""
    n = f.expected_count(exp.experiment.duration)
    if not f.is_lazy() or not math.isfinite(f.mean_size_bytes()) or samples == 0:
        return math.ceil(samples * n)
    life_ns = 4 * max(exp.sender_rtt(i) for i in range(len(exp.senders))) + f.mean_size_bytes() * 8e9 / rate_bps
    return math.ceil(n * min(samples, 1 + life_ns / exp.experiment.sample_interval))


def _alive_flows(exp: Experiment, rate_bps: int) -> float:
    """Flows alive at once, at most: every fixed or bulk flow; of a finite group arriving
    over time, its arrivals during one flow's life (a few RTTs, the longest queue's
    delay and its transfer at the link's rate)."""
    e = exp.experiment
    rtt = max(exp.sender_rtt(i) for i in range(len(exp.senders)))
    queue_ns = max(exp.buffer(ln).bytes * 8e9 / _highest_rate(ln) for ln in exp.links())
    alive = 0.0
    for f in exp.flows:
        n = f.expected_count(e.duration)
        if not f.is_lazy() or not math.isfinite(f.mean_size_bytes()):
            alive += n
            continue
        life_ns = 4 * rtt + queue_ns + f.mean_size_bytes() * 8e9 / rate_bps
        alive += n * min(1.0, life_ns / max(1, e.duration - f.start))
    return alive


def _cca_cost(name: str, paced: bool) -> float:
    if is_python_cca(name):
        return PYTHON_CCA_COST
    if name in CCA_COST:
        return CCA_COST[name]
    return PACED_CLASSIC_COST if paced else 1.0


def cost_factor(exp: Experiment) -> float:
    """What a packet of ``exp`` costs relative to CUBIC through a pfifo: the CCAs'
    factors weighted by their flows (a ``mix`` by its fractions; UDP sources 1), times the
    primary link's qdisc's."""
    e = exp.experiment
    weight = total = 0.0
    for f in exp.flows:
        n = f.expected_count(e.duration)
        shares = [(m.cca, m.fraction) for m in f.mix] or [(f.cca, 1.0)]
        for cca, fraction in shares:
            c = 1.0 if cca == "udp" else _cca_cost(cca, f.pacing)
            weight += n * fraction * c
            total += n * fraction
    ccas = weight / total if total > 0 else 1.0
    return ccas * QDISC_COST.get(exp.qdisc_spec().kind, 1.0)


def packets_per_cpu_s(alive_flows: float) -> float:
    """The engine's data packets per CPU-second with ``alive_flows`` flows alive at once
    (the pre-flight's model: docs/preflight.md)."""
    doublings = math.log2(max(alive_flows, FLOWS_AT_FULL_SPEED) / FLOWS_AT_FULL_SPEED)
    return PACKETS_PER_CPU_S / (1 + SLOWDOWN_PER_FLOW_DOUBLING * doublings)


def _held_rows(rows: int, streamed: bool) -> int:
    from .runwriter import STREAM_CHUNK_ROWS

    return min(rows, STREAM_CHUNK_ROWS) if streamed else rows


def _highest_rate(ln: Any) -> int:
    """The highest rate a link carries: its line rate over its schedule, held to its
    shaper's rate when it has one."""
    line = max([ln.spec.rate, *(c.rate for c in ln.spec.rate_schedule)])
    return min(line, ln.spec.shaper.rate) if ln.spec.shaper is not None else line


def estimate(exp: Experiment, *, streamed: bool = True) -> Estimate:
    """Upper bounds of packets, CPU time, rows, memory and disk for ``exp``. A
    ``streamed`` run (one with an output directory, as every ``ccbench run`` and sweep
    run has) holds at most a chunk of each growing table; otherwise
    (``ccbench.run(spec)`` without ``out_dir``) it holds the tables whole."""
    e = exp.experiment
    flows = math.ceil(sum(f.expected_count(e.duration) for f in exp.flows))
    links = exp.links()
    # Data through the network is bounded by the sum of the links' highest rates (a
    # shaped link's: its shaper's rate, plus one bucket of burst).
    max_rate = sum(_highest_rate(ln) for ln in links)
    min_packet = min(f.mss for f in exp.flows) + exp.packet_bytes() - max(f.mss for f in exp.flows)
    seconds = e.duration / 1e9
    bursts = sum(exp.limit_context(ln).bytes(ln.spec.shaper.burst) for ln in links if ln.spec.shaper is not None)
    packets = math.ceil((max_rate * seconds / 8 + bursts) / min_packet)
    alive = min(float(flows), _alive_flows(exp, max_rate))
    cost = cost_factor(exp)
    packet_cpu = packets * cost / packets_per_cpu_s(alive)
    cpu = packet_cpu + flows * CPU_S_PER_FLOW
    samples = (e.duration // e.sample_interval + 1) if e.sample_interval > 0 else 0
    rows = {
        "flows": flows,
        "flow_ts": sum(_sampled_rows(exp, f, samples, max_rate) for f in exp.flows),
        "queue_ts": samples * RECORDED_LINKS * len(links),
        "events": flows * EVENT_ROWS_PER_FLOW + math.ceil(packets * EVENT_ROWS_PER_PACKET),
    }
    table_bytes = sum(rows[t] * ROW_BYTES[t] for t in ROW_BYTES) + flows * 200
    copies = STREAM_COPIES if streamed else TABLE_COPIES
    # Every Nth packet leaving a queue is a sojourn sample (one per packet at most).
    sojourn_samples = math.ceil(packets / max(1, e.sojourn_sample_every))
    held = {t: copies * _held_rows(rows[t], streamed) * ROW_BYTES[t] for t in ROW_BYTES}
    max_rtt = max(exp.sender_rtt(i) for i in range(len(exp.senders)))
    in_network = math.ceil(max_rate * max_rtt / (8e9 * min_packet)) + sum(exp.buffer(ln).packets for ln in links)
    memory = (
        BASE_BYTES
        + alive * BYTES_PER_FLOW
        + flows * BYTES_PER_FLOW_RECORD
        + in_network * BYTES_PER_PACKET_IN_NETWORK
        + sum(held.values())
        + copies * flows * 200
        + sojourn_samples * BYTES_PER_SOJOURN_SAMPLE
    )
    rate_text = format_rate(max_rate)
    samples_text = (
        f"samples every experiment.sample_interval ({format_duration(e.sample_interval)}) over "
        f"experiment.duration ({format_duration(e.duration)}) for {flows:,} flow(s)"
    )
    events_text = f"drop and other events over experiment.duration ({format_duration(e.duration)})"
    cpu_driver = f"experiment.duration ({format_duration(e.duration)}) x bottleneck rate ({rate_text})"
    if flows * CPU_S_PER_FLOW > packet_cpu:
        cpu_driver = f"the number of flows ({flows:,}, flows[*].count)"
    elif alive > FLOWS_AT_FULL_SPEED or cost > 1.0:
        cpu_driver += f" at {packets_per_cpu_s(alive) / cost / 1e6:.2f} M packets per CPU-s"
        if alive > FLOWS_AT_FULL_SPEED:
            cpu_driver += f" with ~{alive:,.0f} flows alive at once"
        if cost > 1.0:
            cpu_driver += f" (x{cost:.2f} for the CCAs and the qdisc)"
    parts = {
        f"the number of flows ({flows:,}, flows[*].count)": alive * BYTES_PER_FLOW + flows * BYTES_PER_FLOW_RECORD,
        samples_text: held["flow_ts"] + held["queue_ts"],
        f"packets in flight and queued (bottleneck rate {rate_text}, RTT up to {format_duration(max_rtt)}, "
        f"bottleneck.buffer)": in_network * BYTES_PER_PACKET_IN_NETWORK,
        events_text: held["events"],
    }
    memory_driver = max(parts, key=lambda k: parts[k])
    sample_bytes = rows["flow_ts"] * ROW_BYTES["flow_ts"] + rows["queue_ts"] * ROW_BYTES["queue_ts"]
    disk_driver = samples_text if sample_bytes >= rows["events"] * ROW_BYTES["events"] else events_text
    return Estimate(
        flows=flows,
        packets=packets,
        cpu_s=cpu,
        rows=rows,
        memory_bytes=int(memory),
        disk_bytes=int(table_bytes * DISK_FRACTION),
        cpu_driver=cpu_driver,
        memory_driver=memory_driver,
        disk_driver=disk_driver,
    )


def _buffer_errors(exp: Experiment) -> list[str]:
    biggest = max(exp.flows, key=lambda f: f.mss)
    i = exp.flows.index(biggest)
    packet = exp.packet_bytes()
    for ln in exp.links():
        buf = exp.buffer(ln)
        if buf.qdisc != "bfifo" or buf.bytes >= packet:
            continue
        return [
            f"{ln.path}.buffer ({ln.spec.buffer}) resolves to {buf.bytes} bytes (BDP {buf.bdp_bytes} bytes at "
            f"RTT {format_duration(buf.bdp_rtt_ns)}), less than one {packet}-byte packet of the largest MSS "
            f"(flows[{i}].mss = {biggest.mss}): every packet would be dropped. Give at least '{packet}B' or '1pkt', "
            "or a larger BDP multiple"
        ]
    return []


def _meaning_warnings(exp: Experiment) -> list[str]:
    e = exp.experiment
    out: list[str] = []
    for i, f in enumerate(exp.flows):
        rtt = exp.sender_rtt(exp.sender_index(f))
        if f.start + f.start_jitter > e.duration:
            out.append(
                f"flows[{i}]: start ({format_duration(f.start)}) + start_jitter ({format_duration(f.start_jitter)}) "
                f"reaches past experiment.duration ({format_duration(e.duration)}): some of these flows may never start"
            )
        if f.start + rtt >= e.duration:
            out.append(
                f"flows[{i}]: its path RTT ({format_duration(rtt)}) is not shorter than the time left after its start "
                f"({format_duration(e.duration - f.start)} of experiment.duration): nothing can be delivered"
            )
    links = exp.links()
    for i, (s, path) in enumerate(zip(exp.senders, exp.paths(), strict=True)):
        slowest = min((links[k] for k, _ in path.hops), key=exp.shaped_rate)
        if s.access_rate is not None and s.access_rate < exp.shaped_rate(slowest):
            out.append(
                f"senders[{i}].access_rate ({format_rate(s.access_rate)}) is below {slowest.path}.rate "
                f"({format_rate(exp.shaped_rate(slowest))}): this sender's access link, not the bottleneck, limits its flows"
            )
    return out


def _nearest_existing(path: Path) -> Path:
    for p in (path, *path.parents):
        if p.exists():
            return p
    return Path("/")


def _output_errors(out_dir: Path, est: Estimate) -> list[str]:
    target = Path(os.path.abspath(out_dir))
    base = _nearest_existing(target.parent)
    if not base.is_dir():
        return [f"output directory {target}: {base} is not a directory"]
    if not os.access(base, os.W_OK | os.X_OK):
        return [f"output directory {target}: {base} is not writable by this user"]
    return _disk_errors(f"output directory {target}", base, est)


def _disk_errors(where: str, base: Path, est: Estimate) -> list[str]:
    try:
        free = shutil.disk_usage(base).free
    except OSError as e:
        return [f"{where}: cannot check free space ({e.strerror})"]
    if free < est.disk_bytes:
        return [
            f"{where}: {_mb(free)} free on its file system, but the results are estimated at "
            f"~{_mb(est.disk_bytes)}, driven by {est.disk_driver}"
        ]
    return []


def check(
    exp: Experiment,
    out_dir: str | os.PathLike[str] | None = None,
    *,
    memory_warn_bytes: int | None = None,
    cpu_warn_s: float | None = None,
    cpu_refuse_s: float | None = None,
    streamed: bool | None = None,
) -> Preflight:
    """Run every pre-flight check on ``exp`` (and the output directory, if given).
    ``streamed`` (default: whether ``out_dir`` is given) says whether the run writes
    its tables to a directory as it goes; ``ccbench validate`` checks a streamed run
    as ``ccbench run`` makes one, its tables' size on disk against the current
    directory's file system."""
    if streamed is None:
        streamed = out_dir is not None
    est = estimate(exp, streamed=streamed)
    machine = machine_memory_bytes()
    mem_warn = memory_warn_bytes or _env_size("CCBENCH_MEMORY_WARN") or machine // 4
    cpu_warn = cpu_warn_s if cpu_warn_s is not None else _env_float("CCBENCH_CPU_WARN_S", DEFAULT_CPU_WARN_S)
    cpu_refuse = cpu_refuse_s if cpu_refuse_s is not None else _env_float("CCBENCH_CPU_REFUSE_S", DEFAULT_CPU_REFUSE_S)
    report = Preflight(est)
    report.errors += _buffer_errors(exp)
    if est.memory_bytes > machine:
        report.errors.append(
            f"the run needs an estimated {_mb(est.memory_bytes)} of memory, more than this machine's {_mb(machine)}; "
            f"it is driven by {est.memory_driver}"
        )
    elif est.memory_bytes > mem_warn:
        report.needs_force.append(
            f"the run needs an estimated {_mb(est.memory_bytes)} of memory (warning threshold {_mb(mem_warn)}, "
            f"CCBENCH_MEMORY_WARN); it is driven by {est.memory_driver}"
        )
    cpu_text = f"the run is estimated at ~{human_seconds(est.cpu_s)} of CPU ({est.packets:,} packets); it is driven by {est.cpu_driver}"
    if est.cpu_s > cpu_refuse:
        report.needs_force.append(f"{cpu_text} (over {human_seconds(cpu_refuse)}, CCBENCH_CPU_REFUSE_S)")
    elif est.cpu_s > cpu_warn:
        report.warnings.append(cpu_text)
    report.warnings += _meaning_warnings(exp)
    if out_dir is not None:
        report.errors += _output_errors(Path(out_dir), est)
    elif streamed:
        report.errors += _disk_errors("the current directory", Path.cwd(), est)
    return report
