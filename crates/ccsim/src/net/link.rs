//! A unidirectional link: queue discipline → transmitter → propagation delay line.
//!
//! The transmitter serializes one packet at a time at the link's current rate,
//! carrying the sub-nanosecond remainder so long runs do not drift. A packet goes onto
//! the delay line, a queue of (arrival time, packet) in arrival order, the moment its
//! transmission starts: with a constant delay, arrival order is transmission order
//! and the line is a FIFO. A jittered link (`jitter`) draws each packet's delay
//! uniformly from [delay − jitter, delay + jitter), as netem's `delay D J` does
//! (`tabledist` without a table: `rnd % 2σ + μ − σ`), and sorts it into the line by
//! arrival time, after packets due at the same instant, as netem's time-sorted tfifo
//! (`tfifo_enqueue`): packets overtake each other, as on a netem link without `rate`.
//! Each packet on a jittered line has an arrival event of its own (the head may
//! change), and such a link takes no part in cut-through (`cut_through.rs`). The link
//! holds at most one pending event of each kind: the head-of-line arrival, and a
//! transmit completion only while packets wait in the queue (a packet that finds
//! the link idle costs no completion event: the transmitter is just busy until a
//! known time). So the event queue holds O(links), not O(packets in flight), and a
//! packet crossing a link that never queues costs one event (its arrival), or none
//! when it is cut through to the next link (`cut_through.rs`).
//!
//! **Departures at enqueue** ([`Link::schedule_departures`]). On a link whose qdisc
//! is a plain drop-tail FIFO (pfifo, bfifo), whose rate never changes and whose
//! delay is constant, a packet's start of service is known when it is admitted: the
//! later of its arrival and the end of the packet before it (nothing reorders,
//! removes or delays a queued packet, and the remainder carry runs in admission
//! order either way). Such a link puts every admitted packet onto its delay line at
//! once, with its arrival time, and needs no transmit-completion event at all. Its
//! queue (a `ScheduledFifo`) keeps the start, enqueue time and size of the packets
//! not started yet, and [`Link::advance`] brings it up to an instant before anything
//! reads it (an admission, a sample, the warm-up snapshot, `close`): every packet whose
//! service started *before* that instant then leaves the queue, counted at its start
//! as a dequeue would have been. A packet starting at the very instant of an
//! admission or a sample still counts as queued there, as if the eager link's
//! completion event at that instant came after the other event (the eager model
//! orders such ties by when the events were scheduled; this order is one of them).

use std::collections::VecDeque;

use rand::Rng;

use crate::net::loss::{LossConfig, LossModel};
use crate::net::Packet;
use crate::qdisc::{DropReason, Queue, QueueStats};
use crate::sim::SimRng;
use crate::units::{serialization, serialization_by, Bps, Divisor, Time};

pub type LinkId = u32;

#[derive(Debug)]
pub struct Link {
    pub name: String,
    pub rate_bps: Bps,
    /// `rate_bps` as a divisor (serialization divides by it for every packet).
    rate_div: Divisor,
    /// The fastest rate the link has had so far (for the one-way delay floor).
    peak_rate_bps: Bps,
    pub delay: Time,
    /// Per-packet delay variation: each packet's delay is uniform in
    /// [delay − jitter, delay + jitter) (0: constant).
    jitter: Time,
    /// The jitter's own stream (`Component::LinkJitter`); used only when jitter > 0.
    jitter_rng: Option<SimRng>,
    /// Random loss on entry.
    loss: LossModel,
    pub queue: Queue,
    /// Rate changes (time, new rate), in increasing time order; the event loop applies them.
    pub rate_schedule: Vec<(Time, Bps)>,
    /// The transmitter is busy serializing a packet until this time.
    busy_until: Time,
    /// Wire bytes of the packet being serialized (while `busy_until` is ahead).
    in_tx_bytes: u32,
    /// A transmit completion event is pending (only while packets wait).
    tx_wake_pending: bool,
    remainder: u64,
    line: VecDeque<OnLine>,
    /// Data packets currently on this link (queued, in transmission or propagating).
    pub data_in_link: u64,
    /// Handshake packets (SYN, SYN-ACK, their ACK) currently on this link.
    pub handshake_in_link: u64,
    /// Whether queue samples are recorded for this link.
    pub recorded: bool,
    /// tc-like accounting: the packet in service counts toward the qdisc limit.
    pub limit_includes_head: bool,
    /// Packets and bytes whose serialization started (the link's byte counters;
    /// [`Link::close`] takes back a packet still being serialized at the end).
    pub tx_pkts: u64,
    pub tx_bytes: u64,
    /// The queue's counters at the warm-up (zero until then), for window counts.
    pub stats_at_warmup: QueueStats,
    /// A poll of a shaping qdisc already scheduled at this time.
    poll_at: Option<Time>,
    /// A plain FIFO without random loss or rate changes: it may take packets cut
    /// through from its one feeding link (see `cut_through.rs`).
    pub plain_fifo: bool,
    /// Its qdisc may send network feedback (which enters the reverse path mid-route).
    pub may_send_feedback: bool,
    /// `stats_at_warmup` holds the counters at the warm-up already.
    warmup_taken: bool,
    /// The packet serialized last went on to the next link at once (it is not on
    /// this link's delay line).
    last_cut: bool,
    /// Departures are computed at enqueue (see the module's documentation): the
    /// queue is a `ScheduledFifo` and no transmit completion is ever scheduled.
    scheduled: bool,
}

/// A packet on the delay line with its arrival time. The packet comes first
/// (`repr(C)`), as in the qdisc's `Queued`: the entry and the packet are then copied
/// in 16-byte pieces at the same offsets, so the CPU can forward the stores of one
/// copy to the loads of the next.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
struct OnLine {
    p: Packet,
    at: Time,
}

/// What the world must schedule after a link operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkWake {
    None,
    TxDone(Time),
    /// The queue holds packets its shaper releases only at this time: poll then.
    Poll(Time),
}

impl Link {
    /// `loss_rng` is the link's own loss stream (`Component::LinkLoss`).
    pub fn new(name: String, rate_bps: Bps, delay: Time, loss: LossConfig, queue: Queue, loss_rng: SimRng) -> Self {
        Self {
            name,
            rate_bps,
            rate_div: Divisor::new(rate_bps),
            peak_rate_bps: rate_bps,
            delay,
            jitter: 0,
            jitter_rng: None,
            loss: LossModel::new(loss, loss_rng),
            queue,
            rate_schedule: Vec::new(),
            busy_until: 0,
            in_tx_bytes: 0,
            tx_wake_pending: false,
            remainder: 0,
            line: VecDeque::new(),
            data_in_link: 0,
            handshake_in_link: 0,
            recorded: false,
            limit_includes_head: false,
            tx_pkts: 0,
            tx_bytes: 0,
            stats_at_warmup: QueueStats::default(),
            poll_at: None,
            plain_fifo: false,
            may_send_feedback: false,
            last_cut: false,
            warmup_taken: false,
            scheduled: false,
        }
    }

    /// Compute each packet's departure when it is admitted, if this link allows it: a
    /// plain FIFO qdisc (empty), a constant delay and no scheduled rate change (a
    /// change would move the starts of packets already queued). Returns whether it
    /// does. Call once the link is configured, before any packet.
    pub fn schedule_departures(&mut self) -> bool {
        if !self.jittered() && self.rate_schedule.is_empty() && self.queue.schedule_departures() {
            self.scheduled = true;
        }
        self.scheduled
    }

    /// Bring a link with departures at enqueue up to `now` before its queue is read:
    /// the packets whose service started before `now` leave the queue (see the module's
    /// documentation). Nothing to do on other links (their queue is always current).
    #[inline]
    pub fn advance(&mut self, now: Time) {
        if self.scheduled {
            if let Some(bytes) = self.queue.advance(now) {
                // The last packet started is the one in service (tc's head).
                self.in_tx_bytes = bytes;
            }
        }
    }

    /// Vary each packet's delay uniformly in [delay − jitter, delay + jitter), drawing
    /// from `rng` (the link's `LinkJitter` stream). `jitter` is at most the delay.
    pub fn set_jitter(&mut self, jitter: Time, rng: SimRng) {
        debug_assert!(jitter <= self.delay);
        self.jitter = jitter;
        self.jitter_rng = (jitter > 0).then_some(rng);
    }

    /// Packets may overtake each other on the delay line.
    pub fn jittered(&self) -> bool {
        self.jitter > 0
    }

    /// Keep the queue's counters as they are at the warm-up instant `warmup` (once: a
    /// link taking cut-through packets may be at the warm-up before the world is).
    pub fn snapshot_at_warmup(&mut self, warmup: Time) {
        if !self.warmup_taken {
            self.advance(warmup);
            self.stats_at_warmup = self.queue.stats;
            self.warmup_taken = true;
        }
    }

    /// Whether this link may take packets before their arrival time: a plain FIFO
    /// whose queue nobody samples.
    pub fn accepts_cut_through(&self) -> bool {
        self.plain_fifo && !self.recorded && self.queue.sojourn_every == 0
    }

    /// Whether `p`, arriving at `at` (now or later), would find the transmitter idle
    /// and the queue empty, and be admitted: it then starts serializing at `at`
    /// whatever else happens until then, as long as nothing else enters the link.
    pub fn idle_at(&self, at: Time, p: &Packet) -> bool {
        if self.scheduled {
            // Its queue may not be brought up to `at` yet, but whatever it holds starts
            // before `at` or not.
            return self.busy_until <= at && self.queue.drained_before(at) && self.queue.admits_alone(p);
        }
        !self.tx_wake_pending
            && self.poll_at.is_none()
            && self.busy_until <= at
            && self.queue.backlog_pkts() == 0
            && self.queue.admits_with(p, 0, 0)
    }

    /// The least time a packet of `wire_bytes` can have taken to cross this link:
    /// its serialization at the fastest rate the link has had, plus the least
    /// propagation delay (a packet may queue, never go faster).
    pub fn crossing_floor(&self, wire_bytes: u32) -> Time {
        serialization(wire_bytes as u64, self.peak_rate_bps, 0).0 + self.delay - self.jitter
    }

    /// Take back the packet whose serialization just started (the delay line's tail)
    /// to hand it to the next link now: returns its arrival time and the packet.
    pub fn take_started(&mut self) -> (Time, Packet) {
        let OnLine { p, at: t } = self.line.pop_back().expect("a packet just started");
        if p.is_data() {
            self.data_in_link -= 1;
        }
        if p.is_handshake() {
            self.handshake_in_link -= 1;
        }
        self.last_cut = true;
        (t, p)
    }

    /// The packet serialized last, if it is still on the delay line.
    pub fn last_on_line(&self) -> Option<(Time, &Packet)> {
        self.line.back().map(|e| (e.at, &e.p))
    }

    /// The transmitter is serializing a packet, or finished one at `now` and its
    /// pending completion event will start the next (the queue is not ours to take).
    fn busy(&self, now: Time) -> bool {
        self.busy_until > now || self.tx_wake_pending
    }

    /// Offer a packet to the link. Drops (random loss, the qdisc's) land in
    /// `queue.report`, which the world collects. Returns what to schedule, and the
    /// arrival time of the delay line's head if it must be scheduled (the line was
    /// empty and the packet went straight onto it).
    pub fn enqueue(&mut self, p: Packet, now: Time) -> (LinkWake, Option<Time>) {
        if p.is_data() {
            self.data_in_link += 1;
        }
        if p.is_handshake() {
            self.handshake_in_link += 1;
        }
        if self.loss.lose() {
            self.queue.drop_external(p, DropReason::RandomLoss);
            return (LinkWake::None, None);
        }
        if self.scheduled {
            return (LinkWake::None, self.enqueue_scheduled(p, now));
        }
        let busy = self.busy(now);
        if self.limit_includes_head && busy && !self.queue.admits_with(&p, 1, self.in_tx_bytes as u64) {
            self.queue.drop_external(p, DropReason::TailDrop);
            return (LinkWake::None, None);
        }
        if !busy && self.queue.pass_through(&p, now) {
            return self.start(p, now);
        }
        self.queue.enqueue(p, now);
        if !busy {
            return self.start_next(now);
        }
        if !self.tx_wake_pending && self.queue.backlog_pkts() > 0 {
            self.tx_wake_pending = true;
            return (LinkWake::TxDone(self.busy_until), None);
        }
        (LinkWake::None, None)
    }

    /// `enqueue` on a link with departures at enqueue: the same admission as the eager
    /// path at `now` (tc's head accounting, the FIFO's limit), then the packet goes
    /// onto the delay line at once, to start when the transmitter is next free.
    /// Returns the delay line's head arrival if it must be scheduled.
    fn enqueue_scheduled(&mut self, p: Packet, now: Time) -> Option<Time> {
        self.advance(now);
        // Packets wait only while one is in service, so an empty queue after
        // `advance` with the last one finished is an idle transmitter.
        let busy = self.busy_until > now || self.queue.backlog_pkts() > 0;
        if !busy {
            if self.queue.pass_through(&p, now) {
                return self.start(p, now).1;
            }
            // Too large for the empty queue (a bfifo's limit).
            self.queue.drop_external(p, DropReason::TailDrop);
            return None;
        }
        let head_bytes = if self.limit_includes_head { (1, self.in_tx_bytes as u64) } else { (0, 0) };
        if !self.queue.admits_with(&p, head_bytes.0, head_bytes.1) {
            self.queue.drop_external(p, DropReason::TailDrop);
            return None;
        }
        let start = self.busy_until;
        self.queue.push_scheduled(&p, now, start);
        self.serialize(p, start)
    }

    /// The transmitter is free at `now`: take the next packet from the queue and
    /// start it, or ask for a poll when a shaper holds packets back.
    fn start_next(&mut self, now: Time) -> (LinkWake, Option<Time>) {
        match self.queue.dequeue(now) {
            Some(p) => self.start(p, now),
            None => match self.queue.next_ready(now) {
                Some(t) if self.poll_at.is_none_or(|p| p > t) => {
                    self.poll_at = Some(t);
                    (LinkWake::Poll(t), None)
                }
                _ => (LinkWake::None, None),
            },
        }
    }

    /// Start serializing `p` at `now` (the transmitter is free) and put it on the
    /// delay line.
    #[inline]
    fn start(&mut self, p: Packet, now: Time) -> (LinkWake, Option<Time>) {
        self.in_tx_bytes = p.wire_bytes;
        let head = self.serialize(p, now);
        let wake = if self.queue.backlog_pkts() > 0 {
            debug_assert!(!self.scheduled, "a link with departures at enqueue needs no completion event");
            self.tx_wake_pending = true;
            LinkWake::TxDone(self.busy_until)
        } else {
            LinkWake::None
        };
        (wake, head)
    }

    /// Serialize `p` from `from` on (the transmitter is free then) and put it on the
    /// delay line; returns its arrival time if it is the line's new head (to schedule).
    #[inline]
    fn serialize(&mut self, p: Packet, from: Time) -> Option<Time> {
        let (ns, rem) = serialization_by(p.wire_bytes as u64, &self.rate_div, self.remainder);
        self.remainder = rem;
        self.busy_until = from + ns;
        self.tx_pkts += 1;
        self.tx_bytes += p.wire_bytes as u64;
        self.last_cut = false;
        let (arrival, head) = match &mut self.jitter_rng {
            None => {
                let arrival = self.busy_until + self.delay;
                let was_empty = self.line.is_empty();
                self.line.push_back(OnLine { p, at: arrival });
                (arrival, was_empty)
            }
            Some(rng) => {
                let arrival = self.busy_until + self.delay - self.jitter + rng.gen_range(0..2 * self.jitter);
                // After every packet due at or before it (netem's tfifo).
                let at = self.line.partition_point(|e| e.at <= arrival);
                self.line.insert(at, OnLine { p, at: arrival });
                (arrival, true)
            }
        };
        head.then_some(arrival)
    }

    /// A scheduled poll of a shaping queue: start transmitting if idle.
    pub fn on_poll(&mut self, now: Time) -> (LinkWake, Option<Time>) {
        if self.poll_at == Some(now) {
            self.poll_at = None;
        }
        if !self.busy(now) && !self.tx_wake_pending {
            return self.start_next(now);
        }
        (LinkWake::None, None)
    }

    /// The transmitter finished while packets wait: start the next one. Returns what
    /// to schedule and the delay line's head arrival if it must be scheduled.
    pub fn on_tx_done(&mut self, now: Time) -> (LinkWake, Option<Time>) {
        debug_assert!(self.tx_wake_pending && self.busy_until == now);
        self.tx_wake_pending = false;
        self.start_next(now)
    }

    /// The head of the delay line arrived at the far end. Returns the packet and the
    /// next arrival time to schedule, if any (none on a jittered line: each packet
    /// there was scheduled when it went on the line, and events at one instant fire
    /// in any order, so the head is always a packet due now).
    pub fn on_arrival(&mut self) -> (Packet, Option<Time>) {
        let OnLine { p, .. } = self.line.pop_front().expect("arrival without a packet on the line");
        if p.is_data() {
            self.data_in_link -= 1;
        }
        if p.is_handshake() {
            self.handshake_in_link -= 1;
        }
        let next = if self.jittered() { None } else { self.line.front().map(|e| e.at) };
        (p, next)
    }

    /// The run ends at `end`: a packet still being serialized then has not been
    /// transmitted, so it leaves the byte counters. Packets cut through to this link
    /// may be due to start serializing after `end` too: every packet on the delay line
    /// whose serialization ends at or after `end` leaves the counters (it ends at its
    /// arrival less the delay); so does every packet a link with departures at enqueue
    /// had scheduled to start at or after `end` (its queue is brought up to `end`).
    pub fn close(&mut self, end: Time) {
        self.advance(end);
        if self.jittered() {
            // No packets are cut through to a jittered link, so only the packet
            // started last can still be serializing (the line is not in start order).
            if self.busy_until >= end && self.tx_pkts > 0 {
                self.tx_pkts -= 1;
                self.tx_bytes -= self.in_tx_bytes as u64;
            }
            return;
        }
        // Completions at `end` itself are not processed (the run stops before them).
        for &OnLine { p, at: arrival } in self.line.iter().rev() {
            if arrival - self.delay < end {
                break;
            }
            self.tx_pkts -= 1;
            self.tx_bytes -= p.wire_bytes as u64;
        }
        // The last packet went on to the next link: it is not on the line.
        if self.last_cut && self.busy_until >= end {
            self.tx_pkts -= 1;
            self.tx_bytes -= self.in_tx_bytes as u64;
        }
    }

    /// Apply a rate change; takes effect from the next packet serialized.
    pub fn set_rate(&mut self, rate_bps: Bps) {
        debug_assert!(!self.scheduled, "a link with departures at enqueue has no rate changes");
        self.rate_bps = rate_bps;
        self.rate_div = Divisor::new(rate_bps);
        self.peak_rate_bps = self.peak_rate_bps.max(rate_bps);
        self.remainder = 0;
    }

    /// Data packets dropped by the queue discipline are no longer on the link.
    pub fn note_data_dropped_in_queue(&mut self) {
        self.data_in_link -= 1;
    }

    /// A handshake packet counted on this link was dropped by its queue.
    pub fn note_handshake_dropped_in_queue(&mut self) {
        self.handshake_in_link -= 1;
    }
}

#[cfg(test)]
mod scheduled_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::QdiscConfig;
    use crate::qdisc::testing::{pkt, rng};
    use crate::net::{Ecn, Payload};
    use crate::sim::{rng::Component, stream};

    const DELAY: Time = 10_000_000;
    const JITTER: Time = 2_000_000;

    /// A 1 Gbit/s link with a 10 ms delay, jittered by `jitter` from seed `seed`.
    fn link(jitter: Time, seed: u64) -> Link {
        let q = Queue::from_config(&QdiscConfig::Pfifo { limit_packets: 1000 }, rng());
        let mut l = Link::new("l".into(), 1_000_000_000, DELAY, LossConfig::default(), q, stream(seed, Component::LinkLoss, 0));
        l.set_jitter(jitter, stream(seed, Component::LinkJitter, 0));
        l
    }

    /// Offer `n` packets 1 ms apart (the link is idle for each): each one's delay on the
    /// line, and the order in which they arrive (their sequence numbers).
    fn delays_and_order(l: &mut Link, n: u64) -> (Vec<Time>, Vec<u64>) {
        let ser = serialization(1500, 1_000_000_000, 0).0;
        let mut delays = Vec::new();
        for i in 0..n {
            let now = i * 1_000_000;
            let (_, arrival) = l.enqueue(pkt(0, i, 1500, Ecn::NotEct), now);
            let arrival = arrival.expect("every packet on a jittered line is scheduled");
            delays.push(arrival - now - ser);
        }
        let mut order = Vec::new();
        let mut last = 0;
        while !l.line.is_empty() {
            let t = l.line.front().unwrap().at;
            assert!(t >= last, "the line is sorted by arrival time");
            last = t;
            let (p, next) = l.on_arrival();
            assert_eq!(next, None, "a jittered line schedules each packet itself");
            let Payload::Data(s) = p.payload else { unreachable!() };
            order.push(s.seg);
        }
        (delays, order)
    }

    #[test]
    fn jittered_delays_are_uniform_within_delay_plus_minus_jitter() {
        let n = 20_000;
        let (d, order) = delays_and_order(&mut link(JITTER, 1), n);
        assert!(d.iter().all(|&x| (DELAY - JITTER..DELAY + JITTER).contains(&x)), "a delay outside [d-j, d+j)");
        // Uniform: each quarter of [d - j, d + j) holds a quarter of the draws (the
        // binomial sd is ~0.3 % of n), and the mean is d.
        let mut bins = [0u64; 4];
        for &x in &d {
            bins[((x - (DELAY - JITTER)) * 4 / (2 * JITTER)) as usize] += 1;
        }
        for b in bins {
            assert!((b as f64 / n as f64 - 0.25).abs() < 0.015, "not uniform: {bins:?}");
        }
        let mean = d.iter().sum::<Time>() as f64 / n as f64;
        assert!((mean - DELAY as f64).abs() < 0.01 * JITTER as f64, "mean {mean}");
        // Packets 1 ms apart with ±2 ms of jitter overtake each other, as in netem's tfifo.
        let reordered = order.windows(2).filter(|w| w[1] < w[0]).count();
        assert!(reordered > n as usize / 10, "only {reordered} packets overtaken");
        assert_eq!(order.len() as u64, n);
        // The floor of the path is the least delay.
        assert_eq!(link(JITTER, 1).crossing_floor(1500), serialization(1500, 1_000_000_000, 0).0 + DELAY - JITTER);
    }

    #[test]
    fn jitter_is_reproducible_per_seed() {
        let a = delays_and_order(&mut link(JITTER, 1), 1000);
        let a2 = delays_and_order(&mut link(JITTER, 1), 1000);
        let b = delays_and_order(&mut link(JITTER, 2), 1000);
        assert_eq!(a, a2, "same seed, same delays");
        assert_ne!(a.0, b.0, "another seed, other delays");
    }

    #[test]
    fn no_jitter_is_a_constant_delay_in_order() {
        let mut l = link(0, 1);
        let ser = serialization(1500, 1_000_000_000, 0).0;
        for i in 0..100 {
            let (_, arrival) = l.enqueue(pkt(0, i, 1500, Ecn::NotEct), i * 1_000_000);
            assert_eq!(arrival, (i == 0).then_some(ser + DELAY), "only the head is scheduled");
        }
        let seqs: Vec<u64> = l.line.iter().map(|OnLine { p, .. }| if let Payload::Data(s) = p.payload { s.seg } else { 0 }).collect();
        assert_eq!(seqs, (0..100).collect::<Vec<_>>());
        assert!(!l.jittered());
    }
}
