//! LEDBAT++: a less-than-best-effort ("scavenger") CCA for background transfers.
//! It keeps the queueing delay it adds below a target and backs off as soon as
//! the delay grows — which happens as soon as a best-effort flow fills the queue,
//! so it yields the link to it.
//!
//! From RFC 6817 (LEDBAT): queueing delay = current delay − base delay, where the
//! base delay is the minimum over the last 10 minutes (`BASE_HISTORY` of 1-minute
//! minima) and the current delay the minimum of the last 4 samples
//! (`CURRENT_FILTER`), filtering noise. LEDBAT++ measures RTT instead of one-way
//! delay and changes four things (draft-irtf-iccrg-ledbat-plus-plus):
//!
//! * **target** = 60 ms (instead of ≤ 100 ms);
//! * **reduced gain**: GAIN = 1 / min(16, ⌈2·target / base delay⌉), so short-RTT
//!   flows, which get more ACKs per second, do not ramp faster than long ones;
//! * **multiplicative decrease**: per RTT, `W += GAIN` while the queueing delay is
//!   below the target (the draft: "the per RTT window when delay is less than
//!   target is: W += GAIN"), and `W += max(GAIN − C·W·(queueing delay/target − 1),
//!   −W/2)` with C = 1 at or above it — additive growth, and a decrease
//!   proportional to W (at most a halving per RTT), which gives inter-LEDBAT
//!   fairness. (The second formula read below the target would grow W by up to W
//!   per RTT: no scavenger.)
//! * **slower start**: slow start grows by GAIN per acknowledged packet and ends
//!   when the queueing delay exceeds ¾ of the target;
//! * **periodic slowdown**: 2 RTTs after slow start ends, and then again after 9×
//!   the duration of the previous slowdown, cwnd drops to 2 packets for 2 RTTs and
//!   slow-starts back to the window it had (ssthresh). The queue drains, so every
//!   LEDBAT++ flow re-measures the true base delay (no "latecomer advantage" or
//!   base-delay drift), at a cost of ≤ 10% utilization.
//!
//! Loss: the window halves (RFC 6817 §2.4.1), through the sender's recovery.
//!
//! References: RFC 6817; draft-irtf-iccrg-ledbat-plus-plus-01 (2020), since
//! updated to -06 (2026) without changing these mechanisms; Windows' LEDBAT++ is
//! the reference implementation (not public); ns-3 `tcp-ledbat.cc` implements
//! RFC 6817 only.
//!
//! Parameters: `target_ms` = 60, `gain_cap` = 16 (the draft's min(16, ·)),
//! `decrease_constant` = 1 (C), `slowdown_rtts` = 2 (freeze), `slowdown_interval`
//! = 9 (× the slowdown's duration), `ss_exit_fraction` = 0.75 (of the target).
//! Windows are kept as real numbers internally and cwnd is their floor; cwnd
//! never goes below 2 packets (RFC 6817's MIN_CWND).

use serde::{Deserialize, Serialize};

use super::common::classic::reno_ssthresh;
use super::common::MinFilter;
use super::registry::{describe_params, parse_params, CcaInfo};
use super::{AckSample, BoxedCca, CaState, CcMetrics, CongestionControl, TcpState};
use crate::units::{secs, Time};

/// RFC 6817 `BASE_HISTORY`: base delay over the last 10 minutes.
const BASE_HISTORY: Time = secs(600);
/// RFC 6817 `CURRENT_FILTER`: current delay = min of the last 4 samples.
const CURRENT_FILTER: usize = 4;
/// RFC 6817 `MIN_CWND`.
const MIN_CWND: f64 = 2.0;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    pub target_ms: f64,
    pub gain_cap: u32,
    pub decrease_constant: f64,
    pub slowdown_rtts: u32,
    pub slowdown_interval: f64,
    pub ss_exit_fraction: f64,
}

impl Default for Params {
    fn default() -> Self {
        Self {
            target_ms: 60.0,
            gain_cap: 16,
            decrease_constant: 1.0,
            slowdown_rtts: 2,
            slowdown_interval: 9.0,
            ss_exit_fraction: 0.75,
        }
    }
}

const PARAM_DOCS: &[(&str, &str)] = &[
    ("target_ms", "queueing delay target, ms (LEDBAT++ 60)"),
    ("gain_cap", "GAIN = 1/min(gain_cap, ceil(2·target/base delay)) (LEDBAT++ 16)"),
    ("decrease_constant", "C in W += max(GAIN − C·W·(delay/target − 1), −W/2) per RTT at or above the target (below it W += GAIN) (LEDBAT++ 1)"),
    ("slowdown_rtts", "RTTs cwnd is held at 2 packets in a periodic slowdown (LEDBAT++ 2)"),
    ("slowdown_interval", "next slowdown after this many times the last one's duration (LEDBAT++ 9)"),
    ("ss_exit_fraction", "slow start ends when queueing delay exceeds this fraction of the target (LEDBAT++ 0.75)"),
];

pub const INFO: CcaInfo = CcaInfo {
    name: "ledbat",
    family: "scavenger",
    summary: "LEDBAT++: 60 ms delay target, reduced gain, multiplicative decrease, periodic slowdowns",
    reference: "RFC 6817; draft-irtf-iccrg-ledbat-plus-plus",
    params: || describe_params::<Params>(PARAM_DOCS),
    build: |v| {
        let p: Params = parse_params("ledbat", v)?;
        let ok = p.target_ms > 0.0
            && p.gain_cap >= 1
            && p.decrease_constant >= 0.0
            && p.slowdown_interval >= 0.0
            && (0.0..=1.0).contains(&p.ss_exit_fraction);
        if !(ok && p.target_ms.is_finite() && p.decrease_constant.is_finite() && p.slowdown_interval.is_finite()) {
            return Err("parameters of CCA 'ledbat': need target_ms > 0, gain_cap >= 1, decrease_constant >= 0, slowdown_interval >= 0, ss_exit_fraction in [0, 1]".into());
        }
        Ok(Box::new(Ledbat::new(p)) as BoxedCca)
    },
};

/// Where the flow is in LEDBAT++'s cycle.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    /// Initial (slower) slow start.
    SlowStart,
    /// Delay-based congestion avoidance; the next slowdown starts at `next_slowdown`.
    Avoid { next_slowdown: Time },
    /// cwnd held at 2 packets until `until`, then slow start back to ssthresh.
    Frozen { started: Time, until: Time },
    /// Slow start back to ssthresh after a freeze that began at `started`.
    Recovering { started: Time },
}

#[derive(Debug, Clone)]
pub struct Ledbat {
    p: Params,
    /// The window as a real number (packets).
    w: f64,
    base: MinFilter,
    recent: [Time; CURRENT_FILTER],
    n_recent: usize,
    phase: Phase,
}

impl Ledbat {
    pub fn new(p: Params) -> Self {
        Self { p, w: 0.0, base: MinFilter::new(BASE_HISTORY), recent: [0; CURRENT_FILTER], n_recent: 0, phase: Phase::SlowStart }
    }

    fn target(&self) -> f64 {
        self.p.target_ms * 1e6
    }

    /// Base delay (ns), if measured.
    fn base_delay(&self) -> Option<Time> {
        (self.n_recent > 0).then(|| self.base.get())
    }

    /// Queueing delay now (ns): min of the last samples minus the base.
    fn queueing_delay(&self) -> Option<f64> {
        let base = self.base_delay()?;
        let n = self.n_recent.min(CURRENT_FILTER);
        let current = self.recent[..n].iter().copied().min()?;
        Some(current.saturating_sub(base) as f64)
    }

    /// GAIN = 1 / min(cap, ⌈2·target / base⌉).
    fn gain(&self) -> f64 {
        let Some(base) = self.base_delay().filter(|&b| b > 0) else { return 1.0 / self.p.gain_cap as f64 };
        let ratio = (2.0 * self.target() / base as f64).ceil().max(1.0);
        1.0 / ratio.min(self.p.gain_cap as f64)
    }

    fn set_cwnd(&mut self, tp: &mut TcpState) {
        self.w = self.w.clamp(MIN_CWND, tp.cwnd_clamp as f64);
        tp.cwnd = self.w as u32;
    }

    /// One RTT from now, for scheduling (srtt, or the base delay before any srtt).
    fn rtt(&self, tp: &TcpState) -> Time {
        if tp.srtt > 0 {
            tp.srtt
        } else {
            self.base_delay().unwrap_or(0)
        }
    }

    /// Slower start: +GAIN per acknowledged packet, up to ssthresh. Returns whether
    /// slow start is over (ssthresh reached or queueing delay above ¾ target).
    fn slower_start(&mut self, tp: &mut TcpState, acked: u32) -> bool {
        self.w += self.gain() * acked as f64;
        let delay_exit = self.queueing_delay().is_some_and(|q| q > self.p.ss_exit_fraction * self.target());
        if self.w >= tp.ssthresh as f64 {
            self.w = tp.ssthresh as f64;
            return true;
        }
        delay_exit
    }
}

impl CongestionControl for Ledbat {
    fn name(&self) -> &'static str {
        "ledbat"
    }

    fn init(&mut self, tp: &mut TcpState) {
        *self = Self::new(self.p.clone());
        self.w = tp.cwnd as f64;
    }

    fn ssthresh(&mut self, tp: &mut TcpState) -> u32 {
        reno_ssthresh(tp)
    }

    fn pkts_acked(&mut self, tp: &mut TcpState, sample: &AckSample) {
        let Some(rtt) = sample.rtt else { return };
        self.base.update(tp.now, rtt);
        self.recent[self.n_recent % CURRENT_FILTER] = rtt;
        self.n_recent += 1;
    }

    fn cong_avoid(&mut self, tp: &mut TcpState, sample: &AckSample) {
        // Follow what the sender did to cwnd (recovery, RTO) since the last ACK.
        if self.w as u32 != tp.cwnd {
            self.w = tp.cwnd as f64;
        }
        let now = tp.now;
        let acked = sample.acked_sacked;
        match self.phase {
            Phase::SlowStart => {
                if self.slower_start(tp, acked) {
                    tp.ssthresh = (self.w as u32).max(2);
                    let next_slowdown = now + self.p.slowdown_rtts as Time * self.rtt(tp);
                    self.phase = Phase::Avoid { next_slowdown };
                }
            }
            Phase::Avoid { next_slowdown } if now >= next_slowdown => {
                // Periodic slowdown: remember the window, hold 2 packets for 2 RTTs.
                tp.ssthresh = (self.w as u32).max(2);
                self.w = MIN_CWND;
                let until = now + self.p.slowdown_rtts as Time * self.rtt(tp);
                self.phase = Phase::Frozen { started: now, until };
            }
            Phase::Avoid { .. } => {
                let Some(q) = self.queueing_delay() else { return };
                // Per RTT: W += GAIN below the target, W += max(GAIN − C·W·(q/target − 1),
                // −W/2) at or above it; per ACK, × acked/W.
                let w = self.w;
                let per_rtt = if q < self.target() {
                    self.gain()
                } else {
                    (self.gain() - self.p.decrease_constant * w * (q / self.target() - 1.0)).max(-w / 2.0)
                };
                self.w += per_rtt * acked as f64 / w;
            }
            Phase::Frozen { started, until } => {
                self.w = MIN_CWND;
                if now >= until {
                    self.phase = Phase::Recovering { started };
                }
            }
            Phase::Recovering { started } => {
                if self.slower_start(tp, acked) {
                    let duration = now - started;
                    let next_slowdown = now + (self.p.slowdown_interval * duration as f64) as Time;
                    self.phase = Phase::Avoid { next_slowdown };
                }
            }
        }
        self.set_cwnd(tp);
    }

    /// An RTO restarts LEDBAT++ from slow start.
    fn set_state(&mut self, _tp: &mut TcpState, new_state: CaState) {
        if new_state == CaState::Loss {
            self.phase = Phase::SlowStart;
        }
    }

    fn metrics(&self, _tp: &TcpState) -> CcMetrics {
        let state = match self.phase {
            Phase::SlowStart => "slow_start",
            Phase::Avoid { .. } => "cong_avoid",
            Phase::Frozen { .. } => "slowdown",
            Phase::Recovering { .. } => "slowdown_recovery",
        };
        CcMetrics { state, min_rtt_ns: self.base_delay(), ..Default::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::reno::Reno;
    use crate::cc::testing::TimelineHarness;
    use crate::units::ms;

    fn ledbat() -> BoxedCca {
        Box::new(Ledbat::new(Params::default()))
    }

    #[test]
    fn gain_is_one_over_twice_target_over_base() {
        // base 50 ms: ⌈120/50⌉ = 3 → GAIN 1/3; base 5 ms: ⌈24⌉ capped at 16 → 1/16;
        // base 150 ms: ⌈0.8⌉ = 1 → GAIN 1.
        for (base_ms, gain) in [(50, 1.0 / 3.0), (5, 1.0 / 16.0), (150, 1.0)] {
            let mut c = Ledbat::new(Params::default());
            c.base.update(0, ms(base_ms));
            c.recent[0] = ms(base_ms);
            c.n_recent = 1;
            assert!((c.gain() - gain).abs() < 1e-12, "base {base_ms} ms: gain {}", c.gain());
        }
    }

    #[test]
    fn slow_start_equals_renos_when_gain_is_one() {
        // Differential: with base RTT ≥ 2·target (150 ms ≥ 120 ms) GAIN = 1, and the
        // slower start (+GAIN per acked packet) is Reno's slow start; no queue, so
        // the ¾-target exit does not fire.
        let mut le = TimelineHarness::new(ledbat(), 1448, 10).with_rtt(ms(150));
        let mut re = TimelineHarness::new(Box::new(Reno), 1448, 10).with_rtt(ms(150));
        for _ in 0..5 {
            le.run_rounds(1);
            re.run_rounds(1);
            assert_eq!(le.tp().cwnd, re.tp().cwnd);
        }
        assert_eq!(re.tp().cwnd, 320);
    }

    #[test]
    fn holds_queueing_delay_near_the_target() {
        // 1000 pkt/s bottleneck, 50 ms base RTT: BDP 50 packets; a 60 ms target queue
        // is 60 packets, so cwnd settles near 110 (RTT ≈ 110 ms) between slowdowns.
        let mut h = TimelineHarness::new(ledbat(), 1448, 10).with_rtt(ms(50)).with_bottleneck_pps(1000.0);
        let mut samples = Vec::new();
        for _ in 0..150 {
            h.run_rounds(1);
            if h.cca().metrics(h.tp()).state == "cong_avoid" && h.now() > secs(5) {
                samples.push(h.tp().cwnd);
            }
        }
        assert!(samples.len() > 20, "too few congestion-avoidance rounds: {}", samples.len());
        samples.sort_unstable();
        let median = samples[samples.len() / 2];
        assert!((95..=125).contains(&median), "median cwnd {median}, expected ≈ 110 (50 BDP + 60 target)");
    }

    #[test]
    fn below_the_target_the_window_grows_by_gain_per_rtt() {
        // 60 ms base RTT and no queue: GAIN = 1/⌈120/60⌉ = 1/2, so four RTTs of congestion
        // avoidance add 2 packets. (The decrease formula read below the target would add
        // W·(1 − 0) per RTT: the window would double every RTT.) The first slowdown is
        // put out of reach so that the four rounds are all congestion avoidance.
        let p = Params { slowdown_rtts: 1000, ..Params::default() };
        let mut h = TimelineHarness::in_cong_avoid(Box::new(Ledbat::new(p)), 100, ms(60));
        h.run_rounds(2);
        assert_eq!(h.cca().metrics(h.tp()).state, "cong_avoid");
        let before = h.tp().cwnd;
        h.run_rounds(4);
        let grown = h.tp().cwnd - before;
        assert!((1..=3).contains(&grown), "cwnd {before} -> {}: grew {grown}, expected ≈ 2", h.tp().cwnd);
    }

    #[test]
    fn periodic_slowdown_drops_to_two_packets_and_recovers() {
        let mut h = TimelineHarness::new(ledbat(), 1448, 10).with_rtt(ms(50)).with_bottleneck_pps(1000.0);
        let mut states = Vec::new();
        for _ in 0..200 {
            h.run_rounds(1);
            let st = h.cca().metrics(h.tp()).state;
            if st == "slowdown" {
                assert_eq!(h.tp().cwnd, 2);
            }
            if states.last() != Some(&st) {
                states.push(st);
            }
        }
        // slow start → avoid → slowdown → recovery → avoid → slowdown ...
        assert_eq!(&states[..5], &["slow_start", "cong_avoid", "slowdown", "slowdown_recovery", "cong_avoid"]);
        assert!(states.iter().filter(|s| **s == "slowdown").count() >= 2, "{states:?}");
    }
}
