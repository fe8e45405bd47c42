//! Scalable TCP (STCP): multiplicative increase, multiplicative decrease. In
//! congestion avoidance cwnd grows by 1 packet per `ai_cnt` packets acknowledged
//! (≈ 1% per RTT once cwnd ≥ `ai_cnt`), and a loss cuts it by 1/8 (β = 0.875), so
//! the time to regain the window after a loss is a fixed number of RTTs whatever
//! the window size: ln(1/0.875) / ln(1.01) ≈ 13.4 RTTs.
//!
//! References: T. Kelly, "Scalable TCP: Improving Performance in Highspeed Wide
//! Area Networks", ACM SIGCOMM CCR 33(2), 2003; Linux `net/ipv4/tcp_scalable.c`.
//!
//! Parameters (Linux has no module parameters; its two constants are exposed):
//! * `ai_cnt` = 100 (`TCP_SCALABLE_AI_CNT`): packets acknowledged per +1 packet,
//!   Kelly's a = 0.01. Below `ai_cnt` packets of cwnd, the increase is Reno's
//!   (`min(cwnd, ai_cnt)`), so small windows are no more aggressive than Reno.
//! * `md_shift` = 3 (`TCP_SCALABLE_MD_SCALE`): the decrease is cwnd >> 3 = cwnd/8,
//!   Kelly's b = 0.125.

use serde::{Deserialize, Serialize};

use super::common::classic::{cong_avoid_ai, phase, slow_start};
use super::registry::{describe_params, parse_params, CcaInfo};
use super::{AckSample, BoxedCca, CcMetrics, CongestionControl, TcpState};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    pub ai_cnt: u32,
    pub md_shift: u32,
}

impl Default for Params {
    fn default() -> Self {
        Self { ai_cnt: 100, md_shift: 3 }
    }
}

const PARAM_DOCS: &[(&str, &str)] = &[
    ("ai_cnt", "packets acknowledged per +1 packet of cwnd (Linux TCP_SCALABLE_AI_CNT; a = 1/ai_cnt)"),
    ("md_shift", "a loss removes cwnd >> md_shift (Linux TCP_SCALABLE_MD_SCALE; 3 = β 0.875)"),
];

pub const INFO: CcaInfo = CcaInfo {
    name: "scalable",
    family: "loss/high-speed",
    summary: "Scalable TCP: +1 packet per 100 acked, ×0.875 on loss (Linux tcp_scalable.c)",
    reference: "Kelly, ACM SIGCOMM CCR 33(2) 2003; Linux net/ipv4/tcp_scalable.c",
    params: || describe_params::<Params>(PARAM_DOCS),
    build: |v| {
        let p: Params = parse_params("scalable", v)?;
        if p.ai_cnt == 0 || p.md_shift == 0 || p.md_shift > 31 {
            return Err("parameters of CCA 'scalable': ai_cnt must be >= 1 and md_shift in 1..=31".into());
        }
        Ok(Box::new(Scalable { p }) as BoxedCca)
    },
};

#[derive(Debug, Clone)]
pub struct Scalable {
    p: Params,
}

impl CongestionControl for Scalable {
    fn name(&self) -> &'static str {
        "scalable"
    }

    /// `tcp_scalable_ssthresh`: cwnd − cwnd/8, at least 2.
    fn ssthresh(&mut self, tp: &mut TcpState) -> u32 {
        (tp.cwnd - (tp.cwnd >> self.p.md_shift)).max(2)
    }

    /// `tcp_scalable_cong_avoid`.
    fn cong_avoid(&mut self, tp: &mut TcpState, sample: &AckSample) {
        let mut acked = sample.acked_sacked;
        if tp.in_slow_start() {
            acked = slow_start(tp, acked);
            if acked == 0 {
                return;
            }
        }
        let w = tp.cwnd.min(self.p.ai_cnt);
        cong_avoid_ai(tp, w, acked);
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

    fn scalable(cwnd: u32) -> TimelineHarness {
        TimelineHarness::in_cong_avoid(Box::new(Scalable { p: Params::default() }), cwnd, ms(50))
    }

    #[test]
    fn cong_avoid_adds_one_packet_per_hundred_acked_above_100() {
        // cwnd 1000, one ACK per packet: each round acks 1000 packets → +1000/100 =
        // +10 packets (≈ 1%), as long as the counter carries the remainder.
        let mut h = scalable(1000);
        h.run_rounds(1);
        assert_eq!(h.tp().cwnd, 1010);
        h.run_rounds(1);
        assert_eq!(h.tp().cwnd, 1020, "1010 acked → +10, remainder 10 carried");
    }

    #[test]
    fn cong_avoid_is_reno_below_ai_cnt() {
        // cwnd 20 < 100: w = min(20, 100) = 20 → +1 per round, as Reno.
        let mut h = scalable(20);
        h.run_rounds(3);
        assert_eq!(h.tp().cwnd, 23);
    }

    #[test]
    fn ssthresh_cuts_one_eighth() {
        let mut h = scalable(1000);
        h.loss_at_full_window();
        // 1000 − 1000>>3 = 1000 − 125 = 875.
        assert_eq!(h.tp().ssthresh, 875);
        h.end_recovery();
        assert_eq!(h.tp().cwnd, 875);
    }

    /// Rounds to regain the pre-loss window after one loss.
    fn recovery_rounds(w: u32) -> u32 {
        let mut h = scalable(w);
        h.loss_at_full_window();
        h.end_recovery();
        let mut rounds = 0;
        while h.tp().cwnd < w {
            h.run_rounds(1);
            rounds += 1;
        }
        rounds
    }

    #[test]
    fn recovery_time_is_independent_of_the_window() {
        // From 0.875·w back to w at ×1.01 per round: ln(1/0.875)/ln(1.01) ≈ 13.4
        // rounds for any w ≥ ai_cnt/0.875; integer cwnd rounding shifts it by ±1.
        let small = recovery_rounds(800);
        let large = recovery_rounds(3200);
        assert!((13..=15).contains(&small), "{small} rounds at w=800");
        assert!(small.abs_diff(large) <= 1, "{small} rounds at w=800 vs {large} at w=3200");
    }
}
