//! TCP Vegas: delay-based congestion avoidance. Once per RTT Vegas compares the
//! window it has with the window the path would need at the base (propagation)
//! RTT and keeps the difference — the packets it holds queued at the bottleneck —
//! between α and β:
//!
//! ```text
//!   diff = cwnd · (RTT − baseRTT) / baseRTT      (packets queued)
//!   diff < α → cwnd + 1;   diff > β → cwnd − 1;   otherwise hold.
//! ```
//!
//! In slow start, diff > γ ends slow start with cwnd set to the "actual" rate
//! times baseRTT. RTT is the minimum sample of the last round (filters delayed
//! ACKs); baseRTT the minimum ever. Losses are handled as Reno (half the window).
//!
//! References: L. Brakmo, L. Peterson, "TCP Vegas: End to End Congestion
//! Avoidance on a Global Internet", IEEE JSAC 13(8), 1995; Linux
//! `net/ipv4/tcp_vegas.c`.
//!
//! Parameters (Linux module defaults): `alpha` = 2, `beta` = 4 packets queued
//! (lower/upper bound), `gamma` = 1 (slow-start exit threshold). Other constants:
//! a round needs more than 2 RTT samples (with only 2, both may come from delayed
//! ACKs: then Vegas behaves as Reno for that round); cwnd ≥ 2.
//!
//! Deviation: Linux's per-round boundary (`beg_snd_nxt`) is replaced by the
//! equivalent packet-timed round of [`VegasRtt`] (see there).

use serde::{Deserialize, Serialize};

use super::common::classic::{reno_cong_avoid, reno_ssthresh, slow_start};
use super::common::vegas_rtt::VegasRtt;
use super::registry::{describe_params, parse_params, CcaInfo};
use super::{AckSample, BoxedCca, CaEvent, CaState, CcMetrics, CongestionControl, TcpState};

/// Fewer samples than this in a round (≤ 2) may all be delayed ACKs.
pub const MIN_SAMPLES_PER_ROUND: u32 = 3;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    pub alpha: u32,
    pub beta: u32,
    pub gamma: u32,
}

impl Default for Params {
    fn default() -> Self {
        Self { alpha: 2, beta: 4, gamma: 1 }
    }
}

const PARAM_DOCS: &[(&str, &str)] = &[
    ("alpha", "fewest packets to keep queued: below, cwnd + 1 per RTT (Linux 2)"),
    ("beta", "most packets to keep queued: above, cwnd − 1 per RTT (Linux 4)"),
    ("gamma", "queued packets that end slow start (Linux 1)"),
];

pub const INFO: CcaInfo = CcaInfo {
    name: "vegas",
    family: "delay",
    summary: "Vegas: keeps alpha..beta packets queued, +-1 per RTT (Linux tcp_vegas.c)",
    reference: "Brakmo & Peterson, IEEE JSAC 13(8) 1995; Linux net/ipv4/tcp_vegas.c",
    params: || describe_params::<Params>(PARAM_DOCS),
    build: |v| {
        let p: Params = parse_params("vegas", v)?;
        if p.alpha > p.beta {
            return Err(format!("parameters of CCA 'vegas': alpha ({}) must not exceed beta ({})", p.alpha, p.beta));
        }
        Ok(Box::new(Vegas::new(p)) as BoxedCca)
    },
};

/// `struct vegas`.
#[derive(Debug, Clone)]
pub struct Vegas {
    p: Params,
    doing_vegas_now: bool,
    rtt: VegasRtt,
    /// The last round's queue estimate (packets), for traces.
    last_diff: Option<u32>,
}

impl Vegas {
    pub fn new(p: Params) -> Self {
        Self { p, doing_vegas_now: true, rtt: VegasRtt::default(), last_diff: None }
    }

    fn enable(&mut self, tp: &TcpState) {
        self.doing_vegas_now = true;
        self.rtt.restart_round(tp);
    }

    /// `tcp_current_ssthresh` outside a reduction: at least ¾ of cwnd.
    fn current_ssthresh(tp: &TcpState) -> u32 {
        tp.ssthresh.max((tp.cwnd >> 1) + (tp.cwnd >> 2))
    }

}

impl CongestionControl for Vegas {
    fn name(&self) -> &'static str {
        "vegas"
    }

    fn init(&mut self, tp: &mut TcpState) {
        self.rtt = VegasRtt::default();
        self.enable(tp);
    }

    fn ssthresh(&mut self, tp: &mut TcpState) -> u32 {
        reno_ssthresh(tp)
    }

    fn pkts_acked(&mut self, _tp: &mut TcpState, sample: &AckSample) {
        self.rtt.on_sample(sample);
    }

    /// `tcp_vegas_state`: Vegas runs only in Open; it restarts when it returns.
    fn set_state(&mut self, tp: &mut TcpState, new_state: CaState) {
        if new_state == CaState::Open {
            self.enable(tp);
        } else {
            self.doing_vegas_now = false;
        }
    }

    /// `tcp_vegas_cwnd_event`: after idle the samples are stale; start afresh.
    fn cwnd_event(&mut self, tp: &mut TcpState, event: CaEvent) {
        if matches!(event, CaEvent::CwndRestart | CaEvent::TxStart) {
            self.init(tp);
        }
    }

    /// `tcp_vegas_cong_avoid`.
    fn cong_avoid(&mut self, tp: &mut TcpState, sample: &AckSample) {
        if !self.doing_vegas_now {
            reno_cong_avoid(tp, sample.acked_sacked);
            return;
        }
        if self.rtt.round_ended(tp, sample) {
            if self.rtt.cnt_rtt < MIN_SAMPLES_PER_ROUND {
                reno_cong_avoid(tp, sample.acked_sacked);
            } else {
                let rtt = self.rtt.min_rtt as u64;
                let base = self.rtt.base_rtt as u64;
                let cwnd = tp.cwnd as u64;
                // The window the path needs at baseRTT, at the rate achieved.
                let target_cwnd = cwnd * base / rtt;
                // Packets queued: cwnd − target, as cwnd·(rtt − base)/base.
                let diff = (cwnd * (rtt - base) / base) as u32;
                self.last_diff = Some(diff);
                if diff > self.p.gamma && tp.in_slow_start() {
                    // Too fast: leave slow start at the achieved rate (+1 for the
                    // truncation of the division).
                    tp.cwnd = tp.cwnd.min(target_cwnd as u32 + 1);
                    tp.ssthresh = tp.ssthresh.min(tp.cwnd);
                } else if tp.in_slow_start() {
                    slow_start(tp, sample.acked_sacked);
                } else if diff > self.p.beta {
                    tp.cwnd -= 1;
                    tp.ssthresh = tp.ssthresh.min(tp.cwnd);
                } else if diff < self.p.alpha {
                    tp.cwnd += 1;
                }
                tp.cwnd = tp.cwnd.clamp(2, tp.cwnd_clamp.max(2));
                tp.ssthresh = Self::current_ssthresh(tp);
            }
            self.rtt.clear_round();
        } else if tp.in_slow_start() {
            slow_start(tp, sample.acked_sacked);
        }
    }

    fn metrics(&self, tp: &TcpState) -> CcMetrics {
        let state = if !self.doing_vegas_now {
            "reno"
        } else if tp.in_slow_start() {
            "slow_start"
        } else {
            "cong_avoid"
        };
        let min_rtt_ns = (self.rtt.base_rtt != super::common::vegas_rtt::NO_RTT).then(|| (self.rtt.base_rtt as u64 - 1) * 1000);
        CcMetrics { state, min_rtt_ns, ..Default::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testing::TimelineHarness;
    use crate::units::ms;

    /// A bottleneck of 1000 packets/s and 50 ms base RTT: BDP = 50 packets. The
    /// harness queues ACKs behind the bottleneck, so a window above 50 adds
    /// (cwnd − 50) ms of queueing per packet... i.e. RTT = max(50 ms, cwnd ms).
    fn vegas(cwnd: u32) -> TimelineHarness {
        TimelineHarness::new(Box::new(Vegas::new(Params::default())), 1448, cwnd)
            .with_rtt(ms(50))
            .with_bottleneck_pps(1000.0)
    }

    #[test]
    fn holds_alpha_to_beta_packets_in_the_queue() {
        // Congestion avoidance from cwnd 30: below the BDP (50) diff = 0 < α → +1 per
        // round; once cwnd > 50 + α the queue diff = cwnd − 50 (cwnd·(rtt − base)/base
        // with rtt = cwnd ms, base = 50 ms) settles in [α, β] = [2, 4].
        let mut h = vegas(30);
        h.tp_mut().ssthresh = 30;
        h.run_rounds(60);
        let cwnd = h.tp().cwnd;
        assert!((52..=55).contains(&cwnd), "cwnd {cwnd}: queue {} packets", cwnd as i64 - 50);
        // And it stays there.
        for _ in 0..20 {
            h.run_rounds(1);
            assert!((52..=55).contains(&h.tp().cwnd), "cwnd {}", h.tp().cwnd);
        }
    }

    #[test]
    fn slow_start_ends_when_a_queue_builds_then_drains_one_packet_per_rtt() {
        // Slow start doubles per round: 10, 20, 40, 80, 160. The round at 80 pushes
        // past the BDP (50), so the next round's minimum RTT (its first packets
        // queue behind the previous burst: 51 ms) gives diff = 160·1/50 = 3 > γ = 1:
        // slow start ends with cwnd = min(160, 160·50/51 + 1) = 157. (The minimum
        // RTT of a round underestimates the queue in slow start, as in Linux.)
        let mut h = vegas(10);
        h.run_rounds(5);
        assert!(!h.tp().in_slow_start(), "cwnd {} ssthresh {}", h.tp().cwnd, h.tp().ssthresh);
        // Then diff = cwnd·(RTT − 50)/50 ≫ β = 4: −1 packet per round.
        let mut prev = h.tp().cwnd;
        for _ in 0..10 {
            h.run_rounds(1);
            assert_eq!(h.tp().cwnd, prev - 1);
            prev = h.tp().cwnd;
        }
    }

    #[test]
    fn a_loss_halves_as_reno() {
        let mut h = vegas(40);
        h.tp_mut().ssthresh = 40;
        h.loss_at_full_window();
        assert_eq!(h.tp().ssthresh, 20);
    }
}
