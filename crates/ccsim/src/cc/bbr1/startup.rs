//! Startup: pace and size cwnd at `high_gain` (2/ln 2) so the sending rate doubles
//! every round, until the bandwidth estimate stops growing. Linux
//! `bbr_check_full_bw_reached`, `bbr_reset_startup_mode`.

use super::{Bbr1, Mode, BBR_SCALE};
use crate::cc::RateSample;

impl Bbr1 {
    /// `bbr_reset_startup_mode`.
    pub(super) fn reset_startup_mode(&mut self) {
        self.mode = Mode::Startup;
    }

    /// `bbr_check_full_bw_reached`: the pipe is deemed full once the max bw grew by
    /// less than `full_bw_thresh` (25%) in each of `full_bw_cnt` (3) consecutive
    /// non-app-limited rounds. Why 3: rwin autotuning grows the window, then we
    /// fill it, then the higher delivery rate samples arrive; transient cross
    /// traffic or radio noise also gets time to go away.
    pub(super) fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let bw_thresh = ((self.full_bw as u128 * self.c.full_bw_thresh as u128) >> BBR_SCALE) as u64;
        if self.max_bw() >= bw_thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= self.c.full_bw_cnt;
    }
}
