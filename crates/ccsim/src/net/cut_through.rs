//! Cut-through: a packet leaving link A for a link B that only A feeds is handed to B
//! when A starts transmitting it, instead of when it reaches the end of A's delay
//! line, if B will be idle then. B's state is a function of A's output alone (nothing
//! else enters B), A's line is a FIFO, and B is a plain FIFO without random loss or
//! rate changes, so B does at the arrival instant exactly what it would have done
//! when an arrival event fired: the packet starts serializing on B at its arrival
//! time and goes onto B's delay line. (A link that computes departures at enqueue,
//! `net/link.rs`, starts a packet, putting it on its delay line, when it admits it:
//! the hand-over to B happens then, earlier still, by the same reasoning.) It saves
//! one event per packet per such hop (the egress links behind a bottleneck, the last
//! links of the ACK path); chains of such links are cut through one after the other. Only event sequence numbers change, so
//! events at the very same nanosecond may be processed in another order than with an
//! arrival event per hop.
//!
//! Neither A nor B may be jittered (`Link::jittered`): A's line would not be in
//! transmission order, and B's delay draw would happen at another event than without
//! cut-through.
//!
//! B is skipped (the packet takes its arrival event as before) when it is recorded
//! (its queue samples would see the packet before its arrival), when it would be
//! busy or hold packets at the arrival, when its qdisc would not admit the packet,
//! while packets bound for it are still on A's line (B's input order must stay A's
//! output order), and past the end of the run. A packet cut through across the
//! warm-up instant takes B's warm-up snapshot with it (everything B does from then on
//! happens after the warm-up).

use super::{Link, LinkId};
use crate::topology::routing::RouteTable;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Feeder {
    /// No route enters this link.
    Unused,
    /// Every packet entering this link comes off this one link's delay line.
    Only(LinkId),
    /// Several links, or an end host or a network element, put packets on it.
    Several,
}

/// Which links may receive packets cut through from their one feeding link, and
/// how many packets bound for each wait on their feeder's line meanwhile.
#[derive(Debug)]
pub struct CutThrough {
    /// `Some(a)`: link b's only input is link a and b may take packets early.
    feeder: Vec<Option<LinkId>>,
    /// Whether a link feeds some link that may take packets cut through.
    feeds: Vec<bool>,
    /// Packets on the feeder's delay line bound for this link (not cut through).
    on_feeder_line: Vec<u32>,
}

impl CutThrough {
    /// `enabled` is false when packets may enter links mid-route from elsewhere
    /// (network feedback enters the reverse path at the element's hop).
    pub fn new(links: &[Link], routes: &RouteTable, enabled: bool) -> Self {
        let mut feeders = vec![Feeder::Unused; links.len()];
        for r in 0..routes.len() as u32 {
            for (i, &l) in routes.hops(r).iter().enumerate() {
                let from = if i == 0 { None } else { Some(routes.hops(r)[i - 1]) };
                let f = &mut feeders[l as usize];
                *f = match (*f, from) {
                    (Feeder::Unused, Some(a)) => Feeder::Only(a),
                    (Feeder::Only(a), Some(b)) if a == b => Feeder::Only(a),
                    _ => Feeder::Several,
                };
            }
        }
        let feeder = feeders
            .iter()
            .zip(links)
            .map(|(f, l)| match f {
                // A jittered feeder's line is not in transmission order.
                Feeder::Only(a) if enabled && l.accepts_cut_through() && !links[*a as usize].jittered() => Some(*a),
                _ => None,
            })
            .collect::<Vec<_>>();
        let mut feeds = vec![false; links.len()];
        for a in feeder.iter().flatten() {
            feeds[*a as usize] = true;
        }
        Self { feeder, feeds, on_feeder_line: vec![0; links.len()] }
    }

    /// Whether packets leaving `from` may ever be cut through (checked first: most
    /// links feed none).
    pub fn feeds(&self, from: LinkId) -> bool {
        self.feeds[from as usize]
    }

    /// Whether `next` takes packets cut through from `from` now (nothing bound for it
    /// waits on `from`'s line); the caller still checks that `next` will be idle.
    pub fn may_cut(&self, from: LinkId, next: LinkId) -> bool {
        self.feeder[next as usize] == Some(from) && self.on_feeder_line[next as usize] == 0
    }

    /// A packet from `from` bound for `next` stays on `from`'s delay line.
    pub fn note_on_line(&mut self, from: LinkId, next: LinkId) {
        if self.feeder[next as usize] == Some(from) {
            self.on_feeder_line[next as usize] += 1;
        }
    }

    /// A packet from `from` reached `next` through its arrival event.
    pub fn note_arrived(&mut self, from: LinkId, next: LinkId) {
        if self.feeder[next as usize] == Some(from) {
            self.on_feeder_line[next as usize] -= 1;
        }
    }
}
