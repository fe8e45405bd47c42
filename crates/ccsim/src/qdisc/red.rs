//! RED — Random Early Detection (Floyd & Jacobson 1993), as Linux `net/sched/sch_red.c`
//! with `include/net/red.h`, configured the way `tc qdisc add ... red` does
//! (iproute2 `tc/q_red.c`, `tc/tc_red.c`):
//!
//! * On every arrival the average queue `qavg` (bytes) is updated by an EWMA with
//!   weight W = 2^-Wlog, Wlog derived from `burst` exactly as `tc_red_eval_ewma`;
//!   after an idle period `qavg` decays as if `idle × bandwidth / avpkt` empty
//!   packets had arrived (`red_calc_qavg_from_idle_time`).
//! * Below `min` nothing happens; from `max` on every packet is marked or dropped
//!   ("hard mark"); in between the probability rises linearly to `probability`
//!   (max_P), spread uniformly over arrivals with Linux's `qcount`/`qR` method.
//! * Marking follows [`super::signal_congestion`]; `harddrop` drops above `max`
//!   even ECN-capable packets. The child queue is a bfifo of `limit` bytes.
//! * `adaptive` (ARED, Floyd et al. 2001; `red_adaptative_algo`) moves max_P every
//!   500 ms to keep `qavg` between min + 0.4·(max−min) and min + 0.6·(max−min).
//!
//! Deviation: `qavg` is a double rather than a fixed-point integer, and the idle
//! decay is the exact power (1−W)^m rather than Linux's shift-table approximation.

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::{signal_congestion, AqmState, DropReason, Qdisc, QdiscCtx, Queued, Report, TimedFifo};
use crate::net::Packet;
use crate::units::{Time, NS_PER_SEC};

/// `tc red` defaults: avpkt 1000, probability 0.02, bandwidth 10Mbit.
pub const DEFAULT_AVPKT_BYTES: u64 = 1000;
pub const DEFAULT_PROBABILITY: f64 = 0.02;
pub const DEFAULT_BANDWIDTH_BPS: u64 = 10_000_000;
/// ARED period (`HZ/2`) and bounds of max_P (`MAX_P_MIN`, `MAX_P_MAX`).
const ADAPT_PERIOD_NS: Time = 500_000_000;
const MAX_P_MIN: f64 = 0.01;
const MAX_P_MAX: f64 = 0.50;

fn default_avpkt() -> u64 {
    DEFAULT_AVPKT_BYTES
}
fn default_probability() -> f64 {
    DEFAULT_PROBABILITY
}
fn default_bandwidth() -> u64 {
    DEFAULT_BANDWIDTH_BPS
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RedConfig {
    /// Hard limit of the queue (bytes), as tc's `limit`.
    pub limit_bytes: u64,
    /// `min` and `max` thresholds of the average queue (bytes).
    pub min_bytes: u64,
    pub max_bytes: u64,
    #[serde(default = "default_avpkt")]
    pub avpkt_bytes: u64,
    /// `burst` in packets; default (2·min + max) / (3·avpkt) as tc.
    #[serde(default)]
    pub burst_pkts: Option<u64>,
    /// max_P, the marking probability reached at `max`.
    #[serde(default = "default_probability")]
    pub probability: f64,
    /// Rate used to age the average over idle periods (tc `bandwidth`).
    #[serde(default = "default_bandwidth")]
    pub bandwidth_bps: u64,
    #[serde(default)]
    pub ecn: bool,
    #[serde(default)]
    pub harddrop: bool,
    #[serde(default)]
    pub adaptive: bool,
}

impl RedConfig {
    pub fn burst(&self) -> u64 {
        self.burst_pkts.unwrap_or((2 * self.min_bytes + self.max_bytes) / (3 * self.avpkt_bytes.max(1)))
    }

    /// Wlog as iproute2's `tc_red_eval_ewma`: the smallest W = 2^-Wlog for which a
    /// burst of `burst` packets arriving at an empty queue keeps the average below min.
    pub fn wlog(&self) -> Result<u32, String> {
        let burst = self.burst() as f64;
        let a = burst + 1.0 - self.min_bytes as f64 / self.avpkt_bytes as f64;
        if a < 1.0 {
            return Err(format!(
                "burst {} is too small for min {} bytes and avpkt {} bytes; try burst {}",
                self.burst(),
                self.min_bytes,
                self.avpkt_bytes,
                1 + self.min_bytes / self.avpkt_bytes
            ));
        }
        let mut w = 0.5f64;
        for wlog in 1..32 {
            if a <= (1.0 - (1.0 - w).powf(burst)) / w {
                return Ok(wlog);
            }
            w /= 2.0;
        }
        Err(format!("burst {} gives no EWMA weight (Wlog >= 32)", self.burst()))
    }

    pub fn validate(&self) -> Result<(), String> {
        if self.limit_bytes == 0 || self.avpkt_bytes == 0 || self.bandwidth_bps == 0 {
            return Err("red: limit, avpkt and bandwidth must be > 0".into());
        }
        if !(self.min_bytes < self.max_bytes && self.max_bytes <= self.limit_bytes) {
            return Err(format!(
                "red: need min < max <= limit (min {} bytes, max {} bytes, limit {} bytes)",
                self.min_bytes, self.max_bytes, self.limit_bytes
            ));
        }
        if !(self.probability > 0.0 && self.probability <= 1.0) {
            return Err(format!("red: probability {} is not in (0, 1]", self.probability));
        }
        self.wlog().map(|_| ()).map_err(|e| format!("red: {e}"))
    }
}

#[derive(Debug)]
pub struct Red {
    cfg: RedConfig,
    w: f64,
    max_p: f64,
    q: TimedFifo,
    qavg: f64,
    /// −1 after a below-min or hard decision, else arrivals since the last mark.
    qcount: i64,
    /// Uniform [0, 1) draw; a mark happens once pb · qcount reaches it.
    qr: f64,
    idle_since: Option<Time>,
    next_adapt: Time,
}

impl Red {
    pub fn new(cfg: &RedConfig) -> Self {
        let wlog = cfg.wlog().expect("validated");
        Self {
            cfg: cfg.clone(),
            w: 0.5f64.powi(wlog as i32),
            max_p: cfg.probability,
            q: TimedFifo::default(),
            qavg: 0.0,
            qcount: -1,
            qr: 0.0,
            idle_since: Some(0),
            next_adapt: ADAPT_PERIOD_NS,
        }
    }

    /// The average the queue would have at `now` (no arrival): decayed over idle time.
    fn qavg_at(&self, now: Time) -> f64 {
        match self.idle_since {
            Some(t0) => {
                let idle_ns = now.saturating_sub(t0) as f64;
                let m = idle_ns * self.cfg.bandwidth_bps as f64 / (8.0 * self.cfg.avpkt_bytes as f64 * NS_PER_SEC as f64);
                self.qavg * (1.0 - self.w).powf(m)
            }
            None => self.qavg,
        }
    }

    fn adapt_until(&mut self, now: Time) {
        while self.cfg.adaptive && now >= self.next_adapt {
            let qavg = self.qavg_at(self.next_adapt);
            let delta = (self.cfg.max_bytes - self.cfg.min_bytes) as f64 / 5.0;
            let (target_min, target_max) = (self.cfg.min_bytes as f64 + 2.0 * delta, self.cfg.min_bytes as f64 + 3.0 * delta);
            if qavg > target_max && self.max_p <= MAX_P_MAX {
                self.max_p += (self.max_p / 4.0).min(MAX_P_MIN);
            } else if qavg < target_min && self.max_p >= MAX_P_MIN {
                self.max_p *= 0.9;
            }
            self.next_adapt += ADAPT_PERIOD_NS;
        }
    }

    /// The probability pb of the linear ramp at the current average.
    pub fn ramp_probability(&self) -> f64 {
        let (min, max) = (self.cfg.min_bytes as f64, self.cfg.max_bytes as f64);
        if self.qavg < min {
            0.0
        } else if self.qavg >= max {
            1.0
        } else {
            self.max_p * (self.qavg - min) / (max - min)
        }
    }

    pub fn qavg(&self) -> f64 {
        self.qavg
    }
}

enum Decision {
    Pass,
    Prob,
    Hard,
}

impl Qdisc for Red {
    fn enqueue(&mut self, mut p: Packet, ctx: &mut QdiscCtx, report: &mut Report) -> bool {
        self.adapt_until(ctx.now);
        let backlog = self.q.bytes() as f64;
        self.qavg = if self.idle_since.is_some() { self.qavg_at(ctx.now) } else { self.qavg + (backlog - self.qavg) * self.w };
        self.idle_since = None;
        let (min, max) = (self.cfg.min_bytes as f64, self.cfg.max_bytes as f64);
        let decision = if self.qavg < min {
            self.qcount = -1;
            Decision::Pass
        } else if self.qavg >= max {
            self.qcount = -1;
            Decision::Hard
        } else {
            self.qcount += 1;
            if self.qcount > 0 {
                let pb = self.max_p * (self.qavg - min) / (max - min);
                if pb * self.qcount as f64 >= self.qr {
                    self.qcount = 0;
                    self.qr = ctx.rng.gen::<f64>();
                    Decision::Prob
                } else {
                    Decision::Pass
                }
            } else {
                self.qr = ctx.rng.gen::<f64>();
                Decision::Pass
            }
        };
        let congestion = match decision {
            Decision::Pass => false,
            Decision::Prob => !signal_congestion(&mut p, self.cfg.ecn, report),
            Decision::Hard => self.cfg.harddrop || !signal_congestion(&mut p, self.cfg.ecn, report),
        };
        if congestion {
            report.drop(p, DropReason::AqmDrop);
            return false;
        }
        if self.q.bytes() + p.wire_bytes as u64 > self.cfg.limit_bytes {
            report.drop(p, DropReason::TailDrop);
            return false;
        }
        self.q.push(p, ctx.now);
        true
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx, _report: &mut Report) -> Option<Queued> {
        let q = self.q.pop();
        if q.is_none() && self.idle_since.is_none() {
            self.idle_since = Some(ctx.now);
        }
        q
    }

    fn backlog_bytes(&self) -> u64 {
        self.q.bytes()
    }
    fn backlog_pkts(&self) -> u64 {
        self.q.len() as u64
    }
    fn aqm_state(&self) -> AqmState {
        AqmState { prob: self.ramp_probability(), dropping: 0, avg_bytes: self.qavg }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{pkt, rng};
    use super::*;
    use crate::net::Ecn;

    fn cfg() -> RedConfig {
        RedConfig {
            limit_bytes: 400_000,
            min_bytes: 30_000,
            max_bytes: 90_000,
            avpkt_bytes: 1000,
            burst_pkts: None,
            probability: 0.1,
            bandwidth_bps: 10_000_000,
            ecn: false,
            harddrop: false,
            adaptive: false,
        }
    }

    #[test]
    fn wlog_matches_tc_red_eval_ewma() {
        // tc: min 30000 max 90000 avpkt 1000 → burst (60000+90000)/3000 = 50; Wlog is
        // the first (smallest W = 2^-Wlog tried from 1/2 down) with
        // (1-(1-W)^burst)/W >= burst + 1 - min/avpkt = 21.
        let c = cfg();
        assert_eq!(c.burst(), 50);
        let w = c.wlog().unwrap();
        let f = |wlog: u32| {
            let w = 0.5f64.powi(wlog as i32);
            (1.0 - (1.0 - w).powf(50.0)) / w
        };
        assert!(f(w) >= 21.0 && f(w - 1) < 21.0, "wlog {w}");
        let mut small = c.clone();
        small.burst_pkts = Some(10);
        assert!(small.wlog().is_err(), "burst below min/avpkt must be rejected");
    }

    #[test]
    fn average_follows_the_ewma() {
        let c = cfg();
        let mut red = Red::new(&c);
        let (mut r, mut rep) = (rng(), Report::default());
        let mut ctx = QdiscCtx { now: 0, rng: &mut r };
        // First arrival ends the initial idle period at time 0: qavg stays 0.
        red.enqueue(pkt(0, 0, 1000, Ecn::NotEct), &mut ctx, &mut rep);
        let mut expect = 0.0f64;
        for i in 1..20u64 {
            let backlog = red.backlog_bytes() as f64;
            red.enqueue(pkt(0, i, 1000, Ecn::NotEct), &mut ctx, &mut rep);
            expect += (backlog - expect) * red.w;
            assert!((red.qavg() - expect).abs() < 1e-9, "{} vs {expect}", red.qavg());
        }
        assert!(rep.drops.is_empty());
    }

    #[test]
    fn drop_probability_is_linear_between_min_and_max() {
        // Hold the average at a fixed point and count the fraction of arrivals dropped.
        // pb = max_P (avg - min) / (max - min); Linux spreads drops uniformly: the gap
        // between drops is uniform in 1..=1/pb arrivals, so the drop fraction is
        // 2 pb / (1 + pb) — linear in pb for small pb.
        let c = cfg();
        for frac in [0.25, 0.5, 0.75] {
            let mut red = Red::new(&c);
            let mut r = rng();
            let mut rep = Report::default();
            let target = c.min_bytes as f64 + frac * (c.max_bytes - c.min_bytes) as f64;
            let n = 200_000;
            let mut dropped = 0;
            for i in 0..n {
                red.qavg = target;
                red.idle_since = None;
                // Keep the instantaneous backlog equal to the average so the EWMA holds.
                while (red.backlog_bytes() as f64) < target {
                    red.q.push(pkt(1, 0, 1000, Ecn::NotEct), 0);
                }
                while (red.backlog_bytes() as f64) > target + 1000.0 {
                    red.q.pop();
                }
                let mut ctx = QdiscCtx { now: 0, rng: &mut r };
                if !red.enqueue(pkt(0, i, 1000, Ecn::NotEct), &mut ctx, &mut rep) {
                    dropped += 1;
                }
            }
            let pb = c.probability * frac;
            let measured = dropped as f64 / n as f64;
            // Uniform spreading: inter-drop gaps uniform in 1..=1/pb, mean (1/pb + 1)/2.
            let expected = 2.0 * pb / (1.0 + pb);
            assert!((measured - expected).abs() < 0.1 * expected, "frac {frac}: {measured} vs {expected}");
        }
    }

    #[test]
    fn above_max_every_packet_is_dropped_or_marked() {
        let mut c = cfg();
        c.ecn = true;
        let mut red = Red::new(&c);
        let mut r = rng();
        let mut rep = Report::default();
        red.qavg = c.max_bytes as f64 * 1.5;
        red.idle_since = None;
        for _ in 0..200 {
            red.q.push(pkt(1, 0, 1000, Ecn::NotEct), 0);
        }
        let mut ctx = QdiscCtx { now: 0, rng: &mut r };
        assert!(red.enqueue(pkt(0, 1, 1000, Ecn::Ect), &mut ctx, &mut rep), "ECN-capable: marked and queued");
        assert_eq!(rep.marks.len(), 1);
        assert!(!red.enqueue(pkt(0, 2, 1000, Ecn::NotEct), &mut ctx, &mut rep), "Not-ECT: dropped");
        assert_eq!(rep.drops.last().unwrap().1, DropReason::AqmDrop);
        c.harddrop = true;
        let mut hd = Red::new(&c);
        hd.qavg = c.max_bytes as f64 * 1.5;
        hd.idle_since = None;
        hd.q.push(pkt(1, 0, 1000, Ecn::NotEct), 0);
        assert!(!hd.enqueue(pkt(0, 3, 1000, Ecn::Ect), &mut ctx, &mut rep), "harddrop drops ECT above max");
    }

    #[test]
    fn idle_time_decays_the_average() {
        let c = cfg();
        let mut red = Red::new(&c);
        red.qavg = 60_000.0;
        red.idle_since = Some(0);
        // 10 Mbit/s, avpkt 1000 B → 1250 "packets" per second of idleness.
        let after = red.qavg_at(NS_PER_SEC / 10);
        let expect = 60_000.0 * (1.0 - red.w).powf(125.0);
        assert!((after - expect).abs() < 1e-6 && after < 60_000.0);
    }

    #[test]
    fn adaptive_raises_max_p_while_the_average_stays_high() {
        let mut c = cfg();
        c.adaptive = true;
        let mut red = Red::new(&c);
        red.qavg = 85_000.0;
        red.idle_since = None;
        red.adapt_until(3 * NS_PER_SEC);
        assert!(red.max_p > c.probability, "{}", red.max_p);
        red.qavg = 31_000.0;
        let high = red.max_p;
        red.adapt_until(10 * NS_PER_SEC);
        assert!(red.max_p < high);
    }
}
