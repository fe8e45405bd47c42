//! TCP-LP (Low Priority): a scavenger that uses only the capacity other flows leave.
//! Reno's window, plus an early congestion indication (ECI) from one-way delay: when
//! the smoothed delay rises above `owd_min + 15 %·(owd_max − owd_min)`, the flow
//! halves its window, and if that happens again within an inference time
//! (3 RTTs) after the previous cut it drops to one packet, before any loss.
//! Growth stops during the inference time after a cut. As Linux, the first delay
//! sample is its own minimum and maximum, so it counts as a rise and halves cwnd once.
//!
//! References: A. Kuzmanovic and E. W. Knightly, "TCP-LP: A Distributed Algorithm
//! for Low Priority Data Transfer", IEEE INFOCOM 2003; Linux `net/ipv4/tcp_lp.c`.
//!
//! Parameters (Linux has no module parameters; its constants are exposed):
//! * `threshold_pct` = 15: the delay threshold δ as a percentage of the
//!   [owd_min, owd_max] range (Kuzmanovic & Knightly's δ = 0.15; Linux `15 * … / 100`).
//! * `inference_rtts` = 3: the inference time in RTTs (the paper's itt = 3·RTT;
//!   Linux `3 * (now − rcv_tsecr)`).
//!
//! Deviation: Linux measures a relative one-way delay from TCP timestamps
//! (`rcv_tsval` scaled by an estimated remote HZ, minus `rcv_tsecr`), and the
//! inference time from `now − rcv_tsecr`. The engine has no timestamp option, so
//! the delay signal is the ACK's RTT sample (µs): on paths whose reverse direction
//! does not queue (the dumbbell's ACK path) RTT and forward one-way delay differ by
//! a constant, which cancels in the threshold test; and the inference time is 3× the
//! latest RTT sample.

use serde::{Deserialize, Serialize};

use super::common::classic::{phase, reno_cong_avoid, reno_ssthresh};
use super::common::clock::to_us;
use super::registry::{describe_params, parse_params, CcaInfo};
use super::{AckSample, BoxedCca, CcMetrics, CongestionControl, TcpState};
use crate::units::Time;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    pub threshold_pct: u32,
    pub inference_rtts: u32,
}

impl Default for Params {
    fn default() -> Self {
        Self { threshold_pct: 15, inference_rtts: 3 }
    }
}

const PARAM_DOCS: &[(&str, &str)] = &[
    ("threshold_pct", "delay threshold, % of the [min, max] one-way delay range (Linux 15)"),
    ("inference_rtts", "inference time after a cut, in RTTs: growth stops, a second cut goes to 1 packet (Linux 3)"),
];

pub const INFO: CcaInfo = CcaInfo {
    name: "lp",
    family: "scavenger",
    summary: "TCP-LP: Reno that halves (or drops to 1) when one-way delay rises (Linux tcp_lp.c)",
    reference: "Kuzmanovic & Knightly, INFOCOM 2003; Linux net/ipv4/tcp_lp.c",
    params: || describe_params::<Params>(PARAM_DOCS),
    build: |v| {
        let p: Params = parse_params("lp", v)?;
        if p.threshold_pct == 0 || p.threshold_pct > 100 || p.inference_rtts == 0 || p.inference_rtts > 1000 {
            return Err("parameters of CCA 'lp': threshold_pct must be in 1..=100 and inference_rtts in 1..=1000".into());
        }
        Ok(Box::new(Lp::new(p)) as BoxedCca)
    },
};

#[derive(Debug, Clone)]
pub struct Lp {
    p: Params,
    /// Smoothed delay, µs << 3 (`sowd`); 0 before a sample.
    sowd: u32,
    owd_min: u32,
    owd_max: u32,
    /// The previous maximum: the largest sample is always forgotten (`owd_max_rsv`).
    owd_max_rsv: u32,
    /// Time of the last early cut (`last_drop`).
    last_drop: Option<Time>,
    /// Inference time (`inference`).
    inference: Time,
    /// Within the inference time of the last cut (`LP_WITHIN_INF`).
    within_inference: bool,
}

impl Lp {
    pub fn new(p: Params) -> Self {
        Self { p, sowd: 0, owd_min: u32::MAX, owd_max: 0, owd_max_rsv: 0, last_drop: None, inference: 0, within_inference: false }
    }

    /// `tcp_lp_rtt_sample`: min, max (forgetting the largest) and the 1/8 EWMA.
    fn delay_sample(&mut self, owd: u32) {
        self.owd_min = self.owd_min.min(owd);
        if owd > self.owd_max {
            if owd > self.owd_max_rsv {
                self.owd_max = if self.owd_max_rsv == 0 { owd } else { self.owd_max_rsv };
                self.owd_max_rsv = owd;
            } else {
                self.owd_max = owd;
            }
        }
        if self.sowd != 0 {
            // sowd ← 7/8 sowd + 1/8 owd, in ×8 units.
            self.sowd = self.sowd.wrapping_add(owd.wrapping_sub(self.sowd >> 3));
        } else {
            self.sowd = owd << 3;
        }
    }

    /// Smoothed delay below `owd_min + δ·(owd_max − owd_min)` (`LP_WITHIN_THR`),
    /// in Linux's u32 arithmetic (true before any sample).
    fn within_threshold(&self) -> bool {
        let range = self.owd_max.wrapping_sub(self.owd_min) as u64;
        let threshold = self.owd_min as u64 + self.p.threshold_pct as u64 * range / 100;
        ((self.sowd >> 3) as u64) < (threshold & u32::MAX as u64)
    }
}

impl CongestionControl for Lp {
    fn name(&self) -> &'static str {
        "lp"
    }

    fn ssthresh(&mut self, tp: &mut TcpState) -> u32 {
        reno_ssthresh(tp)
    }

    /// `tcp_lp_cong_avoid`: Reno, except within the inference time of a cut.
    fn cong_avoid(&mut self, tp: &mut TcpState, sample: &AckSample) {
        if !self.within_inference {
            reno_cong_avoid(tp, sample.acked_sacked);
        }
    }

    /// `tcp_lp_pkts_acked`: the early congestion indication.
    fn pkts_acked(&mut self, tp: &mut TcpState, sample: &AckSample) {
        if let Some(rtt) = sample.rtt.filter(|&r| r > 0) {
            self.delay_sample(to_us(rtt).max(1));
            self.inference = rtt.saturating_mul(self.p.inference_rtts as u64);
        }
        self.within_inference = self.last_drop.is_some_and(|d| tp.now.saturating_sub(d) < self.inference);
        if self.within_threshold() {
            return;
        }
        // Re-centre min and max on the current delay, so the next indication needs a
        // further rise (Linux's "FIXME" reset, kept as the reference has it).
        self.owd_min = self.sowd >> 3;
        self.owd_max = self.sowd >> 2;
        self.owd_max_rsv = self.sowd >> 2;
        tp.cwnd = if self.within_inference { 1 } else { (tp.cwnd >> 1).max(1) };
        self.last_drop = Some(tp.now);
    }

    fn metrics(&self, tp: &TcpState) -> CcMetrics {
        let state = if self.within_inference { "inference" } else { phase(tp) };
        CcMetrics { state, ..Default::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testing::{tcp_state, TimelineHarness};
    use crate::units::ms;

    /// One ACK at `now_ms` with an RTT sample of `rtt_ms`.
    fn ack(lp: &mut Lp, tp: &mut TcpState, now_ms: u64, rtt_ms: u64) {
        tp.now = ms(now_ms);
        lp.pkts_acked(tp, &AckSample { rtt: Some(ms(rtt_ms)), acked_sacked: 1, pkts_acked: 1, ..Default::default() });
    }

    #[test]
    fn a_delay_rise_above_fifteen_percent_of_the_range_halves_then_drops_to_one() {
        let mut lp = Lp::new(Params::default());
        let mut tp = tcp_state(1448, 100);
        // As Linux, the first valid sample (40 ms) is its own min and max, so it is
        // not below min + 0 and cuts: 100 → 50; min/max re-centre to 40…80 ms.
        ack(&mut lp, &mut tp, 0, 40);
        assert_eq!(tp.cwnd, 50);
        assert_eq!((lp.owd_min, lp.owd_max), (40_000, 80_000));
        // A steady 40 ms stays below 40 + 15 %·40 = 46 ms: no indication.
        for t in 1..=300 {
            ack(&mut lp, &mut tp, t, 40);
        }
        assert_eq!(tp.cwnd, 50);
        // A rise to 60 ms: the 7/8 EWMA goes 42.5, 44.7, 46.6 > 46 → halve at the
        // third sample (outside the 120 ms inference time of the first cut).
        let mut t = 300;
        while tp.cwnd == 50 {
            t += 1;
            ack(&mut lp, &mut tp, t, 60);
        }
        assert_eq!((tp.cwnd, t), (25, 303));
        // Min/max re-centre on 46.6 ms (46.6…93.2); a rise to 90 ms crosses
        // 46.6 + 15 %·46.6 = 53.6 ms within the inference time → cwnd 1.
        let cut = t;
        while tp.cwnd == 25 {
            t += 1;
            ack(&mut lp, &mut tp, t, 90);
        }
        assert!(lp.within_inference && t - cut < 270, "second cut {} ms after the first", t - cut);
        assert_eq!(tp.cwnd, 1);
    }

    #[test]
    fn with_a_constant_delay_it_grows_as_reno_once_past_the_inference_time() {
        // The first sample's cut (see above) starts a 3-RTT inference time without
        // growth; after it, a constant delay never crosses the threshold: +1 per round.
        let mut h = TimelineHarness::in_cong_avoid(Box::new(Lp::new(Params::default())), 50, ms(40));
        h.run_rounds(5);
        let c = h.tp().cwnd;
        h.run_rounds(4);
        assert_eq!(h.tp().cwnd, c + 4);
    }
}
