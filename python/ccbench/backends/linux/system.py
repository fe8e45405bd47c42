"""The host side of the linux backend: running commands, root, tools and what this
kernel offers.

Every command is an argument list (``subprocess`` without a shell), so no spec value
is ever interpreted by a shell. Commands inside a namespace run as
``ip netns exec NS CMD...``, which execs ``CMD`` (its pid is the tool's own pid).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

__all__ = [
    "CommandError",
    "KernelInfo",
    "NAMESPACE_PREFIX",
    "REQUIRED_TOOLS",
    "cmd",
    "in_ns",
    "is_root",
    "kernel_info",
    "missing_tools",
]

#: Every namespace this backend creates starts with this prefix, and nothing else
#: does; ``ccbench linux cleanup`` touches only names with it.
NAMESPACE_PREFIX = "ccbl-"
#: Tools the backend runs, and the Debian package that provides each.
REQUIRED_TOOLS: dict[str, str] = {
    "ip": "iproute2",
    "tc": "iproute2",
    "ss": "iproute2",
    "iperf3": "iperf3",
    "ethtool": "ethtool",
    "ping": "iputils-ping",
    "setpriv": "util-linux",
}
#: The qdiscs probed for ``ccbench backends`` and spec checks.
PROBED_QDISCS: dict[str, tuple[str, ...]] = {
    "pfifo": ("pfifo", "limit", "10"),
    "bfifo": ("bfifo", "limit", "10000"),
    "tbf": ("tbf", "rate", "1mbit", "burst", "3000", "limit", "10000"),
    "htb": ("htb",),
    "netem": ("netem", "delay", "1ms"),
    "red": ("red", "limit", "400000", "avpkt", "1000", "probability", "0.02", "min", "30000", "max", "90000",
            "burst", "55", "bandwidth", "10mbit"),
    "codel": ("codel",),
    "fq_codel": ("fq_codel",),
    "pie": ("pie",),
    "fq_pie": ("fq_pie",),
    "fq": ("fq",),
    "cake": ("cake",),
}  # fmt: skip


class CommandError(RuntimeError):
    """A system command failed; the message names the command and its error output."""

    def __init__(self, argv: Sequence[str], returncode: int, stderr: str):
        self.argv = list(argv)
        self.returncode = returncode
        self.stderr = stderr
        super().__init__(f"command failed ({returncode}): {' '.join(argv)}: {stderr.strip() or '(no output)'}")

    def __reduce__(self) -> tuple[type[CommandError], tuple[list[str], int, str]]:
        # By constructor arguments, so the error crosses process boundaries.
        return (type(self), (self.argv, self.returncode, self.stderr))


def is_root() -> bool:
    """Whether this process may create network namespaces. Tests replace this seam to
    see what a non-root user gets."""
    return os.geteuid() == 0


def missing_tools() -> list[str]:
    """Tools of :data:`REQUIRED_TOOLS` not on ``PATH``, each with its package."""
    return [f"{tool} (Debian package {pkg})" for tool, pkg in REQUIRED_TOOLS.items() if shutil.which(tool) is None]


def cmd(argv: Sequence[str], *, check: bool = True, timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` (no shell) and return its completed process; raise
    :class:`CommandError` on a non-zero exit when ``check``."""
    proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, check=False)
    if check and proc.returncode != 0:
        raise CommandError(argv, proc.returncode, proc.stderr)
    return proc


def in_ns(ns: str, *argv: str) -> list[str]:
    """The argument list running ``argv`` inside namespace ``ns``."""
    return ["ip", "netns", "exec", ns, *argv]


def _first_line(argv: Sequence[str]) -> str:
    try:
        out = subprocess.run(list(argv), capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    text = (out.stdout or out.stderr).strip()
    return text.splitlines()[0] if text else ""


@dataclass(frozen=True)
class KernelInfo:
    """What this kernel and host offer the linux backend."""

    release: str
    ccas: tuple[str, ...]
    qdiscs: dict[str, bool]
    qdiscs_probed: bool
    tools: dict[str, str]

    def has_qdisc(self, kind: str) -> bool | None:
        """True/False when probed; None when it could not be probed (not root)."""
        return self.qdiscs.get(kind) if self.qdiscs_probed else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "kernel": self.release,
            "ccas": list(self.ccas),
            "qdiscs": dict(self.qdiscs) if self.qdiscs_probed else "unknown (probing needs root)",
            "tools": dict(self.tools),
        }


def available_ccas() -> tuple[str, ...]:
    """``tcp_available_congestion_control``, plus built-in-as-module CCAs that root can
    load (``tcp_<name>`` modules)."""
    try:
        names = Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    except OSError:
        names = []
    modules = Path("/lib/modules") / os.uname().release / "kernel" / "net" / "ipv4"
    if modules.is_dir():
        for m in sorted(modules.glob("tcp_*.ko*")):
            name = m.name.split(".")[0].removeprefix("tcp_")
            if name not in names and name not in ("diag",):
                names.append(name)
    return tuple(names)


def _probe_qdiscs() -> dict[str, bool]:
    """Try to attach each qdisc of :data:`PROBED_QDISCS` to ``lo`` in a throw-away
    namespace of ours. "Specified qdisc kind is unknown" means the kernel lacks it."""
    ns = f"{NAMESPACE_PREFIX}probe-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    cmd(["ip", "netns", "add", ns])
    found: dict[str, bool] = {}
    try:
        for kind, args in PROBED_QDISCS.items():
            proc = cmd(["tc", "-n", ns, "qdisc", "replace", "dev", "lo", "root", *args], check=False)
            found[kind] = proc.returncode == 0
    finally:
        cmd(["ip", "netns", "del", ns], check=False)
    return found


@cache
def kernel_info() -> KernelInfo:
    """Probe once per process (the qdisc probe needs root; without root it is skipped)."""
    qdiscs: dict[str, bool] = {}
    probed = False
    if is_root() and shutil.which("ip") and shutil.which("tc"):
        try:
            qdiscs = _probe_qdiscs()
            probed = True
        except (CommandError, OSError, subprocess.TimeoutExpired):
            probed = False
    tools = {}
    for tool, flag in (("iperf3", "--version"), ("ip", "-V"), ("tc", "-V"), ("ethtool", "--version"),
                       ("ping", "-V"), ("ss", "-V")):  # fmt: skip
        tools[tool] = _first_line([tool, flag]) if shutil.which(tool) else "missing"
    return KernelInfo(os.uname().release, available_ccas(), qdiscs, probed, tools)


_RATE_UNITS = {"": 1.0, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}


def parse_rate_bps(text: str) -> float:
    """``ss``/``tc`` rate text (``95.2Mbps``, ``1.2Gbit``, ``800bps``) in bit/s."""
    m = re.fullmatch(r"([0-9.]+)([kKmMgGtT]?)(?:bps|bit)", text.strip())
    if not m:
        raise ValueError(f"not a rate: {text!r}")
    return float(m.group(1)) * _RATE_UNITS[m.group(2).lower()]
