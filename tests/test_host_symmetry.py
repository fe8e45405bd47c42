"""Symmetry with Linux hosts (issue 13): two identical flows through one FIFO split it
evenly whichever starts first. With the old ideal hosts the start order decided
(phase lock-in: flow 1 got 0.39-0.41 of the goodput over 10 seeds when it started
2 ms first and 0.595 when it started second, cubic/cubic, 20-packet pfifo, 50 µs).

For each case: 100 Mbit/s, two senders with the same RTT, the second flow starting
2 ms after the first, then the other way round; flow 1's share of the goodput in
[5 s, 20 s], averaged over seeds, must be 0.5 ± 0.03 in both orders, and the seeds
must give different runs. A representative subset runs by default (~30 s of CI
time); the whole grid of the issue (cubic, reno, bbr1 × pfifo 20/100/500 × 50 µs and
20 ms) is `pytest -m slow tests/test_host_symmetry.py`.
"""

from __future__ import annotations

import statistics

import pytest

import ccbench

SEEDS = range(1, 7)
#: The slow grid averages more seeds: CUBIC and Reno runs spread ±0.05–0.1 per seed.
GRID_SEEDS = range(1, 11)
TOLERANCE = 0.03


def two_flows(cca: str, limit: int, rtt: str, first: int, seed: int, duration: int = 20, warmup: int = 5) -> dict:
    starts = ["0ms", "2ms"] if first == 1 else ["2ms", "0ms"]
    return {
        "experiment": {
            "name": "sym",
            "seed": seed,
            "duration": f"{duration}s",
            "warmup": f"{warmup}s",
            "sample_interval": "0s",
        },
        "bottleneck": {"rate": "100Mbit", "buffer": f"{limit}pkt", "qdisc": "pfifo"},
        "senders": [{"name": "a", "rtt": rtt}, {"name": "b", "rtt": rtt}],
        "flows": [
            {"cca": cca, "sender": "a", "start": starts[0], "start_jitter": "0s"},
            {"cca": cca, "sender": "b", "start": starts[1], "start_jitter": "0s"},
        ],
    }


def flow1_shares(
    cca: str, limit: int, rtt: str, first: int, duration: int = 20, seeds=SEEDS, warmup: int = 5
) -> list[float]:
    out = []
    for seed in seeds:
        f = ccbench.run(two_flows(cca, limit, rtt, first, seed, duration, warmup)).flows.sort_values("flow_id")
        got = (f.delivered_bytes - f.delivered_bytes_at_warmup).tolist()
        out.append(got[0] / sum(got))
    return out


def check(cca: str, limit: int, rtt: str, duration: int = 20, seeds=SEEDS, warmup: int = 5) -> None:
    for first in (1, 2):
        shares = flow1_shares(cca, limit, rtt, first, duration, seeds, warmup)
        mean = statistics.mean(shares)
        assert len(set(shares)) == len(shares), f"seeds gave identical runs: {shares}"
        assert abs(mean - 0.5) <= TOLERANCE, (
            f"{cca} pfifo {limit} rtt {rtt}, [{warmup}s, {duration}s], flow {first} first: flow 1 mean share {mean:.3f} "
            f"(seeds {[round(s, 3) for s in shares]})"
        )


FAST = [
    ("cubic", 20, "50us"),
    ("cubic", 100, "20ms"),
    ("reno", 20, "50us"),
    ("bbr1", 20, "20ms"),
]


@pytest.mark.parametrize("cca, limit, rtt", FAST)
def test_identical_flows_share_evenly_whichever_starts_first(cca, limit, rtt):
    check(cca, limit, rtt)


def test_the_ideal_host_is_one_setting_away():
    """`host.model = "ideal"` gives back the exact-timing host: with no start jitter the
    seed changes nothing (every packet time is fixed by the spec, the root of the phase
    lock-in), while the Linux host's seeded noise makes each seed a different run."""

    def delivered(host_model: str, seed: int) -> list[int]:
        d = two_flows("cubic", 20, "50us", 1, seed, duration=6)
        d["host"] = {"model": host_model}
        return ccbench.run(d).flows.sort_values("flow_id").delivered_bytes.tolist()

    assert delivered("ideal", 1) == delivered("ideal", 2)
    assert delivered("linux", 1) != delivered("linux", 2)


# Cases of the grid where the mean is still outside 0.5 ± 0.03 (see
# docs/validation.md, "Symmetry"): BBRv1 at 50 µs favours the later flow (its
# min-RTT sample includes the first flow's queue until the first ProbeRTT; the
# kernel does the same on an unloaded machine, "Rows still outside" 3), and CUBIC / Reno with 500
# packets have not converged from the first flow's head start within 20 s.
KNOWN_ASYMMETRIC = {
    ("reno", 500, "20ms"),
    ("bbr1", 100, "50us"),
    ("bbr1", 500, "50us"),
    ("cubic", 500, "50us"),
    ("cubic", 500, "20ms"),
}

GRID = [(c, limit, rtt) for c in ("cubic", "reno", "bbr1") for limit in (20, 100, 500) for rtt in ("50us", "20ms")]


@pytest.mark.slow
@pytest.mark.parametrize(
    "cca, limit, rtt",
    [
        pytest.param(*case, marks=pytest.mark.xfail(strict=True, reason="known asymmetry, docs/validation.md"))
        if case in KNOWN_ASYMMETRIC
        else case
        for case in GRID
    ],
)
def test_symmetry_grid(cca, limit, rtt):
    check(cca, limit, rtt, seeds=GRID_SEEDS)


# The known asymmetries of the 20-s grid are transients, not a split that the start order
# fixes for good: measured after the mechanism that favours one flow has run its course,
# each of them is even in both orders. Why these windows (not fitted to the outcome):
# BBRv1's min-RTT lock-in ends at the first ProbeRTT, 10 s after the first flow's estimate
# (the kernel: 10.1-10.6 s, docs/validation.md item 3); a deep-buffer CUBIC or Reno pair
# converges by one step per congestion epoch, and with 500 packets an epoch takes 5-8 s
# (CUBIC's K = cbrt(W_max * 0.3 / 0.4) at W_max ~ 250-400 packets; Reno's W/2 RTTs at
# ~50 ms), so [100 s, 300 s] starts after more than 10 epochs and averages 25-40 of them.
# The per-seed spread of the deep-buffer CUBIC pair at 50 us is about 0.055, so 20 seeds
# put the ±0.03 bound at 2.5 standard errors of the mean.
STEADY_STATE = {"duration": 300, "warmup": 100, "seeds": range(1, 21)}


@pytest.mark.slow
@pytest.mark.parametrize("cca, limit, rtt", sorted(KNOWN_ASYMMETRIC))
def test_the_known_asymmetries_even_out_in_steady_state(cca, limit, rtt):
    check(cca, limit, rtt, **STEADY_STATE)


def test_bbr1_min_rtt_lock_in_ends_and_the_split_evens_out():
    """The fast representative of the steady-state cases: two BBRv1 flows at 50 us into
    100 packets favour the later flow for the first ~10 s (its min-RTT estimate holds the
    first flow's queue, as in the kernel), and split evenly after the first ProbeRTT."""
    before_probe_rtt = statistics.mean(flow1_shares("bbr1", 100, "50us", first=1, duration=9, warmup=2))
    assert before_probe_rtt < 0.45, f"no lock-in before the first ProbeRTT: flow 1 got {before_probe_rtt:.3f}"
    check("bbr1", 100, "50us", duration=120, warmup=60)
