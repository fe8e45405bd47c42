"""The linux backend on this machine's kernel, as root: complete tables from real
flows, metrics from the same functions as the simulator, cleanup on every way out.

Skipped (with the reason) only when not root or a tool is missing; CI runs as root
with the packages ``make install`` installs, so there these tests run. The 20-second
scenarios of issue 12 are ``slow``; the default suite runs a few seconds of kernel
traffic.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from fakes import PARKING_LOT

from ccbench import api
from ccbench.backends.linux import netns, system
from ccbench.backends.linux.netns import STATE_DIR, list_our_namespaces
from ccbench.metrics import connection_setup, summary
from ccbench.results import check_columns

ROOT = Path(__file__).resolve().parent.parent

_missing = system.missing_tools()
pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or bool(_missing),
    reason="the linux backend needs root and " + (", ".join(_missing) if _missing else "its tools"),
)


#: What the current test's runs created: namespaces recorded as this process builds them
#: or as a spawned run reports them, and the pids of the runs it spawned. The check
#: after each test looks only at these: other processes on the machine (a kernel
#: measurement next door) create and remove namespaces with the same prefix meanwhile.
_created: set[str] = set()
_spawned: set[int] = set()


def _our_namespaces() -> set[str]:
    ours = set(_created)
    for path in STATE_DIR.glob("*.json") if STATE_DIR.is_dir() else []:
        try:
            state = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if state.get("pid") in _spawned | {os.getpid()}:
            ours.update(state.get("namespaces", []))
    probes = tuple(f"{system.NAMESPACE_PREFIX}probe-{pid}-" for pid in _spawned | {os.getpid()})
    return ours | {n for n in list_our_namespaces() if n.startswith(probes)}


@pytest.fixture(autouse=True)
def leaves_nothing_behind(monkeypatch):
    _created.clear()
    _spawned.clear()
    write_state = netns.Topology._write_state

    def recording(self):
        _created.update(self.namespaces())  # written before any namespace is added
        write_state(self)

    monkeypatch.setattr(netns.Topology, "_write_state", recording)
    yield
    left = _our_namespaces() & set(list_our_namespaces())
    assert not left, f"namespaces left behind: {sorted(left)}"


def dumbbell(ccas, buffer_pkts, duration="4s", warmup="1s", name="kernel"):
    return {
        "experiment": {"name": name, "duration": duration, "warmup": warmup, "backend": "linux"},
        "bottleneck": {"rate": "100Mbit", "buffer": f"{buffer_pkts}pkt", "qdisc": "pfifo"},
        "senders": [{"name": "left", "rtt": "60us"}],
        "flows": [{"name": f"{c}{i}", "cca": c} for i, c in enumerate(ccas)],
    }


def check_complete(res, n_flows, buffer_pkts, duration_s):
    """The tables are complete and consistent, and the metrics come out of the same
    functions the simulator's results use."""
    check_columns(res.tables)
    flows, ts, q = res.flows, res.flow_ts, res.queue_ts
    assert len(flows) == n_flows
    assert (flows["delivered_bytes"] > flows["delivered_bytes_at_warmup"]).all()
    assert (flows["segs_sent"] >= flows["segs_delivered"]).all()
    assert (flows["min_rtt_ns"] > 0).all() and (flows["base_rtt_ns"] > 0).all()
    interval = res.manifest["linux"]["plan"]["sample_interval_ns"]
    for fid, df in ts.groupby("flow_id"):
        t = df["time_ns"].to_numpy(dtype=np.int64)
        assert (np.diff(t) > 0).all(), "time went backwards in flow_ts"
        assert (np.diff(df["delivered_bytes"].to_numpy(dtype=np.int64)) >= 0).all()
        assert (np.diff(df["retrans_total"].to_numpy(dtype=np.int64)) >= 0).all()
        # one sample per interval, give or take a loaded machine (2 cores shared by many processes)
        assert len(df) >= 0.4 * (duration_s * 1e9 - int(flows.loc[fid, "start_ns"])) / interval
    bn = q[q["link"] == "bottleneck"]
    assert len(bn) >= 0.4 * duration_s * 1e9 / interval
    assert (bn["backlog_pkts"] <= buffer_pkts).all()
    for col in ("enqueued_pkts", "dequeued_pkts", "dropped_pkts"):
        assert (np.diff(bn[col].to_numpy(dtype=np.int64)) >= 0).all()
    # conservation at the bottleneck: accepted = sent on + still queued
    assert (bn["enqueued_pkts"] == bn["dequeued_pkts"] + bn["backlog_pkts"]).all()
    s = summary(res)
    # goodput-based: at most 1448/1500 = 0.965, give or take the sampling times' jitter
    # (one ss call of a few ms at each end of the window; more on a loaded machine). The
    # lower bound is loose: on two loaded cores, stalled senders let a 20-packet queue
    # run dry (0.84-0.92 at a load average of 12; docs/validation.md).
    assert 0.7 < s["utilization"] < 0.965 + 0.1 / duration_s
    assert 1 / n_flows <= s["jain"] <= 1
    # the summary counts retransmissions over the measurement window, from the counters
    # of the last ss sample at or before the warm-up
    for c in ("segs_sent", "segs_retrans", "segs_delivered"):
        assert (flows[f"{c}_at_warmup"] <= flows[c]).all(), c
    assert s["windows"]["retransmissions"] == "measurement window"
    assert s["retransmissions"] == int((flows["segs_retrans"] - flows["segs_retrans_at_warmup"]).sum())
    return s


def test_short_kernel_run_gives_complete_tables(tmp_path):
    res = api.run(dumbbell(["cubic", "bbr1"], 20, duration="5s"), tmp_path / "run")
    s = check_complete(res, 2, 20, 5)
    m = res.manifest
    assert m["backend"] == "linux" and m["status"] == "complete"
    lin = m["linux"]
    assert lin["iperf3"]["1"]["sender_tcp_congestion"] == "bbr"
    assert lin["iperf3"]["0"]["sender_tcp_congestion"] == "cubic"
    # offloads follow the spec's host (default: Linux's), segmentation in software
    sender, router, receiver = (lin["offloads"][k] for k in ("s0/eth0", "r/b0", "d/eth0"))
    assert sender["tcp-segmentation-offload"] == "off" and sender["generic-segmentation-offload"] == "off"
    assert sender["gso_max_segs"] == 65535 and receiver["gro_max_size"] == 65536
    assert router["generic-receive-offload"] == "on" and router["gro_max_size"] == 1500  # keeps order, no merging
    assert 10_000 < lin["idle_rtt_ns"]["left"]["avg_ns"] < 2_000_000
    # BBR's state is in the optional columns; CUBIC's rows have NaN there
    ts = res.flow_ts
    assert ts.loc[ts["flow_id"] == 1, "cc_bw_bps"].notna().all()
    assert ts.loc[ts["flow_id"] == 0, "cc_bw_bps"].isna().all()
    assert "cc_inflight_hi_pkts" not in ts.columns
    # a 20-packet queue overflows: drops are counted, and retransmissions follow them
    assert s["drops"] > 0 and s["retransmissions"] > 0
    assert api.load(tmp_path / "run").summary()["jain"] == s["jain"]
    # no netem here: no random losses, and the queue's drops are all its own
    q = res.queue_ts
    assert (q["random_drops"] == 0).all() and q["dropped_pkts"].max() > 0


def test_delay_line_rate_schedule_and_sized_flows(tmp_path):
    spec = dumbbell(["cubic"], 100, duration="4s", warmup="1s")
    spec["senders"][0]["rtt"] = "10ms"
    spec["bottleneck"]["rate_schedule"] = [{"at": "2s", "rate": "40Mbit"}]
    spec["flows"].append({"name": "short", "cca": "reno", "start": "500ms", "size": "1MB"})
    spec["flows"].append({"name": "limited", "cca": "cubic", "rate": "5Mbit"})  # iperf3 -b
    res = api.run(spec, tmp_path / "run")
    lin = res.manifest["linux"]
    # the delay line gives the spec's RTT
    assert lin["plan"]["delay_method"] == "delayline"
    path = lin["path_rtt_ns"]["left"]
    assert 9_500_000 <= path["min_ns"] <= 11_000_000, path
    flows = res.flows.set_index("group")
    assert 9_000_000 <= int(flows.loc["cubic0", "min_rtt_ns"]) <= 12_000_000
    # the sized flow completes, with its FCT, and is not counted past its end
    short = flows.loc["short"]
    assert bool(short["completed"]) and 0 < int(short["fct_ns"]) < 3_000_000_000
    assert int(short["delivered_bytes"]) == 1_000_000 and int(short["end_ns"]) == int(
        short["start_ns"] + short["fct_ns"]
    )
    # its handshake, measured by the sized-flow tool: about one RTT, inside the FCT
    assert 9_500_000 <= int(short["setup_ns"]) < min(50_000_000, int(short["fct_ns"]))
    assert int(short["syn_retrans"]) == 0 and not bool(short["setup_failed"])
    assert int(flows.loc["cubic0", "setup_ns"]) == -1  # iperf3 does not report its handshake
    assert connection_setup(res.flows)["established"] == 1
    ev = res.events
    assert (ev["kind"].astype(str) == "flow_complete").sum() == 1
    # the rate step is applied at 2 s, and the bulk flow's goodput follows it
    step = ev[ev["kind"].astype(str) == "rate_change"]
    assert len(step) == 1 and abs(int(step["time_ns"].iloc[0]) - 2_000_000_000) < 200_000_000
    ts = res.flow_ts[res.flow_ts["flow_id"] == 0]
    late = ts[ts["time_ns"] >= 2_500_000_000]
    t, d = late["time_ns"].to_numpy(dtype=float), late["delivered_bytes"].to_numpy(dtype=float)
    rate = (d[-1] - d[0]) * 8e9 / (t[-1] - t[0])
    assert 20e6 < rate < 36e6, rate
    # the rate-limited application holds its 5 Mbit/s while the bulk flow takes the rest
    limited = summary(res)["flows"].set_index("group").loc["limited", "goodput_bps"]
    assert 4.0e6 < limited < 5.3e6, limited


def test_parking_lot_routes_each_flow_through_its_links(tmp_path):
    """Two bottlenecks, three flows: the per-link packet counters carry exactly the
    flows whose route crosses each link (a flow on the wrong link would add or
    remove a whole flow's packets), and the RTTs include the links' delay lines."""
    res = api.run(PARKING_LOT, tmp_path / "run")
    check_columns(res.tables)
    links = res.links.set_index("link")
    assert sorted(links.index) == ["hop0", "hop0_rev", "hop1", "hop1_rev"]
    flows = res.flows.set_index("group")
    sent = flows["segs_sent"].astype(int)
    for link, crossing in (("hop0", ["long", "cross0"]), ("hop1", ["long", "cross1"])):
        # the counters and the ss samples are read a few ms apart: a few percent either way
        ratio = int(links.loc[link, "tx_pkts"]) / int(sent[crossing].sum())
        assert 0.93 < ratio < 1.07, (link, ratio)
        # the reverse direction carries their ACKs: ~52-byte packets
        rev = links.loc[f"{link}_rev"]
        assert 0 < int(rev["tx_bytes"]) < 0.1 * int(links.loc[link, "tx_bytes"])
        assert int(rev["tx_pkts"]) > 0.2 * int(sent[crossing].sum())
    assert int(links.loc["hop1", "rate_bps"]) == 10_000_000 and int(links.loc["hop1", "delay_ns"]) == 2_000_000
    q = res.queue_ts
    for link in links.index:
        df = q[q["link"].astype(str) == link]
        assert len(df) > 10 and (df["enqueued_pkts"] == df["dequeued_pkts"] + df["backlog_pkts"]).all()
        assert (df["backlog_pkts"] <= (1000 if link.endswith("_rev") else 50)).all()
    # each sender's RTT: its route's link delays (2 ms each way on hop1) plus its own delay line
    lin = res.manifest["linux"]
    assert 3_900_000 < lin["idle_rtt_ns"]["cross1"]["min_ns"] < 5_500_000  # through hop1's delay lines
    for name, rtt in (("long", 10e6), ("cross0", 5e6), ("cross1", 6e6)):
        assert 0.95 * rtt < lin["path_rtt_ns"][name]["min_ns"] < 1.15 * rtt, name
        # the flows' own minimum is at least the RTT; on a loaded machine the Python delay
        # lines can lag behind the data for a while, so only a loose upper bound
        assert 0.95 * rtt < int(flows.loc[name, "min_rtt_ns"]) < rtt + 20e6, name
    assert lin["plan"]["network"]["routes"][2] == {"nodes": ["r1", "r2"], "links": ["hop1"]}
    s = summary(res)
    assert res.manifest["derived"]["bottleneck"]["link"] == "hop1" and 0.7 < s["utilization"] < 1.0
    assert s["windows"]["drops"] == "link counters"
    # every plot of a run and the report work on a kernel run as on a simulator run
    from ccbench.plots import CATALOG, draw
    from ccbench.report import build_report

    run_dir = tmp_path / "run"
    for kind, entry in CATALOG.items():
        if entry.needs == "run" and kind != "burst-recovery":  # no burst in this spec
            draw(run_dir, kind)
    html = build_report(run_dir).read_text()
    assert "not drawn" not in html


def test_tc_takes_the_aqm_arguments_of_every_qdisc_the_backend_builds():
    """tc parses each AQM's arguments before asking the kernel, so on this kernel (which
    has none of them) a mistake in their syntax still shows: tc must fail only because
    the kernel lacks the qdisc, never on an argument."""
    from fakes import FAKE_KERNEL

    from ccbench.backends.linux.aqm import KERNEL_QDISCS
    from ccbench.backends.linux.netplan import link_queue
    from ccbench.spec import load_spec

    full = system.KernelInfo("x", FAKE_KERNEL.ccas, {k: True for k in system.PROBED_QDISCS}, True, {})
    ns = f"{system.NAMESPACE_PREFIX}probe-{os.getpid()}-aqm"
    system.cmd(["ip", "netns", "add", ns])
    try:
        system.cmd(["tc", "-n", ns, "qdisc", "add", "dev", "lo", "root", "handle", "1:", "tbf", "rate", "10mbit",
                    "burst", "3000", "limit", "100000"])  # fmt: skip
        for kind in KERNEL_QDISCS:
            spec = dumbbell(["cubic"], 100)
            spec["bottleneck"]["qdisc"] = {"kind": kind, "ecn": True} if kind not in ("pfifo", "bfifo") else kind
            if kind == "red":
                spec["bottleneck"]["qdisc"]["adaptive"] = True
            exp = load_spec(spec)
            problems: list[str] = []
            q = link_queue(exp, exp.links()[0], False, 1500, full, problems)
            assert not problems
            proc = system.cmd(["tc", "-n", ns, "qdisc", "add", "dev", "lo", "parent", "1:1", "handle", "10:",
                               *q.child()], check=False)  # fmt: skip
            assert proc.returncode == 0 or "kind is unknown" in proc.stderr, (q.child(), proc.stderr)
            system.cmd(["tc", "-n", ns, "qdisc", "del", "dev", "lo", "parent", "1:1", "handle", "10:"], check=False)
    finally:
        system.cmd(["ip", "netns", "del", ns], check=False)


def _spawn(spec_path, out):
    """``ccbench run`` in a process of its own; its stderr goes to ``stderr.txt`` beside the spec."""
    with open(spec_path.parent / "stderr.txt", "wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "ccbench", "run", str(spec_path), "-o", str(out)],
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,
        )
    _spawned.add(proc.pid)
    return proc


def _namespaces_of(pid, timeout=30.0):
    """The namespaces the run in process ``pid`` has created, once its flows run."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for path in STATE_DIR.glob("*.json") if STATE_DIR.is_dir() else []:
            try:
                state = json.loads(path.read_text())
            except (OSError, json.JSONDecodeError):
                continue
            if state.get("pid") == pid and set(state["namespaces"]) <= set(list_our_namespaces()):
                _created.update(state["namespaces"])
                # wait for the iperf3 clients: the run is in full swing
                sender = next(n for n in state["namespaces"] if n.endswith("-s0"))
                pids = system.cmd(["ip", "netns", "pids", sender], check=False).stdout.split()
                if pids:
                    return state["namespaces"], path
        time.sleep(0.2)
    raise AssertionError("the run did not start its flows in time")


def _write_spec(tmp_path, duration="30s"):
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(dumbbell(["cubic"], 50, duration=duration)))
    return path


def test_sigkilled_run_is_removed_by_linux_cleanup(tmp_path):
    proc = _spawn(_write_spec(tmp_path), tmp_path / "out")
    try:
        names, state = _namespaces_of(proc.pid)
    finally:
        proc.kill()
        proc.wait(timeout=10)
    assert set(names) <= set(list_our_namespaces())  # SIGKILL: nothing could clean up
    # the tools die with their parent (PR_SET_PDEATHSIG), so nothing keeps sending
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        alive = [p for n in names for p in system.cmd(["ip", "netns", "pids", n], check=False).stdout.split()]
        if not alive:
            break
        time.sleep(0.2)
    assert not alive, "processes outlived the killed run"
    r = subprocess.run([sys.executable, "-m", "ccbench", "linux", "cleanup"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert not set(names) & set(list_our_namespaces())
    assert not state.exists()
    assert not (tmp_path / "out").exists()


def test_cleanup_leaves_a_live_run_alone(tmp_path):
    proc = _spawn(_write_spec(tmp_path, duration="60s"), tmp_path / "out")
    try:
        names, state = _namespaces_of(proc.pid)
        r = subprocess.run([sys.executable, "-m", "ccbench", "linux", "cleanup"], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert proc.poll() is None, "the run ended before cleanup could be tried on it"
        assert set(names) <= set(list_our_namespaces()) and state.exists()
        assert "kept" in r.stdout
        proc.terminate()
        assert proc.wait(timeout=30) == 143  # 128 + SIGTERM
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert not set(names) & set(list_our_namespaces())


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupted_run_cleans_up_after_itself(tmp_path, sig):
    proc = _spawn(_write_spec(tmp_path), tmp_path / "out")
    try:
        names, state = _namespaces_of(proc.pid)
        proc.send_signal(sig)
        assert proc.wait(timeout=30) == 128 + sig  # the shell's status for a command ended by sig
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = (tmp_path / "stderr.txt").read_text()
    assert "interrupted" in err and "Traceback" not in err
    assert not set(names) & set(list_our_namespaces())
    assert not state.exists()
    assert not (tmp_path / "out").exists()


SCENARIOS = [(c, b) for b in (20, 500) for c in (["cubic", "cubic"], ["bbr1", "cubic"], ["reno", "cubic"])]


@pytest.mark.slow
@pytest.mark.parametrize("ccas,buffer_pkts", SCENARIOS, ids=[f"{'-'.join(c)}-{b}p" for c, b in SCENARIOS])
def test_issue_scenarios_20s(tmp_path, ccas, buffer_pkts):
    res = api.run(dumbbell(ccas, buffer_pkts, duration="20s", warmup="5s"), tmp_path / "run")
    s = check_complete(res, 2, buffer_pkts, 20)
    assert res.manifest["linux"]["plan"]["bottleneck"]["limit"] == buffer_pkts
    if buffer_pkts == 500:
        assert s["queue"]["mean_pkts"] > 50  # loss-based flows fill a deep buffer
