//! HighSpeed TCP (RFC 3649): Reno below 38 packets; above, the additive increase
//! a(w) grows and the multiplicative decrease b(w) shrinks with the window, after
//! the response function w = 0.12 / p^0.835, so a single flow can fill a 10 Gbit/s
//! path at realistic loss rates while staying Reno-fair at small windows.
//!
//! Per ACK in congestion avoidance cwnd grows by a(w)/cwnd; on loss it becomes
//! (1 − b(w))·cwnd. a(w) and b(w) are read from RFC 3649 Appendix B's table, as
//! Linux does: the table entry `i` is the first whose window bound is ≥ cwnd, and
//! then a(w) = i + 1 and b(w) = md[i] / 256.
//!
//! References: S. Floyd, RFC 3649 "HighSpeed TCP for Large Congestion Windows"
//! (2003), Appendix B; Linux `net/ipv4/tcp_highspeed.c`.
//!
//! Parameters: none (Linux has no module parameters; the table is the RFC's).
//! Linux also caps `cwnd_clamp` at 2³²/128 so `cwnd · md` cannot overflow; here
//! the product is computed in u64, so no cap is needed.

use serde::{Deserialize, Serialize};

use super::common::classic::{phase, slow_start};
use super::registry::{describe_params, parse_params, CcaInfo};
use super::{AckSample, BoxedCca, CcMetrics, CongestionControl, TcpState};

/// RFC 3649 Appendix B, as in `tcp_highspeed.c`: (upper window bound of the row,
/// b(w) scaled by 256). Row `i` applies for `bound[i−1] < cwnd ≤ bound[i]` and has
/// a(w) = i + 1. The first row (w ≤ 38, a = 1, b = 0.5) is Reno.
const AIMD: [(u32, u32); 72] = [
    (38, 128), (118, 112), (221, 104), (347, 98), (495, 93), (663, 89), (851, 86), (1058, 83),
    (1284, 81), (1529, 78), (1793, 76), (2076, 74), (2378, 72), (2699, 71), (3039, 69), (3399, 68),
    (3778, 66), (4177, 65), (4596, 64), (5036, 62), (5497, 61), (5979, 60), (6483, 59), (7009, 58),
    (7558, 57), (8130, 56), (8726, 55), (9346, 54), (9991, 53), (10661, 52), (11358, 52), (12082, 51),
    (12834, 50), (13614, 49), (14424, 48), (15265, 48), (16137, 47), (17042, 46), (17981, 45), (18955, 45),
    (19965, 44), (21013, 43), (22101, 43), (23230, 42), (24402, 41), (25618, 41), (26881, 40), (28193, 39),
    (29557, 39), (30975, 38), (32450, 38), (33986, 37), (35586, 36), (37253, 36), (38992, 35), (40808, 35),
    (42707, 34), (44694, 33), (46776, 33), (48961, 32), (51258, 32), (53677, 31), (56230, 30), (58932, 30),
    (61799, 29), (64851, 28), (68113, 28), (71617, 27), (75401, 26), (79517, 26), (84035, 25), (89053, 24),
];
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {}

pub const INFO: CcaInfo = CcaInfo {
    name: "highspeed",
    family: "loss/high-speed",
    summary: "HighSpeed TCP: a(w), b(w) from the RFC 3649 table (Linux tcp_highspeed.c)",
    reference: "RFC 3649 (Appendix B); Linux net/ipv4/tcp_highspeed.c",
    params: || describe_params::<Params>(&[]),
    build: |v| {
        let _: Params = parse_params("highspeed", v)?;
        Ok(Box::new(HighSpeed::default()) as BoxedCca)
    },
};

/// `struct hstcp`: the current table row.
#[derive(Debug, Clone, Default)]
pub struct HighSpeed {
    ai: usize,
}

impl HighSpeed {
    /// a(w) and b(w) (×256) of the current row.
    pub fn aimd(&self) -> (u32, u32) {
        (self.ai as u32 + 1, AIMD[self.ai].1)
    }

    /// Move `ai` to the row containing `cwnd`.
    fn update_row(&mut self, cwnd: u32) {
        while self.ai < AIMD.len() - 1 && cwnd > AIMD[self.ai].0 {
            self.ai += 1;
        }
        while self.ai > 0 && cwnd <= AIMD[self.ai - 1].0 {
            self.ai -= 1;
        }
    }
}

impl CongestionControl for HighSpeed {
    fn name(&self) -> &'static str {
        "highspeed"
    }

    /// `hstcp_ssthresh`: cwnd − cwnd·b(w), at least 2.
    fn ssthresh(&mut self, tp: &mut TcpState) -> u32 {
        let md = AIMD[self.ai].1 as u64;
        let cut = (tp.cwnd as u64 * md) >> 8;
        (tp.cwnd - cut as u32).max(2)
    }

    /// `hstcp_cong_avoid`: per ACK, cwnd_cnt += a(w); +1 packet per cwnd counted.
    fn cong_avoid(&mut self, tp: &mut TcpState, sample: &AckSample) {
        if tp.in_slow_start() {
            slow_start(tp, sample.acked_sacked);
            return;
        }
        self.update_row(tp.cwnd);
        if tp.cwnd < tp.cwnd_clamp {
            // Linux adds a(w) once per ACK, whatever it acknowledges.
            tp.cwnd_cnt += self.ai as u32 + 1;
            if tp.cwnd_cnt >= tp.cwnd {
                tp.cwnd_cnt -= tp.cwnd;
                tp.cwnd += 1;
            }
        }
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

    fn hs(cwnd: u32) -> TimelineHarness {
        let mut h = TimelineHarness::new(Box::new(HighSpeed::default()), 1448, cwnd).with_rtt(ms(50));
        h.tp_mut().ssthresh = cwnd;
        h
    }

    #[test]
    fn a_and_b_at_table_points() {
        // RFC 3649 Appendix B: w=38 → a=1, b=0.5; w=39..118 → a=2, b=0.44;
        // w=1058 → a=8, b=0.33 (83/256 = 0.324); w=84035 → a=71, b=25/256 = 0.098.
        let mut c = HighSpeed::default();
        for (w, a, b) in [(38, 1, 128), (39, 2, 112), (118, 2, 112), (1058, 8, 83), (84035, 71, 25), (10, 1, 128)] {
            c.update_row(w);
            assert_eq!(c.aimd(), (a, b), "w = {w}");
        }
    }

    #[test]
    fn reno_below_38_packets() {
        // a = 1: +1 per round; b = 0.5 on loss.
        let mut h = hs(20);
        h.run_rounds(3);
        assert_eq!(h.tp().cwnd, 23);
        h.loss_at_full_window();
        assert_eq!(h.tp().ssthresh, 12, "23 − (23·128 >> 8) = 23 − 11");
    }

    #[test]
    fn cong_avoid_adds_a_w_packets_per_round() {
        // cwnd 1058 is in row 7 (851 < w ≤ 1058): a = 8. One round of 1058 ACKs adds
        // 8 per ACK = 8464 to cwnd_cnt → +8 packets (the counter is compared to the
        // growing cwnd, which costs a fraction of a packet at most).
        let mut h = hs(1058);
        h.run_rounds(1);
        assert_eq!(h.tp().cwnd, 1066);
    }

    #[test]
    fn loss_at_large_window_cuts_b_w() {
        // cwnd 1058: b = 83/256 → cut = 1058·83 >> 8 = 343 → ssthresh 715.
        let mut h = hs(1058);
        h.fill_window();
        h.advance(ms(50));
        h.ack(1); // one cwnd-limited ACK in congestion avoidance selects the row for cwnd 1058
        assert_eq!(h.tp().cwnd, 1058);
        h.loss_at_full_window();
        assert_eq!(h.tp().ssthresh, 715);
    }
}
