//! PLACEHOLDER — being replaced by the full Linux tcp_cubic.c model (helper task).
//! Until then it behaves like Reno so the crate builds.

use serde::{Deserialize, Serialize};

use super::common::classic::{cong_avoid_ai, slow_start};
use super::registry::{describe_params, parse_params, CcaInfo};
use super::{AckSample, BoxedCca, CongestionControl, TcpState};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {}

#[derive(Debug, Clone, Default)]
pub struct Cubic;

pub const INFO: CcaInfo = CcaInfo {
    name: "cubic",
    summary: "CUBIC (placeholder)",
    reference: "RFC 9438; Linux net/ipv4/tcp_cubic.c",
    params: || describe_params::<Params>(&[]),
    build: |v| {
        let _: Params = parse_params("cubic", v)?;
        Ok(Box::new(Cubic) as BoxedCca)
    },
};

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }
    fn ssthresh(&mut self, tp: &mut TcpState) -> u32 {
        ((tp.cwnd as u64 * 717 / 1024) as u32).max(2)
    }
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
}
