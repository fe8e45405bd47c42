//! PIE — Proportional Integral controller Enhanced (RFC 8033), as Linux
//! `net/sched/sch_pie.c` with `include/net/pie.h`. The controller ([`PieParams`],
//! [`PieVars`]) is shared with FQ-PIE, which runs one instance per flow.
//!
//! * Every `tupdate` the drop probability moves by α·(qdelay − target) +
//!   β·(qdelay − qdelay_old), with α, β scaled down while the probability is small
//!   (RFC 8033 §4.2 / Linux), capped to +2 % per step above 10 %, +2 % more when the
//!   delay exceeds 250 ms, and decayed by 1/64 when the queue stays empty.
//!   Linux runs this from a timer; here it runs lazily, for every `tupdate` tick
//!   that has passed, before each enqueue and dequeue (the state between events
//!   does not change, so the result is the same).
//! * qdelay is the sojourn time of the last dequeued packet (the timestamp mode,
//!   Linux's default), or with `dq_rate_estimator` the backlog divided by the
//!   average dequeue rate measured over 16 KiB cycles (RFC 8033 §5.3).
//! * On arrival: no early drop during the 150 ms burst allowance, when the delay is
//!   below target/2 and the probability below 20 %, or with less than two MTUs
//!   queued; otherwise the probability accumulates ("derandomisation", RFC 8033
//!   §5.1) and decides. With `ecn`, ECN-capable packets are marked instead while
//!   the probability is at most 10 %. `bytemode` scales it by size/MTU.
//!
//! Defaults are `tc qdisc add ... pie`'s: limit 1000 packets, target 15 ms,
//! tupdate 15 ms, alpha 2/16, beta 20/16, ecn off, bytemode off, timestamps.
//!
//! Deviation: the probability is a double in [0, 1] rather than a u64 fraction of
//! 2^56, and delays are in ns rather than 64 ns scheduler ticks.

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::{signal_congestion, AqmState, DropReason, Qdisc, QdiscCtx, Queued, Report, TimedFifo};
use crate::net::Packet;
use crate::units::{ms, Time, NS_PER_SEC};

pub const DEFAULT_TARGET_NS: Time = 15_000_000;
pub const DEFAULT_TUPDATE_NS: Time = 15_000_000;
pub const DEFAULT_LIMIT_PKTS: u64 = 1000;
/// alpha and beta in units of 1/16, as tc takes them.
pub const DEFAULT_ALPHA: u32 = 2;
pub const DEFAULT_BETA: u32 = 20;
const MAX_BURST_NS: Time = 150_000_000;
/// Bytes of dequeues over which one drain-rate sample is taken (`QUEUE_THRESHOLD`).
const QUEUE_THRESHOLD: u64 = 16384;

fn default_target() -> Time {
    DEFAULT_TARGET_NS
}
fn default_tupdate() -> Time {
    DEFAULT_TUPDATE_NS
}
fn default_limit() -> u64 {
    DEFAULT_LIMIT_PKTS
}
fn default_alpha() -> u32 {
    DEFAULT_ALPHA
}
fn default_beta() -> u32 {
    DEFAULT_BETA
}
fn default_mtu() -> u64 {
    super::codel::DEFAULT_MTU_BYTES
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PieConfig {
    #[serde(default = "default_limit")]
    pub limit_packets: u64,
    #[serde(default = "default_target")]
    pub target_ns: Time,
    #[serde(default = "default_tupdate")]
    pub tupdate_ns: Time,
    #[serde(default = "default_alpha")]
    pub alpha: u32,
    #[serde(default = "default_beta")]
    pub beta: u32,
    #[serde(default)]
    pub ecn: bool,
    #[serde(default)]
    pub bytemode: bool,
    #[serde(default)]
    pub dq_rate_estimator: bool,
    #[serde(default = "default_mtu")]
    pub mtu_bytes: u64,
}

impl PieConfig {
    pub fn validate(&self) -> Result<(), String> {
        if self.limit_packets == 0 || self.target_ns == 0 || self.tupdate_ns == 0 {
            return Err("pie: limit, target and tupdate must be > 0".into());
        }
        if self.alpha > 32 || self.beta > 32 {
            return Err(format!("pie: alpha ({}) and beta ({}) must be in 0..=32 (units of 1/16)", self.alpha, self.beta));
        }
        Ok(())
    }
    pub fn params(&self) -> PieParams {
        PieParams {
            target: self.target_ns,
            tupdate: self.tupdate_ns,
            alpha: self.alpha as f64 / 16.0,
            beta: self.beta as f64 / 16.0,
            ecn: self.ecn,
            bytemode: self.bytemode,
            dq_rate_estimator: self.dq_rate_estimator,
            mtu: self.mtu_bytes,
            ecn_prob: 0.1,
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct PieParams {
    pub target: Time,
    pub tupdate: Time,
    /// Gains per second of delay error (tc's value / 16).
    pub alpha: f64,
    pub beta: f64,
    pub ecn: bool,
    pub bytemode: bool,
    pub dq_rate_estimator: bool,
    pub mtu: u64,
    /// Mark instead of dropping only while the probability is at most this.
    pub ecn_prob: f64,
}

/// Per-instance PIE state (Linux `struct pie_vars`).
#[derive(Debug, Clone, Copy)]
pub struct PieVars {
    pub prob: f64,
    pub accu_prob: f64,
    pub qdelay: Time,
    pub qdelay_old: Time,
    pub burst_time: Time,
    dq_tstamp: Option<Time>,
    dq_count: Option<u64>,
    /// Average drain rate (bytes/ns), 0 = none yet.
    avg_dq_rate: f64,
}

impl Default for PieVars {
    fn default() -> Self {
        Self {
            prob: 0.0,
            accu_prob: 0.0,
            qdelay: 0,
            qdelay_old: 0,
            burst_time: MAX_BURST_NS,
            dq_tstamp: None,
            dq_count: None,
            avg_dq_rate: 0.0,
        }
    }
}

impl PieVars {
    /// `pie_vars_init`: restart the measurement cycle (the probability is kept).
    fn restart(&mut self) {
        self.burst_time = MAX_BURST_NS;
        self.dq_tstamp = None;
        self.accu_prob = 0.0;
        self.dq_count = None;
        self.avg_dq_rate = 0.0;
    }

    /// `pie_drop_early`: should this arrival be dropped (or marked)?
    pub fn drop_early(&mut self, p: &PieParams, backlog: u64, packet_bytes: u64, rng: &mut impl Rng) -> bool {
        if self.burst_time > 0 {
            return false;
        }
        if self.qdelay < p.target / 2 && self.prob < 0.2 {
            return false;
        }
        if backlog < 2 * p.mtu {
            return false;
        }
        let local = if p.bytemode && packet_bytes <= p.mtu { self.prob * packet_bytes as f64 / p.mtu as f64 } else { self.prob };
        if local == 0.0 {
            self.accu_prob = 0.0;
        } else {
            self.accu_prob += local;
        }
        if self.accu_prob < 0.85 {
            return false;
        }
        if self.accu_prob >= 8.5 {
            return true;
        }
        if rng.gen::<f64>() < local {
            self.accu_prob = 0.0;
            return true;
        }
        false
    }

    /// `pie_process_dequeue`: update qdelay (timestamps) or the drain-rate estimate.
    pub fn on_dequeue(&mut self, p: &PieParams, q: &Queued, backlog_after: u64, now: Time) {
        let dtime;
        if !p.dq_rate_estimator {
            self.qdelay = now - q.enqueued_at;
            dtime = self.dq_tstamp.map_or(0, |t| now - t);
            self.dq_tstamp = Some(now);
            if backlog_after == 0 {
                self.qdelay = 0;
            }
            if dtime == 0 {
                return;
            }
        } else {
            if backlog_after >= QUEUE_THRESHOLD && self.dq_count.is_none() {
                self.dq_tstamp = Some(now);
                self.dq_count = Some(0);
            }
            let Some(count) = self.dq_count else { return };
            let count = count + q.packet.wire_bytes as u64;
            self.dq_count = Some(count);
            if count < QUEUE_THRESHOLD {
                return;
            }
            dtime = now - self.dq_tstamp.expect("set with dq_count");
            if dtime == 0 {
                return;
            }
            let rate = count as f64 / dtime as f64;
            self.avg_dq_rate = if self.avg_dq_rate == 0.0 { rate } else { self.avg_dq_rate * 7.0 / 8.0 + rate / 8.0 };
            if backlog_after < QUEUE_THRESHOLD {
                self.dq_count = None;
            } else {
                self.dq_count = Some(0);
                self.dq_tstamp = Some(now);
            }
        }
        self.burst_time = self.burst_time.saturating_sub(dtime);
    }

    /// `pie_calculate_probability`, run every `tupdate`.
    pub fn update_probability(&mut self, p: &PieParams, backlog: u64) {
        let (qdelay, qdelay_old) = if p.dq_rate_estimator {
            self.qdelay_old = self.qdelay;
            let d = if self.avg_dq_rate > 0.0 { (backlog as f64 / self.avg_dq_rate) as Time } else { 0 };
            (d, self.qdelay_old)
        } else {
            (self.qdelay, self.qdelay_old)
        };
        let mut update = !(qdelay == 0 && backlog != 0);
        let (mut alpha, mut beta) = (p.alpha, p.beta);
        if self.prob < 0.1 {
            alpha /= 2.0;
            beta /= 2.0;
            let mut power = 100.0;
            while self.prob < 1.0 / power && power <= 1_000_000.0 {
                alpha /= 4.0;
                beta /= 4.0;
                power *= 10.0;
            }
        }
        let secs = |t: Time| t as f64 / NS_PER_SEC as f64;
        let mut delta = alpha * (secs(qdelay) - secs(p.target)) + beta * (secs(qdelay) - secs(qdelay_old));
        if delta > 0.02 && self.prob >= 0.1 {
            delta = 0.02;
        }
        if qdelay > ms(250) {
            delta += 0.02;
        }
        self.prob += delta;
        if self.prob >= 1.0 {
            self.prob = 1.0;
            update = false;
        }
        if self.prob < 0.0 {
            self.prob = 0.0;
        }
        if qdelay == 0 && qdelay_old == 0 && update {
            self.prob -= self.prob / 64.0;
        }
        self.qdelay = qdelay;
        if self.qdelay < p.target / 2 && self.qdelay_old < p.target / 2 && self.prob == 0.0 && (!p.dq_rate_estimator || self.avg_dq_rate > 0.0) {
            self.restart();
        }
        if !p.dq_rate_estimator {
            self.qdelay_old = qdelay;
        }
    }

    /// Whether one more `update_probability` with an empty, quiet queue would change
    /// nothing (FQ-PIE skips such flows).
    pub fn is_quiescent(&self) -> bool {
        self.prob == 0.0
            && self.qdelay == 0
            && self.qdelay_old == 0
            && self.burst_time == MAX_BURST_NS
            && self.accu_prob == 0.0
            && self.dq_tstamp.is_none()
            && self.dq_count.is_none()
            && self.avg_dq_rate == 0.0
    }
}

/// The `pie` qdisc: one PIE controller over a packet-limited FIFO.
#[derive(Debug)]
pub struct Pie {
    limit: u64,
    params: PieParams,
    vars: PieVars,
    q: TimedFifo,
    next_update: Time,
}

impl Pie {
    pub fn new(cfg: &PieConfig) -> Self {
        let params = cfg.params();
        Self { limit: cfg.limit_packets, params, vars: PieVars::default(), q: TimedFifo::default(), next_update: params.tupdate }
    }

    fn catch_up(&mut self, now: Time) {
        while now >= self.next_update {
            self.vars.update_probability(&self.params, self.q.bytes());
            self.next_update += self.params.tupdate;
            if self.q.is_empty() && self.vars.is_quiescent() {
                // Further idle updates change nothing: jump to the last tick.
                let skipped = now.saturating_sub(self.next_update) / self.params.tupdate;
                self.next_update += skipped * self.params.tupdate;
            }
        }
    }

    pub fn vars(&self) -> &PieVars {
        &self.vars
    }
}

impl Qdisc for Pie {
    fn enqueue(&mut self, mut p: Packet, ctx: &mut QdiscCtx, report: &mut Report) -> bool {
        self.catch_up(ctx.now);
        if self.q.len() as u64 >= self.limit {
            self.vars.accu_prob = 0.0;
            report.drop(p, DropReason::TailDrop);
            return false;
        }
        let admit = !self.vars.drop_early(&self.params, self.q.bytes(), p.wire_bytes as u64, ctx.rng)
            || (self.vars.prob <= self.params.ecn_prob && signal_congestion(&mut p, self.params.ecn, report));
        if !admit {
            self.vars.accu_prob = 0.0;
            report.drop(p, DropReason::AqmDrop);
            return false;
        }
        self.q.push(p, ctx.now);
        true
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx, _report: &mut Report) -> Option<Queued> {
        self.catch_up(ctx.now);
        let q = self.q.pop()?;
        self.vars.on_dequeue(&self.params, &q, self.q.bytes(), ctx.now);
        Some(q)
    }

    fn backlog_bytes(&self) -> u64 {
        self.q.bytes()
    }
    fn backlog_pkts(&self) -> u64 {
        self.q.len() as u64
    }
    fn aqm_state(&self) -> AqmState {
        AqmState { prob: self.vars.prob, ..AqmState::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{drain_at_rate, pkt};
    use super::*;
    use crate::net::Ecn;

    fn cfg() -> PieConfig {
        PieConfig {
            limit_packets: 100_000,
            target_ns: DEFAULT_TARGET_NS,
            tupdate_ns: DEFAULT_TUPDATE_NS,
            alpha: DEFAULT_ALPHA,
            beta: DEFAULT_BETA,
            ecn: false,
            bytemode: false,
            dq_rate_estimator: false,
            mtu_bytes: 1500,
        }
    }

    /// An unresponsive source at 1.5x a 12 Mbit/s link: the probability must rise
    /// until about a third of the arrivals are dropped.
    #[test]
    fn probability_rises_under_persistent_overload() {
        for est in [false, true] {
            let mut q = Pie::new(&PieConfig { dq_rate_estimator: est, ..cfg() });
            let arrivals: Vec<(Time, Packet)> = (0..15_000u64).map(|i| (i * 666_667, pkt(0, i, 1500, Ecn::NotEct))).collect();
            let (_, report) = drain_at_rate(&mut q, 12_000_000, &arrivals, 10 * NS_PER_SEC);
            assert!(q.vars().prob > 0.2, "estimator {est}: prob {}", q.vars().prob);
            let dropped = report.drops.iter().filter(|(_, r)| *r == DropReason::AqmDrop).count();
            assert!(dropped > 3000, "estimator {est}: {dropped} drops");
        }
    }

    /// A responsive-enough load: a source whose rate backs off with each drop (AIMD)
    /// settles with the queueing delay near target.
    #[test]
    fn queueing_delay_settles_near_target() {
        let mut q = Pie::new(&cfg());
        let mut r = super::super::testing::rng();
        let mut rep = Report::default();
        let link_ns_per_pkt: Time = 1_000_000; // 12 Mbit/s, 1500 B
        let mut rate = 1.0f64; // packets per ms offered
        let (mut t, mut next_arrival, mut next_tx) = (0u64, 0u64, 0u64);
        let mut seq = 0;
        let mut delays = Vec::new();
        while t < 60 * NS_PER_SEC {
            if next_arrival <= next_tx {
                t = next_arrival;
                let before = rep.drops.len();
                let mut ctx = QdiscCtx { now: t, rng: &mut r };
                q.enqueue(pkt(0, seq, 1500, Ecn::NotEct), &mut ctx, &mut rep);
                seq += 1;
                if rep.drops.len() > before {
                    rate *= 0.5;
                } else {
                    rate += 0.01; // additive increase per packet
                }
                next_arrival = t + (1_000_000.0 / rate.max(0.05)) as Time;
            } else {
                t = next_tx;
                let mut ctx = QdiscCtx { now: t, rng: &mut r };
                match q.dequeue(&mut ctx, &mut rep) {
                    Some(d) => {
                        if t > 20 * NS_PER_SEC {
                            delays.push(t - d.enqueued_at);
                        }
                        next_tx = t + link_ns_per_pkt;
                    }
                    None => next_tx = next_arrival,
                }
            }
        }
        let mean = delays.iter().sum::<u64>() as f64 / delays.len() as f64;
        assert!(mean > 0.3 * DEFAULT_TARGET_NS as f64 && mean < 2.0 * DEFAULT_TARGET_NS as f64, "mean delay {mean} ns");
    }

    #[test]
    fn with_ecn_marks_while_probability_is_low() {
        let mut r = super::super::testing::rng();
        let mut rep = Report::default();
        let decide = |prob: f64, ecn: Ecn, rep: &mut Report, r: &mut crate::sim::SimRng| {
            let mut q = Pie::new(&PieConfig { ecn: true, ..cfg() });
            for i in 0..10 {
                q.q.push(pkt(1, i, 1500, Ecn::NotEct), 0);
            }
            // Past the burst allowance, delay high, accumulated probability over 8.5:
            // the early-drop test says "signal" for sure.
            q.vars = PieVars { prob, qdelay: ms(100), burst_time: 0, accu_prob: 9.0, ..PieVars::default() };
            let mut ctx = QdiscCtx { now: 0, rng: r };
            q.enqueue(pkt(0, 0, 1500, ecn), &mut ctx, rep)
        };
        assert!(decide(0.05, Ecn::Ect, &mut rep, &mut r), "ECT at 5 %: marked and queued");
        assert_eq!(rep.marks.len(), 1);
        assert!(!decide(0.05, Ecn::NotEct, &mut rep, &mut r), "Not-ECT: dropped");
        assert!(!decide(0.5, Ecn::Ect, &mut rep, &mut r), "ECT above 10 %: dropped");
        assert_eq!(rep.marks.len(), 1);
        assert_eq!(rep.drops.len(), 2);
    }

    #[test]
    fn idle_catch_up_ends_at_the_current_tick() {
        // A long idle period is skipped in one step once nothing can change.
        let mut q = Pie::new(&cfg());
        q.catch_up(ms(1));
        q.catch_up(ms(40));
        assert_eq!(q.next_update, ms(45));
        q.catch_up(3600 * NS_PER_SEC);
        assert!(q.next_update > 3600 * NS_PER_SEC && q.next_update <= 3600 * NS_PER_SEC + ms(15));
    }

    #[test]
    fn no_early_drop_during_the_burst_allowance() {
        let mut v = PieVars { prob: 0.5, qdelay: ms(100), ..PieVars::default() };
        let p = cfg().params();
        let mut r = super::super::testing::rng();
        assert!(!v.drop_early(&p, 1_000_000, 1500, &mut r));
        v.burst_time = 0;
        v.accu_prob = 9.0;
        assert!(v.drop_early(&p, 1_000_000, 1500, &mut r));
    }
}
