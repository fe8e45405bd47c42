//! YeAH-TCP (Yet Another Highspeed TCP): Scalable TCP's fast growth while the
//! path has no queue, Reno's growth while it has one, and a "precautionary
//! decongestion" that drains the queue this flow built before any loss. Once per
//! RTT (Vegas' rounds) it estimates its backlog
//!
//! ```text
//!   Q = cwnd · (RTT_min − RTT_base) / RTT_min        (packets)
//! ```
//!
//! and with Q > α = 80 packets, or a queueing delay above RTT_base/φ (φ = 8), it
//! enters the slow (Reno) mode, removing min(Q/γ, cwnd/2^ε) from cwnd when Q > α
//! (γ = 1, ε = 1); otherwise it is in the fast (Scalable) mode. On a loss it
//! removes only its own backlog (at least cwnd/2^δ = cwnd/8, at most half), unless
//! it has been in the slow mode for ρ = 16 rounds in a row (competing with Reno
//! flows), then it halves. `reno_count` estimates the window a competing Reno flow
//! would have, below which the decongestion never cuts.
//!
//! References: A. Baiocchi, A. P. Castellani and F. Vacirca, "YeAH-TCP: Yet Another
//! Highspeed TCP", PFLDnet 2007; Linux `net/ipv4/tcp_yeah.c` (followed hook for
//! hook; its RTT bookkeeping is Vegas', [`VegasRtt`]).
//!
//! Parameters (Linux's compile-time constants, exposed with its values): `alpha` =
//! 80, `gamma` = 1, `delta` = 3, `epsilon` = 1, `phy` = 8, `rho` = 16, `zeta` = 50
//! (the paper's values, §3).

use serde::{Deserialize, Serialize};

use super::common::classic::{cong_avoid_ai, phase, slow_start};
use super::common::vegas_rtt::VegasRtt;
use super::registry::{describe_params, parse_params, CcaInfo};
use super::{AckSample, BoxedCca, CaEvent, CaState, CcMetrics, CongestionControl, TcpState};

/// Linux `TCP_SCALABLE_AI_CNT`: the fast mode adds 1 packet per 100 acked.
const SCALABLE_AI_CNT: u32 = 100;
/// Linux clamps cwnd to 2^32/128 so the decongestion arithmetic cannot overflow.
const CWND_CLAMP_MAX: u32 = u32::MAX / 128;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    pub alpha: u32,
    pub gamma: u32,
    pub delta: u32,
    pub epsilon: u32,
    pub phy: u32,
    pub rho: u32,
    pub zeta: u32,
}

impl Default for Params {
    fn default() -> Self {
        Self { alpha: 80, gamma: 1, delta: 3, epsilon: 1, phy: 8, rho: 16, zeta: 50 }
    }
}

const PARAM_DOCS: &[(&str, &str)] = &[
    ("alpha", "packets queued above which the slow mode decongests (TCP_YEAH_ALPHA)"),
    ("gamma", "the decongestion removes queue/gamma packets per RTT (TCP_YEAH_GAMMA)"),
    ("delta", "a loss removes at least cwnd >> delta (TCP_YEAH_DELTA; 3 = 1/8)"),
    ("epsilon", "the decongestion removes at most cwnd >> epsilon (TCP_YEAH_EPSILON; 1 = 1/2)"),
    ("phy", "queueing delay above baseRTT/phy means the slow mode (TCP_YEAH_PHY)"),
    ("rho", "slow-mode rounds in a row after which a loss halves, as Reno (TCP_YEAH_RHO)"),
    ("zeta", "fast-mode rounds after which the Reno-window estimate resets (TCP_YEAH_ZETA)"),
];

pub const INFO: CcaInfo = CcaInfo {
    name: "yeah",
    family: "loss+delay",
    summary: "YeAH: Scalable growth with no queue, Reno's with one, decongests its own queue (Linux tcp_yeah.c)",
    reference: "Baiocchi, Castellani & Vacirca, PFLDnet 2007; Linux net/ipv4/tcp_yeah.c",
    params: || describe_params::<Params>(PARAM_DOCS),
    build: |v| {
        let p: Params = parse_params("yeah", v)?;
        if p.gamma == 0 || p.phy == 0 || p.delta > 31 || p.epsilon > 31 {
            return Err("parameters of CCA 'yeah': gamma and phy must be >= 1, delta and epsilon in 0..=31".into());
        }
        Ok(Box::new(Yeah::new(p)) as BoxedCca)
    },
};

#[derive(Debug, Clone)]
pub struct Yeah {
    p: Params,
    rtt: VegasRtt,
    /// Backlog estimated at the end of the last round (packets, `lastQ`).
    last_q: u32,
    /// Slow-mode rounds in a row; 0 in the fast mode (`doing_reno_now`).
    doing_reno_now: u32,
    /// Estimate of a competing Reno flow's window (`reno_count`).
    reno_count: u32,
    /// Fast-mode rounds since `reno_count` was last reset (`fast_count`).
    fast_count: u32,
}

impl Yeah {
    pub fn new(p: Params) -> Self {
        Self { p, rtt: VegasRtt::default(), last_q: 0, doing_reno_now: 0, reno_count: 2, fast_count: 0 }
    }

    /// The end-of-round decision (the `after(ack, beg_snd_nxt)` block).
    fn end_of_round(&mut self, tp: &mut TcpState) {
        let (rtt, base) = (self.rtt.min_rtt, self.rtt.base_rtt);
        let queue = (tp.cwnd as u64 * rtt.saturating_sub(base) as u64 / rtt.max(1) as u64) as u32;
        if queue > self.p.alpha || rtt.saturating_sub(base) > base / self.p.phy {
            // Slow (Reno) mode; precautionary decongestion of our own queue.
            if queue > self.p.alpha && tp.cwnd > self.reno_count {
                let reduction = (queue / self.p.gamma).min(tp.cwnd >> self.p.epsilon);
                tp.cwnd = (tp.cwnd - reduction).max(self.reno_count);
                tp.ssthresh = tp.cwnd;
            }
            self.reno_count = if self.reno_count <= 2 { (tp.cwnd >> 1).max(2) } else { self.reno_count + 1 };
            self.doing_reno_now = (self.doing_reno_now + 1).min(0xff_ffff);
        } else {
            self.fast_count += 1;
            if self.fast_count > self.p.zeta {
                self.reno_count = 2;
                self.fast_count = 0;
            }
            self.doing_reno_now = 0;
        }
        self.last_q = queue;
    }
}

impl CongestionControl for Yeah {
    fn name(&self) -> &'static str {
        "yeah"
    }

    /// `tcp_yeah_init`: Vegas' init, fast mode, the cwnd clamp.
    fn init(&mut self, tp: &mut TcpState) {
        self.rtt = VegasRtt::default();
        self.rtt.restart_round(tp);
        self.doing_reno_now = 0;
        self.last_q = 0;
        self.reno_count = 2;
        tp.cwnd_clamp = tp.cwnd_clamp.min(CWND_CLAMP_MAX);
    }

    /// `tcp_vegas_pkts_acked`.
    fn pkts_acked(&mut self, _tp: &mut TcpState, sample: &AckSample) {
        self.rtt.on_sample(sample);
    }

    /// `tcp_vegas_state`: a new round starts on returning to Open.
    fn set_state(&mut self, tp: &mut TcpState, new_state: CaState) {
        if new_state == CaState::Open {
            self.rtt.restart_round(tp);
        }
    }

    /// `tcp_vegas_cwnd_event`: start over after idle.
    fn cwnd_event(&mut self, tp: &mut TcpState, event: CaEvent) {
        if matches!(event, CaEvent::CwndRestart | CaEvent::TxStart) {
            self.rtt = VegasRtt::default();
            self.rtt.restart_round(tp);
        }
    }

    /// `tcp_yeah_cong_avoid`.
    fn cong_avoid(&mut self, tp: &mut TcpState, sample: &AckSample) {
        let mut acked = sample.acked_sacked;
        if tp.in_slow_start() {
            acked = slow_start(tp, acked);
        }
        if acked > 0 {
            let w = if self.doing_reno_now == 0 { tp.cwnd.min(SCALABLE_AI_CNT) } else { tp.cwnd };
            cong_avoid_ai(tp, w, acked);
        }
        if self.rtt.round_ended(tp, sample) {
            if self.rtt.cnt_rtt > 2 {
                self.end_of_round(tp);
            }
            self.rtt.clear_round();
        }
    }

    /// `tcp_yeah_ssthresh`: remove our own backlog, or halve when competing with Reno.
    fn ssthresh(&mut self, tp: &mut TcpState) -> u32 {
        let half = (tp.cwnd >> 1).max(2);
        let reduction = if self.doing_reno_now < self.p.rho {
            self.last_q.min(half).max(tp.cwnd >> self.p.delta)
        } else {
            half
        };
        self.fast_count = 0;
        self.reno_count = (self.reno_count >> 1).max(2);
        tp.cwnd.saturating_sub(reduction).max(2)
    }

    fn metrics(&self, tp: &TcpState) -> CcMetrics {
        let state = if tp.in_slow_start() {
            phase(tp)
        } else if self.doing_reno_now == 0 {
            "fast"
        } else {
            "slow"
        };
        CcMetrics { state, ..Default::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testing::TimelineHarness;
    use crate::units::ms;

    fn yeah(cwnd: u32, rtt_ms: u64) -> TimelineHarness {
        TimelineHarness::in_cong_avoid(Box::new(Yeah::new(Params::default())), cwnd, ms(rtt_ms))
    }

    #[test]
    fn without_a_queue_it_grows_as_scalable() {
        // RTT = baseRTT: no queue → fast mode: +1 per 100 acked, so a 1000-packet
        // window grows by 10 per round (Reno: +1).
        let mut h = yeah(1000, 50);
        h.run_rounds(3);
        assert!((1025..=1031).contains(&h.tp().cwnd), "cwnd {} after 3 rounds", h.tp().cwnd);
        assert_eq!(h.cca().metrics(h.tp()).state, "fast");
    }

    #[test]
    fn a_queue_above_alpha_is_drained_before_any_loss() {
        // baseRTT 50 ms, then the path's RTT is 75 ms: at the end of the first round
        // measured at 75 ms, Q = cwnd·25/75 = cwnd/3 > α = 80 → slow mode, and cwnd −=
        // min(Q/γ, cwnd/2) = cwnd/3, ssthresh = cwnd. (The harness's RTT is a path
        // property, so later rounds see the same delay and decongest again.)
        let mut h = yeah(1000, 50);
        h.run_rounds(2);
        h.set_rtt(ms(75));
        let mut before = h.tp().cwnd;
        for _ in 0..5 {
            h.run_rounds(1);
            if h.tp().cwnd < before {
                break;
            }
            before = h.tp().cwnd;
        }
        let after = h.tp().cwnd;
        let expect = before - before / 3;
        assert!(after.abs_diff(expect) <= 3, "cwnd {before} → {after}, expected ≈ {expect}");
        assert!(h.tp().ssthresh.abs_diff(after) <= 3, "ssthresh {} follows the cut", h.tp().ssthresh);
        assert_eq!(h.cca().metrics(h.tp()).state, "slow");
        assert_eq!((h.tp().lost, h.tp().ca_state), (0, CaState::Open), "no loss was needed");
    }

    #[test]
    fn a_loss_removes_only_its_own_backlog() {
        // Fast mode with a small measured queue (last_q = 30): ssthresh = cwnd −
        // max(min(30, cwnd/2), cwnd/8) = 1000 − 125 = 875 (the 1/8 floor).
        let mut y = Yeah::new(Params::default());
        let mut tp = crate::cc::testing::tcp_state(1448, 1000);
        y.last_q = 30;
        assert_eq!(y.ssthresh(&mut tp), 875);
        y.last_q = 300;
        assert_eq!(y.ssthresh(&mut tp), 700);
        // After ρ = 16 slow rounds in a row (competing with Reno): halve.
        y.doing_reno_now = 16;
        assert_eq!(y.ssthresh(&mut tp), 500);
    }
}
