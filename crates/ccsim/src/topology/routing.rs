//! The route table: every route is a sequence of link ids of any length, stored
//! flat so that forwarding a packet is two indexed loads and no allocation.

use crate::net::LinkId;

/// Index of a route in the [`RouteTable`]; packets carry it.
pub type RouteId = u32;

/// Static routes, built once by a topology builder.
#[derive(Debug, Clone, Default)]
pub struct RouteTable {
    hops: Vec<LinkId>,
    /// `(start, end)` of each route's hops in `hops`.
    spans: Vec<(u32, u32)>,
}

impl RouteTable {
    /// Add a route through `links` (in order) and return its id.
    pub fn add(&mut self, links: &[LinkId]) -> RouteId {
        assert!(!links.is_empty(), "a route needs at least one link");
        assert!(links.len() <= u8::MAX as usize + 1, "a route has at most 256 hops (Packet::hop is a u8)");
        let start = self.hops.len() as u32;
        self.hops.extend_from_slice(links);
        self.spans.push((start, self.hops.len() as u32));
        (self.spans.len() - 1) as RouteId
    }

    /// The links of route `r`, in order.
    pub fn hops(&self, r: RouteId) -> &[LinkId] {
        let (a, b) = self.spans[r as usize];
        &self.hops[a as usize..b as usize]
    }

    /// The link at position `hop` of route `r`, or `None` past its end.
    pub fn link_at(&self, r: RouteId, hop: usize) -> Option<LinkId> {
        self.hops(r).get(hop).copied()
    }

    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_of_any_length_round_trip() {
        let mut t = RouteTable::default();
        let a = t.add(&[3]);
        let b = t.add(&[0, 1, 2, 5, 4]);
        assert_eq!(t.hops(a), &[3]);
        assert_eq!(t.hops(b), &[0, 1, 2, 5, 4]);
        assert_eq!(t.link_at(b, 4), Some(4));
        assert_eq!(t.link_at(b, 5), None);
        assert_eq!(t.len(), 2);
    }
}
