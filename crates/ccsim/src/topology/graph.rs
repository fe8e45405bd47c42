//! The general builder every topology reduces to: routers, duplex links between
//! them, and each sender's route over the routers. [`check`] turns that description
//! into a [`Plan`] (each sender's links with their direction), rejecting unknown
//! routers, duplicate links, routes with a loop or a gap, and RTTs below their
//! route's propagation delay; [`build`] makes the links and the route table.
//!
//! Link order (and so each link's seeded streams): duplex link i is links 2i
//! (forward) and 2i + 1 (reverse), then each sender's four access links. A one-hop
//! topology therefore builds exactly the links of the historical dumbbell.

use std::borrow::Cow;

use super::{FlowPath, Network, RouteTable};
use crate::config::{DelayPath, DuplexLinkConfig, GraphConfig, LinkConfig, LossConfig, QdiscConfig, SenderConfig};
use crate::net::LinkId;
use crate::units::Time;

/// Queue limit of a reverse direction when not configured (Linux's default
/// `txqueuelen` of 1000 packets).
pub const DEFAULT_REVERSE_QUEUE_PKTS: u64 = 1000;

/// A duplex link between routers `from` and `to` (indices into [`Topology::nodes`]).
#[derive(Debug, Clone)]
pub struct Edge<'a> {
    pub from: usize,
    pub to: usize,
    /// Field path of the link in the engine configuration, for errors.
    pub path: String,
    pub name: &'a str,
    pub forward: &'a LinkConfig,
    pub reverse: Cow<'a, LinkConfig>,
}

/// Any topology as routers, duplex links and senders with routes.
#[derive(Debug, Clone)]
pub struct Topology<'a> {
    pub nodes: Vec<String>,
    pub edges: Vec<Edge<'a>>,
    pub senders: &'a [SenderConfig],
    /// Route of a sender whose `route` is empty (`None`: a route is required).
    pub default_route: Option<Vec<usize>>,
}

/// A checked topology: each sender's data path as (edge index, forward?) hops.
#[derive(Debug, Clone)]
pub struct Plan<'a> {
    pub topology: Topology<'a>,
    pub paths: Vec<Vec<(usize, bool)>>,
}

/// The reverse direction of `forward` when none is configured: same rate and delay,
/// a 1000-packet pfifo, no loss, no rate schedule.
pub fn default_reverse(forward: &LinkConfig) -> LinkConfig {
    LinkConfig {
        rate_bps: forward.rate_bps,
        delay_ns: forward.delay_ns,
        jitter_ns: forward.jitter_ns,
        qdisc: QdiscConfig::Pfifo { limit_packets: DEFAULT_REVERSE_QUEUE_PKTS },
        loss: 0.0,
        gilbert_elliott: None,
        rate_schedule: Vec::new(),
        limit_includes_head: false,
    }
}

fn list(names: &[String]) -> String {
    names.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(", ")
}

/// A duplex link's edge: its reverse direction as configured or the default.
pub fn edge<'a>(from: usize, to: usize, path: String, l: &'a DuplexLinkConfig) -> Edge<'a> {
    let reverse = match &l.reverse {
        Some(r) => Cow::Borrowed(r),
        None => Cow::Owned(default_reverse(&l.forward)),
    };
    Edge { from, to, path, name: &l.name, forward: &l.forward, reverse }
}

/// The general topology of the configuration (`topology.kind = "graph"`).
pub fn from_config(g: &GraphConfig) -> Result<Topology<'_>, String> {
    for (i, n) in g.nodes.iter().enumerate() {
        if n.is_empty() {
            return Err(format!("nodes[{i}]: a router name must not be empty"));
        }
        if g.nodes[..i].contains(n) {
            return Err(format!("nodes[{i}]: router name '{n}' is used twice"));
        }
    }
    let node = |path: String, n: &str| {
        g.nodes
            .iter()
            .position(|m| m == n)
            .ok_or_else(|| format!("{path}: '{n}' is not a router (nodes: {})", list(&g.nodes)))
    };
    let mut edges = Vec::with_capacity(g.links.len());
    for (i, l) in g.links.iter().enumerate() {
        let from = node(format!("links[{i}].from"), &l.from)?;
        let to = node(format!("links[{i}].to"), &l.to)?;
        edges.push(edge(from, to, format!("links[{i}].link"), &l.link));
    }
    Ok(Topology { nodes: g.nodes.clone(), edges, senders: &g.senders, default_route: None })
}

/// Check the topology and resolve every sender's route into links.
pub fn check(t: Topology<'_>) -> Result<Plan<'_>, String> {
    let mut seen_names: Vec<(String, &str)> = Vec::new();
    for e in &t.edges {
        for name in [e.name.to_string(), format!("{}_rev", e.name)] {
            if let Some((_, other)) = seen_names.iter().find(|(n, _)| *n == name) {
                return Err(format!("{}.name: link name '{name}' is also used by {other}", e.path));
            }
            seen_names.push((name, &e.path));
        }
        if e.from == e.to {
            return Err(format!("{}: a link must join two different routers ('{}' twice)", e.path, t.nodes[e.from]));
        }
    }
    for (i, a) in t.edges.iter().enumerate() {
        if let Some(b) = t.edges[..i].iter().find(|b| (b.from, b.to) == (a.from, a.to) || (b.from, b.to) == (a.to, a.from)) {
            return Err(format!(
                "{}: a second link between '{}' and '{}' ({} is the first); routes name routers, so parallel links are ambiguous",
                a.path, t.nodes[a.from], t.nodes[a.to], b.path
            ));
        }
    }
    let mut paths = Vec::with_capacity(t.senders.len());
    for (i, s) in t.senders.iter().enumerate() {
        let route: Vec<usize> = if s.route.is_empty() {
            t.default_route.clone().ok_or_else(|| format!("senders[{i}].route: a route of routers is required"))?
        } else {
            s.route
                .iter()
                .map(|n| {
                    t.nodes.iter().position(|m| m == n).ok_or_else(|| {
                        format!("senders[{i}].route: '{n}' is not a router (routers: {})", list(&t.nodes))
                    })
                })
                .collect::<Result<_, _>>()?
        };
        for (k, &n) in route.iter().enumerate() {
            if route[..k].contains(&n) {
                return Err(format!("senders[{i}].route: router '{}' appears twice (the route has a loop)", t.nodes[n]));
            }
        }
        let mut hops = Vec::with_capacity(route.len().saturating_sub(1));
        for w in route.windows(2) {
            let hop = t.edges.iter().enumerate().find_map(|(k, e)| match (e.from, e.to) {
                (a, b) if (a, b) == (w[0], w[1]) => Some((k, true)),
                (a, b) if (a, b) == (w[1], w[0]) => Some((k, false)),
                _ => None,
            });
            let hop = hop.ok_or_else(|| {
                format!("senders[{i}].route: no link between '{}' and '{}'", t.nodes[w[0]], t.nodes[w[1]])
            })?;
            hops.push(hop);
        }
        if hops.len() > 250 {
            return Err(format!("senders[{i}].route: {} links is too long (at most 250)", hops.len()));
        }
        let prop = propagation_rtt(&t, &hops);
        if s.rtt_ns < prop {
            return Err(format!(
                "senders[{i}].rtt_ns: {} is below the propagation RTT of its route ({prop})",
                s.rtt_ns
            ));
        }
        if s.jitter_ns > 0 {
            let (fwd, rev) = access_delays(s, s.rtt_ns - prop);
            let least = [fwd, rev].into_iter().filter(|&d| d > 0).min();
            if least.is_none_or(|d| s.jitter_ns > d) {
                return Err(format!(
                    "senders[{i}].jitter_ns: {} exceeds the one-way access delay it varies ({}: rtt_ns less the route's propagation RTT, placed by delay_path)",
                    s.jitter_ns,
                    least.unwrap_or(0)
                ));
            }
        }
        paths.push(hops);
    }
    Ok(Plan { topology: t, paths })
}

/// Round-trip propagation delay of a data path and its reverse.
fn propagation_rtt(t: &Topology<'_>, hops: &[(usize, bool)]) -> Time {
    hops.iter()
        .map(|&(k, _)| t.edges[k].forward.delay_ns + t.edges[k].reverse.delay_ns)
        .sum()
}

/// The one-way delays of a sender's access links (data, ACK direction): the path's
/// delay beyond its route's links (`access`), placed by `delay_path`.
fn access_delays(s: &SenderConfig, access: Time) -> (Time, Time) {
    match s.delay_path {
        DelayPath::Split => (access / 2, access / 2),
        DelayPath::Data => (access, 0),
        DelayPath::Ack => (0, access),
    }
}

/// Build the links and routes of a checked plan.
pub fn build(seed: u64, plan: &Plan<'_>) -> Network {
    let t = &plan.topology;
    let mut links = Vec::new();
    for e in &t.edges {
        for (name, cfg) in [(e.name.to_string(), e.forward), (format!("{}_rev", e.name), e.reverse.as_ref())] {
            let mut link = super::link_from_config(seed, links.len(), name, cfg);
            link.recorded = true;
            links.push(link);
        }
    }
    // Route 2i carries sender i's data, route 2i + 1 its ACKs.
    let mut routes = RouteTable::default();
    for (s, hops) in t.senders.iter().zip(&plan.paths) {
        let (fwd_delay, rev_delay) = access_delays(s, s.rtt_ns - propagation_rtt(t, hops));
        let base = links.len() as LinkId;
        let names = ["access_fwd", "egress_fwd", "egress_rev", "access_rev"];
        let no_loss = LossConfig::default();
        let losses = [&s.access_loss, &no_loss, &no_loss, &s.access_reverse_loss];
        for ((name, delay), loss) in names.iter().zip([fwd_delay, 0, 0, rev_delay]).zip(losses) {
            let mut access = LinkConfig {
                rate_bps: s.access_rate_bps,
                delay_ns: delay,
                // The sender's jitter varies the directions that carry its delay.
                jitter_ns: if delay > 0 { s.jitter_ns } else { 0 },
                qdisc: QdiscConfig::Pfifo { limit_packets: s.access_queue_packets },
                loss: 0.0,
                gilbert_elliott: None,
                rate_schedule: Vec::new(),
                limit_includes_head: false,
            };
            access.set_loss(loss);
            links.push(super::link_from_config(seed, links.len(), format!("{name}:{}", s.name), &access));
        }
        let link_of = |&(k, fwd): &(usize, bool)| (2 * k + usize::from(!fwd)) as LinkId;
        let mut data = vec![base];
        data.extend(hops.iter().map(link_of));
        data.push(base + 1);
        let mut acks = vec![base + 2];
        acks.extend(hops.iter().rev().map(|&(k, fwd)| link_of(&(k, !fwd))));
        acks.push(base + 3);
        routes.add(&data);
        routes.add(&acks);
    }
    let sender_paths = t
        .senders
        .iter()
        .enumerate()
        .map(|(i, s)| FlowPath { fwd_route: 2 * i as u32, rev_route: 2 * i as u32 + 1, sender: i, base_rtt_ns: s.rtt_ns })
        .collect();
    let sender_names = t.senders.iter().map(|s| s.name.clone()).collect();
    Network { links, routes, sender_paths, sender_names }
}
