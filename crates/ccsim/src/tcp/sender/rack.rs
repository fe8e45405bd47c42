//! RACK loss detection (RFC 8985, Linux `tcp_recovery.c`): the most recently
//! delivered transmission, the reordering window, loss marking and the
//! reordering timer.

use super::scoreboard::{Seg, EVER_RETRANS, NONE};
use super::timers::{XmitTimer, TIMEOUT_MIN};
use super::Sender;
use crate::cc::CaState;
use crate::units::Time;

/// Linux default `tcp_reordering`: SACKed segments that make RACK drop its window.
const REORDERING: u32 = 3;

impl Sender {
    /// `tcp_rack_advance`.
    pub(super) fn rack_advance(&mut self, now: Time, seg: u64, s: &Seg) {
        let rtt = now.saturating_sub(s.xmit_time);
        if s.is(EVER_RETRANS) && rtt < self.rtt.min_rtt() {
            // Possibly the ACK of the original transmission: ambiguous, skip.
            return;
        }
        self.rack_advanced = true;
        self.rack_rtt = rtt;
        if s.xmit_time > self.rack_xmit_time || (s.xmit_time == self.rack_xmit_time && seg + 1 > self.rack_end) {
            self.rack_xmit_time = s.xmit_time;
            self.rack_end = seg + 1;
        }
    }

    /// `tcp_rack_reo_wnd`.
    pub(super) fn rack_reo_wnd(&self) -> Time {
        if self.tp.ca_state >= CaState::Recovery || self.sacked_out >= REORDERING {
            return 0;
        }
        let min_rtt = self.rtt.min_rtt();
        if min_rtt == u64::MAX {
            return 0;
        }
        (min_rtt / 4).min(self.rtt.srtt)
    }

    /// `tcp_rack_detect_loss`: mark lost every segment sent before the most recently
    /// delivered one by more than its RTT plus the reordering window.
    /// Returns whether the reordering timer was armed.
    pub(super) fn rack_detect_loss(&mut self, now: Time) -> bool {
        if !self.rack_advanced {
            return false;
        }
        self.rack_advanced = false;
        self.rack_mark(now)
    }

    pub(super) fn rack_mark(&mut self, now: Time) -> bool {
        let reo_wnd = self.rack_reo_wnd();
        let mut timeout: Time = 0;
        let mut cur = self.ts_head;
        while cur != NONE {
            let s = *self.seg_mut(cur);
            let next = s.next(cur);
            let sent_before = self.rack_xmit_time > s.xmit_time
                || (self.rack_xmit_time == s.xmit_time && self.rack_end > cur + 1);
            if !sent_before {
                break;
            }
            let deadline = s.xmit_time + self.rack_rtt + reo_wnd;
            if deadline <= now {
                self.mark_lost(cur);
            } else {
                timeout = timeout.max(deadline - now);
            }
            cur = next;
        }
        if timeout > 0 {
            // `tcp_rack_detect_loss` arms the timer at the remaining time plus
            // `TCP_TIMEOUT_MIN` (jiffies granularity): at sub-ms RTTs this, not the
            // reordering window, sets when a hole is declared lost.
            self.xmit_timer = Some((now + timeout + TIMEOUT_MIN, XmitTimer::ReoTimeout));
        }
        timeout > 0
    }

    /// `tcp_rack_reo_timeout`.
    pub(super) fn on_reo_timeout(&mut self, now: Time) {
        self.sync_tp(now);
        let prior = self.in_flight();
        self.rack_mark(now);
        if self.in_flight() != prior && self.tp.ca_state < CaState::Recovery {
            self.enter_recovery(now);
            if !self.cca.has_cong_control() {
                self.prr(1, 0, false);
            }
        }
        if !matches!(self.xmit_timer, Some((_, XmitTimer::Rto))) {
            self.rearm_rto(now);
        }
    }
}
