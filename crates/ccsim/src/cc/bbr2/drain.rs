//! DRAIN: pace at `drain_gain` (1/2.885) to empty the queue Startup built, until the
//! packets in the network fall to the estimated BDP (plus quantization budget), then
//! start PROBE_BW in its DOWN phase.
//!
//! Reference: `bbr_check_drain` + `bbr2_check_drain` (v2alpha), `bbr_check_drain` (v3).

use super::{Bbr2, Mode, BBR_UNIT};
use crate::cc::TcpState;

impl Bbr2 {
    /// `bbr2_check_drain`: enter DRAIN once the pipe is full; leave it when
    /// in-flight <= BDP.
    pub(super) fn check_drain(&mut self, tp: &mut TcpState) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            // ssthresh is unused by BBR; the reference sets it to signal (e.g. to
            // `ss`) that Startup is over.
            tp.ssthresh = self.inflight(tp, self.max_bw(), BBR_UNIT);
            self.reset_congestion_signals();
        } // fall through: in-flight may already be small
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(tp, tp.in_flight) <= self.inflight(tp, self.max_bw(), BBR_UNIT)
        {
            self.mode = Mode::ProbeBw(super::Phase::Down);
            self.start_bw_probe_down(tp);
        }
    }
}
