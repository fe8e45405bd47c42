//! A unidirectional link: queue discipline → transmitter → propagation delay line.
//!
//! The transmitter serializes one packet at a time at the link's current rate,
//! carrying the sub-nanosecond remainder so long runs do not drift. The delay line
//! is a FIFO of (arrival time, packet); the link schedules only its head-of-line
//! events (one transmit completion, one arrival), so the event queue does not grow
//! with the number of packets in flight.

use std::collections::VecDeque;

use rand::Rng;

use crate::net::Packet;
use crate::qdisc::{DropReason, Queue};
use crate::sim::SimRng;
use crate::units::{serialization, Bps, Time};

pub type LinkId = u32;

#[derive(Debug)]
pub struct Link {
    pub name: String,
    pub rate_bps: Bps,
    pub delay: Time,
    /// Bernoulli loss probability on entry.
    pub loss: f64,
    pub queue: Queue,
    rng: SimRng,
    /// Packet being serialized, if any.
    in_tx: Option<Packet>,
    remainder: u64,
    line: VecDeque<(Time, Packet)>,
    /// Data packets currently on this link (queued, in transmission or propagating).
    pub data_in_link: u64,
    /// Whether queue samples are recorded for this link.
    pub recorded: bool,
}

/// What the world must schedule after a link operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkWake {
    None,
    TxDone(Time),
}

impl Link {
    pub fn new(name: String, rate_bps: Bps, delay: Time, loss: f64, queue: Queue, rng: SimRng) -> Self {
        Self {
            name,
            rate_bps,
            delay,
            loss,
            queue,
            rng,
            in_tx: None,
            remainder: 0,
            line: VecDeque::new(),
            data_in_link: 0,
            recorded: false,
        }
    }

    /// Offer a packet to the link. Returns the dropped packet with its reason, or
    /// the transmit completion to schedule if the transmitter was idle.
    pub fn enqueue(&mut self, p: Packet, now: Time) -> Result<LinkWake, (Packet, DropReason)> {
        if self.loss > 0.0 && self.rng.gen::<f64>() < self.loss {
            self.queue.count_external_drop(&p, DropReason::RandomLoss);
            return Err((p, DropReason::RandomLoss));
        }
        let is_data = p.is_data();
        self.queue.enqueue(p, now)?;
        if is_data {
            self.data_in_link += 1;
        }
        if self.in_tx.is_none() {
            return Ok(self.start_next(now));
        }
        Ok(LinkWake::None)
    }

    fn start_next(&mut self, now: Time) -> LinkWake {
        match self.queue.dequeue(now) {
            Some(p) => {
                let (ns, rem) = serialization(p.wire_bytes as u64, self.rate_bps, self.remainder);
                self.remainder = rem;
                self.in_tx = Some(p);
                LinkWake::TxDone(now + ns)
            }
            None => LinkWake::None,
        }
    }

    /// The transmitter finished: move the packet onto the delay line. Returns
    /// (arrival time to schedule if the line was empty, next transmit completion).
    pub fn on_tx_done(&mut self, now: Time) -> (Option<Time>, LinkWake) {
        let p = self.in_tx.take().expect("tx done without a packet in transmission");
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
