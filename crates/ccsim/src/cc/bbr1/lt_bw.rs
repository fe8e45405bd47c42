//! Long-term ("LT") bandwidth: detecting token-bucket policers (see "An
//! Internet-Wide Analysis of Traffic Policing", SIGCOMM 2016). Two consecutive
//! sampling intervals of 4–16 rounds, each ending in a loss, with high loss
//! (≥ `lt_loss_thresh`) and consistent delivery rates (within 1/8 or 4 kbit/s)
//! mean we are policed: BBR then uses their average rate as its bw, at gain 1, for
//! `lt_bw_max_rtts` (48) rounds before probing again. Sampling starts at the first
//! loss so that the policer's token bucket is already exhausted. Linux
//! `bbr_lt_bw_sampling`, `bbr_lt_bw_interval_done`, `bbr_reset_lt_bw_sampling*`.

use super::{Bbr1, Mode, BBR_SCALE, BBR_UNIT, BW_UNIT};
use crate::cc::{RateSample, TcpState};
use crate::units::NS_PER_MS;

/// Two intervals whose bw differ by at most this fraction (1/8, in BBR_UNIT) are
/// consistent (`bbr_lt_bw_ratio`).
const LT_BW_RATIO: u64 = BBR_UNIT as u64 / 8;
/// ... or by at most this many bytes/s: 4 kbit/s (`bbr_lt_bw_diff`).
const LT_BW_DIFF: u64 = 4000 / 8;
/// An interval longer than this many times `lt_intvl_min_rtts` is abandoned.
const LT_INTVL_MAX_FACTOR: u32 = 4;
/// Microseconds per millisecond; the interval is timed in whole ms as in Linux.
const USEC_PER_MSEC: u64 = 1_000;

/// Long-term sampling state (the `lt_*` fields of Linux `struct bbr`).
#[derive(Debug, Clone, Default)]
pub(super) struct LtBw {
    /// Taking samples now (`lt_is_sampling`).
    pub(super) is_sampling: bool,
    /// Rounds in this interval, or rounds spent using `bw` (`lt_rtt_cnt`).
    pub(super) rtt_cnt: u32,
    /// Use `bw` as the estimate (`lt_use_bw`).
    pub(super) use_bw: bool,
    /// The long-term delivery rate, packets/µs << BW_SCALE (`lt_bw`).
    pub(super) bw: u64,
    /// `tp.delivered` at the interval start (`lt_last_delivered`).
    last_delivered: u64,
    /// `delivered_time` at the interval start, in whole ms (`lt_last_stamp`).
    last_stamp_ms: u64,
    /// `tp.lost` at the interval start (`lt_last_lost`).
    last_lost: u64,
}

impl Bbr1 {
    /// `bbr_reset_lt_bw_sampling_interval`: start a new interval.
    fn reset_lt_bw_sampling_interval(&mut self, tp: &TcpState) {
        self.lt.last_stamp_ms = tp.delivered_time / NS_PER_MS;
        self.lt.last_delivered = tp.delivered;
        self.lt.last_lost = tp.lost;
        self.lt.rtt_cnt = 0;
    }

    /// `bbr_reset_lt_bw_sampling`: forget everything.
    pub(super) fn reset_lt_bw_sampling(&mut self, tp: &TcpState) {
        self.lt.bw = 0;
        self.lt.use_bw = false;
        self.lt.is_sampling = false;
        self.reset_lt_bw_sampling_interval(tp);
    }

    /// `bbr_lt_bw_interval_done`: an interval ended with rate `bw`. If it agrees
    /// with the previous interval's, estimate we are policed.
    fn lt_bw_interval_done(&mut self, tp: &TcpState, bw: u64) {
        if self.lt.bw != 0 {
            let diff = bw.abs_diff(self.lt.bw);
            if diff * BBR_UNIT as u64 <= LT_BW_RATIO * self.lt.bw
                || self.rate_bytes_per_sec(tp.mss, diff, BBR_UNIT) <= LT_BW_DIFF
            {
                // All criteria are met: average the two intervals and pace there.
                self.lt.bw = (bw + self.lt.bw) >> 1;
                self.lt.use_bw = true;
                self.pacing_gain = BBR_UNIT; // try to avoid drops
                self.lt.rtt_cnt = 0;
                return;
            }
        }
        self.lt.bw = bw;
        self.reset_lt_bw_sampling_interval(tp);
    }

    /// `bbr_lt_bw_sampling`.
    pub(super) fn lt_bw_sampling(&mut self, tp: &mut TcpState, rs: &RateSample) {
        if self.lt.use_bw {
            // Already using the policed rate: for lt_bw_max_rtts rounds of ProbeBW.
            if matches!(self.mode, Mode::ProbeBw { .. }) && self.round_start {
                self.lt.rtt_cnt += 1;
                if self.lt.rtt_cnt >= self.c.lt_bw_max_rtts {
                    self.reset_lt_bw_sampling(tp); // stop using lt_bw
                    self.reset_probe_bw_mode(tp); // restart gain cycling
                }
            }
            return;
        }

        // Wait for the first loss, so the policer has exhausted its tokens:
        // earlier samples include bursts that overestimate the policed rate.
        if !self.lt.is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval(tp);
            self.lt.is_sampling = true;
        }

        // To avoid underestimates, restart if we run out of data.
        if rs.is_app_limited {
            self.reset_lt_bw_sampling(tp);
            return;
        }

        if self.round_start {
            self.lt.rtt_cnt += 1; // count rounds in this interval
        }
        if self.lt.rtt_cnt < self.c.lt_intvl_min_rtts {
            return; // the interval needs to be longer
        }
        if self.lt.rtt_cnt > LT_INTVL_MAX_FACTOR * self.c.lt_intvl_min_rtts {
            self.reset_lt_bw_sampling(tp); // interval is too long
            return;
        }

        // End the interval at a loss, when the tokens are surely exhausted;
        // stopping earlier underestimates the policed rate.
        if rs.losses == 0 {
            return;
        }

        // Is the loss rate lost/delivered at least lt_loss_thresh? If not, wait.
        let lost = tp.lost - self.lt.last_lost;
        let delivered = tp.delivered - self.lt.last_delivered;
        if delivered == 0 || (lost << BBR_SCALE) < self.c.lt_loss_thresh as u64 * delivered {
            return;
        }

        // Average delivery rate over the interval, timed in whole ms as Linux.
        let t_ms = (tp.delivered_time / NS_PER_MS) as i64 - self.lt.last_stamp_ms as i64;
        if t_ms < 1 {
            return; // less than one ms: wait
        }
        // Linux resets when t × 1000 would overflow its u32.
        if t_ms as u64 >= u32::MAX as u64 / USEC_PER_MSEC {
            self.reset_lt_bw_sampling(tp);
            return;
        }
        let t_us = t_ms as u64 * USEC_PER_MSEC;
        let bw = delivered * BW_UNIT / t_us;
        self.lt_bw_interval_done(tp, bw);
    }
}
