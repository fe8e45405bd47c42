//! DCTCP (Data Center TCP): reacts to the *fraction* of ECN-marked packets rather
//! than to their presence. Once per window of data the sender updates
//!
//! ```text
//!   α ← (1 − g)·α + g·F,      F = marked / delivered in the last window
//! ```
//!
//! and, once per window with marks (through the sender's CWR), cuts
//! cwnd ← cwnd·(1 − α/2). With a step-marking AQM (mark every packet above K
//! packets of queue) the queue oscillates tightly around K, giving low latency
//! and full throughput with shallow buffers. Losses are handled as Reno.
//!
//! References: RFC 8257 (DCTCP: TCP Congestion Control for Data Centers, 2017);
//! M. Alizadeh et al., "Data Center TCP (DCTCP)", ACM SIGCOMM 2010; Linux
//! `net/ipv4/tcp_dctcp.c`.
//!
//! Parameters (Linux module defaults): `shift_g` = 4 (g = 1/16, RFC 8257 §4.2's
//! recommended gain), `alpha_on_init` = 1024 (α = 1: the first marked window
//! halves cwnd, conservative until measured). α is kept ×1024 (`DCTCP_MAX_ALPHA`);
//! the cut uses α/2 as `cwnd·α >> 11`.
//!
//! The flow sends ECT and its receiver echoes CE per segment (see
//! `Receiver::with_accurate_ecn`); without CE marks on the path DCTCP is Reno.
//!
//! Deviation: the once-per-window α update (Linux: when `snd_una` passes the
//! `snd_nxt` recorded at the previous update) uses the packet-timed round of
//! [`RoundCounter`], which coincides without reordering.

use serde::{Deserialize, Serialize};

use super::common::classic::{phase, reno_cong_avoid};
use super::common::RoundCounter;
use super::registry::{describe_params, parse_params, CcaInfo};
use super::{AckSample, BoxedCca, CaEvent, CaState, CcMetrics, CongestionControl, TcpState};

/// α = 1.0 (`DCTCP_MAX_ALPHA`).
const MAX_ALPHA: u32 = 1024;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    pub shift_g: u32,
    pub alpha_on_init: u32,
}

impl Default for Params {
    fn default() -> Self {
        Self { shift_g: 4, alpha_on_init: MAX_ALPHA }
    }
}

const PARAM_DOCS: &[(&str, &str)] = &[
    ("shift_g", "EWMA gain g = 1/2^shift_g of the marked fraction (Linux dctcp_shift_g 4, RFC 8257 g = 1/16)"),
    ("alpha_on_init", "initial α ×1024 (Linux dctcp_alpha_on_init 1024 = 1.0)"),
];

pub const INFO: CcaInfo = CcaInfo {
    name: "dctcp",
    family: "ecn",
    summary: "DCTCP: cwnd × (1 − α/2) per marked window, α = EWMA of the CE fraction (Linux tcp_dctcp.c)",
    reference: "RFC 8257; Alizadeh et al., ACM SIGCOMM 2010; Linux net/ipv4/tcp_dctcp.c",
    params: || describe_params::<Params>(PARAM_DOCS),
    build: |v| {
        let p: Params = parse_params("dctcp", v)?;
        if p.shift_g > 10 {
            return Err(format!("parameters of CCA 'dctcp': shift_g must be in 0..=10 (Linux's bounds), got {}", p.shift_g));
        }
        Ok(Box::new(Dctcp::new(p)) as BoxedCca)
    },
};

/// `struct dctcp`.
#[derive(Debug, Clone)]
pub struct Dctcp {
    p: Params,
    /// α ×1024.
    alpha: u32,
    old_delivered: u64,
    old_delivered_ce: u64,
    loss_cwnd: u32,
    round: RoundCounter,
}

impl Dctcp {
    pub fn new(p: Params) -> Self {
        let alpha = p.alpha_on_init.min(MAX_ALPHA);
        Self { p, alpha, old_delivered: 0, old_delivered_ce: 0, loss_cwnd: 0, round: RoundCounter::default() }
    }

    /// α as a real number in [0, 1].
    pub fn alpha(&self) -> f64 {
        self.alpha as f64 / MAX_ALPHA as f64
    }

    fn reset(&mut self, tp: &TcpState) {
        self.round.reset_at(tp.delivered);
        self.old_delivered = tp.delivered;
        self.old_delivered_ce = tp.delivered_ce;
    }

    /// `dctcp_update_alpha`, at the end of each window.
    fn update_alpha(&mut self, tp: &TcpState) {
        let delivered_ce = tp.delivered_ce - self.old_delivered_ce;
        let mut alpha = self.alpha;
        // α ← α − α·g (at least 1 while α > 0, so α can decay to 0).
        let decay = alpha >> self.p.shift_g;
        alpha -= if decay > 0 { decay } else { alpha };
        if delivered_ce > 0 {
            let delivered = (tp.delivered - self.old_delivered).max(1);
            // + g·F, F = delivered_ce / delivered, in ×1024.
            let add = (delivered_ce << (10 - self.p.shift_g)) / delivered;
            alpha = (alpha as u64 + add).min(MAX_ALPHA as u64) as u32;
        }
        self.alpha = alpha;
        self.reset(tp);
    }

    /// `dctcp_react_to_loss`: a real loss halves, as Reno.
    fn react_to_loss(&mut self, tp: &mut TcpState) {
        self.loss_cwnd = tp.cwnd;
        tp.ssthresh = (tp.cwnd >> 1).max(2);
    }
}

impl CongestionControl for Dctcp {
    fn name(&self) -> &'static str {
        "dctcp"
    }

    fn needs_ecn(&self) -> bool {
        true
    }

    fn init(&mut self, tp: &mut TcpState) {
        *self = Self::new(self.p.clone());
        self.reset(tp);
    }

    /// `dctcp_ssthresh`: cwnd·(1 − α/2), at least 2.
    fn ssthresh(&mut self, tp: &mut TcpState) -> u32 {
        self.loss_cwnd = tp.cwnd;
        (tp.cwnd - ((tp.cwnd as u64 * self.alpha as u64) >> 11) as u32).max(2)
    }

    /// `dctcp_update_alpha` runs from Linux's `in_ack_event`, on every ACK.
    fn pkts_acked(&mut self, tp: &mut TcpState, sample: &AckSample) {
        if self.round.update(&sample.rs, tp.delivered) {
            self.update_alpha(tp);
        }
    }

    fn cong_avoid(&mut self, tp: &mut TcpState, sample: &AckSample) {
        reno_cong_avoid(tp, sample.acked_sacked);
    }

    /// `dctcp_state`: entering Recovery (a loss) halves instead of using α.
    fn set_state(&mut self, tp: &mut TcpState, new_state: CaState) {
        if new_state == CaState::Recovery && tp.ca_state != CaState::Recovery {
            self.react_to_loss(tp);
        }
    }

    fn cwnd_event(&mut self, tp: &mut TcpState, event: CaEvent) {
        if event == CaEvent::Loss {
            self.react_to_loss(tp);
        }
    }

    /// `dctcp_cwnd_undo`.
    fn undo_cwnd(&mut self, tp: &mut TcpState) -> u32 {
        tp.cwnd.max(self.loss_cwnd)
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
    fn alpha_is_an_ewma_of_the_marked_fraction() {
        // Windows of 100 delivered packets, driven through the round's bookkeeping.
        let mut c = Dctcp::new(Params::default());
        let mut tp = crate::cc::testing::tcp_state(1448, 100);
        c.reset(&tp);
        let mut window = |c: &mut Dctcp, marked: u64| {
            tp.delivered += 100;
            tp.delivered_ce += marked;
            c.update_alpha(&tp);
            c.alpha
        };
        // No marks: α −= α >> 4 → 1024 − 64 = 960.
        assert_eq!(window(&mut c, 0), 960);
        // F = 1/4: 960 − 60 + (25 << 6)/100 = 900 + 16 = 916 (g·F·1024 = 16).
        assert_eq!(window(&mut c, 25), 916);
        // Steady F = 1/4: the fixed point is α/16 = 16, α = 256 = 0.25·1024.
        for _ in 0..200 {
            window(&mut c, 25);
        }
        assert!((c.alpha as i64 - 256).abs() <= 16, "α {} ×1024 vs F = 0.25", c.alpha);
        // No more marks: α decays to 0 (the decrement is at least 1).
        for _ in 0..200 {
            window(&mut c, 0);
        }
        assert_eq!(c.alpha, 0);
    }

    #[test]
    fn a_marked_window_cuts_cwnd_by_alpha_over_two() {
        // α = 1 initially: the first ECE enters CWR with ssthresh = cwnd − cwnd·1024>>11
        // = cwnd/2. With α = 0 (alpha_on_init 0) the cut is 100·0 >> 11 = 0: the
        // sender enters CWR (and calls ssthresh) before the CCA's per-ACK α update,
        // as Linux's in_ack_event sees delivered_ce without this ACK's marks.
        let mut h = TimelineHarness::new(Box::new(Dctcp::new(Params::default())), 1448, 100).with_rtt(ms(10));
        h.send(100);
        h.advance(ms(10));
        h.ack_ece(1);
        assert_eq!(h.tp().ca_state, CaState::Cwr);
        assert_eq!(h.tp().ssthresh, 50);
        let p = Params { alpha_on_init: 0, ..Params::default() };
        let mut h = TimelineHarness::new(Box::new(Dctcp::new(p)), 1448, 100).with_rtt(ms(10));
        h.send(100);
        h.advance(ms(10));
        h.ack_ece(1);
        assert_eq!(h.tp().ssthresh, 100);
    }

    #[test]
    fn a_loss_halves_the_window() {
        let p = Params { alpha_on_init: 0, ..Params::default() };
        let mut h = TimelineHarness::new(Box::new(Dctcp::new(p)), 1448, 100).with_rtt(ms(10));
        h.loss_at_full_window();
        assert_eq!(h.tp().ssthresh, 50, "react_to_loss overrides the α-based ssthresh");
    }
}
