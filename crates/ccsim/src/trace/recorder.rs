//! Column builders for the four output tables (`flows`, `flow_ts`, `queue_ts`,
//! `events`). Each `push` appends one row; `finish` turns the builder into a
//! [`Table`]. Column names and units are documented in `docs/results-format.md`.

use super::{Column, Interner, Table};
use crate::cc::CcMetrics;

fn opt_f64(v: Option<f64>) -> f64 {
    v.unwrap_or(f64::NAN)
}

/// One per-flow sample.
#[derive(Debug, Clone, Copy)]
pub struct FlowSample<'a> {
    pub time_ns: u64,
    pub flow_id: u64,
    pub delivered_bytes: u64,
    pub cwnd_pkts: u64,
    /// -1 = infinite.
    pub ssthresh_pkts: i64,
    pub srtt_ns: u64,
    /// -1 = no sample yet.
    pub min_rtt_ns: i64,
    pub pacing_rate_bps: u64,
    pub inflight_pkts: u64,
    pub inflight_bytes: u64,
    pub retrans_total: u64,
    pub lost_total: u64,
    pub ca_state: &'a str,
    pub cc: CcMetrics,
}

#[derive(Debug, Default)]
pub struct FlowTsBuilder {
    time_ns: Vec<u64>,
    flow_id: Vec<u64>,
    delivered_bytes: Vec<u64>,
    cwnd_pkts: Vec<u64>,
    ssthresh_pkts: Vec<i64>,
    srtt_ns: Vec<u64>,
    min_rtt_ns: Vec<i64>,
    pacing_rate_bps: Vec<u64>,
    inflight_pkts: Vec<u64>,
    inflight_bytes: Vec<u64>,
    retrans_total: Vec<u64>,
    lost_total: Vec<u64>,
    ca_state: Vec<u32>,
    ca_dict: Interner,
    cc_state: Vec<u32>,
    cc_dict: Interner,
    cc_bw_bps: Vec<f64>,
    cc_min_rtt_ns: Vec<f64>,
    cc_pacing_gain: Vec<f64>,
    cc_cwnd_gain: Vec<f64>,
    cc_inflight_hi_pkts: Vec<f64>,
    cc_inflight_lo_pkts: Vec<f64>,
    cc_bw_lo_bps: Vec<f64>,
}

impl FlowTsBuilder {
    /// Bytes one row takes in memory (21 columns of 8 bytes, two of them 4-byte codes).
    pub const ROW_BYTES: usize = 19 * 8 + 2 * 4;

    pub fn len(&self) -> usize {
        self.time_ns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.time_ns.is_empty()
    }

    /// Make room for `rows` more rows in every column at once (see `spill::Spill::offer`).
    pub fn reserve(&mut self, rows: usize) {
        reserve_columns!(self, rows; time_ns, flow_id, delivered_bytes, cwnd_pkts, ssthresh_pkts, srtt_ns, min_rtt_ns, pacing_rate_bps, inflight_pkts, inflight_bytes, retrans_total, lost_total, ca_state, cc_state, cc_bw_bps, cc_min_rtt_ns, cc_pacing_gain, cc_cwnd_gain, cc_inflight_hi_pkts, cc_inflight_lo_pkts, cc_bw_lo_bps);
    }

    pub fn push(&mut self, s: &FlowSample) {
        self.time_ns.push(s.time_ns);
        self.flow_id.push(s.flow_id);
        self.delivered_bytes.push(s.delivered_bytes);
        self.cwnd_pkts.push(s.cwnd_pkts);
        self.ssthresh_pkts.push(s.ssthresh_pkts);
        self.srtt_ns.push(s.srtt_ns);
        self.min_rtt_ns.push(s.min_rtt_ns);
        self.pacing_rate_bps.push(s.pacing_rate_bps);
        self.inflight_pkts.push(s.inflight_pkts);
        self.inflight_bytes.push(s.inflight_bytes);
        self.retrans_total.push(s.retrans_total);
        self.lost_total.push(s.lost_total);
        let c = self.ca_dict.code(s.ca_state);
        self.ca_state.push(c);
        let c = self.cc_dict.code(s.cc.state);
        self.cc_state.push(c);
        self.cc_bw_bps.push(opt_f64(s.cc.bw_bps));
        self.cc_min_rtt_ns.push(opt_f64(s.cc.min_rtt_ns.map(|v| v as f64)));
        self.cc_pacing_gain.push(opt_f64(s.cc.pacing_gain));
        self.cc_cwnd_gain.push(opt_f64(s.cc.cwnd_gain));
        self.cc_inflight_hi_pkts.push(opt_f64(s.cc.inflight_hi));
        self.cc_inflight_lo_pkts.push(opt_f64(s.cc.inflight_lo));
        self.cc_bw_lo_bps.push(opt_f64(s.cc.bw_lo_bps));
    }

    pub fn finish(self) -> Table {
        Table {
            columns: vec![
                ("time_ns", Column::U64(self.time_ns)),
                ("flow_id", Column::U64(self.flow_id)),
                ("delivered_bytes", Column::U64(self.delivered_bytes)),
                ("cwnd_pkts", Column::U64(self.cwnd_pkts)),
                ("ssthresh_pkts", Column::I64(self.ssthresh_pkts)),
                ("srtt_ns", Column::U64(self.srtt_ns)),
                ("min_rtt_ns", Column::I64(self.min_rtt_ns)),
                ("pacing_rate_bps", Column::U64(self.pacing_rate_bps)),
                ("inflight_pkts", Column::U64(self.inflight_pkts)),
                ("inflight_bytes", Column::U64(self.inflight_bytes)),
                ("retrans_total", Column::U64(self.retrans_total)),
                ("lost_total", Column::U64(self.lost_total)),
                ("ca_state", Column::Dict { codes: self.ca_state, values: self.ca_dict.into_values() }),
                ("cc_state", Column::Dict { codes: self.cc_state, values: self.cc_dict.into_values() }),
                ("cc_bw_bps", Column::F64(self.cc_bw_bps)),
                ("cc_min_rtt_ns", Column::F64(self.cc_min_rtt_ns)),
                ("cc_pacing_gain", Column::F64(self.cc_pacing_gain)),
                ("cc_cwnd_gain", Column::F64(self.cc_cwnd_gain)),
                ("cc_inflight_hi_pkts", Column::F64(self.cc_inflight_hi_pkts)),
                ("cc_inflight_lo_pkts", Column::F64(self.cc_inflight_lo_pkts)),
                ("cc_bw_lo_bps", Column::F64(self.cc_bw_lo_bps)),
            ],
        }
    }
}

/// One queue sample (counters cumulative since the start).
#[derive(Debug, Clone, Copy)]
pub struct QueueSample<'a> {
    pub time_ns: u64,
    pub link: &'a str,
    pub backlog_bytes: u64,
    pub backlog_pkts: u64,
    pub stats: crate::qdisc::QueueStats,
    /// Sojourn times of the packets dequeued since the previous sample.
    pub sojourn: crate::qdisc::SojournWindow,
    pub aqm: crate::qdisc::AqmState,
}

#[derive(Debug, Default)]
pub struct QueueTsBuilder {
    time_ns: Vec<u64>,
    link: Vec<u32>,
    link_dict: Interner,
    backlog_bytes: Vec<u64>,
    backlog_pkts: Vec<u64>,
    enqueued_pkts: Vec<u64>,
    dequeued_pkts: Vec<u64>,
    dequeued_bytes: Vec<u64>,
    dropped_pkts: Vec<u64>,
    ecn_marked_pkts: Vec<u64>,
    tail_drops: Vec<u64>,
    aqm_drops: Vec<u64>,
    random_drops: Vec<u64>,
    sojourn_mean_ns: Vec<f64>,
    sojourn_max_ns: Vec<u64>,
    aqm_prob: Vec<f64>,
    aqm_dropping: Vec<u64>,
    aqm_avg_bytes: Vec<f64>,
}

impl QueueTsBuilder {
    /// Bytes one row takes in memory.
    pub const ROW_BYTES: usize = 8 * 8 + 4;

    pub fn len(&self) -> usize {
        self.time_ns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.time_ns.is_empty()
    }

    /// Make room for `rows` more rows in every column at once (see `spill::Spill::offer`).
    pub fn reserve(&mut self, rows: usize) {
        reserve_columns!(self, rows; time_ns, link, backlog_bytes, backlog_pkts, enqueued_pkts, dequeued_pkts, dequeued_bytes, dropped_pkts, ecn_marked_pkts, tail_drops, aqm_drops, random_drops, sojourn_mean_ns, sojourn_max_ns, aqm_prob, aqm_dropping, aqm_avg_bytes);
    }

    pub fn push(&mut self, s: &QueueSample) {
        self.time_ns.push(s.time_ns);
        let c = self.link_dict.code(s.link);
        self.link.push(c);
        self.backlog_bytes.push(s.backlog_bytes);
        self.backlog_pkts.push(s.backlog_pkts);
        self.enqueued_pkts.push(s.stats.enqueued_pkts);
        self.dequeued_pkts.push(s.stats.dequeued_pkts);
        self.dequeued_bytes.push(s.stats.dequeued_bytes);
        self.dropped_pkts.push(s.stats.dropped_pkts);
        self.ecn_marked_pkts.push(s.stats.ecn_marked_pkts);
        self.tail_drops.push(s.stats.tail_drops);
        self.aqm_drops.push(s.stats.aqm_drops);
        self.random_drops.push(s.stats.random_drops);
        let w = s.sojourn;
        self.sojourn_mean_ns.push(if w.count > 0 { w.sum_ns as f64 / w.count as f64 } else { f64::NAN });
        self.sojourn_max_ns.push(w.max_ns);
        self.aqm_prob.push(s.aqm.prob);
        self.aqm_dropping.push(s.aqm.dropping);
        self.aqm_avg_bytes.push(s.aqm.avg_bytes);
    }

    pub fn finish(self) -> Table {
        Table {
            columns: vec![
                ("time_ns", Column::U64(self.time_ns)),
                ("link", Column::Dict { codes: self.link, values: self.link_dict.into_values() }),
                ("backlog_bytes", Column::U64(self.backlog_bytes)),
                ("backlog_pkts", Column::U64(self.backlog_pkts)),
                ("enqueued_pkts", Column::U64(self.enqueued_pkts)),
                ("dequeued_pkts", Column::U64(self.dequeued_pkts)),
                ("dequeued_bytes", Column::U64(self.dequeued_bytes)),
                ("dropped_pkts", Column::U64(self.dropped_pkts)),
                ("ecn_marked_pkts", Column::U64(self.ecn_marked_pkts)),
                ("tail_drops", Column::U64(self.tail_drops)),
                ("aqm_drops", Column::U64(self.aqm_drops)),
                ("random_drops", Column::U64(self.random_drops)),
                ("sojourn_mean_ns", Column::F64(self.sojourn_mean_ns)),
                ("sojourn_max_ns", Column::U64(self.sojourn_max_ns)),
                ("aqm_prob", Column::F64(self.aqm_prob)),
                ("aqm_dropping", Column::U64(self.aqm_dropping)),
                ("aqm_avg_bytes", Column::F64(self.aqm_avg_bytes)),
            ],
        }
    }
}

#[derive(Debug, Default)]
pub struct EventsBuilder {
    time_ns: Vec<u64>,
    kind: Vec<u32>,
    kind_dict: Interner,
    flow_id: Vec<i64>,
    link: Vec<u32>,
    link_dict: Interner,
    reason: Vec<u32>,
    reason_dict: Interner,
    value: Vec<f64>,
    value2: Vec<f64>,
}

impl EventsBuilder {
    /// Bytes one row takes in memory.
    pub const ROW_BYTES: usize = 4 * 8 + 3 * 4;

    pub fn len(&self) -> usize {
        self.time_ns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.time_ns.is_empty()
    }

    /// Make room for `rows` more rows in every column at once (see `spill::Spill::offer`).
    pub fn reserve(&mut self, rows: usize) {
        reserve_columns!(self, rows; time_ns, kind, flow_id, link, reason, value, value2);
    }

    /// Append one event. `flow_id` -1 and `link` "" mean "not applicable".
    #[allow(clippy::too_many_arguments)]
    pub fn push(&mut self, time_ns: u64, kind: &str, flow_id: i64, link: &str, reason: &str, value: f64, value2: f64) {
        self.time_ns.push(time_ns);
        let c = self.kind_dict.code(kind);
        self.kind.push(c);
        self.flow_id.push(flow_id);
        let c = self.link_dict.code(link);
        self.link.push(c);
        let c = self.reason_dict.code(reason);
        self.reason.push(c);
        self.value.push(value);
        self.value2.push(value2);
    }

    pub fn finish(self) -> Table {
        Table {
            columns: vec![
                ("time_ns", Column::U64(self.time_ns)),
                ("kind", Column::Dict { codes: self.kind, values: self.kind_dict.into_values() }),
                ("flow_id", Column::I64(self.flow_id)),
                ("link", Column::Dict { codes: self.link, values: self.link_dict.into_values() }),
                ("reason", Column::Dict { codes: self.reason, values: self.reason_dict.into_values() }),
                ("value", Column::F64(self.value)),
                ("value2", Column::F64(self.value2)),
            ],
        }
    }
}
