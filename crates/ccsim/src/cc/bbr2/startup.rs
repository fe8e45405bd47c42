//! STARTUP: grow the sending rate by `startup_pacing_gain` per round until the pipe
//! looks full, judged three ways:
//!
//! 1. bandwidth plateau — 3 rounds without 25% growth (`bbr_check_full_bw_reached`);
//! 2. loss — at the end of a Recovery round with >= `full_loss_cnt` loss-marking
//!    events and a loss rate above `loss_thresh` (`bbr2_check_loss_too_high_in_startup`);
//! 3. ECN — `full_ecn_cnt` consecutive rounds with a CE ratio >= `ecn_thresh`
//!    (`bbr2_check_ecn_too_high_in_startup`).
//!
//! Exits 2 and 3 also set `inflight_hi`, since they measured the path's volume.
//!
//! v3 differences: the plateau detector compares each ACK's bandwidth sample (not
//! the max filter), resets on any sample with 25% growth, keeps running after
//! Startup (it ends PROBE_UP: `full_bw_now`); the loss exit needs 6 events (v2 8);
//! and the queue-too-high exit sets `inflight_hi = max(BDP, inflight_latest)`.

use super::{Bbr2, Bw, BBR_SCALE, BBR_UNIT};
use crate::cc::{CaState, RateSample, TcpState};

impl Bbr2 {
    /// `bbr_reset_full_bw` (v3; v2 resets full_bw/full_bw_cnt by hand).
    pub(super) fn reset_full_bw(&mut self) {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.full_bw_now = false;
    }

    /// `bbr_check_full_bw_reached`: estimate whether the pipe is full from the
    /// change in delivery rate. Why 3 rounds: 1 for receive-window autotuning to
    /// grow rwin, 1 to fill it, 1 to see the higher delivery rate samples.
    pub(super) fn check_full_bw_reached(&mut self, rs: &RateSample, sample_bw: Bw) {
        if self.v3() {
            // v3: any ACK whose sample grew 25% restarts the count; counting is
            // per round; the detector also serves PROBE_UP (full_bw_now).
            if self.full_bw_now || rs.is_app_limited {
                return;
            }
            let bw_thresh = ((self.full_bw as u128 * self.cfg.full_bw_thresh as u128) >> BBR_SCALE) as Bw;
            if sample_bw >= bw_thresh {
                self.reset_full_bw();
                self.full_bw = sample_bw;
                return;
            }
            if !self.round_start {
                return;
            }
            self.full_bw_cnt = (self.full_bw_cnt + 1).min(3);
            self.full_bw_now = self.full_bw_cnt >= self.cfg.full_bw_cnt;
            self.full_bw_reached |= self.full_bw_now;
        } else {
            if self.full_bw_reached || !self.round_start || rs.is_app_limited {
                return;
            }
            let bw_thresh = ((self.full_bw as u128 * self.cfg.full_bw_thresh as u128) >> BBR_SCALE) as Bw;
            if self.max_bw() >= bw_thresh {
                self.full_bw = self.max_bw();
                self.full_bw_cnt = 0;
                return;
            }
            // The reference keeps this count in 2 bits.
            self.full_bw_cnt = (self.full_bw_cnt + 1).min(3);
            self.full_bw_reached = self.full_bw_cnt >= self.cfg.full_bw_cnt;
        }
    }

    /// `bbr2_handle_queue_too_high_in_startup`: loss or ECN says Startup overfilled
    /// the path; the pipe is full and its volume is an upper bound.
    pub(super) fn handle_queue_too_high_in_startup(&mut self, tp: &TcpState) {
        self.full_bw_reached = true;
        let bdp = self.inflight(tp, self.max_bw(), BBR_UNIT);
        // v3: also at least the volume delivered in the latest round.
        self.inflight_hi = if self.v3() { bdp.max(self.inflight_latest) } else { bdp };
    }

    /// `bbr2_check_loss_too_high_in_startup`: check the loss rate at the end of each
    /// round of a Recovery episode in Startup, to filter out noisy or low loss and
    /// to know the extent of the loss before draining.
    pub(super) fn check_loss_too_high_in_startup(&mut self, tp: &TcpState, rs: &RateSample) {
        if self.full_bw_reached {
            return;
        }
        if rs.losses > 0 && self.loss_events_in_round < 0xF {
            self.loss_events_in_round += 1; // saturating 4-bit counter
        }
        if self.cfg.full_loss_cnt > 0
            && self.loss_round_start
            && tp.ca_state == CaState::Recovery
            && self.loss_events_in_round >= self.cfg.full_loss_cnt
            && self.is_inflight_too_high(rs)
        {
            self.handle_queue_too_high_in_startup(tp);
            return;
        }
        if self.loss_round_start {
            self.loss_events_in_round = 0;
        }
    }

    /// `bbr2_check_ecn_too_high_in_startup`: exit after `full_ecn_cnt` consecutive
    /// rounds with CE ratio >= `ecn_thresh`.
    pub(super) fn check_ecn_too_high_in_startup(&mut self, tp: &TcpState, ce_ratio: u32) {
        if self.full_bw_reached || !self.ecn_eligible || self.cfg.full_ecn_cnt == 0 || self.cfg.ecn_thresh == 0 {
            return;
        }
        if ce_ratio >= self.cfg.ecn_thresh {
            self.startup_ecn_rounds = (self.startup_ecn_rounds + 1).min(3); // 2-bit field
        } else {
            self.startup_ecn_rounds = 0;
        }
        if self.startup_ecn_rounds >= self.cfg.full_ecn_cnt {
            self.handle_queue_too_high_in_startup(tp);
        }
    }
}
