//! A unidirectional link: queue discipline → transmitter → propagation delay line.
//!
//! The transmitter serializes one packet at a time at the link's current rate,
//! carrying the sub-nanosecond remainder so long runs do not drift. A packet goes onto
//! the delay line, a FIFO of (arrival time, packet), the moment its transmission
//! starts: the delay is constant, so arrival order is transmission order. The link
//! holds at most one pending event of each kind: the head-of-line arrival, and a
//! transmit completion only while packets wait in the queue (a packet that finds
//! the link idle costs no completion event: the transmitter is just busy until a
//! known time). So the event queue holds O(links), not O(packets in flight), and a
//! packet crossing a link that never queues costs one event (its arrival), or none
//! when it is cut through to the next link (`cut_through.rs`).

use std::collections::VecDeque;

use crate::net::loss::{LossConfig, LossModel};
use crate::net::Packet;
use crate::qdisc::{DropReason, Queue, QueueStats};
use crate::sim::SimRng;
use crate::units::{serialization, Bps, Time};

pub type LinkId = u32;

#[derive(Debug)]
pub struct Link {
    pub name: String,
    pub rate_bps: Bps,
    /// The fastest rate the link has had so far (for the one-way delay floor).
    peak_rate_bps: Bps,
    pub delay: Time,
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
    line: VecDeque<(Time, Packet)>,
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
            peak_rate_bps: rate_bps,
            delay,
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
        }
    }

    /// Keep the queue's counters as they are at the warm-up instant (once: a link
    /// taking cut-through packets may be at the warm-up before the world is).
    pub fn snapshot_at_warmup(&mut self) {
        if !self.warmup_taken {
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
        !self.tx_wake_pending
            && self.poll_at.is_none()
            && self.busy_until <= at
            && self.queue.backlog_pkts() == 0
            && self.queue.admits_with(p, 0, 0)
    }

    /// The least time a packet of `wire_bytes` can have taken to cross this link:
    /// its serialization at the fastest rate the link has had, plus the propagation
    /// delay (a packet may queue, never go faster).
    pub fn crossing_floor(&self, wire_bytes: u32) -> Time {
        serialization(wire_bytes as u64, self.peak_rate_bps, 0).0 + self.delay
    }

    /// Take back the packet whose serialization just started (the delay line's tail)
    /// to hand it to the next link now: returns its arrival time and the packet.
    pub fn take_started(&mut self) -> (Time, Packet) {
        let (t, p) = self.line.pop_back().expect("a packet just started");
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
    pub fn last_on_line(&self) -> Option<&(Time, Packet)> {
        self.line.back()
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
        let busy = self.busy(now);
        if self.limit_includes_head && busy && !self.queue.admits_with(&p, 1, self.in_tx_bytes as u64) {
            self.queue.drop_external(p, DropReason::TailDrop);
            return (LinkWake::None, None);
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

    /// The transmitter is free at `now`: take the next packet from the queue, start
    /// serializing it and put it on the delay line.
    fn start_next(&mut self, now: Time) -> (LinkWake, Option<Time>) {
        match self.queue.dequeue(now) {
            Some(p) => {
                let (ns, rem) = serialization(p.wire_bytes as u64, self.rate_bps, self.remainder);
                self.remainder = rem;
                self.busy_until = now + ns;
                self.in_tx_bytes = p.wire_bytes;
                self.tx_pkts += 1;
                self.tx_bytes += p.wire_bytes as u64;
                self.last_cut = false;
                let arrival = self.busy_until + self.delay;
                let was_empty = self.line.is_empty();
                self.line.push_back((arrival, p));
                let wake = if self.queue.backlog_pkts() > 0 {
                    self.tx_wake_pending = true;
                    LinkWake::TxDone(self.busy_until)
                } else {
                    LinkWake::None
                };
                (wake, was_empty.then_some(arrival))
            }
            None => match self.queue.next_ready(now) {
                Some(t) if self.poll_at.is_none_or(|p| p > t) => {
                    self.poll_at = Some(t);
                    (LinkWake::Poll(t), None)
                }
                _ => (LinkWake::None, None),
            },
        }
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
    /// next arrival time to schedule, if any.
    pub fn on_arrival(&mut self) -> (Packet, Option<Time>) {
        let (_, p) = self.line.pop_front().expect("arrival without a packet on the line");
        if p.is_data() {
            self.data_in_link -= 1;
        }
        if p.is_handshake() {
            self.handshake_in_link -= 1;
        }
        (p, self.line.front().map(|(t, _)| *t))
    }

    /// The run ends at `end`: a packet still being serialized then has not been
    /// transmitted, so it leaves the byte counters. Packets cut through to this link
    /// may be due to start serializing after `end` too: every packet on the delay line
    /// whose serialization ends at or after `end` leaves the counters (it ends at its
    /// arrival less the delay).
    pub fn close(&mut self, end: Time) {
        // Completions at `end` itself are not processed (the run stops before them).
        for (arrival, p) in self.line.iter().rev() {
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
        self.rate_bps = rate_bps;
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
