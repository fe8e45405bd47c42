//! ProbeBW: cruise at the estimated bandwidth while cycling the pacing gain to
//! discover more bandwidth and to share it: one phase at 5/4 (probe), one at 3/4
//! (drain what the probe queued), six at 1. Each phase lasts about one min RTT.
//! Linux `bbr_update_cycle_phase`, `bbr_is_next_cycle_phase`,
//! `bbr_advance_cycle_phase`, `bbr_reset_probe_bw_mode`.

use rand::Rng;

use super::model::stamp_us_delta;
use super::{Bbr1, Mode, BBR_UNIT};
use crate::cc::{RateSample, TcpState};

/// Phases in the pacing-gain cycle (`CYCLE_LEN`): one up, one down, six cruising,
/// so that a flow probes about once every 8 min RTTs.
pub(super) const CYCLE_LEN: usize = 8;
/// The starting phase is drawn among this many (`bbr_cycle_rand`): every phase but
/// the 3/4 one, since draining right after Startup/Drain would waste bandwidth.
const CYCLE_RAND: usize = 7;

impl Bbr1 {
    /// `bbr_update_cycle_phase`.
    pub(super) fn update_cycle_phase(&mut self, tp: &TcpState, rs: &RateSample) {
        if matches!(self.mode, Mode::ProbeBw { .. }) && self.is_next_cycle_phase(tp, rs) {
            self.advance_cycle_phase(tp);
        }
    }

    /// `bbr_is_next_cycle_phase`: end the phase when it has lasted a min RTT and/or
    /// reached its inflight target.
    fn is_next_cycle_phase(&self, tp: &TcpState, rs: &RateSample) -> bool {
        let Mode::ProbeBw { cycle_stamp, .. } = self.mode else {
            return false;
        };
        let is_full_length = stamp_us_delta(tp.delivered_time, cycle_stamp) > self.min_rtt_us as u64;

        // At gain 1.0 pace at the estimate and just use wall-clock time.
        if self.pacing_gain == BBR_UNIT {
            return is_full_length;
        }

        let inflight = self.packets_in_net_at_edt(tp, rs.prior_in_flight);
        let bw = self.max_bw();

        // Gain > 1 probes by raising inflight to at least gain × BDP; that may take
        // more than a min RTT on small-RTT paths. Do not persist if packets are
        // lost: a path with small buffers may not hold that much.
        if self.pacing_gain > BBR_UNIT {
            return is_full_length && (rs.losses > 0 || inflight >= self.inflight(tp, bw, self.pacing_gain));
        }

        // Gain < 1 drains the queue the probe may have added; once inflight is down
        // to the BDP the queue is gone and persisting would underutilize the pipe.
        is_full_length || inflight <= self.inflight(tp, bw, BBR_UNIT)
    }

    /// `bbr_advance_cycle_phase`.
    fn advance_cycle_phase(&mut self, tp: &TcpState) {
        if let Mode::ProbeBw { cycle_idx, .. } = self.mode {
            self.mode = Mode::ProbeBw { cycle_idx: (cycle_idx + 1) % CYCLE_LEN, cycle_stamp: tp.delivered_time };
        }
    }

    /// `bbr_reset_probe_bw_mode`: enter ProbeBW at a random phase other than the
    /// 3/4 one (index drawn in 1..=7, then advanced by one: never 1).
    pub(super) fn reset_probe_bw_mode(&mut self, tp: &mut TcpState) {
        let r = tp.rng.gen_range(0..CYCLE_RAND);
        self.mode = Mode::ProbeBw { cycle_idx: CYCLE_LEN - 1 - r, cycle_stamp: tp.delivered_time };
        self.advance_cycle_phase(tp); // flip to the next phase of the gain cycle
    }
}
