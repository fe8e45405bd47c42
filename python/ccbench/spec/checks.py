"""Checks that involve more than one field of a spec (durations against the experiment's
duration, sender names referenced by flows and by ``bdp_rtt``, ...)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..units import format_duration
from .flows import MAX_FLOWS
from .qdisc import qdisc_issues

if TYPE_CHECKING:
    from .experiment import Experiment


def _cross_issues(x: Experiment) -> list[tuple[str, str]]:
    """Checks that involve more than one field; each message names all of them."""
    issues: list[tuple[str, str]] = []
    e, b = x.experiment, x.bottleneck
    if e.duration == 0:
        issues.append(("experiment.duration", "'0s' is not allowed: the duration must be > 0"))
    if e.warmup >= e.duration > 0:
        issues.append(
            (
                "experiment.warmup",
                f"{format_duration(e.warmup)!r} is not allowed: it must be below experiment.duration ({format_duration(e.duration)})",
            )
        )
    if b.rate == 0:
        issues.append(("bottleneck.rate", "'0bit' is not allowed: the rate must be > 0"))
    if b.buffer.value == 0:
        issues.append(("bottleneck.buffer", f"{str(b.buffer)!r} is not allowed: the buffer must be > 0"))
    prev = -1
    for i, c in enumerate(b.rate_schedule):
        path = f"bottleneck.rate_schedule[{i}]"
        if c.rate == 0:
            issues.append((f"{path}.rate", "'0bit' is not allowed: the rate must be > 0"))
        if c.at <= prev:
            issues.append((f"{path}.at", f"{format_duration(c.at)!r} is not allowed: times must strictly increase"))
        if c.at >= e.duration:
            issues.append(
                (
                    f"{path}.at",
                    f"{format_duration(c.at)!r} is not allowed: it must be below experiment.duration ({format_duration(e.duration)})",
                )
            )
        prev = c.at
    names: list[str] = []
    for i, s in enumerate(x.senders):
        path = f"senders[{i}]"
        if s.name in names:
            issues.append((f"{path}.name", f"{s.name!r} is not allowed: sender names must be unique"))
        if s.name in ("min", "max"):
            issues.append((f"{path}.name", f"{s.name!r} is reserved (bottleneck.bdp_rtt uses it); choose another name"))
        names.append(s.name)
        if s.rtt == 0 or s.rtt < 2 * b.delay:
            issues.append(
                (
                    f"{path}.rtt",
                    f"{format_duration(s.rtt)!r} is not allowed: it must be > 0 and at least twice bottleneck.delay ({format_duration(b.delay)})",
                )
            )
        if s.access_rate == 0:
            issues.append((f"{path}.access_rate", "'0bit' is not allowed: the rate must be > 0"))
        if s.access_queue is not None:
            if s.access_queue.kind == "bdp":
                issues.append(
                    (
                        f"{path}.access_queue",
                        f"{str(s.access_queue)!r} is not allowed: give packets ('1000pkt') or bytes ('1MB')",
                    )
                )
            elif s.access_queue.value == 0:
                issues.append(
                    (f"{path}.access_queue", f"{str(s.access_queue)!r} is not allowed: the queue must be > 0")
                )
    if isinstance(b.bdp_rtt, str) and b.bdp_rtt not in ("min", "max") and b.bdp_rtt not in names:
        issues.append(
            (
                "bottleneck.bdp_rtt",
                f"{b.bdp_rtt!r} is not 'min', 'max', a duration or a sender name (senders[*].name: {', '.join(names)})",
            )
        )
    total = 0
    for i, f in enumerate(x.flows):
        path = f"flows[{i}]"
        total += f.count
        if f.sender is None and len(names) > 1:
            issues.append(
                (f"{path}.sender", f"is required when there are several senders (senders[*].name: {', '.join(names)})")
            )
        elif f.sender is not None and f.sender not in names:
            issues.append(
                (f"{path}.sender", f"{f.sender!r} is not a sender name (senders[*].name: {', '.join(names)})")
            )
        if f.start >= e.duration > 0:
            issues.append(
                (
                    f"{path}.start",
                    f"{format_duration(f.start)!r} is not allowed: it must be below experiment.duration ({format_duration(e.duration)})",
                )
            )
        if f.stop is not None and f.stop <= f.start:
            issues.append(
                (
                    f"{path}.stop",
                    f"{format_duration(f.stop)!r} is not allowed: it must be after flows[{i}].start ({format_duration(f.start)})",
                )
            )
        if f.size is not None:
            if f.size.kind == "bdp":
                issues.append(
                    (f"{path}.size", f"{str(f.size)!r} is not allowed: give bytes ('10MB') or packets ('100pkt')")
                )
            elif f.size.value == 0:
                issues.append(
                    (f"{path}.size", f"{str(f.size)!r} is not allowed: the size must be > 0 (omit it for a bulk flow)")
                )
        if f.rwnd is not None:
            if f.rwnd.kind == "bdp":
                issues.append(
                    (f"{path}.rwnd", f"{str(f.rwnd)!r} is not allowed: give bytes ('64MiB') or packets ('1000pkt')")
                )
            elif (f.rwnd.value * (f.mss if f.rwnd.kind == "packets" else 1)) < f.mss:
                issues.append(
                    (
                        f"{path}.rwnd",
                        f"{str(f.rwnd)!r} is not allowed: it must be at least flows[{i}].mss ({f.mss} bytes)",
                    )
                )
    if total > MAX_FLOWS:
        issues.append(("flows", f"{total} flows in total is too many (at most {MAX_FLOWS})"))
    # Queue limits resolve against the buffer and BDP: only meaningful once the rest holds.
    ctx = x.limit_context() if not issues else None
    groups = list(x.group_flows())
    issues.extend(qdisc_issues(x.qdisc_spec(), "bottleneck.qdisc", ctx, groups))
    if b.shaper is not None:
        if b.shaper.rate == 0:
            issues.append(("bottleneck.shaper.rate", "'0bit' is not allowed: the rate must be > 0"))
        if b.shaper.burst.kind == "bdp" or b.shaper.burst.value == 0:
            issues.append(
                ("bottleneck.shaper.burst", f"{str(b.shaper.burst)!r} is not allowed: give bytes or packets > 0")
            )
        elif ctx is not None and ctx.bytes(b.shaper.burst) < ctx.packet_bytes:
            issues.append(
                (
                    "bottleneck.shaper.burst",
                    f"{str(b.shaper.burst)!r} is smaller than one packet ({ctx.packet_bytes} B): nothing could pass",
                )
            )
        if b.shaper.peakrate is not None and b.shaper.peakrate <= b.shaper.rate:
            issues.append(("bottleneck.shaper.peakrate", "must exceed bottleneck.shaper.rate"))
    return issues
