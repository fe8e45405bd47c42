//! Packets, links and routes. A packet moves by value through link queues; it
//! carries its route (an index into the topology's route table) and its position on
//! it, so forwarding is a table lookup (static routes, precomputed by the builder).

pub mod cut_through;
pub mod feedback;
pub mod link;
pub mod loss;

pub use cut_through::CutThrough;
pub use feedback::{FeedbackRequest, NetworkFeedback, FEEDBACK_WIRE_BYTES};
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ack {
    /// Next segment expected (cumulative ACK).
    pub cum: u64,
    /// SACK blocks [start, end) in segments, most recent first; `n_sack` are valid.
    pub sack: [(u64, u64); MAX_SACK_BLOCKS],
    pub n_sack: u8,
    /// The duplicate segment this ACK reports (D-SACK, RFC 2883: the first SACK
    /// block), if any.
    pub dsack: Option<u64>,
    /// ECN echo.
    pub ece: bool,
    /// Timestamp echo reply (TSecr).
    pub tsecr: Time,
    /// The ACK was delayed by the receiver's delayed-ACK logic.
    pub delayed: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Payload {
    Data(Segment),
    Ack(Ack),
    /// A network element's message to the flow's sender (see [`feedback`]).
    Feedback(NetworkFeedback),
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
