//! TCP sender, modelled on Linux `tcp_input.c` / `tcp_output.c` / `tcp_recovery.c`
//! / `tcp_rate.c` (see `shared/spec/references.md`).
//!
//! * Scoreboard: one entry per outstanding segment (sequence numbers count
//!   segments), with SACKed / lost / retransmitted flags and the delivery-rate
//!   snapshot taken at (re)transmission (`tcp_rate_skb_sent`).
//! * Loss detection: RACK (RFC 8985, `tcp_rack_detect_loss`) over a list of
//!   unSACKed, not-lost segments kept in transmission order, with Linux's
//!   reordering window (min_rtt/4, or 0 once 3 segments are SACKed or in
//!   recovery); Tail Loss Probe (`tcp_schedule_loss_probe`, `tcp_send_loss_probe`);
//!   RTO (RFC 6298 with Linux's RTO computation, 200 ms minimum, exponential backoff).
//! * Recovery: Linux's states Open / Disorder / CWR / Recovery / Loss
//!   (`tcp_fastretrans_alert`), Proportional Rate Reduction (RFC 6937,
//!   `tcp_cwnd_reduction`), lost segments retransmitted first in sequence order
//!   (RFC 6675 NextSeg rule 1), undo on D-SACK or timestamps (Eifel,
//!   `tcp_try_undo_*`).
//! * Delivery-rate samples as `tcp_rate.c`, app-limited marking.
//! * Pacing as Linux internal pacing (EDT: each segment advances the next send
//!   time by len / pacing_rate). Classic CCAs are unpaced unless configured.
//!
//! Deviations from Linux, each deliberate:
//! * Deviation: no TSO/GSO: every segment is one packet (the studies and our
//!   linux backend turn TSO/GSO off for packet-exact queues).
//! * Deviation: no F-RTO (RFC 5682); spurious RTOs are undone by the timestamp
//!   (Eifel) check only.
//! * Deviation: no reordering detection (`tp->reord_seen` stays 0): the simulated
//!   paths never reorder, so RACK's reordering window never grows.
//! * Deviation: no slow-start-after-idle cwnd restart (`tcp_cwnd_restart`); bulk
//!   flows never idle, and finite flows here are single transfers.
//! * Deviation: the receive window is fixed (no autotuning); it only caps the
//!   flight size.

use std::collections::VecDeque;

use crate::cc::{AckSample, BoxedCca, CaEvent, CaState, RateSample, TcpState};
use crate::net::{Ack, Segment};
use crate::sim::SimRng;
use crate::tcp::rtt::{RttEstimator, RTO_INIT, RTO_MAX};
use crate::units::{ms, Time};

pub use crate::cc::INFINITE_SSTHRESH;
/// Linux default `tcp_reordering`: SACKed segments that make RACK drop its window.
const REORDERING: u32 = 3;
/// Linux `TCP_DELACK_MAX`, used by TLP when a single segment is outstanding.
const DELACK_MAX: Time = ms(200);
/// Linux `TCP_TIMEOUT_MIN` (2 jiffies at HZ=1000): lower bound of the TLP timeout.
const TIMEOUT_MIN: Time = ms(2);
const NONE: u64 = u64::MAX;

/// Configuration of one sender.
#[derive(Debug, Clone)]
pub struct SenderParams {
    pub mss: u32,
    pub initial_cwnd: u32,
    /// Receive window, in segments.
    pub rwnd_segs: u32,
    /// Pace classic CCAs (model-based CCAs always pace).
    pub pacing: bool,
    pub ecn: bool,
    pub min_rto: Time,
    /// Bytes to send; None = unlimited.
    pub size_bytes: Option<u64>,
}

/// Per-flow counters for the summary table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SenderCounters {
    /// Segments transmitted, including retransmissions.
    pub segs_sent: u64,
    pub segs_retrans: u64,
    /// Segments marked lost (by RACK, or by an RTO).
    pub segs_lost: u64,
    /// Retransmissions that were tail loss probes.
    pub tlp_probes: u64,
    pub cwnd_reductions: u64,
    pub rtos: u64,
    pub undos: u64,
}

/// Something worth recording in the events table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SenderEvent {
    /// A cwnd reduction began: reason, cwnd before, new ssthresh.
    Reduction { reason: &'static str, cwnd_before: u32, ssthresh: u32 },
    /// A reduction was undone (found spurious): restored cwnd.
    Undo { cwnd: u32 },
    /// An RTO fired (the reduction is reported separately).
    Rto { backoff: u32 },
}

/// Scoreboard entry of one outstanding segment.
#[derive(Debug, Clone, Copy)]
struct Seg {
    /// Time of the latest (re)transmission.
    xmit_time: Time,
    sacked: bool,
    lost: bool,
    /// A retransmission of this segment is in flight (`TCPCB_SACKED_RETRANS`).
    retrans: bool,
    /// Ever retransmitted (`TCPCB_EVER_RETRANS`): no RTT samples from it (Karn).
    ever_retrans: bool,
    // Delivery-rate snapshot at the latest transmission (`tcp_skb_cb.tx`).
    tx_delivered: u64,
    tx_delivered_ce: u64,
    tx_delivered_time: Time,
    tx_first_tx_time: Time,
    tx_lost: u64,
    tx_in_flight: u32,
    tx_app_limited: bool,
    /// The snapshot has not been consumed by a SACK yet.
    rate_valid: bool,
    // Links of the transmission-ordered list of unSACKed, not-lost segments.
    prev: u64,
    next: u64,
    in_tsorted: bool,
}

/// The single retransmission-timer slot (Linux `icsk_pending`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum XmitTimer {
    Rto,
    LossProbe,
    ReoTimeout,
}

/// Accumulates the delivery-rate sample over one ACK.
#[derive(Debug, Default)]
struct RateAcc {
    has: bool,
    rs: RateSample,
    last_end: u64,
    prior_lost: u64,
    last_xmit: Time,
}

#[derive(Debug)]
pub struct Sender {
    pub params: SenderParams,
    cca: BoxedCca,
    /// The CCA-visible connection state (cwnd, ssthresh, pacing rate, counters).
    pub tp: TcpState,
    rtt: RttEstimator,

    snd_una: u64,
    snd_nxt: u64,
    total_segs: Option<u64>,
    segs: VecDeque<Seg>,
    sacked_out: u32,
    lost_out: u32,
    retrans_out: u32,
    /// Lost and not yet retransmitted.
    lost_unretx: u32,
    retx_hint: u64,

    ts_head: u64,
    ts_tail: u64,

    // Recovery.
    high_seq: u64,
    prior_ssthresh: u32,
    undo_marker: Option<u64>,
    undo_retrans: i64,
    retrans_stamp: Time,
    prr_delivered: u32,
    prr_out: u32,
    cwr_pending: bool,

    // RACK.
    rack_xmit_time: Time,
    rack_end: u64,
    rack_rtt: Time,
    rack_advanced: bool,

    // TLP.
    tlp_high_seq: Option<u64>,
    tlp_retrans: bool,

    xmit_timer: Option<(Time, XmitTimer)>,
    backoff: u32,

    next_send_time: Time,
    pacing_blocked: bool,
    first_tx_time: Time,

    // tcp_cwnd_validate state.
    max_packets_out: u32,
    cwnd_usage_seq: u64,

    stopped: bool,
    started: bool,
    pub counters: SenderCounters,
    pub events: Vec<(Time, SenderEvent)>,
}

impl Sender {
    pub fn new(params: SenderParams, cca: BoxedCca, rng: SimRng) -> Self {
        let total_segs = params.size_bytes.map(|b| b.div_ceil(params.mss as u64));
        let model_based = cca.has_cong_control();
        let tp = TcpState::new(
            params.mss,
            params.initial_cwnd,
            params.rwnd_segs.max(2),
            params.pacing || model_based,
            rng,
        );
        Self {
            rtt: RttEstimator::new(params.min_rto),
            params,
            cca,
            tp,
            snd_una: 0,
            snd_nxt: 0,
            total_segs,
            segs: VecDeque::new(),
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            lost_unretx: 0,
            retx_hint: 0,
            ts_head: NONE,
            ts_tail: NONE,
            high_seq: 0,
            prior_ssthresh: 0,
            undo_marker: None,
            undo_retrans: 0,
            retrans_stamp: 0,
            prr_delivered: 0,
            prr_out: 0,
            cwr_pending: false,
            rack_xmit_time: 0,
            rack_end: 0,
            rack_rtt: 0,
            rack_advanced: false,
            tlp_high_seq: None,
            tlp_retrans: false,
            xmit_timer: None,
            backoff: 0,
            next_send_time: 0,
            pacing_blocked: false,
            first_tx_time: 0,
            max_packets_out: 0,
            cwnd_usage_seq: 0,
            stopped: false,
            started: false,
            counters: SenderCounters::default(),
            events: Vec::new(),
        }
    }

    // ------------------------------------------------------------------ queries

    pub fn cca(&self) -> &dyn crate::cc::CongestionControl {
        self.cca.as_ref()
    }
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }
    pub fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }
    pub fn srtt(&self) -> Time {
        self.rtt.srtt
    }
    pub fn min_rtt(&self) -> Option<Time> {
        let m = self.rtt.min_rtt();
        (m != u64::MAX).then_some(m)
    }
    /// Segments in flight (`tcp_packets_in_flight`).
    pub fn in_flight(&self) -> u32 {
        self.packets_out() - (self.sacked_out + self.lost_out) + self.retrans_out
    }
    pub fn packets_out(&self) -> u32 {
        (self.snd_nxt - self.snd_una) as u32
    }
    /// All data of a finite flow has been acknowledged.
    pub fn is_complete(&self) -> bool {
        self.total_segs.is_some_and(|t| self.snd_una >= t)
    }
    /// The sender has nothing more to do (complete, or stopped with nothing outstanding).
    pub fn is_finished(&self) -> bool {
        self.is_complete() || (self.stopped && self.packets_out() == 0)
    }

    /// Earliest time the sender must be woken (retransmission timer or pacing).
    pub fn next_wakeup(&self) -> Option<Time> {
        let timer = self.xmit_timer.map(|(t, _)| t);
        let pacing = self.pacing_blocked.then_some(self.next_send_time);
        match (timer, pacing) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    // ------------------------------------------------------------------ inputs

    /// Open the connection and send the initial window.
    pub fn start(&mut self, now: Time, out: &mut Vec<Segment>) {
        self.started = true;
        self.sync_tp(now);
        self.cca.init(&mut self.tp);
        self.clamp_cwnd();
        self.update_pacing_rate();
        self.transmit(now, out);
    }

    /// The application stops offering new data (e.g. iperf's `-t`).
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    /// Timer wakeup: handles whatever is due, then sends what it may.
    pub fn on_timer(&mut self, now: Time, out: &mut Vec<Segment>) {
        if !self.started || self.is_finished() {
            self.xmit_timer = None;
            return;
        }
        if let Some((t, kind)) = self.xmit_timer {
            if t <= now {
                self.xmit_timer = None;
                match kind {
                    XmitTimer::Rto => self.on_rto(now),
                    XmitTimer::LossProbe => self.send_loss_probe(now, out),
                    XmitTimer::ReoTimeout => self.on_reo_timeout(now),
                }
            }
        }
        self.transmit(now, out);
    }

    /// Process an ACK (`tcp_ack`).
    pub fn on_ack(&mut self, now: Time, ack: &Ack, out: &mut Vec<Segment>) {
        if !self.started || ack.cum > self.snd_nxt {
            return;
        }
        self.sync_tp(now);
        let prior_in_flight = self.in_flight();
        let prior_delivered = self.tp.delivered;
        let prior_lost = self.tp.lost;
        let mut acc = RateAcc::default();
        acc.rs.prior_in_flight = prior_in_flight;
        let mut sack_first_xmit: Option<Time> = None;

        // --- SACK blocks (`tcp_sacktag_write_queue`).
        for &(start, end) in &ack.sack[..ack.n_sack as usize] {
            let lo = start.max(self.snd_una);
            let hi = end.min(self.snd_nxt);
            let mut seg = lo;
            while seg < hi {
                let i = (seg - self.snd_una) as usize;
                if !self.segs[i].sacked {
                    if !self.segs[i].ever_retrans {
                        let x = self.segs[i].xmit_time;
                        sack_first_xmit = Some(sack_first_xmit.map_or(x, |f| f.min(x)));
                    }
                    self.mark_delivered(now, seg, true, ack.ece, &mut acc);
                }
                seg += 1;
            }
        }
        if ack.dsack && self.undo_marker.is_some() {
            self.undo_retrans -= 1;
        }

        // --- Cumulative ACK (`tcp_clean_rtx_queue`).
        let advanced = ack.cum > self.snd_una;
        let mut pkts_acked = 0u32;
        let mut seq_rtt: Option<Time> = None;
        while self.snd_una < ack.cum {
            let seg = self.snd_una;
            let s = self.segs[0];
            if !s.sacked {
                if !s.ever_retrans && seq_rtt.is_none() {
                    seq_rtt = Some(now - s.xmit_time);
                }
                self.mark_delivered(now, seg, false, ack.ece, &mut acc);
            } else {
                self.sacked_out -= 1;
            }
            pkts_acked += 1;
            self.segs.pop_front();
            self.snd_una += 1;
        }
        if self.retx_hint < self.snd_una {
            self.retx_hint = self.snd_una;
        }

        // --- RTT (`tcp_ack_update_rtt`): srtt from the oldest newly acked segment,
        // the CCA sample (`ca_rtt`) from the most recently sent one.
        let ca_rtt = if acc.has && !acc.rs.is_retrans { Some(now - acc.last_xmit) } else { None };
        let srtt_sample = seq_rtt.or(sack_first_xmit.map(|x| now - x));
        if let Some(m) = srtt_sample {
            self.rtt.sample(m, self.snd_una, self.snd_nxt);
        }
        if let Some(m) = ca_rtt {
            self.rtt.update_min(now, m);
        }
        if advanced {
            self.backoff = 0;
        }

        // --- TLP outcome (`tcp_process_tlp_ack`).
        if let Some(tlp) = self.tlp_high_seq {
            if ack.cum >= tlp {
                if !self.tlp_retrans || ack.dsack {
                    self.tlp_high_seq = None;
                } else if ack.cum > tlp {
                    // The probe repaired a loss: reduce cwnd once (CWR), as Linux.
                    self.tlp_high_seq = None;
                    self.init_cwnd_reduction(now, "tlp");
                    self.set_state(CaState::Cwr);
                    self.end_cwnd_reduction();
                    self.set_state(CaState::Open);
                }
            }
        }

        // --- Rate sample (`tcp_rate_gen`).
        let delivered = (self.tp.delivered - prior_delivered) as u32;
        self.sync_tp(now);
        // --- Loss detection (RACK) and the state machine (`tcp_fastretrans_alert`).
        let reo_armed = self.rack_detect_loss(now);
        let newly_lost = (self.tp.lost - prior_lost) as u32;
        let rs = self.rate_gen(now, &mut acc, delivered, newly_lost, ca_rtt, ack.delayed);

        self.fastretrans_alert(now, ack);

        // --- Retransmission timer (`tcp_set_xmit_timer`).
        if (advanced && !reo_armed) || self.xmit_timer.is_none() {
            self.set_xmit_timer(now);
        }

        // --- Congestion control (`tcp_cong_control`).
        self.sync_tp(now);
        let sample = AckSample {
            pkts_acked,
            acked_sacked: delivered,
            rtt: ca_rtt,
            prior_in_flight,
            ece: ack.ece,
            advanced_una: advanced,
            rs,
        };
        if pkts_acked > 0 || delivered > 0 {
            self.cca.pkts_acked(&mut self.tp, &sample);
        }
        if self.cca.has_cong_control() {
            self.cca.cong_control(&mut self.tp, &sample);
        } else if matches!(self.tp.ca_state, CaState::Cwr | CaState::Recovery) {
            self.prr(delivered, newly_lost, advanced);
        } else if advanced && self.is_cwnd_limited() {
            self.cca.cong_avoid(&mut self.tp, &sample);
        }
        self.clamp_cwnd();
        self.update_pacing_rate();

        if self.is_finished() {
            self.xmit_timer = None;
            return;
        }
        self.transmit(now, out);
    }

    // ------------------------------------------------------------------ scoreboard

    fn seg_mut(&mut self, seg: u64) -> &mut Seg {
        let i = (seg - self.snd_una) as usize;
        &mut self.segs[i]
    }

    fn ts_remove(&mut self, seg: u64) {
        let s = *self.seg_mut(seg);
        if !s.in_tsorted {
            return;
        }
        if s.prev != NONE {
            self.seg_mut(s.prev).next = s.next;
        } else {
            self.ts_head = s.next;
        }
        if s.next != NONE {
            self.seg_mut(s.next).prev = s.prev;
        } else {
            self.ts_tail = s.prev;
        }
        let m = self.seg_mut(seg);
        m.in_tsorted = false;
        m.prev = NONE;
        m.next = NONE;
    }

    fn ts_push_back(&mut self, seg: u64) {
        let tail = self.ts_tail;
        {
            let m = self.seg_mut(seg);
            m.prev = tail;
            m.next = NONE;
            m.in_tsorted = true;
        }
        if tail != NONE {
            self.seg_mut(tail).next = seg;
        } else {
            self.ts_head = seg;
        }
        self.ts_tail = seg;
    }

    /// A segment was delivered (cum-ACKed without having been SACKed, or SACKed).
    fn mark_delivered(&mut self, now: Time, seg: u64, by_sack: bool, ece: bool, acc: &mut RateAcc) {
        self.ts_remove(seg);
        let s = *self.seg_mut(seg);
        if s.lost {
            self.lost_out -= 1;
            if !s.retrans {
                self.lost_unretx -= 1;
            }
        }
        if s.retrans {
            self.retrans_out -= 1;
        }
        self.tp.delivered += 1;
        if ece {
            self.tp.delivered_ce += 1;
        }
        self.rate_skb_delivered(seg, acc);
        self.rack_advance(now, seg, &s);
        let m = self.seg_mut(seg);
        m.lost = false;
        m.retrans = false;
        if by_sack {
            m.sacked = true;
            m.rate_valid = false;
            self.sacked_out += 1;
        }
    }

    /// `tcp_mark_skb_lost`. A lost retransmission must be sent again; a segment
    /// whose (TLP) retransmission is still in flight is marked lost but not resent.
    fn mark_lost(&mut self, seg: u64) {
        self.ts_remove(seg);
        let s = *self.seg_mut(seg);
        if s.sacked {
            return;
        }
        if s.lost {
            if !s.retrans {
                return;
            }
            self.seg_mut(seg).retrans = false;
            self.retrans_out -= 1;
        } else {
            self.seg_mut(seg).lost = true;
            self.lost_out += 1;
            if s.retrans {
                // Still counted in flight through its retransmission.
                self.tp.lost += 1;
                self.counters.segs_lost += 1;
                return;
            }
        }
        self.lost_unretx += 1;
        self.tp.lost += 1;
        self.counters.segs_lost += 1;
        if seg < self.retx_hint {
            self.retx_hint = seg;
        }
    }

    // ------------------------------------------------------------------ rate samples

    /// `tcp_rate_skb_delivered`: keep the snapshot of the most recently sent
    /// delivered segment.
    fn rate_skb_delivered(&mut self, seg: u64, acc: &mut RateAcc) {
        let s = *self.seg_mut(seg);
        if !s.rate_valid {
            return;
        }
        let newer = !acc.has
            || s.xmit_time > acc.last_xmit
            || (s.xmit_time == acc.last_xmit && seg + 1 > acc.last_end);
        if newer {
            acc.has = true;
            acc.rs.prior_delivered = s.tx_delivered;
            acc.rs.prior_delivered_ce = s.tx_delivered_ce;
            acc.rs.prior_time = s.tx_delivered_time;
            acc.rs.is_app_limited = s.tx_app_limited;
            acc.rs.is_retrans = s.ever_retrans;
            acc.rs.tx_in_flight = s.tx_in_flight;
            acc.prior_lost = s.tx_lost;
            acc.last_end = seg + 1;
            acc.last_xmit = s.xmit_time;
            // The send interval starts at this segment's flight's first send.
            self.first_tx_time = s.xmit_time;
            acc.rs.snd_interval = s.xmit_time.saturating_sub(s.tx_first_tx_time);
        }
    }

    /// `tcp_rate_gen`: finish the sample of this ACK.
    fn rate_gen(
        &mut self,
        now: Time,
        acc: &mut RateAcc,
        delivered: u32,
        lost: u32,
        rtt: Option<Time>,
        delayed: bool,
    ) -> RateSample {
        if self.tp.app_limited != 0 && self.tp.delivered > self.tp.app_limited {
            self.tp.app_limited = 0;
        }
        if delivered > 0 {
            self.tp.delivered_time = now;
        }
        let mut rs = acc.rs; // carries prior_in_flight even without a valid sample
        rs.acked_sacked = delivered;
        rs.losses = lost;
        rs.rtt = rtt;
        rs.is_ack_delayed = delayed;
        if !acc.has {
            rs.delivered = -1;
            rs.interval = 0;
            return rs;
        }
        rs.delivered = (self.tp.delivered - rs.prior_delivered) as i64;
        rs.delivered_ce = (self.tp.delivered_ce - rs.prior_delivered_ce) as i64;
        rs.lost = (self.tp.lost - acc.prior_lost) as u32;
        rs.rcv_interval = now.saturating_sub(rs.prior_time);
        rs.interval = rs.snd_interval.max(rs.rcv_interval);
        // Linux discards intervals shorter than min_rtt (ACK compression artefacts).
        if rs.interval < self.rtt.min_rtt() && self.rtt.min_rtt() != u64::MAX {
            rs.interval = 0;
        }
        rs
    }

    // ------------------------------------------------------------------ RACK

    /// `tcp_rack_advance`.
    fn rack_advance(&mut self, now: Time, seg: u64, s: &Seg) {
        let rtt = now.saturating_sub(s.xmit_time);
        if s.ever_retrans && rtt < self.rtt.min_rtt() {
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
    fn rack_reo_wnd(&self) -> Time {
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
    fn rack_detect_loss(&mut self, now: Time) -> bool {
        if !self.rack_advanced {
            return false;
        }
        self.rack_advanced = false;
        self.rack_mark(now)
    }

    fn rack_mark(&mut self, now: Time) -> bool {
        let reo_wnd = self.rack_reo_wnd();
        let mut timeout: Time = 0;
        let mut cur = self.ts_head;
        while cur != NONE {
            let s = *self.seg_mut(cur);
            let next = s.next;
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
            self.xmit_timer = Some((now + timeout, XmitTimer::ReoTimeout));
        }
        timeout > 0
    }

    /// `tcp_rack_reo_timeout`.
    fn on_reo_timeout(&mut self, now: Time) {
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

    // ------------------------------------------------------------------ state machine

    fn set_state(&mut self, new_state: CaState) {
        if self.tp.ca_state != new_state {
            self.cca.set_state(&mut self.tp, new_state);
            self.tp.ca_state = new_state;
        }
    }

    /// `tcp_current_ssthresh`.
    fn current_ssthresh(&self) -> u32 {
        if matches!(self.tp.ca_state, CaState::Cwr | CaState::Recovery) {
            self.tp.ssthresh
        } else {
            self.tp.ssthresh.max((self.tp.cwnd >> 1) + (self.tp.cwnd >> 2))
        }
    }

    /// `tcp_init_undo`.
    fn init_undo(&mut self) {
        self.undo_marker = Some(self.snd_una);
        self.undo_retrans = if self.retrans_out > 0 { self.retrans_out as i64 } else { -1 };
    }

    /// `tcp_init_cwnd_reduction`: also records the reduction event.
    fn init_cwnd_reduction(&mut self, now: Time, reason: &'static str) {
        self.high_seq = self.snd_nxt;
        self.tlp_high_seq = None;
        self.tp.prior_cwnd = self.tp.cwnd;
        self.prr_delivered = 0;
        self.prr_out = 0;
        let cwnd_before = self.tp.cwnd;
        self.tp.ssthresh = self.cca.ssthresh(&mut self.tp);
        if self.params.ecn {
            self.cwr_pending = true;
        }
        self.counters.cwnd_reductions += 1;
        self.events.push((now, SenderEvent::Reduction { reason, cwnd_before, ssthresh: self.tp.ssthresh }));
    }

    /// `tcp_end_cwnd_reduction`.
    fn end_cwnd_reduction(&mut self) {
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
    fn enter_recovery(&mut self, now: Time) {
        self.init_undo();
        if self.tp.ca_state < CaState::Cwr {
            self.prior_ssthresh = self.current_ssthresh();
            self.init_cwnd_reduction(now, "recovery");
        }
        self.set_state(CaState::Recovery);
    }

    /// `tcp_enter_cwr` on an ECN echo.
    fn enter_cwr(&mut self, now: Time) {
        self.prior_ssthresh = 0;
        if self.tp.ca_state < CaState::Cwr {
            self.undo_marker = None;
            self.init_cwnd_reduction(now, "ecn");
            self.set_state(CaState::Cwr);
        }
    }

    /// `tcp_packet_delayed`: the ACK echoes a timestamp older than our first
    /// retransmission, so the original arrived (Eifel).
    fn packet_delayed(&self, tsecr: Time) -> bool {
        self.retrans_stamp != 0 && tsecr != 0 && tsecr < self.retrans_stamp
    }

    /// `tcp_undo_cwnd_reduction`.
    fn undo_cwnd_reduction(&mut self, now: Time) {
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
    fn fastretrans_alert(&mut self, now: Time, ack: &Ack) {
        // ECN echo: reduce once per window of data (RFC 3168 §6.1.2).
        if ack.ece && self.params.ecn && self.tp.ca_state <= CaState::Disorder {
            self.enter_cwr(now);
        }
        // D-SACK undo: every retransmission of the episode proved unnecessary.
        if ack.dsack && self.undo_marker.is_some() && self.undo_retrans == 0 && self.tp.ca_state >= CaState::Recovery {
            self.undo_cwnd_reduction(now);
            self.set_state(CaState::Open);
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
            CaState::Cwr if self.snd_una >= self.high_seq => {
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
    fn prr(&mut self, newly_acked_sacked: u32, newly_lost: u32, una_advanced: bool) {
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
    fn is_cwnd_limited(&self) -> bool {
        if self.tp.in_slow_start() {
            return self.tp.cwnd < 2 * self.max_packets_out;
        }
        self.tp.is_cwnd_limited
    }

    // ------------------------------------------------------------------ timers

    fn rearm_rto(&mut self, now: Time) {
        if self.packets_out() == 0 {
            self.xmit_timer = None;
            return;
        }
        let rto = (self.rtt.rto << self.backoff.min(16)).min(RTO_MAX);
        self.xmit_timer = Some((now + rto, XmitTimer::Rto));
    }

    /// `tcp_set_xmit_timer`: a loss probe if one may be scheduled, else the RTO.
    fn set_xmit_timer(&mut self, now: Time) {
        if !self.schedule_loss_probe(now) {
            self.rearm_rto(now);
        }
    }

    /// `tcp_schedule_loss_probe`.
    fn schedule_loss_probe(&mut self, now: Time) -> bool {
        if self.packets_out() == 0 || self.tp.ca_state != CaState::Open || self.tlp_high_seq.is_some() {
            return false;
        }
        let srtt = self.rtt.srtt;
        let mut timeout = if srtt > 0 {
            let mut t = 2 * srtt;
            if self.packets_out() == 1 {
                t = t.max(srtt + srtt / 2 + DELACK_MAX);
            }
            t.max(TIMEOUT_MIN)
        } else {
            RTO_INIT
        };
        let rto = (self.rtt.rto << self.backoff.min(16)).min(RTO_MAX);
        timeout = timeout.min(rto);
        self.xmit_timer = Some((now + timeout, XmitTimer::LossProbe));
        true
    }

    /// `tcp_send_loss_probe`.
    fn send_loss_probe(&mut self, now: Time, out: &mut Vec<Segment>) {
        if self.tlp_high_seq.is_none() && self.packets_out() > 0 {
            if self.has_new_data() && self.snd_nxt - self.snd_una < self.params.rwnd_segs as u64 {
                // A new segment, sent regardless of cwnd (push_one == 2).
                self.tlp_retrans = false;
                self.send_segment(now, self.snd_nxt, false, out);
                self.counters.tlp_probes += 1;
                self.tlp_high_seq = Some(self.snd_nxt);
            } else {
                let last = self.snd_nxt - 1;
                let s = *self.seg_mut(last);
                if !s.sacked && !s.retrans {
                    if s.lost {
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
    fn on_rto(&mut self, now: Time) {
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
            if !s.sacked {
                if s.retrans && !s.lost {
                    self.ts_remove(seg);
                    let m = self.seg_mut(seg);
                    m.lost = true;
                    m.retrans = false;
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

    // ------------------------------------------------------------------ sending

    fn has_new_data(&self) -> bool {
        !self.stopped && self.total_segs.map_or(true, |t| self.snd_nxt < t)
    }

    /// The next lost segment that has not been retransmitted (RFC 6675 NextSeg (1)).
    fn next_retransmit(&mut self) -> Option<u64> {
        if self.lost_unretx == 0 {
            return None;
        }
        let mut seg = self.retx_hint.max(self.snd_una);
        while seg < self.snd_nxt {
            let s = *self.seg_mut(seg);
            if s.lost && !s.retrans && !s.sacked {
                self.retx_hint = seg;
                return Some(seg);
            }
            seg += 1;
        }
        None
    }

    /// `tcp_write_xmit` / `tcp_xmit_retransmit_queue`: send while cwnd, the receive
    /// window and pacing allow, lost segments first.
    fn transmit(&mut self, now: Time, out: &mut Vec<Segment>) {
        let mut cwnd_limited = false;
        self.pacing_blocked = false;
        loop {
            if self.in_flight() >= self.tp.cwnd {
                cwnd_limited = true;
                break;
            }
            let candidate = if let Some(seg) = self.next_retransmit() {
                Some((seg, true))
            } else if self.has_new_data() && self.snd_nxt - self.snd_una < self.params.rwnd_segs as u64 {
                Some((self.snd_nxt, false))
            } else {
                None
            };
            let Some((seg, is_retrans)) = candidate else {
                // Nothing to send although cwnd allows: application-limited
                // (`tcp_rate_check_app_limited`).
                if !self.has_new_data() {
                    self.tp.app_limited = (self.tp.delivered + self.in_flight() as u64).max(1);
                }
                break;
            };
            if self.tp.pacing_enabled && self.tp.pacing_rate > 0 && self.next_send_time > now {
                self.pacing_blocked = true;
                break;
            }
            if is_retrans {
                self.lost_unretx -= 1;
            }
            self.send_segment(now, seg, is_retrans, out);
        }
        // `tcp_cwnd_validate`.
        let packets_out = self.packets_out();
        if self.snd_una >= self.cwnd_usage_seq
            || cwnd_limited
            || (!self.tp.is_cwnd_limited && packets_out > self.max_packets_out)
        {
            self.tp.is_cwnd_limited = cwnd_limited;
            self.max_packets_out = packets_out;
            self.cwnd_usage_seq = self.snd_nxt;
        }
        if self.xmit_timer.is_none() && self.packets_out() > 0 {
            self.set_xmit_timer(now);
        }
    }

    fn send_segment(&mut self, now: Time, seg: u64, is_retrans: bool, out: &mut Vec<Segment>) {
        let in_flight_before = self.in_flight();
        if self.packets_out() == 0 {
            // `tcp_rate_skb_sent`: start a new flight's send interval.
            self.first_tx_time = now;
            self.tp.delivered_time = now;
            if !is_retrans {
                self.cca.cwnd_event(&mut self.tp, CaEvent::TxStart);
            }
        }
        let len = match self.total_segs {
            Some(t) if seg + 1 == t => {
                let size = self.params.size_bytes.unwrap();
                (size - (t - 1) * self.params.mss as u64) as u32
            }
            _ => self.params.mss,
        };
        let snapshot = Seg {
            xmit_time: now,
            sacked: false,
            lost: false,
            retrans: is_retrans,
            ever_retrans: is_retrans,
            tx_delivered: self.tp.delivered,
            tx_delivered_ce: self.tp.delivered_ce,
            tx_delivered_time: self.tp.delivered_time,
            tx_first_tx_time: self.first_tx_time,
            tx_lost: self.tp.lost,
            tx_in_flight: in_flight_before + 1,
            tx_app_limited: self.tp.app_limited != 0,
            rate_valid: true,
            prev: NONE,
            next: NONE,
            in_tsorted: false,
        };
        if is_retrans {
            self.ts_remove(seg);
            let s = self.seg_mut(seg);
            let (lost, sacked) = (s.lost, s.sacked);
            *s = Seg { lost, sacked, ..snapshot };
            self.retrans_out += 1;
            self.counters.segs_retrans += 1;
            if self.retrans_stamp == 0 {
                self.retrans_stamp = now;
            }
            if self.undo_marker.is_some() {
                self.undo_retrans = self.undo_retrans.max(0) + 1;
            }
            // A retransmitted lost segment is tracked by RACK again.
            self.ts_push_back(seg);
        } else {
            debug_assert_eq!(seg, self.snd_nxt);
            self.segs.push_back(snapshot);
            self.snd_nxt += 1;
            self.ts_push_back(seg);
        }
        if matches!(self.tp.ca_state, CaState::Cwr | CaState::Recovery) {
            self.prr_out += 1;
        }
        if self.tp.pacing_enabled && self.tp.pacing_rate > 0 {
            let len_ns = (len as u128 * 1_000_000_000 / self.tp.pacing_rate as u128) as Time;
            self.next_send_time = self.next_send_time.max(now) + len_ns;
        }
        self.counters.segs_sent += 1;
        let cwr = !is_retrans && std::mem::take(&mut self.cwr_pending);
        out.push(Segment { seg, len, tsval: now, is_retrans, cwr });
        if self.xmit_timer.is_none() || matches!(self.xmit_timer, Some((_, XmitTimer::LossProbe))) && !is_retrans {
            self.set_xmit_timer(now);
        }
    }

    // ------------------------------------------------------------------ helpers

    /// Refresh the read-only fields of the CCA-visible state.
    fn sync_tp(&mut self, now: Time) {
        self.tp.now = now;
        self.tp.packets_out = self.packets_out();
        self.tp.in_flight = self.in_flight();
        self.tp.retrans_out = self.retrans_out;
        self.tp.srtt = self.rtt.srtt;
        self.tp.min_rtt = self.rtt.min_rtt();
    }

    fn clamp_cwnd(&mut self) {
        self.tp.cwnd = self.tp.cwnd.clamp(1, self.tp.cwnd_clamp.max(1));
    }

    /// `tcp_update_pacing_rate` for classic CCAs: 200% of cwnd/srtt in slow start
    /// (cwnd < ssthresh/2), 120% otherwise.
    fn update_pacing_rate(&mut self) {
        if self.cca.has_cong_control() || !self.tp.pacing_enabled {
            return;
        }
        let srtt = self.rtt.srtt;
        if srtt == 0 {
            self.tp.pacing_rate = 0; // unpaced until the first RTT sample
            return;
        }
        let ratio: u128 = if self.tp.cwnd < self.tp.ssthresh / 2 { 200 } else { 120 };
        let window = self.tp.cwnd.max(self.packets_out()) as u128 * self.params.mss as u128;
        self.tp.pacing_rate = (window * ratio * 10_000_000 / srtt as u128) as u64;
    }
}
