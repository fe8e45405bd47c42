//! Drop-tail FIFO limited in packets (`pfifo`) or bytes (`bfifo`), as Linux
//! `net/sched/sch_fifo.c`: a packet is dropped on arrival if admitting it would
//! exceed the limit (bfifo: backlog + len > limit; pfifo: qlen >= limit).
//!
//! [`ScheduledFifo`] is the same discipline for a link that computes each packet's
//! start of service when it admits it (`net/link.rs`, "departures at enqueue"): it
//! keeps only what the queue's accounting needs of the packets not started yet.

use std::collections::VecDeque;

use super::{DropReason, Qdisc, QdiscCtx, Queued, Report, TimedFifo};
use crate::net::Packet;
use crate::units::Time;

#[derive(Debug, Clone, Copy)]
enum Limit {
    Packets(u64),
    Bytes(u64),
}

#[derive(Debug)]
pub struct Fifo {
    limit: Limit,
    q: TimedFifo,
}

impl Limit {
    /// Linux's admission rule for `p` on a backlog of `pkts` / `bytes`.
    #[inline]
    fn admits(self, p: &Packet, pkts: u64, bytes: u64) -> bool {
        match self {
            Limit::Packets(n) => pkts < n,
            Limit::Bytes(b) => bytes + p.wire_bytes as u64 <= b,
        }
    }
}

impl Fifo {
    pub fn packets(limit: u64) -> Self {
        Self { limit: Limit::Packets(limit), q: TimedFifo::default() }
    }
    pub fn bytes(limit: u64) -> Self {
        Self { limit: Limit::Bytes(limit), q: TimedFifo::default() }
    }
}

impl Qdisc for Fifo {
    #[inline]
    fn enqueue(&mut self, p: Packet, ctx: &mut QdiscCtx, report: &mut Report) -> bool {
        let admit = self.admits_with(&p, 0, 0);
        if admit {
            self.q.push(p, ctx.now);
        } else {
            report.drop(p, DropReason::TailDrop);
        }
        admit
    }

    #[inline]
    fn dequeue(&mut self, _ctx: &mut QdiscCtx, _report: &mut Report) -> Option<Queued> {
        self.q.pop()
    }

    #[inline]
    fn admits_with(&self, p: &Packet, extra_pkts: u64, extra_bytes: u64) -> bool {
        self.limit.admits(p, self.q.len() as u64 + extra_pkts, self.q.bytes() + extra_bytes)
    }

    #[inline]
    fn backlog_bytes(&self) -> u64 {
        self.q.bytes()
    }
    #[inline]
    fn backlog_pkts(&self) -> u64 {
        self.q.len() as u64
    }
}

/// A packet admitted to a [`ScheduledFifo`] whose service has not started yet: when
/// it will start, when it was enqueued (its sojourn is the difference) and its size.
/// The packet itself is on the link's delay line already.
#[derive(Debug, Clone, Copy)]
pub struct Waiting {
    pub start: Time,
    pub enqueued_at: Time,
    pub wire_bytes: u32,
}

/// A drop-tail FIFO whose link knows each packet's start of service when it admits
/// it (a constant rate, nothing that reorders or removes queued packets): the backlog
/// at any instant is the admitted packets whose service starts later. It is brought
/// up to an instant by [`ScheduledFifo::pop_started`] before anything reads it.
#[derive(Debug)]
pub struct ScheduledFifo {
    limit: Limit,
    waiting: VecDeque<Waiting>,
    bytes: u64,
}

impl ScheduledFifo {
    /// The same limit as `f`, which must be empty.
    pub fn from_fifo(f: &Fifo) -> Self {
        assert!(f.q.is_empty(), "a FIFO holding packets cannot change how it schedules them");
        Self { limit: f.limit, waiting: VecDeque::new(), bytes: 0 }
    }

    #[inline]
    pub fn admits_with(&self, p: &Packet, extra_pkts: u64, extra_bytes: u64) -> bool {
        self.limit.admits(p, self.waiting.len() as u64 + extra_pkts, self.bytes + extra_bytes)
    }

    /// Whether `p` is admitted when nothing waits (it may still be too large for a bfifo).
    #[inline]
    pub fn admits_alone(&self, p: &Packet) -> bool {
        self.limit.admits(p, 0, 0)
    }

    /// An admitted packet that starts service at `w.start`, after every packet
    /// waiting (starts never decrease: the link serves in admission order).
    #[inline]
    pub fn push(&mut self, w: Waiting) {
        debug_assert!(self.waiting.back().is_none_or(|b| b.start <= w.start));
        self.bytes += w.wire_bytes as u64;
        self.waiting.push_back(w);
    }

    /// The oldest waiting packet if its service starts before `now`, removed.
    #[inline]
    pub fn pop_started(&mut self, now: Time) -> Option<Waiting> {
        let w = *self.waiting.front().filter(|w| w.start < now)?;
        self.waiting.pop_front();
        self.bytes -= w.wire_bytes as u64;
        Some(w)
    }

    /// When the last packet admitted starts service, if it has not yet.
    #[inline]
    pub fn last_start(&self) -> Option<Time> {
        self.waiting.back().map(|w| w.start)
    }

    #[inline]
    pub fn backlog_pkts(&self) -> u64 {
        self.waiting.len() as u64
    }
    #[inline]
    pub fn backlog_bytes(&self) -> u64 {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{pkt, rng};
    use super::*;
    use crate::net::Ecn;

    #[test]
    fn pfifo_drops_when_full() {
        let mut f = Fifo::packets(2);
        let (mut r, mut rep) = (rng(), Report::default());
        let mut ctx = QdiscCtx { now: 0, rng: &mut r };
        for i in 0..3 {
            f.enqueue(pkt(0, i, 1500, Ecn::NotEct), &mut ctx, &mut rep);
        }
        assert_eq!(rep.drops.len(), 1);
        assert_eq!(rep.drops[0].1, DropReason::TailDrop);
        assert_eq!(f.backlog_pkts(), 2);
        assert_eq!(f.backlog_bytes(), 3000);
    }

    #[test]
    fn bfifo_admits_by_bytes() {
        let mut f = Fifo::bytes(3000);
        let (mut r, mut rep) = (rng(), Report::default());
        let mut ctx = QdiscCtx { now: 0, rng: &mut r };
        for (i, b) in [1500, 1000, 600, 500].into_iter().enumerate() {
            f.enqueue(pkt(0, i as u64, b, Ecn::NotEct), &mut ctx, &mut rep);
        }
        assert_eq!(rep.drops.len(), 1);
        assert_eq!(rep.drops[0].0.wire_bytes, 600);
        assert_eq!(f.dequeue(&mut ctx, &mut rep).unwrap().packet.wire_bytes, 1500);
        assert_eq!(f.backlog_bytes(), 1500);
    }
}
