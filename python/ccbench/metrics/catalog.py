"""Every metric id of the metric specification (``metrics.md``) mapped to the
functions that compute it. ``tests/test_metric_catalog.py`` checks this against the
ids in the specification, so none is forgotten, and that each function's docstring
cites its id."""

from __future__ import annotations

from collections.abc import Callable

from .aggregate import equilibrium_buffer, over_repetitions, overall_average, relative_retransmissions_over_runs
from .convergence import (
    burst_recovery,
    dos_recovery_time,
    ema_throughput,
    eps_convergence,
    jfi_convergence_time,
    time_to_fraction,
)
from .distribution import average_throughput, avg_throughput_sd, throughput_quantiles
from .fairness import jain_by_group, jain_flowmean, jain_index, jain_parking_lot, jain_senders, jain_timeseries
from .fct import by_size_bucket, connection_setup, expected_fct, fct_slowdown, flow_completion, flow_counts
from .mathis import fit_mathis_c, mathis_error, mathis_throughput
from .queue import drop_ratio, median_occupancy, occupancy, relative_median_difference
from .ratios import fness, harm, throughput_difference, throughput_ratio_ncf, throughput_ratio_recipe
from .retransmissions import (
    burstiness,
    drop_burstiness,
    loss_and_halving_rates,
    relative_retransmissions,
    retransmission_pct,
    retransmissions,
)
from .sizing import bdp_bytes
from .throughput import aggregate_goodput, flow_goodput, goodput_timeseries, group_timeseries, total_goodput
from .utilization import bwutil_gap, overall_throughput, phase_throughput, utilization

__all__ = ["METRICS"]

METRICS: dict[str, tuple[Callable[..., object], ...]] = {
    # §1 throughput
    "M-TPUT": (
        flow_goodput,
        aggregate_goodput,
        total_goodput,
        goodput_timeseries,
        group_timeseries,
    ),
    "M-BDP": (bdp_bytes,),
    # §2 fairness
    "M-JFI": (jain_index,),
    "M-JFI-SENDER": (jain_senders,),
    "M-JFI-FLOWMEAN": (jain_flowmean,),
    "M-JFI-GROUP": (jain_by_group,),
    "M-JFI-TS": (jain_timeseries,),
    "M-JFI-PL": (jain_parking_lot,),
    # §3 utilization
    "M-PHI": (utilization,),
    "M-AVG-PHI": (overall_average,),
    "M-AVG-J": (overall_average,),
    "M-BWUTIL": (bwutil_gap,),
    "M-PHASE-TPUT": (phase_throughput,),
    "M-OVERALL": (overall_throughput,),
    # §4 loss / retransmissions
    "M-RETX": (retransmissions,),
    "M-RR": (relative_retransmissions, relative_retransmissions_over_runs),
    "M-AVG-RR": (overall_average,),
    "M-RETX-PCT": (retransmission_pct,),
    "M-DROP": (drop_ratio,),
    "M-LOSSRATE": (loss_and_halving_rates,),
    "M-HALVRATE": (loss_and_halving_rates,),
    "M-LOSS-HALVING": (loss_and_halving_rates,),
    "M-BURST": (burstiness, drop_burstiness),
    # §5 distribution / stability
    "M-AVGTPUT": (average_throughput,),
    "M-QUANT": (throughput_quantiles,),
    "M-EPS-CONV": (eps_convergence, ema_throughput),
    "M-SPREAD": (eps_convergence,),
    "M-CONV-JFI": (jfi_convergence_time,),
    "M-T90": (time_to_fraction,),
    "M-DOS-REC": (dos_recovery_time, burst_recovery),
    # §6 ratios
    "M-TR-RECIPE": (throughput_ratio_recipe,),
    "M-TR-NCF": (throughput_ratio_ncf,),
    "M-TD": (throughput_difference,),
    "M-SHARE": (aggregate_goodput,),
    "M-AVGTHR-SD": (avg_throughput_sd,),
    # §7 queue
    "M-NQ": (occupancy,),
    "M-QOCC": (median_occupancy, relative_median_difference),
    "M-QLEN": (occupancy,),
    # §8 flow completion
    "M-FCT": (flow_completion, by_size_bucket, connection_setup),
    "M-FCT-SLOWDOWN": (fct_slowdown, expected_fct),
    "M-FLOWCOUNT": (flow_counts,),
    # §9 model-based
    "M-MATHIS": (mathis_throughput,),
    "M-MATHIS-C": (fit_mathis_c,),
    "M-MATHIS-ERR": (mathis_error,),
    # §10 other
    "M-EQUIL": (equilibrium_buffer,),
    "M-HARM": (harm,),
    "M-FNESS": (fness,),
    # §11
    "M-STATS": (over_repetitions,),
}
