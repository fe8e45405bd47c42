//! The dumbbell: N senders, each with an access link to router A; the bottleneck
//! A→B; B to one receiver per sender. Links are unidirectional; ACKs use the
//! mirror-image path:
//!
//! ```text
//! sender i ──access_fwd[i]──▶ A ══bottleneck══▶ B ──egress_fwd[i]──▶ receiver i
//! sender i ◀──access_rev[i]── A ◀═bottleneck_rev═ B ◀──egress_rev[i]── receiver i
//! ```
//!
//! Sender i's base RTT is carried by its access links: rtt − 2·bottleneck delay,
//! half each way, or all on access_fwd (`delay_path = data`) or all on access_rev
//! (`delay_path = ack`); egress links have no delay. It is the one-hop case of the
//! general builder ([`super::graph`]).

use std::borrow::Cow;

use super::graph::{default_reverse, Edge, Topology};
use crate::config::DumbbellConfig;

pub fn from_config(d: &DumbbellConfig) -> Result<Topology<'_>, String> {
    for (i, s) in d.senders.iter().enumerate() {
        if !s.route.is_empty() && s.route != ["A", "B"] {
            return Err(format!("senders[{i}].route: a dumbbell's only route is [\"A\", \"B\"]"));
        }
    }
    let reverse = match &d.reverse_bottleneck {
        Some(r) => Cow::Borrowed(r),
        None => Cow::Owned(default_reverse(&d.bottleneck)),
    };
    let bottleneck = Edge { from: 0, to: 1, path: "bottleneck".into(), name: "bottleneck", forward: &d.bottleneck, reverse };
    Ok(Topology {
        nodes: vec!["A".into(), "B".into()],
        edges: vec![bottleneck],
        senders: &d.senders,
        default_route: Some(vec![0, 1]),
    })
}
