//! TCP Veno: Reno whose growth and decrease depend on an estimate of the packets
//! this flow keeps queued, to tell congestion losses from random (wireless) ones.
//! From Vegas' expected and actual rates it computes
//!
//! ```text
//!   N = cwnd − cwnd·baseRTT/RTT        (packets queued, kept ×2 as `diff`)
//! ```
//!
//! and, with N below β = 3 packets ("non-congestive state"), grows as Reno and cuts
//! only to 4/5 on a loss (the loss is taken as random); with N ≥ β ("congestive
//! state") it grows one packet every *other* RTT and halves on a loss.
//!
//! References: C. P. Fu and S. C. Liew, "TCP Veno: TCP Enhancement for Transmission
//! over Wireless Access Networks", IEEE JSAC 21(2), 2003; Linux
//! `net/ipv4/tcp_veno.c` (followed hook for hook).
//!
//! Parameters (Linux has no module parameters; its constant is exposed):
//! * `beta` = 3 packets (Linux `beta = 3 << V_PARAM_SHIFT`): the backlog above
//!   which the path is taken as congested; Fu & Liew's β, chosen in the paper
//!   between Vegas' α = 1 and β = 3 for the same reason as Vegas' β.
//!
//! As Linux: RTT samples are µs + 1; `minrtt` is reset after every `cong_avoid` call,
//! so N uses the minimum RTT since the previous ACK that grew the window; `cntrtt`
//! is never reset after the connection's first three samples (Linux keeps that
//! reset commented out), so Veno arithmetic starts with the third sample.

use serde::{Deserialize, Serialize};

use super::common::classic::{cong_avoid_ai, phase, reno_cong_avoid, slow_start};
use super::common::clock::to_us;
use super::common::vegas_rtt::NO_RTT;
use super::registry::{describe_params, parse_params, CcaInfo};
use super::{AckSample, BoxedCca, CaEvent, CaState, CcMetrics, CongestionControl, TcpState};

/// Linux `V_PARAM_SHIFT`: `diff` and `target_cwnd` carry one fractional bit.
const V_PARAM_SHIFT: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    pub beta: u32,
}

impl Default for Params {
    fn default() -> Self {
        Self { beta: 3 }
    }
}

const PARAM_DOCS: &[(&str, &str)] =
    &[("beta", "packets queued above which a loss is taken as congestion (Linux beta = 3)")];

pub const INFO: CcaInfo = CcaInfo {
    name: "veno",
    family: "loss+delay",
    summary: "Veno: Reno; a loss with < β packets queued is random (×4/5), else ×1/2 (Linux tcp_veno.c)",
    reference: "Fu & Liew, IEEE JSAC 21(2) 2003; Linux net/ipv4/tcp_veno.c",
    params: || describe_params::<Params>(PARAM_DOCS),
    build: |v| {
        let p: Params = parse_params("veno", v)?;
        if p.beta == 0 || p.beta > 1 << 20 {
            return Err("parameters of CCA 'veno': beta must be in 1..=1048576 packets".into());
        }
        Ok(Box::new(Veno::new(p)) as BoxedCca)
    },
};

#[derive(Debug, Clone)]
pub struct Veno {
    /// β << V_PARAM_SHIFT.
    beta: u32,
    /// Veno arithmetic on (in the Open state only).
    doing_veno_now: bool,
    /// RTT samples since the connection (re)started.
    cnt_rtt: u32,
    /// Minimum RTT since the last `cong_avoid` (µs + 1).
    min_rtt: u32,
    /// Minimum RTT seen (µs + 1).
    base_rtt: u32,
    /// In the congestive state: grow on this RTT (toggles each RTT).
    inc: bool,
    /// Estimated backlog, packets × 2 (`diff`); 0 until computed.
    diff: u32,
}

impl Veno {
    pub fn new(p: Params) -> Self {
        let mut v =
            Self { beta: p.beta << V_PARAM_SHIFT, doing_veno_now: true, cnt_rtt: 0, min_rtt: NO_RTT, base_rtt: NO_RTT, inc: true, diff: 0 };
        v.restart();
        v
    }

    /// `tcp_veno_init`: forget baseRTT; `veno_enable`.
    fn restart(&mut self) {
        self.base_rtt = NO_RTT;
        self.inc = true;
        self.enable();
    }

    /// `veno_enable`.
    fn enable(&mut self) {
        self.doing_veno_now = true;
        self.min_rtt = NO_RTT;
    }

    /// Whether the last estimate put the flow in the congestive state (N ≥ β).
    fn congestive(&self) -> bool {
        self.diff >= self.beta
    }
}

impl CongestionControl for Veno {
    fn name(&self) -> &'static str {
        "veno"
    }

    /// `tcp_veno_pkts_acked`.
    fn pkts_acked(&mut self, _tp: &mut TcpState, sample: &AckSample) {
        let Some(rtt) = sample.rtt else { return };
        let vrtt = to_us(rtt).saturating_add(1);
        self.base_rtt = self.base_rtt.min(vrtt);
        self.min_rtt = self.min_rtt.min(vrtt);
        self.cnt_rtt = self.cnt_rtt.saturating_add(1);
    }

    /// `tcp_veno_state`: Veno only in Open.
    fn set_state(&mut self, _tp: &mut TcpState, new_state: CaState) {
        if new_state == CaState::Open {
            self.enable();
        } else {
            self.doing_veno_now = false;
        }
    }

    /// `tcp_veno_cwnd_event`: start over after idle.
    fn cwnd_event(&mut self, _tp: &mut TcpState, event: CaEvent) {
        if matches!(event, CaEvent::CwndRestart | CaEvent::TxStart) {
            self.restart();
        }
    }

    /// `tcp_veno_cong_avoid`.
    fn cong_avoid(&mut self, tp: &mut TcpState, sample: &AckSample) {
        let mut acked = sample.acked_sacked;
        if !self.doing_veno_now || self.cnt_rtt <= 2 {
            // Not in Open, or too few samples: Reno.
            reno_cong_avoid(tp, acked);
            if self.doing_veno_now {
                self.min_rtt = NO_RTT;
            }
            return;
        }
        // target = cwnd·baseRTT/RTT (×2); diff = cwnd − target (×2), the backlog N.
        let target = ((tp.cwnd as u64 * self.base_rtt as u64) << V_PARAM_SHIFT) / self.min_rtt.max(1) as u64;
        self.diff = ((tp.cwnd as u64) << V_PARAM_SHIFT).saturating_sub(target) as u32;
        let mut grow = true;
        if tp.in_slow_start() {
            acked = slow_start(tp, acked);
            grow = acked > 0;
        }
        if grow {
            if !self.congestive() {
                // Non-congestive: Reno's +1 per window.
                cong_avoid_ai(tp, tp.cwnd, acked);
            } else if tp.cwnd_cnt >= tp.cwnd {
                // Congestive: +1 every other window.
                if self.inc && tp.cwnd < tp.cwnd_clamp {
                    tp.cwnd += 1;
                    self.inc = false;
                } else {
                    self.inc = true;
                }
                tp.cwnd_cnt = 0;
            } else {
                tp.cwnd_cnt = tp.cwnd_cnt.saturating_add(acked);
            }
        }
        tp.cwnd = tp.cwnd.clamp(2, tp.cwnd_clamp.max(2));
        // Wipe the slate clean for the next RTT.
        self.min_rtt = NO_RTT;
    }

    /// `tcp_veno_ssthresh`: ×4/5 when the loss looks random, ×1/2 when congestive.
    fn ssthresh(&mut self, tp: &mut TcpState) -> u32 {
        if self.congestive() {
            (tp.cwnd >> 1).max(2)
        } else {
            (tp.cwnd as u64 * 4 / 5).max(2) as u32
        }
    }

    fn metrics(&self, tp: &TcpState) -> CcMetrics {
        let state = if tp.in_slow_start() {
            phase(tp)
        } else if self.congestive() {
            "congestive"
        } else {
            "non_congestive"
        };
        CcMetrics { state, ..Default::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testing::TimelineHarness;
    use crate::units::ms;

    /// Veno in congestion avoidance at `cwnd` on a path whose RTT is `rtt_ms`
    /// (the harness's fixed RTT: baseRTT = RTT, so N = 0 unless the RTT grows).
    fn veno(cwnd: u32, rtt_ms: u64) -> TimelineHarness {
        TimelineHarness::in_cong_avoid(Box::new(Veno::new(Params::default())), cwnd, ms(rtt_ms))
    }

    #[test]
    fn with_no_backlog_it_grows_as_reno_and_a_loss_cuts_to_four_fifths() {
        // RTT = baseRTT: N = cwnd − cwnd·1 = 0 < β → non-congestive: +1 per round
        // as Reno; a loss then gives ssthresh = 100·4/5 = 80.
        let mut h = veno(100, 50);
        h.run_rounds(3);
        assert_eq!(h.tp().cwnd, 103);
        let mut v = Veno::new(Params::default());
        v.diff = 0;
        let mut tp = crate::cc::testing::tcp_state(1448, 100);
        assert_eq!(v.ssthresh(&mut tp), 80);
    }

    #[test]
    fn with_a_backlog_it_grows_every_other_round_and_halves() {
        // baseRTT 50 ms, then the RTT rises to 60 ms: N = cwnd·(1 − 50/60) =
        // 100/6 ≈ 16.7 ≥ β = 3 → congestive: +1 every other round (Reno: +1 each),
        // and a loss halves (ssthresh 100 → 50).
        let mut h = veno(100, 50);
        h.run_rounds(2);
        let start = h.tp().cwnd;
        h.set_rtt(ms(60));
        h.run_rounds(1); // the first round at 60 ms measures the backlog
        let before = h.tp().cwnd;
        h.run_rounds(6);
        let grown = h.tp().cwnd - before;
        assert!((2..=4).contains(&grown), "{grown} packets in 6 rounds (Reno: 6), start {start}");
        assert_eq!(h.cca().metrics(h.tp()).state, "congestive");
        let cwnd = h.tp().cwnd;
        let mut tp = h.tp().clone();
        let mut v = Veno::new(Params::default());
        v.diff = 2 * 16;
        assert_eq!(v.ssthresh(&mut tp), cwnd / 2);
    }
}
