//! The parking lot: k bottlenecks in series. Routers `r0` … `rk`; hop i carries data
//! from `r{i}` to `r{i+1}` (its reverse direction carries ACKs back). Each sender's
//! data crosses the routers of its `route` — the long flow all of them (the default),
//! a cross flow one or a few consecutive hops — entering through its own access link
//! (which carries the rest of its RTT) and leaving to its receivers after the last.
//!
//! ```text
//! long ──▶ r0 ══hop0══▶ r1 ══hop1══▶ r2 ──▶ long's receivers
//!  cross0 ──▶ r0 ══hop0══▶ r1 ──▶ cross0's receivers
//!              cross1 ──▶ r1 ══hop1══▶ r2 ──▶ cross1's receivers
//! ```

use super::graph::{edge, Topology};
use crate::config::ParkingLotConfig;

/// Name of router `i` of a parking lot.
pub fn router(i: usize) -> String {
    format!("r{i}")
}

pub fn from_config(p: &ParkingLotConfig) -> Result<Topology<'_>, String> {
    if p.hops.is_empty() {
        return Err("hops: a parking lot needs at least one hop".into());
    }
    let edges = p.hops.iter().enumerate().map(|(i, h)| edge(i, i + 1, format!("hops[{i}]"), h)).collect();
    Ok(Topology {
        nodes: (0..=p.hops.len()).map(router).collect(),
        edges,
        senders: &p.senders,
        default_route: Some((0..=p.hops.len()).collect()),
    })
}
