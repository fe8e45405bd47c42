"""Sizing: metrics.md §1, **M-BDP**, the bandwidth-delay product and buffers of
k × BDP.

D0 Eq. 1 writes ``BDP = BW · RTT / 8`` with RTT in milliseconds, which is 1000× too
large; here RTT is in seconds (as D2's example: 100 Mbit/s × 100 ms = 1 250 000 B).
Which RTT enters (propagation or configured) is the caller's choice; the spec's
``bdp_rtt`` decides it for buffers given as ``"2BDP"``. The spec resolves its
buffers with the same rule in exact arithmetic (``Experiment.buffer``; a test keeps
the two in step), and a run's manifest records the result under
``derived.buffer``.
"""

from __future__ import annotations

import math
from fractions import Fraction

__all__ = ["bdp_bytes", "buffer_bytes", "buffer_packets"]


def bdp_bytes(rate_bps: float, rtt_ns: float) -> float:
    """M-BDP in bytes: ``rate · RTT / 8`` (RTT in ns here, seconds in the formula)."""
    if rate_bps < 0 or rtt_ns < 0:
        raise ValueError("rate and RTT must be non-negative")
    return float(Fraction(rate_bps) * Fraction(rtt_ns) / (8 * 10**9))


def buffer_bytes(k: float, rate_bps: float, rtt_ns: float) -> float:
    """A buffer of ``k`` × BDP, in bytes."""
    return float(Fraction(k) * Fraction(rate_bps) * Fraction(rtt_ns) / (8 * 10**9))


def buffer_packets(k: float, rate_bps: float, rtt_ns: float, packet_bytes: int = 1500) -> int:
    """A buffer of ``k`` × BDP in whole packets of ``packet_bytes`` (rounded up, at
    least 1), as a packet-limited FIFO needs it."""
    exact = Fraction(k) * Fraction(rate_bps) * Fraction(rtt_ns) / (8 * 10**9)
    return max(1, math.ceil(exact / packet_bytes))
