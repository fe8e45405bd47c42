//! A unidirectional link: queue discipline → transmitter → propagation delay line.
//!
//! The transmitter serializes one packet at a time at the link's current rate,
//! carrying the sub-nanosecond remainder so long runs do not drift. The delay line
//! is a FIFO of (arrival time, packet); the link schedules only its head-of-line
//! events (one transmit completion, one arrival), so the event queue does not grow
//! with the number of packets in flight.

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
    pub delay: Time,
    /// Random loss on entry.
    loss: LossModel,
    pub queue: Queue,
    /// Rate changes (time, new rate), in increasing time order; the event loop applies them.
    pub rate_schedule: Vec<(Time, Bps)>,
    /// Packet being serialized, if any.
    in_tx: Option<Packet>,
    remainder: u64,
    line: VecDeque<(Time, Packet)>,
    /// Data packets currently on this link (queued, in transmission or propagating).
    pub data_in_link: u64,
    /// Whether queue samples are recorded for this link.
    pub recorded: bool,
    /// tc-like accounting: the packet in service counts toward the qdisc limit.
    pub limit_includes_head: bool,
    /// Packets and bytes that finished serialization (the link's byte counters).
    pub tx_pkts: u64,
    pub tx_bytes: u64,
    /// The queue's counters at the warm-up (zero until then), for window counts.
    pub stats_at_warmup: QueueStats,
    /// A poll of a shaping qdisc already scheduled at this time.
    poll_at: Option<Time>,
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
            delay,
            loss: LossModel::new(loss, loss_rng),
            queue,
            rate_schedule: Vec::new(),
            in_tx: None,
            remainder: 0,
            line: VecDeque::new(),
            data_in_link: 0,
            recorded: false,
            limit_includes_head: false,
            tx_pkts: 0,
            tx_bytes: 0,
            stats_at_warmup: QueueStats::default(),
            poll_at: None,
        }
    }

    /// Offer a packet to the link. Drops (random loss, the qdisc's) land in
    /// `queue.report`, which the world collects; returns what to schedule.
    pub fn enqueue(&mut self, p: Packet, now: Time) -> LinkWake {
        if p.is_data() {
            self.data_in_link += 1;
        }
        if self.loss.lose() {
            self.queue.drop_external(p, DropReason::RandomLoss);
            return LinkWake::None;
        }
        if self.limit_includes_head {
            if let Some(head) = &self.in_tx {
                if !self.queue.admits_with(&p, 1, head.wire_bytes as u64) {
                    self.queue.drop_external(p, DropReason::TailDrop);
                    return LinkWake::None;
                }
            }
        }
        self.queue.enqueue(p, now);
        if self.in_tx.is_none() {
            return self.start_next(now);
        }
        LinkWake::None
    }

    fn start_next(&mut self, now: Time) -> LinkWake {
        match self.queue.dequeue(now) {
            Some(p) => {
                let (ns, rem) = serialization(p.wire_bytes as u64, self.rate_bps, self.remainder);
                self.remainder = rem;
                self.in_tx = Some(p);
                LinkWake::TxDone(now + ns)
            }
            None => match self.queue.next_ready(now) {
                Some(t) if self.poll_at.is_none_or(|p| p > t) => {
                    self.poll_at = Some(t);
                    LinkWake::Poll(t)
                }
                _ => LinkWake::None,
            },
        }
    }

    /// A scheduled poll of a shaping queue: start transmitting if idle.
    pub fn on_poll(&mut self, now: Time) -> LinkWake {
        if self.poll_at == Some(now) {
            self.poll_at = None;
        }
        if self.in_tx.is_none() {
            return self.start_next(now);
        }
        LinkWake::None
    }

    /// The transmitter finished: move the packet onto the delay line. Returns
    /// (arrival time to schedule if the line was empty, next transmit completion).
    pub fn on_tx_done(&mut self, now: Time) -> (Option<Time>, LinkWake) {
        let p = self.in_tx.take().expect("tx done without a packet in transmission");
        self.tx_pkts += 1;
        self.tx_bytes += p.wire_bytes as u64;
        let arrival = now + self.delay;
        let was_empty = self.line.is_empty();
        self.line.push_back((arrival, p));
        let next = self.start_next(now);
        (if was_empty { Some(arrival) } else { None }, next)
    }

    /// The head of the delay line arrived at the far end. Returns the packet and the
    /// next arrival time to schedule, if any.
    pub fn on_arrival(&mut self) -> (Packet, Option<Time>) {
        let (_, p) = self.line.pop_front().expect("arrival without a packet on the line");
        if p.is_data() {
            self.data_in_link -= 1;
        }
        (p, self.line.front().map(|(t, _)| *t))
    }

    /// Apply a rate change; takes effect from the next packet serialized.
    pub fn set_rate(&mut self, rate_bps: Bps) {
        self.rate_bps = rate_bps;
        self.remainder = 0;
    }

    /// Data packets dropped by the queue discipline are no longer on the link.
    pub fn note_data_dropped_in_queue(&mut self) {
        self.data_in_link -= 1;
    }
}
