"""Long runs a person can live with (issue 19): Ctrl-C stops a run within a fraction
of a second with status 130 and writes nothing (or, with --save-partial, a run marked
interrupted); progress shows on a terminal, as plain lines in a log, not with --quiet.

These start real processes on the real engine."""

import os
import pty
import select
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import ccbench

pytestmark = pytest.mark.engine

ROOT = Path(__file__).resolve().parent.parent

# Many simulated seconds at 1 Gbit/s: far longer than any test waits for it. No
# sojourn samples: at 1 Gbit/s every 10th packet fills the first streamed chunk about a
# second into the run, just when the tests send their signal, and the writer thread's
# first conversion imports pandas (about a second of CPU, once per run), which the
# process then waits for; the tests measure how fast the engine answers the signal.
LONG = textwrap.dedent(
    """
    [experiment]
    name = "long"
    duration = "600s"
    sojourn_sample_every = 0

    [bottleneck]
    rate = "1Gbit"
    delay = "5ms"

    [[senders]]
    name = "a"
    rtt = "20ms"

    [[flows]]
    cca = "cubic"
    count = 4
    """
)


def write_spec(tmp_path: Path, text: str = LONG) -> Path:
    p = tmp_path / "spec.toml"
    p.write_text(text)
    return p


def read_until(fd: int, needle: bytes, timeout: float) -> bytes:
    """Read from ``fd`` until ``needle`` appears (or fail after ``timeout``)."""
    out = b""
    deadline = time.monotonic() + timeout
    while needle not in out:
        left = deadline - time.monotonic()
        assert left > 0, f"{needle!r} not seen in {timeout} s; got {out[-2000:]!r}"
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # pty closed
                break
            if not chunk:
                break
            out += chunk
    return out


#: The issue asks for "within 1 s". Wall time from SIGINT to exit depends on how many
#: other processes share the cores (it exceeded 1.5 s at load 14 on 2 cores), so the
#: tests bound the CPU time the process spends after the signal instead: the engine
#: looks at signals every 0.1 s of wall time (so at most ~0.1 s of CPU), then Python
#: drops the tables and exits. Measured 0.05-0.15 s; a run that ignored Ctrl-C would
#: burn its whole 600 simulated seconds (minutes of CPU).
MAX_STOP_CPU_S = 1.0
#: Only a guard against a hang, not a speed requirement.
HANG_S = 60


def _cpu_s(pid: int) -> float:
    """CPU seconds (user + system, all threads) process ``pid`` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def interrupt_and_measure(proc: subprocess.Popen) -> float:
    """Send SIGINT and reap the process; return the CPU seconds it used after the
    signal (from its own rusage, so independent of the machine's load)."""
    before = _cpu_s(proc.pid)
    proc.send_signal(signal.SIGINT)
    deadline = time.monotonic() + HANG_S
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return usage.ru_utime + usage.ru_stime - before
        assert time.monotonic() < deadline, f"the process did not exit within {HANG_S} s of SIGINT"
        time.sleep(0.02)


def cli_argv(*args: str) -> list[str]:
    return [sys.executable, "-c", "from ccbench.cli import main; main()", *args]


def test_ctrl_c_on_the_cli_exits_130_fast_and_writes_nothing(tmp_path):
    spec = write_spec(tmp_path)
    out = tmp_path / "o"
    with subprocess.Popen(
        cli_argv("run", str(spec), "-o", str(out)), stderr=subprocess.PIPE, stdout=subprocess.PIPE
    ) as proc:
        try:
            # Not a terminal: plain progress lines, the first after about a second.
            seen = read_until(proc.stderr.fileno(), b"progress long:", timeout=60)
            assert b"s simulated" in seen and b"x real time" in seen and b"events/s" in seen and b"ETA" in seen
            cpu_after_sigint = interrupt_and_measure(proc)
        finally:
            proc.kill()
        err = proc.stderr.read().decode()
    assert proc.returncode == 130, err
    assert cpu_after_sigint < MAX_STOP_CPU_S, cpu_after_sigint
    assert "interrupted; nothing was written" in err and "Traceback" not in err
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["spec.toml"]  # no temp sibling either


def test_ctrl_c_with_save_partial_keeps_a_run_marked_interrupted(tmp_path):
    spec = write_spec(tmp_path)
    out = tmp_path / "o"
    with subprocess.Popen(
        cli_argv("run", str(spec), "-o", str(out), "--save-partial"), stderr=subprocess.PIPE, stdout=subprocess.PIPE
    ) as proc:
        try:
            read_until(proc.stderr.fileno(), b"progress long:", timeout=60)
            interrupt_and_measure(proc)
        finally:
            proc.kill()
        err = proc.stderr.read().decode()
    assert proc.returncode == 130, err
    assert "saved in" in err and str(out) in err
    with pytest.raises(ccbench.ResultsError, match="interrupted"):
        ccbench.load(out)
    partial = ccbench.load(out, allow_partial=True)
    assert partial.manifest["status"] == "interrupted"
    reached = partial.stats["sim_time_ns"]
    assert 0 < reached < 600 * 10**9
    s = partial.stats
    assert s["data_pkts_sent"] == s["data_pkts_delivered"] + s["data_pkts_dropped"] + s["data_pkts_in_network"]
    assert int(partial.flows["end_ns"].max()) <= reached
    assert int(partial.flow_ts["time_ns"].max()) <= reached


def test_ctrl_c_from_python_raises_keyboard_interrupt(tmp_path):
    spec = write_spec(tmp_path)
    out = tmp_path / "o"
    code = textwrap.dedent(
        f"""
        import sys, ccbench
        started = []
        def progress(done_s, total_s, events=None):
            if not started:
                started.append(1)
                print("started", flush=True)
        try:
            ccbench.run({str(spec)!r}, {str(out)!r}, progress=progress)
        except KeyboardInterrupt as e:
            print("KeyboardInterrupt", type(e).__name__, flush=True)
            sys.exit(7)
        """
    )
    with subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        try:
            read_until(proc.stdout.fileno(), b"started", timeout=60)
            cpu_after_sigint = interrupt_and_measure(proc)
        finally:
            proc.kill()
        rest = proc.stdout.read().decode()
        assert proc.returncode == 7, proc.stderr.read().decode()
    assert "KeyboardInterrupt KeyboardInterrupt" in rest
    assert cpu_after_sigint < MAX_STOP_CPU_S, cpu_after_sigint
    assert not out.exists()


# Long enough that the bar (shown after 1 s of wall time) appears even on an idle,
# fast machine: about 4 s of engine time here when idle.
SHORT = LONG.replace('duration = "600s"', 'duration = "60s"').replace("count = 4", "count = 2")


def test_progress_bar_on_a_terminal_and_nothing_with_quiet(tmp_path):
    spec = write_spec(tmp_path, SHORT)
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        cli_argv("run", str(spec), "-o", str(tmp_path / "tty")), stdin=slave, stdout=slave, stderr=slave, close_fds=True
    )
    os.close(slave)
    try:
        seen = read_until(master, b"simulated", timeout=120)
        seen += read_until(master, b"total goodput", timeout=120)
    finally:
        proc.kill()
        proc.wait()
        os.close(master)
    text = seen.decode(errors="replace")
    assert "━" in text or "%" in text  # rich's bar and percentage
    assert "x real time" in text and "ETA" in text
    assert "progress long:" not in text  # not the plain-lines form

    quiet = subprocess.run(
        cli_argv("run", str(spec), "-o", str(tmp_path / "q"), "--quiet"), capture_output=True, text=True, timeout=300
    )
    assert quiet.returncode == 0, quiet.stderr
    assert "progress" not in quiet.stderr and "simulated" not in quiet.stderr
    assert quiet.stderr == ""



def test_a_signal_during_numpys_first_lookup_cannot_turn_into_an_engine_error(tmp_path):
    """The engine's tables become NumPy arrays through NumPy's C API, which rust-numpy
    looks up (importing NumPy's C-API module) on first use and panics if that import
    raises. Ctrl-C landing inside that import, at a run's first table conversion, once
    surfaced as "engine internal error (please report)" instead of an interruption. The
    lookup now happens before the engine starts: here, from the run's first progress
    call on, every import of that module raises KeyboardInterrupt, as a signal arriving
    then would, and the run must still complete."""
    script = textwrap.dedent(
        """
        import builtins, json
        from ccbench import _core
        from ccbench.spec import load_spec
        real_import = builtins.__import__
        def interrupted_import(name, *args, **kwargs):
            if name.endswith("core.multiarray"):
                raise KeyboardInterrupt
            return real_import(name, *args, **kwargs)
        calls = []
        def progress(*_):
            calls.append(1)
            builtins.__import__ = interrupted_import
        cfg = load_spec(SPEC).resolve()
        out = _core.run(json.dumps(cfg), progress=progress, progress_interval_s=0.0)
        builtins.__import__ = real_import
        print("progress calls", len(calls))
        print("flows", len(out["tables"]["flows"]["flow_id"]))
        """
    ).replace("SPEC", repr(str(write_spec(tmp_path, LONG.replace('"600s"', '"0.2s"')))))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=HANG_S)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "engine internal error" not in done.stderr and "panicked" not in done.stderr
    assert "flows 4" in done.stdout
    assert "progress calls 0" not in done.stdout  # the failing import was in place


def _children() -> dict[int, list[int]]:
    """Every process's children, from /proc."""
    out: dict[int, list[int]] = {}
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                ppid = int((p / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            out.setdefault(ppid, []).append(int(p.name))
    return out


def _descendants(pid: int) -> list[int]:
    tree, found, stack = _children(), [], [pid]
    while stack:
        for child in tree.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _sweep_with_a_busy_worker(tmp_path: Path) -> tuple[subprocess.Popen, int, list[int]]:
    """A sweep of two 600-s runs at 1 Gbit/s on one worker, once the worker simulates
    (the sweep's grandchild, forked by multiprocessing's fork server; the fork server
    and the resource tracker are its children): the sweep, the worker, and every
    process under the sweep."""
    from sweep_helpers import write_sweep

    spec = write_sweep(tmp_path, reps=1, rates=(1000,), ks=(1, 2), duration="600s")
    # Output to a file, not a pipe: the worker inherits it, and reading a pipe to its end
    # would wait for the worker.
    with open(tmp_path / "stderr", "wb") as err:
        proc = subprocess.Popen(
            cli_argv("sweep", str(spec), "-o", str(tmp_path / "out"), "-j", "1", "--no-progress"),
            stdout=subprocess.DEVNULL, stderr=err,
        )  # fmt: skip
    deadline = time.monotonic() + HANG_S
    while True:
        under = _descendants(proc.pid)
        children = _children().get(proc.pid, [])
        busy = [p for p in under if p not in children and _alive(p) and _cpu_s(p) > 1.0]
        if busy:
            return proc, busy[0], under
        assert proc.poll() is None and time.monotonic() < deadline, "no worker started simulating"
        time.sleep(0.1)


def _gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _alive(pid)


def test_sigterm_stops_a_sweep_and_the_run_its_worker_holds(tmp_path):
    """SIGTERM is handled as Ctrl-C is: the sweep kills the run in progress (it would
    otherwise simulate its 600 s for minutes of CPU after the sweep is gone) and exits
    with 128 + 15."""
    proc, worker, _ = _sweep_with_a_busy_worker(tmp_path)
    try:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=HANG_S)
    finally:
        proc.kill()
    assert _gone_within(worker, 10), f"worker {worker} still simulating after the sweep ended"
    err = (tmp_path / "stderr").read_text()
    assert proc.returncode == 143, err
    assert "interrupted: complete runs are kept" in err and "Traceback" not in err


def test_a_sweep_killed_outright_takes_its_worker_with_it(tmp_path):
    """SIGKILL gives the sweep no chance to stop its workers: each worker watches the
    sweep's process and exits when it is gone (ccbench.signals.exit_with)."""
    proc, worker, under = _sweep_with_a_busy_worker(tmp_path)
    try:
        proc.kill()
        proc.wait(timeout=HANG_S)
    finally:
        proc.kill()
    assert _gone_within(worker, 10), f"worker {worker} still simulating after the sweep was killed"
    # With the worker gone, the fork server and the resource tracker see their pipes
    # close and end too: nothing of the sweep is left.
    assert all(_gone_within(p, 10) for p in under), [p for p in under if _alive(p)]
