"""Loss / retransmission family: metrics.md §4, **M-RETX** (number of
retransmissions) and **M-RETX-PCT** (retransmitted / delivered packets × 100).

Both count whole-run totals from the ``flows`` table (``segs_retrans``,
``segs_delivered``), the reading of iperf3's retransmit counter that the source
studies use.
"""

from __future__ import annotations

import pandas as pd

__all__ = ["retransmission_pct", "retransmissions"]


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
