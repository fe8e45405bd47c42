"""Why BBRv1's share in `atscale/inter-nbbr-vs-n` (quick, n = 50 against Reno) moves
with the seed: the length of the start-up phase in which the BBR flows keep the buffer
full with min-RTT estimates of the full-buffer delay.

Runs the quick scale's n = 50 / Reno run for the given seeds with the Linux host model
(the default) and the ideal one, and prints per run: BBRv1's share after the warm-up, the
first time at least 45 of the 50 BBR flows are in ProbeRTT at once (a synchronised
ProbeRTT, which drains the queue), the last second of the start-up phase in which BBR
carries at least 90 % of the link, and the largest BBR min-RTT estimate before the
synchronised ProbeRTT.

    python3 validation/atscale_bbr_lock.py --seeds 1-6 --hosts linux,ideal --out /tmp/bbrlock
"""

from __future__ import annotations

import argparse
import copy
import json
from pathlib import Path

import pandas as pd

import ccbench
from ccbench.suites.catalog import plan_scenario, select

SCENARIO = "atscale/inter-nbbr-vs-n"
SYNC_FLOWS = 45  # of 50: "all of them, give or take those still starting or just done"


def quick_spec(n: int = 50, other: str = "reno") -> dict:
    (sc,) = select(SCENARIO)
    plan = plan_scenario(sc, "quick").plan
    for run in plan.runs:
        if run.params.get("n") == n and run.params.get("other") == other:
            return run.experiment.to_dict()
    raise SystemExit(f"{SCENARIO}: no quick run with n={n}, other={other}")


def seeds_arg(text: str) -> list[int]:
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def analyse(run_dir: Path) -> dict:
    flows = pd.read_parquet(run_dir / "flows.parquet")
    ts = pd.read_parquet(run_dir / "flow_ts.parquet").merge(flows[["flow_id", "cca"]], on="flow_id")
    ts = ts.sort_values("time_ns")
    ts["delivered"] = ts.groupby("flow_id").delivered_bytes.diff().fillna(0)
    ts["second"] = ts.time_ns // 10**9
    bbr = ts[ts.cca == "bbr1"]
    share_per_s = bbr.groupby("second").delivered.sum() / ts.groupby("second").delivered.sum()
    in_probe_rtt = bbr.assign(p=bbr.cc_state == "probe_rtt").groupby("time_ns").p.sum()
    first_sync_ns = in_probe_rtt[in_probe_rtt >= SYNC_FLOWS].index.min()
    phase_end = share_per_s[(share_per_s.index >= 10) & (share_per_s < 0.9)].index.min()
    before = bbr[bbr.time_ns < first_sync_ns]
    post = flows.delivered_bytes - flows.delivered_bytes_at_warmup
    return {
        "share": round(float(post[flows.cca == "bbr1"].sum() / post.sum()), 3),
        "first_sync_probe_rtt_s": round(float(first_sync_ns) / 1e9, 1),
        "bbr_at_least_90pct_until_s": int(phase_end),
        "bbr_min_rtt_max_before_ms": round(float(before.cc_min_rtt_ns.max()) / 1e6, 1),
        "probe_rtt_peak_before": int(in_probe_rtt[in_probe_rtt.index < first_sync_ns].max()),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=seeds_arg, default=seeds_arg("1-6"))
    ap.add_argument("--hosts", default="linux,ideal")
    ap.add_argument("--out", type=Path, default=Path("/tmp/atscale-bbr-lock"))
    args = ap.parse_args()
    base = quick_spec()
    for host in args.hosts.split(","):
        for seed in args.seeds:
            spec = copy.deepcopy(base)
            spec["host"] = dict(spec.get("host") or {}, model=host)
            out = args.out / f"{host}-{seed}"
            ccbench.run(spec, out, seed=seed, overwrite=True, on_warning=lambda _msg: None)
            print(json.dumps({"host": host, "seed": seed, **analyse(out)}), flush=True)


if __name__ == "__main__":
    main()
