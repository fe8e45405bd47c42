//! CoDel — Controlled Delay (RFC 8289), as Linux `net/sched/sch_codel.c` with
//! `include/net/codel.h` and `codel_impl.h`. The state machine ([`CodelVars`],
//! [`codel_dequeue`]) is shared with FQ-CoDel, which runs one instance per flow.
//!
//! * A packet's sojourn time is measured at dequeue. CoDel enters the dropping state
//!   only when the sojourn time has stayed at or above `target` for a whole
//!   `interval` (and more than one MTU is queued); then it drops (or, with `ecn`,
//!   marks) and schedules the next drop at `interval / √count`, with 1/√count from
//!   Linux's Newton iteration on a 16-bit reciprocal.
//! * On re-entering the dropping state soon after leaving it (within 16 intervals),
//!   `count` resumes from the drops of the last cycle (`count - lastcount`).
//! * `ce_threshold`: packets whose sojourn exceeds it are CE-marked (never dropped),
//!   for DCTCP-style signalling.
//!
//! Defaults are `tc qdisc add ... codel`'s: limit 1000 packets, target 5 ms,
//! interval 100 ms, ecn off, no ce_threshold.

use serde::{Deserialize, Serialize};

use super::{mark_only, signal_congestion, AqmState, DropReason, Qdisc, QdiscCtx, Queued, Report, TimedFifo};
use crate::net::Packet;
use crate::units::Time;

pub const DEFAULT_TARGET_NS: Time = 5_000_000;
pub const DEFAULT_INTERVAL_NS: Time = 100_000_000;
pub const DEFAULT_LIMIT_PKTS: u64 = 1000;
/// Largest packet on the wire here (Linux: `psched_mtu`, the device MTU plus the
/// link-layer header); a queue of at most one MTU is never dropped from.
pub const DEFAULT_MTU_BYTES: u64 = 1500;

fn default_target() -> Time {
    DEFAULT_TARGET_NS
}
fn default_interval() -> Time {
    DEFAULT_INTERVAL_NS
}
fn default_limit() -> u64 {
    DEFAULT_LIMIT_PKTS
}
fn default_mtu() -> u64 {
    DEFAULT_MTU_BYTES
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CodelConfig {
    #[serde(default = "default_limit")]
    pub limit_packets: u64,
    #[serde(default = "default_target")]
    pub target_ns: Time,
    #[serde(default = "default_interval")]
    pub interval_ns: Time,
    #[serde(default)]
    pub ecn: bool,
    #[serde(default)]
    pub ce_threshold_ns: Option<Time>,
    #[serde(default = "default_mtu")]
    pub mtu_bytes: u64,
}

impl CodelConfig {
    pub fn validate(&self) -> Result<(), String> {
        if self.limit_packets == 0 || self.target_ns == 0 || self.interval_ns == 0 {
            return Err("codel: limit, target and interval must be > 0".into());
        }
        Ok(())
    }
    pub fn params(&self) -> CodelParams {
        CodelParams {
            target: self.target_ns,
            interval: self.interval_ns,
            mtu: self.mtu_bytes,
            ecn: self.ecn,
            ce_threshold: self.ce_threshold_ns,
        }
    }
}

/// The parameters `codel_dequeue` reads.
#[derive(Debug, Clone, Copy)]
pub struct CodelParams {
    pub target: Time,
    pub interval: Time,
    pub mtu: u64,
    pub ecn: bool,
    pub ce_threshold: Option<Time>,
}

/// 1/√count is kept in 16 bits (Linux `REC_INV_SQRT_BITS`).
const REC_INV_SQRT_SHIFT: u32 = 16;

/// Per-instance CoDel state (Linux `struct codel_vars`).
#[derive(Debug, Clone, Copy, Default)]
pub struct CodelVars {
    pub count: u32,
    pub lastcount: u32,
    pub dropping: bool,
    rec_inv_sqrt: u16,
    first_above_time: Option<Time>,
    pub drop_next: Time,
    /// Sojourn time of the last packet dequeued.
    pub ldelay: Time,
}

impl CodelVars {
    /// One Newton step towards 1/√count: x ← x (3 − count x²) / 2 (`codel_Newton_step`).
    fn newton_step(&mut self) {
        let invsqrt = (self.rec_inv_sqrt as u64) << REC_INV_SQRT_SHIFT;
        let invsqrt2 = (invsqrt * invsqrt) >> 32;
        let mut val = (3u64 << 32).wrapping_sub(self.count as u64 * invsqrt2);
        val >>= 2; // avoid overflow in the multiply below
        val = (val * invsqrt) >> (32 - 2 + 1);
        self.rec_inv_sqrt = (val >> REC_INV_SQRT_SHIFT) as u16;
    }

    /// t + interval / √count (`codel_control_law`).
    fn control_law(&self, t: Time, interval: Time) -> Time {
        t + ((interval * ((self.rec_inv_sqrt as u64) << REC_INV_SQRT_SHIFT)) >> 32)
    }

    /// `codel_should_drop`: has the sojourn time been above target for an interval?
    fn should_drop(&mut self, q: Option<&Queued>, p: &CodelParams, backlog: u64, now: Time) -> bool {
        let Some(q) = q else {
            self.first_above_time = None;
            return false;
        };
        self.ldelay = now - q.enqueued_at;
        if self.ldelay < p.target || backlog <= p.mtu {
            self.first_above_time = None;
            return false;
        }
        match self.first_above_time {
            None => {
                self.first_above_time = Some(now + p.interval);
                false
            }
            Some(t) => now > t,
        }
    }
}

/// Where CoDel takes packets from: `pop` removes the head (and its bytes from every
/// backlog count); `backlog` is the whole qdisc's backlog in bytes.
pub trait CodelSource {
    fn pop(&mut self) -> Option<Queued>;
    fn backlog(&self) -> u64;
}

/// CoDel's dequeue (`codel_dequeue` in `codel_impl.h`): returns the packet to send;
/// drops (and marks) go to `report`.
pub fn codel_dequeue(src: &mut impl CodelSource, p: &CodelParams, v: &mut CodelVars, now: Time, report: &mut Report) -> Option<Queued> {
    let Some(mut q) = src.pop() else {
        v.dropping = false;
        return None;
    };
    let mut drop = v.should_drop(Some(&q), p, src.backlog(), now);
    let out: Option<Queued>;
    if v.dropping {
        if !drop {
            v.dropping = false;
        } else if now >= v.drop_next {
            let mut cur = Some(q);
            while v.dropping && now >= v.drop_next {
                v.count = v.count.wrapping_add(1);
                v.newton_step();
                let mut head = cur.take().expect("a packet while dropping");
                if signal_congestion(&mut head.packet, p.ecn, report) {
                    v.drop_next = v.control_law(v.drop_next, p.interval);
                    cur = Some(head);
                    break;
                }
                report.drop(head.packet, DropReason::AqmDrop);
                cur = src.pop();
                if !v.should_drop(cur.as_ref(), p, src.backlog(), now) {
                    v.dropping = false;
                } else {
                    v.drop_next = v.control_law(v.drop_next, p.interval);
                }
            }
            return finish(cur, p, v, report);
        }
        out = Some(q);
    } else if drop {
        if signal_congestion(&mut q.packet, p.ecn, report) {
            out = Some(q);
        } else {
            report.drop(q.packet, DropReason::AqmDrop);
            out = src.pop();
            drop = v.should_drop(out.as_ref(), p, src.backlog(), now);
            let _ = drop; // Linux recomputes it here and does not use it further.
        }
        v.dropping = true;
        let delta = v.count.wrapping_sub(v.lastcount);
        if delta > 1 && (now as i64 - v.drop_next as i64) < 16 * p.interval as i64 {
            v.count = delta;
            v.newton_step();
        } else {
            v.count = 1;
            v.rec_inv_sqrt = (u32::MAX >> REC_INV_SQRT_SHIFT) as u16;
        }
        v.lastcount = v.count;
        v.drop_next = v.control_law(now, p.interval);
    } else {
        out = Some(q);
    }
    finish(out, p, v, report)
}

/// The `ce_threshold` marking at the end of `codel_dequeue`.
fn finish(out: Option<Queued>, p: &CodelParams, v: &CodelVars, report: &mut Report) -> Option<Queued> {
    let mut out = out?;
    if let Some(th) = p.ce_threshold {
        if v.ldelay > th {
            mark_only(&mut out.packet, report);
        }
    }
    Some(out)
}

impl CodelSource for TimedFifo {
    fn pop(&mut self) -> Option<Queued> {
        TimedFifo::pop(self)
    }
    fn backlog(&self) -> u64 {
        self.bytes()
    }
}

/// The `codel` qdisc: one CoDel instance over a packet-limited FIFO.
#[derive(Debug)]
pub struct Codel {
    limit: u64,
    params: CodelParams,
    vars: CodelVars,
    q: TimedFifo,
}

impl Codel {
    pub fn new(cfg: &CodelConfig) -> Self {
        Self { limit: cfg.limit_packets, params: cfg.params(), vars: CodelVars::default(), q: TimedFifo::default() }
    }
    pub fn vars(&self) -> &CodelVars {
        &self.vars
    }
}

impl Qdisc for Codel {
    fn enqueue(&mut self, p: Packet, ctx: &mut QdiscCtx, report: &mut Report) -> bool {
        if (self.q.len() as u64) < self.limit {
            self.q.push(p, ctx.now);
            return true;
        }
        report.drop(p, DropReason::TailDrop);
        false
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx, report: &mut Report) -> Option<Queued> {
        codel_dequeue(&mut self.q, &self.params, &mut self.vars, ctx.now, report)
    }

    fn backlog_bytes(&self) -> u64 {
        self.q.bytes()
    }
    fn backlog_pkts(&self) -> u64 {
        self.q.len() as u64
    }
    fn aqm_state(&self) -> AqmState {
        AqmState { dropping: self.vars.dropping as u64, ..AqmState::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{drain_at_rate, pkt, rng};
    use super::*;
    use crate::net::Ecn;
    use crate::units::ms;

    fn cfg() -> CodelConfig {
        CodelConfig {
            limit_packets: 100_000,
            target_ns: DEFAULT_TARGET_NS,
            interval_ns: DEFAULT_INTERVAL_NS,
            ecn: false,
            ce_threshold_ns: None,
            mtu_bytes: 1500,
        }
    }

    #[test]
    fn newton_iteration_tracks_inverse_square_root() {
        // Linux takes one Newton step per increment of count, so the estimate lags for
        // the first few counts (count 2 gives 0.5, not 0.707) and then tracks 1/√count.
        let mut v = CodelVars { count: 1, rec_inv_sqrt: (u32::MAX >> REC_INV_SQRT_SHIFT) as u16, ..Default::default() };
        for count in 2..2000u32 {
            v.count = count;
            v.newton_step();
            let exact = 1.0 / (count as f64).sqrt();
            let got = v.rec_inv_sqrt as f64 / 65536.0;
            if count == 2 {
                assert!((got - 0.5).abs() < 1e-3);
            }
            if count >= 6 {
                assert!((got - exact).abs() < 0.03 * exact, "count {count}: {got} vs {exact}");
            }
        }
    }

    /// A standing queue: arrivals at twice the drain rate for 2 s.
    fn overload(ecn: Ecn) -> (Vec<(Time, Time, Packet)>, Report) {
        let mut q = Codel::new(&CodelConfig { ecn: ecn != Ecn::NotEct, ..cfg() });
        let rate = 12_000_000; // 1000 pkt/s of 1500 B
        let arrivals: Vec<(Time, Packet)> = (0..4000u64).map(|i| (i * 500_000, pkt(0, i, 1500, ecn))).collect();
        drain_at_rate(&mut q, rate, &arrivals, 2_000_000_000)
    }

    #[test]
    fn enters_dropping_only_after_an_interval_above_target() {
        let (out, report) = overload(Ecn::NotEct);
        let first_drop_deq = out.iter().position(|&(_, s, _)| s >= DEFAULT_TARGET_NS).unwrap();
        let above_since = out[first_drop_deq].0;
        // The first drop happens at a dequeue more than one interval after the
        // sojourn time first reached the target, and not before.
        let first_drop_time = {
            let mut q = Codel::new(&cfg());
            let mut r = rng();
            let mut rep = Report::default();
            let rate_ns_per_pkt = 1_000_000;
            let mut t = 0;
            let mut i = 0u64;
            let mut when = None;
            while when.is_none() && t < 2_000_000_000 {
                while i * 500_000 <= t {
                    let mut ctx = QdiscCtx { now: i * 500_000, rng: &mut r };
                    q.enqueue(pkt(0, i, 1500, Ecn::NotEct), &mut ctx, &mut rep);
                    i += 1;
                }
                let mut ctx = QdiscCtx { now: t, rng: &mut r };
                q.dequeue(&mut ctx, &mut rep);
                if !rep.drops.is_empty() {
                    when = Some(t);
                }
                t += rate_ns_per_pkt;
            }
            when.unwrap()
        };
        assert!(first_drop_time > above_since + DEFAULT_INTERVAL_NS, "{first_drop_time} vs {above_since}");
        assert!(first_drop_time <= above_since + DEFAULT_INTERVAL_NS + ms(2));
        assert!(!report.drops.is_empty());
    }

    #[test]
    fn drops_are_spaced_by_interval_over_sqrt_count() {
        let mut q = Codel::new(&cfg());
        let mut r = rng();
        let mut rep = Report::default();
        // Keep the queue long and old: refill to 200 packets enqueued long ago.
        let mut drop_times = Vec::new();
        let mut t: Time = 0;
        let mut seq = 0;
        while drop_times.len() < 30 {
            while q.backlog_pkts() < 200 {
                let mut ctx = QdiscCtx { now: t.saturating_sub(ms(50)), rng: &mut r };
                q.enqueue(pkt(0, seq, 1500, Ecn::NotEct), &mut ctx, &mut rep);
                seq += 1;
            }
            let before = rep.drops.len();
            let mut ctx = QdiscCtx { now: t, rng: &mut r };
            q.dequeue(&mut ctx, &mut rep);
            if rep.drops.len() > before {
                drop_times.push(t);
            }
            t += 100_000; // 0.1 ms per dequeue
        }
        // Once dropping, the gap after the k-th drop is interval/√k: exactly the
        // interval after the first, then within the Newton error (see above) and the
        // 0.1 ms dequeue granularity.
        assert!((drop_times[1] - drop_times[0]).abs_diff(DEFAULT_INTERVAL_NS) <= 100_000);
        for k in 6..drop_times.len() {
            let gap = (drop_times[k] - drop_times[k - 1]) as f64;
            let expect = DEFAULT_INTERVAL_NS as f64 / (k as f64).sqrt();
            assert!((gap - expect).abs() < 0.04 * expect + 100_000.0, "gap {k}: {gap} vs {expect}");
        }
        assert!(q.vars().dropping);
    }

    /// The re-entry rule of `codel_dequeue` (Linux `codel_impl.h`, RFC 8289 section
    /// 5.5): entering the dropping state within 16 intervals of the last scheduled drop
    /// resumes with the previous cycle's drops (`count - lastcount`) if that is more
    /// than one; otherwise `count` restarts at 1. The first drop of a cycle comes at
    /// once and the next one `interval/sqrt(count)` after *now*.
    #[test]
    fn reentry_resumes_the_last_cycles_drop_count_within_16_intervals() {
        let interval = DEFAULT_INTERVAL_NS;
        let now: Time = 100 * interval;
        let enter = |count: u32, lastcount: u32, drop_next: Time| {
            let mut q = Codel::new(&cfg());
            let mut r = rng();
            let mut rep = Report::default();
            for seq in 0..20 {
                // Enqueued long ago: every sojourn is far above the target.
                q.enqueue(pkt(0, seq, 1500, Ecn::NotEct), &mut QdiscCtx { now: now - ms(50), rng: &mut r }, &mut rep);
            }
            let inv = |c: u32| ((65536.0 / (c as f64).sqrt()) as u32).min(0xFFFF) as u16;
            q.vars = CodelVars {
                count,
                lastcount,
                dropping: false,
                rec_inv_sqrt: inv(count),
                first_above_time: Some(now - 1), // above target for an interval already
                drop_next,
                ldelay: 0,
            };
            let sent = q.dequeue(&mut QdiscCtx { now, rng: &mut r }, &mut rep);
            assert!(sent.is_some());
            assert_eq!(rep.drops.len(), 1, "one drop on entering the dropping state");
            assert!(q.vars.dropping);
            assert_eq!(q.vars.lastcount, q.vars.count);
            q.vars
        };
        let gap = |v: &CodelVars| (v.drop_next - now) as f64;
        // 40 drops in the last cycle, re-entering 5 intervals after its last drop.
        let v = enter(50, 10, now - 5 * interval);
        assert_eq!(v.count, 40);
        let expect = interval as f64 / 40f64.sqrt();
        assert!((gap(&v) - expect).abs() < 0.03 * expect, "{} vs {expect}", gap(&v));
        // Just inside and just outside 16 intervals.
        assert_eq!(enter(50, 10, now - 16 * interval + 1).count, 40);
        let v = enter(50, 10, now - 16 * interval);
        assert_eq!(v.count, 1);
        // reciprocal_scale(interval, 0xFFFF << 16): 1/sqrt(1) is 0xFFFF/65536 in 16 bits.
        assert_eq!(v.drop_next, now + ((interval * (0xFFFF << 16)) >> 32));
        // A last cycle of one drop (delta 1) restarts too.
        assert_eq!(enter(11, 10, now - interval).count, 1);
    }

    #[test]
    fn leaving_the_dropping_state_keeps_count() {
        // Linux touches count only when dropping (or entering): a dequeue below the
        // target leaves the dropping state and keeps count and lastcount for re-entry.
        let mut q = Codel::new(&cfg());
        let mut r = rng();
        let mut rep = Report::default();
        let now: Time = 10 * DEFAULT_INTERVAL_NS;
        for seq in 0..20 {
            q.enqueue(pkt(0, seq, 1500, Ecn::NotEct), &mut QdiscCtx { now, rng: &mut r }, &mut rep);
        }
        q.vars = CodelVars { count: 70, lastcount: 20, dropping: true, drop_next: now, ..Default::default() };
        assert!(q.dequeue(&mut QdiscCtx { now, rng: &mut r }, &mut rep).is_some());
        assert!(rep.drops.is_empty());
        assert!(!q.vars.dropping);
        assert_eq!((q.vars.count, q.vars.lastcount), (70, 20));
    }

    #[test]
    fn with_ecn_marks_instead_of_dropping() {
        let (out, report) = overload(Ecn::Ect);
        assert!(report.drops.iter().all(|(_, r)| *r == DropReason::TailDrop));
        assert!(!report.marks.is_empty());
        assert!(out.iter().any(|(_, _, p)| p.ecn == Ecn::Ce));
        let (_, plain) = overload(Ecn::NotEct);
        assert!(plain.drops.iter().any(|(_, r)| *r == DropReason::AqmDrop));
        assert!(plain.marks.is_empty());
    }

    #[test]
    fn ce_threshold_marks_without_dropping() {
        let mut q = Codel::new(&CodelConfig { ce_threshold_ns: Some(ms(1)), target_ns: ms(1000), ..cfg() });
        let arrivals: Vec<(Time, Packet)> = (0..200u64).map(|i| (i * 500_000, pkt(0, i, 1500, Ecn::Ect))).collect();
        let (out, report) = drain_at_rate(&mut q, 12_000_000, &arrivals, 1_000_000_000);
        assert!(report.drops.is_empty());
        let marked = out.iter().filter(|(_, _, p)| p.ecn == Ecn::Ce).count();
        let over = out.iter().filter(|(_, s, _)| *s > ms(1)).count();
        assert_eq!(marked, over);
        assert!(marked > 0);
    }
}
