//! A FIFO of packets with their enqueue times and byte count: the building block of
//! every qdisc here (sojourn times need the enqueue time; Linux keeps it in the skb).

use std::collections::VecDeque;

use crate::net::Packet;
use crate::units::Time;

/// A packet inside a qdisc, with the time it was enqueued. The packet comes first
/// (`repr(C)`): an entry is copied out of the deque in 16-byte pieces from its start,
/// and the packet is then read in 16-byte pieces from its own start; with the time
/// first the two were 8 bytes apart, so every read of the packet straddled two of
/// the stores that had just written it and waited for them to reach the cache (a
/// failed store-to-load forward; docs/benchmarks.md).
#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub struct Queued {
    pub packet: Packet,
    pub enqueued_at: Time,
}

#[derive(Debug, Default)]
pub struct TimedFifo {
    q: VecDeque<Queued>,
    bytes: u64,
}

impl TimedFifo {
    #[inline]
    pub fn push(&mut self, packet: Packet, now: Time) {
        self.bytes += packet.wire_bytes as u64;
        self.q.push_back(Queued { packet, enqueued_at: now });
    }
    #[inline]
    pub fn pop(&mut self) -> Option<Queued> {
        let q = self.q.pop_front()?;
        self.bytes -= q.packet.wire_bytes as u64;
        Some(q)
    }
    pub fn front(&self) -> Option<&Queued> {
        self.q.front()
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.q.len()
    }
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }
    #[inline]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}
