//! TCP Illinois: loss-based AIMD whose increase α and decrease β are functions
//! of the average queueing delay d_a, measured once per RTT against the largest
//! queueing delay seen, d_m = maxRTT − baseRTT:
//!
//! ```text
//!   α = α_max = 10                      if d_a ≤ d_1 = d_m/100  (uncongested)
//!   α = k1 / (k2 + d_a)                 otherwise, falling to α_min = 0.3 at d_m
//!   β = β_min = 1/8 if d_a ≤ d_2 = d_m/10,  β_max = 1/2 if d_a ≥ d_3 = 8 d_m/10,
//!       linear in between
//! ```
//!
//! so cwnd grows fast while the queue is empty and slowly near congestion (a
//! concave curve), and backs off gently when the loss was not preceded by delay.
//! Below `win_thresh` packets it is Reno (α = 1, β = 1/2). α returns to α_max only
//! after `theta` consecutive low-delay RTTs.
//!
//! References: S. Liu, T. Başar, R. Srikant, "TCP-Illinois: A loss- and
//! delay-based congestion control algorithm for high-speed networks", Performance
//! Evaluation 65(6-7), 2008; Linux `net/ipv4/tcp_illinois.c`.
//!
//! Parameters (Linux module defaults): `win_thresh` = 15 packets, `theta` = 5
//! RTTs. Constants (Linux, fixed point): α ∈ [0.3, 10] (×128), β ∈ [1/8, 1/2]
//! (×64); RTT samples above U32_MAX/α_max µs (3.3 s) are clamped so the α
//! arithmetic cannot overflow.
//!
//! Deviation: the per-RTT parameter update (`after(ack, end_seq)`) uses the
//! packet-timed round of [`RoundCounter`].

use serde::{Deserialize, Serialize};

use super::common::classic::{phase, slow_start};
use super::common::clock::to_us;
use super::common::RoundCounter;
use super::registry::{describe_params, parse_params, CcaInfo};
use super::{AckSample, BoxedCca, CaState, CcMetrics, CongestionControl, TcpState};

const ALPHA_SHIFT: u32 = 7;
const ALPHA_SCALE: u32 = 1 << ALPHA_SHIFT;
/// α_min ≈ 0.3 (3·128/10 = 38).
const ALPHA_MIN: u32 = (3 * ALPHA_SCALE) / 10;
/// α_max = 10.
const ALPHA_MAX: u32 = 10 * ALPHA_SCALE;
const ALPHA_BASE: u32 = ALPHA_SCALE;
/// RTT samples are clamped here so `dm · ALPHA_MAX` fits 32 bits (≈ 3.3 s).
const RTT_MAX_US: u32 = u32::MAX / ALPHA_MAX;
const BETA_SHIFT: u32 = 6;
const BETA_SCALE: u32 = 1 << BETA_SHIFT;
/// β_min = 1/8, β_max = β_base = 1/2.
const BETA_MIN: u32 = BETA_SCALE / 8;
const BETA_MAX: u32 = BETA_SCALE / 2;
const BETA_BASE: u32 = BETA_MAX;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    pub win_thresh: u32,
    pub theta: u32,
}

impl Default for Params {
    fn default() -> Self {
        Self { win_thresh: 15, theta: 5 }
    }
}

const PARAM_DOCS: &[(&str, &str)] = &[
    ("win_thresh", "below this window (packets) Illinois is Reno: α = 1, β = 1/2 (Linux 15)"),
    ("theta", "consecutive low-delay RTTs before α returns to its maximum (Linux 5)"),
];

pub const INFO: CcaInfo = CcaInfo {
    name: "illinois",
    family: "loss+delay",
    summary: "Illinois: AIMD with delay-dependent α (0.3..10) and β (1/8..1/2) (Linux tcp_illinois.c)",
    reference: "Liu, Başar, Srikant, Performance Evaluation 65(6-7) 2008; Linux net/ipv4/tcp_illinois.c",
    params: || describe_params::<Params>(PARAM_DOCS),
    build: |v| {
        let p: Params = parse_params("illinois", v)?;
        Ok(Box::new(Illinois::new(p)) as BoxedCca)
    },
};

/// `struct illinois`. RTTs in µs.
#[derive(Debug, Clone)]
pub struct Illinois {
    p: Params,
    sum_rtt: u64,
    cnt_rtt: u32,
    base_rtt: u32,
    max_rtt: u32,
    alpha: u32,
    beta: u32,
    acked: u32,
    rtt_above: bool,
    rtt_low: u32,
    round: RoundCounter,
}

impl Illinois {
    pub fn new(p: Params) -> Self {
        Self {
            p,
            sum_rtt: 0,
            cnt_rtt: 0,
            base_rtt: 0x7fff_ffff,
            max_rtt: 0,
            alpha: ALPHA_MAX,
            beta: BETA_BASE,
            acked: 0,
            rtt_above: false,
            rtt_low: 0,
            round: RoundCounter::default(),
        }
    }

    /// (α, β) as real numbers.
    pub fn alpha_beta(&self) -> (f64, f64) {
        (self.alpha as f64 / ALPHA_SCALE as f64, self.beta as f64 / BETA_SCALE as f64)
    }

    fn rtt_reset(&mut self, tp: &TcpState) {
        self.round.reset_at(tp.delivered);
        self.cnt_rtt = 0;
        self.sum_rtt = 0;
    }

    /// `alpha()`: da, dm in µs.
    fn alpha_for(&mut self, da: u32, dm: u32) -> u32 {
        let d1 = dm / 100;
        if da <= d1 {
            if !self.rtt_above {
                return ALPHA_MAX;
            }
            // Wait for theta good RTTs before jumping back to α_max.
            self.rtt_low += 1;
            if self.rtt_low < self.p.theta {
                return self.alpha;
            }
            self.rtt_low = 0;
            self.rtt_above = false;
            return ALPHA_MAX;
        }
        self.rtt_above = true;
        // α = k1/(k2 + da) with k1, k2 chosen so α(d1) = α_max and α(dm) = α_min;
        // after shifting by d1: α = dm·α_max / (dm + da·(α_max − α_min)/α_min).
        let (dm, da) = ((dm - d1) as u64, (da - d1) as u64);
        ((dm * ALPHA_MAX as u64) / (dm + (da * (ALPHA_MAX - ALPHA_MIN) as u64) / ALPHA_MIN as u64)) as u32
    }

    /// `beta()`: linear from β_min at d2 = dm/10 to β_max at d3 = 8dm/10.
    fn beta_for(da: u32, dm: u32) -> u32 {
        let d2 = dm / 10;
        if da <= d2 {
            return BETA_MIN;
        }
        let d3 = (8 * dm as u64 / 10) as u32;
        if da >= d3 || d3 <= d2 {
            return BETA_MAX;
        }
        ((BETA_MIN as u64 * d3 as u64 + (BETA_MAX - BETA_MIN) as u64 * da as u64 - BETA_MAX as u64 * d2 as u64)
            / (d3 - d2) as u64) as u32
    }

    /// `update_params`, once per RTT.
    fn update_params(&mut self, tp: &TcpState) {
        if tp.cwnd < self.p.win_thresh {
            self.alpha = ALPHA_BASE;
            self.beta = BETA_BASE;
        } else if self.cnt_rtt > 0 {
            let dm = self.max_rtt - self.base_rtt;
            let da = (self.sum_rtt / self.cnt_rtt as u64) as u32 - self.base_rtt;
            self.alpha = self.alpha_for(da, dm);
            self.beta = Self::beta_for(da, dm);
        }
        self.rtt_reset(tp);
    }
}

impl CongestionControl for Illinois {
    fn name(&self) -> &'static str {
        "illinois"
    }

    fn init(&mut self, tp: &mut TcpState) {
        *self = Self::new(self.p.clone());
        self.rtt_reset(tp);
    }

    /// `tcp_illinois_ssthresh`: cwnd − cwnd·β.
    fn ssthresh(&mut self, tp: &mut TcpState) -> u32 {
        (tp.cwnd - ((tp.cwnd as u64 * self.beta as u64) >> BETA_SHIFT) as u32).max(2)
    }

    /// `tcp_illinois_acked`.
    fn pkts_acked(&mut self, _tp: &mut TcpState, sample: &AckSample) {
        self.acked = sample.pkts_acked;
        let Some(rtt) = sample.rtt else { return };
        let rtt = to_us(rtt).min(RTT_MAX_US);
        self.base_rtt = self.base_rtt.min(rtt);
        self.max_rtt = self.max_rtt.max(rtt);
        self.cnt_rtt += 1;
        self.sum_rtt += rtt as u64;
    }

    /// `tcp_illinois_cong_avoid`: cwnd += α/cwnd per ACK.
    fn cong_avoid(&mut self, tp: &mut TcpState, sample: &AckSample) {
        if self.round.update(&sample.rs, tp.delivered) {
            self.update_params(tp);
        }
        if tp.in_slow_start() {
            slow_start(tp, sample.acked_sacked);
            return;
        }
        tp.cwnd_cnt += self.acked;
        self.acked = 1;
        let delta = ((tp.cwnd_cnt as u64 * self.alpha as u64) >> ALPHA_SHIFT) as u32;
        if delta >= tp.cwnd {
            tp.cwnd = (tp.cwnd + delta / tp.cwnd).min(tp.cwnd_clamp);
            tp.cwnd_cnt = 0;
        }
    }

    /// `tcp_illinois_state`: an RTO resets α and β to Reno's.
    fn set_state(&mut self, tp: &mut TcpState, new_state: CaState) {
        if new_state == CaState::Loss {
            self.alpha = ALPHA_BASE;
            self.beta = BETA_BASE;
            self.rtt_low = 0;
            self.rtt_above = false;
            self.rtt_reset(tp);
        }
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

    #[test]
    fn alpha_and_beta_follow_the_delay_curves() {
        // dm = 100 ms of queueing seen. d1 = 1 ms, d2 = 10 ms, d3 = 80 ms.
        let dm = 100_000;
        let mut c = Illinois::new(Params::default());
        // da ≤ d1 (never above): α = 10, β = 1/8.
        assert_eq!(c.alpha_for(500, dm), ALPHA_MAX);
        assert_eq!(Illinois::beta_for(500, dm), BETA_MIN);
        // da = dm: α = 99000·1280 / (99000 + 99000·1242/38) = 1280·38/1280 = 38 → 0.3.
        assert_eq!(c.alpha_for(dm, dm), ALPHA_MIN);
        // da = 45 ms, midway between d2 and d3: β = (8·80000 + 24·45000 − 32·10000)/70000
        // = (640000 + 1080000 − 320000)/70000 = 20 → 20/64 = 0.3125.
        assert_eq!(Illinois::beta_for(45_000, dm), 20);
        assert_eq!(Illinois::beta_for(80_000, dm), BETA_MAX);
        // After delay was seen, α waits theta = 5 low-delay rounds before jumping back.
        c.alpha = c.alpha_for(50_000, dm);
        let held = c.alpha;
        for _ in 0..4 {
            assert_eq!(c.alpha_for(0, dm), held);
        }
        assert_eq!(c.alpha_for(0, dm), ALPHA_MAX);
    }

    #[test]
    fn grows_ten_packets_per_rtt_without_queueing_and_slowly_near_a_full_queue() {
        // No bottleneck: the RTT never rises, da = 0 ≤ d1 → α = 10 packets per RTT.
        let mut h = TimelineHarness::new(Box::new(Illinois::new(Params::default())), 1448, 100).with_rtt(ms(50));
        h.tp_mut().ssthresh = 100;
        h.run_rounds(3);
        let c = h.tp().cwnd;
        h.run_rounds(1);
        let step = h.tp().cwnd - c;
        assert!((9..=11).contains(&step), "step {step} without queueing");
        // Behind a 1000 pkt/s bottleneck with a 50-packet BDP the queue grows with cwnd;
        // once the average delay approaches the maximum seen, α falls towards 0.3.
        let mut h = TimelineHarness::new(Box::new(Illinois::new(Params::default())), 1448, 40)
            .with_rtt(ms(50))
            .with_bottleneck_pps(1000.0);
        h.tp_mut().ssthresh = 40;
        h.run_rounds(40);
        let c = h.tp().cwnd;
        h.run_rounds(5);
        let per_round = (h.tp().cwnd - c) as f64 / 5.0;
        assert!(per_round < 2.0, "{per_round} packets per RTT with a standing queue");
    }

    #[test]
    fn loss_without_queueing_cuts_one_eighth() {
        // After rounds with no queueing, β = 1/8: ssthresh = 200 − 200·8/64 = 175.
        let mut h = TimelineHarness::new(Box::new(Illinois::new(Params::default())), 1448, 200).with_rtt(ms(50));
        h.tp_mut().ssthresh = 200;
        h.run_rounds(3);
        // One more round with max_rtt above base so dm > 0 (a 2 ms bump).
        h.set_rtt(ms(52));
        h.run_rounds(2);
        h.set_rtt(ms(50));
        h.run_rounds(3);
        let cwnd = h.tp().cwnd;
        h.lose(1);
        assert_eq!(h.tp().ssthresh, cwnd - cwnd / 8);
    }
}
