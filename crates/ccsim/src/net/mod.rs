//! Packets, links and routes. A packet moves by value through link queues; it
//! carries its route (an index into the topology's route table) and its position on
//! it, so forwarding is a table lookup (static routes, precomputed by the builder).

pub mod cut_through;
pub mod feedback;
pub mod link;
pub mod loss;

pub use cut_through::CutThrough;
pub use feedback::{FeedbackRequest, FeedbackTable, NetworkFeedback, FEEDBACK_WIRE_BYTES};
pub use link::{Link, LinkId};
pub use loss::{LossConfig, LossModel};

use crate::units::Time;

/// IP/TCP header bytes on every segment: IPv4 20 + TCP 20 + timestamps option 12,
/// as on Linux with timestamps on (the default), so MSS 1448 gives 1500-byte packets.
pub const HEADER_BYTES: u32 = 52;
/// Maximum SACK blocks in an ACK: 3 fit beside the timestamp option (RFC 2018).
pub const MAX_SACK_BLOCKS: usize = 3;

/// ECN codepoint of a packet (RFC 3168).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Ecn {
    #[default]
    NotEct,
    Ect,
    Ce,
}

/// A data segment. Sequence numbers count segments of the flow's MSS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    pub seg: u64,
    /// Payload bytes (the flow's MSS, or less for the last segment of a finite flow).
    pub len: u32,
    /// Sender timestamp (TSval), echoed by the receiver for undo.
    pub tsval: Time,
    pub is_retrans: bool,
    /// Congestion Window Reduced: the sender reacted to an ECN echo (RFC 3168).
    pub cwr: bool,
}

/// An acknowledgment with SACK information.
///
/// SACK blocks are stored as 24-bit offsets from `cum` and the D-SACK segment as a
/// 32-bit offset, so that an ACK is 40 bytes and a `Packet` 56: with its arrival time,
/// a packet on a delay line or in a qdisc is one 64-byte cache line (`Packet` is copied
/// by value at every hop; see docs/benchmarks.md). The offsets are bounded by the
/// flow's receive window, which the engine keeps below [`MAX_WINDOW_SEGS`];
/// [`Ack::new`] checks that they fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ack {
    /// Next segment expected (cumulative ACK).
    pub cum: u64,
    /// Timestamp echo reply (TSecr).
    pub tsecr: Time,
    /// The duplicate segment this ACK reports (D-SACK, RFC 2883: the first SACK
    /// block), if any, as an offset from `cum` (below it for a duplicate of
    /// cumulatively acknowledged data); [`NO_DSACK`] if none.
    dsack: i32,
    /// SACK blocks [start, end) as 24-bit little-endian offsets from `cum` (start,
    /// then end), most recent first; the blocks in use come first, and an unused one
    /// is all zero (a SACK block is never empty, so `start == end` marks the end).
    sack: [u8; 6 * MAX_SACK_BLOCKS],
    /// ECN echo.
    pub ece: bool,
    /// The ACK was delayed by the receiver's delayed-ACK logic.
    pub delayed: bool,
}

/// `Ack::dsack` when the ACK reports no duplicate.
const NO_DSACK: i32 = i32::MIN;

/// SACK offsets from the cumulative ACK must be below this (24 bits).
const MAX_SACK_OFFSET: u64 = 1 << 24;

/// The largest receive window the engine gives a flow, in segments: every segment a
/// SACK block names lies within one window of the cumulative ACK, so the offsets fit
/// in an ACK's 24 bits. TCP's own largest window, 2^30 bytes (RFC 7323, window scale
/// 14), is at most this many segments of the smallest MSS the configuration allows (64
/// bytes), so the bound changes nothing a real TCP could do.
pub const MAX_WINDOW_SEGS: u32 = (MAX_SACK_OFFSET - 1) as u32;

impl Ack {
    /// An ACK of `cum` with SACK blocks `sack` ([start, end) in segments, at most
    /// [`MAX_SACK_BLOCKS`], each non-empty and at or above `cum`) and D-SACK segment
    /// `dsack`. Panics if a block ends 2^24 segments or more above `cum` (no flow's
    /// window reaches that far: [`MAX_WINDOW_SEGS`]) or the D-SACK segment is 2^31
    /// segments or more from it.
    pub fn new(cum: u64, sack: &[(u64, u64)], dsack: Option<u64>, ece: bool, tsecr: Time, delayed: bool) -> Ack {
        assert!(sack.len() <= MAX_SACK_BLOCKS, "{} SACK blocks, at most {MAX_SACK_BLOCKS}", sack.len());
        let off = |s: u64| {
            let d = s.checked_sub(cum).filter(|&d| d < MAX_SACK_OFFSET);
            d.expect("SACK block below cum or 2^24 segments above it") as u32
        };
        let mut blocks = [0u8; 6 * MAX_SACK_BLOCKS];
        for (b, &(start, end)) in blocks.chunks_exact_mut(6).zip(sack) {
            assert!(start < end, "empty SACK block [{start}, {end})");
            b[..3].copy_from_slice(&off(start).to_le_bytes()[..3]);
            b[3..].copy_from_slice(&off(end).to_le_bytes()[..3]);
        }
        let mut ack = Ack { cum, tsecr, dsack: NO_DSACK, sack: blocks, ece, delayed };
        ack.set_dsack(dsack);
        ack
    }

    /// The SACK blocks as offsets from `cum`, unused ones (0, 0).
    fn sack_offsets(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        let u24 = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], 0]);
        self.sack.chunks_exact(6).map(move |b| (u24(&b[..3]), u24(&b[3..])))
    }

    /// Number of SACK blocks.
    pub fn n_sack(&self) -> usize {
        self.sack_offsets().take_while(|(s, e)| s != e).count()
    }

    /// The SACK blocks [start, end) in segments, most recent first.
    pub fn sack_blocks(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.sack_offsets().take_while(|(s, e)| s != e).map(|(s, e)| (self.cum + s as u64, self.cum + e as u64))
    }

    /// The duplicate segment this ACK reports (D-SACK), if any.
    pub fn dsack(&self) -> Option<u64> {
        (self.dsack != NO_DSACK).then(|| self.cum.wrapping_add_signed(self.dsack as i64))
    }

    /// Set the D-SACK segment. Panics if it is 2^31 segments or more from `cum`.
    pub fn set_dsack(&mut self, dsack: Option<u64>) {
        self.dsack = dsack.map_or(NO_DSACK, |s| {
            i32::try_from(s as i128 - self.cum as i128)
                .ok()
                .filter(|&d| d != NO_DSACK)
                .expect("D-SACK segment 2^31 segments or more from cum")
        });
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Payload {
    Data(Segment),
    Ack(Ack),
    /// A network element's message to the flow's sender (see [`feedback`]): an index
    /// into the world's table of messages in flight ([`FeedbackTable`]), so that
    /// the rare, large message does not widen every packet.
    Feedback(u32),
    /// A datagram of an inelastic (UDP) source: no ACK, no congestion control.
    Datagram { seq: u64 },
    /// A segment of the three-way handshake (`tcp::handshake`).
    Handshake(Handshake),
}

/// Which segment of the three-way handshake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandshakeKind {
    /// The client's SYN (forward path).
    Syn,
    /// The server's SYN-ACK (reverse path).
    SynAck,
    /// The client's ACK of the SYN-ACK (forward path, no data).
    Ack,
}

/// A handshake segment: its kind and timestamps (TSval, and the TSecr echoing the
/// peer's latest TSval, 0 on a SYN), which the RTT samples of `tcp_ack_update_rtt`
/// and `tcp_synack_rtt_meas` read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Handshake {
    pub kind: HandshakeKind,
    pub tsval: Time,
    pub tsecr: Time,
}

/// Wire bytes of a SYN or SYN-ACK: IPv4 20 + TCP 20 + Linux's SYN options (MSS 4,
/// SACK-permitted 2, timestamps 10, NOP 1, window scale 3).
pub const SYN_WIRE_BYTES: u32 = 60;

/// IPv4 + UDP header bytes of a datagram.
pub const UDP_HEADER_BYTES: u32 = 28;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packet {
    pub flow: u32,
    /// Bytes on the wire (payload + headers), used for serialization and queues.
    pub wire_bytes: u32,
    /// Index into the topology's route table, and the hop the packet is on.
    pub route: u32,
    pub hop: u8,
    pub ecn: Ecn,
    pub payload: Payload,
}

// Packets are copied by value at every queue, link and delay-line step: keep them
// small (104 bytes before ACK offsets and the feedback table, 72 before 24-bit SACK
// offsets; see docs/benchmarks.md). At 56 bytes a packet with its time (a delay-line
// or qdisc entry) fills one 64-byte cache line.
const _: () = assert!(std::mem::size_of::<Ack>() == 40);
const _: () = assert!(std::mem::size_of::<Payload>() == 40);
const _: () = assert!(std::mem::size_of::<Packet>() == 56);

impl Packet {
    pub fn is_data(&self) -> bool {
        matches!(self.payload, Payload::Data(_) | Payload::Datagram { .. })
    }

    /// A SYN, SYN-ACK or handshake ACK.
    pub fn is_handshake(&self) -> bool {
        matches!(self.payload, Payload::Handshake(_))
    }

    /// The packet travels toward the flow's sender (ACKs, SYN-ACKs, feedback);
    /// otherwise toward its receiver.
    pub fn to_sender(&self) -> bool {
        match self.payload {
            Payload::Data(_) | Payload::Datagram { .. } => false,
            Payload::Ack(_) | Payload::Feedback(_) => true,
            Payload::Handshake(h) => h.kind == HandshakeKind::SynAck,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ack_keeps_sack_blocks_and_dsack_exactly() {
        let cum = (1u64 << 40) + 7;
        let blocks = [(cum + 10, cum + 12), (cum + 3, cum + 5), (cum + 1, cum + 2)];
        let mut a = Ack::new(cum, &blocks, Some(cum - 4), true, 99, false);
        assert_eq!(a.n_sack(), 3);
        assert_eq!(a.sack_blocks().collect::<Vec<_>>(), blocks);
        assert_eq!(a.dsack(), Some(cum - 4));
        a.set_dsack(Some(cum + 11));
        assert_eq!(a.dsack(), Some(cum + 11));
        a.set_dsack(None);
        assert_eq!(a.dsack(), None);
        assert_eq!(Ack::new(5, &[], None, false, 0, false).sack_blocks().count(), 0);
    }

    #[test]
    fn ack_keeps_the_largest_offsets_and_fewer_blocks() {
        let cum = 1u64 << 33;
        let top = cum + MAX_WINDOW_SEGS as u64;
        for n in 0..=MAX_SACK_BLOCKS {
            let blocks: Vec<(u64, u64)> = (0..n as u64).map(|i| (top - 2 * i - 1, top - 2 * i)).collect();
            let a = Ack::new(cum, &blocks, Some(cum - (1 << 30)), false, u64::MAX, true);
            assert_eq!((a.n_sack(), a.sack_blocks().collect::<Vec<_>>()), (n, blocks));
            assert_eq!((a.dsack(), a.tsecr, a.delayed, a.ece), (Some(cum - (1 << 30)), u64::MAX, true, false));
        }
    }

    #[test]
    #[should_panic(expected = "SACK block below cum")]
    fn ack_refuses_a_block_it_cannot_store() {
        Ack::new(100, &[(90, 95)], None, false, 0, false);
    }

    #[test]
    #[should_panic(expected = "2^24 segments above it")]
    fn ack_refuses_a_block_beyond_the_largest_window() {
        Ack::new(100, &[(101, 100 + (1 << 24))], None, false, 0, false);
    }

    #[test]
    #[should_panic(expected = "empty SACK block")]
    fn ack_refuses_an_empty_block() {
        Ack::new(100, &[(105, 105)], None, false, 0, false);
    }

    #[test]
    #[should_panic(expected = "D-SACK segment")]
    fn ack_refuses_a_dsack_it_cannot_store() {
        Ack::new(1 << 40, &[], Some(1), false, 0, false);
    }

    #[test]
    fn feedback_table_reuses_freed_slots() {
        let mut t = FeedbackTable::default();
        let a = t.insert(NetworkFeedback { flows: 1, ..Default::default() });
        let b = t.insert(NetworkFeedback { flows: 2, ..Default::default() });
        assert_ne!(a, b);
        assert_eq!(t.take(a).flows, 1);
        let c = t.insert(NetworkFeedback { flows: 3, ..Default::default() });
        assert_eq!(c, a);
        assert_eq!(t.take(b).flows, 2);
        assert_eq!(t.take(c).flows, 3);
    }
}
