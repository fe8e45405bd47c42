"""Plots over a sweep's grid: per-sender throughput and retransmissions against the
buffer size, and heatmaps of Jain's index or a share over two axes. Runs that differ
only in the other axes (e.g. repetitions) are averaged (M-STATS mean; failed runs
left out); the title says over what."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..metrics import over_repetitions
from ._base import axis_label, new_figure, ordered, sweep_table

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from ..runset import RunSet


def _check_axis(table: pd.DataFrame, name: str, data: RunSet) -> None:
    if name not in table.columns:
        allowed = ", ".join([*data.axes, "buffer_bdp", "rate_mbps"])
        raise ValueError(f"{name!r} is not an axis of {data.root}; axes: {allowed}")


def _default_axes(data: RunSet, table: pd.DataFrame, n: int) -> list[str]:
    """Numeric stand-ins for the buffer and rate axes first (they sort and space
    correctly), then the sweep's other axes."""
    picks: list[str] = []
    for ax in data.axes:
        short = ax.rsplit(".", 1)[-1]
        alias = {"buffer": "buffer_bdp", "rate": "rate_mbps"}.get(short)
        pick = alias if alias is not None and alias in table.columns and table[alias].nunique() > 1 else ax
        if pick not in picks:
            picks.append(pick)
    for extra in ("buffer_bdp", "rate_mbps"):
        if extra not in picks and extra in table.columns and table[extra].nunique() > 1:
            if not any(_same_values(table, p, extra) for p in picks):
                picks.append(extra)
    return picks[:n]


def _same_values(table: pd.DataFrame, a: str, b: str) -> bool:
    """Whether axis ``a`` determines ``b`` one to one (e.g. a sweep variable ``k``
    and the run's ``buffer_bdp``): then ``b`` adds no axis."""
    if a not in table.columns or b not in table.columns:
        return False
    pairs = table[[a, b]].dropna().drop_duplicates()
    return len(pairs) == pairs[a].nunique() == pairs[b].nunique()


def grid_axes(data: RunSet, table: pd.DataFrame) -> list[str]:
    """The sweep's axes as the grid views use them: numeric ``buffer_bdp`` /
    ``rate_mbps`` in place of the buffer and rate texts."""
    return _default_axes(data, table, len(data.axes) + 2)


def _x_axis(data: RunSet, table: pd.DataFrame, x: str | None) -> str:
    if x is None:
        if "buffer_bdp" in table.columns and table["buffer_bdp"].nunique() > 1:
            x = "buffer_bdp"
        else:
            defaults = _default_axes(data, table, 1)
            x = defaults[0] if defaults else None
    if x is None:
        raise ValueError(f"{data.root}: the sweep has no axis that varies")
    _check_axis(table, x, data)
    return x


def _hue(data: RunSet, table: pd.DataFrame, x: str, hue: str | None) -> str | None:
    if hue is None:
        others = [a for a in _default_axes(data, table, 3) if a != x and not _same_axis(a, x)]
        return others[0] if others else None
    _check_axis(table, hue, data)
    return hue


def _same_axis(a: str, b: str) -> bool:
    alias = {"buffer_bdp": "buffer", "rate_mbps": "rate"}
    return alias.get(a, a.rsplit(".", 1)[-1]) == alias.get(b, b.rsplit(".", 1)[-1])


def _lines(ax, table: pd.DataFrame, x: str, hue: str | None, column: str, label: str) -> None:
    keys = [x] if hue is None else [hue, x]
    stats = over_repetitions(table, column, keys, stats=("mean", "std"))
    for hv in [None] if hue is None else ordered(stats[hue].dropna()):
        s = stats if hue is None else stats[stats[hue] == hv]
        s = s.assign(_k=s[x]).sort_values(x, key=lambda c: c.map(lambda v: _sort_num(v)))
        name = label if hue is None else f"{label}, {hue}={hv}"
        xs = s[x].to_numpy()
        xs = xs if np.issubdtype(np.asarray(xs).dtype, np.number) else np.asarray([str(v) for v in xs])
        ax.errorbar(
            xs, s["mean"], yerr=np.nan_to_num(s["std"].to_numpy(dtype=float)), marker="o", capsize=3, label=name
        )


def _sort_num(v: Any) -> float:
    from ..runset import natural_key

    k = natural_key(v)
    return k[1] if k[0] == 0 else float("inf")


def sender_throughput_vs_buffer(
    data: RunSet, *, x: str | None = None, hue: str | None = None, table: pd.DataFrame | None = None
) -> Figure:
    """Per-sender goodput (M-TPUT per sender; D0's S₁, S₂; per CCA when there is one
    sender) against the buffer size
    (``x``, default ``buffer_bdp``), one line per sender and value of ``hue`` (default:
    the sweep's next axis), mean ± SD over the remaining runs. The crossing is the
    equilibrium buffer (M-EQUIL)."""
    t = sweep_table(data, table)
    x = _x_axis(data, t, x)
    hue = _hue(data, t, x, hue)
    fig = new_figure()
    ax = fig.add_subplot()
    senders = sorted(c for c in t.columns if c.startswith("sender:") and c.endswith(":mbps"))
    if len(senders) < 2:  # one sender: compare the CCAs instead
        senders = sorted(c for c in t.columns if c.startswith("cca:") and c.endswith(":mbps")) or senders
    for col in senders:
        _lines(ax, t, x, hue, col, col.split(":")[1])
    if x == "buffer_bdp":
        ax.set_xscale("log", base=2)
    ax.set(xlabel=axis_label(x), ylabel="goodput per sender [Mbit/s]", title=f"{data.label}: per-sender goodput")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize="small")
    return fig


def retransmissions_vs_buffer(
    data: RunSet,
    *,
    x: str | None = None,
    hue: str | None = None,
    metric: str = "retransmissions",
    table: pd.DataFrame | None = None,
) -> Figure:
    """Retransmissions (M-RETX; ``metric="retransmission_pct"`` for M-RETX-PCT)
    against the buffer size, mean ± SD over the remaining runs."""
    if metric not in ("retransmissions", "retransmission_pct"):
        raise ValueError(f"metric must be 'retransmissions' or 'retransmission_pct', not {metric!r}")
    t = sweep_table(data, table)
    x = _x_axis(data, t, x)
    hue = _hue(data, t, x, hue)
    fig = new_figure()
    ax = fig.add_subplot()
    _lines(ax, t, x, hue, metric, "all flows")
    if x == "buffer_bdp":
        ax.set_xscale("log", base=2)
    ylabel = "retransmitted segments" if metric == "retransmissions" else "retransmissions [% of delivered]"
    ax.set(xlabel=axis_label(x), ylabel=ylabel, title=f"{data.label}: retransmissions")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize="small")
    return fig


def heatmap(
    data: RunSet,
    *,
    value: str = "jain",
    x: str | None = None,
    y: str | None = None,
    table: pd.DataFrame | None = None,
    title: str | None = None,
    vmin: float | None = None,
    vmax: float | None = None,
) -> Figure:
    """A metric of each grid cell (mean over the runs in it) over axes ``x`` and
    ``y`` (default: the sweep's first two axes; with one axis, one row). Cells without
    a complete run are blank and marked "failed"/"—"."""
    t = sweep_table(data, table)
    axes = _default_axes(data, t, 2)
    x = x or (axes[0] if axes else None)
    if x is None:
        raise ValueError(f"{data.root}: the sweep has no axis that varies")
    _check_axis(t, x, data)
    if y is None:
        y = next((a for a in axes if a != x and not _same_axis(a, x)), None)
    if y is not None:
        _check_axis(t, y, data)
    if value not in t.columns:
        raise ValueError(f"no metric {value!r}; metrics: {', '.join(c for c in t.columns if c not in data.axes)}")
    keys = [x] if y is None else [y, x]
    stats = over_repetitions(t, value, keys, stats=("mean",))
    xs = ordered(t[x].dropna())
    ys = ordered(t[y].dropna()) if y else [None]
    grid = np.full((len(ys), len(xs)), np.nan)
    runs = np.zeros_like(grid)
    for r in stats.itertuples(index=False):
        rd = r._asdict()
        if rd[x] not in xs or (y and rd[y] not in ys):
            continue
        i = ys.index(rd[y]) if y else 0
        grid[i, xs.index(rd[x])] = rd["mean"]
        runs[i, xs.index(rd[x])] = rd["runs"]
    fig = new_figure(max(4.5, 1.1 * len(xs) + 2.5), max(2.8, 0.7 * len(ys) + 1.8))
    ax = fig.add_subplot()
    im = ax.imshow(grid, cmap="viridis", aspect="auto", vmin=vmin, vmax=vmax, origin="lower")
    fig.colorbar(im, ax=ax, label=value)
    for i in range(len(ys)):
        for j in range(len(xs)):
            v = grid[i, j]
            text = f"{v:.3g}" if np.isfinite(v) else ("failed" if runs[i, j] else "—")
            color = "white" if (np.isfinite(v) and v < np.nanmean(grid)) else "black"
            ax.text(j, i, text, ha="center", va="center", fontsize="small", color=color)
    ax.set_xticks(range(len(xs)), [f"{v:g}" if isinstance(v, float) else str(v) for v in xs])
    ax.set_yticks(range(len(ys)), [f"{v:g}" if isinstance(v, float) else str(v) for v in ys] if y else [""])
    ax.set(xlabel=axis_label(x), ylabel=axis_label(y) if y else "")
    ax.set_title(title or f"{data.label}: {value}")
    return fig


def jain_heatmap(
    data: RunSet,
    *,
    x: str | None = None,
    y: str | None = None,
    senders: bool = False,
    table: pd.DataFrame | None = None,
) -> Figure:
    """Jain's index over two axes of the grid (M-JFI over flows; ``senders=True``:
    M-JFI-SENDER), on a fixed 0–1 color scale."""
    value = "jain_senders" if senders else "jain"
    return heatmap(
        data,
        value=value,
        x=x,
        y=y,
        table=table,
        vmin=0.0,
        vmax=1.0,
        title=f"{data.label}: Jain's index ({'per sender' if senders else 'per flow'})",
    )


def share_heatmap(
    data: RunSet,
    *,
    of: str | None = None,
    x: str | None = None,
    y: str | None = None,
    table: pd.DataFrame | None = None,
) -> Figure:
    """The goodput share (M-SHARE) of one CCA or sender over two axes, 0–1. ``of`` is
    ``"cca:<name>"`` or ``"sender:<name>"`` (default: the first CCA)."""
    t = sweep_table(data, table)
    shares = sorted(c[: -len(":share")] for c in t.columns if c.endswith(":share"))
    if of is None:
        of = next((s for s in shares if s.startswith("cca:")), shares[0] if shares else None)
    if of is None or f"{of}:share" not in t.columns:
        raise ValueError(f"no share {of!r}; choose one of {', '.join(shares)}")
    return heatmap(
        data, value=f"{of}:share", x=x, y=y, table=t, vmin=0.0, vmax=1.0, title=f"{data.label}: goodput share of {of}"
    )
