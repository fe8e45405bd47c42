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
//! (`delay_path = ack`); egress links have no delay.

use super::{FlowPath, Network, RouteTable};
use crate::config::{DelayPath, DumbbellConfig, FlowConfig, LinkConfig, QdiscConfig};
use crate::net::LinkId;

/// Queue limit of the reverse bottleneck when not configured (Linux's default
/// `txqueuelen` of 1000 packets).
pub const DEFAULT_REVERSE_QUEUE_PKTS: u64 = 1000;

pub fn build(seed: u64, d: &DumbbellConfig, flows: &[FlowConfig]) -> Result<Network, String> {
    let mut links = Vec::new();
    let bn = &d.bottleneck;
    let mut fwd = super::link_from_config(seed, 0, "bottleneck".into(), bn);
    fwd.recorded = true;
    links.push(fwd);
    let default_rev = LinkConfig {
        rate_bps: bn.rate_bps,
        delay_ns: bn.delay_ns,
        qdisc: QdiscConfig::Pfifo { limit_packets: DEFAULT_REVERSE_QUEUE_PKTS },
        loss: 0.0,
        gilbert_elliott: None,
        rate_schedule: Vec::new(),
        limit_includes_head: false,
    };
    let mut rev = super::link_from_config(seed, 1, "bottleneck_rev".into(), d.reverse_bottleneck.as_ref().unwrap_or(&default_rev));
    rev.recorded = true;
    links.push(rev);

    // Route 2i carries sender i's data, route 2i + 1 its ACKs.
    let mut routes = RouteTable::default();
    for s in &d.senders {
        let access = s.rtt_ns - 2 * bn.delay_ns;
        let (fwd_delay, rev_delay) = match s.delay_path {
            DelayPath::Split => (access / 2, access / 2),
            DelayPath::Data => (access, 0),
            DelayPath::Ack => (0, access),
        };
        let base = links.len() as LinkId;
        let names = ["access_fwd", "egress_fwd", "egress_rev", "access_rev"];
        let delays = [fwd_delay, 0, 0, rev_delay];
        for (name, delay) in names.iter().zip(delays) {
            let access = LinkConfig {
                rate_bps: s.access_rate_bps,
                delay_ns: delay,
                qdisc: QdiscConfig::Pfifo { limit_packets: s.access_queue_packets },
                loss: 0.0,
                gilbert_elliott: None,
                rate_schedule: Vec::new(),
                limit_includes_head: false,
            };
            links.push(super::link_from_config(seed, links.len(), format!("{name}:{}", s.name), &access));
        }
        routes.add(&[base, 0, base + 1]); // data: access_fwd, bottleneck, egress_fwd
        routes.add(&[base + 2, 1, base + 3]); // acks: egress_rev, bottleneck_rev, access_rev
    }

    let paths = flows
        .iter()
        .map(|f| FlowPath {
            fwd_route: 2 * f.sender as u32,
            rev_route: 2 * f.sender as u32 + 1,
            sender: f.sender,
            base_rtt_ns: d.senders[f.sender].rtt_ns,
        })
        .collect();
    let sender_names = d.senders.iter().map(|s| s.name.clone()).collect();
    Ok(Network { links, routes, paths, sender_names })
}
