//! A timeline harness for unit tests of congestion control algorithms.
//!
//! [`TimelineHarness`] owns one CCA and its [`TcpState`] and plays the part of the
//! TCP sender on an ideal path: no loss unless a test injects it, a fixed two-way
//! delay (`with_rtt`), and optionally a bottleneck that returns at most
//! `pps` ACKs per second (`with_bottleneck_pps`). It calls the CCA's hooks in the
//! order Linux does (`tcp_ack` → `tcp_clean_rtx_queue` → `tcp_fastretrans_alert` →
//! `tcp_cong_control`), keeps the `TcpState` fields current, and builds the
//! `RateSample` of each ACK the way `tcp_rate.c` does. Tests read like a timeline
//! (quiche `TestSender`, s2n-quic's CC tests):
//!
//! ```
//! use ccsim::cc::{build, testing::TimelineHarness};
//! use ccsim::units::ms;
//!
//! let mut h = TimelineHarness::new(build("reno", &serde_json::Value::Null).unwrap(), 1448, 10)
//!     .with_rtt(ms(50));
//! h.run_rounds(1);                 // send a window, ACK it packet by packet
//! assert_eq!(h.tp().cwnd, 20);     // slow start doubled it
//! h.lose(1);                       // enter Recovery: ssthresh = cca.ssthresh()
//! h.end_recovery();                // cwnd = ssthresh
//! assert_eq!(h.tp().cwnd, 10);
//! ```
//!
//! # API (stable: every CCA's tests use it)
//!
//! | call | what it does |
//! |---|---|
//! | `new(cca, mss, initial_cwnd)` | build the state, call `init` |
//! | `with_rtt(t)` / `set_rtt(t)` | path RTT for packets sent from now on (default 100 ms) |
//! | `with_bottleneck_pps(r)` / `set_bottleneck_pps(Some(r))` | ACKs return at most `r` per second |
//! | `with_cwnd_clamp(n)`, `with_pacing(bool)` | `tp.cwnd_clamp`, `tp.pacing_enabled` |
//! | `now()`, `advance(d)` | the clock; `advance` delivers nothing by itself |
//! | `send(n)` | transmit `n` segments now (lost ones are retransmitted first), ignoring cwnd |
//! | `fill_window()` | transmit while `in_flight < cwnd` (a bulk, cwnd-limited sender) |
//! | `ack(n)`, `ack_ece(n)` | one ACK that delivers the `n` oldest segments in flight |
//! | `step()` | bulk sender: `fill_window()`, advance to the next ACK the path returns, process it, `fill_window()` |
//! | `run_rounds(k)` | `k` round trips of a bulk sender over the path, one ACK per packet |
//! | `lose(n)` | the `n` oldest segments in flight are lost; enter Recovery if not yet |
//! | `end_recovery()` | leave Recovery/CWR (cwnd = ssthresh) or Loss now |
//! | `rto()` | retransmission timeout: everything outstanding lost, cwnd = 1, Loss |
//! | `undo()` | the last reduction was spurious: `undo_cwnd`, back to Open |
//! | `mark_app_limited()` | the application ran out of data (`tcp_rate_check_app_limited`) |
//! | `tp()`, `tp_mut()`, `cca()`, `cca_mut()` | inspect or poke the state |
//! | `last_sample()` | the `AckSample` of the last ACK |
//! | `violations()` | hook-contract breaches seen (cwnd 0 or above the clamp, pacing rate set to 0, ssthresh 0) |
//!
//! Recovery follows Linux: `lose(n)` runs `tcp_enter_recovery` (`prior_cwnd = cwnd`,
//! `ssthresh = cca.ssthresh()`, `set_state(Recovery)`), ACKs during a reduction run
//! PRR (`tcp_cwnd_reduction`, RFC 6937) for classic CCAs, and the reduction ends
//! (`set_state(Open)`, cwnd = ssthresh, `cwnd_event(CompleteCwr)`) once everything
//! sent before it is cumulatively ACKed, or on `end_recovery()`. Not modelled: dup-ACK
//! counting (Disorder), RACK timers, delayed ACKs, receive window, slow start after idle.
//!
//! After every hook the harness clamps cwnd to `[1, cwnd_clamp]`, as the sender does,
//! and records a [`TimelineHarness::violations`] entry if the CCA left it outside.

use std::collections::VecDeque;

use super::common::MinFilter;
use super::{AckSample, BoxedCca, CaEvent, CaState, RateSample, TcpState};
use crate::sim::rng::{stream, Component};
use crate::units::{ms, secs, Time, NS_PER_SEC};

use super::INFINITE_SSTHRESH;
/// Window of the min-RTT filter (`sysctl_tcp_min_rtt_wlen`, 300 s).
const MIN_RTT_WINDOW: Time = secs(300);
/// Default path RTT of the harness.
const DEFAULT_RTT: Time = ms(100);
/// `sysctl_tcp_pacing_ss_ratio` (%): pace at 2x the current rate in slow start.
const PACING_SS_RATIO: u64 = 200;
/// `sysctl_tcp_pacing_ca_ratio` (%): pace at 1.2x the current rate otherwise.
const PACING_CA_RATIO: u64 = 120;

/// A [`TcpState`] as a fresh connection has it (Linux `tcp_init_sock` defaults:
/// infinite ssthresh, no RTT sample yet, cwnd clamp "unlimited").
pub fn tcp_state(mss: u32, initial_cwnd: u32) -> TcpState {
    TcpState::new(mss, initial_cwnd, u32::MAX, false, stream(0, Component::Cca, 0))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SegState {
    /// Sent (or retransmitted) and travelling.
    InFlight,
    /// Delivered (SACKed) but not yet cumulatively ACKed.
    Sacked,
    /// Marked lost and not retransmitted yet.
    Lost,
}

/// Per-transmission record (Linux `tcp_skb_cb->tx` plus send time).
#[derive(Debug, Clone, Copy)]
struct Tx {
    /// Transmission order (monotone over all transmissions).
    order: u64,
    sent_at: Time,
    /// When the ideal path returns this segment's ACK.
    ack_due: Time,
    /// `tx.first_tx_mstamp`.
    first_tx: Time,
    /// `tx.delivered_mstamp`.
    delivered_time: Time,
    /// `tx.delivered`, `tx.delivered_ce`.
    delivered: u64,
    delivered_ce: u64,
    /// `tp.lost` at send (BBRv2's `tx.lost`).
    lost: u64,
    /// In flight right after this transmission, itself included.
    in_flight: u32,
    is_app_limited: bool,
    is_retrans: bool,
}

#[derive(Debug, Clone, Copy)]
struct Seg {
    state: SegState,
    tx: Tx,
}

/// The sender-side emulation; see the module docs.
#[derive(Debug)]
pub struct TimelineHarness {
    cca: BoxedCca,
    tp: TcpState,
    rtt: Time,
    /// Minimum spacing of returning ACKs (1/pps), if there is a bottleneck.
    ack_gap: Option<Time>,
    /// Arrival time of the latest ACK the path has scheduled (keeps the path FIFO).
    last_ack_due: Time,

    /// Scoreboard: segments from `snd_una` on, in sequence order.
    segs: VecDeque<Seg>,
    snd_una: u64,
    snd_nxt: u64,
    /// Sequence numbers of in-flight segments, in transmission order (= arrival order).
    pipe: VecDeque<u64>,
    next_order: u64,

    // ---- loss recovery (tcp_sock) ----
    high_seq: u64,
    prior_ssthresh: u32,
    undo_possible: bool,
    prr_delivered: u64,
    prr_out: u64,
    rto_count: u32,
    pending_losses: u32,

    // ---- cwnd validation (tcp_cwnd_validate) ----
    max_packets_out: u32,
    cwnd_usage_seq: u64,

    // ---- rate sampling / RTT (tcp_rate.c, tcp_input.c) ----
    first_tx: Time,
    min_rtt: MinFilter,

    last_sample: AckSample,
    violations: Vec<String>,
}

impl TimelineHarness {
    /// A fresh connection with `initial_cwnd` packets of `mss` bytes; calls `init`.
    pub fn new(cca: BoxedCca, mss: u32, initial_cwnd: u32) -> Self {
        let mut h = Self {
            cca,
            tp: tcp_state(mss, initial_cwnd),
            rtt: DEFAULT_RTT,
            ack_gap: None,
            last_ack_due: 0,
            segs: VecDeque::new(),
            snd_una: 0,
            snd_nxt: 0,
            pipe: VecDeque::new(),
            next_order: 0,
            high_seq: 0,
            prior_ssthresh: 0,
            undo_possible: false,
            prr_delivered: 0,
            prr_out: 0,
            rto_count: 0,
            pending_losses: 0,
            max_packets_out: 0,
            cwnd_usage_seq: 0,
            first_tx: 0,
            min_rtt: MinFilter::new(MIN_RTT_WINDOW),
            last_sample: AckSample::default(),
            violations: Vec::new(),
        };
        h.update_pacing_rate();
        h.hook("init", |c, tp| c.init(tp));
        h
    }

    pub fn with_rtt(mut self, rtt: Time) -> Self {
        self.rtt = rtt;
        self
    }
    /// Change the path RTT for packets sent from now on (ACKs stay in order).
    pub fn set_rtt(&mut self, rtt: Time) {
        self.rtt = rtt;
    }
    pub fn with_bottleneck_pps(mut self, pps: f64) -> Self {
        self.set_bottleneck_pps(Some(pps));
        self
    }
    /// ACKs return no faster than `pps` per second (`None`: no bottleneck).
    pub fn set_bottleneck_pps(&mut self, pps: Option<f64>) {
        self.ack_gap = pps.map(|r| {
            assert!(r > 0.0 && r.is_finite(), "bottleneck rate must be positive, got {r}");
            ((NS_PER_SEC as f64 / r).round() as Time).max(1)
        });
    }
    pub fn with_cwnd_clamp(mut self, clamp: u32) -> Self {
        self.tp.cwnd_clamp = clamp.max(1);
        self.tp.cwnd = self.tp.cwnd.min(self.tp.cwnd_clamp);
        self
    }
    pub fn with_pacing(mut self, on: bool) -> Self {
        self.tp.pacing_enabled = on;
        self
    }

    pub fn now(&self) -> Time {
        self.tp.now
    }
    pub fn advance(&mut self, dur: Time) {
        self.tp.now += dur;
    }
    pub fn tp(&self) -> &TcpState {
        &self.tp
    }
    pub fn tp_mut(&mut self) -> &mut TcpState {
        &mut self.tp
    }
    pub fn cca(&self) -> &dyn super::CongestionControl {
        self.cca.as_ref()
    }
    pub fn cca_mut(&mut self) -> &mut dyn super::CongestionControl {
        self.cca.as_mut()
    }
    /// The `AckSample` handed to the hooks on the last ACK.
    pub fn last_sample(&self) -> &AckSample {
        &self.last_sample
    }
    /// Hook-contract breaches seen so far (empty for a well-behaved CCA).
    pub fn violations(&self) -> &[String] {
        &self.violations
    }
    /// Segments marked lost and not yet retransmitted.
    pub fn lost_out(&self) -> u32 {
        self.segs.iter().filter(|s| s.state == SegState::Lost).count() as u32
    }

    // ------------------------------------------------------------------ sending

    /// Transmit `n` segments now regardless of cwnd: lost segments are
    /// retransmitted first (`tcp_xmit_retransmit_queue`), then new data. Returns
    /// how many were sent.
    pub fn send(&mut self, n: u32) -> u32 {
        for _ in 0..n {
            self.transmit_one();
        }
        if n > 0 {
            let limited = self.tp.in_flight >= self.tp.cwnd;
            self.cwnd_validate(limited);
        }
        n
    }

    /// Transmit while `in_flight < cwnd`, as a sender with unlimited data does.
    pub fn fill_window(&mut self) -> u32 {
        let mut sent = 0;
        while self.tp.in_flight < self.tp.cwnd {
            self.transmit_one();
            sent += 1;
        }
        // tcp_write_xmit: a bulk sender stopped by cwnd is cwnd-limited.
        self.cwnd_validate(true);
        sent
    }

    /// The application has no more data (`tcp_rate_check_app_limited`): marks the
    /// flow app-limited if it is not cwnd-limited and has no lost data to resend.
    pub fn mark_app_limited(&mut self) {
        if self.tp.in_flight < self.tp.cwnd && self.lost_out() <= self.tp.retrans_out {
            self.tp.app_limited = (self.tp.delivered + self.tp.in_flight as u64).max(1);
        }
    }

    fn transmit_one(&mut self) {
        let now = self.tp.now;
        // tcp_event_data_sent: first transmission with nothing in flight.
        if self.tp.in_flight == 0 {
            self.hook("cwnd_event(TxStart)", |c, tp| c.cwnd_event(tp, CaEvent::TxStart));
        }
        // tcp_rate_skb_sent: a new sending phase starts when nothing is outstanding.
        if self.tp.packets_out == 0 {
            self.first_tx = now;
            self.tp.delivered_time = now;
        }
        let retrans_idx = self.segs.iter().position(|s| s.state == SegState::Lost);
        let seq = match retrans_idx {
            Some(i) => self.snd_una + i as u64,
            None => {
                let seq = self.snd_nxt;
                self.snd_nxt += 1;
                seq
            }
        };
        let mut ack_due = now + self.rtt;
        if let Some(gap) = self.ack_gap {
            ack_due = ack_due.max(self.last_ack_due + gap);
        }
        // The path is FIFO: an ACK never overtakes an earlier one.
        ack_due = ack_due.max(self.last_ack_due);
        self.last_ack_due = ack_due;
        let tx = Tx {
            order: self.next_order,
            sent_at: now,
            ack_due,
            first_tx: self.first_tx,
            delivered_time: self.tp.delivered_time,
            delivered: self.tp.delivered,
            delivered_ce: self.tp.delivered_ce,
            lost: self.tp.lost,
            in_flight: self.tp.in_flight + 1,
            is_app_limited: self.tp.app_limited != 0,
            is_retrans: retrans_idx.is_some(),
        };
        self.next_order += 1;
        let seg = Seg { state: SegState::InFlight, tx };
        match retrans_idx {
            Some(i) => self.segs[i] = seg,
            None => self.segs.push_back(seg),
        }
        self.pipe.push_back(seq);
        if self.in_cwnd_reduction() {
            self.prr_out += 1;
        }
        self.refresh_counts();
    }

    /// `tcp_cwnd_validate`: remember whether the window was fully used.
    fn cwnd_validate(&mut self, is_cwnd_limited: bool) {
        if self.snd_una >= self.cwnd_usage_seq
            || is_cwnd_limited
            || (!self.tp.is_cwnd_limited && self.tp.packets_out > self.max_packets_out)
        {
            self.tp.is_cwnd_limited = is_cwnd_limited;
            self.max_packets_out = self.tp.packets_out;
            self.cwnd_usage_seq = self.snd_nxt;
        }
    }

    /// `tcp_is_cwnd_limited`.
    fn is_cwnd_limited(&self) -> bool {
        if self.tp.in_slow_start() {
            // In slow start, let cwnd grow to twice what was in flight.
            return (self.tp.cwnd as u64) < 2 * self.max_packets_out as u64;
        }
        self.tp.is_cwnd_limited
    }

    // ------------------------------------------------------------------ ACKs

    /// One ACK delivering the `n` oldest segments in flight (fewer if fewer are).
    pub fn ack(&mut self, n: u32) {
        self.process_ack(n, false);
    }

    /// As [`TimelineHarness::ack`], with the ECN echo (ECE) set.
    pub fn ack_ece(&mut self, n: u32) {
        self.process_ack(n, true);
    }

    /// As a bulk sender: fill the window, advance to the next ACK the path returns,
    /// process it, and refill the window. Returns false if nothing could be sent.
    pub fn step(&mut self) -> bool {
        self.fill_window();
        let Some(&seq) = self.pipe.front() else { return false };
        let due = self.seg(seq).tx.ack_due;
        if due > self.tp.now {
            self.tp.now = due;
        }
        self.process_ack(1, false);
        self.fill_window();
        true
    }

    /// Run `k` round trips of a bulk sender: fill the window, then process the
    /// path's ACKs one packet at a time, refilling after each, until the last
    /// packet sent before the round began is ACKed. Returns the rounds completed
    /// (fewer than `k` only if nothing could be sent).
    pub fn run_rounds(&mut self, k: u32) -> u32 {
        for done in 0..k {
            self.fill_window();
            let Some(&last) = self.pipe.back() else { return done };
            let marker = self.seg(last).tx.order;
            while let Some(&seq) = self.pipe.front() {
                let order = self.seg(seq).tx.order;
                let due = self.seg(seq).tx.ack_due;
                if due > self.tp.now {
                    self.tp.now = due;
                }
                self.process_ack(1, false);
                if order >= marker {
                    break;
                }
                self.fill_window();
            }
        }
        k
    }

    fn seg(&self, seq: u64) -> &Seg {
        &self.segs[(seq - self.snd_una) as usize]
    }
    fn seg_mut(&mut self, seq: u64) -> &mut Seg {
        let i = (seq - self.snd_una) as usize;
        &mut self.segs[i]
    }

    /// `tcp_ack` for an ACK that newly delivers the `n` oldest in-flight segments.
    fn process_ack(&mut self, n: u32, ece: bool) {
        if self.tp.packets_out == 0 {
            // Linux's `no_queue` path: nothing outstanding, no CC hooks.
            return;
        }
        let now = self.tp.now;
        let prior_in_flight = self.tp.in_flight;

        // ---- tcp_sacktag / tcp_clean_rtx_queue: mark delivered, advance snd_una.
        let mut acked_sacked = 0u32;
        let mut any_retrans = false;
        // (send time, order) of the most and least recently sent delivered segments.
        let mut newest: Option<Tx> = None;
        let mut oldest_sent: Option<Time> = None;
        for _ in 0..n {
            let Some(seq) = self.pipe.pop_front() else { break };
            let seg = self.seg_mut(seq);
            seg.state = SegState::Sacked;
            let tx = seg.tx;
            acked_sacked += 1;
            any_retrans |= tx.is_retrans;
            oldest_sent = Some(oldest_sent.map_or(tx.sent_at, |t: Time| t.min(tx.sent_at)));
            // tcp_rate_skb_delivered: sample the most recently sent segment.
            if newest.is_none_or(|nw| (tx.sent_at, tx.order) > (nw.sent_at, nw.order)) {
                newest = Some(tx);
            }
        }
        self.tp.delivered += acked_sacked as u64;
        if ece {
            self.tp.delivered_ce += acked_sacked as u64;
        }
        let mut pkts_acked = 0u32;
        while self.segs.front().is_some_and(|s| s.state == SegState::Sacked) {
            self.segs.pop_front();
            self.snd_una += 1;
            pkts_acked += 1;
        }
        let advanced_una = pkts_acked > 0;
        if advanced_una {
            self.rto_count = 0;
        }
        self.refresh_counts();

        // ---- RTT (tcp_ack_update_rtt): Karn — no sample if a retransmission was acked.
        let rtt = match (newest, any_retrans) {
            (Some(tx), false) => Some(now - tx.sent_at),
            _ => None,
        };
        if let (Some(ca_rtt), Some(first)) = (rtt, oldest_sent) {
            self.tp.min_rtt = self.min_rtt.update(now, ca_rtt);
            let seq_rtt = now - first;
            self.tp.srtt = if self.tp.srtt == 0 { seq_rtt } else { (7 * self.tp.srtt + seq_rtt) / 8 };
        }

        // ---- tcp_rate_gen.
        let losses = std::mem::take(&mut self.pending_losses);
        let rs = self.rate_gen(newest, acked_sacked, losses, prior_in_flight, rtt);
        let sample = AckSample { pkts_acked, acked_sacked, rtt, prior_in_flight, ece, advanced_una, rs };
        self.last_sample = sample;

        // ---- pkts_acked (called at the end of tcp_clean_rtx_queue).
        self.hook("pkts_acked", |c, tp| c.pkts_acked(tp, &sample));

        // ---- tcp_fastretrans_alert: ECN response, end of a reduction.
        if ece && self.tp.ca_state < CaState::Cwr {
            self.enter_cwr();
        }
        let recovered = self.snd_una >= self.high_seq;
        match self.tp.ca_state {
            CaState::Recovery if recovered => {
                // tcp_try_undo_recovery (no undo) -> Open; tcp_end_cwnd_reduction.
                self.set_ca_state(CaState::Open);
                self.end_cwnd_reduction(true);
            }
            CaState::Cwr if self.snd_una > self.high_seq => {
                self.end_cwnd_reduction(false);
                self.set_ca_state(CaState::Open);
            }
            CaState::Loss if recovered && self.lost_out() == 0 => {
                self.set_ca_state(CaState::Open);
            }
            _ => {}
        }

        // ---- tcp_cong_control.
        if self.cca.has_cong_control() {
            self.hook("cong_control", |c, tp| c.cong_control(tp, &sample));
        } else {
            if self.in_cwnd_reduction() {
                self.cwnd_reduction(acked_sacked, losses, advanced_una);
            } else if advanced_una && self.is_cwnd_limited() {
                // tcp_may_raise_cwnd (FLAG_DATA_ACKED) and cwnd-limited.
                self.hook("cong_avoid", |c, tp| c.cong_avoid(tp, &sample));
            }
            self.update_pacing_rate();
        }
    }

    /// `tcp_rate_gen` for the segment `newest` (the most recently sent one delivered).
    fn rate_gen(
        &mut self,
        newest: Option<Tx>,
        acked_sacked: u32,
        losses: u32,
        prior_in_flight: u32,
        rtt: Option<Time>,
    ) -> RateSample {
        let now = self.tp.now;
        if self.tp.app_limited != 0 && self.tp.delivered > self.tp.app_limited {
            self.tp.app_limited = 0;
        }
        if acked_sacked > 0 {
            self.tp.delivered_time = now;
        }
        let mut rs = RateSample { acked_sacked, losses, prior_in_flight, rtt, ..Default::default() };
        let Some(tx) = newest else { return rs };
        // The send phase of the window ended with this segment.
        self.first_tx = tx.sent_at;
        rs.prior_delivered = tx.delivered;
        rs.prior_delivered_ce = tx.delivered_ce;
        rs.prior_time = tx.delivered_time;
        rs.is_app_limited = tx.is_app_limited;
        rs.is_retrans = tx.is_retrans;
        rs.tx_in_flight = tx.in_flight;
        rs.lost = (self.tp.lost - tx.lost) as u32;
        rs.delivered = (self.tp.delivered - tx.delivered) as i64;
        rs.delivered_ce = (self.tp.delivered_ce - tx.delivered_ce) as i64;
        rs.snd_interval = tx.sent_at - tx.first_tx;
        rs.rcv_interval = now - tx.delivered_time;
        rs.interval = rs.snd_interval.max(rs.rcv_interval);
        // An interval shorter than min_rtt means ACK compression etc.: no sample.
        // (Before any RTT sample min_rtt is "infinite", so no sample is valid, as in Linux.)
        if rs.interval < self.tp.min_rtt {
            rs.interval = 0;
        }
        rs
    }

    // ------------------------------------------------------------------ losses

    /// The `n` oldest segments in flight are lost (reported in the next ACK's
    /// `rs.losses`). Enters Recovery (`tcp_enter_recovery`) unless already in
    /// Recovery or Loss.
    pub fn lose(&mut self, n: u32) {
        let mut k = 0;
        for _ in 0..n {
            let Some(seq) = self.pipe.pop_front() else { break };
            self.seg_mut(seq).state = SegState::Lost;
            k += 1;
        }
        if k == 0 {
            return;
        }
        self.tp.lost += k as u64;
        self.pending_losses += k;
        self.refresh_counts();
        if self.tp.ca_state < CaState::Recovery {
            self.prior_ssthresh = 0;
            self.undo_possible = true;
            if !self.in_cwnd_reduction() {
                self.prior_ssthresh = self.current_ssthresh();
                self.init_cwnd_reduction();
            }
            self.set_ca_state(CaState::Recovery);
        }
    }

    /// Leave the current reduction now, as if everything sent before it had been
    /// ACKed: Recovery/CWR end with cwnd = ssthresh (classic CCAs), Loss just ends.
    pub fn end_recovery(&mut self) {
        match self.tp.ca_state {
            CaState::Recovery => {
                self.set_ca_state(CaState::Open);
                self.end_cwnd_reduction(true);
            }
            CaState::Cwr => {
                self.end_cwnd_reduction(false);
                self.set_ca_state(CaState::Open);
            }
            CaState::Loss => self.set_ca_state(CaState::Open),
            _ => {}
        }
    }

    /// Retransmission timeout (`tcp_enter_loss`): everything outstanding and not
    /// SACKed is lost, cwnd = 1, state Loss. No-op with nothing outstanding.
    pub fn rto(&mut self) {
        if self.tp.packets_out == 0 {
            return;
        }
        // Reduce ssthresh only once per window of data (not on a repeated timeout).
        let st = self.tp.ca_state;
        if st <= CaState::Disorder || self.high_seq <= self.snd_una || (st == CaState::Loss && self.rto_count == 0) {
            self.prior_ssthresh = self.current_ssthresh();
            self.tp.prior_cwnd = self.tp.cwnd;
            let ss = self.cca.ssthresh(&mut self.tp);
            self.set_ssthresh(ss);
            self.hook("cwnd_event(Loss)", |c, tp| c.cwnd_event(tp, CaEvent::Loss));
            self.undo_possible = true;
        }
        // tcp_timeout_mark_lost.
        let mut k = 0u64;
        for seg in self.segs.iter_mut() {
            if seg.state == SegState::InFlight {
                // A lost retransmission counts again, as in tcp_mark_skb_lost.
                seg.state = SegState::Lost;
                k += 1;
            }
        }
        self.pipe.clear();
        self.tp.lost += k;
        self.refresh_counts();
        self.tp.cwnd = self.tp.in_flight + 1;
        self.tp.cwnd_cnt = 0;
        self.set_ca_state(CaState::Loss);
        self.high_seq = self.snd_nxt;
        self.rto_count += 1;
    }

    /// The last reduction was spurious (DSACK / F-RTO undo): in Recovery or Loss,
    /// restore cwnd via `undo_cwnd` and the prior ssthresh, unmark the lost
    /// segments (their originals are still travelling), return to Open.
    pub fn undo(&mut self) {
        if !matches!(self.tp.ca_state, CaState::Recovery | CaState::Loss) || !self.undo_possible {
            return;
        }
        // tcp_undo_cwnd_reduction.
        if self.prior_ssthresh != 0 {
            let cwnd = self.cca.undo_cwnd(&mut self.tp);
            self.tp.cwnd = cwnd;
            self.check_cwnd("undo_cwnd");
            if self.prior_ssthresh > self.tp.ssthresh {
                self.tp.ssthresh = self.prior_ssthresh;
            }
        }
        let base = self.snd_una;
        let mut back: Vec<(u64, u64)> = Vec::new();
        for (i, seg) in self.segs.iter_mut().enumerate() {
            if seg.state == SegState::Lost {
                seg.state = SegState::InFlight;
                back.push((seg.tx.order, base + i as u64));
            }
        }
        if !back.is_empty() {
            let mut all: Vec<(u64, u64)> = self.pipe.iter().map(|&s| (self.seg(s).tx.order, s)).collect();
            all.extend(back);
            all.sort_unstable();
            self.pipe = all.into_iter().map(|(_, s)| s).collect();
        }
        self.undo_possible = false;
        self.rto_count = 0;
        self.refresh_counts();
        self.set_ca_state(CaState::Open);
    }

    /// `tcp_enter_cwr`: ECN-triggered reduction (not undoable).
    fn enter_cwr(&mut self) {
        self.prior_ssthresh = 0;
        self.undo_possible = false;
        self.init_cwnd_reduction();
        self.set_ca_state(CaState::Cwr);
    }

    /// `tcp_init_cwnd_reduction`.
    fn init_cwnd_reduction(&mut self) {
        self.high_seq = self.snd_nxt;
        self.tp.cwnd_cnt = 0;
        self.tp.prior_cwnd = self.tp.cwnd;
        self.prr_delivered = 0;
        self.prr_out = 0;
        let ss = self.cca.ssthresh(&mut self.tp);
        self.set_ssthresh(ss);
    }

    /// `tcp_end_cwnd_reduction`.
    fn end_cwnd_reduction(&mut self, was_recovery: bool) {
        if self.cca.has_cong_control() {
            return;
        }
        // cwnd = ssthresh in CWR, or in Recovery unless it was undone.
        if self.tp.ssthresh < INFINITE_SSTHRESH && (!was_recovery || self.undo_possible) {
            self.tp.cwnd = self.tp.ssthresh.clamp(1, self.tp.cwnd_clamp);
        }
        self.hook("cwnd_event(CompleteCwr)", |c, tp| c.cwnd_event(tp, CaEvent::CompleteCwr));
    }

    /// `tcp_cwnd_reduction`: Proportional Rate Reduction (RFC 6937).
    fn cwnd_reduction(&mut self, newly_acked_sacked: u32, newly_lost: u32, una_advanced: bool) {
        if newly_acked_sacked == 0 || self.tp.prior_cwnd == 0 {
            return;
        }
        let in_flight = self.tp.in_flight as i64;
        let delta = self.tp.ssthresh.min(i32::MAX as u32) as i64 - in_flight;
        self.prr_delivered += newly_acked_sacked as u64;
        let mut sndcnt: i64 = if delta < 0 {
            let dividend = self.tp.ssthresh as u64 * self.prr_delivered + self.tp.prior_cwnd as u64 - 1;
            (dividend / self.tp.prior_cwnd as u64) as i64 - self.prr_out as i64
        } else {
            let mut s = (self.prr_delivered as i64 - self.prr_out as i64).max(newly_acked_sacked as i64);
            if una_advanced && newly_lost == 0 {
                s += 1;
            }
            s.min(delta)
        };
        // Force a fast retransmit upon entering fast recovery.
        sndcnt = sndcnt.max(if self.prr_out > 0 { 0 } else { 1 });
        let cwnd = (in_flight + sndcnt).clamp(1, self.tp.cwnd_clamp as i64);
        self.tp.cwnd = cwnd as u32;
    }

    /// `tcp_current_ssthresh`.
    fn current_ssthresh(&self) -> u32 {
        if self.in_cwnd_reduction() {
            self.tp.ssthresh
        } else {
            self.tp.ssthresh.max((self.tp.cwnd >> 1) + (self.tp.cwnd >> 2))
        }
    }

    fn in_cwnd_reduction(&self) -> bool {
        matches!(self.tp.ca_state, CaState::Cwr | CaState::Recovery)
    }

    /// `tcp_set_ca_state`: the CCA hears of the change before it happens.
    fn set_ca_state(&mut self, new: CaState) {
        self.hook("set_state", |c, tp| c.set_state(tp, new));
        self.tp.ca_state = new;
    }

    fn set_ssthresh(&mut self, ss: u32) {
        if ss == 0 {
            self.violations.push(format!("ssthresh() returned 0 at t={} ns", self.tp.now));
        }
        self.tp.ssthresh = ss.max(1);
    }

    /// `tcp_update_pacing_rate` (classic CCAs): 200% of cwnd/srtt in slow start,
    /// 120% otherwise, in bytes per second.
    fn update_pacing_rate(&mut self) {
        let ratio = if (self.tp.cwnd as u64) < self.tp.ssthresh as u64 / 2 { PACING_SS_RATIO } else { PACING_CA_RATIO };
        let window = self.tp.cwnd.max(self.tp.packets_out) as u128;
        let bytes = self.tp.mss as u128 * window * ratio as u128;
        let rate = if self.tp.srtt > 0 {
            // bytes · 1e9 / (100 · srtt_ns)
            bytes * NS_PER_SEC as u128 / (100 * self.tp.srtt as u128)
        } else {
            // No RTT yet: Linux skips the division by srtt_us (<< 3), leaving
            // mss · 80000 · ratio · cwnd — effectively unpaced.
            bytes * 80_000
        };
        self.tp.pacing_rate = rate.clamp(1, u64::MAX as u128) as u64;
    }

    /// Recompute `packets_out`, `in_flight`, `retrans_out` from the scoreboard.
    fn refresh_counts(&mut self) {
        self.tp.packets_out = self.segs.len() as u32;
        self.tp.in_flight = self.pipe.len() as u32;
        self.tp.retrans_out = self.pipe.iter().filter(|&&s| self.seg(s).tx.is_retrans).count() as u32;
        debug_assert!(
            self.tp.in_flight <= self.tp.packets_out,
            "in_flight {} > packets_out {}",
            self.tp.in_flight,
            self.tp.packets_out
        );
    }

    // ------------------------------------------------------------------ hooks

    /// Call a hook, then enforce the sender's contract on what it wrote.
    fn hook(&mut self, name: &str, f: impl FnOnce(&mut dyn super::CongestionControl, &mut TcpState)) {
        let pacing_before = self.tp.pacing_rate;
        f(self.cca.as_mut(), &mut self.tp);
        if self.tp.pacing_rate != pacing_before && self.tp.pacing_rate == 0 {
            self.violations.push(format!("{name} set pacing_rate to 0 at t={} ns", self.tp.now));
        }
        self.check_cwnd(name);
    }

    fn check_cwnd(&mut self, name: &str) {
        let (cwnd, clamp) = (self.tp.cwnd, self.tp.cwnd_clamp);
        if cwnd == 0 || cwnd > clamp {
            self.violations.push(format!("{name} left cwnd {cwnd} outside [1, {clamp}] at t={} ns", self.tp.now));
            self.tp.cwnd = cwnd.clamp(1, clamp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::reno::Reno;

    fn harness() -> TimelineHarness {
        TimelineHarness::new(Box::new(Reno), 1448, 10).with_rtt(ms(50))
    }

    #[test]
    fn rate_sample_delivery_rate_matches_bottleneck() {
        let mut h = harness().with_bottleneck_pps(1000.0);
        h.run_rounds(8);
        let rs = h.last_sample().rs;
        let rate = rs.delivery_rate_pps().expect("valid sample");
        assert!((rate - 1000.0).abs() < 20.0, "delivery rate {rate} pkt/s vs 1000");
        assert!(rs.interval >= h.tp().min_rtt);
        assert_eq!(rs.delivered as u64, h.tp().delivered - rs.prior_delivered);
        assert_eq!(rs.acked_sacked, 1);
        assert!(rs.tx_in_flight >= 1 && !rs.is_app_limited);
        assert_eq!(h.tp().min_rtt, ms(50));
    }

    #[test]
    fn rate_sample_without_rtt_sample_is_invalid() {
        let mut h = harness();
        h.send(2);
        h.advance(ms(50));
        h.lose(1); // the first is lost, retransmitted, and its ACK carries no RTT
        h.send(1);
        h.advance(ms(50));
        h.ack(2);
        assert_eq!(h.last_sample().rtt, None, "Karn: a retransmission was acked");
        assert_eq!(h.last_sample().rs.interval, 0, "no min_rtt yet: no valid rate sample");
        assert_eq!(h.last_sample().rs.losses, 1);
    }

    #[test]
    fn mark_app_limited_flags_samples_until_delivered_passes_mark() {
        let mut h = harness();
        h.send(3);
        h.mark_app_limited();
        assert_eq!(h.tp().app_limited, 3, "mark = delivered + in_flight");
        h.send(1);
        h.advance(ms(50));
        h.ack(3);
        assert_eq!(h.tp().app_limited, 3, "not yet: delivered 3 <= mark 3");
        h.ack(1);
        assert!(h.last_sample().rs.is_app_limited, "the sampled packet was sent app-limited");
        assert_eq!(h.tp().app_limited, 0, "cleared once delivered passed the mark");
    }

    #[test]
    fn accounting_tracks_sacks_losses_and_retransmissions() {
        let mut h = harness();
        h.send(10);
        h.lose(2);
        assert_eq!((h.tp().packets_out, h.tp().in_flight, h.tp().lost), (10, 8, 2));
        h.advance(ms(50));
        h.ack(8); // SACKs above the hole: snd_una does not move
        assert_eq!(h.last_sample().pkts_acked, 0);
        assert!(!h.last_sample().advanced_una);
        assert_eq!((h.tp().packets_out, h.tp().in_flight, h.tp().delivered), (10, 0, 8));
        h.send(2); // retransmissions
        assert_eq!((h.tp().in_flight, h.tp().retrans_out), (2, 2));
        h.advance(ms(50));
        h.ack(2);
        assert_eq!(h.last_sample().pkts_acked, 10);
        assert_eq!((h.tp().packets_out, h.tp().in_flight, h.tp().delivered), (0, 0, 10));
        assert_eq!(h.tp().ca_state, CaState::Open, "recovery ended when the window was acked");
        assert_eq!(h.tp().cwnd, 5, "cwnd = ssthresh at the end of recovery");
        assert!(h.violations().is_empty());
    }

    #[test]
    fn ack_ece_enters_cwr_once() {
        let mut h = harness();
        h.send(10);
        h.advance(ms(50));
        h.ack_ece(1);
        assert_eq!(h.tp().ca_state, CaState::Cwr);
        assert_eq!(h.tp().ssthresh, 5);
        assert_eq!(h.tp().delivered_ce, 1);
        h.ack_ece(1);
        assert_eq!(h.tp().ssthresh, 5, "one reduction per window");
    }
}
