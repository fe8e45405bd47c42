//! ProbeRTT and the min-RTT filter. When the min RTT has not been re-measured for
//! `min_rtt_win_sec` (10 s), cap cwnd at `cwnd_min_target` (4 packets) for at least
//! `probe_rtt_mode_ms` (200 ms) and one packet-timed round, draining the queue so
//! the propagation delay shows. 200 ms bounds the throughput cost to about 2%
//! (200 ms / 10 s); flows with natural silences pay nothing, since they refresh
//! the filter opportunistically. Linux `bbr_update_min_rtt`,
//! `bbr_check_probe_rtt_done`.

use super::model::ns_to_us32;
use super::{Bbr1, Mode};
use crate::cc::{RateSample, TcpState};

impl Bbr1 {
    /// `bbr_update_min_rtt`.
    // The min-RTT window is timed in jiffies at the host's HZ, as Linux
    // (`after(tcp_jiffies32, min_rtt_stamp + bbr_min_rtt_win_sec * HZ)`).
    // Deviation: the ProbeRTT hold (`probe_rtt_done_stamp`, 200 ms) is timed in
    // nanoseconds, not rounded to jiffies.
    pub(super) fn update_min_rtt(&mut self, tp: &mut TcpState, rs: &RateSample) {
        let tick = crate::units::NS_PER_SEC / tp.hz.max(1) as u64;
        let win_jiffies = self.c.min_rtt_win / tick;
        let filter_expired = tp.now / tick > (self.min_rtt_stamp / tick).saturating_add(win_jiffies);
        if let Some(rtt) = rs.rtt {
            let rtt_us = ns_to_us32(rtt);
            // Strictly lower, as mainline since v5.10 (commit "tcp: only postpone
            // PROBE_RTT if RTT is < current min_rtt estimate", Nov 2020; the 2016
            // original had `<=`). With `<=`, samples equal to the minimum (usual
            // on a fixed-delay path, or with ms-granular timestamp RTTs during
            // recovery) keep refreshing the stamp and ProbeRTT never happens.
            if rtt_us < self.min_rtt_us || (filter_expired && !rs.is_ack_delayed) {
                self.min_rtt_us = rtt_us;
                self.min_rtt_stamp = tp.now;
            }
        }

        if self.c.probe_rtt_mode > 0
            && filter_expired
            && !self.idle_restart
            && !matches!(self.mode, Mode::ProbeRtt { .. })
        {
            // Dip: drain the queue. Note the cwnd so we can restore it.
            self.mode = Mode::ProbeRtt { done_stamp: None, round_done: false };
            self.save_cwnd(tp);
        }

        if let Mode::ProbeRtt { done_stamp, round_done } = self.mode {
            // Ignore the low-rate samples of this mode: mark the flow app-limited
            // until everything now in flight has been delivered. (`app_limited` is
            // the sender's tcp_rate.c marker; Linux BBR writes it here, so the
            // sender must keep what a CCA writes rather than recompute it.)
            tp.app_limited = (tp.delivered + tp.in_flight as u64).max(1);
            // Hold the minimum inflight for max(probe_rtt_mode_ms, one round).
            match done_stamp {
                None if tp.in_flight <= self.c.cwnd_min_target => {
                    self.mode = Mode::ProbeRtt { done_stamp: Some(tp.now + self.c.probe_rtt_mode), round_done: false };
                    self.round.reset_at(tp.delivered); // start a round now
                }
                Some(stamp) => {
                    let round_done = round_done || self.round_start;
                    self.mode = Mode::ProbeRtt { done_stamp: Some(stamp), round_done };
                    if round_done {
                        self.check_probe_rtt_done(tp);
                    }
                }
                None => {}
            }
        }

        // Restart after idle ends only once we process a new S/ACK for data.
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// `bbr_check_probe_rtt_done`: after the hold time, restore cwnd and resume
    /// (ProbeBW if the pipe was full, else Startup).
    pub(super) fn check_probe_rtt_done(&mut self, tp: &mut TcpState) {
        let Mode::ProbeRtt { done_stamp: Some(stamp), .. } = self.mode else {
            return;
        };
        if tp.now <= stamp {
            return;
        }
        self.min_rtt_stamp = tp.now; // wait a while until the next ProbeRTT
        tp.cwnd = tp.cwnd.max(self.prior_cwnd);
        self.reset_mode(tp);
    }
}
