//! Drain: pace at `drain_gain` (≈ 1/high_gain) to empty the queue Startup built,
//! typically within one round, then enter ProbeBW. Linux `bbr_check_drain`.

use super::{Bbr1, Mode, BBR_UNIT};
use crate::cc::TcpState;

impl Bbr1 {
    /// `bbr_check_drain`: leave Startup once the pipe is full, and leave Drain once
    /// the packets in the network fit one BDP (plus quantization budget).
    pub(super) fn check_drain(&mut self, tp: &mut TcpState) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain; // drain the queue we created
            tp.ssthresh = self.inflight(tp, self.max_bw(), BBR_UNIT);
        }
        // Fall through: in-flight may already be small enough.
        if self.mode == Mode::Drain {
            let in_net = self.packets_in_net_at_edt(tp, tp.in_flight);
            if in_net <= self.inflight(tp, self.max_bw(), BBR_UNIT) {
                self.reset_probe_bw_mode(tp); // we estimate the queue is drained
            }
        }
    }
}
