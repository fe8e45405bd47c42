//! The `flows` table: one row per flow that arrived (every flow of a fixed group),
//! in flow-id order. A flow's row is what is left of it once it finishes: the engine
//! frees a finished flow's TCP state and keeps only a [`FlowRow`], so memory grows
//! with concurrent flows plus one small row per flow.

use super::{Column, Interner, Table};
use crate::tcp::sender::SenderCounters;
use crate::units::Time;

/// Everything the table says about one flow.
#[derive(Debug, Clone, Default)]
pub struct FlowRow {
    pub sender: u64,
    /// Index of the flow's group (entry of `flows`) and of its CCA in that group
    /// (0: the group's `cca`, i + 1: `cca_mix[i]`); names are looked up at the end.
    pub group: u32,
    pub cca: u16,
    pub start_ns: Time,
    pub stop_ns: Option<Time>,
    pub size_bytes: Option<u64>,
    pub base_rtt_ns: Time,
    pub mss: u32,
    pub delivered_bytes: u64,
    pub delivered_bytes_at_warmup: u64,
    pub completed_at: Option<Time>,
    pub counters: SenderCounters,
    pub segs_delivered: u64,
    /// The counters at the warmup instant (zero for a flow that started after it).
    pub counters_at_warmup: SenderCounters,
    pub segs_delivered_at_warmup: u64,
    pub min_rtt_ns: Option<Time>,
    pub srtt_ns: Time,
    /// The flow's data packets dropped and CE-marked on any link, in all and before
    /// the warm-up (counted whether or not per-packet event rows are recorded).
    pub dropped_pkts: u64,
    pub dropped_pkts_at_warmup: u64,
    pub ecn_marked_pkts: u64,
    pub ecn_marked_pkts_at_warmup: u64,
    /// A connection opened by a handshake: from the first SYN to the SYN-ACK's
    /// arrival (None: no handshake, or never established).
    pub setup_ns: Option<Time>,
    /// SYN retransmissions.
    pub syn_retrans: u32,
    /// The client gave up its SYN retries (ETIMEDOUT).
    pub setup_failed: bool,
}

/// Names the table needs: sender names, group labels, each group's CCA names.
pub struct FlowNames<'a> {
    pub senders: &'a [String],
    pub groups: Vec<&'a str>,
    pub ccas: Vec<Vec<&'a str>>,
}

fn dict<'a>(values: impl Iterator<Item = &'a str>) -> Column {
    let mut interner = Interner::default();
    let codes = values.map(|v| interner.code(v)).collect();
    Column::Dict { codes, values: interner.into_values() }
}

/// The `flows` table of `rows` (flow id = index), for a run that ended at `end_of_run`.
pub fn flows_table(rows: &[FlowRow], names: &FlowNames, end_of_run: Time) -> Table {
    let u64s = |f: &dyn Fn(&FlowRow) -> u64| Column::U64(rows.iter().map(f).collect());
    let i64s = |f: &dyn Fn(&FlowRow) -> i64| Column::I64(rows.iter().map(f).collect());
    let opt = |v: Option<u64>| v.map_or(-1, |x| x as i64);
    Table {
        columns: vec![
            ("flow_id", Column::U64((0..rows.len() as u64).collect())),
            ("sender", u64s(&|r| r.sender)),
            ("sender_name", dict(rows.iter().map(|r| names.senders[r.sender as usize].as_str()))),
            ("group", dict(rows.iter().map(|r| names.groups[r.group as usize]))),
            ("cca", dict(rows.iter().map(|r| names.ccas[r.group as usize][r.cca as usize]))),
            ("start_ns", u64s(&|r| r.start_ns)),
            ("stop_ns", i64s(&|r| opt(r.stop_ns))),
            ("size_bytes", i64s(&|r| opt(r.size_bytes))),
            ("base_rtt_ns", u64s(&|r| r.base_rtt_ns)),
            ("mss", u64s(&|r| r.mss as u64)),
            ("delivered_bytes", u64s(&|r| r.delivered_bytes)),
            ("delivered_bytes_at_warmup", u64s(&|r| r.delivered_bytes_at_warmup)),
            ("completed", Column::Bool(rows.iter().map(|r| r.completed_at.is_some()).collect())),
            ("fct_ns", i64s(&|r| r.completed_at.map_or(-1, |t| (t - r.start_ns) as i64))),
            (
                "end_ns",
                u64s(&|r| {
                    r.completed_at
                        .or(r.stop_ns.map(|s| s.min(end_of_run)))
                        .unwrap_or(end_of_run)
                        .max(r.start_ns.min(end_of_run))
                }),
            ),
            ("segs_sent", u64s(&|r| r.counters.segs_sent)),
            ("segs_retrans", u64s(&|r| r.counters.segs_retrans)),
            ("segs_lost", u64s(&|r| r.counters.segs_lost)),
            ("segs_delivered", u64s(&|r| r.segs_delivered)),
            ("cwnd_reductions", u64s(&|r| r.counters.cwnd_reductions)),
            ("rtos", u64s(&|r| r.counters.rtos)),
            ("undos", u64s(&|r| r.counters.undos)),
            ("app_limited_samples", u64s(&|r| r.counters.app_limited_samples)),
            ("min_rtt_ns", i64s(&|r| opt(r.min_rtt_ns))),
            ("srtt_ns", u64s(&|r| r.srtt_ns)),
            ("segs_sent_at_warmup", u64s(&|r| r.counters_at_warmup.segs_sent)),
            ("segs_retrans_at_warmup", u64s(&|r| r.counters_at_warmup.segs_retrans)),
            ("segs_delivered_at_warmup", u64s(&|r| r.segs_delivered_at_warmup)),
            ("dropped_pkts", u64s(&|r| r.dropped_pkts)),
            ("dropped_pkts_at_warmup", u64s(&|r| r.dropped_pkts_at_warmup)),
            ("ecn_marked_pkts", u64s(&|r| r.ecn_marked_pkts)),
            ("ecn_marked_pkts_at_warmup", u64s(&|r| r.ecn_marked_pkts_at_warmup)),
            ("setup_ns", i64s(&|r| opt(r.setup_ns))),
            ("syn_retrans", u64s(&|r| r.syn_retrans as u64)),
            ("setup_failed", Column::Bool(rows.iter().map(|r| r.setup_failed).collect())),
        ],
    }
}
