//! Reno (NewReno with SACK): the standard AIMD window of RFC 5681, with the loss
//! response and recovery (RFC 6675, PRR) supplied by the sender.
//!
//! Reference: Linux `net/ipv4/tcp_cong.c` (`tcp_reno_cong_avoid`, `tcp_reno_ssthresh`,
//! `tcp_reno_undo_cwnd`). Slow start grows cwnd by every delivered packet (ABC with
//! no limit, as Linux); congestion avoidance adds one packet per cwnd of delivered
//! packets; a loss halves the window (ssthresh = max(cwnd/2, 2)).

use serde::{Deserialize, Serialize};

use super::common::classic::{cong_avoid_ai, reno_ssthresh, slow_start};
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
        let mut acked = sample.acked_sacked;
        if tp.in_slow_start() {
            acked = slow_start(tp, acked);
            if acked == 0 {
                return;
            }
        }
        let w = tp.cwnd;
        cong_avoid_ai(tp, w, acked);
    }

    fn metrics(&self, tp: &TcpState) -> CcMetrics {
        CcMetrics { state: if tp.in_slow_start() { "slow_start" } else { "cong_avoid" }, ..Default::default() }
    }
}
