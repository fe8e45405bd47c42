"""The ``linux`` backend: the spec on real Linux TCP stacks in network namespaces.

Modules: :mod:`.system` (commands, root, what the kernel offers), :mod:`.plan` (spec →
what will be built, and every reason it cannot), :mod:`.netns` (namespaces, links,
queues, cleanup), :mod:`.delayline` (userspace delay when the kernel has no netem),
:mod:`.netem` (netem loss and delay arguments), :mod:`.sizedflow` (finite transfers
that end on delivery),
:mod:`.sampling` (``ss``/``tc`` samplers and parsers), :mod:`.tables` (samples →
result tables), :mod:`.runner` (one run, start to finish). See
``docs/linux-backend.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import BackendRun, BackendUnavailable, ProgressFn
from . import system
from .plan import KERNEL_CCA, make_plan

if TYPE_CHECKING:
    from ...spec import Experiment

__all__ = ["LinuxBackend"]

ROOT_MESSAGE = (
    "the linux backend needs root: it creates network namespaces, veth links and qdiscs "
    "(run as root, e.g. 'sudo ccbench run ...')"
)


class LinuxBackend:
    name = "linux"

    def _unavailable(self) -> list[str]:
        problems = []
        if not system.is_root():
            problems.append(ROOT_MESSAGE)
        missing = system.missing_tools()
        if missing:
            problems.append(f"missing tools: {', '.join(missing)} ('make system-deps' installs them as root)")
        return problems

    def capabilities(self) -> dict[str, Any]:
        problems = self._unavailable()
        info = system.kernel_info()
        qdiscs = info.qdiscs if info.qdiscs_probed else {}
        return {
            "available": not problems,
            "reason": "; ".join(problems),
            "root": system.is_root(),
            "kernel": info.release,
            "ccas": list(info.ccas),
            "ccbench_cca_names": dict(KERNEL_CCA),
            "qdiscs": qdiscs if info.qdiscs_probed else "unknown (probing needs root)",
            "netem": qdiscs.get("netem") if info.qdiscs_probed else None,
            "delay": "netem" if qdiscs.get("netem") else "userspace delay line (no netem in this kernel)",
            "loss": "netem (links, access links, ACK directions)"
            if qdiscs.get("netem")
            else "none: random loss needs netem, which this kernel does not provide",
            "offload_control": info.tools.get("ethtool", "missing") != "missing",
            "tools": info.tools,
        }

    def check(self, exp: Experiment) -> None:
        problems = self._unavailable()
        if problems:
            raise BackendUnavailable(self.name, problems)
        make_plan(exp, system.kernel_info())  # raises BackendError naming what is missing

    def versions(self) -> dict[str, str]:
        info = system.kernel_info()
        return {"kernel": info.release, **{f"tool_{k}": v for k, v in info.tools.items()}}

    def run(self, exp: Experiment, *, progress: ProgressFn | None = None) -> BackendRun:
        from .runner import run_plan

        info = system.kernel_info()
        plan = make_plan(exp, info)
        return run_plan(plan, info, progress=progress)
