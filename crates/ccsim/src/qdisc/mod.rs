//! Queue disciplines. Each qdisc implements the small [`Qdisc`] trait; the
//! [`Queue`] wrapper owns all accounting (enqueued, dequeued, dropped by reason,
//! ECN-marked), so no AQM can forget to count.

pub mod fifo;

use crate::config::QdiscConfig;
use crate::net::Packet;
use crate::units::Time;

/// Why a packet was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    /// The queue was full (drop-tail).
    TailDrop,
    /// An AQM decided to drop.
    AqmDrop,
    /// Bernoulli random loss configured on the link.
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

/// Result of offering a packet to a qdisc.
#[derive(Debug)]
pub enum Verdict {
    Queued,
    /// Queued with the CE codepoint set.
    QueuedMarked,
    Dropped(Packet, DropReason),
}

pub trait Qdisc: std::fmt::Debug + Send {
    fn enqueue(&mut self, p: Packet, now: Time) -> Verdict;
    /// Next packet to transmit. AQMs that drop at dequeue push the dropped packets
    /// into `drops`.
    fn dequeue(&mut self, now: Time, drops: &mut Vec<(Packet, DropReason)>) -> Option<Packet>;
    fn backlog_bytes(&self) -> u64;
    fn backlog_pkts(&self) -> u64;
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

/// A qdisc with its accounting.
#[derive(Debug)]
pub struct Queue {
    qdisc: Box<dyn Qdisc>,
    pub stats: QueueStats,
    /// Packets dropped at dequeue by an AQM since the world last collected them.
    pub dequeue_drops: Vec<(Packet, DropReason)>,
}

impl Queue {
    pub fn new(qdisc: Box<dyn Qdisc>) -> Self {
        Self { qdisc, stats: QueueStats::default(), dequeue_drops: Vec::new() }
    }

    pub fn from_config(cfg: &QdiscConfig) -> Self {
        match cfg {
            QdiscConfig::Pfifo { limit_packets } => Self::new(Box::new(fifo::Fifo::packets(*limit_packets))),
            QdiscConfig::Bfifo { limit_bytes } => Self::new(Box::new(fifo::Fifo::bytes(*limit_bytes))),
        }
    }

    pub fn enqueue(&mut self, p: Packet, now: Time) -> Result<(), (Packet, crate::qdisc::DropReason)> {
        match self.qdisc.enqueue(p, now) {
            Verdict::Queued => {
                self.stats.enqueued_pkts += 1;
                Ok(())
            }
            Verdict::QueuedMarked => {
                self.stats.enqueued_pkts += 1;
                self.stats.ecn_marked_pkts += 1;
                Ok(())
            }
            Verdict::Dropped(p, reason) => {
                self.count_external_drop(&p, reason);
                Err((p, reason))
            }
        }
    }

    pub fn dequeue(&mut self, now: Time) -> Option<Packet> {
        let before = self.dequeue_drops.len();
        let p = self.qdisc.dequeue(now, &mut self.dequeue_drops);
        for i in before..self.dequeue_drops.len() {
            let reason = self.dequeue_drops[i].1;
            self.count_drop_reason(reason);
        }
        if let Some(p) = &p {
            self.stats.dequeued_pkts += 1;
            self.stats.dequeued_bytes += p.wire_bytes as u64;
        }
        p
    }

    /// Count a drop that happened outside the qdisc proper (random loss on entry).
    pub fn count_external_drop(&mut self, _p: &Packet, reason: DropReason) {
        self.count_drop_reason(reason);
    }

    fn count_drop_reason(&mut self, reason: DropReason) {
        self.stats.dropped_pkts += 1;
        match reason {
            DropReason::TailDrop => self.stats.tail_drops += 1,
            DropReason::AqmDrop => self.stats.aqm_drops += 1,
            DropReason::RandomLoss => self.stats.random_drops += 1,
        }
    }

    pub fn backlog_bytes(&self) -> u64 {
        self.qdisc.backlog_bytes()
    }
    pub fn backlog_pkts(&self) -> u64 {
        self.qdisc.backlog_pkts()
    }
}
