//! Reno (NewReno with SACK): the standard AIMD window of RFC 5681, with the loss
//! response and recovery (RFC 6675, PRR) supplied by the sender.
//!
//! Reference: Linux `net/ipv4/tcp_cong.c` (`tcp_reno_cong_avoid`, `tcp_reno_ssthresh`,
//! `tcp_reno_undo_cwnd`). Slow start grows cwnd by every delivered packet (ABC with
//! no limit, as Linux); congestion avoidance adds one packet per cwnd of delivered
//! packets; a loss halves the window (ssthresh = max(cwnd/2, 2)).

use serde::{Deserialize, Serialize};

use super::common::classic::{phase, reno_cong_avoid, reno_ssthresh};
use super::registry::{describe_params, parse_params, CcaInfo};
use super::{AckSample, BoxedCca, CcMetrics, CongestionControl, TcpState};

/// Reno has no tunables in Linux; the struct exists so specs can be validated the
/// same way for every CCA.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {}

#[derive(Debug, Clone, Default)]
pub struct Reno;

pub const INFO: CcaInfo = CcaInfo {
    name: "reno",
    family: "loss",
    summary: "Reno/NewReno AIMD with SACK (Linux tcp_cong.c)",
    reference: "RFC 5681, RFC 6582; Linux net/ipv4/tcp_cong.c",
    params: || describe_params::<Params>(&[]),
    build: |v| {
        let _: Params = parse_params("reno", v)?;
        Ok(Box::new(Reno) as BoxedCca)
    },
};

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }

    fn ssthresh(&mut self, tp: &mut TcpState) -> u32 {
        reno_ssthresh(tp)
    }

    /// `tcp_reno_cong_avoid`. The sender only calls this when cwnd-limited.
    fn cong_avoid(&mut self, tp: &mut TcpState, sample: &AckSample) {
        reno_cong_avoid(tp, sample.acked_sacked);
    }

    fn metrics(&self, tp: &TcpState) -> CcMetrics {
        CcMetrics { state: phase(tp), ..Default::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testing::TimelineHarness;
    use crate::cc::CaState;
    use crate::units::ms;

    fn reno(initial_cwnd: u32) -> TimelineHarness {
        TimelineHarness::new(Box::new(Reno), 1448, initial_cwnd).with_rtt(ms(50))
    }

    #[test]
    fn cong_avoid_slow_start_doubles_per_round() {
        let mut h = reno(10);
        for expect in [20, 40, 80, 160] {
            h.run_rounds(1);
            assert_eq!(h.tp().cwnd, expect);
        }
        assert_eq!(h.cca().metrics(h.tp()).state, "slow_start");
    }

    #[test]
    fn cong_avoid_adds_one_packet_per_round() {
        let mut h = reno(20);
        h.tp_mut().ssthresh = 20;
        for round in 1..=10 {
            h.run_rounds(1);
            assert_eq!(h.tp().cwnd, 20 + round, "round {round}");
        }
        assert_eq!(h.cca().metrics(h.tp()).state, "cong_avoid");
    }

    #[test]
    fn ssthresh_on_loss_halves_window() {
        let mut h = reno(10);
        h.run_rounds(2);
        assert_eq!(h.tp().cwnd, 40);
        h.lose(1);
        assert_eq!(h.tp().ca_state, CaState::Recovery);
        assert_eq!(h.tp().prior_cwnd, 40);
        assert_eq!(h.tp().ssthresh, 20);
        h.end_recovery();
        assert_eq!(h.tp().cwnd, 20);
        assert_eq!(h.tp().ca_state, CaState::Open);
    }

    #[test]
    fn recovery_prr_ends_at_ssthresh_when_window_is_acked() {
        // Through the path: PRR spreads the reduction over the round, recovery ends
        // once everything sent before the loss is ACKed, then linear growth resumes.
        let mut h = reno(10);
        h.run_rounds(2);
        let cwnd = h.tp().cwnd;
        h.lose(2);
        let mut rounds = 0;
        while h.tp().ca_state == CaState::Recovery {
            h.run_rounds(1);
            rounds += 1;
            assert!(rounds <= 3, "recovery should end within a few rounds");
        }
        assert_eq!(h.tp().ssthresh, cwnd / 2);
        assert!(h.tp().cwnd >= cwnd / 2 && h.tp().cwnd <= cwnd / 2 + 1, "cwnd {} after recovery", h.tp().cwnd);
        assert_eq!(h.lost_out(), 0, "lost segments were retransmitted");
        assert!(h.violations().is_empty(), "{:?}", h.violations());
    }

    #[test]
    fn undo_cwnd_restores_window_after_spurious_loss() {
        let mut h = reno(10);
        h.run_rounds(2);
        h.lose(1);
        h.end_recovery();
        h.lose(1);
        h.undo();
        assert_eq!(h.tp().cwnd, 20, "max(cwnd, prior_cwnd) of the second reduction");
        assert_eq!(h.tp().ca_state, CaState::Open);
    }

    #[test]
    fn rto_collapses_window_and_slow_starts_to_half() {
        let mut h = reno(10);
        h.run_rounds(2);
        h.rto();
        assert_eq!(h.tp().cwnd, 1);
        assert_eq!(h.tp().ssthresh, 20);
        assert_eq!(h.tp().ca_state, CaState::Loss);
        while h.tp().ca_state == CaState::Loss {
            h.run_rounds(1);
        }
        assert!(h.tp().cwnd >= 2 && h.tp().cwnd <= 21, "cwnd {}", h.tp().cwnd);
    }
}
