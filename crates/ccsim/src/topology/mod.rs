//! Topology building: turns the configured topology into the [`Network`] the event
//! loop runs — links, a route table, and each flow's forward (data) and reverse (ACK)
//! route. The event loop knows only links and routes; everything about dumbbells,
//! access links and how RTTs are split over hops lives in the builders here.
//!
//! One file per builder ([`dumbbell`], [`parking_lot`]) reducing its configuration to
//! the general description of [`graph`] (routers, duplex links, routes over routers),
//! which checks routes and builds the links; plus [`routing`] (the route table).

pub mod dumbbell;
pub mod graph;
pub mod parking_lot;
pub mod routing;

pub use routing::{RouteId, RouteTable};

use crate::config::{ExperimentConfig, LinkConfig, QdiscConfig, TopologyConfig};
use crate::net::Link;
use crate::qdisc::Queue;
use crate::sim::{rng::Component, stream};
use crate::units::Time;

/// Where a flow's packets go and what its table rows say about its path.
#[derive(Debug, Clone)]
pub struct FlowPath {
    /// Route of the flow's data packets (sender to receiver).
    pub fwd_route: RouteId,
    /// Route of its ACKs (receiver to sender).
    pub rev_route: RouteId,
    /// Index into [`Network::sender_names`] of the flow's sending host.
    pub sender: usize,
    /// Base (propagation-only) round-trip time of the flow's path.
    pub base_rtt_ns: Time,
}

/// A built network: what the event loop runs.
#[derive(Debug)]
pub struct Network {
    /// Every unidirectional link; a [`crate::net::LinkId`] indexes this.
    pub links: Vec<Link>,
    pub routes: RouteTable,
    /// The path of each sender's flows (index = sender index); a flow's path is
    /// its sender's.
    pub sender_paths: Vec<FlowPath>,
    /// Names of the sending hosts, for the flows table.
    pub sender_names: Vec<String>,
}

/// The topology as routers, duplex links and checked routes; the error names the
/// offending field of `topology`.
pub fn plan(t: &TopologyConfig) -> Result<graph::Plan<'_>, String> {
    let general = match t {
        TopologyConfig::Dumbbell(d) => dumbbell::from_config(d),
        TopologyConfig::ParkingLot(p) => parking_lot::from_config(p),
        TopologyConfig::Graph(g) => graph::from_config(g),
    };
    graph::check(general.map_err(|e| format!("topology.{e}"))?).map_err(|e| format!("topology.{e}"))
}

/// Build the network of `cfg` (the configuration has been validated).
pub fn build(cfg: &ExperimentConfig) -> Result<Network, String> {
    Ok(graph::build(cfg.seed, &plan(&cfg.topology)?))
}

/// Link `index` of a network, built from its configuration: its loss process and its
/// qdisc each draw from their own stream (`LinkLoss`, `Qdisc`) of that index.
pub fn link_from_config(seed: u64, index: usize, name: String, c: &LinkConfig) -> Link {
    let queue = Queue::from_config(&c.qdisc, stream(seed, Component::Qdisc, index as u64));
    let mut link = Link::new(name, c.rate_bps, c.delay_ns, c.loss_config(), queue, stream(seed, Component::LinkLoss, index as u64));
    link.rate_schedule = c.rate_schedule.clone();
    link.limit_includes_head = c.limit_includes_head;
    link.set_jitter(c.jitter_ns, stream(seed, Component::LinkJitter, index as u64));
    link.plain_fifo = matches!(c.qdisc, QdiscConfig::Pfifo { .. } | QdiscConfig::Bfifo { .. })
        && c.jitter_ns == 0
        && c.loss == 0.0
        && c.gilbert_elliott.is_none()
        && c.rate_schedule.is_empty();
    // Departures at enqueue wherever they are known then (a FIFO, a constant rate
    // and delay): no transmit-completion events on such links.
    link.schedule_departures();
    // Only NCF's switch sends feedback; qdiscs with children may hold one.
    link.may_send_feedback = !matches!(
        c.qdisc,
        QdiscConfig::Pfifo { .. }
            | QdiscConfig::Bfifo { .. }
            | QdiscConfig::Red(_)
            | QdiscConfig::Codel(_)
            | QdiscConfig::FqCodel(_)
            | QdiscConfig::Pie(_)
            | QdiscConfig::FqPie(_)
    );
    link
}
