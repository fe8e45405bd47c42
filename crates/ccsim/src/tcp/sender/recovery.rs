//! The congestion state machine (Linux `tcp_fastretrans_alert`: Open / Disorder /
//! CWR / Recovery / Loss), cwnd reductions with Proportional Rate Reduction
//! (RFC 6937, `tcp_cwnd_reduction`), and undo on D-SACK or timestamps (Eifel,
//! `tcp_try_undo_*`).

use super::scoreboard::EVER_RETRANS;
use super::{Sender, SenderEvent};
use crate::cc::{CaEvent, CaState, INFINITE_SSTHRESH};
use crate::net::Ack;
use crate::units::Time;

impl Sender {
    pub(super) fn set_state(&mut self, new_state: CaState) {
        if self.tp.ca_state != new_state {
            self.cca.set_state(&mut self.tp, new_state);
            self.tp.ca_state = new_state;
        }
    }

    /// `tcp_current_ssthresh`.
    pub(super) fn current_ssthresh(&self) -> u32 {
        if matches!(self.tp.ca_state, CaState::Cwr | CaState::Recovery) {
            self.tp.ssthresh
        } else {
            self.tp.ssthresh.max((self.tp.cwnd >> 1) + (self.tp.cwnd >> 2))
        }
    }

    /// `tcp_init_undo`.
    pub(super) fn init_undo(&mut self) {
        self.undo_marker = Some(self.snd_una);
        self.undo_retrans = if self.retrans_out > 0 { self.retrans_out as i64 } else { -1 };
    }

    /// `tcp_init_cwnd_reduction`: also records the reduction event.
    pub(super) fn init_cwnd_reduction(&mut self, now: Time, reason: &'static str) {
        self.high_seq = self.snd_nxt;
        self.tlp_high_seq = None;
        self.tp.cwnd_cnt = 0;
        self.tp.prior_cwnd = self.tp.cwnd;
        self.prr_delivered = 0;
        self.prr_out = 0;
        let cwnd_before = self.tp.cwnd;
        self.tp.ssthresh = self.cca.ssthresh(&mut self.tp);
        if self.ecn {
            self.cwr_pending = true;
        }
        self.counters.cwnd_reductions += 1;
        self.events.push((now, SenderEvent::Reduction { reason, cwnd_before, ssthresh: self.tp.ssthresh }));
    }

    /// `tcp_end_cwnd_reduction`.
    pub(super) fn end_cwnd_reduction(&mut self) {
        if self.cca.has_cong_control() {
            return;
        }
        if self.tp.ssthresh < INFINITE_SSTHRESH
            && (self.tp.ca_state == CaState::Cwr || self.undo_marker.is_some())
        {
            self.tp.cwnd = self.tp.ssthresh;
        }
        self.cca.cwnd_event(&mut self.tp, CaEvent::CompleteCwr);
    }

    /// `tcp_enter_recovery`.
    pub(super) fn enter_recovery(&mut self, now: Time) {
        self.init_undo();
        if self.tp.ca_state < CaState::Cwr {
            self.prior_ssthresh = self.current_ssthresh();
            self.init_cwnd_reduction(now, "recovery");
        }
        self.set_state(CaState::Recovery);
    }

    /// `tcp_enter_cwr` on an ECN echo.
    pub(super) fn enter_cwr(&mut self, now: Time) {
        self.prior_ssthresh = 0;
        if self.tp.ca_state < CaState::Cwr {
            self.undo_marker = None;
            self.init_cwnd_reduction(now, "ecn");
            self.set_state(CaState::Cwr);
        }
    }

    /// `tcp_packet_delayed`: the ACK echoes a timestamp older than our first
    /// retransmission, so the original arrived (Eifel).
    pub(super) fn packet_delayed(&self, tsecr: Time) -> bool {
        self.retrans_stamp != 0 && tsecr != 0 && tsecr < self.retrans_stamp
    }

    /// `tcp_check_dsack` / the D-SACK part of `tcp_sacktag_one` (Linux 6.x): a
    /// duplicate report of segment `dup` retires one retransmission of the current
    /// undo episode if it covers data after `undo_marker` that was retransmitted (or
    /// is already cumulatively acked: "dumb counting" for forgotten data).
    pub(super) fn count_dsack(&mut self, dup: u64) {
        let Some(marker) = self.undo_marker else { return };
        if self.undo_retrans <= 0 || dup < marker {
            return;
        }
        let retransmitted = dup < self.snd_una || (dup < self.snd_nxt && self.seg_mut(dup).is(EVER_RETRANS));
        if retransmitted {
            self.undo_retrans -= 1;
        }
    }

    /// `tcp_try_undo_dsack`.
    fn try_undo_dsack(&mut self, now: Time) -> bool {
        if self.undo_marker.is_some() && self.undo_retrans == 0 {
            self.undo_cwnd_reduction(now);
            return true;
        }
        false
    }

    /// `tcp_undo_cwnd_reduction`.
    pub(super) fn undo_cwnd_reduction(&mut self, now: Time) {
        let cwnd = self.cca.undo_cwnd(&mut self.tp);
        self.tp.cwnd = cwnd;
        if self.prior_ssthresh > self.tp.ssthresh {
            self.tp.ssthresh = self.prior_ssthresh;
        }
        self.undo_marker = None;
        self.counters.undos += 1;
        self.events.push((now, SenderEvent::Undo { cwnd }));
    }

    /// `tcp_fastretrans_alert`, reduced to what a non-reordering path needs.
    pub(super) fn fastretrans_alert(&mut self, now: Time, ack: &Ack) {
        // ECN echo: reduce once per window of data (RFC 3168 §6.1.2).
        if ack.ece && self.ecn && self.tp.ca_state <= CaState::Disorder {
            self.enter_cwr(now);
        }
        match self.tp.ca_state {
            CaState::Recovery if self.snd_una >= self.high_seq => {
                if self.undo_marker.is_some() && (self.undo_retrans == 0 || self.packet_delayed(ack.tsecr)) {
                    self.undo_cwnd_reduction(now);
                } else {
                    self.end_cwnd_reduction();
                }
                self.set_state(CaState::Open);
            }
            // CWR ends once data *above* high_seq is acked, so that the CWR flag
            // reached the receiver (`tcp_fastretrans_alert`: snd_una != high_seq).
            CaState::Cwr if self.snd_una > self.high_seq => {
                self.end_cwnd_reduction();
                self.set_state(CaState::Open);
            }
            CaState::Loss => {
                if self.undo_marker.is_some() && self.packet_delayed(ack.tsecr) && ack.cum > self.undo_marker.unwrap_or(0) {
                    // Spurious RTO: the original transmissions were only delayed.
                    self.undo_cwnd_reduction(now);
                    self.set_state(CaState::Open);
                } else if self.snd_una >= self.high_seq {
                    self.set_state(CaState::Open);
                }
            }
            _ => {}
        }
        // `tcp_try_undo_dsack`, in Recovery and (after it) in Open / Disorder: every
        // retransmission of the episode was reported duplicate, so none was needed.
        if self.tp.ca_state <= CaState::Recovery && self.tp.ca_state != CaState::Cwr && self.try_undo_dsack(now) {
            self.set_state(CaState::Open);
        }
        if self.tp.ca_state <= CaState::Disorder {
            if self.lost_out > 0 {
                self.enter_recovery(now);
            } else if self.sacked_out > 0 || self.retrans_out > 0 {
                self.set_state(CaState::Disorder);
            } else {
                self.set_state(CaState::Open);
                if self.retrans_out == 0 {
                    self.retrans_stamp = 0;
                }
            }
        }
    }

    /// Proportional Rate Reduction (`tcp_cwnd_reduction`, RFC 6937).
    pub(super) fn prr(&mut self, newly_acked_sacked: u32, newly_lost: u32, una_advanced: bool) {
        if newly_acked_sacked == 0 || self.tp.prior_cwnd == 0 {
            return;
        }
        let in_flight = self.in_flight() as i64;
        let ssthresh = self.tp.ssthresh as i64;
        let delta = ssthresh - in_flight;
        self.prr_delivered += newly_acked_sacked;
        let mut sndcnt: i64 = if delta < 0 {
            let dividend = ssthresh * self.prr_delivered as i64 + self.tp.prior_cwnd as i64 - 1;
            dividend / self.tp.prior_cwnd as i64 - self.prr_out as i64
        } else {
            let mut s = (self.prr_delivered as i64 - self.prr_out as i64).max(newly_acked_sacked as i64);
            if una_advanced && newly_lost == 0 {
                s += 1;
            }
            s.min(delta)
        };
        // Force a fast retransmit upon entering fast recovery.
        sndcnt = sndcnt.max(if self.prr_out > 0 { 0 } else { 1 });
        self.tp.cwnd = (in_flight + sndcnt).max(1) as u32;
    }

    /// `tcp_is_cwnd_limited`.
    pub(super) fn is_cwnd_limited(&self) -> bool {
        if self.tp.in_slow_start() {
            return self.tp.cwnd < 2 * self.max_packets_out;
        }
        self.tp.is_cwnd_limited
    }
}
