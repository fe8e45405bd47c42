//! Topologies beyond the dumbbell: a parking lot routes each flow over the right
//! links (per-link byte counters) and penalizes the flow that crosses every
//! bottleneck; a general graph follows its routes; bad routes are rejected.

mod common;

use ccsim::config::*;
use ccsim::trace::{Column, Table};
use ccsim::units::{ms, secs};
use common::{assert_conservation, dumbbell, flow, goodputs};

fn link(rate_mbps: u64, delay_ms: u64, limit_packets: u64) -> LinkConfig {
    LinkConfig {
        rate_bps: rate_mbps * 1_000_000,
        delay_ns: ms(delay_ms),
        jitter_ns: 0,
        qdisc: QdiscConfig::Pfifo { limit_packets },
        loss: 0.0,
        gilbert_elliott: None,
        rate_schedule: vec![],
        limit_includes_head: true,
    }
}

fn duplex(name: &str, l: LinkConfig) -> DuplexLinkConfig {
    DuplexLinkConfig { name: name.into(), forward: l, reverse: None }
}

fn sender(name: &str, rtt_ms: u64, route: &[&str]) -> SenderConfig {
    SenderConfig {
        name: name.into(),
        rtt_ns: ms(rtt_ms),
        access_rate_bps: 1_000_000_000,
        access_queue_packets: 10_000,
        delay_path: DelayPath::Split,
        jitter_ns: 0,
        host: ccsim::host::HostConfig::linux(),
        route: route.iter().map(|s| s.to_string()).collect(),
        access_loss: LossConfig::default(),
        access_reverse_loss: LossConfig::default(),
    }
}

/// Final `tx_bytes` of every link, by name.
fn tx_bytes(links: &Table) -> impl Fn(&str) -> u64 + '_ {
    let Some(Column::Dict { codes, values }) = links.column("link") else { panic!("link column") };
    let bytes = links.u64s("tx_bytes");
    move |name: &str| {
        let code = values.iter().position(|v| v == name).unwrap_or_else(|| panic!("no link {name}")) as u32;
        bytes[codes.iter().position(|&c| c == code).unwrap()]
    }
}

/// The same network as a one-hop parking lot and as a dumbbell: bit-identical runs.
#[test]
fn a_one_hop_parking_lot_is_the_dumbbell() {
    let mut cfg = dumbbell(50, &[20, 60], 1.0);
    cfg.duration_ns = secs(4);
    cfg.flows = vec![flow(0, "cubic", 0), flow(1, "reno", ms(100))];
    let TopologyConfig::Dumbbell(d) = cfg.topology.clone() else { unreachable!() };
    let lot = ExperimentConfig {
        topology: TopologyConfig::ParkingLot(ParkingLotConfig {
            hops: vec![duplex("bottleneck", d.bottleneck.clone())],
            senders: d.senders.clone(),
        }),
        ..cfg.clone()
    };
    let (a, b) = (ccsim::run(&cfg).unwrap(), ccsim::run(&lot).unwrap());
    assert!(a.flows.bit_identical(&b.flows) && a.flow_ts.bit_identical(&b.flow_ts));
    assert!(a.queue_ts.bit_identical(&b.queue_ts) && a.links.bit_identical(&b.links));
}

/// Two 20 Mbit/s bottlenecks in series; `long` crosses both, `cross0` only the first,
/// `cross1` only the second; equal RTTs.
fn parking_lot() -> ExperimentConfig {
    let mut cfg = dumbbell(20, &[40], 1.0);
    cfg.duration_ns = secs(30);
    cfg.warmup_ns = secs(5);
    cfg.topology = TopologyConfig::ParkingLot(ParkingLotConfig {
        hops: vec![duplex("hop0", link(20, 2, 70)), duplex("hop1", link(20, 2, 70))],
        senders: vec![sender("long", 40, &[]), sender("cross0", 40, &["r0", "r1"]), sender("cross1", 40, &["r1", "r2"])],
    });
    cfg.flows = vec![flow(0, "reno", 0), flow(1, "reno", 0), flow(2, "reno", 0)];
    cfg
}

#[test]
fn a_parking_lot_routes_each_flow_over_its_hops_and_the_long_flow_gets_less() {
    let cfg = parking_lot();
    let out = ccsim::run(&cfg).unwrap();
    assert_conservation(&out);
    let tx = tx_bytes(&out.links);
    // Each hop carries exactly the data that entered through the access links of the
    // senders routed over it, minus what it dropped or still holds: bounded by their
    // sum, and by what reached the receivers after it.
    let sent = |s: &str| tx(&format!("access_fwd:{s}"));
    let received = |s: &str| tx(&format!("egress_fwd:{s}"));
    assert!(tx("hop0") <= sent("long") + sent("cross0"), "hop0 carries only long and cross0");
    assert!(tx("hop0") >= received("cross0") + received("long"));
    assert!(tx("hop1") <= sent("long") + sent("cross1"), "hop1 carries only long and cross1");
    assert!(tx("hop1") >= received("cross1") + received("long"));
    assert!(received("cross1") > tx("hop0") / 4, "cross1's data is a large share, and none of it crosses hop0");
    // ACKs return over the reverse hops of the same route.
    assert!(tx("hop1_rev") >= tx("access_rev:cross1"));
    let g = goodputs(&cfg, &out);
    println!("goodputs (Mbit/s): long {:.2}, cross0 {:.2}, cross1 {:.2}", g[0] / 1e6, g[1] / 1e6, g[2] / 1e6);
    assert!(g[0] < 0.8 * g[1] && g[0] < 0.8 * g[2], "the long flow gets less than each cross flow: {g:?}");
    assert!(g[0] + g[1] > 0.85 * 20e6 && g[0] + g[2] > 0.85 * 20e6, "both bottlenecks stay busy: {g:?}");
    // Time is monotone in every table.
    let t = out.flow_ts.u64s("time_ns");
    assert!(t.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn a_graph_follows_its_routes_and_acks_take_them_back() {
    // a diamond: a-b-d and a-c-d; one sender over each branch, one from d back to a.
    let mut cfg = dumbbell(20, &[40], 1.0);
    cfg.duration_ns = secs(3);
    let gl = |from: &str, to: &str, delay| GraphLinkConfig {
        from: from.into(),
        to: to.into(),
        link: duplex(&format!("{from}{to}"), link(50, delay, 100)),
    };
    cfg.topology = TopologyConfig::Graph(GraphConfig {
        nodes: ["a", "b", "c", "d"].map(String::from).to_vec(),
        links: vec![gl("a", "b", 1), gl("b", "d", 1), gl("a", "c", 3), gl("c", "d", 3)],
        senders: vec![sender("top", 30, &["a", "b", "d"]), sender("bottom", 30, &["a", "c", "d"]), sender("back", 30, &["d", "b", "a"])],
    });
    cfg.flows = vec![flow(0, "cubic", 0), flow(1, "cubic", 0), flow(2, "cubic", 0)];
    let out = ccsim::run(&cfg).unwrap();
    assert_conservation(&out);
    let tx = tx_bytes(&out.links);
    // top's data on ab and bd; bottom's on ac and cd; back's on the reverse of bd and
    // ab, with back's ACKs on ab and bd.
    assert!(tx("ab") >= tx("egress_fwd:top") + tx("access_rev:back"));
    assert!(tx("ab") <= tx("access_fwd:top") + tx("egress_rev:back"));
    assert!(tx("ac") >= tx("egress_fwd:bottom") && tx("ac") <= tx("access_fwd:bottom"));
    assert!(tx("bd_rev") >= tx("egress_fwd:back") && tx("ab_rev") >= tx("egress_fwd:back"));
    // Reverse directions of the data links carry only ACKs (and back's data on ab/bd).
    assert!(tx("ac_rev") < tx("ac") / 10, "ac_rev holds only bottom's ACKs");
    let base = out.flows.u64s("base_rtt_ns");
    assert_eq!(base, &[ms(30), ms(30), ms(30)]);
    // The base RTT is honoured: the minimum RTT seen is the configured 30 ms plus
    // serialization, whatever the route's own propagation delay.
    let min_rtt = out.flows.i64s("min_rtt_ns");
    assert!(min_rtt.iter().all(|&m| m >= ms(30) as i64 && m < ms(33) as i64), "{min_rtt:?}");
}

fn graph_error(route: &[&str], rtt_ms: u64) -> String {
    let mut cfg = dumbbell(20, &[40], 1.0);
    cfg.topology = TopologyConfig::Graph(GraphConfig {
        nodes: ["a", "b", "c", "island"].map(String::from).to_vec(),
        links: vec![
            GraphLinkConfig { from: "a".into(), to: "b".into(), link: duplex("ab", link(10, 5, 100)) },
            GraphLinkConfig { from: "b".into(), to: "c".into(), link: duplex("bc", link(10, 5, 100)) },
            GraphLinkConfig { from: "c".into(), to: "a".into(), link: duplex("ca", link(10, 5, 100)) },
        ],
        senders: vec![sender("s", rtt_ms, route)],
    });
    cfg.flows = vec![flow(0, "reno", 0)];
    ccsim::run(&cfg).unwrap_err()
}

#[test]
fn bad_graph_routes_are_rejected_with_the_field_named() {
    let e = graph_error(&["a", "island"], 100);
    assert_eq!(e, "topology.senders[0].route: no link between 'a' and 'island'");
    let e = graph_error(&["a", "b", "c", "a"], 100);
    assert!(e.contains("senders[0].route: router 'a' appears twice (the route has a loop)"), "{e}");
    let e = graph_error(&["a", "x"], 100);
    assert!(e.contains("senders[0].route: 'x' is not a router (routers: 'a', 'b', 'c', 'island')"), "{e}");
    let e = graph_error(&[], 100);
    assert!(e.contains("senders[0].route: a route of routers is required"), "{e}");
    let e = graph_error(&["a", "b", "c"], 19);
    assert!(e.contains("senders[0].rtt_ns: 19000000 is below the propagation RTT of its route (20000000)"), "{e}");
    // The route may use a link against its forward direction (c→a's reverse).
    assert!(graph_error(&["a", "c"], 9).contains("below the propagation RTT of its route (10000000)"));
}

#[test]
fn bad_graph_links_are_rejected_with_the_field_named() {
    let mut cfg = parking_lot();
    if let TopologyConfig::ParkingLot(p) = &mut cfg.topology {
        p.hops[1].name = "hop0".into();
    }
    assert_eq!(ccsim::run(&cfg).unwrap_err(), "topology.hops[1].name: link name 'hop0' is also used by hops[0]");
    if let TopologyConfig::ParkingLot(p) = &mut cfg.topology {
        p.hops[1].name = "hop1".into();
        p.senders[1].route = vec!["r0".into(), "r3".into()];
    }
    assert!(ccsim::run(&cfg).unwrap_err().contains("'r3' is not a router (routers: 'r0', 'r1', 'r2')"));
    let graph = GraphConfig {
        nodes: vec!["a".into(), "b".into()],
        links: vec![
            GraphLinkConfig { from: "a".into(), to: "b".into(), link: duplex("x", link(10, 1, 10)) },
            GraphLinkConfig { from: "b".into(), to: "a".into(), link: duplex("y", link(10, 1, 10)) },
            GraphLinkConfig { from: "a".into(), to: "z".into(), link: duplex("w", link(10, 1, 10)) },
        ],
        senders: vec![sender("s", 40, &["a", "b"])],
    };
    cfg.topology = TopologyConfig::Graph(graph.clone());
    let e = ccsim::run(&cfg).unwrap_err();
    assert!(e.starts_with("topology.links[2].to: 'z' is not a router"), "{e}");
    let mut g = graph;
    g.links.pop();
    cfg.topology = TopologyConfig::Graph(g);
    let e = ccsim::run(&cfg).unwrap_err();
    assert!(e.starts_with("topology.links[1].link: a second link between 'b' and 'a' (links[0].link is the first)"), "{e}");
}

/// The values of a dictionary column, row by row.
fn strs<'t>(t: &'t Table, name: &str) -> Vec<&'t str> {
    let Some(Column::Dict { codes, values }) = t.column(name) else { panic!("{name} column") };
    codes.iter().map(|&c| values[c as usize].as_str()).collect()
}

#[test]
fn access_links_lose_per_direction_and_sojourn_sampling_is_configurable() {
    let mut cfg = dumbbell(50, &[20, 20], 1.0);
    cfg.duration_ns = secs(3);
    let TopologyConfig::Dumbbell(d) = &mut cfg.topology else { unreachable!() };
    d.senders[0].access_loss = LossConfig::Bernoulli(0.01);
    d.senders[1].access_reverse_loss = LossConfig::Bernoulli(0.05);
    cfg.flows = vec![flow(0, "cubic", 0), flow(1, "cubic", 0)];
    cfg.sojourn_sample_every = 1;
    let out = ccsim::run(&cfg).unwrap();
    assert_conservation(&out);
    let (kind, link, reason) = (strs(&out.events, "kind"), strs(&out.events, "link"), strs(&out.events, "reason"));
    let data = out.events.f64s("value2");
    let random: Vec<(&str, bool)> =
        (0..kind.len()).filter(|&i| kind[i] == "drop" && reason[i] == "random_loss").map(|i| (link[i], data[i] == 1.0)).collect();
    // s0 loses data on its way in, s1 loses ACKs on their way back; nothing else is random.
    let lost_data = random.iter().filter(|r| **r == ("access_fwd:s0", true)).count() as f64;
    let lost_acks = random.iter().filter(|r| **r == ("access_rev:s1", false)).count() as f64;
    assert!(random.iter().all(|r| *r == ("access_fwd:s0", true) || *r == ("access_rev:s1", false)));
    let names = strs(&out.links, "link");
    let tx_pkts = |n: &str| out.links.u64s("tx_pkts")[names.iter().position(|&m| m == n).unwrap()] as f64;
    let p_data = lost_data / (lost_data + tx_pkts("access_fwd:s0"));
    let p_acks = lost_acks / (lost_acks + tx_pkts("access_rev:s1"));
    assert!(p_data > 0.002 && p_data < 0.025, "1 % configured, {p_data} measured");
    assert!(p_acks > 0.03 && p_acks < 0.07, "5 % configured, {p_acks} measured");
    // Every packet dequeued from the bottleneck has its sojourn time kept.
    let kept = strs(&out.sojourn, "link").iter().filter(|&&l| l == "bottleneck").count() as u64;
    let sent = tx_pkts("bottleneck") as u64;
    assert!(kept >= sent && kept <= sent + 1, "kept {kept}, sent {sent}");
    cfg.sojourn_sample_every = 0;
    assert_eq!(ccsim::run(&cfg).unwrap().sojourn.num_rows(), 0);
}
