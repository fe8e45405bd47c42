"""D0 (elephants) against the authors' own per-bandwidth results, over any subset of
their bandwidths: their mean utilization, Jain's index and relative retransmissions
per pairing x AQM, next to ours from a paper-scale suite run (``ccbench sweep --suite
elephants --scale paper [--only "rate_mbit <= 1000"]``), with the difference and the
report's verdict rule (|difference| <= 10 % of their value).

Their numbers come from the dataset the paper cites (github.com/PoSeiDon-Workflows/
tcp-conflict-study, ``parsed_data_plots/<cca1>_<cca2>/<cca1>_<cca2>_<aqm>_<rate>.dat``:
per buffer the 5-run mean goodput and retransmissions of each sender and Jain's index
over the two), with the formulas behind Table 3 (docs in
``python/ccbench/suites/data/published.toml``): per cell (buffer, bandwidth)
phi = (goodput 1 + goodput 2) / rate, J as given, RR = the pairing's retransmissions
over CUBIC-vs-CUBIC's in the same cell; each averaged over the cells. Over all five
bandwidths these reproduce the Table 3 values in published.toml (``--check``). Ours are
the report's own (``ccbench.suites.report.elephants_summary``) over the runs at the
chosen bandwidths.

    git clone https://github.com/PoSeiDon-Workflows/tcp-conflict-study /tmp/d0
    python validation/d0_dataset.py --dataset /tmp/d0 --check
    python validation/d0_dataset.py --dataset /tmp/d0 --ours runs/elephants-paper --rates 100 500 1000
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import pandas as pd

from ccbench.suites.report import md_table

RATE_FILES = {100: "100mbps", 500: "500mbps", 1000: "1gbps", 10000: "10gbps", 25000: "25gbps"}
#: Their file names -> our pairings and AQMs (the RED of Table 3 is their red_noecn).
PAIRINGS = {
    "bbr_cubic": "bbr1-cubic", "bbr2_cubic": "bbr2-cubic", "htcp_cubic": "htcp-cubic", "reno_cubic": "reno-cubic",
    "cubic_cubic": "cubic-self", "bbr_bbr": "bbr1-self", "bbr2_bbr2": "bbr2-self", "htcp_htcp": "htcp-self",
    "reno_reno": "reno-self",
}  # fmt: skip
AQMS = {"fifo": "bfifo", "fq_codel": "fq_codel", "red_noecn": "red"}
METRICS = ("avg util (M-AVG-PHI)", "avg JFI (M-AVG-J)", "RR (M-RR)")


def _read(dataset: Path, pair: str, aqm: str, rate: int) -> pd.DataFrame:
    path = dataset / "parsed_data_plots" / pair / f"{pair}_{aqm}_{RATE_FILES[rate]}.dat"
    df = pd.read_csv(path)
    df.columns = [c.lstrip("#") for c in df.columns]
    df["k"] = df["BDP"].str.removesuffix("BDP").astype(float)
    return df.set_index("k")


def theirs(dataset: Path, rates: list[int]) -> pd.DataFrame:
    rows = []
    for aqm_file, aqm in AQMS.items():
        ref = {r: _read(dataset, "cubic_cubic", aqm_file, r) for r in rates}
        for pair_file, pairing in PAIRINGS.items():
            cells = []
            for r in rates:
                d, c = _read(dataset, pair_file, aqm_file, r), ref[r]
                retx = d["alg1_mean_retx_packets"] + d["alg2_mean_retx_packets"]
                base = (c["alg1_mean_retx_packets"] + c["alg2_mean_retx_packets"]).reindex(d.index)
                cells.append(pd.DataFrame({
                    "phi": (d["alg1_mean_throughput"] + d["alg2_mean_throughput"]) / r,
                    "j": d["fairness_index"],
                    "rr": retx / base,
                }))  # fmt: skip
            m = pd.concat(cells).mean()
            rows.append({"pairing": pairing, "aqm": aqm, METRICS[0]: m["phi"], METRICS[1]: m["j"], METRICS[2]: m["rr"]})
    return pd.DataFrame(rows)


def ours(suite_dir: Path, rates: list[int]) -> pd.DataFrame:
    from ccbench.suites.report import elephants_runs, elephants_summary

    runs = elephants_runs({f"elephants/{g}": suite_dir / g for g in ("inter-cca-grid", "intra-cca-grid")})
    return elephants_summary(runs[runs["rate_mbit"].isin(rates)])


def compare(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for _, t in a.iterrows():
        o = b[(b["pairing"] == t["pairing"]) & (b["aqm"] == t["aqm"])]
        for m in METRICS:
            mine = float(o[m].iloc[0]) if len(o) else math.nan
            diff = mine - t[m]
            ok = abs(diff) <= 0.1 * abs(t[m]) if math.isfinite(diff) else None
            verdict = "not measured" if ok is None else "agrees" if ok else "DISAGREES"
            rows.append({"pairing": t["pairing"], "aqm": t["aqm"], "metric": m, "theirs": round(t[m], 3),
                         "ours": round(mine, 3), "difference": round(diff, 3), "verdict": verdict})  # fmt: skip
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", type=Path, required=True, help="a checkout of PoSeiDon-Workflows/tcp-conflict-study")
    ap.add_argument("--ours", type=Path, help="a paper-scale `ccbench sweep --suite elephants` directory")
    ap.add_argument("--rates", type=int, nargs="+", default=sorted(RATE_FILES), choices=sorted(RATE_FILES))
    ap.add_argument("--check", action="store_true", help="their five-bandwidth means against published.toml")
    args = ap.parse_args()
    t = theirs(args.dataset, args.rates)
    if args.check:
        from ccbench.suites.report import load_published

        pub = [p for p in load_published() if p.scenario == "elephants/overall-summary" and p.scale == "paper"]
        worst = 0.0
        for p in pub:
            row = t[(t["pairing"] == p.where["pairing"]) & (t["aqm"] == p.where["aqm"])]
            assert p.value is not None
            worst = max(worst, abs(float(row[p.metric].iloc[0]) - p.value))
        print(f"{len(pub)} Table 3 values; largest |difference| from this script's means: {worst:.4f}")
    if args.ours:
        table = compare(t, ours(args.ours, args.rates))
        print(md_table(table))
        bad = table["verdict"] == "DISAGREES"
        print(f"\n{int(bad.sum())} of {len(table)} cells disagree")
        for m in METRICS:
            sub = table[table["metric"] == m]
            print(f"{m}: {int((sub['verdict'] == 'DISAGREES').sum())} of {len(sub)} disagree")
    elif not args.check:
        print(md_table(t))


if __name__ == "__main__":
    main()
