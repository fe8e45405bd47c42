"""Checks that involve more than one field of a spec (durations against the experiment's
duration, sender names referenced by flows and by ``bdp_rtt``, ...)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..units import Size, format_duration
from .flows import MAX_FLOWS
from .network import RateChange
from .qdisc import LimitContext, qdisc_issues
from .topology import NetLink, topology_issues

if TYPE_CHECKING:
    from .experiment import Experiment


def _cross_issues(x: Experiment) -> list[tuple[str, str]]:
    """Checks that involve more than one field; each message names all of them."""
    issues: list[tuple[str, str]] = []
    e = x.experiment
    if e.duration == 0:
        issues.append(("experiment.duration", "'0s' is not allowed: the duration must be > 0"))
    if e.warmup >= e.duration > 0:
        issues.append(
            (
                "experiment.warmup",
                f"{format_duration(e.warmup)!r} is not allowed: it must be below experiment.duration ({format_duration(e.duration)})",
            )
        )
    structural = topology_issues(x)
    issues.extend(structural)
    links = x.links() if x.bottleneck is not None or x.topology is not None else []
    for ln in links:
        issues.extend(_link_issues(ln, e.duration))
    names: list[str] = []
    for i, s in enumerate(x.senders):
        path = f"senders[{i}]"
        if s.name in names:
            issues.append((f"{path}.name", f"{s.name!r} is not allowed: sender names must be unique"))
        if s.name in ("min", "max"):
            issues.append((f"{path}.name", f"{s.name!r} is reserved (bottleneck.bdp_rtt uses it); choose another name"))
        names.append(s.name)
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
    if not structural:
        issues.extend(_rtt_issues(x))
    for ln in links:
        b = ln.spec
        if isinstance(b.bdp_rtt, str) and b.bdp_rtt not in ("min", "max") and b.bdp_rtt not in names:
            issues.append(
                (
                    f"{ln.path}.bdp_rtt",
                    f"{b.bdp_rtt!r} is not 'min', 'max', a duration or a sender name (senders[*].name: {', '.join(names)})",
                )
            )
    total = 0
    for i, f in enumerate(x.flows):
        path = f"flows[{i}]"
        total += 0 if f.is_lazy() else f.count  # flows arriving over time stop at their own count
        if f.rtts is not None and not structural and (f.sender is None or f.sender in names):
            from .traffic import rtt_bins

            # A per-flow RTT covers at least the propagation delay of the sender's route.
            prop = x.paths()[x.sender_index(f)].propagation_rtt_ns
            bins = [r for r, _ in rtt_bins(f.rtts)]
            low = [r for r in bins if r == 0 or r < prop]
            # each per-flow RTT gets a sender of its own, with this sender's jitter
            s = x.senders[x.sender_index(f)]
            left = least_access_delay(s.delay_path, min(bins) - prop) if not low else 0
            if not low and s.jitter > left:
                issues.append(
                    (
                        f"{path}.rtts",
                        f"{format_duration(min(bins))!r} is not allowed: it leaves {format_duration(left)} of one-way "
                        f"access delay, less than the sender's jitter ({format_duration(s.jitter)})",
                    )
                )
            if low:
                issues.append(
                    (
                        f"{path}.rtts",
                        f"{format_duration(low[0])!r} is not allowed: every RTT must be > 0 and at least the propagation RTT of the sender's route ({format_duration(prop)})",
                    )
                )
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
    resolvable = not issues
    groups = list(x.group_flows())
    for ln in links:
        ctx = x.limit_context(ln) if resolvable else None
        issues.extend(qdisc_issues(x.qdisc_spec(ln), f"{ln.path}.qdisc", ctx, groups))
        issues.extend(_shaper_issues(ln, ctx))
        if ln.spec.reverse is not None:
            rctx = x.limit_context(ln, reverse=True) if resolvable else None
            issues.extend(qdisc_issues(x.qdisc_spec(ln, reverse=True), f"{ln.path}.reverse.qdisc", rctx, groups))
    return issues


def _link_issues(ln: NetLink, duration: int) -> list[tuple[str, str]]:
    """A network link's own fields: rate, buffer and rate schedule, in each direction."""
    b, p = ln.spec, ln.path
    issues = _direction_issues(b.rate, b.buffer, b.rate_schedule, p, duration)
    if b.jitter > b.delay:
        # netem would clamp the negative delays at 0: a lopsided spread, not the one asked for
        issues.append(
            (
                f"{p}.jitter",
                f"{format_duration(b.jitter)!r} is not allowed: it must be at most {p}.delay "
                f"({format_duration(b.delay)}), as a delay varies by at most itself",
            )
        )
    if b.reverse is not None:
        r = b.reverse
        issues += _direction_issues(r.rate, r.buffer, r.rate_schedule, f"{p}.reverse", duration)
    return issues


def _direction_issues(
    rate: int | None, buffer: Size, schedule: list[RateChange], p: str, duration: int
) -> list[tuple[str, str]]:
    issues: list[tuple[str, str]] = []
    if rate == 0:
        issues.append((f"{p}.rate", "'0bit' is not allowed: the rate must be > 0"))
    if buffer.value == 0:
        issues.append((f"{p}.buffer", f"{str(buffer)!r} is not allowed: the buffer must be > 0"))
    prev = -1
    for i, c in enumerate(schedule):
        path = f"{p}.rate_schedule[{i}]"
        if c.rate == 0:
            issues.append((f"{path}.rate", "'0bit' is not allowed: the rate must be > 0"))
        if c.at <= prev:
            issues.append((f"{path}.at", f"{format_duration(c.at)!r} is not allowed: times must strictly increase"))
        if c.at >= duration:
            issues.append(
                (
                    f"{path}.at",
                    f"{format_duration(c.at)!r} is not allowed: it must be below experiment.duration ({format_duration(duration)})",
                )
            )
        prev = c.at
    return issues


def _rtt_issues(x: Experiment) -> list[tuple[str, str]]:
    """Each sender's RTT against the propagation delay of its path."""
    issues: list[tuple[str, str]] = []
    links = x.links()
    for i, (s, p) in enumerate(zip(x.senders, x.paths(), strict=True)):
        prop = p.propagation_rtt_ns
        if x.topology is None:
            base = "twice bottleneck.delay"
            what = f"{base} ({format_duration(prop // 2)})"
        else:
            base = "the propagation RTT of its path"
            crossed = ", ".join(links[k].path for k, _ in p.hops)
            what = f"{base} ({format_duration(prop)}: twice the delays of {crossed})"
        if s.rtt is None:
            if prop == 0:
                issues.append((f"senders[{i}].rtt", f"is required: the links of its route have no delay ({p.nodes})"))
        elif s.rtt == 0 or s.rtt < prop:
            issues.append(
                (f"senders[{i}].rtt", f"{format_duration(s.rtt)!r} is not allowed: it must be > 0 and at least {what}")
            )
            continue
        if s.jitter > 0:
            least = least_access_delay(s.delay_path, x.sender_rtt(i) - prop)
            if s.jitter > least:
                issues.append(
                    (
                        f"senders[{i}].jitter",
                        f"{format_duration(s.jitter)!r} is not allowed: it must be at most the one-way delay it varies, "
                        f"{format_duration(least)} (senders[{i}].rtt less {base}, placed by "
                        f"delay_path = {s.delay_path!r})",
                    )
                )
    return issues


def least_access_delay(delay_path: str, access: int) -> int:
    """The shortest one-way delay a sender's jitter varies: its access path's delay
    (``access``, its RTT less the route's propagation RTT) in each direction that carries
    some of it, as the engine places it by ``delay_path``; 0 when none does."""
    ways = {"split": (access // 2, access // 2), "data": (access, 0), "ack": (0, access)}[delay_path]
    return min((d for d in ways if d > 0), default=0)


def _shaper_issues(ln: NetLink, ctx: LimitContext | None) -> list[tuple[str, str]]:
    issues: list[tuple[str, str]] = []
    shaper, p = ln.spec.shaper, f"{ln.path}.shaper"
    if shaper is None:
        return issues
    if shaper.rate == 0:
        issues.append((f"{p}.rate", "'0bit' is not allowed: the rate must be > 0"))
    if shaper.burst.kind == "bdp" or shaper.burst.value == 0:
        issues.append((f"{p}.burst", f"{str(shaper.burst)!r} is not allowed: give bytes or packets > 0"))
    elif ctx is not None and ctx.bytes(shaper.burst) < ctx.packet_bytes:
        issues.append(
            (
                f"{p}.burst",
                f"{str(shaper.burst)!r} is smaller than one packet ({ctx.packet_bytes} B): nothing could pass",
            )
        )
    if shaper.peakrate is not None and shaper.peakrate <= shaper.rate:
        issues.append((f"{p}.peakrate", f"must exceed {p}.rate"))
    return issues
