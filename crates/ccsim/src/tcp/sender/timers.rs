//! The retransmission timer slot (Linux `icsk_pending`): RTO with exponential
//! backoff (`tcp_retransmit_timer`, `tcp_enter_loss`) and the Tail Loss Probe
//! (`tcp_schedule_loss_probe`, `tcp_send_loss_probe`).

use super::scoreboard::{LOST, RETRANS, SACKED};
use super::{Sender, SenderEvent};
use crate::cc::{CaEvent, CaState};
use crate::net::Segment;
use crate::tcp::rtt::{RTO_INIT, RTO_MAX};
use crate::units::{ms, Time};

/// Linux `TCP_RTO_MIN` (the constant, not the per-route value): the loss probe's
/// allowance for a delayed ACK when a single segment is outstanding.
const TCP_RTO_MIN: Time = ms(200);
/// Linux `TCP_TIMEOUT_MIN_US` (2 ms): added to the loss-probe timeout and to the RACK
/// reordering timer. Current Linux adds it in microseconds before converting to
/// jiffies (`usecs_to_jiffies(timeout + TCP_TIMEOUT_MIN_US)` in `tcp_rack_mark_lost`
/// and `tcp_schedule_loss_probe`), so it is 2 ms at any HZ; older kernels added
/// `TCP_TIMEOUT_MIN` = 2 jiffies (8 ms at HZ=250). Deviation: the timers are not
/// rounded up to whole jiffies, as `usecs_to_jiffies` does (≤ 1 jiffy later on Linux).
pub(super) const TIMEOUT_MIN: Time = ms(2);

/// The single retransmission-timer slot (Linux `icsk_pending`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum XmitTimer {
    Rto,
    LossProbe,
    ReoTimeout,
}

impl Sender {
    pub(super) fn rearm_rto(&mut self, now: Time) {
        if self.packets_out() == 0 {
            self.xmit_timer = None;
            return;
        }
        let rto = (self.rtt.rto << self.backoff.min(16)).min(RTO_MAX);
        self.xmit_timer = Some((now + rto, XmitTimer::Rto));
    }

    /// `tcp_set_xmit_timer`: a loss probe if one may be scheduled, else the RTO.
    pub(super) fn set_xmit_timer(&mut self, now: Time) {
        if !self.schedule_loss_probe(now) {
            self.rearm_rto(now);
        }
    }

    /// `tcp_schedule_loss_probe` (Linux 6.x): in Open or CWR, 2·srtt plus
    /// `TCP_TIMEOUT_MIN`, or plus `TCP_RTO_MIN` with a single segment out (room for a
    /// delayed ACK); `TCP_TIMEOUT_INIT` before the first RTT sample; never after the RTO.
    pub(super) fn schedule_loss_probe(&mut self, now: Time) -> bool {
        let open_or_cwr = matches!(self.tp.ca_state, CaState::Open | CaState::Cwr);
        if self.packets_out() == 0 || !open_or_cwr || self.tlp_high_seq.is_some() {
            return false;
        }
        let srtt = self.rtt.srtt;
        let mut timeout = if srtt > 0 {
            2 * srtt + if self.packets_out() == 1 { TCP_RTO_MIN } else { TIMEOUT_MIN }
        } else {
            RTO_INIT
        };
        let rto = (self.rtt.rto << self.backoff.min(16)).min(RTO_MAX);
        timeout = timeout.min(rto);
        self.xmit_timer = Some((now + timeout, XmitTimer::LossProbe));
        true
    }

    /// `tcp_send_loss_probe`.
    pub(super) fn send_loss_probe(&mut self, now: Time, out: &mut Vec<Segment>) {
        if self.tlp_high_seq.is_none() && self.packets_out() > 0 {
            if self.has_new_data() && self.snd_nxt - self.snd_una < self.rwnd_segs as u64 {
                // A new segment, sent regardless of cwnd (push_one == 2).
                self.tlp_retrans = false;
                self.send_segment(now, self.snd_nxt, false, out);
                self.counters.tlp_probes += 1;
                self.tlp_high_seq = Some(self.snd_nxt);
            } else {
                let last = self.snd_nxt - 1;
                let s = *self.seg_mut(last);
                if !s.is(SACKED) && !s.is(RETRANS) {
                    if s.is(LOST) {
                        self.lost_unretx -= 1;
                    }
                    self.tlp_retrans = true;
                    self.send_segment(now, last, true, out);
                    self.counters.tlp_probes += 1;
                    self.tlp_high_seq = Some(self.snd_nxt);
                }
            }
        }
        self.rearm_rto(now);
    }

    /// `tcp_retransmit_timer` + `tcp_enter_loss`.
    pub(super) fn on_rto(&mut self, now: Time) {
        if self.packets_out() == 0 {
            return;
        }
        self.sync_tp(now);
        self.counters.rtos += 1;
        self.events.push((now, SenderEvent::Rto { backoff: self.backoff }));
        let fresh_episode = self.tp.ca_state <= CaState::Disorder
            || self.snd_una == self.high_seq
            || (self.tp.ca_state == CaState::Loss && self.backoff == 0);
        if fresh_episode {
            self.prior_ssthresh = self.current_ssthresh();
            self.tp.prior_cwnd = self.tp.cwnd;
            let cwnd_before = self.tp.cwnd;
            self.tp.ssthresh = self.cca.ssthresh(&mut self.tp);
            self.cca.cwnd_event(&mut self.tp, CaEvent::Loss);
            self.counters.cwnd_reductions += 1;
            self.events.push((now, SenderEvent::Reduction { reason: "rto", cwnd_before, ssthresh: self.tp.ssthresh }));
            self.init_undo();
        }
        // `tcp_timeout_mark_lost`: everything not SACKed is lost and will be resent,
        // including retransmissions still in flight.
        let mut seg = self.snd_una;
        while seg < self.snd_nxt {
            let s = *self.seg_mut(seg);
            if !s.is(SACKED) {
                if s.is(RETRANS) && !s.is(LOST) {
                    self.ts_remove(seg);
                    let m = self.seg_mut(seg);
                    m.set(LOST, true);
                    m.set(RETRANS, false);
                    if self.seg_fates {
                        self.cca.seg_fate(seg, true, None);
                    }
                    self.retrans_out -= 1;
                    self.lost_out += 1;
                    self.lost_unretx += 1;
                    self.tp.lost += 1;
                    self.counters.segs_lost += 1;
                } else {
                    self.mark_lost(seg);
                }
            }
            seg += 1;
        }
        self.retx_hint = self.snd_una;
        self.tp.cwnd = self.in_flight() + 1;
        self.tp.cwnd_cnt = 0;
        self.high_seq = self.snd_nxt;
        self.tlp_high_seq = None;
        self.set_state(CaState::Loss);
        self.backoff += 1;
        self.rearm_rto(now);
        self.pacing_blocked = false;
        self.next_send_time = now;
        self.update_pacing_rate();
    }
}
