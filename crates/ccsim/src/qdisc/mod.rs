//! Queue disciplines. Each qdisc implements the small [`Qdisc`] trait; the
//! [`Queue`] wrapper owns all accounting (enqueued, dequeued, dropped by reason,
//! ECN-marked, sojourn times), so no AQM can forget to count.
//!
//! A qdisc gets a [`QdiscCtx`] on every call: the current time and the queue's own
//! seeded random stream (RED and PIE draw from it). Everything that happens to
//! packets other than the one returned — drops at enqueue (the arriving packet or,
//! for FQ-CoDel, packets of the fattest flow), drops and CE marks at dequeue (CoDel)
//! — goes into a [`Report`], which the wrapper counts and the world collects after
//! every enqueue and dequeue. [`signal_congestion`] is the one RFC 3168 rule every
//! AQM uses to decide between marking and dropping.

pub mod codel;
pub mod fifo;
mod fq;
pub mod fq_codel;
pub mod fq_pie;
pub mod htb;
pub mod ncf;
pub mod pie;
pub mod prio;
pub mod red;
pub mod tbf;
mod timed;

pub use fifo::{Fifo, ScheduledFifo};
pub use timed::{Queued, TimedFifo};

use crate::config::QdiscConfig;
use crate::net::{Ecn, FeedbackRequest, Packet};
use crate::sim::SimRng;
use crate::units::Time;

/// Why a packet was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    /// The queue was full (drop-tail, or FQ-CoDel's drop from the fattest flow).
    TailDrop,
    /// An AQM decided to drop.
    AqmDrop,
    /// Random loss configured on the link (Bernoulli or Gilbert–Elliott).
    RandomLoss,
}

impl DropReason {
    pub fn name(self) -> &'static str {
        match self {
            DropReason::TailDrop => "tail_drop",
            DropReason::AqmDrop => "aqm_drop",
            DropReason::RandomLoss => "random_loss",
        }
    }
}

/// What a qdisc sees of the world on each call.
#[derive(Debug)]
pub struct QdiscCtx<'a> {
    pub now: Time,
    /// The queue's own seeded stream (`sim::rng::Component::Qdisc`, link index).
    pub rng: &'a mut SimRng,
}

/// Packets dropped and CE-marked by one or more qdisc calls, besides the packet a
/// dequeue returns. A dropped arriving packet is reported here too.
#[derive(Debug, Default)]
pub struct Report {
    pub drops: Vec<(Packet, DropReason)>,
    /// Copies of packets whose codepoint was set to CE (they travel on).
    pub marks: Vec<Packet>,
    /// Messages for senders (network-assisted congestion control, `net::feedback`).
    pub feedback: Vec<FeedbackRequest>,
}

impl Report {
    pub fn drop(&mut self, p: Packet, reason: DropReason) {
        self.drops.push((p, reason));
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.drops.is_empty() && self.marks.is_empty() && self.feedback.is_empty()
    }
}

/// The congestion signal of RFC 3168 §5 (Linux `INET_ECN_set_ce`): when an AQM with
/// ECN enabled decides to signal congestion, an ECN-capable packet is marked CE (a
/// CE packet stays CE) and queued; a Not-ECT packet must be dropped. Returns `true`
/// when the packet was marked (and records it), `false` when the caller must drop it.
pub fn signal_congestion(p: &mut Packet, ecn_enabled: bool, report: &mut Report) -> bool {
    if ecn_enabled && p.ecn != Ecn::NotEct {
        p.ecn = Ecn::Ce;
        report.marks.push(*p);
        return true;
    }
    false
}

/// Mark CE without ever dropping (CoDel's `ce_threshold`): ECN-capable packets only.
pub fn mark_only(p: &mut Packet, report: &mut Report) -> bool {
    signal_congestion(p, true, report)
}

/// AQM state for the `queue_ts` samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AqmState {
    /// Current drop/mark probability (RED, PIE; FQ-PIE: the largest of its flows);
    /// NaN for disciplines without one.
    pub prob: f64,
    /// CoDel instances in the dropping state (0/1 for CoDel, a count for FQ-CoDel).
    pub dropping: u64,
    /// RED's average queue (bytes); NaN otherwise.
    pub avg_bytes: f64,
}

impl Default for AqmState {
    fn default() -> Self {
        Self { prob: f64::NAN, dropping: 0, avg_bytes: f64::NAN }
    }
}

pub trait Qdisc: std::fmt::Debug + Send {
    /// Offer a packet. Returns whether it was admitted; every dropped packet (the
    /// arriving one, or others pushed out to make room) goes to `report`.
    fn enqueue(&mut self, p: Packet, ctx: &mut QdiscCtx, report: &mut Report) -> bool;
    /// Next packet to transmit with its enqueue time; drops and marks made on the way
    /// go to `report`.
    fn dequeue(&mut self, ctx: &mut QdiscCtx, report: &mut Report) -> Option<Queued>;
    fn backlog_bytes(&self) -> u64;
    fn backlog_pkts(&self) -> u64;
    /// Whether `p` would be admitted if `extra_pkts` / `extra_bytes` more were queued
    /// (tc-like accounting of a packet held in service). Qdiscs without a hard limit
    /// admit.
    fn admits_with(&self, _p: &Packet, _extra_pkts: u64, _extra_bytes: u64) -> bool {
        true
    }
    fn aqm_state(&self) -> AqmState {
        AqmState::default()
    }
    /// A shaper that holds a backlog it may not send yet returns when it may (Linux's
    /// qdisc watchdog); the link polls the queue again then.
    fn next_ready(&self, _now: Time) -> Option<Time> {
        None
    }
}

/// Build the qdisc of `cfg`; `rng` is the queue's stream (FQ hashes are perturbed
/// from it once, here).
pub fn build(cfg: &QdiscConfig, rng: &mut SimRng) -> Box<dyn Qdisc> {
    match cfg {
        QdiscConfig::Pfifo { limit_packets } => Box::new(fifo::Fifo::packets(*limit_packets)),
        QdiscConfig::Bfifo { limit_bytes } => Box::new(fifo::Fifo::bytes(*limit_bytes)),
        QdiscConfig::Red(c) => Box::new(red::Red::new(c)),
        QdiscConfig::Codel(c) => Box::new(codel::Codel::new(c)),
        QdiscConfig::FqCodel(c) => Box::new(fq_codel::FqCodel::new(c, rng)),
        QdiscConfig::Pie(c) => Box::new(pie::Pie::new(c)),
        QdiscConfig::FqPie(c) => Box::new(fq_pie::FqPie::new(c, rng)),
        QdiscConfig::Prio(c) => Box::new(prio::Prio::new(c, rng)),
        QdiscConfig::Tbf(c) => Box::new(tbf::Tbf::new(c, rng)),
        QdiscConfig::Htb(c) => Box::new(htb::Htb::new(c, rng)),
        QdiscConfig::Ncf(c) => Box::new(ncf::Ncf::new(c, rng)),
    }
}

/// Cumulative counters of a queue.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueueStats {
    pub enqueued_pkts: u64,
    pub dequeued_pkts: u64,
    pub dequeued_bytes: u64,
    pub dropped_pkts: u64,
    pub tail_drops: u64,
    pub aqm_drops: u64,
    pub random_drops: u64,
    pub ecn_marked_pkts: u64,
}

/// Sojourn times of the packets dequeued since the last sample.
#[derive(Debug, Clone, Copy, Default)]
pub struct SojournWindow {
    pub count: u64,
    pub sum_ns: u64,
    pub max_ns: u64,
}

/// A queue's discipline. A plain FIFO (every access and egress link, and most
/// bottlenecks) is held inline and called directly, so its enqueue and dequeue inline
/// into `Queue`'s: a virtual call returned each dequeued packet through memory, and
/// the CPU could not forward those stores to the wider loads that read it back (30 %
/// of `Queue::dequeue`'s samples on scenario (c)). A plain FIFO whose link computes
/// departures at enqueue is a [`ScheduledFifo`] (see [`Queue::schedule_departures`]).
/// Any other qdisc is behind the trait.
#[derive(Debug)]
enum Discipline {
    Fifo(fifo::Fifo),
    Scheduled(fifo::ScheduledFifo),
    Other(Box<dyn Qdisc>),
}

/// A qdisc with its accounting and its random stream.
#[derive(Debug)]
pub struct Queue {
    qdisc: Discipline,
    rng: SimRng,
    pub stats: QueueStats,
    /// Drops and marks since the world last collected them.
    pub report: Report,
    pub sojourn: SojournWindow,
    /// Every `sojourn_every`-th dequeued packet's (dequeue time, sojourn) is kept
    /// for the `sojourn` table; 0 keeps none.
    pub sojourn_every: u64,
    pub sojourn_samples: Vec<(Time, Time)>,
}

impl Queue {
    pub fn new(qdisc: Box<dyn Qdisc>, rng: SimRng) -> Self {
        Self::with(Discipline::Other(qdisc), rng)
    }

    fn with(qdisc: Discipline, rng: SimRng) -> Self {
        Self {
            qdisc,
            rng,
            stats: QueueStats::default(),
            report: Report::default(),
            sojourn: SojournWindow::default(),
            sojourn_every: 0,
            sojourn_samples: Vec::new(),
        }
    }

    pub fn from_config(cfg: &QdiscConfig, mut rng: SimRng) -> Self {
        let qdisc = match cfg {
            QdiscConfig::Pfifo { limit_packets } => Discipline::Fifo(fifo::Fifo::packets(*limit_packets)),
            QdiscConfig::Bfifo { limit_bytes } => Discipline::Fifo(fifo::Fifo::bytes(*limit_bytes)),
            _ => Discipline::Other(build(cfg, &mut rng)),
        };
        Self::with(qdisc, rng)
    }

    /// Turn a plain FIFO (empty) into a [`ScheduledFifo`], for a link that computes
    /// each packet's start of service when it admits it; false (nothing done) for any
    /// other qdisc.
    pub fn schedule_departures(&mut self) -> bool {
        let Discipline::Fifo(f) = &self.qdisc else { return false };
        self.qdisc = Discipline::Scheduled(fifo::ScheduledFifo::from_fifo(f));
        true
    }

    /// Admit `p` at `now` to a scheduled FIFO that has room for it (the caller checked
    /// `admits_with`); its service starts at `start`, its sojourn is counted then.
    #[inline]
    pub fn push_scheduled(&mut self, p: &Packet, now: Time, start: Time) {
        let Discipline::Scheduled(f) = &mut self.qdisc else { unreachable!("not a scheduled FIFO") };
        f.push(fifo::Waiting { start, enqueued_at: now, wire_bytes: p.wire_bytes });
        self.stats.enqueued_pkts += 1;
    }

    /// Bring a scheduled FIFO up to `now`: every packet whose service started before
    /// `now` leaves the queue, counted as its dequeue at its start would have been.
    /// Returns the size of the last one (the packet in service at `now`, if the link
    /// is still busy), or none if none started. Nothing to do for other qdiscs.
    #[inline]
    pub fn advance(&mut self, now: Time) -> Option<u32> {
        let mut last = None;
        loop {
            let Discipline::Scheduled(f) = &mut self.qdisc else { return None };
            let Some(w) = f.pop_started(now) else { return last };
            self.count_dequeue(w.wire_bytes, w.start - w.enqueued_at, w.start);
            last = Some(w.wire_bytes);
        }
    }

    /// Offer a packet; a drop shows in `report` (and the counters).
    pub fn enqueue(&mut self, p: Packet, now: Time) {
        let (drops, marks) = (self.report.drops.len(), self.report.marks.len());
        let mut ctx = QdiscCtx { now, rng: &mut self.rng };
        let admitted = match &mut self.qdisc {
            Discipline::Fifo(f) => f.enqueue(p, &mut ctx, &mut self.report),
            Discipline::Scheduled(_) => unreachable!("a scheduled FIFO admits through push_scheduled"),
            Discipline::Other(q) => q.enqueue(p, &mut ctx, &mut self.report),
        };
        if admitted {
            self.stats.enqueued_pkts += 1;
        }
        self.count_since(drops, marks);
    }

    pub fn dequeue(&mut self, now: Time) -> Option<Packet> {
        let (drops, marks) = (self.report.drops.len(), self.report.marks.len());
        let mut ctx = QdiscCtx { now, rng: &mut self.rng };
        let q = match &mut self.qdisc {
            Discipline::Fifo(f) => f.dequeue(&mut ctx, &mut self.report),
            // Its packets leave through `advance`.
            Discipline::Scheduled(_) => None,
            Discipline::Other(q) => q.dequeue(&mut ctx, &mut self.report),
        };
        self.count_since(drops, marks);
        let q = q?;
        self.count_dequeue(q.packet.wire_bytes, now - q.enqueued_at, now);
        Some(q.packet)
    }

    /// A packet leaves the queue at `now` after `sojourn`: the counters, the sojourn
    /// summary and every `sojourn_every`-th sample (shared by `dequeue`,
    /// `pass_through` and `advance`).
    #[inline]
    fn count_dequeue(&mut self, wire_bytes: u32, sojourn: Time, now: Time) {
        self.stats.dequeued_pkts += 1;
        self.stats.dequeued_bytes += wire_bytes as u64;
        self.sojourn.count += 1;
        self.sojourn.sum_ns += sojourn;
        self.sojourn.max_ns = self.sojourn.max_ns.max(sojourn);
        if self.sojourn_every > 0 && self.stats.dequeued_pkts.is_multiple_of(self.sojourn_every) {
            self.sojourn_samples.push((now, sojourn));
        }
    }

    /// A packet reaching an idle transmitter whose plain FIFO is empty leaves it at
    /// once: count its enqueue and its dequeue (sojourn 0) as `enqueue` then
    /// `dequeue` would, without the copies into and out of the FIFO, and return true.
    /// False (nothing done) for any other qdisc, a backlog, or a packet the FIFO
    /// would not admit: the caller then takes the ordinary path.
    #[inline]
    pub fn pass_through(&mut self, p: &Packet, now: Time) -> bool {
        let passes = match &self.qdisc {
            Discipline::Fifo(f) => f.backlog_pkts() == 0 && f.admits_with(p, 0, 0),
            Discipline::Scheduled(f) => f.backlog_pkts() == 0 && f.admits_alone(p),
            Discipline::Other(_) => false,
        };
        if !passes {
            return false;
        }
        self.stats.enqueued_pkts += 1;
        self.count_dequeue(p.wire_bytes, 0, now);
        true
    }

    /// Record a drop that happened outside the qdisc proper (random loss on entry).
    pub fn drop_external(&mut self, p: Packet, reason: DropReason) {
        self.count_drop_reason(reason);
        self.report.drop(p, reason);
    }

    fn count_since(&mut self, drops: usize, marks: usize) {
        for i in drops..self.report.drops.len() {
            let reason = self.report.drops[i].1;
            self.count_drop_reason(reason);
        }
        self.stats.ecn_marked_pkts += (self.report.marks.len() - marks) as u64;
    }

    fn count_drop_reason(&mut self, reason: DropReason) {
        self.stats.dropped_pkts += 1;
        match reason {
            DropReason::TailDrop => self.stats.tail_drops += 1,
            DropReason::AqmDrop => self.stats.aqm_drops += 1,
            DropReason::RandomLoss => self.stats.random_drops += 1,
        }
    }

    // The per-packet queries match on the discipline rather than go through a trait
    // object: a FIFO's then inline, where the trait object cost an indirect call each
    // (`Link::start` asks for the backlog on every packet). A scheduled FIFO's
    // backlog is as of its last `advance`.
    #[inline]
    pub fn backlog_bytes(&self) -> u64 {
        match &self.qdisc {
            Discipline::Fifo(f) => f.backlog_bytes(),
            Discipline::Scheduled(f) => f.backlog_bytes(),
            Discipline::Other(q) => q.backlog_bytes(),
        }
    }
    #[inline]
    pub fn backlog_pkts(&self) -> u64 {
        match &self.qdisc {
            Discipline::Fifo(f) => f.backlog_pkts(),
            Discipline::Scheduled(f) => f.backlog_pkts(),
            Discipline::Other(q) => q.backlog_pkts(),
        }
    }
    pub fn aqm_state(&self) -> AqmState {
        match &self.qdisc {
            Discipline::Fifo(_) | Discipline::Scheduled(_) => AqmState::default(),
            Discipline::Other(q) => q.aqm_state(),
        }
    }
    /// See [`Qdisc::admits_with`].
    #[inline]
    pub fn admits_with(&self, p: &Packet, extra_pkts: u64, extra_bytes: u64) -> bool {
        match &self.qdisc {
            Discipline::Fifo(f) => f.admits_with(p, extra_pkts, extra_bytes),
            Discipline::Scheduled(f) => f.admits_with(p, extra_pkts, extra_bytes),
            Discipline::Other(q) => q.admits_with(p, extra_pkts, extra_bytes),
        }
    }
    /// Whether `p` would be admitted to this queue once it is empty (a scheduled
    /// FIFO's backlog may be stale, its limit is not); for other qdiscs, only if
    /// it is empty now.
    #[inline]
    pub fn admits_alone(&self, p: &Packet) -> bool {
        match &self.qdisc {
            Discipline::Scheduled(f) => f.admits_alone(p),
            _ => self.backlog_pkts() == 0 && self.admits_with(p, 0, 0),
        }
    }
    /// Whether every packet a scheduled FIFO holds starts service before `at` (true
    /// for other qdiscs: they schedule nothing ahead).
    #[inline]
    pub fn drained_before(&self, at: Time) -> bool {
        match &self.qdisc {
            Discipline::Scheduled(f) => f.last_start().is_none_or(|s| s < at),
            _ => true,
        }
    }
    #[inline]
    pub fn next_ready(&self, now: Time) -> Option<Time> {
        match &self.qdisc {
            Discipline::Fifo(f) => f.next_ready(now),
            Discipline::Scheduled(_) => None,
            Discipline::Other(q) => q.next_ready(now),
        }
    }
    /// The sojourn window since the last call, reset.
    pub fn take_sojourn(&mut self) -> SojournWindow {
        std::mem::take(&mut self.sojourn)
    }
}

#[cfg(test)]
pub(crate) mod testing {
    //! Helpers for qdisc unit tests.
    use super::*;
    use crate::net::{Payload, Segment};
    use crate::sim::{rng::Component, stream};

    pub fn pkt(flow: u32, seg: u64, bytes: u32, ecn: Ecn) -> Packet {
        Packet {
            flow,
            wire_bytes: bytes,
            route: 0,
            hop: 0,
            ecn,
            payload: Payload::Data(Segment { seg, len: bytes.saturating_sub(52), tsval: 0, is_retrans: false, cwr: false }),
        }
    }

    pub fn rng() -> SimRng {
        stream(7, Component::Qdisc, 0)
    }

    /// Drive a qdisc as a link of `rate_bps` would: `arrivals` are (time, packet) in
    /// time order; the link dequeues whenever it is idle. Returns every (dequeue
    /// time, sojourn) and the combined report.
    pub fn drain_at_rate(
        q: &mut dyn Qdisc,
        rate_bps: u64,
        arrivals: &[(Time, Packet)],
        until: Time,
    ) -> (Vec<(Time, Time, Packet)>, Report) {
        let mut rng = rng();
        let mut report = Report::default();
        let mut out = Vec::new();
        let mut next_free: Time = 0;
        let mut i = 0;
        let mut now: Time = 0;
        while now < until {
            // Admit every arrival up to the moment the transmitter frees up.
            let t_next_arrival = arrivals.get(i).map(|a| a.0);
            if q.backlog_pkts() == 0 {
                match t_next_arrival {
                    Some(t) => now = now.max(t),
                    None => break,
                }
            } else {
                now = now.max(next_free);
            }
            while i < arrivals.len() && arrivals[i].0 <= now {
                let mut ctx = QdiscCtx { now: arrivals[i].0, rng: &mut rng };
                q.enqueue(arrivals[i].1, &mut ctx, &mut report);
                i += 1;
            }
            let mut ctx = QdiscCtx { now, rng: &mut rng };
            match q.dequeue(&mut ctx, &mut report) {
                Some(d) => {
                    out.push((now, now - d.enqueued_at, d.packet));
                    next_free = now + d.packet.wire_bytes as u64 * 8 * 1_000_000_000 / rate_bps;
                    now = next_free;
                }
                None => {
                    if i >= arrivals.len() {
                        break;
                    }
                    now = arrivals[i].0;
                }
            }
        }
        (out, report)
    }
}
