"""One kernel run, start to finish: build the namespaces, measure the idle RTT, start
the delay lines and iperf3 servers, launch each flow at its start time, apply rate
changes, sample, then stop everything and remove every namespace — on success, on an
error, on Ctrl-C and on SIGTERM (``finally``); a SIGKILL leaves what
``ccbench linux cleanup`` removes (the tools themselves die with us through
``PR_SET_PDEATHSIG``).
"""

from __future__ import annotations

import json
import math
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ...units import format_duration
from .. import BackendError, BackendRun, ProgressFn
from . import delayline, sizedflow
from .netns import Topology, popen_in_ns
from .network import NetworkTopology
from .plan import LinuxPlan
from .sampling import Sampler
from .system import KernelInfo, cmd, in_ns
from .tables import FlowOutcome, build_tables

__all__ = ["Terminated", "run_plan"]

#: Seconds iperf3 keeps sending past the end of the run, so that the sample at the end
#: of the run still sees every flow running.
END_SLACK_S = 0.3
#: How long to wait for the iperf3 servers to listen.
SERVER_READY_TIMEOUT_S = 10.0


class Terminated(BaseException):
    """SIGTERM arrived during a kernel run (a BaseException, like KeyboardInterrupt, so
    that only ``finally`` blocks run on the way out)."""


@contextmanager
def _sigterm_raises() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        raise Terminated(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in procs:
        if p.poll() is None:
            p.terminate()
    deadline = time.monotonic() + 2.0
    for p in procs:
        try:
            p.wait(timeout=max(0.05, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(timeout=5)
        if p.stdout is not None:
            p.stdout.close()


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text() or "{}")
    except (OSError, json.JSONDecodeError) as e:
        return {"error": f"unreadable iperf3 output: {e}"}
    return data if isinstance(data, dict) else {}


def _iperf_summary(client: dict[str, Any], server: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if "error" in client:
        out["client_error"] = client["error"]
    if "error" in server:
        out["server_error"] = server["error"]
    try:
        snd = client["end"]["streams"][0]["sender"]
        out.update(sent_bytes=snd["bytes"], retransmits=snd.get("retransmits"), seconds=snd["seconds"],
                   max_rtt_us=snd.get("max_rtt"), min_rtt_us=snd.get("min_rtt"), mean_rtt_us=snd.get("mean_rtt"))  # fmt: skip
    except (KeyError, IndexError, TypeError):
        pass
    try:
        out["received_bytes"] = server["end"]["sum_received"]["bytes"]
    except (KeyError, TypeError):
        pass
    # a sized flow's own tool
    for key in ("sent_bytes", "fct_ns", "received_bytes", "setup_ns", "syn_retrans", "setup_failed"):
        if key in client or key in server:
            out[key] = client.get(key, server.get(key))
    try:
        out["sender_tcp_congestion"] = client["end"]["sender_tcp_congestion"]
    except (KeyError, TypeError):
        pass
    return out


def _wait_listening(ports: dict[str, set[int]]) -> None:
    """Wait until every receiver namespace listens on its ports."""
    deadline = time.monotonic() + SERVER_READY_TIMEOUT_S
    waiting = dict(ports)
    while time.monotonic() < deadline:
        for ns, want in list(waiting.items()):
            out = cmd(in_ns(ns, "ss", "-ltnH"), check=False).stdout
            listening = {int(w.rsplit(":", 1)[1]) for line in out.splitlines() for w in line.split()[3:4] if ":" in w}
            if want <= listening:
                del waiting[ns]
        if not waiting:
            return
        time.sleep(0.05)
    raise RuntimeError(f"iperf3 servers did not start listening within {SERVER_READY_TIMEOUT_S:g} s")


def _start_delay_line(a: dict[str, Any], what: str) -> subprocess.Popen[bytes]:
    """A delay line from :meth:`Topology.delay_line_args` or :meth:`Topology.link_delay_lines`."""
    argv = [sys.executable, delayline.__file__, a["src_dev"], a["dst_dev"], str(a["delay_ns"]), a["dst_mac"],
            a["src_mac"]]  # fmt: skip
    line = popen_in_ns(a["ns"], argv, stdout=subprocess.PIPE)
    try:
        _wait_ready(line, what)
    except BaseException:
        _stop([line])
        raise
    return line


def _wait_ready(proc: subprocess.Popen[bytes], what: str, timeout_s: float = 30.0) -> None:
    """Wait for the ``ready`` line a helper prints once it is set up."""
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout_s)
    line = proc.stdout.readline() if ready else b""
    if line.strip() != b"ready":
        raise RuntimeError(f"{what} did not start (exit status {proc.poll()})")


def _server_argv(f: Any) -> list[str]:
    if f.size_bytes is not None:
        return [sys.executable, sizedflow.__file__, "server", str(f.server_port)]
    return ["iperf3", "-s", "-1", "-p", str(f.server_port), "-J"]


def _client_argv(plan: LinuxPlan, f: Any, server: str) -> list[str]:
    """iperf3 for bulk flows; :mod:`.sizedflow` for a flow with a size (it waits for
    the receiver to have every byte, which ``iperf3 -n`` does not)."""
    mss_option = f.mss + 12 if f.mss != plan.mtu - 52 else 0  # TCP_MAXSEG counts the timestamp option
    if f.size_bytes is not None:
        return [sys.executable, sizedflow.__file__, "client", server, str(f.server_port), str(f.client_port),
                f.kernel_cca, str(f.size_bytes), str(mss_option)]  # fmt: skip
    argv = ["iperf3", "-c", server, "-p", str(f.server_port), "--cport", str(f.client_port),
            "-C", f.kernel_cca, "-J", "--connect-timeout", "5000"]  # fmt: skip
    if f.stop_ns is not None:
        argv += ["-t", str(f.iperf_seconds)]
    else:
        argv += ["-t", str(math.ceil((plan.duration_ns - f.start_ns) / 1e9 + END_SLACK_S))]
    if mss_option:
        argv += ["-M", str(mss_option)]
    if f.rwnd_bytes is not None:
        argv += ["-w", str(f.rwnd_bytes)]
    if f.rate_bps is not None:
        argv += ["-b", str(f.rate_bps)]  # iperf3's own pacing timer (1 ms), as the simulator's model
    return argv


def run_plan(plan: LinuxPlan, kernel: KernelInfo, *, progress: ProgressFn | None = None) -> BackendRun:
    topo = NetworkTopology(plan) if plan.network is not None else Topology(plan)
    procs: list[subprocess.Popen[bytes]] = []
    workdir = Path(tempfile.mkdtemp(prefix="ccbench-linux-"))
    wall0 = time.perf_counter()
    load_before = os.getloadavg()
    sampler: Sampler | None = None
    try:
        with _sigterm_raises():
            topo.build()
            # the links' own delays first: they are part of every idle path
            procs.extend(_start_delay_line(a, f"the delay line of link {a['what']!r}") for a in topo.link_delay_lines())
            # The idle path's RTT, through a zero-delay line where there will be one (its
            # own processing is part of the path), then the line with the delay added.
            lines = {s.index: _start_delay_line(topo.delay_line_args(s, 0), f"the delay line of sender {s.name!r}")
                     for s in topo.delayed_senders() if plan.delay_method == "delayline"}  # fmt: skip
            procs.extend(lines.values())
            idle = {s.index: topo.ping(s.index) for s in plan.senders}
            delays: dict[int, int] = {}
            for s in topo.delayed_senders():
                delays[s.index] = max(0, s.rtt_ns - int(idle[s.index]["min_ns"]))
                if plan.delay_method == "delayline":
                    _stop([lines[s.index]])
                    args = topo.delay_line_args(s, delays[s.index])
                    procs.append(_start_delay_line(args, f"the delay line of sender {s.name!r}"))
                else:
                    topo.netem_delay(s, delays[s.index])
            path_rtt = {s.index: topo.ping(s.index) for s in topo.delayed_senders()}
            too_much = [
                f"senders[{s.index}].jitter = {format_duration(s.jitter_ns)!r} exceeds the delay netem adds on its ACK "
                f"path ({format_duration(delays.get(s.index, 0))}: its rtt less the idle path's measured RTT)"
                for s in plan.senders if s.jitter_ns > delays.get(s.index, 0)
            ]  # fmt: skip
            if too_much:
                raise BackendError("linux", too_much)
            topo.netem_loss(delays)
            base_rtt = {i: int((path_rtt.get(i) or idle[i])["min_ns"]) for i in idle}
            listening: dict[str, set[int]] = {}
            for f in plan.flows:
                with open(workdir / f"server-{f.flow_id}.json", "wb") as out:  # the server has its own copy
                    procs.append(popen_in_ns(topo.receiver_ns(f.sender), _server_argv(f), stdout=out))
                listening.setdefault(topo.receiver_ns(f.sender), set()).add(f.server_port)
            _wait_listening(listening)

            t0 = time.monotonic_ns()

            def clock() -> int:
                return time.monotonic_ns() - t0

            shaped = topo.shaped()
            probes = [probe for _, probe in shaped]
            sampler = Sampler(clock, plan.sample_interval_ns, [topo.sender_ns(s.index) for s in plan.senders], probes)
            sampler.start()
            pending = sorted(plan.flows, key=lambda f: (f.start_ns, f.flow_id))
            # every shaped queue's rate schedule, in time order
            changes = sorted(((at, n, new) for n, (q, _) in enumerate(shaped) for at, new in q.rate_schedule),
                             key=lambda c: (c[0], c[1]))  # fmt: skip
            applied: list[tuple[int, str, int, int]] = []
            rates = {q.link: q.rate_bps for q, _ in shaped}
            clients: dict[int, subprocess.Popen[bytes]] = {}
            outcomes: dict[int, FlowOutcome] = {}
            end_ns = plan.duration_ns + plan.sample_interval_ns  # one sample past the end
            while True:
                now = clock()
                while pending and pending[0].start_ns <= now:
                    f = pending.pop(0)
                    argv = _client_argv(plan, f, topo.receiver_addr(f.sender))
                    with open(workdir / f"client-{f.flow_id}.json", "wb") as out:
                        clients[f.flow_id] = popen_in_ns(topo.sender_ns(f.sender), argv, stdout=out)
                    procs.append(clients[f.flow_id])
                    outcomes[f.flow_id] = FlowOutcome(launched_ns=clock(), base_rtt_ns=base_rtt[f.sender])
                while changes and changes[0][0] <= now:
                    _, n, new = changes.pop(0)
                    q, probe = shaped[n]
                    topo.change_rate(q, probe, new)
                    applied.append((clock(), q.link, new, rates[q.link]))
                    rates[q.link] = new
                for fid, p in clients.items():
                    if p.poll() is not None and outcomes[fid].exited_ns is None:
                        outcomes[fid].exited_ns = clock()
                if progress is not None:
                    progress(min(now, plan.duration_ns) / 1e9, plan.duration_ns / 1e9)
                if now >= end_ns and not pending:
                    break
                upcoming = [end_ns, now + 100_000_000]
                upcoming += [pending[0].start_ns] if pending else []
                upcoming += [changes[0][0]] if changes else []
                time.sleep(max(0.0, (min(upcoming) - clock()) / 1e9))
            sampler.stop()
            # the clients end by themselves within END_SLACK_S + a second; then their JSON is complete
            deadline = time.monotonic() + END_SLACK_S + 5.0
            for fid, p in clients.items():
                try:
                    p.wait(timeout=max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    p.terminate()
                if outcomes[fid].exited_ns is None:
                    outcomes[fid].exited_ns = clock()
            _stop(procs)
            for fid, o in outcomes.items():
                o.client = _read_json(workdir / f"client-{fid}.json")
                o.server = _read_json(workdir / f"server-{fid}.json")
                if isinstance(o.client.get("connect_monotonic_ns"), int):
                    # a sized flow starts at its connect() (the first SYN), not when its tool was launched
                    o.launched_ns = o.client["connect_monotonic_ns"] - t0
            by_flow: dict[int, list[Any]] = {f.flow_id: [] for f in plan.flows}
            port_to_flow = {(topo.sender_ns(f.sender), f.client_port): f.flow_id for f in plan.flows}
            for t, ns, sample in sampler.sockets:
                owner = port_to_flow.get((ns, sample.local_port))
                if owner is not None:
                    by_flow[owner].append((t, sample))
            tables = build_tables(plan, by_flow, sampler.queues, outcomes, applied, [q for q, _ in shaped])
            qdiscs = topo.qdisc_report()
            manifest = {
                "linux": {
                    "run_id": topo.run_id,
                    "namespaces": topo.namespaces(),
                    "kernel": kernel.release,
                    "kernel_ccas": list(kernel.ccas),
                    "plan": plan.as_dict(),
                    "offloads": topo.offload_report,
                    "qdiscs_at_end": qdiscs,
                    "idle_rtt_ns": {plan.senders[i].name: v for i, v in idle.items()},
                    "added_delay_ns": {plan.senders[i].name: v for i, v in delays.items()},
                    "path_rtt_ns": {plan.senders[i].name: v for i, v in path_rtt.items()},
                    "iperf3": {str(fid): _iperf_summary(o.client, o.server) for fid, o in outcomes.items()},
                    "sampler": sampler.summary(),
                    "loadavg_before": list(load_before),
                    "loadavg_after": list(os.getloadavg()),
                    "cpu_count": os.cpu_count(),
                }
            }
            return BackendRun(tables=tables, manifest=manifest, wall_time_s=time.perf_counter() - wall0)
    finally:
        if sampler is not None and sampler.is_alive():
            sampler.stop()
        _stop(procs)
        topo.teardown()
        shutil.rmtree(workdir, ignore_errors=True)
