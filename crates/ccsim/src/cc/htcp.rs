//! H-TCP (Hamilton TCP): the additive increase grows with the time Δ since the
//! last congestion event. For Δ ≤ Δ_L = 1 s it is Reno's 1 packet per RTT; after,
//!
//! ```text
//!   α(Δ) = 1 + 10 (Δ − Δ_L) + ((Δ − Δ_L) / 2)²      (Δ in seconds)
//! ```
//!
//! scaled by 2(1 − β) so the average throughput stays fair to flows with other β,
//! and by RTT/100 ms ("RTT scaling", clamped to [0.5, 10]) so flows with different
//! RTTs grow alike in time. The backoff β is adaptive: RTT_min/RTT_max, in
//! [0.5, 0.8], so a flow whose queue empties on backoff keeps more of its window;
//! a jump of more than 20% in the throughput measured between losses ("bandwidth
//! switch") resets β to 0.5 to let new flows in quickly.
//!
//! References: D. Leith, R. Shorten, "H-TCP: TCP for high-speed and long-distance
//! networks", PFLDnet 2004; Leith, Shorten, Lee, "H-TCP: A framework for
//! congestion control in high-speed and long-distance networks", 2005; Linux
//! `net/ipv4/tcp_htcp.c`.
//!
//! Parameters (Linux module defaults): `use_rtt_scaling` = true,
//! `use_bandwidth_switch` = true. Constants: α base 1.0, β ∈ [0.5, 0.8] (fixed
//! point ×128: 64 … 102, as Linux), Δ_L = 1 s (`HZ`), the 20 ms tolerance on
//! maxRTT samples (ignores sudden RTT spikes), the 95% fading memory of maxRTT
//! (adapts to route changes), the 10 ms minimum RTT below which β stays 0.5 (too
//! little queueing to measure).
//!
//! Time: Linux keeps H-TCP's clocks in jiffies of the host's `CONFIG_HZ`; so does
//! this model (`TcpState::hz`, 250 by default: a jiffy is 4 ms), converting RTT
//! samples with `usecs_to_jiffies` (rounding up).

use serde::{Deserialize, Serialize};

use super::common::classic::{phase, slow_start};
use super::common::clock::{jiffies, msecs_to_jiffies, to_jiffies_ceil};
use super::registry::{describe_params, parse_params, CcaInfo};
use super::{AckSample, BoxedCca, CaState, CcMetrics, CongestionControl, TcpState};

// Δ_L, H-TCP's low-speed period, is 1 s = `HZ` jiffies.
/// α = 1.0 in ×128 fixed point (`ALPHA_BASE`).
const ALPHA_BASE: u32 = 1 << 7;
/// β bounds ×128 (`BETA_MIN` = 0.5, `BETA_MAX` = 102/128 ≈ 0.8).
const BETA_MIN: u32 = 1 << 6;
const BETA_MAX: u32 = 102;
/// maxRTT only follows samples within 20 ms of it, so one spike does not inflate it.
const MAX_RTT_STEP_MS: u32 = 20;
/// Below a 10 ms min RTT, β stays at 0.5 (queueing delay is not measurable).
const MIN_RTT_FOR_ADAPTIVE_BETA_MS: u32 = 10;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    pub use_rtt_scaling: bool,
    pub use_bandwidth_switch: bool,
}

impl Default for Params {
    fn default() -> Self {
        Self { use_rtt_scaling: true, use_bandwidth_switch: true }
    }
}

const PARAM_DOCS: &[(&str, &str)] = &[
    ("use_rtt_scaling", "scale α by RTT/100 ms so growth per second is RTT-independent (Linux default on)"),
    ("use_bandwidth_switch", "reset β to 0.5 when throughput between losses changes by >20% (Linux default on)"),
];

pub const INFO: CcaInfo = CcaInfo {
    name: "htcp",
    family: "loss/high-speed",
    summary: "H-TCP: increase grows with time since the last loss, adaptive β (Linux tcp_htcp.c)",
    reference: "Leith & Shorten, PFLDnet 2004; Linux net/ipv4/tcp_htcp.c",
    params: || describe_params::<Params>(PARAM_DOCS),
    build: |v| {
        let p: Params = parse_params("htcp", v)?;
        Ok(Box::new(Htcp::new(p)) as BoxedCca)
    },
};

/// `struct htcp`. Times in jiffies of the host's HZ.
#[derive(Debug, Clone)]
pub struct Htcp {
    p: Params,
    /// The host's `CONFIG_HZ` (from `TcpState::hz` at init).
    hz: u32,
    /// Additive increase ×128.
    alpha: u32,
    /// Backoff factor ×128.
    beta: u32,
    /// Adaptive β only after one congestion event with RTT data.
    modeswitch: bool,
    pkts_acked: u32,
    packetcount: u32,
    min_rtt: u32,
    max_rtt: u32,
    last_cong: u32,
    undo_last_cong: u32,
    undo_max_rtt: u32,
    undo_old_max_b: u32,
    min_b: u32,
    max_b: u32,
    old_max_b: u32,
    bi: u32,
    lasttime: u32,
}

impl Htcp {
    pub fn new(p: Params) -> Self {
        Self {
            p,
            hz: 1000,
            alpha: ALPHA_BASE,
            beta: BETA_MIN,
            modeswitch: false,
            pkts_acked: 1,
            packetcount: 0,
            min_rtt: 0,
            max_rtt: 0,
            last_cong: 0,
            undo_last_cong: 0,
            undo_max_rtt: 0,
            undo_old_max_b: 0,
            min_b: 0,
            max_b: 0,
            old_max_b: 0,
            bi: 0,
            lasttime: 0,
        }
    }

    /// α and β as real numbers (for tests and traces).
    pub fn alpha_beta(&self) -> (f64, f64) {
        (self.alpha as f64 / 128.0, self.beta as f64 / 128.0)
    }

    fn ccount(&self, now: u32) -> u32 {
        now.wrapping_sub(self.last_cong) / self.min_rtt
    }

    /// `htcp_reset`: a congestion event starts now (remember the old for undo).
    fn reset(&mut self, now: u32) {
        self.undo_last_cong = self.last_cong;
        self.undo_max_rtt = self.max_rtt;
        self.undo_old_max_b = self.old_max_b;
        self.last_cong = now;
    }

    /// `measure_rtt`.
    fn measure_rtt(&mut self, rtt: u32, state: CaState) {
        if self.min_rtt > rtt || self.min_rtt == 0 {
            self.min_rtt = rtt;
        }
        if state == CaState::Open {
            if self.max_rtt < self.min_rtt {
                self.max_rtt = self.min_rtt;
            }
            if self.max_rtt < rtt && rtt <= self.max_rtt + msecs_to_jiffies(MAX_RTT_STEP_MS, self.hz) {
                self.max_rtt = rtt;
            }
        }
    }

    /// `htcp_beta_update`.
    fn beta_update(&mut self) {
        if self.p.use_bandwidth_switch {
            let (max_b, old_max_b) = (self.max_b as u64, self.old_max_b as u64);
            self.old_max_b = self.max_b;
            // `between(5·maxB, 4·old_maxB, 6·old_maxB)`: within ±20%.
            if !(4 * old_max_b..=6 * old_max_b).contains(&(5 * max_b)) {
                self.beta = BETA_MIN;
                self.modeswitch = false;
                return;
            }
        }
        if self.modeswitch && self.min_rtt > msecs_to_jiffies(MIN_RTT_FOR_ADAPTIVE_BETA_MS, self.hz) && self.max_rtt > 0 {
            self.beta = ((self.min_rtt << 7) / self.max_rtt).clamp(BETA_MIN, BETA_MAX);
        } else {
            self.beta = BETA_MIN;
            self.modeswitch = true;
        }
    }

    /// `htcp_alpha_update`: α(Δ), RTT scaling, and the 2(1 − β) factor.
    fn alpha_update(&mut self, now: u32) {
        let mut factor: u32 = 1;
        let hz = self.hz;
        let mut diff = now.wrapping_sub(self.last_cong);
        if diff > hz {
            diff -= hz;
            // 1 + 10 (Δ−Δ_L) + ((Δ−Δ_L)/2)², all in jiffies/HZ.
            factor = 1 + ((10 * diff as u64 + (diff as u64 / 2) * (diff as u64 / 2) / hz as u64) / hz as u64) as u32;
        }
        if self.p.use_rtt_scaling && self.min_rtt > 0 {
            // scale = (1 s / (10 · minRTT)) · 8, i.e. (100 ms / minRTT) ×8, in [0.5, 10].
            let scale = ((hz << 3) / (10 * self.min_rtt)).clamp(1 << 2, 10 << 3);
            factor = ((factor << 3) / scale).max(1);
        }
        // u32 arithmetic that wraps, as Linux's: after a long time without congestion
        // (or a `last_cong` restored by an undo to after `now`) the product overflows.
        self.alpha = 2u32.wrapping_mul(factor).wrapping_mul((1 << 7) - self.beta);
        if self.alpha == 0 {
            self.alpha = ALPHA_BASE;
        }
    }

    /// `htcp_param_update`, at a congestion event.
    fn param_update(&mut self, now: u32) {
        self.beta_update();
        self.alpha_update(now);
        // Fading memory of maxRTT (routing changes).
        if self.min_rtt > 0 && self.max_rtt > self.min_rtt {
            self.max_rtt = self.min_rtt + (self.max_rtt - self.min_rtt) * 95 / 100;
        }
    }

    /// `measure_achieved_throughput`: packets per second between congestion events.
    fn measure_throughput(&mut self, tp: &TcpState, pkts_acked: u32, now: u32) {
        if !self.p.use_bandwidth_switch {
            return;
        }
        if !matches!(tp.ca_state, CaState::Open | CaState::Disorder) {
            self.packetcount = 0;
            self.lasttime = now;
            return;
        }
        self.packetcount += pkts_acked;
        let alpha_pkts = if self.alpha >> 7 != 0 { self.alpha >> 7 } else { 1 };
        let elapsed = now.wrapping_sub(self.lasttime);
        if self.packetcount >= tp.cwnd.saturating_sub(alpha_pkts) && self.min_rtt > 0 && elapsed >= self.min_rtt {
            let cur_bi = (self.packetcount as u64 * self.hz as u64 / elapsed as u64) as u32;
            if self.ccount(now) <= 3 {
                // Just after a backoff: start over.
                self.min_b = cur_bi;
                self.max_b = cur_bi;
                self.bi = cur_bi;
            } else {
                self.bi = ((3 * self.bi as u64 + cur_bi as u64) / 4) as u32;
                self.max_b = self.max_b.max(self.bi);
                self.min_b = self.min_b.min(self.max_b);
            }
            self.packetcount = 0;
            self.lasttime = now;
        }
    }
}

impl CongestionControl for Htcp {
    fn name(&self) -> &'static str {
        "htcp"
    }

    fn init(&mut self, tp: &mut TcpState) {
        *self = Self::new(self.p.clone());
        self.hz = tp.hz;
        self.last_cong = jiffies(tp.now, tp.hz);
    }

    /// `htcp_recalc_ssthresh`.
    fn ssthresh(&mut self, tp: &mut TcpState) -> u32 {
        self.param_update(jiffies(tp.now, tp.hz));
        (((tp.cwnd as u64 * self.beta as u64) >> 7) as u32).max(2)
    }

    /// `htcp_cong_avoid`: cwnd += α/cwnd per ACK.
    fn cong_avoid(&mut self, tp: &mut TcpState, sample: &AckSample) {
        if tp.in_slow_start() {
            slow_start(tp, sample.acked_sacked);
            return;
        }
        if ((tp.cwnd_cnt as u64 * self.alpha as u64) >> 7) >= tp.cwnd as u64 {
            if tp.cwnd < tp.cwnd_clamp {
                tp.cwnd += 1;
            }
            tp.cwnd_cnt = 0;
            self.alpha_update(jiffies(tp.now, tp.hz));
        } else {
            tp.cwnd_cnt += self.pkts_acked;
        }
        self.pkts_acked = 1;
    }

    /// `measure_achieved_throughput` (H-TCP's `pkts_acked`).
    fn pkts_acked(&mut self, tp: &mut TcpState, sample: &AckSample) {
        let now = jiffies(tp.now, tp.hz);
        if tp.ca_state == CaState::Open {
            self.pkts_acked = sample.pkts_acked;
        }
        if let Some(rtt) = sample.rtt.filter(|&r| r > 0) {
            self.measure_rtt(to_jiffies_ceil(rtt, tp.hz), tp.ca_state);
        }
        self.measure_throughput(tp, sample.pkts_acked, now);
    }

    /// `htcp_state`.
    fn set_state(&mut self, tp: &mut TcpState, new_state: CaState) {
        let now = jiffies(tp.now, tp.hz);
        match new_state {
            CaState::Open => {
                if self.undo_last_cong != 0 {
                    self.last_cong = now;
                    self.undo_last_cong = 0;
                }
            }
            CaState::Cwr | CaState::Recovery | CaState::Loss => self.reset(now),
            CaState::Disorder => {}
        }
    }

    /// `htcp_cwnd_undo`: the congestion event did not happen.
    fn undo_cwnd(&mut self, tp: &mut TcpState) -> u32 {
        if self.undo_last_cong != 0 {
            self.last_cong = self.undo_last_cong;
            self.max_rtt = self.undo_max_rtt;
            self.old_max_b = self.undo_old_max_b;
            self.undo_last_cong = 0;
        }
        tp.cwnd.max(tp.prior_cwnd)
    }

    fn metrics(&self, tp: &TcpState) -> CcMetrics {
        CcMetrics { state: phase(tp), ..Default::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::reno::Reno;
    use crate::cc::testing::TimelineHarness;
    use crate::units::ms;

    fn harness(cca: BoxedCca, cwnd: u32, rtt_ms: u64) -> TimelineHarness {
        TimelineHarness::in_cong_avoid(cca, cwnd, ms(rtt_ms))
    }

    #[test]
    fn below_delta_l_grows_like_reno() {
        // Differential: for Δ ≤ 1 s, α = 2·1·(128 − 64) = 128 = 1.0 (β = 0.5), and at
        // RTT ≤ 100 ms RTT scaling keeps factor 1, so both add 1 packet per RTT.
        // (H-TCP checks cnt·α ≥ cwnd before counting the ACK, so it needs cwnd + 1
        // ACKs per step where Reno needs cwnd: at most one packet apart over 1 s.)
        let mut htcp = harness(Box::new(Htcp::new(Params::default())), 20, 100);
        let mut reno = harness(Box::new(Reno), 20, 100);
        for _ in 0..9 {
            htcp.run_rounds(1);
            reno.run_rounds(1);
            assert!(htcp.tp().cwnd.abs_diff(reno.tp().cwnd) <= 1, "htcp {} reno {}", htcp.tp().cwnd, reno.tp().cwnd);
        }
        assert_eq!(reno.tp().cwnd, 29);
    }

    #[test]
    fn alpha_after_delta_l_follows_the_quadratic() {
        // RTT 100 ms → RTT scaling factor 1. A loss at cwnd 200; β = 0.5 on the first
        // event, so the 2(1−β) factor is 1 and α = α(Δ).
        // At Δ = 2 s: diff = 1000 jiffies past Δ_L → 1 + (10·1000 + 500²/1000)/1000
        // = 1 + 10250/1000 = 11 (the real-number law gives 11.25).
        let mut h = harness(Box::new(Htcp::new(Params::default())), 200, 100);
        h.run_rounds(2);
        h.loss_at_full_window();
        h.end_recovery();
        let t0 = h.now();
        // Δ ≤ 1 s: +1 per RTT.
        let c0 = h.tp().cwnd;
        h.run_rounds(9);
        assert!(h.tp().cwnd - c0 <= 9, "{} packets in 0.9 s", h.tp().cwnd - c0);
        while h.now() < t0 + ms(2000) {
            h.run_rounds(1);
        }
        // α is updated each time cwnd grows, so over the next RTT (Δ ≈ 2.0 … 2.1 s,
        // α(2.1 s) = 1 + (11000 + 550²/1000)/1000 = 12) cwnd grows by 11–12 packets.
        let c = h.tp().cwnd;
        h.run_rounds(1);
        let step = h.tp().cwnd - c;
        assert!((10..=13).contains(&step), "step {step} packets per RTT at Δ ≈ 2 s");
    }

    #[test]
    fn rtt_scaling_makes_growth_per_second_rtt_independent() {
        // At RTT 200 ms, scale = 8000/2000 = 4 → factor ×2 per RTT, and there are half
        // as many RTTs per second: α at Δ = 2 s is 2·11 = 22 packets per RTT.
        let mut c = Htcp::new(Params::default());
        c.min_rtt = 200;
        c.last_cong = 0;
        c.alpha_update(2000);
        assert_eq!(c.alpha_beta().0, 22.0);
        c.min_rtt = 100;
        c.alpha_update(2000);
        assert_eq!(c.alpha_beta().0, 11.0);
        // Without scaling, α is the same at any RTT.
        let mut c = Htcp::new(Params { use_rtt_scaling: false, ..Params::default() });
        c.min_rtt = 200;
        c.alpha_update(2000);
        assert_eq!(c.alpha_beta().0, 11.0);
    }

    #[test]
    fn the_law_is_the_same_in_jiffies_of_hz_250() {
        // At HZ 250 (4 ms jiffies) Δ = 2 s is 250 jiffies past Δ_L:
        // 1 + (10·250 + 125²/250)/250 = 1 + 2562/250 = 11, as at HZ 1000; RTT 100 ms =
        // 25 jiffies gives scale (250·8)/(10·25) = 8, factor unchanged.
        let mut c = Htcp::new(Params::default());
        c.hz = 250;
        c.min_rtt = 25;
        c.alpha_update(500);
        assert_eq!(c.alpha_beta().0, 11.0);
        // The 10 ms floor of adaptive β is 3 jiffies (2.5 rounded up): 12 ms adapts.
        c.modeswitch = true;
        c.min_rtt = 3;
        c.max_rtt = 6;
        c.p.use_bandwidth_switch = false;
        c.beta_update();
        assert_eq!(c.alpha_beta().1, 0.5);
        c.min_rtt = 4;
        c.max_rtt = 5;
        c.beta_update();
        assert_eq!(c.alpha_beta().1, 102.0 / 128.0);
    }

    #[test]
    fn alpha_wraps_as_linux_u32_after_a_long_congestion_free_time() {
        // Δ of about 4.3 million jiffies (a `last_cong` ahead of `now`, as an undo can
        // leave it): factor ≈ 1.8·10^10, truncated to u32, then 2·factor·(128 − β)
        // wraps in Linux's u32 arithmetic; debug builds panicked on the overflow.
        let mut c = Htcp::new(Params { use_rtt_scaling: false, ..Params::default() });
        c.hz = 250;
        c.beta = BETA_MIN;
        c.last_cong = 10;
        c.alpha_update(5);
        let diff = 5u32.wrapping_sub(10) as u64 - 250;
        let factor = (1 + (10 * diff + (diff / 2) * (diff / 2) / 250) / 250) as u32;
        let alpha = 2u32.wrapping_mul(factor).wrapping_mul(128 - BETA_MIN);
        assert_eq!(c.alpha, if alpha == 0 { ALPHA_BASE } else { alpha });
    }

    #[test]
    fn init_takes_the_hosts_hz() {
        let mut c = Htcp::new(Params::default());
        let mut tp = crate::cc::testing::tcp_state(1448, 10);
        tp.hz = 250;
        tp.now = ms(1000);
        c.init(&mut tp);
        assert_eq!((c.hz, c.last_cong), (250, 250));
    }

    #[test]
    fn beta_adapts_to_min_over_max_rtt() {
        // Second congestion event with minRTT 100 ms, maxRTT 160 ms and a steady
        // throughput: β = 100·128/160 = 80 → 0.625; α = 2·1·(128−80) = 96 = 0.75.
        let mut c = Htcp::new(Params::default());
        c.min_rtt = 100;
        c.max_rtt = 160;
        c.max_b = 1000;
        c.old_max_b = 1000;
        c.param_update(500);
        assert_eq!(c.alpha_beta().1, 0.5, "first event: β = 0.5, mode switch armed");
        c.max_rtt = 160;
        c.param_update(500);
        assert_eq!(c.alpha_beta(), (0.75, 0.625));
        // Throughput jumped by 50%: the bandwidth switch resets β to 0.5.
        c.max_b = 1500;
        c.param_update(500);
        assert_eq!(c.alpha_beta().1, 0.5);
    }
}
