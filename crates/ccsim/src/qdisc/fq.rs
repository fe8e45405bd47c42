//! What FQ-CoDel and FQ-PIE share (Linux `sch_fq_codel.c` / `sch_fq_pie.c`): a flow
//! table sized once, a seeded hash of the 5-tuple into it, and deficit round robin
//! over a list of new flows and a list of old flows (RFC 8290 §4.2).

use std::collections::VecDeque;

use rand::Rng;

use super::{Queued, TimedFifo};
use crate::net::{HandshakeKind, Packet, Payload};
use crate::sim::SimRng;

/// Seeded flow hash (Linux: `skb_get_hash` — a keyed jhash of the 5-tuple — scaled
/// to the table with `reciprocal_scale`). Here the 5-tuple is the flow id and the
/// direction (data or ACK), mixed with a per-queue key drawn from the queue's stream.
#[derive(Debug, Clone, Copy)]
pub struct FlowHash {
    key: u64,
    buckets: u32,
}

impl FlowHash {
    pub fn new(buckets: u32, rng: &mut SimRng) -> Self {
        Self { key: rng.gen(), buckets }
    }

    pub fn bucket(&self, p: &Packet) -> usize {
        // The reverse direction's 5-tuple: ACKs and the SYN-ACK.
        let synack = matches!(p.payload, Payload::Handshake(h) if h.kind == HandshakeKind::SynAck);
        let dir = (matches!(p.payload, Payload::Ack(_)) || synack) as u64;
        let mut z = self.key ^ ((p.flow as u64) << 1 | dir);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (((z >> 32) * self.buckets as u64) >> 32) as usize
    }
}

/// Which DRR list a flow is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListKind {
    New,
    Old,
}

/// The per-flow queue and DRR state of an FQ qdisc; `S` is the per-flow AQM state.
#[derive(Debug, Default)]
pub struct FqFlow<S> {
    pub q: TimedFifo,
    pub deficit: i64,
    pub list: Option<ListKind>,
    pub aqm: S,
}

/// New and old flow lists (indices into the flow table).
#[derive(Debug, Default)]
pub struct DrrLists {
    pub new: VecDeque<u32>,
    pub old: VecDeque<u32>,
}

impl DrrLists {
    /// The list to serve next and its head flow, if any flow is listed.
    pub fn head(&self) -> Option<(ListKind, u32)> {
        if let Some(&f) = self.new.front() {
            return Some((ListKind::New, f));
        }
        self.old.front().map(|&f| (ListKind::Old, f))
    }

    pub fn pop_head(&mut self, kind: ListKind) -> u32 {
        match kind {
            ListKind::New => self.new.pop_front(),
            ListKind::Old => self.old.pop_front(),
        }
        .expect("head of a non-empty list")
    }
}

/// Put flow `idx` on the new list with a fresh quantum if it is on no list (a flow
/// that becomes active, RFC 8290 §4.1).
pub fn activate<S>(flows: &mut [FqFlow<S>], lists: &mut DrrLists, idx: usize, quantum: i64) {
    let flow = &mut flows[idx];
    if flow.list.is_none() {
        flow.list = Some(ListKind::New);
        flow.deficit = quantum;
        lists.new.push_back(idx as u32);
    }
}

/// Deficit round robin over the new and old lists (`fq_codel_dequeue`,
/// `fq_pie_qdisc_dequeue`): `take` dequeues from one flow (running its AQM); a flow
/// out of deficit moves to the old list with another quantum; a flow that yields
/// nothing leaves its list — a new flow passes through the old list once first.
pub fn drr_dequeue<S>(
    flows: &mut [FqFlow<S>],
    lists: &mut DrrLists,
    quantum: i64,
    mut take: impl FnMut(&mut FqFlow<S>) -> Option<Queued>,
) -> Option<Queued> {
    loop {
        let (kind, idx) = lists.head()?;
        let flow = &mut flows[idx as usize];
        if flow.deficit <= 0 {
            flow.deficit += quantum;
            lists.pop_head(kind);
            flow.list = Some(ListKind::Old);
            lists.old.push_back(idx);
            continue;
        }
        match take(flow) {
            Some(q) => {
                flow.deficit -= q.packet.wire_bytes as i64;
                return Some(q);
            }
            None => {
                lists.pop_head(kind);
                if kind == ListKind::New && !lists.old.is_empty() {
                    flow.list = Some(ListKind::Old);
                    lists.old.push_back(idx);
                } else {
                    flow.list = None;
                }
            }
        }
    }
}
