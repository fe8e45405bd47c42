//! PROBE_RTT: if no RTT sample matched or lowered `probe_rtt_min` for
//! `probe_rtt_win` (5 s), cap cwnd at `probe_rtt_cwnd_gain` x BDP (0.5, v1 used 4
//! packets) so the bottleneck queue drains and the propagation delay can be
//! re-measured. Hold it for max(`probe_rtt_mode_ms` = 200 ms, one round) after
//! in-flight first fits under the cap, then restore cwnd and return to PROBE_BW
//! (CRUISE) — or STARTUP if the pipe was never filled. The expected cost is
//! 0.5 x 0.2 / 5 = 2% of throughput for a flow that is always busy.
//!
//! Reference: `tcp_bbr2.c` `bbr_update_min_rtt` (PROBE_RTT half),
//! `bbr_probe_rtt_cwnd`, `bbr_check_probe_rtt_done`, `bbr2_exit_probe_rtt`.

use super::{AckPhase, Bbr2, Mode};
use crate::cc::{RateSample, TcpState};

impl Bbr2 {
    /// `bbr_probe_rtt_cwnd`: max(cwnd_min_target, BDP x probe_rtt_cwnd_gain).
    pub(super) fn probe_rtt_cwnd(&self) -> u32 {
        if self.cfg.probe_rtt_cwnd_gain == 0 {
            return self.cfg.cwnd_min_target;
        }
        self.cfg.cwnd_min_target.max(self.bdp(self.bw(), self.cfg.probe_rtt_cwnd_gain))
    }

    /// PROBE_RTT half of `bbr_update_min_rtt`: enter when the window expired, hold,
    /// and check for the end.
    pub(super) fn update_probe_rtt(&mut self, tp: &mut TcpState, _rs: &RateSample, probe_rtt_expired: bool) {
        if self.cfg.probe_rtt_mode > 0 && probe_rtt_expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt; // dip, drain queue
            self.save_cwnd(tp); // note cwnd so we can restore it
            self.probe_rtt_done_stamp = None;
            self.ack_phase = AckPhase::ProbeStopping;
            self.next_rtt_delivered = tp.delivered;
        }

        if self.mode != Mode::ProbeRtt {
            return;
        }
        // Ignore low rate samples during this mode: mark the flight app-limited, as
        // the reference does by writing tp->app_limited.
        tp.app_limited = match tp.delivered + tp.in_flight as u64 {
            0 => 1,
            n => n,
        };
        // Maintain the low in-flight for max(200 ms, 1 round).
        match self.probe_rtt_done_stamp {
            None if tp.in_flight <= self.probe_rtt_cwnd() => {
                self.probe_rtt_done_stamp = Some(tp.now + self.cfg.probe_rtt_mode);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = tp.delivered;
            }
            Some(_) => {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(tp);
                }
            }
            None => {}
        }
    }

    /// `bbr_check_probe_rtt_done`.
    pub(super) fn check_probe_rtt_done(&mut self, tp: &mut TcpState) {
        match self.probe_rtt_done_stamp {
            Some(done) if tp.now > done => {}
            _ => return,
        }
        self.probe_rtt_min_stamp = tp.now; // schedule the next PROBE_RTT
        tp.cwnd = tp.cwnd.max(self.prior_cwnd);
        self.exit_probe_rtt(tp);
    }

    /// `bbr2_exit_probe_rtt`: back to bandwidth probing in STARTUP or PROBE_BW.
    fn exit_probe_rtt(&mut self, tp: &mut TcpState) {
        self.reset_lower_bounds();
        if self.full_bw_reached {
            // Raising inflight after PROBE_RTT may cause loss: restart the PROBE_BW
            // clock and schedule the next probe at a randomized friendly time. We
            // know inflight is below BDP, so cruise right away.
            self.start_bw_probe_down(tp);
            self.start_bw_probe_cruise();
        } else {
            self.mode = Mode::Startup;
        }
    }
}
