//! Receive batching and coalescing (NAPI + GRO). Packets reaching a host are not
//! processed one by one at their arrival instant: the first packet to reach an idle
//! host schedules a poll one processing delay later (softirq latency), packets
//! arriving meanwhile join that poll, and the poll processes them together. GRO
//! merges in-order segments of one flow within a poll into one frame up to
//! `gro_max_size`, and TCP makes one ACK decision per frame (`tcp_gro_receive`:
//! same flow, contiguous, identical TCP options — so the same millisecond TSval).
//! ACKs (no payload) are never merged. The ACKs a poll produces leave together,
//! which is where real ACK trains come from.

use crate::net::{Packet, Payload};
use crate::units::{ms, Time};

/// Device `gro_max_size` default (`GRO_LEGACY_MAX_SIZE`, 64 KiB).
pub const GRO_MAX_SIZE: u32 = 65_536;

#[derive(Debug)]
pub struct RxBatch {
    pub packets: Vec<Packet>,
    /// Time of the scheduled poll, if one is pending.
    pub poll_at: Option<Time>,
    pub gro_max_size: u32,
    order: Vec<u32>,
}

impl RxBatch {
    pub fn new(gro_max_size: u32) -> Self {
        Self { packets: Vec::new(), poll_at: None, gro_max_size, order: Vec::new() }
    }

    /// A packet arrived at `now`. When the host was idle, `delay()` draws this poll's
    /// processing delay (only then: a packet joining a pending batch consumes no
    /// randomness) and the poll time to schedule is returned.
    pub fn push(&mut self, p: Packet, now: Time, delay: impl FnOnce() -> Time) -> Option<Time> {
        self.packets.push(p);
        if self.poll_at.is_some() {
            return None;
        }
        let t = now + delay();
        self.poll_at = Some(t);
        Some(t)
    }

    /// The poll runs: hand over the batch (into `out`, which must be empty) and, in
    /// `more`, whether each packet's GRO frame continues with a later packet.
    pub fn take(&mut self, out: &mut Vec<Packet>, more: &mut Vec<bool>) {
        debug_assert!(out.is_empty());
        self.poll_at = None;
        std::mem::swap(&mut self.packets, out);
        more.clear();
        more.resize(out.len(), false);
        if out.len() < 2 {
            return;
        }
        // Only two data segments can merge: a batch with fewer (a sender's ACKs) has
        // nothing to sort.
        let (mut data, mut max_bytes) = (0, 0);
        for p in out.iter() {
            data += matches!(p.payload, Payload::Data(_)) as usize;
            max_bytes = max_bytes.max(p.wire_bytes);
        }
        if data < 2 || self.gro_max_size < 2 * max_bytes {
            return;
        }
        // Each flow's packets in arrival order: a stable sort of the indices by flow
        // (none needed when the batch is in flow order already).
        self.order.clear();
        self.order.extend(0..out.len() as u32);
        if !out.is_sorted_by_key(|p| p.flow) {
            self.order.sort_by_key(|&i| out[i as usize].flow);
        }
        let mut frame_bytes = 0u32;
        for w in 0..self.order.len() {
            let i = self.order[w] as usize;
            if frame_bytes == 0 {
                frame_bytes = out[i].wire_bytes;
            }
            let Some(&j) = self.order.get(w + 1) else { break };
            let j = j as usize;
            let merges = match (&out[i].payload, &out[j].payload) {
                (Payload::Data(a), Payload::Data(b)) => {
                    out[i].flow == out[j].flow
                        && b.seg == a.seg + 1
                        && a.tsval / ms(1) == b.tsval / ms(1)
                        && frame_bytes + out[j].wire_bytes <= self.gro_max_size
                }
                _ => false,
            };
            if merges {
                more[i] = true;
                frame_bytes += out[j].wire_bytes;
            } else {
                frame_bytes = 0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::{Ack, Ecn, Segment};
    use crate::units::us;

    fn data(flow: u32, seg: u64, tsval: Time) -> Packet {
        Packet {
            flow,
            wire_bytes: 1500,
            route: 0,
            hop: 0,
            ecn: Ecn::NotEct,
            payload: Payload::Data(Segment { seg, len: 1448, tsval, is_retrans: false, cwr: false }),
        }
    }

    fn ack(flow: u32) -> Packet {
        let a = Ack::new(1, &[], None, false, 0, false);
        Packet { flow, wire_bytes: 52, route: 0, hop: 0, ecn: Ecn::NotEct, payload: Payload::Ack(a) }
    }

    #[test]
    fn the_first_packet_schedules_the_poll_and_later_ones_join_it() {
        let mut b = RxBatch::new(GRO_MAX_SIZE);
        assert_eq!(b.push(data(0, 0, 0), us(100), || us(10)), Some(us(110)));
        // Joining a pending poll draws no delay.
        assert_eq!(b.push(data(0, 1, 0), us(105), || unreachable!("no draw for a pending poll")), None);
        let (mut out, mut more) = (Vec::new(), Vec::new());
        b.take(&mut out, &mut more);
        assert_eq!(out.len(), 2);
        assert_eq!(b.poll_at, None);
        assert_eq!(b.push(data(0, 2, 0), us(200), || us(7)), Some(us(207)));
    }

    #[test]
    fn gro_merges_contiguous_same_ms_segments_of_one_flow() {
        let mut b = RxBatch::new(GRO_MAX_SIZE);
        for p in [data(0, 0, 0), data(1, 7, 0), data(0, 1, 0), data(0, 2, 0), data(0, 4, 0), data(1, 8, ms(1))] {
            b.push(p, 0, || 1);
        }
        let (mut out, mut more) = (Vec::new(), Vec::new());
        b.take(&mut out, &mut more);
        // flow 0: 0-1-2 is one frame, 4 (a gap) another; flow 1: 7 and 8 differ in TSval ms.
        assert_eq!(more, vec![true, false, true, false, false, false]);
    }

    #[test]
    fn frames_stop_at_gro_max_size_and_small_limits_disable_merging() {
        let mut b = RxBatch::new(4000);
        for s in 0..4 {
            b.push(data(0, s, 0), 0, || 1);
        }
        let (mut out, mut more) = (Vec::new(), Vec::new());
        b.take(&mut out, &mut more);
        assert_eq!(more, vec![true, false, true, false], "two 1500-B packets per 4000-B frame");
        let mut off = RxBatch::new(1500);
        for s in 0..3 {
            off.push(data(0, s, 0), 0, || 1);
        }
        out.clear();
        off.take(&mut out, &mut more);
        assert_eq!(more, vec![false; 3]);
    }

    #[test]
    fn a_batch_in_flow_order_merges_as_a_sorted_one() {
        let mut b = RxBatch::new(GRO_MAX_SIZE);
        for p in [data(0, 0, 0), data(0, 1, 0), data(2, 5, 0), data(2, 6, 0), data(3, 1, 0)] {
            b.push(p, 0, || 1);
        }
        let (mut out, mut more) = (Vec::new(), Vec::new());
        b.take(&mut out, &mut more);
        assert_eq!(more, vec![true, false, true, false, false]);
        // One data segment among ACKs: nothing to merge with.
        for p in [ack(4), data(4, 0, 0), ack(4)] {
            b.push(p, 0, || 1);
        }
        out.clear();
        b.take(&mut out, &mut more);
        assert_eq!(more, vec![false; 3]);
    }

    #[test]
    fn acks_are_never_merged() {
        let mut b = RxBatch::new(GRO_MAX_SIZE);
        b.push(ack(0), 0, || 1);
        b.push(ack(0), 0, || 1);
        let (mut out, mut more) = (Vec::new(), Vec::new());
        b.take(&mut out, &mut more);
        assert_eq!(more, vec![false, false]);
    }
}
