//! Copa: delay-based congestion control with a target rate. With the standing
//! RTT (the minimum over the last half srtt, which ignores transient ACK
//! compression) and RTT_min (over 10 s), the queueing delay is
//! d_q = RTT_standing − RTT_min, and Copa steers its rate λ = cwnd/RTT_standing
//! towards
//!
//! ```text
//!   λ_t = 1 / (δ · d_q)      packets per second
//! ```
//!
//! per ACK: cwnd ± v/(δ·cwnd), up if λ ≤ λ_t, down otherwise. At equilibrium each
//! Copa flow keeps 1/δ packets queued (2 with δ = 0.5), so a lone flow fills the
//! link with a tiny queue. The velocity v speeds up convergence: once per RTT the
//! RTT's direction is decided by its ACKs — up (down) if more than 2/3 of the
//! packets acknowledged in it were decided up (down), *mixed* otherwise; v doubles
//! once the direction has stayed the same for 3 RTTs (paper §2.1), and resets to 1
//! when it flips or when an RTT is mixed, i.e. when cwnd hovers around the target
//! (the paper authors' implementation, genericCC `MarkovianCC::update_intersend_time`:
//! `update_dir` against `2 * pkts_per_rtt / 3`). v never exceeds cwnd (genericCC
//! `update_amt = min(update_amt, _the_window)`), so one ACK moves cwnd by at most 1/δ.
//! Deciding the RTT's direction by comparing cwnd with its value an RTT earlier
//! (the paper's wording, mvfst `checkAndUpdateDirection`) lets v double while the
//! per-ACK decisions alternate and cwnd merely drifts one way: two Copa flows over
//! a 16-BDP buffer then ran away (cwnd 61 → 1,009 packets in 400 ms, 334 %
//! retransmissions). In competitive mode an ACK whose decision goes against the
//! current direction while v is above 1 also resets it at once (mvfst
//! `changeDirection`; see the reset below).
//! Slow start doubles cwnd per RTT until λ > λ_t. Copa paces at
//! 2·cwnd/RTT_standing.
//!
//! Competitive mode: a Copa flow that shares the queue with buffer-filling flows
//! never sees it drain. Copa checks whether d_q fell below 10% of the recent
//! RTT range (max − min over the last 4 RTTs) at least once in the last 5 RTTs;
//! if not, it switches to competitive mode, where 1/δ grows by 1 per RTT (AIMD
//! on 1/δ: halved on loss), making it as aggressive as needed; when the queue
//! drains again it returns to the default δ.
//!
//! References: V. Arun, H. Balakrishnan, "Copa: Practical Delay-Based Congestion
//! Control for the Internet", USENIX NSDI 2018 (§2, §2.2); the authors' code,
//! venkatarun95/genericCC `markoviancc.cc` (per-RTT direction by majority of the
//! ACKs' decisions, velocity capped at cwnd, AIMD on 1/δ in the loss-sensitive mode);
//! facebook/mvfst `quic/congestion_control/Copa.cpp` (standing RTT window srtt/2,
//! velocity rules, pacing gain 2; mvfst has no competitive mode).
//!
//! Parameters: `delta` = 0.5 (the paper's default mode), `competitive` = true
//! (the mode switch), `rtt_min_window_s` = 10 (paper), `standing_window_frac`
//! = 0.5 (srtt/2, paper and mvfst), `pacing_gain` = 2 (paper and mvfst).
//! Constants: velocity doubles after 3 RTTs in one direction (paper); an RTT has a
//! direction when more than 2/3 of its acknowledged packets were decided that way
//! (genericCC); the
//! "nearly empty" threshold is 10% of the RTT range over the last 4 RTTs, checked
//! over 5 RTTs (paper §2.2); loss in default mode changes nothing (paper: Copa
//! reacts to delay, and to loss only through 1/δ in competitive mode).
//!
//! Deviation: the paper does not say how 1/δ starts in competitive mode; it
//! starts from the default 1/δ and grows from there.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::common::MinFilter;
use super::registry::{describe_params, parse_params, CcaInfo};
use super::{AckSample, BoxedCca, CcMetrics, CongestionControl, TcpState};
use crate::units::{Time, NS_PER_SEC};

/// Velocity doubles once cwnd has moved the same way for this many RTTs.
const SAME_DIRECTION_RTTS: u32 = 3;
/// An RTT goes one way when more than this fraction of the packets acknowledged in it
/// were decided that way (genericCC: `abs(update_dir) > 2 * pkts_per_rtt / 3`).
const DECISIVE_FRACTION: f64 = 2.0 / 3.0;
/// Competitive-mode test: the queue must nearly empty (d_q < 10% of the RTT
/// range) at least once per this many RTTs...
const EMPTY_CHECK_RTTS: u32 = 5;
/// ...where the RTT range is max − min over this many RTTs.
const RANGE_RTTS: u32 = 4;
const NEARLY_EMPTY_FRACTION: f64 = 0.1;
/// Nominal RTT for the pacing rate before the first sample (1 ms, as Linux BBR).
const INITIAL_PACING_RTT_S: f64 = 1e-3;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    pub delta: f64,
    pub competitive: bool,
    pub rtt_min_window_s: f64,
    pub standing_window_frac: f64,
    pub pacing_gain: f64,
}

impl Default for Params {
    fn default() -> Self {
        Self { delta: 0.5, competitive: true, rtt_min_window_s: 10.0, standing_window_frac: 0.5, pacing_gain: 2.0 }
    }
}

const PARAM_DOCS: &[(&str, &str)] = &[
    ("delta", "δ of the default mode: target rate 1/(δ·d_q); 1/δ packets queued per flow (paper 0.5)"),
    ("competitive", "switch to competitive mode (AIMD on 1/δ) when the queue never drains (paper: on)"),
    ("rtt_min_window_s", "window of the RTT_min filter, s (paper 10)"),
    ("standing_window_frac", "standing RTT = min over this fraction of srtt (paper, mvfst 0.5)"),
    ("pacing_gain", "pacing rate = gain · cwnd / RTT_standing (paper, mvfst 2)"),
];

pub const INFO: CcaInfo = CcaInfo {
    name: "copa",
    family: "delay",
    summary: "Copa: steers to the target rate 1/(δ·d_q), velocity, competitive-mode switch",
    reference: "Arun & Balakrishnan, USENIX NSDI 2018; venkatarun95/genericCC markoviancc.cc; facebook/mvfst quic/congestion_control/Copa.cpp",
    params: || describe_params::<Params>(PARAM_DOCS),
    build: |v| {
        let p: Params = parse_params("copa", v)?;
        let ok = p.delta > 0.0
            && p.delta.is_finite()
            && p.rtt_min_window_s > 0.0
            && p.rtt_min_window_s.is_finite()
            && p.standing_window_frac > 0.0
            && p.standing_window_frac <= 1.0
            && p.pacing_gain > 0.0
            && p.pacing_gain.is_finite();
        if !ok {
            return Err("parameters of CCA 'copa': need delta > 0, rtt_min_window_s > 0, 0 < standing_window_frac <= 1, pacing_gain > 0".into());
        }
        Ok(Box::new(Copa::new(p)) as BoxedCca)
    },
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    Up,
    Down,
}

#[derive(Debug, Clone)]
pub struct Copa {
    p: Params,
    /// cwnd as a real number (packets).
    w: f64,
    slow_start: bool,
    rtt_min: MinFilter,
    /// Sliding-window minimum over the standing window: (time, rtt) with rtt
    /// increasing from front to back (a monotonic queue), so the front is the min.
    standing: VecDeque<(Time, Time)>,
    /// RTT (max, min) of the current RTT and of the last `RANGE_RTTS` RTTs, for the
    /// competitive-mode test.
    cur_range: Option<(Time, Time)>,
    ranges: VecDeque<(Time, Time)>,
    velocity: f64,
    direction: Option<Direction>,
    same_direction: u32,
    /// Packets acknowledged since the last per-RTT check whose decision was up / down.
    votes_up: u64,
    votes_down: u64,
    /// Time of the last per-RTT velocity check.
    last_check: Option<Time>,
    /// 1/δ in use.
    inv_delta: f64,
    competitive_mode: bool,
    /// Last time the queue was nearly empty.
    last_empty: Time,
}

impl Copa {
    pub fn new(p: Params) -> Self {
        let inv_delta = 1.0 / p.delta;
        let window = (p.rtt_min_window_s * NS_PER_SEC as f64) as Time;
        Self {
            p,
            w: 0.0,
            slow_start: true,
            rtt_min: MinFilter::new(window),
            standing: VecDeque::new(),
            cur_range: None,
            ranges: VecDeque::new(),
            velocity: 1.0,
            direction: None,
            same_direction: 0,
            votes_up: 0,
            votes_down: 0,
            last_check: None,
            inv_delta,
            competitive_mode: false,
            last_empty: 0,
        }
    }

    /// δ currently in use.
    pub fn delta(&self) -> f64 {
        1.0 / self.inv_delta
    }

    fn rtt_standing(&self) -> Option<Time> {
        self.standing.front().map(|&(_, r)| r)
    }

    /// Record an RTT sample; the standing window is a fraction of srtt.
    fn on_rtt(&mut self, now: Time, rtt: Time, srtt: Time) {
        self.rtt_min.update(now, rtt);
        let window = ((srtt.max(rtt) as f64) * self.p.standing_window_frac) as Time;
        while self.standing.back().is_some_and(|&(_, r)| r >= rtt) {
            self.standing.pop_back();
        }
        self.standing.push_back((now, rtt));
        while self.standing.front().is_some_and(|&(t, _)| now - t > window) {
            self.standing.pop_front();
        }
        self.cur_range = Some(match self.cur_range {
            Some((hi, lo)) => (hi.max(rtt), lo.min(rtt)),
            None => (rtt, rtt),
        });
    }

    /// RTT max − min over the last `RANGE_RTTS` RTTs (ns).
    fn recent_range(&self) -> Time {
        let hi = self.ranges.iter().map(|r| r.0).chain(self.cur_range.map(|r| r.0)).max().unwrap_or(0);
        let lo = self.ranges.iter().map(|r| r.1).chain(self.cur_range.map(|r| r.1)).min().unwrap_or(0);
        hi - lo
    }

    /// The per-ACK decision went the other way while the velocity was above 1:
    /// restart the velocity (and its per-RTT direction record) from 1.
    fn change_direction(&mut self, dir: Direction, now: Time) {
        self.direction = Some(dir);
        self.velocity = 1.0;
        self.same_direction = 0;
        self.votes_up = 0;
        self.votes_down = 0;
        self.last_check = Some(now);
    }

    /// The direction the RTT's ACKs decided: one way if more than 2/3 of the packets
    /// went that way, `None` (mixed) otherwise.
    fn rtt_direction(&self) -> Option<Direction> {
        let total = (self.votes_up + self.votes_down) as f64;
        if total == 0.0 {
            None
        } else if self.votes_up as f64 > DECISIVE_FRACTION * total {
            Some(Direction::Up)
        } else if self.votes_down as f64 > DECISIVE_FRACTION * total {
            Some(Direction::Down)
        } else {
            None
        }
    }

    /// Once per RTT: velocity and the competitive-mode switch.
    fn per_rtt(&mut self, now: Time, rtt: Time, dq: f64) {
        let Some(t) = self.last_check else {
            self.last_check = Some(now);
            self.last_empty = now;
            return;
        };
        if now - t < rtt {
            return;
        }
        match self.rtt_direction() {
            Some(dir) if self.direction == Some(dir) => {
                self.same_direction += 1;
                if self.same_direction >= SAME_DIRECTION_RTTS {
                    self.velocity *= 2.0;
                }
            }
            Some(dir) => {
                self.direction = Some(dir);
                self.same_direction = 0;
                self.velocity = 1.0;
            }
            None => {
                // Mixed: cwnd hovers around the target; speeding up would overshoot.
                self.same_direction = 0;
                self.velocity = 1.0;
            }
        }
        self.votes_up = 0;
        self.votes_down = 0;
        self.last_check = Some(now);
        if self.p.competitive {
            let range = self.recent_range() as f64 / NS_PER_SEC as f64;
            if dq < NEARLY_EMPTY_FRACTION * range || range == 0.0 {
                self.last_empty = now;
            }
            let starved = now - self.last_empty > EMPTY_CHECK_RTTS as Time * rtt;
            if starved {
                // Competitive: 1/δ grows by 1 per RTT (additive increase).
                self.competitive_mode = true;
                self.inv_delta += 1.0;
            } else if self.competitive_mode {
                self.competitive_mode = false;
                self.inv_delta = 1.0 / self.p.delta;
            }
        }
        if let Some(r) = self.cur_range.take() {
            self.ranges.push_back(r);
            if self.ranges.len() > RANGE_RTTS as usize {
                self.ranges.pop_front();
            }
        }
    }
}

impl CongestionControl for Copa {
    fn name(&self) -> &'static str {
        "copa"
    }

    fn init(&mut self, tp: &mut TcpState) {
        *self = Self::new(self.p.clone());
        self.w = tp.cwnd as f64;
        // Before any RTT sample, pace the initial window as if the RTT were 1 ms (as
        // Linux BBR's `bbr_init_pacing_rate_from_rtt`): effectively unpaced.
        let rate = self.p.pacing_gain * self.w * tp.mss as f64 / INITIAL_PACING_RTT_S;
        tp.pacing_rate = (rate as u64).max(1);
    }

    fn ssthresh(&mut self, tp: &mut TcpState) -> u32 {
        tp.ssthresh
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    fn cong_control(&mut self, tp: &mut TcpState, sample: &AckSample) {
        let now = tp.now;
        if self.w as u32 != tp.cwnd {
            // The sender collapsed cwnd (RTO).
            self.w = tp.cwnd as f64;
        }
        if let Some(rtt) = sample.rtt {
            self.on_rtt(now, rtt, tp.srtt);
        }
        let (Some(standing), acked) = (self.rtt_standing(), sample.acked_sacked) else { return };
        let rtt_min = self.rtt_min.get();
        let dq = standing.saturating_sub(rtt_min) as f64 / NS_PER_SEC as f64;
        // Rates in packets per second.
        let rate = self.w / (standing.max(1) as f64 / NS_PER_SEC as f64);
        let target = if dq > 0.0 { 1.0 / (self.delta() * dq) } else { f64::INFINITY };
        self.per_rtt(now, standing, dq);
        if self.slow_start {
            if rate <= target {
                self.w += acked as f64; // doubles per RTT
            } else {
                self.slow_start = false;
            }
        }
        if !self.slow_start && acked > 0 {
            let want = if rate <= target { Direction::Up } else { Direction::Down };
            if self.competitive_mode && self.direction != Some(want) && self.velocity > 1.0 {
                // In competitive mode 1/δ grows every RTT, so most ACKs decide up RTT
                // after RTT and v doubles; when the decision flips, a velocity doubled
                // that way must not scale the steps of the other direction for the
                // rest of the RTT. A sudden change of direction resets it (mvfst
                // `changeDirection`). Without a reset, Copa against CUBIC ran away to
                // 46,000 packets. Deviation: mvfst (which has no competitive mode)
                // resets in every mode; in default mode we keep the per-RTT rule, whose
                // velocity drains the queue after slow start within the 5 RTTs the
                // mode switch waits for, and the mixed-RTT reset stops the drift.
                self.change_direction(want, now);
            }
            // v is capped at cwnd (genericCC): one packet moves cwnd by at most 1/δ.
            let velocity = self.velocity.min(self.w.max(1.0));
            let step = velocity * self.inv_delta / self.w.max(1.0) * acked as f64;
            match want {
                Direction::Up => {
                    self.w += step;
                    self.votes_up += acked as u64;
                }
                Direction::Down => {
                    self.w -= step; // clamped at 2 below
                    self.votes_down += acked as u64;
                }
            }
        }
        self.w = self.w.clamp(2.0, tp.cwnd_clamp as f64);
        tp.cwnd = self.w as u32;
        let pacing = self.p.pacing_gain * self.w * tp.mss as f64 / (standing.max(1) as f64 / NS_PER_SEC as f64);
        tp.pacing_rate = (pacing as u64).max(1);
    }

    /// Loss halves 1/δ in competitive mode (the MD of its AIMD); default mode
    /// ignores loss.
    fn set_state(&mut self, _tp: &mut TcpState, new_state: super::CaState) {
        if new_state == super::CaState::Recovery && self.competitive_mode {
            self.inv_delta = (self.inv_delta / 2.0).max(1.0 / self.p.delta);
        }
    }

    fn undo_cwnd(&mut self, tp: &mut TcpState) -> u32 {
        tp.cwnd
    }

    fn metrics(&self, tp: &TcpState) -> CcMetrics {
        let state = if self.slow_start {
            "slow_start"
        } else if self.competitive_mode {
            "competitive"
        } else {
            "default"
        };
        let bw = self.rtt_standing().map(|r| tp.cwnd as f64 * tp.mss as f64 * 8.0 / (r.max(1) as f64 / 1e9));
        CcMetrics { state, bw_bps: bw, min_rtt_ns: self.standing.front().map(|_| self.rtt_min.get()), ..Default::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testing::TimelineHarness;
    use crate::units::ms;

    fn copa(p: Params) -> TimelineHarness {
        TimelineHarness::new(Box::new(Copa::new(p)), 1448, 10).with_rtt(ms(50)).with_bottleneck_pps(1000.0)
    }

    #[test]
    fn target_rate_keeps_one_over_delta_packets_queued() {
        // Equilibrium: λ = λ_t ⇔ cwnd/RTT = 1/(δ·d_q). With the link full, RTT =
        // base + queue/μ, so queue = μ·d_q = μ/(δ·λ) = 1/δ = 2 packets (δ = 0.5):
        // cwnd ≈ BDP (50) + 2, oscillating by a few packets (velocity 1 at
        // equilibrium: ±1/(δ·cwnd) per ACK = ±2 packets per RTT).
        let mut h = copa(Params { competitive: false, ..Params::default() });
        h.run_rounds(60);
        let mut cw = Vec::new();
        for _ in 0..40 {
            h.run_rounds(1);
            cw.push(h.tp().cwnd);
        }
        let mean = cw.iter().sum::<u32>() as f64 / cw.len() as f64;
        assert!((48.0..=60.0).contains(&mean), "mean cwnd {mean}: {cw:?}");
        assert_eq!(h.cca().metrics(h.tp()).state, "default");
    }

    #[test]
    fn velocity_doubles_after_three_decisive_rtts_and_a_mixed_rtt_resets_it() {
        let mut c = Copa::new(Params::default());
        c.w = 100.0;
        let rtt = ms(50);
        c.per_rtt(0, rtt, 0.0); // first check records the baseline
        let rtt_with = |c: &mut Copa, i: u64, up: u64, down: u64| {
            (c.votes_up, c.votes_down) = (up, down);
            c.per_rtt(i * rtt, rtt, 0.0);
            (c.velocity, c.direction)
        };
        // Every packet decided up: direction set (v=1), same ×1 (1), ×2 (1), ×3 (2)...
        let v: Vec<f64> = (1..=6).map(|i| rtt_with(&mut c, i, 100, 0).0).collect();
        assert_eq!(v, vec![1.0, 1.0, 1.0, 2.0, 4.0, 8.0]);
        // 70 of 100 up is still decisive (> 2/3)...
        assert_eq!(rtt_with(&mut c, 7, 70, 30), (16.0, Some(Direction::Up)));
        // ...60 of 100 is mixed: cwnd hovers, v back to 1 (even though cwnd rose).
        assert_eq!(rtt_with(&mut c, 8, 60, 40), (1.0, Some(Direction::Up)));
        // Counting starts over: three more decisive RTTs before v doubles again.
        let v: Vec<f64> = (9..=12).map(|i| rtt_with(&mut c, i, 100, 0).0).collect();
        assert_eq!(v, vec![1.0, 1.0, 2.0, 4.0]);
        // A decisive RTT the other way flips the direction and resets v.
        assert_eq!(rtt_with(&mut c, 13, 10, 90), (1.0, Some(Direction::Down)));
        assert_eq!((c.votes_up, c.votes_down), (0, 0), "votes are per RTT");
    }

    #[test]
    fn one_packet_moves_cwnd_by_at_most_one_over_delta() {
        // A velocity far above cwnd (as after many RTTs of one-way decisions) is used
        // as cwnd: an ACK of one packet adds 1/δ = 2 packets, not v/(δ·cwnd) = 2,000.
        let mut c = Copa::new(Params { competitive: false, ..Params::default() });
        let mut tp = crate::cc::testing::tcp_state(1448, 10);
        c.on_rtt(0, ms(50), ms(50));
        tp.now = ms(10);
        tp.srtt = ms(50);
        c.slow_start = false;
        c.velocity = 10_000.0;
        c.direction = Some(Direction::Up);
        c.last_check = Some(ms(5));
        c.w = 10.0;
        tp.cwnd = 10;
        let ack = AckSample { acked_sacked: 1, pkts_acked: 1, rtt: Some(ms(50)), ..Default::default() };
        c.cong_control(&mut tp, &ack);
        assert!((c.w - 12.0).abs() < 1e-9, "cwnd {}", c.w);
        assert_eq!((c.votes_up, c.votes_down), (1, 0));
    }

    #[test]
    fn an_ack_deciding_against_a_fast_velocity_resets_it() {
        // In competitive mode, velocity 64 built up while cwnd grew; then an ACK finds
        // the rate above the target (standing RTT 60 ms over a 50 ms minimum: d_q =
        // 10 ms, target 200 pkt/s, rate 400/0.06 s): it must step down by
        // 1/(δ·cwnd), not 64/(δ·cwnd).
        let mut c = Copa::new(Params::default());
        c.competitive_mode = true;
        let mut tp = crate::cc::testing::tcp_state(1448, 10);
        tp.now = ms(1);
        c.on_rtt(0, ms(50), ms(50));
        tp.now = ms(200);
        tp.srtt = ms(60);
        c.slow_start = false;
        c.velocity = 64.0;
        c.direction = Some(Direction::Up);
        c.last_check = Some(ms(150));
        c.w = 400.0;
        tp.cwnd = 400;
        let ack = AckSample { acked_sacked: 1, pkts_acked: 1, rtt: Some(ms(60)), ..Default::default() };
        c.cong_control(&mut tp, &ack);
        assert_eq!((c.velocity, c.direction), (1.0, Some(Direction::Down)));
        let one_step = 1.0 / (0.5 * 400.0);
        assert!((c.w - (400.0 - one_step)).abs() < 1e-9, "one velocity-1 step down: {}", c.w);
    }

    #[test]
    fn switches_to_competitive_mode_when_the_queue_never_drains() {
        // Simulate a standing queue that never empties: RTTs between 80 and 100 ms
        // with base 50 ms; d_q ≥ 30 ms ≫ 10% of the 20 ms range.
        let mut c = Copa::new(Params::default());
        c.w = 50.0;
        let rtt = ms(100);
        c.on_rtt(0, ms(50), ms(50));
        for i in 0..40u64 {
            let t = ms(10) + i * rtt;
            c.on_rtt(t, ms(80 + (i % 3) * 10), rtt);
            c.per_rtt(t, rtt, 0.03 + (i % 3) as f64 * 0.01);
        }
        assert!(c.competitive_mode);
        assert!(c.delta() < 0.5, "1/δ grows in competitive mode: δ = {}", c.delta());
    }
}
