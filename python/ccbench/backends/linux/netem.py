"""``tc ... netem`` argument lists for a spec's random loss and added delay.

Pure (no system calls). The spec's loss is Bernoulli (a probability) or the
Gilbert–Elliott chain; both map exactly onto netem's loss models (tc-netem(8)):

* Bernoulli ``p``           -> ``loss random P%``
* Gilbert–Elliott           -> ``loss gemodel p r 1-h 1-k``, where netem's ``1-h`` is the
  loss probability in the Bad state (the spec's ``loss_bad``) and ``1-k`` the loss
  probability in the Good state (``loss_good``); tc turns ``1-h`` into the kernel's ``h``
  (iproute2 q_netem.c), and the kernel loses a packet in the state it finds and then
  draws the transition, where the simulator draws the transition first: the same chain,
  one packet apart, so the same long-run loss and burst lengths.

A link's or a sender's ``jitter`` (per-packet delay variation) is netem's ``delay D J``
with no distribution table: ``tabledist`` draws each packet's delay uniformly from
[D - J, D + J), and netem's time-sorted tfifo lets packets overtake each other (no
``rate`` is given, which would keep them in order), as the simulator's jittered links
do (``crates/ccsim/src/net/link.rs``). netem holds the jitter in a signed 32-bit count
of nanoseconds, so at most :data:`NETEM_MAX_JITTER_NS`.

Deviation: netem draws from the kernel's unseeded generator, so a kernel run's losses
are not reproducible packet for packet as the simulator's seeded draws are; only their
statistics agree.
"""

from __future__ import annotations

from typing import Any

__all__ = ["NETEM_LIMIT_PACKETS", "NETEM_MAX_JITTER_NS", "netem_args", "netem_loss_args"]

#: netem's own queue holds packets for the delay; large enough never to drop (the shaped
#: queue is elsewhere in the path).
NETEM_LIMIT_PACKETS = 100_000
#: netem's jitter is an ``s32`` of nanoseconds (``tabledist(s64 mu, s32 sigma, ...)``).
NETEM_MAX_JITTER_NS = 2**31 - 1


def _percent(x: float) -> str:
    return f"{x * 100:.10g}%"


def netem_loss_args(loss: Any) -> tuple[str, ...]:
    """netem's loss arguments for a spec loss (a probability or a ``GilbertElliottSpec``); () for none."""
    if isinstance(loss, (int, float)):
        return () if loss == 0 else ("loss", "random", _percent(float(loss)))
    # a GilbertElliottSpec: p, r, loss_bad (netem's 1-h), loss_good (netem's 1-k)
    return ("loss", "gemodel", *(_percent(float(getattr(loss, k))) for k in ("p", "r", "loss_bad", "loss_good")))


def netem_args(delay_ns: int = 0, loss: tuple[str, ...] = (), jitter_ns: int = 0) -> list[str]:
    """The qdisc part of ``tc qdisc replace dev D root <here>``: netem with the delay (and
    its per-packet jitter, at most the delay) and loss."""
    assert 0 <= jitter_ns <= delay_ns, (jitter_ns, delay_ns)
    delay = ["delay", f"{delay_ns // 1000}us"] if delay_ns > 0 else []
    if jitter_ns > 0:
        delay.append(f"{jitter_ns // 1000}us")
    return ["netem", *delay, *loss, "limit", str(NETEM_LIMIT_PACKETS)]
