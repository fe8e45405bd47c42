//! TCP sender, modelled on Linux `tcp_input.c` / `tcp_output.c` / `tcp_recovery.c`
//! / `tcp_rate.c` (see `shared/spec/references.md`).
//!
//! The sender is split by concept:
//! * [`scoreboard`]: one entry per outstanding segment (sequence numbers count
//!   segments), with SACKed / lost / retransmitted flags and the delivery-rate
//!   snapshot taken at (re)transmission (`tcp_rate_skb_sent`).
//! * [`rack`]: loss detection by RACK (RFC 8985, `tcp_rack_detect_loss`) over a list of
//!   unSACKed, not-lost segments kept in transmission order, with Linux's
//!   reordering window (min_rtt/4, or 0 once 3 segments are SACKed or in
//!   recovery).
//! * [`timers`]: Tail Loss Probe (`tcp_schedule_loss_probe`, `tcp_send_loss_probe`) and
//!   RTO (RFC 6298 with Linux's RTO computation, 200 ms minimum, exponential backoff).
//! * [`recovery`]: Linux's states Open / Disorder / CWR / Recovery / Loss
//!   (`tcp_fastretrans_alert`), Proportional Rate Reduction (RFC 6937,
//!   `tcp_cwnd_reduction`), undo on D-SACK or timestamps (Eifel, `tcp_try_undo_*`).
//! * [`rate`]: delivery-rate samples as `tcp_rate.c`, app-limited marking.
//! * [`output`]: the transmit path, lost segments retransmitted first in sequence order
//!   (RFC 6675 NextSeg rule 1), and pacing as Linux internal pacing (EDT: each segment
//!   advances the next send time by len / pacing_rate). Classic CCAs are unpaced unless
//!   configured. `output::send_segment` is where TCP hands packets out.
//! * this module: the connection's state, its inputs (`start`, `on_ack`, `on_timer`)
//!   and queries.
//!
//! Deviations from Linux, each deliberate:
//! * Segmentation offload comes from the host (`host::gso`): with a GSO host the
//!   transmit path sends `tcp_tso_autosize` skbs (paced per skb) and defers small
//!   sends as `tcp_tso_should_defer`; with `gso_max_segs = 1` every skb is one packet.
//! * Deviation: no F-RTO (RFC 5682); spurious RTOs are undone by the timestamp
//!   (Eifel) check only.
//! * Deviation: no reordering detection (`tp->reord_seen` stays 0): the simulated
//!   paths never reorder, so RACK's reordering window never grows.
//! * Deviation: no slow-start-after-idle cwnd restart (`tcp_cwnd_restart`); bulk
//!   flows never idle, and finite flows here are single transfers.
//! * Deviation: the receive window is fixed (no autotuning); it only caps the
//!   flight size.

mod output;
mod rack;
mod rate;
mod recovery;
mod scoreboard;
mod timers;
#[cfg(test)]
mod tests;

use std::collections::VecDeque;

use crate::cc::{AckSample, BoxedCca, CaState, TcpState};
use crate::net::{Ack, Segment};
use crate::sim::SimRng;
use crate::tcp::rtt::RttEstimator;
use crate::units::Time;
use rate::RateAcc;
use scoreboard::{Seg, EVER_RETRANS, NONE, SACKED};
use timers::XmitTimer;

pub use crate::cc::INFINITE_SSTHRESH;

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
    /// The sending host's segmentation offload (skb sizes).
    pub gso: crate::host::Gso,
    /// The sending host's `CONFIG_HZ` (the CCA's jiffies clock).
    pub hz: u32,
}

/// Per-flow counters for the summary table (`repr(C)`: `segs_sent` first, see
/// [`Sender::counters`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
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
    /// Delivery-rate samples marked application-limited (`rs->is_app_limited`).
    pub app_limited_samples: u64,
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


/// Addresses in a sender's scoreboard (a ring of 64-byte entries) that its next
/// input will touch, for cache prefetches: see [`Sender::scoreboard_hint`].
#[derive(Debug, Clone, Copy, Default)]
pub struct ScoreboardHint {
    /// The first entry (the oldest outstanding segment).
    pub head: usize,
    /// Entries from `head` up to the ring's end, at most 4.
    pub head_entries: u8,
    /// Where the entries after the ring's end continue (its start), or, when they
    /// do not wrap, the slot after the last entry.
    pub wrap: usize,
    /// Entries from `wrap` on (saturated).
    pub wrapped: u16,
}

impl ScoreboardHint {
    /// Start loading, for an ACK, the first entries (up to 4, across the wrap) and
    /// the last entry with the two free slots after it (written by the segments the
    /// ACK releases: stores into lines that are not cached fill the CPU's store
    /// buffer and stall everything after them).
    pub fn prefetch(&self) {
        const SEG: usize = std::mem::size_of::<Seg>();
        let head = self.head_entries as usize;
        crate::tcp::prefetch(self.head as *const u8, head * SEG);
        let tail = self.wrap + self.wrapped as usize * SEG;
        if head < 4 && self.wrapped > 0 {
            crate::tcp::prefetch(self.wrap as *const u8, (4 - head).min(self.wrapped as usize) * SEG);
        }
        crate::tcp::prefetch(tail.wrapping_sub(SEG) as *const u8, 3 * SEG);
    }
}

/// The connection's state. `repr(C)` keeps the fields in this order: with thousands of
/// flows a sender has left the caches by the time its next ACK comes, and an ACK
/// reads nearly every field, so the fields of every input come first, in about the
/// order `on_ack` reads them (the flags it tests first), packed into the first
/// [`HOT_BYTES`] (9 cache lines; `align(64)` makes them 9 lines of memory, not 10),
/// and what an input reads rarely or never (the configuration, the counters other
/// than `segs_sent`, the events) comes last, outside what [`Sender::prefetch`] loads.
#[derive(Debug)]
#[repr(C, align(64))]
pub struct Sender {
    started: bool,
    stopped: bool,
    cwr_pending: bool,
    rack_advanced: bool,
    tlp_retrans: bool,
    pacing_blocked: bool,
    /// `cca.wants_seg_fates()`, asked once.
    seg_fates: bool,
    /// `params.ecn` (the copies of `params` below are what the inputs read, so that
    /// `params` can stay in a cold line).
    ecn: bool,
    sacked_out: u32,
    lost_out: u32,
    retrans_out: u32,
    /// Lost and not yet retransmitted.
    lost_unretx: u32,

    snd_una: u64,
    snd_nxt: u64,
    segs: VecDeque<Seg>,
    retx_hint: u64,
    ts_head: u64,
    ts_tail: u64,
    total_segs: Option<u64>,
    /// Segments the application has written so far (None: it always has more).
    /// Scripted drivers (`cc::testing`) and rate-limited applications limit it.
    app_written: Option<u64>,

    /// The CCA-visible connection state (cwnd, ssthresh, pacing rate, counters).
    pub tp: TcpState,
    rtt: RttEstimator,
    cca: BoxedCca,
    xmit_timer: Option<(Time, XmitTimer)>,

    // RACK.
    rack_xmit_time: Time,
    rack_end: u64,
    rack_rtt: Time,

    next_send_time: Time,
    /// Departure time of the last skb (`tcp_wstamp_ns`), for `tcp_tso_should_defer`.
    last_skb_time: Time,
    first_tx_time: Time,
    // tcp_cwnd_validate state.
    cwnd_usage_seq: u64,
    undo_marker: Option<u64>,
    // TLP.
    tlp_high_seq: Option<u64>,
    // Recovery.
    retrans_stamp: Time,
    high_seq: u64,
    undo_retrans: i64,

    backoff: u32,
    max_packets_out: u32,
    prior_ssthresh: u32,
    prr_delivered: u32,
    prr_out: u32,
    /// `params.rwnd_segs`, `params.mss` and `params.gso`, read by every transmit.
    rwnd_segs: u32,
    mss: u32,
    gso: crate::host::Gso,

    /// Its first field, `segs_sent` (every send counts it), is the last of the hot
    /// part; the others change only on losses, probes and reductions.
    pub counters: SenderCounters,

    // ---- not read by an input (see `Sender::prefetch`) ----
    /// The configuration as given (the inputs read the copies above; private so
    /// that the two cannot part).
    params: SenderParams,
    /// The `AckSample` handed to the CCA on the latest ACK, kept only when asked
    /// ([`Sender::keep_last_sample`]: the CCA test harness); no copy per ACK otherwise.
    last_sample: Option<Box<AckSample>>,
    pub events: Vec<(Time, SenderEvent)>,
}

/// The bytes of a sender that its inputs read: up to and including
/// `counters.segs_sent`.
const HOT_BYTES: usize = std::mem::offset_of!(Sender, counters) + std::mem::size_of::<u64>();

// The fields of every input in 9 cache lines (11 of 704 bytes before, which a
// 16-byte-aligned box spread over 12 lines of memory).
const _: () = assert!(HOT_BYTES <= 9 * 64);
const _: () = assert!(std::mem::offset_of!(SenderCounters, segs_sent) == 0);

impl Sender {
    pub fn new(params: SenderParams, cca: BoxedCca, rng: SimRng) -> Self {
        let total_segs = params.size_bytes.map(|b| b.div_ceil(params.mss as u64));
        let model_based = cca.has_cong_control();
        let seg_fates = cca.wants_seg_fates();
        let mut tp = TcpState::new(
            params.mss,
            params.initial_cwnd,
            params.rwnd_segs.max(2),
            params.pacing || model_based,
            rng,
        );
        tp.hz = params.hz;
        Self {
            rtt: RttEstimator::new(params.min_rto),
            rwnd_segs: params.rwnd_segs,
            mss: params.mss,
            gso: params.gso,
            ecn: params.ecn,
            params,
            cca,
            tp,
            snd_una: 0,
            snd_nxt: 0,
            total_segs,
            app_written: None,
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
            seg_fates,
            last_skb_time: 0,
            first_tx_time: 0,
            max_packets_out: 0,
            cwnd_usage_seq: 0,
            stopped: false,
            started: false,
            last_sample: None,
            counters: SenderCounters::default(),
            events: Vec::new(),
        }
    }

    // ------------------------------------------------------------------ queries

    pub fn params(&self) -> &SenderParams {
        &self.params
    }
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
    /// Lost segments not yet retransmitted.
    pub fn lost_not_retransmitted(&self) -> u32 {
        self.lost_unretx
    }
    /// From now on, keep the `AckSample` the CCA sees on each ACK ([`Sender::last_sample`]).
    pub fn keep_last_sample(&mut self) {
        self.last_sample = Some(Box::default());
    }
    /// The `AckSample` the CCA saw on the latest ACK, if [`Sender::keep_last_sample`]
    /// was called.
    pub fn last_sample(&self) -> Option<&AckSample> {
        self.last_sample.as_deref()
    }
    /// Refresh the CCA-visible counters (`tp.in_flight`, `tp.packets_out`, ...) and
    /// `tp.now` outside an input, for an observer that reads `tp` between events.
    pub fn refresh_tp(&mut self, now: Time) {
        self.sync_tp(now);
    }
    /// All data of a finite flow has been acknowledged.
    pub fn is_complete(&self) -> bool {
        self.total_segs.is_some_and(|t| self.snd_una >= t)
    }
    /// The application stopped offering data ([`Sender::stop`]).
    pub fn is_stopped(&self) -> bool {
        self.stopped
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

    /// Before `start`: the connection was opened by a three-way handshake
    /// (`tcp::handshake`) whose SYN-ACK gave the RTT sample `rtt` at `now`
    /// (`tcp_ack_update_rtt`: srtt, the RTO and min_rtt, so the CCA's `init` sees
    /// them as Linux's `tcp_init_transfer` does); `cwnd_one`: more than one SYN was
    /// resent, so the transfer starts at cwnd 1 (`tcp_init_transfer`).
    pub fn open_from_handshake(&mut self, now: Time, rtt: Time, cwnd_one: bool) {
        self.rtt.sample(rtt, self.snd_una, self.snd_nxt);
        self.rtt.update_min(now, rtt);
        if cwnd_one {
            self.tp.cwnd = 1;
        }
    }

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

    /// The application writes `segs` more segments (`tcp_sendmsg` + `tcp_push`):
    /// from now on the sender has exactly that much more new data, and sends what
    /// cwnd, the receive window and pacing allow.
    pub fn app_write(&mut self, now: Time, segs: u64, out: &mut Vec<Segment>) {
        let written = self.app_written.unwrap_or(self.snd_nxt).max(self.snd_nxt);
        self.app_written = Some(written + segs);
        self.transmit(now, out);
    }

    /// Before `start`: the application has written nothing yet; from now on the
    /// sender sends only what [`Sender::app_write`] adds (a rate-limited application).
    pub fn limit_app(&mut self) {
        self.app_written = Some(self.snd_nxt);
    }

    /// The application's data becomes unlimited (a bulk transfer) or ends at what
    /// it has written so far (it ran dry now); then the sender sends what it may.
    pub fn set_app_unlimited(&mut self, now: Time, unlimited: bool, out: &mut Vec<Segment>) {
        self.app_written = if unlimited { None } else { Some(self.app_written.unwrap_or(self.snd_nxt).max(self.snd_nxt)) };
        self.transmit(now, out);
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
        self.debug_check_scoreboard();
    }

    /// Ask the CPU to load the sender's cache lines an input reads (a hint, no effect
    /// on results; only the first [`HOT_BYTES`]):
    /// with thousands of flows they have left the caches by the time the flow's next
    /// ACK comes, and loading them all at once overlaps the misses instead of taking
    /// them one by one as `on_ack` reaches each. The run loop calls it when the ACK
    /// reaches its host, before the host's poll, and prefetches the scoreboard's
    /// entries from [`Sender::scoreboard_hint`] kept since the last input.
    pub fn prefetch(&self) {
        crate::tcp::prefetch(self as *const Self as *const u8, HOT_BYTES);
    }

    /// Where the scoreboard's entries the next input touches are: its first ones
    /// (the next cumulative ACK reads them) and the free slots after its last one
    /// (the segments the ACK releases are recorded there). Kept outside the sender,
    /// it lets a prefetch start loading them without first reading the sender's own
    /// (cold) line that holds the scoreboard; only a hint, the scoreboard may move
    /// before it is used.
    pub fn scoreboard_hint(&self) -> ScoreboardHint {
        let (first, second) = self.segs.as_slices();
        let (wrap, wrapped) = match second.is_empty() {
            true => (first.as_ptr_range().end as usize, 0),
            false => (second.as_ptr() as usize, second.len().min(u16::MAX as usize) as u16),
        };
        ScoreboardHint { head: first.as_ptr() as usize, head_entries: first.len().min(4) as u8, wrap, wrapped }
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
        for (start, end) in ack.sack_blocks() {
            let lo = start.max(self.snd_una);
            let hi = end.min(self.snd_nxt);
            let mut seg = lo;
            while seg < hi {
                let i = (seg - self.snd_una) as usize;
                if !self.segs[i].is(SACKED) {
                    if !self.segs[i].is(EVER_RETRANS) {
                        let x = self.segs[i].xmit_time;
                        sack_first_xmit = Some(sack_first_xmit.map_or(x, |f| f.min(x)));
                    }
                    self.mark_delivered(now, seg, true, ack.ece, &mut acc);
                }
                seg += 1;
            }
        }
        if let Some(dup) = ack.dsack() {
            self.count_dsack(dup);
        }

        // --- Cumulative ACK (`tcp_clean_rtx_queue`).
        let advanced = ack.cum > self.snd_una;
        let mut pkts_acked = 0u32;
        let mut seq_rtt: Option<Time> = None;
        while self.snd_una < ack.cum {
            let seg = self.snd_una;
            let s = self.segs[0];
            if !s.is(SACKED) {
                if !s.is(EVER_RETRANS) && seq_rtt.is_none() {
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
        let mut ca_rtt = if acc.has && !acc.rs.is_retrans { Some(now - acc.last_xmit) } else { None };
        let mut srtt_sample = seq_rtt.or(sack_first_xmit.map(|x| now - x));
        // RTTM rule: without a Karn-valid sample, an ACK that advances snd_una gives
        // one from the echoed timestamp, in the timestamp clock's 1 ms ticks and at
        // least one tick (`tcp_ack_update_rtt`, TCP_TS_HZ = 1000).
        if srtt_sample.is_none() && advanced && ack.tsecr != 0 && ack.tsecr <= now {
            srtt_sample = Some(crate::tcp::handshake::ts_rtt(now, ack.tsecr));
            ca_rtt = srtt_sample;
        }
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
                if !self.tlp_retrans || ack.dsack().is_some() {
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
        if let Some(kept) = self.last_sample.as_deref_mut() {
            *kept = sample;
        }
        // Deviation: Linux calls `pkts_acked` at the end of `tcp_clean_rtx_queue`,
        // before loss marking and `tcp_fastretrans_alert`, with only pkts_acked and the
        // RTT; here it runs after them so that its sample carries the ACK's rate sample
        // (Illinois' round counter reads it). A CCA that reads `tp.ca_state` in
        // `pkts_acked` sees the state this ACK moved to.
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
        self.debug_check_scoreboard();
    }

    /// A network element's feedback arrived (`net::feedback`): the CCA reacts
    /// (`CongestionControl::on_feedback`), then the sender sends what it may.
    pub fn on_feedback(&mut self, now: Time, fb: &crate::net::NetworkFeedback, out: &mut Vec<Segment>) {
        if !self.started || self.is_finished() {
            return;
        }
        self.sync_tp(now);
        self.cca.on_feedback(&mut self.tp, fb);
        self.clamp_cwnd();
        self.update_pacing_rate();
        self.transmit(now, out);
    }

    // ------------------------------------------------------------------ helpers

    /// Refresh the read-only fields of the CCA-visible state.
    fn sync_tp(&mut self, now: Time) {
        self.tp.now = now;
        self.tp.packets_out = self.packets_out();
        self.tp.snd_nxt = self.snd_nxt;
        self.tp.in_flight = self.in_flight();
        self.tp.retrans_out = self.retrans_out;
        self.tp.srtt = self.rtt.srtt;
        self.tp.min_rtt = self.rtt.min_rtt();
    }

    fn clamp_cwnd(&mut self) {
        self.tp.cwnd = self.tp.cwnd.clamp(1, self.tp.cwnd_clamp.max(1));
    }
}
