"""Example CCAs written in Python (docs/python-cca.md): name them in a spec as
``cca = "python:ccbench.pycca_examples:Reno"``.

:class:`Reno` is Linux's Reno (``tcp_cong.c``) hook for hook, so it produces the same
tables as the engine's built-in ``reno`` on the same spec and seed (tested).
:class:`Aimd` shows parameters: a spec's ``params`` are its constructor's arguments.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .pycca import Cca, cong_avoid_ai, reno_cong_avoid, reno_ssthresh, slow_start

if TYPE_CHECKING:
    from ._core import AckSample, TcpState

__all__ = ["Aimd", "Reno"]


class Reno(Cca):
    """``tcp_reno_cong_avoid`` / ``tcp_reno_ssthresh``; undo is the base class's
    ``max(cwnd, prior_cwnd)``, as Linux's ``tcp_reno_undo_cwnd``."""

    def ssthresh(self, tp: TcpState) -> int:
        return reno_ssthresh(tp)

    def cong_avoid(self, tp: TcpState, sample: AckSample) -> None:
        reno_cong_avoid(tp, sample.acked_sacked)


class Aimd(Cca):
    """Generalized AIMD: in congestion avoidance add ``increase`` packets per window
    of ACKs; on a congestion event multiply the window by ``decrease``."""

    def __init__(self, increase: int = 1, decrease: float = 0.5):
        if increase < 1:
            raise ValueError(f"increase must be >= 1 packet, got {increase}")
        if not 0.0 < decrease < 1.0:
            raise ValueError(f"decrease must be in (0, 1), got {decrease}")
        self.increase = increase
        self.decrease = decrease

    def ssthresh(self, tp: TcpState) -> int:
        return max(int(tp.cwnd * self.decrease), 2)

    def cong_avoid(self, tp: TcpState, sample: AckSample) -> None:
        acked = sample.acked_sacked
        if tp.in_slow_start():
            acked = slow_start(tp, acked)
            if acked == 0:
                return
        # `increase` packets per window = one packet per cwnd/increase ACKs.
        cong_avoid_ai(tp, max(tp.cwnd // self.increase, 1), acked)
