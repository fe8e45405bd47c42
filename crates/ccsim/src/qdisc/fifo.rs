//! Drop-tail FIFO limited in packets (`pfifo`) or bytes (`bfifo`), as Linux
//! `net/sched/sch_fifo.c`: a packet is dropped on arrival if admitting it would
//! exceed the limit (bfifo: backlog + len > limit; pfifo: qlen >= limit).

use super::{DropReason, Qdisc, QdiscCtx, Queued, Report, TimedFifo};
use crate::net::Packet;

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
        match self.limit {
            Limit::Packets(n) => (self.q.len() as u64 + extra_pkts) < n,
            Limit::Bytes(b) => self.q.bytes() + extra_bytes + p.wire_bytes as u64 <= b,
        }
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
