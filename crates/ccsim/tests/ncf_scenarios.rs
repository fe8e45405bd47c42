//! NCF (network-assisted congestion feedback, `docs/ncf.md`) end to end: the switch
//! logic on the bottleneck (`qdisc = ncf`) and the `ncf` sender, against CUBIC, in
//! direction only (the measured values are printed with `-- --nocapture`, seed 1).

mod common;

use ccsim::config::{NcfConfig, QdiscConfig, ReportedRate, TopologyConfig};
use ccsim::units::{ms, secs, Time};
use ccsim::{ExperimentConfig, RunOutput};
use common::*;

fn run(cfg: &ExperimentConfig) -> RunOutput {
    let out = ccsim::run(cfg).unwrap();
    assert_conservation(&out);
    let s = &out.stats;
    assert!(s.feedback_pkts_delivered + s.feedback_pkts_dropped <= s.feedback_pkts_sent, "{s:?}");
    out
}

/// Put NCF's switch on the bottleneck: both queues drop-tail at the configured buffer.
fn with_ncf_switch(cfg: &mut ExperimentConfig) {
    let TopologyConfig::Dumbbell(d) = &mut cfg.topology else { unreachable!("a dumbbell") };
    let fifo = d.bottleneck.qdisc.clone();
    d.bottleneck.qdisc = QdiscConfig::Ncf(NcfConfig::with_queues(fifo.clone(), fifo));
}

fn strings(t: &ccsim::trace::Table, name: &str) -> Vec<String> {
    match t.column(name) {
        Some(ccsim::trace::Column::Dict { codes, values }) => codes.iter().map(|&c| values[c as usize].clone()).collect(),
        other => panic!("column {name} is not a dictionary column: {other:?}"),
    }
}

/// The `feedback` events: (arrival time, flow, generation time, elephants counted).
fn feedback_events(out: &RunOutput) -> Vec<(Time, i64, Time, f64)> {
    let e = &out.events;
    let kind = strings(e, "kind");
    let (t, flow, v, v2) = (e.u64s("time_ns"), e.i64s("flow_id"), e.f64s("value"), e.f64s("value2"));
    (0..t.len()).filter(|&i| kind[i] == "feedback").map(|i| (t[i], flow[i], v[i] as Time, v2[i])).collect()
}

#[test]
fn telemetry_reaches_the_sender_after_the_switch_to_sender_delay_within_its_rate_limit() {
    // RTT 40 ms: the bottleneck link carries 5 ms each way, the access links 15 ms each
    // way. The switch sits at the bottleneck's input, so its telemetry needs the
    // reverse access link only: 15 ms (+ 0.5 µs serialization), not 40 ms.
    let mut cfg = dumbbell(100, &[40], 1.0);
    let TopologyConfig::Dumbbell(d) = &mut cfg.topology else { unreachable!("a dumbbell") };
    d.bottleneck.delay_ns = ms(5);
    set_host(&mut cfg, ccsim::host::HostConfig::ideal());
    with_ncf_switch(&mut cfg);
    cfg.duration_ns = secs(5);
    cfg.flows = vec![flow(0, "cubic", 0), flow(0, "cubic", ms(100))];
    let out = run(&cfg);
    let fb = feedback_events(&out);
    assert!(fb.len() > 50, "CUBIC keeps the elephant queue full: {} messages", fb.len());
    assert_eq!(out.stats.feedback_pkts_delivered, fb.len() as u64);
    for &(arrived, flow, sent, elephants) in &fb {
        let delay = arrived - sent;
        assert!((ms(15)..ms(15) + 100_000).contains(&delay), "flow {flow}: telemetry took {delay} ns");
        assert!((1.0..=2.0).contains(&elephants));
    }
    for flow in 0..2 {
        let sent: Vec<Time> = fb.iter().filter(|x| x.1 == flow).map(|x| x.2).collect();
        assert!(sent.windows(2).all(|w| w[1] - w[0] >= ms(1)), "flow {flow} exceeds one message per ms");
    }
    println!("{} telemetry messages, delays {}..{} ns", fb.len(), fb.iter().map(|x| x.0 - x.2).min().unwrap(), fb.iter().map(|x| x.0 - x.2).max().unwrap());
}

/// Per-flow goodput (bit/s) over [t0, t1] from the flow samples.
fn rates_between(out: &RunOutput, n: usize, t0: Time, t1: Time) -> Vec<f64> {
    let ts = &out.flow_ts;
    let (t, id, d) = (ts.u64s("time_ns"), ts.u64s("flow_id"), ts.u64s("delivered_bytes"));
    let at = |f: u64, when: Time| (0..t.len()).find(|&i| id[i] == f && t[i] >= when).map(|i| d[i]).unwrap();
    (0..n as u64).map(|f| (at(f, t1) - at(f, t0)) as f64 * 8.0 / ((t1 - t0) as f64 / 1e9)).collect()
}

fn median_backlog_bytes(out: &RunOutput, t0: Time, t1: Time) -> u64 {
    let q = &out.queue_ts;
    let (t, b, link) = (q.u64s("time_ns"), q.u64s("backlog_bytes"), strings(q, "link"));
    let mut v: Vec<u64> = (0..t.len()).filter(|&i| link[i] == "bottleneck" && t[i] >= t0 && t[i] <= t1).map(|i| b[i]).collect();
    v.sort_unstable();
    v[v.len() / 2]
}

/// Four elephants join 2 s apart on a 100 Mbit/s, 20 ms dumbbell with NCF's switch
/// and a 2-BDP buffer (the staggered pattern of `ncf/staggered-4flows`, compressed).
fn staggered(cca: &str) -> (f64, u64, f64) {
    let mut cfg = dumbbell(100, &[20], 2.0);
    with_ncf_switch(&mut cfg);
    cfg.duration_ns = secs(14);
    cfg.flows = (0..4).map(|i| flow(0, cca, secs(2 * i))).collect();
    let out = run(&cfg);
    let (t0, t1) = (secs(8), secs(14));
    let rates = rates_between(&out, 4, t0, t1);
    let util = rates.iter().sum::<f64>() / 100e6;
    (jain(&rates), median_backlog_bytes(&out, t0, t1), util)
}

#[test]
fn staggered_ncf_elephants_are_fairer_with_a_smaller_queue_than_cubic() {
    let (j_ncf, q_ncf, u_ncf) = staggered("ncf");
    let (j_cubic, q_cubic, u_cubic) = staggered("cubic");
    println!("ncf: jain {j_ncf:.4} median queue {q_ncf} B util {u_ncf:.3}; cubic: jain {j_cubic:.4} queue {q_cubic} B util {u_cubic:.3}");
    assert!(j_ncf > j_cubic, "Jain: ncf {j_ncf} vs cubic {j_cubic}");
    assert!(j_ncf > 0.95, "ncf Jain {j_ncf}");
    assert!(q_ncf < q_cubic, "median queue: ncf {q_ncf} B vs cubic {q_cubic} B");
    assert!(u_ncf > 0.9, "ncf keeps the link busy: {u_ncf}");
}

// ---------------------------------------------------------------------------
// Mice: short flows arriving open-loop while elephants run
// ---------------------------------------------------------------------------

/// `n` CUBIC mice of `size` bytes from sender 1, one every `gap` from `from`.
fn mice(n: u64, size: u64, from: Time, gap: Time) -> Vec<ccsim::config::FlowConfig> {
    (0..n)
        .map(|i| {
            let mut m = flow(1, "cubic", from + i * gap);
            m.group = "mice".into();
            m.size_bytes = Some(size);
            m.start_jitter_ns = 0;
            m
        })
        .collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Median FCT (s) of the mice (flows after the first `elephants`), all completed.
fn mice_fct(out: &RunOutput, elephants: usize) -> f64 {
    let f = &out.flows;
    let fct = f.i64s("fct_ns");
    assert!(fct[elephants..].iter().all(|&x| x > 0), "every mouse completes");
    median(fct[elephants..].iter().map(|&x| x as f64 / 1e9).collect())
}

#[test]
fn mice_finish_sooner_in_their_own_queue_than_behind_elephants_in_one_fifo() {
    // Two CUBIC elephants fill a 2-BDP buffer on 100 Mbit/s × 20 ms; 100 mice of
    // 15 KB arrive one every 50 ms.
    let fct = |switch: bool| {
        let mut cfg = dumbbell(100, &[20, 20], 2.0);
        if switch {
            with_ncf_switch(&mut cfg);
        }
        cfg.duration_ns = secs(10);
        cfg.flows = vec![flow(0, "cubic", 0), flow(0, "cubic", 0)];
        cfg.flows.extend(mice(100, 15_000, secs(3), ms(50)));
        mice_fct(&run(&cfg), 2)
    };
    let (fifo, ncf) = (fct(false), fct(true));
    println!("median mouse FCT: one FIFO {fifo:.4} s, NCF's separate queue {ncf:.4} s");
    assert!(ncf < 0.5 * fifo, "NCF {ncf} s vs FIFO {fifo} s");
}

/// Elephant goodput (bit/s, both elephants) before and during a mice flood, and the
/// mice's own goodput during it: two `cca` elephants on 200 Mbit/s × 20 ms with a
/// 250 KB buffer (the chapter's shallow buffer, 0.5 BDP) behind `qdisc`; from 8 s to
/// 18 s 4,000 CUBIC mice of 10 KB start at uniformly random times (400 per second,
/// 32 Mbit/s offered), as `specs/ncf/mice-flood.toml` compressed.
fn flood(cca: &str, qdisc: QdiscConfig) -> (f64, f64, f64) {
    let mut cfg = dumbbell(200, &[20, 20], 1.0);
    let TopologyConfig::Dumbbell(d) = &mut cfg.topology else { unreachable!("a dumbbell") };
    d.bottleneck.qdisc = qdisc;
    cfg.duration_ns = secs(19);
    cfg.packet_events = false;
    cfg.flows = vec![flow(0, cca, 0), flow(0, cca, 0)];
    let mut m = mice(1, 10_000, secs(8), 0).remove(0);
    m.count = 4000;
    m.start_jitter_ns = secs(10);
    cfg.flows.push(m);
    let out = run(&cfg);
    let total = |t0: Time, t1: Time| rates_between(&out, 2, t0, t1).iter().sum::<f64>();
    let f = &out.flows;
    let (fct, bytes) = (f.i64s("fct_ns"), f.u64s("delivered_bytes"));
    assert!(fct[2..].iter().all(|&x| x > 0), "every mouse completes");
    let mice_bps = bytes[2..].iter().sum::<u64>() as f64 * 8.0 / 10.0;
    (total(secs(4), secs(8)), total(secs(10), secs(18)), mice_bps)
}

#[test]
fn a_mice_flood_costs_ncf_elephants_less_goodput_than_cubic_elephants_in_one_fifo() {
    let buffer = QdiscConfig::Bfifo { limit_bytes: 250_000 };
    let switch = |reported_rate| QdiscConfig::Ncf(NcfConfig { reported_rate, ..NcfConfig::with_queues(buffer.clone(), buffer.clone()) });
    let (n0, n1, mice) = flood("ncf", switch(ReportedRate::Link));
    let (c0, c1, _) = flood("cubic", buffer.clone());
    let (a0, a1, _) = flood("ncf", switch(ReportedRate::Available));
    let mbit = |x: f64| x / 1e6;
    println!("mice {:.1} Mbit/s; elephants before -> during (Mbit/s): ncf {:.1} -> {:.1}, cubic/fifo {:.1} -> {:.1}, ncf reporting the available rate {:.1} -> {:.1}",
        mbit(mice), mbit(n0), mbit(n1), mbit(c0), mbit(c1), mbit(a0), mbit(a1));
    // The mice get what they offer in both (10 KB × 400/s = 32 Mbit/s).
    assert!((31e6..33e6).contains(&mice), "{mice}");
    assert!(n0 - n1 < c0 - c1, "loss: ncf {} vs cubic {}", n0 - n1, c0 - c1);
    assert!(n1 > c1, "during the flood: ncf {n1} vs cubic {c1}");
    assert!(n1 / n0 > c1 / c0, "ratio: ncf {} vs cubic {}", n1 / n0, c1 / c0);
    // What the flood leaves (200 Mbit/s less the mice's wire rate, in goodput):
    // NCF's elephants keep it busy; reporting the available rate instead, they leave
    // their queue empty behind the mice's bursts and lose more than CUBIC.
    let leftover = (200e6 - mice * 1500.0 / 1448.0) * 1448.0 / 1500.0;
    assert!(n1 > 0.98 * leftover, "ncf during the flood {n1} of {leftover}");
    assert!(a0 - a1 > c0 - c1, "available-rate ncf loses {} vs cubic {}", a0 - a1, c0 - c1);
}

// ---------------------------------------------------------------------------
// Parking lot: telemetry from the second hop
// ---------------------------------------------------------------------------

/// Telemetry from a switch on the parking lot's second hop reaches each sender over
/// the reverse path from that hop: for the long flow the first hop's reverse link
/// and its reverse access link, for the cross flow only its reverse access link.
/// hop0 (100 Mbit/s) is not congested, hop1 (20 Mbit/s) is; NCF's switch sits on
/// both, as in `specs/ncf/parking-lot-elephants.toml`. RTT 40 ms, 2 ms per hop each
/// way, ideal hosts: the long flow's access links take (40 − 8)/2 = 16 ms each way,
/// the cross flow's (40 − 4)/2 = 18 ms, so hop1's telemetry takes 2 + 16 = 18 ms to
/// the long sender and 18 ms to the cross sender, hop0's 16 ms to the long sender
/// (never a full 40 ms RTT). Both flows are counted as hop1's elephants.
#[test]
fn telemetry_from_the_parking_lots_second_hop_takes_the_reverse_path_from_that_hop() {
    use ccsim::config::{DelayPath, DuplexLinkConfig, LinkConfig, LossConfig, ParkingLotConfig, SenderConfig};
    let hop = |name: &str, rate_mbps: u64| {
        let fifo = QdiscConfig::Pfifo { limit_packets: 70 };
        let forward = LinkConfig {
            rate_bps: rate_mbps * 1_000_000,
            delay_ns: ms(2),
            jitter_ns: 0,
            qdisc: QdiscConfig::Ncf(NcfConfig::with_queues(fifo.clone(), fifo)),
            loss: 0.0,
            gilbert_elliott: None,
            rate_schedule: vec![],
            limit_includes_head: true,
        };
        DuplexLinkConfig { name: name.into(), forward, reverse: None }
    };
    let sender = |name: &str, route: &[&str]| SenderConfig {
        name: name.into(),
        rtt_ns: ms(40),
        access_rate_bps: 1_000_000_000,
        access_queue_packets: 10_000,
        delay_path: DelayPath::Split,
        jitter_ns: 0,
        host: ccsim::host::HostConfig::ideal(),
        route: route.iter().map(|s| s.to_string()).collect(),
        access_loss: LossConfig::default(),
        access_reverse_loss: LossConfig::default(),
    };
    let mut cfg = dumbbell(20, &[40], 1.0);
    cfg.duration_ns = secs(6);
    cfg.topology = TopologyConfig::ParkingLot(ParkingLotConfig {
        hops: vec![hop("hop0", 100), hop("hop1", 20)],
        senders: vec![sender("long", &[]), sender("cross1", &["r1", "r2"])],
    });
    cfg.flows = vec![flow(0, "ncf", 0), flow(1, "ncf", 0)];
    let out = run(&cfg);
    let e = &out.events;
    let (kind, link) = (strings(e, "kind"), strings(e, "link"));
    let fb: Vec<(Time, i64, Time, f64, &str)> = feedback_events(&out)
        .into_iter()
        .zip((0..kind.len()).filter(|&i| kind[i] == "feedback"))
        .map(|((t, f, sent, n), i)| (t, f, sent, n, link[i].as_str()))
        .collect();
    let from_hop1 = |flow: i64| fb.iter().filter(|x| x.1 == flow && x.4 == "hop1").count();
    println!("telemetry: long {} from hop1, cross {} from hop1, {} from hop0", from_hop1(0), from_hop1(1), fb.iter().filter(|x| x.4 == "hop0").count());
    assert!(from_hop1(0) > 50 && from_hop1(1) > 50, "both senders hear from hop1");
    let mut most_elephants = 0.0f64;
    for &(arrived, flow, sent, elephants, at) in &fb {
        let expected = match (at, flow) {
            ("hop1", _) => ms(18),
            ("hop0", 0) => ms(16),
            other => panic!("telemetry from {other:?}: the cross flow never crosses hop0"),
        };
        let delay = arrived - sent;
        assert!((expected..expected + 100_000).contains(&delay), "{at} -> flow {flow}: {delay} ns, expected {expected}");
        if at == "hop1" {
            most_elephants = most_elephants.max(elephants);
        }
    }
    assert_eq!(most_elephants, 2.0, "hop1 counts both flows as elephants");
}
