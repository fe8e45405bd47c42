//! BIC TCP (Binary Increase Congestion control), CUBIC's predecessor and Linux's
//! default from 2.6.8 to 2.6.18. After a loss at window W_max, cwnd does a binary
//! search towards W_max: each RTT it moves half-way (1/`B` of the distance per
//! window of ACKs, B = 4) from the current window to W_max, by at most
//! `max_increment` packets per RTT and at least `cwnd/(smooth_part/B)`-ish near
//! the target; past W_max it probes with "slow start" steps that grow again
//! until they reach `max_increment`. Small windows (≤ `low_window`) are Reno.
//!
//! References: L. Xu, K. Harfoush, I. Rhee, "Binary Increase Congestion Control
//! (BIC) for Fast Long-Distance Networks", IEEE INFOCOM 2004; Linux
//! `net/ipv4/tcp_bic.c` (mainline).
//!
//! Parameters (Linux module defaults):
//! * `fast_convergence` = true: on a loss before regaining the previous W_max, set
//!   W_max = cwnd·(1 + β)/2 to release bandwidth to newer flows.
//! * `max_increment` = 16: the most cwnd grows per RTT (the paper's S_max).
//! * `low_window` = 14: at or below it BIC behaves as Reno (β = 0.5, +1 per RTT),
//!   which keeps it fair at small windows.
//! * `beta` = 819 (/1024 ≈ 0.8): the multiplicative decrease above `low_window`.
//! * `initial_ssthresh` = 0: none (slow start until the first loss).
//! * `smooth_part` = 20: near W_max, log(B/(B·S_min))/log(B/(B−1)) + B, the number
//!   of RTTs spent between W_max − B and W_max.
//!
//! Linux keeps the delayed-ACK ratio scaling of `cnt` even though it now counts
//! acknowledged packets (`tcp_cong_avoid_ai(tp, cnt, acked)`), which makes each RTT's
//! step about twice the paper's; that is kept (it is the kernel's behaviour).
//!
//! Deviation: Linux's `bictcp_update` rate-limits recomputing `cnt` to once per
//! HZ/32 jiffies while cwnd is unchanged; here time is in ns and the limit is
//! HZ/32 at HZ = 1000, i.e. 31 ms, identical for that configuration.

use serde::{Deserialize, Serialize};

use super::common::classic::{cong_avoid_ai, slow_start};
use super::registry::{describe_params, parse_params, CcaInfo};
use super::{AckSample, BoxedCca, CaState, CcMetrics, CongestionControl, TcpState};
use crate::units::{ms, Time};

/// β fixed-point scale (`BICTCP_BETA_SCALE`).
const BETA_SCALE: u32 = 1024;
/// Binary search divisor (`BICTCP_B`): go to (max + min)/B … the paper's B = 4.
const BICTCP_B: u32 = 4;
/// Delayed-ACK ratio estimate is kept × 2^4 (`ACK_RATIO_SHIFT`).
const ACK_RATIO_SHIFT: u32 = 4;
/// The cap on `cnt` while no W_max is known (`cnt > 20` → 20): at least 5% growth
/// per RTT in the first epoch.
const CNT_MAX_WITHOUT_WMAX: u32 = 20;
/// `HZ / 32` at HZ = 1000 jiffies: minimum spacing of `cnt` recomputation at an
/// unchanged cwnd.
const UPDATE_INTERVAL: Time = ms(1000 / 32);

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    pub fast_convergence: bool,
    pub max_increment: u32,
    pub low_window: u32,
    pub beta: u32,
    pub initial_ssthresh: u32,
    pub smooth_part: u32,
}

impl Default for Params {
    fn default() -> Self {
        Self { fast_convergence: true, max_increment: 16, low_window: 14, beta: 819, initial_ssthresh: 0, smooth_part: 20 }
    }
}

const PARAM_DOCS: &[(&str, &str)] = &[
    ("fast_convergence", "lower W_max after a loss below the previous W_max (Linux default on)"),
    ("max_increment", "most packets cwnd grows per RTT during the search (Linux 16)"),
    ("low_window", "Reno behaviour at or below this window (Linux 14)"),
    ("beta", "multiplicative decrease ×1024 (Linux 819 ≈ 0.8)"),
    ("initial_ssthresh", "initial slow-start threshold in packets, 0 = none (Linux 0)"),
    ("smooth_part", "RTTs between W_max − B and W_max (Linux 20)"),
];

pub const INFO: CcaInfo = CcaInfo {
    name: "bic",
    family: "loss/high-speed",
    summary: "BIC: binary search towards the last loss window (Linux tcp_bic.c)",
    reference: "Xu, Harfoush, Rhee, IEEE INFOCOM 2004; Linux net/ipv4/tcp_bic.c",
    params: || describe_params::<Params>(PARAM_DOCS),
    build: |v| {
        let p: Params = parse_params("bic", v)?;
        if p.max_increment == 0 || p.beta == 0 || p.beta >= BETA_SCALE {
            return Err("parameters of CCA 'bic': max_increment must be >= 1 and beta in 1..=1023".into());
        }
        Ok(Box::new(Bic::new(p)) as BoxedCca)
    },
};

/// `struct bictcp`.
#[derive(Debug, Clone)]
pub struct Bic {
    p: Params,
    /// ACKs per +1 packet of cwnd.
    cnt: u32,
    last_max_cwnd: u32,
    last_cwnd: u32,
    /// Time `cnt` was last computed; `None` = never.
    last_time: Option<Time>,
    epoch_start: Option<Time>,
    /// Packets per ACK, × 2^ACK_RATIO_SHIFT.
    delayed_ack: u32,
}

impl Bic {
    pub fn new(p: Params) -> Self {
        Self { p, cnt: 0, last_max_cwnd: 0, last_cwnd: 0, last_time: None, epoch_start: None, delayed_ack: 2 << ACK_RATIO_SHIFT }
    }

    /// `bictcp_reset`.
    fn reset(&mut self) {
        *self = Self::new(self.p.clone());
    }

    /// The W_max the search is heading for (0 before the first loss).
    pub fn last_max_cwnd(&self) -> u32 {
        self.last_max_cwnd
    }

    /// `bictcp_update`: ACKs per +1 packet for this cwnd.
    fn update(&mut self, cwnd: u32, now: Time) {
        if self.last_cwnd == cwnd && self.last_time.is_some_and(|t| now - t <= UPDATE_INTERVAL) {
            return;
        }
        self.last_cwnd = cwnd;
        self.last_time = Some(now);
        if self.epoch_start.is_none() {
            self.epoch_start = Some(now);
        }
        let p = &self.p;
        if cwnd <= p.low_window {
            self.cnt = cwnd;
            return;
        }
        let wmax = self.last_max_cwnd;
        self.cnt = if cwnd < wmax {
            // Binary increase: 1/B of the distance per RTT, capped at max_increment.
            let dist = (wmax - cwnd) / BICTCP_B;
            if dist > p.max_increment {
                cwnd / p.max_increment
            } else if dist <= 1 {
                cwnd * p.smooth_part / BICTCP_B
            } else {
                cwnd / dist
            }
        } else if cwnd < wmax + BICTCP_B {
            // Just past W_max: creep.
            cwnd * p.smooth_part / BICTCP_B
        } else if cwnd < wmax + p.max_increment * (BICTCP_B - 1) {
            // Max probing: (cwnd − W_max)/(B−1) per RTT, growing.
            cwnd * (BICTCP_B - 1) / (cwnd - wmax)
        } else {
            cwnd / p.max_increment
        };
        if wmax == 0 && self.cnt > CNT_MAX_WITHOUT_WMAX {
            self.cnt = CNT_MAX_WITHOUT_WMAX;
        }
        self.cnt = ((self.cnt << ACK_RATIO_SHIFT) / self.delayed_ack).max(1);
    }
}

impl CongestionControl for Bic {
    fn name(&self) -> &'static str {
        "bic"
    }

    fn init(&mut self, tp: &mut TcpState) {
        self.reset();
        if self.p.initial_ssthresh > 0 {
            tp.ssthresh = self.p.initial_ssthresh;
        }
    }

    /// `bictcp_recalc_ssthresh`.
    fn ssthresh(&mut self, tp: &mut TcpState) -> u32 {
        self.epoch_start = None;
        let cwnd = tp.cwnd;
        self.last_max_cwnd = if cwnd < self.last_max_cwnd && self.p.fast_convergence {
            ((cwnd as u64 * (BETA_SCALE + self.p.beta) as u64) / (2 * BETA_SCALE) as u64) as u32
        } else {
            cwnd
        };
        if cwnd <= self.p.low_window {
            (cwnd >> 1).max(2)
        } else {
            ((cwnd as u64 * self.p.beta as u64 / BETA_SCALE as u64) as u32).max(2)
        }
    }

    /// `bictcp_cong_avoid`.
    fn cong_avoid(&mut self, tp: &mut TcpState, sample: &AckSample) {
        let mut acked = sample.acked_sacked;
        if tp.in_slow_start() {
            acked = slow_start(tp, acked);
            if acked == 0 {
                return;
            }
        }
        self.update(tp.cwnd, tp.now);
        cong_avoid_ai(tp, self.cnt, acked);
    }

    /// `bictcp_state`: an RTO forgets everything.
    fn set_state(&mut self, _tp: &mut TcpState, new_state: CaState) {
        if new_state == CaState::Loss {
            self.reset();
        }
    }

    /// `bictcp_acked`: delayed_ack = 15/16 · delayed_ack + pkts_acked (× 16).
    fn pkts_acked(&mut self, tp: &mut TcpState, sample: &AckSample) {
        if tp.ca_state == CaState::Open {
            let est = self.delayed_ack >> ACK_RATIO_SHIFT;
            self.delayed_ack = (self.delayed_ack + sample.pkts_acked).saturating_sub(est).max(1);
        }
    }

    fn metrics(&self, tp: &TcpState) -> CcMetrics {
        let state = if tp.in_slow_start() {
            "slow_start"
        } else if tp.cwnd < self.last_max_cwnd {
            "binary_search"
        } else {
            "max_probing"
        };
        CcMetrics { state, ..Default::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testing::TimelineHarness;

    fn bic(cwnd: u32) -> TimelineHarness {
        TimelineHarness::in_cong_avoid(Box::new(Bic::new(Params::default())), cwnd, ms(50))
    }

    #[test]
    fn ssthresh_is_beta_and_records_wmax() {
        // cwnd 1000 > low_window: ssthresh = 1000·819/1024 = 799 (floor of 799.8).
        let mut h = bic(1000);
        h.loss_at_full_window();
        assert_eq!(h.tp().ssthresh, 799);
        // Small window: Reno's half.
        let mut h = bic(10);
        h.loss_at_full_window();
        assert_eq!(h.tp().ssthresh, 5);
    }

    #[test]
    fn binary_search_halves_the_distance_to_wmax() {
        // Loss at 1000 → cwnd 799, W_max 1000. Distance 201: dist/B = 50 > 16 → linear
        // at +16 per RTT (cnt = cwnd/16) until within 4·16 = 64; then each RTT
        // closes (W_max − cwnd)/4 of the gap: the step sizes shrink.
        let mut h = bic(1000);
        h.loss_at_full_window();
        h.end_recovery();
        // The ACK that ends Recovery sets cwnd = ssthresh and, cwnd-limited, may
        // already run cong_avoid (`tcp_cong_control` after `tcp_fastretrans_alert`).
        assert_eq!(h.tp().ssthresh, 799);
        assert!((799..=800).contains(&h.tp().cwnd), "cwnd {}", h.tp().cwnd);
        let mut prev = h.tp().cwnd;
        let mut steps = Vec::new();
        while h.tp().cwnd < 995 {
            h.run_rounds(1);
            steps.push(h.tp().cwnd - prev);
            prev = h.tp().cwnd;
            assert!(steps.len() < 40, "did not approach W_max: {steps:?}");
        }
        // Linear phase: cnt = cwnd/16 scaled by the ACK-ratio estimate. With one ACK per
        // packet Linux's estimate decays from 32 (2 packets/ACK, ×16) to 31 and stops
        // there (31 − 31>>4 + 1 = 31), so cnt = (cwnd/16)·16/31 and each RTT of cwnd
        // ACKs adds ≈ 31 packets; integer truncation of cwnd/16 makes it a little
        // less or more. (With 2 packets per ACK the estimate stays 32 and the step
        // is 32: since Linux counts acked packets in tcp_cong_avoid_ai, the ACK-ratio
        // scaling doubles BIC's per-RTT step over the paper's max_increment.)
        // (The first two rounds also ACK the packets that were in flight at the loss,
        // more than cwnd, so they are skipped.)
        assert!(steps[2..4].iter().all(|&s| (24..=34).contains(&s)), "{steps:?}");
        // Search phase: steps shrink as W_max nears, and cwnd never overshoots W_max
        // by more than the creep of one RTT.
        let n = steps.len();
        assert!(steps[n - 1] < steps[2] && steps[n / 2] < steps[2], "{steps:?}");
        assert!(h.tp().cwnd <= 1000 + 4, "cwnd {} overshot W_max 1000", h.tp().cwnd);
    }

    #[test]
    fn fast_convergence_lowers_wmax_when_loss_comes_early() {
        // Second loss at 900 < W_max 1000: W_max = 900·(1024+819)/2048 = 809 (809.9).
        let mut c = Bic::new(Params::default());
        let mut tp = crate::cc::testing::tcp_state(1448, 1000);
        c.ssthresh(&mut tp);
        assert_eq!(c.last_max_cwnd(), 1000);
        tp.cwnd = 900;
        c.ssthresh(&mut tp);
        assert_eq!(c.last_max_cwnd(), 809);
    }

    #[test]
    fn reno_at_small_windows() {
        // cwnd ≤ low_window: cnt = cwnd, returned before the ACK-ratio scaling, so
        // +1 packet per cwnd packets acknowledged, as Reno, whatever the ACK ratio.
        let mut h = bic(10);
        h.run_rounds(3);
        assert_eq!(h.tp().cwnd, 13);
        let mut h = bic(10);
        h.fill_window();
        h.advance(ms(50));
        for _ in 0..5 {
            h.ack(2);
            h.fill_window(); // stay cwnd-limited, as a bulk sender
        }
        assert_eq!(h.tp().cwnd, 11, "5 ACKs of 2 packets: 10 acked → +1");
    }
}
