//! PCC Vivace: rate-based congestion control by online learning. The sender
//! runs at a rate r in *monitor intervals* (MIs) of about one RTT, scores each
//! MI with a utility of its sending rate x (Mbit/s), the RTT gradient over the
//! MI and its loss rate,
//!
//! ```text
//!   u(x) = x^t − b·x·dRTT/dT − c·x·L,      t = 0.9, b = 900, c = 11.35
//! ```
//!
//! and moves r along the utility gradient. Start: r doubles every MI while the
//! utility grows; at the first drop it returns to the best rate and starts
//! learning. Learning: two MIs at r(1 + ε) and r(1 − ε), in random order, give the
//! gradient γ = (u₊ − u₋)/(2εr); the step is Δr = m·θ₀·γ, where the confidence
//! amplifier m = 1, 2, 3, … grows while steps keep their direction (reset on a
//! flip), and |Δr| ≤ ω·r with the dynamic boundary ω = ω₀ + k·δ_ω growing with
//! each consecutive step that hit it (reset when one does not, and on a flip).
//!
//! Vivace is pacing-driven: the pacing rate is r and cwnd is only a safety cap
//! (2·r·smoothed RTT, at least 4 packets), so it takes over the window on every
//! ACK. PCC-Uspace sends by pacing alone: its `PccSender::CanSend` stops sending
//! only when more than 4 unscored MIs are queued, never for the bytes in flight
//! (its `bytes_in_flight_gain` check sits after a `return`), and the NSDI 2018 code
//! runs UDT with a window of 100,000 packets. The cap bounds a stall of the feedback
//! to about 2 RTTs of data. It used the minimum RTT before, which made the window,
//! not the rate, decide whenever the queue delay exceeded the minimum RTT, as at a
//! full queue after a capacity drop: in `tests/cca_scenarios.rs` (100 → 50 Mbit/s,
//! 30 ms, 1 BDP) the flow was window-limited (in flight = cwnd) for 5 s and its base
//! rate stayed at 91–97 Mbit/s, the two test MIs of a pair differing in their window
//! rather than their rate and their RTT slopes deciding the pair
//! (docs/reproduction.md). The minimum-RTT window also bounded the queue a Vivace
//! flow could build to r·min RTT, which kept deep buffers from overflowing; the
//! utility alone, as in the references, does not always (docs/reproduction.md).
//! (The timeline harness does not pace, so Vivace's dynamics are tested in the
//! engine: `tests/cca_scenarios.rs`.)
//!
//! References: M. Dong, T. Meng, D. Zarchy, E. Arslan, Y. Gilad, P. B. Godfrey,
//! M. Schapira, "PCC Vivace: Online-Learning Congestion Control", USENIX NSDI
//! 2018 (§3–4: utility, the gradient-ascent rules and their constants);
//! PCCproject/PCC-Uspace (user-space implementation).
//!
//! Parameters (the paper's values): `exponent` t = 0.9, `latency_coef` b = 900,
//! `loss_coef` c = 11.35, `epsilon` ε = 0.05, `theta0` θ₀ = 1 (Mbit/s per unit of
//! utility gradient), `omega0` ω₀ = 0.05, `omega_step` δ_ω = 0.1; and from
//! PCC-Uspace (`pcc_vivace_ucalc.cpp`), `rtt_gradient_filter` = 0.02: RTT
//! gradients below it count as 0, so measurement noise (delayed ACKs,
//! serialization) is not read as congestion — without it a gradient of a few
//! ms per second, × b = 900, swamps the x^0.9 term.
//!
//! MI bookkeeping, as PCC-Uspace's monitor-interval queue (`MonitorInterval`,
//! `PccMonitorIntervalQueue::OnCongestionEvent`, `IsUtilityAvailable`) and the
//! NSDI 2018 code (`pcc-gradient`, per-monitor `total` and `total − left`):
//! * An MI owns the new segments sent while it is current: `first_seg..end_seg`
//!   (`TcpState::snd_nxt` when it starts and when the next one starts).
//! * Every segment's first fate, delivered or marked lost (RACK, RTO), is charged
//!   to the MI that sent it (`CongestionControl::seg_fate`), so a loss detected on
//!   an ACK of a later MI's packet still counts in its own MI; the loss rate is
//!   lost / sent of that MI.
//! * An MI is scored when all its segments' fates are known, oldest first.
//! * An MI ends when its sending time (one minimum RTT) is over and it sent at
//!   least 10 new segments (`monitor::MIN_MI_SEGS`: the NSDI 2018 code's floor on an
//!   MI's packets). This also covers PCC-Uspace's `HasInvalidUtility` (an MI whose
//!   packets all left at one instant has no utility), which the rule before it —
//!   MIs of fewer than 2 segments abandon their test pair — modelled.
//! * RTT samples: one per ACK, from the most recently sent segment it delivered
//!   that was never retransmitted (an exact sample; PCC-Uspace takes one RTT per
//!   ACK event too, and QUIC never reuses a packet number, so its samples are all
//!   unambiguous), charged to the MI that sent that segment. dRTT/dT is the
//!   least-squares slope of an MI's samples over their send times (the NSDI 2018
//!   code regresses per-packet RTTs on send times; PCC-Uspace regresses on packet
//!   numbers, i.e. send times at the MI's rate); with fewer than 2 samples it is 0.
//!
//! Deviations from the references:
//! * TCP reuses a sequence number for a retransmission: an MI counts only the new
//!   segments it sent, each by its first fate; retransmissions belong to no MI
//!   (QUIC numbers them anew and PCC-Uspace counts them in the MI that sends them).
//! * x is the MI's pacing rate, as the paper's x_i (the sending rate). PCC-Uspace
//!   measures it (bytes sent / the MI's sending time, retransmissions included),
//!   which is the pacing rate while the flow is not cwnd-limited.
//! * Negative RTT gradients count as 0, as in PCC-Uspace's later utility manager
//!   (`pcc_utility_manager.cpp`, Proteus); `pcc_vivace_ucalc.cpp` and the NSDI 2018
//!   code keep a gradient beyond −0.02 and so reward a draining queue. Tried
//!   here: utilization of the recipe suite's quick Vivace runs fell from a mean
//!   of 0.94 to 0.87 (docs/reproduction.md).
//! * The floor on an MI's packets differs between the references: 10 (NSDI 2018
//!   code, used here), 4 RTT samples judged reliable from the ACK spacing (PCC-Uspace
//!   master, `kMinReliableRtt`; an MI with fewer than 80 % reliable samples is also
//!   extended once), 20 (PCC-Uspace's later `pcc_vivace_rc.cpp`). The ACK-spacing
//!   reliability test and the regression-error filter of PCC-Uspace's utility
//!   manager (`DetermineToleranceGeneral`: a slope smaller than the fit's relative
//!   RMS error counts as 0) are not modelled, nor the NSDI 2018 code's truncation of
//!   the RTT gradient to multiples of 0.02 (ours: below 0.02 counts as 0, above it
//!   as is, as `pcc_vivace_ucalc.cpp`), nor the loss cut-off of `pcc_vivace_rc.cpp`
//!   (an MI losing more than 25 % halves the rate), which the paper does not have.
//! * The NSDI 2018 code caps an MI at 3,000 packets (its per-MI arrays); ours has
//!   no cap.
//!
//! Choices the paper leaves open:
//! * The MI lasts one minimum RTT (PCC-Uspace master, `PccSender::OnPacketSent`:
//!   `monitor_duration_ = min_rtt_`; the NSDI 2018 code uses its averaged RTT; ours
//!   used the smoothed RTT, so at a standing queue of seconds an MI lasted seconds
//!   and a test pair took three such RTTs), at least 1 ms and 10 segments; MIs follow
//!   each other without gaps.
//! * The first rate is the initial window per 100 ms (before any RTT sample);
//!   the rate never goes below 1 packet per 100 ms... (`MIN_RATE_PPS`).
//! * MIs started while a learning pair is still being scored run at r itself
//!   and are not scored.

use std::collections::VecDeque;

use rand::Rng;
use serde::{Deserialize, Serialize};

mod monitor;

use monitor::{Mi, Purpose};

use super::registry::{describe_params, parse_params, CcaInfo};
use super::{AckSample, BoxedCca, CcMetrics, CongestionControl, TcpState};
#[cfg(test)]
use super::RateSample;
use crate::units::{ms, Time, NS_PER_SEC};

/// Lowest rate, packets per second (keeps a trickle of feedback).
const MIN_RATE_PPS: f64 = 10.0;
/// Shortest MI.
const MIN_MI: Time = ms(1);
/// RTT assumed before the first sample.
const INITIAL_RTT: Time = ms(100);
/// cwnd cap = this × rate × RTT (pacing does the work; cwnd only bounds a stall).
const CWND_RATE_RTTS: f64 = 2.0;
const MIN_CWND: u32 = 4;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    pub exponent: f64,
    pub latency_coef: f64,
    pub loss_coef: f64,
    pub epsilon: f64,
    pub theta0: f64,
    pub omega0: f64,
    pub omega_step: f64,
    pub rtt_gradient_filter: f64,
}

impl Default for Params {
    fn default() -> Self {
        Self { exponent: 0.9, latency_coef: 900.0, loss_coef: 11.35, epsilon: 0.05, theta0: 1.0, omega0: 0.05, omega_step: 0.1, rtt_gradient_filter: 0.02 }
    }
}

const PARAM_DOCS: &[(&str, &str)] = &[
    ("exponent", "t in x^t of the utility (paper 0.9)"),
    ("latency_coef", "b, weight of the RTT gradient (paper 900)"),
    ("loss_coef", "c, weight of the loss rate (paper 11.35)"),
    ("epsilon", "ε, relative rate difference of the two test MIs (paper 0.05)"),
    ("theta0", "θ₀, Mbit/s per unit of utility gradient (paper 1)"),
    ("omega0", "ω₀, initial bound on a step relative to the rate (paper 0.05)"),
    ("omega_step", "δ_ω, growth of the bound per consecutive bounded step (paper 0.1)"),
    ("rtt_gradient_filter", "RTT gradients below this count as 0: noise filter (PCC-Uspace kRTTFilter 0.02)"),
];

pub const INFO: CcaInfo = CcaInfo {
    name: "vivace",
    family: "rate/learning",
    summary: "PCC Vivace: gradient ascent on a rate/latency/loss utility over monitor intervals (paced)",
    reference: "Dong et al., USENIX NSDI 2018; PCCproject/PCC-Uspace",
    params: || describe_params::<Params>(PARAM_DOCS),
    build: |v| {
        let p: Params = parse_params("vivace", v)?;
        let all_finite = [p.exponent, p.latency_coef, p.loss_coef, p.epsilon, p.theta0, p.omega0, p.omega_step, p.rtt_gradient_filter]
            .iter()
            .all(|x| x.is_finite() && *x >= 0.0);
        if !all_finite || p.epsilon <= 0.0 || p.epsilon >= 1.0 || p.theta0 <= 0.0 {
            return Err("parameters of CCA 'vivace': need finite non-negative values, 0 < epsilon < 1, theta0 > 0".into());
        }
        Ok(Box::new(Vivace::new(p)) as BoxedCca)
    },
};

#[derive(Debug, Clone)]
enum Phase {
    /// Doubling; the best (rate, utility) so far.
    Starting { best: Option<(f64, f64)> },
    /// Gradient ascent around `rate`; results of the current test pair.
    Learning { up: Option<f64>, down: Option<f64>, order_up_first: bool, planned: u8 },
}

#[derive(Debug, Clone)]
pub struct Vivace {
    p: Params,
    /// The base rate r, packets per second.
    rate: f64,
    phase: Phase,
    mis: VecDeque<Mi>,
    mss: u32,
    /// Confidence amplifier state: last step's sign and count.
    last_dir: f64,
    amplifier: f64,
    /// Consecutive steps that hit the change boundary.
    bound_hits: u32,
    /// Number of the current test pair: results of an abandoned pair's MIs are ignored.
    pair: u32,
    /// The most recently sent never-retransmitted segment the current ACK delivered:
    /// (sequence number, send time), for this ACK's RTT sample.
    ack_rtt_seg: Option<(u64, Time)>,
}

impl Vivace {
    pub fn new(p: Params) -> Self {
        Self {
            p,
            rate: 0.0,
            phase: Phase::Starting { best: None },
            mis: VecDeque::new(),
            mss: 1448,
            last_dir: 0.0,
            amplifier: 1.0,
            bound_hits: 0,
            pair: 0,
            ack_rtt_seg: None,
        }
    }

    /// The base rate in bit/s.
    pub fn rate_bps(&self) -> f64 {
        self.rate * self.mss as f64 * 8.0
    }

    fn mbps(&self, pps: f64) -> f64 {
        pps * self.mss as f64 * 8.0 / 1e6
    }

    /// u(x) of a finished MI.
    fn utility(&self, mi: &Mi) -> f64 {
        let x = self.mbps(mi.rate);
        let loss = mi.loss_rate();
        let mut gradient = mi.rtt_gradient();
        if gradient < self.p.rtt_gradient_filter {
            gradient = 0.0;
        }
        x.powf(self.p.exponent) - self.p.latency_coef * x * gradient - self.p.loss_coef * x * loss
    }

    /// The rate and purpose of the next MI.
    fn next_mi(&mut self, tp: &mut TcpState) -> (Purpose, f64) {
        match &mut self.phase {
            Phase::Starting { .. } => (Purpose::Start, self.rate),
            Phase::Learning { up, down, order_up_first, planned } => {
                if *planned == 0 && up.is_none() && down.is_none() {
                    *order_up_first = tp.rng.gen_bool(0.5);
                }
                if *planned < 2 {
                    let first = *planned == 0;
                    *planned += 1;
                    let is_up = first == *order_up_first;
                    let e = self.p.epsilon;
                    if is_up {
                        (Purpose::TestUp, self.rate * (1.0 + e))
                    } else {
                        (Purpose::TestDown, self.rate * (1.0 - e))
                    }
                } else {
                    (Purpose::Filler, self.rate)
                }
            }
        }
    }

    /// Plan a fresh test pair around the base rate.
    fn new_pair(&mut self) {
        self.pair = self.pair.wrapping_add(1);
        self.phase = Phase::Learning { up: None, down: None, order_up_first: true, planned: 0 };
    }

    /// Apply a scored MI.
    fn on_result(&mut self, mi: &Mi) {
        let u = self.utility(mi);
        match &mut self.phase {
            Phase::Starting { best } => match *best {
                // MIs that started before the last doubling was decided run at a
                // rate already scored: they say nothing new.
                Some((br, _)) if mi.rate <= br => {}
                Some((br, bu)) if u <= bu => {
                    self.rate = br;
                    self.new_pair();
                }
                _ => {
                    *best = Some((mi.rate, u));
                    self.rate = self.rate.max(2.0 * mi.rate);
                }
            },
            Phase::Learning { .. } if mi.pair != self.pair => {}
            Phase::Learning { up, down, .. } => {
                match mi.purpose {
                    Purpose::TestUp => *up = Some(u),
                    Purpose::TestDown => *down = Some(u),
                    _ => return,
                }
                if let (Some(uu), Some(ud)) = (*up, *down) {
                    self.step(uu, ud);
                    self.new_pair();
                }
            }
        }
    }

    /// One gradient step from the pair's utilities.
    fn step(&mut self, u_up: f64, u_down: f64) {
        let r_mbps = self.mbps(self.rate);
        let gamma = (u_up - u_down) / (2.0 * self.p.epsilon * r_mbps.max(1e-9));
        let dir = gamma.signum();
        if dir != 0.0 && dir == self.last_dir {
            self.amplifier += 1.0;
        } else {
            // A flip starts the ascent afresh: the amplifier and the boundary both
            // go back to their initial values (PCC-Uspace `TransitionToMoving`). A
            // boundary widened by a run of bounded steps down must not carry over to
            // the first step up, or one step multiplies the rate by 1 + ω₀ + k·δ_ω.
            self.amplifier = 1.0;
            self.bound_hits = 0;
        }
        self.last_dir = dir;
        let mut delta = self.amplifier * self.p.theta0 * gamma; // Mbit/s
        let omega = self.p.omega0 + self.bound_hits as f64 * self.p.omega_step;
        let bound = omega * r_mbps;
        if delta.abs() > bound {
            delta = bound * dir;
            self.bound_hits += 1;
        } else {
            self.bound_hits = 0;
        }
        let new_mbps = r_mbps + delta;
        self.rate = (new_mbps * 1e6 / (self.mss as f64 * 8.0)).max(MIN_RATE_PPS);
    }

    fn apply(&self, tp: &mut TcpState, mi_rate: f64) {
        // The cap is 2 smoothed RTTs of data at the rate: PCC-Uspace sends by pacing
        // alone (its `CanSend` never looks at the bytes in flight), so the window
        // must not bind while feedback flows. With the minimum RTT it did whenever
        // the queue delay exceeded the minimum RTT — at a full queue after a capacity
        // drop — and the ACK clock then set the sending times (module doc).
        let rtt = if tp.srtt > 0 { tp.srtt } else { INITIAL_RTT };
        tp.pacing_rate = ((mi_rate * tp.mss as f64) as u64).max(1);
        let cwnd = (CWND_RATE_RTTS * mi_rate * rtt as f64 / NS_PER_SEC as f64).ceil() as u64;
        tp.cwnd = (cwnd.min(u32::MAX as u64) as u32).max(MIN_CWND).min(tp.cwnd_clamp);
    }
}

impl CongestionControl for Vivace {
    fn name(&self) -> &'static str {
        "vivace"
    }

    fn init(&mut self, tp: &mut TcpState) {
        *self = Self::new(self.p.clone());
        self.mss = tp.mss;
        self.rate = (tp.cwnd as f64 * NS_PER_SEC as f64 / INITIAL_RTT as f64).max(MIN_RATE_PPS);
        let mi = Mi::new(Purpose::Start, tp.now, INITIAL_RTT, self.rate, tp.snd_nxt);
        self.apply(tp, mi.rate);
        self.mis.push_back(mi);
    }

    fn ssthresh(&mut self, tp: &mut TcpState) -> u32 {
        tp.ssthresh
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    fn wants_seg_fates(&self) -> bool {
        true
    }

    fn seg_fate(&mut self, seg: u64, lost: bool, sent: Option<Time>) {
        // Charged to the MI that sent the segment (MIs hold consecutive ranges; a
        // segment below the oldest one's belongs to an MI already closed and dropped).
        if let Some(mi) = self.mis.iter_mut().rev().find(|m| m.first_seg <= seg) {
            if lost {
                mi.lost += 1;
            } else {
                mi.delivered += 1;
            }
        }
        if let Some(t) = sent {
            if self.ack_rtt_seg.is_none_or(|(_, newest)| t > newest) {
                self.ack_rtt_seg = Some((seg, t));
            }
        }
    }

    fn cong_control(&mut self, tp: &mut TcpState, _sample: &AckSample) {
        let now = tp.now;
        // Deliveries and losses arrived per segment (`seg_fate`) while the ACK was
        // processed. The ACK's RTT sample is that of the most recently sent segment it
        // delivered that was never retransmitted (unambiguous, to the ns; not the
        // timestamp echo's 1 ms ticks), and goes to the MI that sent that segment.
        if let Some((seg, sent)) = self.ack_rtt_seg.take() {
            if let Some(mi) = self.mis.iter_mut().rev().find(|m| m.first_seg <= seg) {
                mi.add_rtt(sent, now.saturating_sub(sent));
            }
        }
        // Score the MIs whose segments' fates are all known, oldest first; MIs that
        // are not scored leave as soon as they are closed.
        while let Some(front) = self.mis.front() {
            let scored = front.purpose != Purpose::Filler;
            if !(front.complete() || (!scored && front.end_seg.is_some())) {
                break;
            }
            let mi = self.mis.pop_front().expect("front exists");
            if scored {
                self.on_result(&mi);
            }
        }
        // Start the next MI when the current one's sending time is over and it sent
        // at least `MIN_MI_SEGS` segments; the current one then owns the segments
        // sent so far.
        let mi_rate = match self.mis.back() {
            Some(cur) if !cur.may_end(now, tp.snd_nxt) => cur.rate,
            _ => {
                if let Some(cur) = self.mis.back_mut() {
                    cur.end_seg = Some(tp.snd_nxt);
                }
                // One minimum RTT (module doc: a queue does not lengthen the MIs).
                let len = if tp.min_rtt != Time::MAX { tp.min_rtt.max(MIN_MI) } else { INITIAL_RTT };
                let (purpose, rate) = self.next_mi(tp);
                let mut mi = Mi::new(purpose, now, len, rate, tp.snd_nxt);
                mi.pair = self.pair;
                self.mis.push_back(mi);
                rate
            }
        };
        self.apply(tp, mi_rate);
    }

    fn undo_cwnd(&mut self, tp: &mut TcpState) -> u32 {
        tp.cwnd
    }

    fn metrics(&self, _tp: &TcpState) -> CcMetrics {
        let state = match self.phase {
            Phase::Starting { .. } => "starting",
            Phase::Learning { .. } => "learning",
        };
        CcMetrics { state, bw_bps: Some(self.rate_bps()), ..Default::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utility_rewards_rate_and_penalizes_latency_growth_and_loss() {
        // x = 10 Mbit/s (863.3 pkt/s of 1448 B): 10^0.9 = 7.943. With a rising RTT
        // (slope 0.05 s/s) the latency term is 900·10·0.05 = 450; 5% loss costs
        // 11.35·10·0.05 = 5.675. A slope below the 0.02 filter counts as 0.
        let v = Vivace::new(Params::default());
        let pps = 10e6 / (1448.0 * 8.0);
        let mut mi = Mi::new(Purpose::TestUp, 0, ms(100), pps, 0);
        mi.delivered = 100;
        assert!((v.utility(&mi) - 10f64.powf(0.9)).abs() < 1e-9);
        let mut flat = mi.clone();
        for i in 0..10u64 {
            mi.add_rtt(ms(10 * i), ms(50) + ms(i) / 2); // +0.5 ms per 10 ms: slope 0.05
            flat.add_rtt(ms(10 * i), ms(50) + ms(i) / 10); // slope 0.01 < filter
        }
        assert!((mi.rtt_gradient() - 0.05).abs() < 1e-9);
        assert!((v.utility(&mi) - (10f64.powf(0.9) - 450.0)).abs() < 1e-6);
        assert!((v.utility(&flat) - 10f64.powf(0.9)).abs() < 1e-9);
        let mut lossy = Mi::new(Purpose::TestUp, 0, ms(100), pps, 0);
        lossy.delivered = 95;
        lossy.lost = 5;
        assert!((v.utility(&lossy) - (10f64.powf(0.9) - 5.675)).abs() < 1e-9);
    }

    #[test]
    fn a_loss_is_charged_to_the_mi_that_sent_the_lost_segment() {
        // MI 1 sends segments 0..10, MI 2 segments 10..20. While MI 2's segments are
        // being acknowledged, segment 7 (sent in MI 1) is marked lost: the loss is MI
        // 1's, MI 1 is scored only when all 10 of its segments' fates are known, and
        // its utility carries a loss rate of 1/10.
        let mut v = Vivace::new(Params::default());
        let mut tp = crate::cc::testing::tcp_state(1448, 10);
        v.init(&mut tp);
        let rate1 = v.rate;
        tp.snd_nxt = 10;
        // Segments 0..10 leave 10 ms apart from t = 0, segments 10..20 4 ms apart from 100 ms.
        let sent = |seg: u64| Some(if seg < 10 { ms(10 * seg) } else { ms(100 + 4 * (seg - 10)) });
        let ack = |tp: &mut TcpState, now: Time, losses: u32| {
            tp.now = now;
            tp.srtt = ms(50);
            tp.min_rtt = ms(50);
            // The engine also counts the ACK's newly marked losses in the rate sample;
            // that count belongs to the ACK, not to the MI of the acknowledged packet.
            AckSample { acked_sacked: 1, rtt: Some(ms(50)), rs: RateSample { losses, ..Default::default() }, ..Default::default() }
        };
        for seg in 0..7 {
            v.seg_fate(seg, false, sent(seg));
        }
        let a = ack(&mut tp, ms(100), 0);
        v.cong_control(&mut tp, &a); // MI 1 ends (segments 0..10), MI 2 starts at 10
        assert_eq!((v.mis[0].first_seg, v.mis[0].end_seg, v.mis[1].first_seg), (0, Some(10), 10));
        tp.snd_nxt = 20;
        for seg in [8, 9, 10, 11, 12] {
            v.seg_fate(seg, false, sent(seg));
        }
        let a = ack(&mut tp, ms(140), 0);
        v.cong_control(&mut tp, &a);
        assert_eq!(v.mis.len(), 2, "MI 1 waits for segment 7");
        v.seg_fate(7, true, None);
        v.seg_fate(13, false, sent(13));
        assert_eq!((v.mis[0].delivered, v.mis[0].lost), (9, 1));
        assert_eq!((v.mis[1].delivered, v.mis[1].lost), (4, 0));
        // One RTT sample per ACK, from the newest segment it delivered, in that
        // segment's MI: segment 6 (MI 1) at 100 ms, segment 12 (MI 2) at 140 ms.
        assert_eq!((v.mis[0].n, v.mis[1].n), (1.0, 1.0));
        assert!((v.mis[1].sr - 0.032).abs() < 1e-12, "140 ms − 108 ms");
        let a = ack(&mut tp, ms(141), 1);
        v.cong_control(&mut tp, &a);
        assert_eq!(v.mis.front().map(|m| m.first_seg), Some(10), "MI 1 scored");
        let x = v.mbps(rate1);
        match v.phase {
            Phase::Starting { best: Some((r, u)) } => {
                assert_eq!(r, rate1);
                assert!((u - (x.powf(0.9) - 11.35 * x * 0.1)).abs() < 1e-9, "{u}");
            }
            ref p => panic!("{p:?}"),
        }
    }

    #[test]
    fn step_follows_the_utility_gradient_within_the_boundary() {
        // r = 100 Mbit/s, u₊ − u₋ = 2: γ = 2/(2·0.05·100) = 0.2 → Δr = 0.2 Mbit/s
        // (m = 1, within ω₀·r = 5 Mbit/s). Repeated in the same direction, the
        // amplifier grows: the second step is 2·0.2 = 0.4.
        let mut v = Vivace::new(Params::default());
        let to_pps = |mbps: f64| mbps * 1e6 / (1448.0 * 8.0);
        v.rate = to_pps(100.0);
        v.step(1.0, -1.0);
        assert!((v.mbps(v.rate) - 100.2).abs() < 1e-9, "{}", v.mbps(v.rate));
        v.step(1.0, -1.0);
        let g2 = 2.0 / (2.0 * 0.05 * 100.2);
        assert!((v.mbps(v.rate) - (100.2 + 2.0 * g2)).abs() < 1e-9);
        // A huge gradient is clipped to ω₀·r = 5% of the rate, then the bound widens.
        v.rate = to_pps(100.0);
        v.amplifier = 1.0;
        v.last_dir = 0.0;
        v.step(1000.0, 0.0);
        assert!((v.mbps(v.rate) - 105.0).abs() < 1e-9);
        v.step(1000.0, 0.0);
        assert!((v.mbps(v.rate) - 105.0 * 1.15).abs() < 1e-9, "ω = 0.05 + 0.1 after one bounded step");
        // A flip resets the widened bound: after 20 bounded steps down (ω would be
        // 2.05), the first step up is again at most ω₀·r.
        for _ in 0..20 {
            v.step(0.0, 1000.0);
        }
        let before = v.mbps(v.rate);
        v.step(1000.0, 0.0);
        assert!((v.mbps(v.rate) - before * 1.05).abs() < 1e-9, "{before} -> {}", v.mbps(v.rate));
    }

    #[test]
    fn a_standing_queue_does_not_make_the_window_bind() {
        // Rate 1,000 packets/s, minimum RTT 30 ms, and a queue that made the smoothed
        // RTT 90 ms: at the rate, 90 packets are in flight. The cap is 2·r·srtt = 180
        // packets; on the minimum RTT it was 60, and the window, not the rate, decided.
        let mut v = Vivace::new(Params::default());
        let mut tp = crate::cc::testing::tcp_state(1448, 10);
        v.init(&mut tp);
        tp.min_rtt = ms(30);
        tp.srtt = ms(90);
        v.apply(&mut tp, 1000.0);
        assert_eq!((tp.cwnd, tp.pacing_rate), (180, 1000 * 1448));
    }
}
