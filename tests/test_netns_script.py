"""validation/netns_bbr.sh refuses hostile option values before evaluating anything
(it runs as root), leaks no temp directory, takes a lock and has --cleanup (issue 17).
Only refusals are exercised: nothing here creates a namespace."""

import fcntl
import glob
import os
import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "validation" / "netns_bbr.sh"


def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, timeout=60, env=env)


def temp_dirs() -> set[str]:
    return set(glob.glob("/tmp/netns_bbr.*"))


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["-d", "X[$(touch {marker})]", "v1"], "-d 'X[$(touch"),
        (["-l", "1+$(touch {marker})", "v2"], "is not a whole number"),
        (["-w", "a[$(touch {marker})]", "v2"], "is not a whole number"),
        (["-s", "$(touch {marker})", "v2"], "is not a whole number"),
        (["-b", "0x10", "v2"], "is not a whole number"),
        (["-d", "0", "v2"], "is not in [1, 86400]"),
        (["-d", "10", "-w", "10", "v2"], "must be below -d"),
        (["-r", "100mbit; touch {marker}", "v2"], "is not a tc rate"),
        (["-o", "-rf", "v2"], "must be a file name"),
    ],
)
def test_hostile_option_values_are_refused_before_use(tmp_path, args, fragment):
    marker = tmp_path / "pwned"
    before = temp_dirs()
    p = run(*[a.format(marker=marker) for a in args])
    assert p.returncode == 2, p.stderr
    assert fragment.format(marker=marker) in p.stderr, p.stderr
    assert not marker.exists()
    assert temp_dirs() == before


def test_bad_namespace_prefix_is_refused(tmp_path):
    p = run("v2", env={**os.environ, "NS_PREFIX": "$(touch x)"})
    assert p.returncode == 2 and "NS_PREFIX" in p.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="the lock is taken after the root check")
def test_a_second_run_is_refused_by_the_lock():
    prefix = "cctst-"
    missing = [
        c
        for c in ("ip", "tc", "iperf3", "ethtool", "ping")
        if subprocess.run(["which", c], capture_output=True).returncode
    ]
    bbr = "bbr" in Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text()
    if missing or not bbr:
        pytest.skip(f"needs {missing or 'bbr'}")
    before = temp_dirs()
    with open(f"/run/lock/ccbench-netns-{prefix}.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        p = run("-d", "5", "-w", "1", "v2", env={**os.environ, "NS_PREFIX": prefix})
        assert p.returncode == 2 and "holds /run/lock/ccbench-netns-cctst-.lock" in p.stderr, p.stderr
        c = run("--cleanup", env={**os.environ, "NS_PREFIX": prefix})
        assert c.returncode == 2 and "is alive" in c.stderr
    assert temp_dirs() == before
    c = run("--cleanup", env={**os.environ, "NS_PREFIX": prefix})
    assert c.returncode == 0, c.stderr
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert prefix not in listed


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to create a namespace")
def test_a_killed_runs_namespaces_are_named_with_the_cleanup_command():
    """What kill -9 leaves (here: one namespace of the prefix, made by hand) stops the
    next run with the command that removes it; --cleanup removes it."""
    prefix = "cctsk-"
    missing = [c for c in ("ip", "tc", "iperf3", "ethtool", "ping") if shutil.which(c) is None]
    bbr = "bbr" in Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text()
    if missing or not bbr:
        pytest.skip(f"needs {missing or 'bbr'}")
    env = {**os.environ, "NS_PREFIX": prefix}
    before = temp_dirs()
    subprocess.run(["ip", "netns", "add", f"{prefix}rtr"], check=True)
    try:
        p = run("-d", "5", "-w", "1", "v2", env=env)
        assert p.returncode == 2, p.stderr
        assert f"namespace {prefix}rtr exists" in p.stderr and "--cleanup" in p.stderr
        assert temp_dirs() == before
        c = run("--cleanup", env=env)
        assert c.returncode == 0, c.stderr
        assert f"{prefix}rtr" not in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    finally:
        subprocess.run(["ip", "netns", "del", f"{prefix}rtr"], capture_output=True)
