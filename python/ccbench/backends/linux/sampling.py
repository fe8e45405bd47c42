"""Sampling the kernel while a run is under way: ``ss -tin`` per sender namespace (one
record per flow's data socket) and ``tc -s -j qdisc`` per shaped link, every
``sample_interval``, on a background thread. The parsers are pure functions.
"""

from __future__ import annotations

import dataclasses
import json
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .system import cmd, parse_rate_bps

__all__ = ["QueueSample", "Sampler", "SocketSample", "parse_ss", "parse_tc"]

_MS = 1_000_000  # ns per ms


@dataclass(frozen=True)
class SocketSample:
    """One data socket as ``ss -tin`` shows it. Times in ns, windows in packets."""

    local_port: int
    bytes_acked: int
    cwnd: int
    ssthresh: int  # -1 = not shown (infinite)
    srtt_ns: int
    min_rtt_ns: int  # -1 = none
    pacing_rate_bps: float
    delivery_rate_bps: float
    data_segs_out: int
    retrans_total: int
    delivered: int
    unacked: int
    sacked: int
    lost: int
    retrans_now: int
    cc: str
    bbr: dict[str, float] = field(default_factory=dict)


_KV = re.compile(r"([a-z_]+):(\S+)")


def parse_ss(text: str) -> list[SocketSample]:
    """Parse ``ss -tinH`` output: a state line (``ESTAB 0 0 local:port peer:port``)
    followed by an indented info line per socket; only established sockets are kept."""
    out: list[SocketSample] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        head = lines[i].split()
        info = lines[i + 1] if i + 1 < len(lines) and lines[i + 1][:1].isspace() else ""
        i += 2 if info else 1
        if len(head) < 5 or head[0] != "ESTAB" or not info:
            continue
        try:
            local_port = int(head[3].rsplit(":", 1)[1])
        except (IndexError, ValueError):
            continue
        words = info.split()
        kv: dict[str, str] = {}
        bbr: dict[str, float] = {}
        for w in words:
            if w.startswith("bbr:("):
                for part in w[5:].rstrip(")").split(","):
                    k, _, v = part.partition(":")
                    bbr[k] = parse_rate_bps(v) if k == "bw" else float(v)
                continue
            m = _KV.fullmatch(w)
            if m:
                kv[m.group(1)] = m.group(2)
        rates: dict[str, float] = {}
        for name in ("pacing_rate", "delivery_rate", "send"):
            if name in words:
                j = words.index(name)
                if j + 1 < len(words):
                    try:
                        rates[name] = parse_rate_bps(words[j + 1])
                    except ValueError:
                        pass
        retrans_now, retrans_total = 0, 0
        if "retrans" in kv:
            a, _, b = kv["retrans"].partition("/")
            retrans_now, retrans_total = int(a), int(b or 0)
        srtt_ms = float(kv.get("rtt", "0/0").split("/")[0])
        out.append(
            SocketSample(
                local_port=local_port,
                bytes_acked=int(kv.get("bytes_acked", 0)),
                cwnd=int(kv.get("cwnd", 0)),
                ssthresh=int(kv["ssthresh"]) if "ssthresh" in kv else -1,
                srtt_ns=round(srtt_ms * _MS),
                min_rtt_ns=round(float(kv["minrtt"]) * _MS) if "minrtt" in kv else -1,
                pacing_rate_bps=rates.get("pacing_rate", 0.0),
                delivery_rate_bps=rates.get("delivery_rate", 0.0),
                data_segs_out=int(kv.get("data_segs_out", 0)),
                retrans_total=retrans_total,
                delivered=int(kv.get("delivered", 0)),
                unacked=int(kv.get("unacked", 0)),
                sacked=int(kv.get("sacked", 0)),
                lost=int(kv.get("lost", 0)),
                retrans_now=retrans_now,
                cc=words[0] if words and ":" not in words[0] else "",
                bbr=bbr,
            )
        )
    return out


@dataclass(frozen=True)
class QueueSample:
    """One qdisc's counters from ``tc -s -j qdisc show``."""

    backlog_bytes: int
    backlog_pkts: int
    sent_bytes: int
    sent_pkts: int
    dropped_pkts: int
    marked_pkts: int
    #: Random losses (netem's drops less the queue's, with netem ahead of the queue).
    random_dropped_pkts: int = 0


def parse_tc(text: str, handle: str, dev: str | None = None) -> QueueSample | None:
    """The qdisc with ``handle`` (e.g. ``"10:"``; on device ``dev`` when given) in
    ``tc -s -j qdisc show`` output."""
    try:
        qdiscs = json.loads(text)
    except json.JSONDecodeError:
        return None
    for q in qdiscs if isinstance(qdiscs, list) else []:
        if q.get("handle") == handle and (dev is None or q.get("dev") == dev):
            return QueueSample(
                backlog_bytes=int(q.get("backlog", 0)),
                backlog_pkts=int(q.get("qlen", 0)),
                sent_bytes=int(q.get("bytes", 0)),
                sent_pkts=int(q.get("packets", 0)),
                dropped_pkts=int(q.get("drops", 0)),
                # CoDel, FQ-CoDel and PIE report marks as ecn_mark, RED as marked (in xstats)
                marked_pkts=_marks(q),
            )
    return None


def _marks(q: dict[str, Any]) -> int:
    for where in (q, q.get("xstats") or {}):
        for key in ("ecn_mark", "marked"):
            if isinstance(where.get(key), int):
                return int(where[key])
    return 0


@dataclass(frozen=True)
class QueueProbe:
    """A qdisc to sample: the result-table link name, its namespace, device and handle;
    ``drops_handle``: the qdisc whose drops count (netem ahead of the queue, which counts
    its random losses and every drop behind it), None = the queue's own."""

    link: str
    ns: str
    dev: str
    handle: str
    drops_handle: str | None = None


class Sampler(threading.Thread):
    """Samples every ``interval_ns`` from ``start()`` until :meth:`stop`.

    ``clock()`` gives ns since the run's time origin. ``sockets`` collects
    ``(t_ns, sender_ns, SocketSample)``; ``queues`` collects ``(t_ns, link,
    QueueSample)``. A sample tick that overruns (a slow ``ss`` on a loaded machine) is
    recorded late rather than skipped, and the next tick is scheduled from the
    interval grid so samples do not drift.
    """

    def __init__(
        self,
        clock: Callable[[], int],
        interval_ns: int,
        sender_namespaces: Sequence[str],
        queues: Sequence[QueueProbe],
    ):
        super().__init__(name="ccbench-linux-sampler", daemon=True)
        self.clock = clock
        self.interval_ns = interval_ns
        self.sender_namespaces = list(sender_namespaces)
        self.queue_probes = list(queues)
        self.sockets: list[tuple[int, str, SocketSample]] = []
        self.queues: list[tuple[int, str, QueueSample]] = []
        self.errors: list[str] = []
        self.call_ns: list[int] = []
        self._stop_event = threading.Event()

    def _timed(self, argv: list[str]) -> tuple[int, Any]:
        """Run ``argv``; its time is the midpoint of the call (the tool reads the
        kernel somewhere between its start and its exit; the call takes a few ms)."""
        t0 = self.clock()
        proc = cmd(argv, check=False)
        t1 = self.clock()
        self.call_ns.append(t1 - t0)
        return (t0 + t1) // 2, proc

    def sample_once(self) -> None:
        for ns in self.sender_namespaces:
            t, proc = self._timed(["ss", "-N", ns, "-tinH"])
            if proc.returncode != 0:
                self.errors.append(f"ss in {ns}: {proc.stderr.strip()}")
                continue
            self.sockets.extend((t, ns, s) for s in parse_ss(proc.stdout))
        by_ns: dict[str, list[QueueProbe]] = {}
        for q in self.queue_probes:
            by_ns.setdefault(q.ns, []).append(q)
        for ns, probes in by_ns.items():  # one call per namespace reads all its queues
            t, proc = self._timed(["tc", "-n", ns, "-s", "-j", "qdisc", "show"])
            for q in probes:
                sample = parse_tc(proc.stdout, q.handle, q.dev) if proc.returncode == 0 else None
                if sample is not None and q.drops_handle is not None:
                    ahead = parse_tc(proc.stdout, q.drops_handle, q.dev)
                    sample = (
                        None
                        if ahead is None
                        else dataclasses.replace(
                            sample,
                            dropped_pkts=ahead.dropped_pkts,
                            random_dropped_pkts=max(0, ahead.dropped_pkts - sample.dropped_pkts),
                        )
                    )
                if sample is None:
                    self.errors.append(f"tc in {q.ns} dev {q.dev}: {proc.stderr.strip() or 'no qdisc ' + q.handle}")
                    continue
                self.queues.append((t, q.link, sample))

    def run(self) -> None:
        tick = 0
        while not self._stop_event.is_set():
            self.sample_once()
            tick += 1
            wait_ns = tick * self.interval_ns - self.clock()
            if wait_ns > 0 and self._stop_event.wait(wait_ns / 1e9):
                break

    def stop(self) -> None:
        self._stop_event.set()
        self.join(timeout=10)

    def summary(self) -> dict[str, Any]:
        calls = sorted(self.call_ns) or [0]
        return {
            "socket_samples": len(self.sockets),
            "queue_samples": len(self.queues),
            "call_ms_median": calls[len(calls) // 2] / 1e6,
            "call_ms_max": calls[-1] / 1e6,
            "errors": self.errors[:20],
        }
