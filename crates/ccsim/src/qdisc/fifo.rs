//! Drop-tail FIFO limited in packets (`pfifo`) or bytes (`bfifo`), as Linux
//! `net/sched/sch_fifo.c`: a packet is dropped on arrival if admitting it would
//! exceed the limit (bfifo: backlog + len > limit; pfifo: qlen >= limit).

use std::collections::VecDeque;

use super::{DropReason, Qdisc, Verdict};
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
    q: VecDeque<Packet>,
    bytes: u64,
}

impl Fifo {
    pub fn packets(limit: u64) -> Self {
        Self { limit: Limit::Packets(limit), q: VecDeque::new(), bytes: 0 }
    }
    pub fn bytes(limit: u64) -> Self {
        Self { limit: Limit::Bytes(limit), q: VecDeque::new(), bytes: 0 }
    }
}

impl Qdisc for Fifo {
    fn enqueue(&mut self, p: Packet, _now: Time) -> Verdict {
        let admit = match self.limit {
            Limit::Packets(n) => (self.q.len() as u64) < n,
            Limit::Bytes(b) => self.bytes + p.wire_bytes as u64 <= b,
        };
        if !admit {
            return Verdict::Dropped(p, DropReason::TailDrop);
        }
        self.bytes += p.wire_bytes as u64;
        self.q.push_back(p);
        Verdict::Queued
    }

    fn dequeue(&mut self, _now: Time, _drops: &mut Vec<(Packet, DropReason)>) -> Option<Packet> {
        let p = self.q.pop_front()?;
        self.bytes -= p.wire_bytes as u64;
        Some(p)
    }

    fn backlog_bytes(&self) -> u64 {
        self.bytes
    }
    fn backlog_pkts(&self) -> u64 {
        self.q.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::{Ecn, Payload, Segment};

    fn pkt(bytes: u32) -> Packet {
        Packet {
            flow: 0,
            wire_bytes: bytes,
            route: 0,
            hop: 0,
            ecn: Ecn::NotEct,
            payload: Payload::Data(Segment { seg: 0, len: bytes, tsval: 0, is_retrans: false, cwr: false }),
        }
    }

    #[test]
    fn pfifo_drops_when_full() {
        let mut f = Fifo::packets(2);
        assert!(matches!(f.enqueue(pkt(1500), 0), Verdict::Queued));
        assert!(matches!(f.enqueue(pkt(1500), 0), Verdict::Queued));
        assert!(matches!(f.enqueue(pkt(1500), 0), Verdict::Dropped(_, DropReason::TailDrop)));
        assert_eq!(f.backlog_pkts(), 2);
        assert_eq!(f.backlog_bytes(), 3000);
    }

    #[test]
    fn bfifo_admits_by_bytes() {
        let mut f = Fifo::bytes(3000);
        assert!(matches!(f.enqueue(pkt(1500), 0), Verdict::Queued));
        assert!(matches!(f.enqueue(pkt(1000), 0), Verdict::Queued));
        assert!(matches!(f.enqueue(pkt(600), 0), Verdict::Dropped(..)));
        assert!(matches!(f.enqueue(pkt(500), 0), Verdict::Queued));
        let mut d = vec![];
        assert_eq!(f.dequeue(0, &mut d).unwrap().wire_bytes, 1500);
        assert_eq!(f.backlog_bytes(), 1500);
    }
}
