//! The congestion window: slow-start toward cwnd_gain × BDP (+ the ACK-aggregation
//! allowance and quantization budget), snap down to it once the pipe is full, keep
//! packet conservation during the first round of recovery, and restore the saved
//! cwnd afterwards. Linux `bbr_set_cwnd`, `bbr_set_cwnd_to_recover_or_restore`,
//! `bbr_save_cwnd`.

use super::{Bbr1, Mode, TCP_INIT_CWND};
use crate::cc::{CaState, RateSample, TcpState};

impl Bbr1 {
    /// `bbr_save_cwnd`: remember the last known good cwnd, to restore it after
    /// loss recovery or ProbeRTT (which cut it temporarily).
    pub(super) fn save_cwnd(&mut self, tp: &TcpState) {
        if self.prev_ca_state < CaState::Recovery && !matches!(self.mode, Mode::ProbeRtt { .. }) {
            self.prior_cwnd = tp.cwnd; // this cwnd is good enough
        } else {
            // Loss recovery or ProbeRTT have temporarily cut cwnd.
            self.prior_cwnd = self.prior_cwnd.max(tp.cwnd);
        }
    }

    /// `bbr_set_cwnd_to_recover_or_restore`. An ACK for P packets should release
    /// at most 2P: first deduct the newly lost packets here, then `set_cwnd`
    /// slow-starts up toward the target. The first round of Recovery follows
    /// packet conservation (send P per P acked); on leaving recovery the cwnd saved
    /// at its start comes back. Returns (conserving packets?, new cwnd).
    fn set_cwnd_to_recover_or_restore(&mut self, tp: &mut TcpState, rs: &RateSample, acked: u32) -> (bool, u32) {
        let prev_state = self.prev_ca_state;
        let state = tp.ca_state;
        let mut cwnd = tp.cwnd;

        if rs.losses > 0 {
            cwnd = (cwnd as i64 - rs.losses as i64).max(1) as u32;
        }

        if state == CaState::Recovery && prev_state != CaState::Recovery {
            // Starting the first round of Recovery: packet conservation.
            self.packet_conservation = true;
            self.round.reset_at(tp.delivered); // start a round now
                                               // Cut unused cwnd from app behaviour, TSQ or TSO deferral.
            cwnd = tp.in_flight + acked;
        } else if prev_state >= CaState::Recovery && state < CaState::Recovery {
            // Exiting loss recovery: restore the cwnd saved before it.
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;

        if self.packet_conservation {
            return (true, cwnd.max(tp.in_flight + acked));
        }
        (false, cwnd)
    }

    /// `bbr_set_cwnd`: slow-start toward the target (if the bw estimate is growing,
    /// or loss drew cwnd below it), or snap down to it once the pipe is full.
    pub(super) fn set_cwnd(&mut self, tp: &mut TcpState, rs: &RateSample, acked: u32, bw: u64, gain: u32) {
        let mut cwnd = tp.cwnd;
        'done: {
            if acked == 0 {
                break 'done; // nothing newly delivered: just apply the caps
            }
            let (conserving, c) = self.set_cwnd_to_recover_or_restore(tp, rs, acked);
            cwnd = c;
            if conserving {
                break 'done;
            }

            let mut target = self.bdp(bw, gain);
            // Excess data ACKed that seems due to aggregation (of data and/or ACKs).
            target = target.saturating_add(self.ack_aggregation_cwnd());
            target = self.quantization_budget(tp, target);

            if self.full_bw_reached {
                // Only cut cwnd once the pipe has been filled.
                cwnd = cwnd.saturating_add(acked).min(target);
            } else if cwnd < target || tp.delivered < TCP_INIT_CWND as u64 {
                cwnd = cwnd.saturating_add(acked);
            }
            cwnd = cwnd.max(self.c.cwnd_min_target);
        }
        tp.cwnd = cwnd.min(tp.cwnd_clamp); // the global cap
        if matches!(self.mode, Mode::ProbeRtt { .. }) {
            tp.cwnd = tp.cwnd.min(self.c.cwnd_min_target); // drain queue, refresh min_rtt
        }
    }
}
