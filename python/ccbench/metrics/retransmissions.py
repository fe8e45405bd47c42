"""Loss / retransmission family: metrics.md §4.

- **M-RETX** number of retransmissions and **M-RETX-PCT** retransmitted / delivered
  packets × 100 (:func:`retransmissions`, :func:`retransmission_pct`), totals of the
  ``flows`` table's ``segs_retrans`` and ``segs_delivered`` — over the whole run, or
  over the measurement window when given :func:`in_window` of the table (the counts
  after the warm-up, as iperf3's ``--omit`` leaves out the first seconds);
- **M-RR** relative retransmissions against the CUBIC-vs-CUBIC reference (D0 Eq. 4)
  (:func:`relative_retransmissions`);
- **M-LOSSRATE / M-HALVRATE** packet loss rate and cwnd-halving rate per packet
  sent, and **M-LOSS-HALVING** their ratio (D3) (:func:`loss_and_halving_rates`);
- **M-BURST** the Goh–Barabási burstiness of drops (D3 §4; **[external]** formula)
  (:func:`burstiness`, :func:`drop_burstiness`).

The drop metrics read ``events`` rows of kind ``drop`` with ``value2 == 1`` (data
packets; ACK drops are not congestion signals for the data flow). Those rows exist
only with ``experiment.packet_events = true``; otherwise the per-flow drop rates use
the ``flows`` table's ``dropped_pkts`` counters and M-BURST, which needs each drop's
time, is NaN.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = [
    "WINDOW_COUNTERS",
    "burstiness",
    "data_drops",
    "drop_burstiness",
    "has_window_counters",
    "in_window",
    "loss_and_halving_rates",
    "relative_retransmissions",
    "retransmission_pct",
    "retransmissions",
]


#: Sender counters the ``flows`` table also holds at the warm-up (``<name>_at_warmup``).
WINDOW_COUNTERS = ("segs_sent", "segs_retrans", "segs_delivered")


def has_window_counters(flows: pd.DataFrame) -> bool:
    """Whether ``flows`` has the counters at the warm-up (runs written before they
    were recorded, and backends that cannot take them, do not)."""
    return all(f"{c}_at_warmup" in flows.columns for c in WINDOW_COUNTERS)


def in_window(flows: pd.DataFrame) -> pd.DataFrame:
    """``flows`` with ``segs_sent``, ``segs_retrans`` and ``segs_delivered`` counted
    over the measurement window (the final count less the count at the warm-up), so
    that :func:`retransmissions` and :func:`retransmission_pct` cover the same window
    as goodput. ``ValueError`` if the table has no counters at the warm-up
    (:func:`has_window_counters`)."""
    if not has_window_counters(flows):
        raise ValueError("the flows table has no counters at the warm-up (segs_*_at_warmup)")
    out = flows.copy()
    for c in WINDOW_COUNTERS:
        out[c] = flows[c].to_numpy(dtype=np.int64) - flows[f"{c}_at_warmup"].to_numpy(dtype=np.int64)
    return out


def retransmissions(flows: pd.DataFrame, by: str | None = None) -> pd.Series | int:
    """M-RETX: total retransmitted segments, or per ``by`` key (e.g. ``"flow_id"``,
    ``"sender_name"``, ``"cca"``) as a Series."""
    if by is None:
        return int(flows["segs_retrans"].sum())
    return flows.groupby(flows[by].astype(str), sort=True)["segs_retrans"].sum().astype("int64")


def retransmission_pct(flows: pd.DataFrame) -> float:
    """M-RETX-PCT: 100 · Σ retransmitted / Σ delivered segments over the given flows
    (NaN when nothing was delivered)."""
    delivered = int(flows["segs_delivered"].sum())
    if delivered == 0:
        return float("nan")
    return 100.0 * int(flows["segs_retrans"].sum()) / delivered


def relative_retransmissions(retx: float, reference_retx: float | np.ndarray | list[float]) -> float:
    """M-RR (D0 Eq. 4): ``RR = R_cca1_vs_cca2 / R_cubic_vs_cubic``, the reference being
    the CUBIC-vs-CUBIC run(s) with the same AQM, bandwidth and buffer. **[impl.
    choice]** several reference runs are averaged (the 5-run mean); a zero reference
    gives NaN (undefined), not infinity, unless the numerator is zero too, which is
    also NaN."""
    ref = float(np.mean(reference_retx))
    if not np.isfinite(ref) or ref == 0:
        return float("nan")
    return float(retx) / ref


def data_drops(events: pd.DataFrame, *, link: str | None = "bottleneck") -> pd.DataFrame:
    """The data-packet drop events (``kind == "drop"``, ``value2 == 1``), at ``link``
    (``None`` = anywhere), sorted by time."""
    kind = events["kind"].astype(str)
    mask = (kind == "drop") & (events["value2"].to_numpy(dtype=float) == 1.0)
    if link is not None:
        mask &= events["link"].astype(str) == link
    return events[mask].sort_values("time_ns", kind="stable")


def _counts_drops(flows: pd.DataFrame, events: pd.DataFrame | None) -> bool:
    """Whether the drops come from the ``flows`` table's counters: it has them and
    ``events`` has no per-packet ``drop`` rows (recorded without ``packet_events``)."""
    if "dropped_pkts" not in flows.columns or "dropped_pkts_at_warmup" not in flows.columns:
        return False
    return events is None or not (events["kind"].astype(str) == "drop").any()


def loss_and_halving_rates(
    flows: pd.DataFrame, events: pd.DataFrame | None = None, *, warmup_ns: int | None = None
) -> pd.DataFrame:
    """M-LOSSRATE, M-HALVRATE and M-LOSS-HALVING per flow (D3).

    **[impl. choice]** (D3 gives no denominators): ``p_loss`` = packets of the flow
    dropped at the bottleneck / packets; ``p_halving`` = cwnd reductions / packets;
    ``loss_per_halving`` = drops / halvings (NaN with no halving).

    - ``warmup_ns=None``: whole-run counts; packets = data segments sent
      (``segs_sent``), halvings = ``flows.cwnd_reductions``; without ``events`` the
      sender's ``segs_lost`` stands in for the drops.
    - ``warmup_ns`` given (needs ``events``): the measurement window only, as D3
      ignores its first minutes: drop and ``cwnd_reduction`` events at or after the
      warm-up, packets = segments delivered in the window (window bytes / MSS) plus
      the window's drops.

    Drops are the per-packet ``drop`` rows at the bottleneck when ``events`` has any;
    a run recorded without them (``experiment.packet_events = false``, the default)
    has the ``flows`` table count them instead: ``dropped_pkts`` (the flow's data
    packets dropped on any link of its path, in a dumbbell the bottleneck), minus
    ``dropped_pkts_at_warmup`` for the window (the run's own warm-up).
    """
    out = pd.DataFrame({"flow_id": flows["flow_id"].to_numpy()})
    for c in ("group", "cca"):
        if c in flows.columns:
            out[c] = flows[c].astype(str).to_numpy()
    ids = out["flow_id"].astype("int64")
    if warmup_ns is not None:
        if events is None:
            raise ValueError("counting in the measurement window needs the events table")
        late = events[events["time_ns"].to_numpy(dtype=np.int64) >= warmup_ns]
        if _counts_drops(flows, events):
            all_drops = flows["dropped_pkts"].to_numpy(dtype=np.int64)
            drops = (all_drops - flows["dropped_pkts_at_warmup"].to_numpy(dtype=np.int64)).astype(float)
        else:
            drops = ids.map(data_drops(late).groupby("flow_id").size()).fillna(0).to_numpy(dtype=float)
        cuts = late[late["kind"].astype(str) == "cwnd_reduction"]
        halvings = ids.map(cuts.groupby("flow_id").size()).fillna(0).to_numpy(dtype=float)
        window = (
            flows["delivered_bytes"].to_numpy(dtype=np.int64)
            - flows["delivered_bytes_at_warmup"].to_numpy(dtype=np.int64)
        ) / flows["mss"].to_numpy(dtype=float)
        packets = window + drops
    else:
        if _counts_drops(flows, events):
            drops = flows["dropped_pkts"].to_numpy(dtype=float)
        elif events is not None:
            drops = ids.map(data_drops(events).groupby("flow_id").size()).fillna(0).to_numpy(dtype=float)
        else:
            drops = flows["segs_lost"].to_numpy(dtype=float)
        halvings = flows["cwnd_reductions"].to_numpy(dtype=float)
        packets = flows["segs_sent"].to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out["drops"] = drops
        out["halvings"] = halvings
        out["packets"] = packets
        out["p_loss"] = np.where(packets > 0, drops / np.where(packets > 0, packets, 1), np.nan)
        out["p_halving"] = np.where(packets > 0, halvings / np.where(packets > 0, packets, 1), np.nan)
        out["loss_per_halving"] = np.where(halvings > 0, drops / np.where(halvings > 0, halvings, 1), np.nan)
    return out


def burstiness(event_times_ns: np.ndarray) -> float:
    """M-BURST **[external]** (Goh & Barabási 2008): ``B = (σ_τ − m_τ) / (σ_τ + m_τ)``
    over the inter-event times τ; −1 periodic, ≈0 Poisson, → 1 bursty. Population
    SD. NaN with fewer than three events (one interval has no spread) or when all
    events coincide (0/0)."""
    t = np.sort(np.asarray(event_times_ns, dtype=float))
    if t.size < 3:
        return float("nan")
    tau = np.diff(t)
    m, s = float(tau.mean()), float(tau.std())
    return (s - m) / (s + m) if (s + m) > 0 else float("nan")


def drop_burstiness(events: pd.DataFrame, *, per_flow: bool = False, link: str | None = "bottleneck") -> float:
    """M-BURST of the data drops at ``link``. **[impl. choice]** ``per_flow=False``
    (default): all drops at the queue form one event sequence (D3 measures "losses at
    the queue"); ``per_flow=True``: the median of the flows' scores (flows with
    fewer than three drops left out)."""
    d = data_drops(events, link=link)
    if not per_flow:
        return burstiness(d["time_ns"].to_numpy())
    scores = [burstiness(g["time_ns"].to_numpy()) for _, g in d.groupby("flow_id")]
    scores = [s for s in scores if np.isfinite(s)]
    return float(np.median(scores)) if scores else float("nan")
