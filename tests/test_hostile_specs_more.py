"""The hostile-input cases of issue 17: tc's lower-case rates, huge names echoed in
full, UTF-16 files, seed=True, `ccbench list` alone; and every case of the issue run
through `ccbench run` in a real process."""

import copy
import json
import os
import subprocess
import sys

import pytest
from test_cli import QUICKSTART, fake_engine, invoke  # noqa: F401
from tomlw import dumps

from ccbench import SpecError
from ccbench.spec import load_spec
from ccbench.units import parse_rate


@pytest.mark.parametrize("text, bps", [("10mbit", 10**7), ("1gbit", 10**9), ("2tbit", 2 * 10**12), ("10Mbit", 10**7)])
def test_tc_lower_case_rates(text, bps):
    assert parse_rate(text) == bps


def test_tc_bytes_per_second_is_not_guessed():
    with pytest.raises(ValueError, match="ambiguous: in tc 'mbps' means bytes per second"):
        parse_rate("10mbps")


def test_a_huge_name_is_not_echoed_in_full(base_spec, ccas):
    d = copy.deepcopy(base_spec)
    d["experiment"]["name"] = "x" * 100_000
    d["flows"][0]["cca"] = "y" * 100_000
    with pytest.raises(SpecError) as info:
        load_spec(d, ccas=ccas)
    text = str(info.value)
    assert len(text) < 1000 and "experiment.name" in text and "flows[0].cca" in text and "..." in text


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-be", "utf-8-sig", "utf-32"])
def test_unicode_spec_files_with_a_byte_order_mark(tmp_path, ccas, codec):
    p = tmp_path / "s.toml"
    raw = QUICKSTART.read_text().encode(codec)
    if codec == "utf-16-be":
        raw = b"\xfe\xff" + raw
    p.write_bytes(raw)
    assert load_spec(p, ccas=ccas).experiment.name == "quickstart"


def test_latin1_spec_is_reported_as_not_utf8(tmp_path, ccas):
    p = tmp_path / "s.toml"
    p.write_bytes(QUICKSTART.read_text().replace("quickstart", "caf\xe9").encode("latin-1"))
    with pytest.raises(SpecError, match="not UTF-8 text"):
        load_spec(p, ccas=ccas)


@pytest.mark.parametrize("seed", [True, False, -1, 2**64, 1.0, "3"])
def test_bad_seed_overrides_are_spec_errors(ccas, seed):
    exp = load_spec(QUICKSTART, ccas=ccas)
    with pytest.raises(SpecError, match="experiment.seed"):
        exp.with_seed(seed)


@pytest.mark.usefixtures("fake_engine")
def test_list_alone_lists_the_ccas():
    r = invoke("list")
    assert r.exit_code == 0, r.output
    # One line per CCA; parameters are shown by `ccbench describe` (issue 7).
    assert "cubic" in r.stdout and "ccbench describe" in r.stdout


# ------------------------------------------------ the cases, from a real process

#: A tiny valid run (1 Mbit/s, 1 s): cases that should run do so in a fraction of a second.
_TINY = {
    "experiment": {"name": "h", "duration": "1s"},
    "bottleneck": {"rate": "1Mbit"},
    "senders": [{"name": "a", "rtt": "20ms"}],
    "flows": [{"cca": "cubic"}],
}


def _case(experiment=None, bottleneck=None, sender=None, flow=None) -> bytes:
    d = copy.deepcopy(_TINY)
    d["experiment"].update(experiment or {})
    d["bottleneck"].update(bottleneck or {})
    d["senders"][0].update(sender or {})
    d["flows"][0].update(flow or {})
    return dumps(d).encode()


#: name -> (spec file bytes, expected exit status, fragments of stderr)
HOSTILE = {
    "default-buffer-below-a-packet": (
        _case(bottleneck={"rate": "100Mbit"}, sender={"rtt": "60us"}, experiment={"duration": "10s"}),
        2,
        ["less than one 1500-byte packet"],
    ),
    # Streamed to the output directory, 10^9 samples are refused for their size on disk.
    "1ns-samples": (_case(experiment={"sample_interval": "1ns"}), 2, ["on its file system", "experiment.sample_interval"]),
    # ~4.6 GiB streamed (4 KiB a flow): over the CCBENCH_MEMORY_WARN the driver sets.
    "a-million-flows": (_case(flow={"count": 1_000_000}), 2, ["--force", "flows[*].count"]),
    "1e9s": (_case(experiment={"duration": "1e9s"}), 2, ["experiment.duration (1000000000s)"]),
    "1Tbit": (_case(experiment={"duration": "1e5s"}, bottleneck={"rate": "1Tbit"}), 2, ["of CPU", "--force"]),
    "start-after-the-end": (_case(flow={"start": "900ms", "start_jitter": "500ms"}), 0, ["may never start"]),
    "rtt-longer-than-the-run": (_case(sender={"rtt": "2s"}), 0, ["nothing can be delivered"]),
    "slow-access-link": (_case(sender={"access_rate": "500kbit"}), 0, ["is below bottleneck.rate"]),
    "tc-lower-case-rate": (_case(bottleneck={"rate": "1mbit"}), 0, []),
    "utf-16-file": (_case().decode().encode("utf-16"), 0, []),
    "100k-character-name": (_case(experiment={"name": "x" * 100_000}), 2, ["experiment.name", "..."]),
    "seed-true": (_case(experiment={"seed": True}), 2, ["experiment.seed"]),
    "not-toml": (b"\x00\xff\xfe garbage", 2, ["invalid spec"]),
}

_DRIVER = """
import contextlib, io, json, resource, sys
from ccbench.cli import main

def usage():
    # VmHWM is this process's own peak; ru_maxrss carries pytest's over the vfork.
    u = resource.getrusage(resource.RUSAGE_SELF)
    hwm_kib = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM"))
    return u.ru_utime + u.ru_stime, hwm_kib / 1024

out = {}
for name, spec, target in json.loads(sys.argv[1]):
    err = io.StringIO()
    cpu0, _ = usage()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            main(["run", spec, "-o", target])
            code = 0
        except SystemExit as e:
            code = e.code
    cpu1, rss_mb = usage()
    out[name] = {"code": code, "stderr": err.getvalue(), "cpu_s": cpu1 - cpu0, "rss_mb": rss_mb}
print(json.dumps(out))
"""


@pytest.mark.engine
def test_hostile_specs_from_the_cli_end_in_a_message_or_a_bounded_run(tmp_path):
    """Every case of issue 17 through `ccbench run` in one real process: refused before
    simulating (exit 2, the field named, no results directory) or run with its warning,
    never a traceback or an abort; each within 2 s of CPU, the process under 500 MB."""
    jobs = []
    for name, (data, _, _) in HOSTILE.items():
        (tmp_path / f"{name}.toml").write_bytes(data)
        jobs.append((name, str(tmp_path / f"{name}.toml"), str(tmp_path / f"{name}.out")))
    env = {**os.environ, "CCBENCH_MEMORY_WARN": "2GiB"}  # the same threshold on any machine
    p = subprocess.run(
        [sys.executable, "-c", _DRIVER, json.dumps(jobs)], capture_output=True, text=True, timeout=600, env=env
    )
    assert p.returncode == 0, p.stderr[-3000:]  # an abort would be a negative status
    seen = json.loads(p.stdout)
    for name, (_, code, fragments) in HOSTILE.items():
        r = seen[name]
        assert r["code"] == code, (name, r)
        assert "Traceback" not in r["stderr"] and len(r["stderr"]) < 3000, (name, r["stderr"][:3000])
        for f in fragments:
            assert f in r["stderr"], (name, f, r["stderr"])
        assert r["cpu_s"] < 2, (name, r["cpu_s"])
        assert (tmp_path / f"{name}.out").exists() == (code == 0), name
    assert max(r["rss_mb"] for r in seen.values()) < 500, seen


@pytest.mark.parametrize("args", [["validate", str(QUICKSTART)], ["list"]])
def test_a_reader_that_goes_away_is_not_an_error(args):
    """`ccbench validate spec | head -c0`: the closed pipe ends the command quietly
    (status 1, as click does), never "error: cannot access: Broken pipe"."""
    with subprocess.Popen(
        [sys.executable, "-c", "from ccbench.cli import main; main()", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as p:
        p.stdout.close()  # before the interpreter has even started: every write fails
        err = p.stderr.read().decode()
        assert p.wait(timeout=120) == 1, err
    assert err == "", err
