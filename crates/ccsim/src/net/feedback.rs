//! Network-to-sender feedback: the engine's one hook for a network element (a qdisc
//! on some link) to tell a flow's sender something directly, over the reverse path,
//! without waiting for the receiver to echo it.
//!
//! How it works, end to end:
//!
//! 1. A qdisc, inside `enqueue` or `dequeue`, pushes a [`FeedbackRequest`] onto its
//!    [`crate::qdisc::Report`] (`report.feedback`): *which* packet's sender to tell
//!    (the flow id and the forward hop the packet is on) and the message.
//! 2. The world collects the report after the call, stamps the fields only the link
//!    knows ([`NetworkFeedback::link`], [`NetworkFeedback::link_rate_bps`] — the
//!    link's rate at that instant, following rate schedules) and sends a
//!    [`FEEDBACK_WIRE_BYTES`]-byte packet (`Payload::Feedback`) onto the flow's
//!    reverse route, starting at the hop that leads back from the element to the
//!    sender: routes are mirror images in every topology builder, so an element at
//!    forward hop `k` sits where the reverse route's last `k` hops begin. (A route
//!    pair that is not mirrored sends feedback over the whole reverse route.)
//! 3. The packet is queued, serialized, propagated and may be dropped like any
//!    other (`RunStats::feedback_pkts_*`); it takes the element-to-sender delay, not
//!    a round trip. At the sending host it goes to
//!    [`crate::tcp::Sender::on_feedback`], which calls the CCA's
//!    [`crate::cc::CongestionControl::on_feedback`] and then sends what the new
//!    window allows. Each delivery is a `feedback` row in the `events` table.
//!
//! The message is deliberately generic: NCF fills the queue, the number of active
//! elephants and the measured rate of the mice served ahead of them (so the sender
//! sizes its window for the capacity the elephants actually get) (`qdisc/ncf.rs`, `cc/ncf.rs`); an RCP-style element
//! would fill [`NetworkFeedback::rate_bps`] with the rate it grants; an XCP-style one
//! the window change in [`NetworkFeedback::cwnd_delta_pkts`]. CCAs that do not
//! implement `on_feedback` ignore it.

use crate::net::LinkId;
use crate::units::{Bps, Time};

/// Bytes on the wire of a feedback packet: a minimum Ethernet frame, the size of a
/// packet a switch data plane generates (a stated choice; NCF's chapter gives no size).
pub const FEEDBACK_WIRE_BYTES: u32 = 64;

/// What a network element tells a sender.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NetworkFeedback {
    /// The link whose element sent it (stamped by the world).
    pub link: LinkId,
    /// When the element generated it (ns).
    pub sent_at: Time,
    /// Rate of that link when the feedback was generated (bit/s; stamped by the world).
    pub link_rate_bps: Bps,
    /// Backlog of the queue the flow's packets wait in (bytes).
    pub queue_bytes: u64,
    /// How many flows the element counts as sharing that queue (NCF: active elephants).
    pub flows: u32,
    /// Rate (bit/s) at which the element recently served traffic that its scheduler
    /// puts ahead of the flow's queue (NCF: the strict-priority mice queue), as the
    /// element measured it; 0 if nothing goes first. The flow's queue gets the rest:
    /// [`NetworkFeedback::available_rate_bps`].
    pub priority_rate_bps: Bps,
    /// An explicit rate granted to the flow (RCP-style), if the element computes one.
    pub rate_bps: Option<Bps>,
    /// An explicit window change (XCP-style, packets), if the element computes one.
    pub cwnd_delta_pkts: Option<i64>,
}

impl NetworkFeedback {
    /// The capacity left to the flow's queue: the link rate minus what the element
    /// served ahead of it (as explicit-rate schemes estimate spare capacity, RCP's and
    /// XCP's C − y), never below zero.
    pub fn available_rate_bps(&self) -> Bps {
        self.link_rate_bps.saturating_sub(self.priority_rate_bps)
    }
}

/// A qdisc's request to send `msg` to the sender of `flow`, whose packet was on
/// forward hop `hop` of its route when the element saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeedbackRequest {
    pub flow: u32,
    pub hop: u8,
    pub msg: NetworkFeedback,
}

/// Where a feedback packet joins the reverse route: the hop index on the reverse
/// route (of `rev_len` hops) that leads back from an element at forward hop `hop`
/// of a `fwd_len`-hop route. `None`: the element is at the sender's own first hop, so
/// nothing lies between them (the packet is delivered at once).
pub fn reverse_entry_hop(fwd_len: usize, rev_len: usize, hop: usize) -> Option<usize> {
    if fwd_len != rev_len {
        return Some(0);
    }
    let entry = rev_len - hop.min(rev_len);
    (entry < rev_len).then_some(entry)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_hop_mirrors_the_forward_position() {
        // Dumbbell: [access_fwd, bottleneck, egress_fwd] / [egress_rev, bottleneck_rev, access_rev].
        // The bottleneck's element (forward hop 1) sits where access_rev (reverse hop 2) starts.
        assert_eq!(reverse_entry_hop(3, 3, 1), Some(2));
        assert_eq!(reverse_entry_hop(3, 3, 2), Some(1));
        // The sender's own access queue: no link between element and sender.
        assert_eq!(reverse_entry_hop(3, 3, 0), None);
        // Routes that are not mirrors: the whole reverse route.
        assert_eq!(reverse_entry_hop(3, 4, 1), Some(0));
    }
}

/// Feedback messages in flight, by slot: a feedback packet carries its slot
/// (`Payload::Feedback`) rather than the message, which is larger than a data
/// segment or ACK and would widen every packet copied through queues and links.
/// A slot is freed when its packet is delivered or dropped.
#[derive(Debug, Default)]
pub struct FeedbackTable {
    msgs: Vec<NetworkFeedback>,
    free: Vec<u32>,
}

impl FeedbackTable {
    /// Store `msg` and return its slot.
    pub fn insert(&mut self, msg: NetworkFeedback) -> u32 {
        match self.free.pop() {
            Some(slot) => {
                self.msgs[slot as usize] = msg;
                slot
            }
            None => {
                let slot = u32::try_from(self.msgs.len()).expect("more than 2^32 feedback packets in flight");
                self.msgs.push(msg);
                slot
            }
        }
    }

    /// The message in `slot`, freeing the slot.
    pub fn take(&mut self, slot: u32) -> NetworkFeedback {
        debug_assert!(!self.free.contains(&slot), "feedback slot {slot} taken twice");
        self.free.push(slot);
        self.msgs[slot as usize]
    }
}
