//! Network-side tables: `links` (one row per link: its configuration and byte
//! counters at the end of the run and its queue's counters at the warm-up) and `sojourn` (sampled per-packet queueing delays
//! of the recorded queues, for delay percentiles). Columns are documented in
//! `docs/results-format.md`.

use super::{Column, Interner, Table};
use crate::net::Link;
use crate::units::Time;

/// Every `SOJOURN_SAMPLE_EVERY`-th packet dequeued from a recorded queue has its
/// sojourn time kept (a systematic sample: unbiased for percentiles, bounded size).
pub const SOJOURN_SAMPLE_EVERY: u64 = 10;

/// The `links` table at the end of a run.
pub fn links_table(links: &[Link]) -> Table {
    let mut names = Interner::default();
    let mut codes = Vec::with_capacity(links.len());
    let (mut rate, mut delay, mut tx_pkts, mut tx_bytes) = (vec![], vec![], vec![], vec![]);
    let (mut enq, mut dropped, mut marked, mut recorded) = (vec![], vec![], vec![], vec![]);
    let (mut enq_w, mut dropped_w, mut marked_w) = (vec![], vec![], vec![]);
    for l in links {
        codes.push(names.code(&l.name));
        rate.push(l.rate_bps);
        delay.push(l.delay);
        tx_pkts.push(l.tx_pkts);
        tx_bytes.push(l.tx_bytes);
        enq.push(l.queue.stats.enqueued_pkts);
        dropped.push(l.queue.stats.dropped_pkts);
        marked.push(l.queue.stats.ecn_marked_pkts);
        recorded.push(l.recorded);
        enq_w.push(l.stats_at_warmup.enqueued_pkts);
        dropped_w.push(l.stats_at_warmup.dropped_pkts);
        marked_w.push(l.stats_at_warmup.ecn_marked_pkts);
    }
    Table {
        columns: vec![
            ("link", Column::Dict { codes, values: names.into_values() }),
            ("rate_bps", Column::U64(rate)),
            ("delay_ns", Column::U64(delay)),
            ("tx_pkts", Column::U64(tx_pkts)),
            ("tx_bytes", Column::U64(tx_bytes)),
            ("enqueued_pkts", Column::U64(enq)),
            ("dropped_pkts", Column::U64(dropped)),
            ("ecn_marked_pkts", Column::U64(marked)),
            ("recorded", Column::Bool(recorded)),
            ("enqueued_pkts_at_warmup", Column::U64(enq_w)),
            ("dropped_pkts_at_warmup", Column::U64(dropped_w)),
            ("ecn_marked_pkts_at_warmup", Column::U64(marked_w)),
        ],
    }
}

/// Sojourn samples of the recorded queues, in time order per link.
#[derive(Debug, Default)]
pub struct SojournBuilder {
    time_ns: Vec<u64>,
    link: Vec<u32>,
    link_dict: Interner,
    sojourn_ns: Vec<u64>,
}

impl SojournBuilder {
    pub fn len(&self) -> usize {
        self.time_ns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.time_ns.is_empty()
    }

    /// Make room for `rows` more rows in every column at once (see `spill::Spill::offer`).
    pub fn reserve(&mut self, rows: usize) {
        reserve_columns!(self, rows; time_ns, link, sojourn_ns);
    }

    pub fn extend(&mut self, link: &str, samples: &mut Vec<(Time, Time)>) {
        if samples.is_empty() {
            return;
        }
        let code = self.link_dict.code(link);
        for (t, s) in samples.drain(..) {
            self.time_ns.push(t);
            self.link.push(code);
            self.sojourn_ns.push(s);
        }
    }

    pub fn finish(self) -> Table {
        Table {
            columns: vec![
                ("time_ns", Column::U64(self.time_ns)),
                ("link", Column::Dict { codes: self.link, values: self.link_dict.into_values() }),
                ("sojourn_ns", Column::U64(self.sojourn_ns)),
            ],
        }
    }
}
