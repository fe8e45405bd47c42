//! Compound TCP (CTCP): the sending window is the sum of a Reno loss window
//! `cwnd` and a delay window `dwnd`, win = cwnd + dwnd. Once per RTT CTCP
//! estimates the packets it keeps queued, as Vegas does,
//!
//! ```text
//!   diff = win · (1 − baseRTT / RTT)
//!   diff < γ:  dwnd += max(α·win^k − 1, 0)      (binomial increase: together with
//!                                               cwnd's +1, win grows by α·win^k)
//!   diff ≥ γ:  dwnd −= ζ·diff, at least 0       (give back what is queued)
//! ```
//!
//! and on a loss win becomes win·(1 − β): cwnd halves, dwnd = win·(1 − β) − cwnd/2.
//! So CTCP is as aggressive as HighSpeed TCP while the path is under-used, and
//! no more aggressive than Reno once a queue builds.
//!
//! References: K. Tan, J. Song, Q. Zhang, M. Sridharan, "A Compound TCP Approach
//! for High-speed and Long Distance Networks", IEEE INFOCOM 2006;
//! draft-sridharan-tcpm-ctcp-02 (2008). There is no public reference
//! implementation (Windows); every choice is documented here.
//!
//! Parameters (defaults from the paper and the draft):
//! * `alpha` = 0.125, `k` = 0.75: the binomial increase α·win^k, chosen in the
//!   paper so CTCP's response function matches HighSpeed TCP's (k = 0.75 gives
//!   HSTCP's w ∝ p^−0.8 scaling).
//! * `beta` = 0.5: the multiplicative decrease of win on loss (Reno's).
//! * `zeta` = 1: dwnd gives back exactly the estimated queue per RTT.
//! * `gamma` = 30 packets: the queue above which dwnd shrinks. The paper fixes
//!   γ = 30 for its testbed; the later "gamma auto-tuning" (TUBE) is not modelled.
//!
//! Choices where the papers are silent:
//! * RTT is the minimum sample within the round and baseRTT the minimum ever, as
//!   Vegas (Linux `tcp_vegas.c`), which filters delayed ACKs.
//! * A round needs at least 3 RTT samples (Vegas's rule); otherwise dwnd holds.
//! * dwnd is only used in congestion avoidance; slow start is Reno's and dwnd = 0.
//! * On an RTO dwnd is reset to 0 (the window restarts at 1 packet).
//! * cwnd's +1 per RTT counts ACKed packets against win (the draft's
//!   cwnd += 1/win per ACK), so the Reno part grows by one packet per RTT.

use serde::{Deserialize, Serialize};

use super::common::classic::{phase, slow_start};
use super::common::vegas_rtt::VegasRtt;
use super::registry::{describe_params, parse_params, CcaInfo};
use super::vegas::MIN_SAMPLES_PER_ROUND;
use super::{AckSample, BoxedCca, CaState, CcMetrics, CongestionControl, TcpState};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    pub alpha: f64,
    pub k: f64,
    pub beta: f64,
    pub zeta: f64,
    pub gamma: u32,
}

impl Default for Params {
    fn default() -> Self {
        Self { alpha: 0.125, k: 0.75, beta: 0.5, zeta: 1.0, gamma: 30 }
    }
}

const PARAM_DOCS: &[(&str, &str)] = &[
    ("alpha", "binomial increase factor α of α·win^k per RTT (Tan et al. 0.125)"),
    ("k", "binomial increase exponent (Tan et al. 0.75, HighSpeed-like scaling)"),
    ("beta", "multiplicative decrease of the total window on loss (0.5)"),
    ("zeta", "dwnd decrease per queued packet per RTT (1)"),
    ("gamma", "queued packets above which dwnd shrinks (Tan et al. 30)"),
];

pub const INFO: CcaInfo = CcaInfo {
    name: "compound",
    family: "loss+delay",
    summary: "Compound TCP: Reno window + delay window growing α·win^k while the queue < γ",
    reference: "Tan, Song, Zhang, Sridharan, IEEE INFOCOM 2006; draft-sridharan-tcpm-ctcp-02",
    params: || describe_params::<Params>(PARAM_DOCS),
    build: |v| {
        let p: Params = parse_params("compound", v)?;
        let ok = p.alpha > 0.0 && p.k > 0.0 && p.k < 1.0 && p.beta > 0.0 && p.beta < 1.0 && p.zeta >= 0.0;
        if !(ok && p.alpha.is_finite() && p.zeta.is_finite()) {
            return Err("parameters of CCA 'compound': need alpha > 0, 0 < k < 1, 0 < beta < 1, zeta >= 0".into());
        }
        Ok(Box::new(Compound::new(p)) as BoxedCca)
    },
};

#[derive(Debug, Clone)]
pub struct Compound {
    p: Params,
    /// The Reno (loss) window, packets.
    reno: u32,
    /// The delay window, packets.
    dwnd: u32,
    /// ACKed packets towards the next +1 of `reno`.
    reno_cnt: u32,
    rtt: VegasRtt,
    /// reno before the last reduction, for undo.
    prior_reno: u32,
}

impl Compound {
    pub fn new(p: Params) -> Self {
        Self { p, reno: 0, dwnd: 0, reno_cnt: 0, rtt: VegasRtt::default(), prior_reno: 0 }
    }

    /// (Reno window, delay window), packets.
    pub fn windows(&self) -> (u32, u32) {
        (self.reno, self.dwnd)
    }

    /// Take over whatever the sender did to cwnd (PRR, RTO, undo): the delay window
    /// can only shrink, the Reno window is the rest.
    fn sync(&mut self, tp: &TcpState) {
        if self.reno + self.dwnd != tp.cwnd {
            self.dwnd = self.dwnd.min(tp.cwnd);
            self.reno = tp.cwnd - self.dwnd;
        }
    }

    /// The per-RTT delay-window update.
    fn update_dwnd(&mut self, win: u32) {
        if self.rtt.cnt_rtt < MIN_SAMPLES_PER_ROUND {
            return;
        }
        let (rtt, base) = (self.rtt.min_rtt as f64, self.rtt.base_rtt as f64);
        let diff = win as f64 * (1.0 - base / rtt);
        if diff < self.p.gamma as f64 {
            let inc = (self.p.alpha * (win as f64).powf(self.p.k) - 1.0).max(0.0);
            self.dwnd = self.dwnd.saturating_add(inc as u32);
        } else {
            let dec = (self.p.zeta * diff) as u32;
            self.dwnd = self.dwnd.saturating_sub(dec);
        }
    }
}

impl CongestionControl for Compound {
    fn name(&self) -> &'static str {
        "compound"
    }

    fn init(&mut self, tp: &mut TcpState) {
        *self = Self::new(self.p.clone());
        self.reno = tp.cwnd;
        self.rtt.restart_round(tp);
    }

    /// win·(1 − β) overall; the Reno part halves, the delay part takes the rest.
    fn ssthresh(&mut self, tp: &mut TcpState) -> u32 {
        self.sync(tp);
        self.prior_reno = self.reno;
        let win = tp.cwnd as f64;
        let reno = (self.reno / 2).max(2);
        let target = ((win * (1.0 - self.p.beta)) as u32).max(reno);
        self.reno = reno;
        self.dwnd = target - reno;
        target.max(2)
    }

    fn pkts_acked(&mut self, _tp: &mut TcpState, sample: &AckSample) {
        self.rtt.on_sample(sample);
    }

    fn cong_avoid(&mut self, tp: &mut TcpState, sample: &AckSample) {
        self.sync(tp);
        let round_ended = self.rtt.round_ended(tp, sample);
        if tp.in_slow_start() {
            // Reno slow start; the delay window stays empty.
            self.dwnd = 0;
            let left = slow_start(tp, sample.acked_sacked);
            self.reno = tp.cwnd;
            if left == 0 {
                if round_ended {
                    self.rtt.clear_round();
                }
                return;
            }
        }
        // Reno part: +1 per win ACKed packets.
        let win = tp.cwnd.max(1);
        self.reno_cnt += sample.acked_sacked;
        if self.reno_cnt >= win {
            self.reno_cnt -= win;
            self.reno += 1;
        }
        if round_ended {
            self.update_dwnd(win);
            self.rtt.clear_round();
        }
        tp.cwnd = (self.reno.saturating_add(self.dwnd)).clamp(1, tp.cwnd_clamp);
        self.sync(tp);
    }

    fn set_state(&mut self, tp: &mut TcpState, new_state: CaState) {
        if new_state == CaState::Loss {
            self.dwnd = 0;
        }
        if new_state == CaState::Open {
            self.rtt.restart_round(tp);
        }
    }

    fn undo_cwnd(&mut self, tp: &mut TcpState) -> u32 {
        let cwnd = tp.cwnd.max(tp.prior_cwnd);
        self.reno = self.prior_reno.min(cwnd).max(self.reno);
        self.dwnd = cwnd - self.reno.min(cwnd);
        cwnd
    }

    fn metrics(&self, tp: &TcpState) -> CcMetrics {
        CcMetrics { state: phase(tp), ..Default::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testing::TimelineHarness;
    use crate::units::ms;

    fn ctcp(cwnd: u32, pps: Option<f64>) -> TimelineHarness {
        let mut h = TimelineHarness::new(Box::new(Compound::new(Params::default())), 1448, cwnd).with_rtt(ms(100));
        if let Some(r) = pps {
            h = h.with_bottleneck_pps(r);
        }
        h.tp_mut().ssthresh = cwnd;
        h
    }

    #[test]
    fn dwnd_grows_binomially_without_a_queue() {
        // No bottleneck: diff = 0 < γ. At win = 1000: α·win^k − 1 = 0.125·1000^0.75 − 1
        // = 0.125·177.8 − 1 = 21.2 → dwnd += 21 per RTT, plus cwnd's +1: win grows
        // by ≈ 22 packets per RTT where Reno adds 1.
        let mut h = ctcp(1000, None);
        h.run_rounds(3);
        let before = h.tp().cwnd;
        h.run_rounds(1);
        let step = h.tp().cwnd - before;
        assert!((20..=25).contains(&step), "win grew {step} packets in one RTT");
    }

    #[test]
    fn dwnd_shrinks_by_the_queue_when_above_gamma() {
        // Bottleneck 1000 pkt/s × 100 ms: BDP 100 packets. From win = BDP, dwnd grows
        // (≈ 0.125·win^0.75 − 1 ≈ 3 per RTT) while the queue diff = win − 100 < γ = 30;
        // the first round with diff ≥ 30 takes ζ·diff ≥ 30 packets out of dwnd at once.
        // Without any loss, win therefore falls back and the queue stays near γ while
        // dwnd lasts; once dwnd is 0, the Reno window alone grows by 1 per RTT (CTCP
        // yields only its delay window: it is never less aggressive than Reno).
        let mut h = ctcp(100, Some(1000.0));
        let mut wins = vec![h.tp().cwnd];
        for _ in 0..60 {
            h.run_rounds(1);
            wins.push(h.tp().cwnd);
        }
        let max = *wins[..35].iter().max().unwrap();
        assert!(max > 100 + 20, "dwnd never grew: {wins:?}");
        assert!(max <= 100 + 30 + 10, "queue of {} packets, above γ = 30: {wins:?}", max - 100);
        let dropped = wins.windows(2).any(|w| w[1] + 20 < w[0]);
        assert!(dropped, "no delay-triggered decrease of win: {wins:?}");
        let tail = &wins[45..];
        assert!(tail.windows(2).all(|w| w[1] == w[0] + 1), "Reno growth once dwnd = 0: {tail:?}");
    }

    #[test]
    fn loss_halves_the_total_window() {
        let mut h = ctcp(1000, None);
        h.run_rounds(3);
        h.loss_at_full_window();
        // The total window (Reno part + delay part) halves: win·(1 − β), give or take
        // the packet the sender's loss processing moves cwnd by around the cut.
        let win = h.tp().prior_cwnd;
        assert!(win > 1000);
        assert!(h.tp().ssthresh.abs_diff(win / 2) <= 1, "ssthresh {} for win {win}", h.tp().ssthresh);
        h.end_recovery();
        assert!(h.tp().cwnd.abs_diff(win / 2) <= 1, "cwnd {} after recovery", h.tp().cwnd);
    }
}
