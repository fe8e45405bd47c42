//! Scenario tests: small seeded dumbbells whose outcome is known from theory or
//! from the behaviour every TCP must show. Each checks packet conservation too.

mod common;

use ccsim::config::TopologyConfig;
use ccsim::units::{ms, secs};
use common::*;

fn bottleneck(cfg: &mut ccsim::ExperimentConfig) -> &mut ccsim::config::LinkConfig {
    let TopologyConfig::Dumbbell(d) = &mut cfg.topology else { unreachable!("a dumbbell") };
    &mut d.bottleneck
}

/// Mathis et al. 1997: BW = MSS/RTT · C/√p. Linux Reno counts delivered packets
/// (ABC), so delayed ACKs do not slow its growth: one MSS per RTT, C = √(3/2).
#[test]
fn reno_under_random_loss_matches_mathis() {
    for (p, secs_sim) in [(1e-4, 300), (1e-3, 120), (1e-2, 120)] {
        let mut cfg = dumbbell(1000, &[20], 4.0);
        cfg.duration_ns = secs(secs_sim);
        cfg.warmup_ns = secs(10);
        bottleneck(&mut cfg).loss = p;
        cfg.flows.push(flow(0, "reno", 0));
        let out = ccsim::run(&cfg).unwrap();
        assert_conservation(&out);
        let measured = goodputs(&cfg, &out)[0];
        let mathis = 1448.0 * 8.0 / 0.020 * (1.5f64).sqrt() / p.sqrt();
        let ratio = measured / mathis;
        println!("p={p}: measured {:.2} Mbit/s, Mathis {:.2} Mbit/s, ratio {ratio:.3}", measured / 1e6, mathis / 1e6);
        assert!((0.8..=1.2).contains(&ratio), "p={p}: goodput/Mathis = {ratio:.3}");
    }
}

/// In steady state a deeper buffer means longer sawtooth cycles and so fewer loss
/// episodes. Counted after warm-up, because the slow-start overshoot grows with the
/// buffer and would dominate a short run.
#[test]
fn retransmissions_fall_as_the_buffer_grows() {
    let mut retrans = vec![];
    for buf in [0.5, 1.0, 2.0, 4.0] {
        let mut cfg = dumbbell(20, &[20], buf);
        cfg.duration_ns = secs(90);
        cfg.warmup_ns = secs(10);
        for _ in 0..4 {
            cfg.flows.push(flow(0, "reno", 0));
        }
        let out = ccsim::run(&cfg).unwrap();
        assert_conservation(&out);
        let ts = &out.flow_ts;
        let (t, r) = (ts.u64s("time_ns"), ts.u64s("retrans_total"));
        let at = |time: u64| -> u64 { (0..t.len()).filter(|&i| t[i] == time).map(|i| r[i]).sum() };
        retrans.push(at(cfg.duration_ns) - at(cfg.warmup_ns));
    }
    println!("retransmissions after warm-up at 0.5/1/2/4 BDP: {retrans:?}");
    for w in retrans.windows(2) {
        assert!(w[1] < w[0], "retransmissions must fall with buffer size: {retrans:?}");
    }
}

#[test]
fn a_rate_drop_shows_in_goodput() {
    let mut cfg = dumbbell(100, &[40], 1.0);
    cfg.duration_ns = secs(40);
    bottleneck(&mut cfg).rate_schedule = vec![(secs(20), 30_000_000)];
    cfg.flows.push(flow(0, "reno", 0));
    let out = ccsim::run(&cfg).unwrap();
    assert_conservation(&out);
    let ts = &out.flow_ts;
    let (t, d) = (ts.u64s("time_ns"), ts.u64s("delivered_bytes"));
    let rate_between = |a: u64, b: u64| {
        let i = t.iter().position(|&x| x >= a).unwrap();
        let j = t.iter().position(|&x| x >= b).unwrap();
        (d[j] - d[i]) as f64 * 8.0 / ((t[j] - t[i]) as f64 / 1e9)
    };
    let before = rate_between(secs(10), secs(20));
    let after = rate_between(secs(25), secs(40));
    println!("before {:.1} Mbit/s, after {:.1} Mbit/s", before / 1e6, after / 1e6);
    assert!(before > 85e6, "before the drop the link is used: {before}");
    assert!(after < 30e6 && after > 24e6, "after the drop goodput follows the new rate: {after}");
    let kinds = out.events.column("kind").unwrap();
    let ccsim::trace::Column::Dict { values, .. } = kinds else { panic!() };
    assert!(values.iter().any(|v| v == "rate_change"));
}

#[test]
fn jumbo_frames_work() {
    let mut cfg = dumbbell(1000, &[20], 1.0);
    cfg.duration_ns = secs(10);
    cfg.warmup_ns = secs(2);
    let mut f = flow(0, "reno", 0);
    f.mss = 8900;
    cfg.flows.push(f);
    // A bfifo sized in bytes, as jumbo-frame studies configure.
    bottleneck(&mut cfg).qdisc = ccsim::config::QdiscConfig::Bfifo { limit_bytes: 2_500_000 };
    let out = ccsim::run(&cfg).unwrap();
    assert_conservation(&out);
    let g = goodputs(&cfg, &out)[0];
    let sent = out.flows.u64s("segs_sent")[0];
    let delivered = out.flows.u64s("delivered_bytes")[0];
    println!("jumbo goodput {:.1} Mbit/s, {sent} segments", g / 1e6);
    assert!(g > 900e6, "a jumbo-frame flow fills 1 Gbit/s: {g}");
    // Each segment carries up to 8900 bytes: segment count and bytes agree.
    assert!(delivered <= sent * 8900 && delivered >= (sent - out.flows.u64s("segs_retrans")[0] - 200) * 8900);
}

#[test]
fn finite_flows_complete_with_a_plausible_fct() {
    let mut cfg = dumbbell(100, &[100], 1.0);
    cfg.duration_ns = secs(10);
    cfg.warmup_ns = 0;
    let mut f = flow(0, "reno", 0);
    f.size_bytes = Some(1_000_000);
    f.start_jitter_ns = 0;
    cfg.flows.push(f);
    let out = ccsim::run(&cfg).unwrap();
    assert_conservation(&out);
    assert!(out.flows.column("completed") == Some(&ccsim::trace::Column::Bool(vec![true])));
    assert_eq!(out.flows.u64s("delivered_bytes")[0], 1_000_000);
    let fct = out.flows.i64s("fct_ns")[0];
    // 1 MB from IW10 in slow start: ~7 round trips of 100 ms (no handshake).
    assert!(fct > ms(500) as i64 && fct < ms(900) as i64, "fct {fct}");
}

#[test]
fn time_never_goes_backwards_in_any_table() {
    let mut cfg = dumbbell(100, &[20, 60], 0.5);
    cfg.duration_ns = secs(10);
    bottleneck(&mut cfg).loss = 0.001;
    cfg.flows.push(flow(0, "reno", 0));
    cfg.flows.push(flow(1, "reno", secs(1)));
    let out = ccsim::run(&cfg).unwrap();
    assert_conservation(&out);
    for t in [&out.flow_ts, &out.queue_ts, &out.events] {
        let times = t.u64s("time_ns");
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "time went backwards");
    }
    // The event queue scales with components, not packets in flight.
    assert!(out.stats.max_pending_events < 64, "pending events {}", out.stats.max_pending_events);
}

#[test]
fn same_seed_is_bit_identical_and_another_seed_differs() {
    let mut cfg = dumbbell(100, &[30], 1.0);
    cfg.duration_ns = secs(5);
    bottleneck(&mut cfg).loss = 0.001;
    cfg.flows.push(flow(0, "reno", 0));
    cfg.flows.push(flow(0, "reno", 0));
    let a = ccsim::run(&cfg).unwrap();
    let b = ccsim::run(&cfg).unwrap();
    // Compare bit patterns (NaN != NaN under ==, but NaN bits are equal).
    for (x, y) in [(&a.flows, &b.flows), (&a.flow_ts, &b.flow_ts), (&a.queue_ts, &b.queue_ts), (&a.events, &b.events)] {
        assert!(x.bit_identical(y), "same seed gave different tables");
    }
    cfg.seed = 2;
    let c = ccsim::run(&cfg).unwrap();
    assert_ne!(a.flows.u64s("start_ns"), c.flows.u64s("start_ns"), "start jitter must depend on the seed");
    assert!(!a.events.bit_identical(&c.events));
}

/// Goodput ceiling of a link: payload share of each 1500-byte packet.
fn goodput_ceiling(rate_bps: f64) -> f64 {
    rate_bps * 1448.0 / 1500.0
}

#[test]
fn one_cubic_flow_fills_a_100mbit_100ms_link_with_1bdp_buffer() {
    let mut cfg = dumbbell(100, &[100], 1.0);
    cfg.duration_ns = secs(60);
    cfg.warmup_ns = secs(10);
    cfg.flows.push(flow(0, "cubic", 0));
    let out = ccsim::run(&cfg).unwrap();
    assert_conservation(&out);
    let g = goodputs(&cfg, &out)[0];
    let utilization = g / goodput_ceiling(100e6);
    println!("cubic goodput {:.2} Mbit/s, utilization {utilization:.3}", g / 1e6);
    assert!(utilization >= 0.95, "utilization {utilization:.3}");
}

#[test]
fn two_cubic_flows_with_equal_rtt_share_fairly() {
    let mut cfg = dumbbell(100, &[20], 1.0);
    cfg.duration_ns = secs(60);
    cfg.warmup_ns = secs(10);
    cfg.flows.push(flow(0, "cubic", 0));
    cfg.flows.push(flow(0, "cubic", secs(2)));
    let out = ccsim::run(&cfg).unwrap();
    assert_conservation(&out);
    let g = goodputs(&cfg, &out);
    let j = jain(&g);
    println!("cubic goodputs {:?} Mbit/s, Jain {j:.4}", g.iter().map(|x| x / 1e6).collect::<Vec<_>>());
    assert!(j >= 0.95, "Jain's index {j:.4}");
}

/// The flows and links tables carry each counter's value at the warm-up, so every
/// summary figure can cover the measurement window without sampling: the values equal
/// the samples taken at the warm-up, never exceed the final counts, and are zero
/// without a warm-up.
#[test]
fn counters_at_warmup_match_the_samples_at_warmup() {
    let mut cfg = dumbbell(10, &[20], 0.5);
    cfg.duration_ns = secs(6);
    cfg.warmup_ns = secs(3);
    for _ in 0..3 {
        cfg.flows.push(flow(0, "reno", 0));
    }
    let out = ccsim::run(&cfg).unwrap();
    assert_conservation(&out);
    let (ts, fl) = (&out.flow_ts, &out.flows);
    let (t, r) = (ts.u64s("time_ns"), ts.u64s("retrans_total"));
    let ids = ts.u64s("flow_id");
    for f in 0..3 {
        let sampled = (0..t.len()).find(|&i| t[i] == cfg.warmup_ns && ids[i] == f as u64).map(|i| r[i]).unwrap();
        assert_eq!(fl.u64s("segs_retrans_at_warmup")[f], sampled);
        assert!(fl.u64s("segs_retrans_at_warmup")[f] < fl.u64s("segs_retrans")[f], "losses after the warm-up");
        assert!(fl.u64s("segs_sent_at_warmup")[f] < fl.u64s("segs_sent")[f]);
        assert!(fl.u64s("segs_delivered_at_warmup")[f] < fl.u64s("segs_delivered")[f]);
    }
    let q = &out.queue_ts;
    let i = (0..q.num_rows()).find(|&i| q.u64s("time_ns")[i] == cfg.warmup_ns).unwrap();
    let links = &out.links;
    let row = match links.column("link") {
        Some(ccsim::trace::Column::Dict { codes, values }) => {
            codes.iter().position(|&c| values[c as usize] == "bottleneck").unwrap()
        }
        _ => panic!("no link column"),
    };
    assert_eq!(links.u64s("dropped_pkts_at_warmup")[row], q.u64s("dropped_pkts")[i]);
    assert_eq!(links.u64s("enqueued_pkts_at_warmup")[row], q.u64s("enqueued_pkts")[i]);
    assert!(links.u64s("dropped_pkts_at_warmup")[row] < links.u64s("dropped_pkts")[row]);

    cfg.warmup_ns = 0;
    let out = ccsim::run(&cfg).unwrap();
    for c in ["segs_sent_at_warmup", "segs_retrans_at_warmup", "segs_delivered_at_warmup"] {
        assert!(out.flows.u64s(c).iter().all(|&v| v == 0), "{c} without a warm-up");
    }
    assert!(out.links.u64s("dropped_pkts_at_warmup").iter().all(|&v| v == 0));
}

/// Per-packet delay jitter on the bottleneck (netem's `delay D J`, in both directions):
/// a window-limited flow that never queues sees its RTT samples spread below and above
/// the base RTT (within ±2 J), differently per seed; packets are conserved and none
/// beats its path (the engine's debug-build invariant, floor = delay − jitter).
#[test]
fn bottleneck_jitter_spreads_the_rtt_samples() {
    let run = |jitter, seed| {
        let mut cfg = dumbbell(10, &[40], 1.0);
        cfg.duration_ns = secs(20);
        cfg.seed = seed;
        let b = bottleneck(&mut cfg);
        b.delay_ns = ms(10);
        b.jitter_ns = jitter;
        let mut f = flow(0, "cubic", 0);
        f.rwnd_bytes = 20 * 1448; // 20 of the path's 34-packet BDP: no queue
        cfg.flows.push(f);
        let out = ccsim::run(&cfg).unwrap();
        assert_conservation(&out);
        out
    };
    let srtt_sd = |out: &ccsim::RunOutput| {
        let (t, s) = (out.flow_ts.u64s("time_ns"), out.flow_ts.u64s("srtt_ns"));
        let x: Vec<f64> = t.iter().zip(s).filter(|(t, _)| **t >= secs(5)).map(|(_, s)| *s as f64).collect();
        let mean = x.iter().sum::<f64>() / x.len() as f64;
        (x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / x.len() as f64).sqrt()
    };
    let (plain, jittered, other_seed) = (run(0, 1), run(ms(5), 1), run(ms(5), 2));
    let (sd0, sd1) = (srtt_sd(&plain), srtt_sd(&jittered));
    let (min0, min1) = (plain.flows.i64s("min_rtt_ns")[0], jittered.flows.i64s("min_rtt_ns")[0]);
    println!("srtt sd {sd0:.0} ns -> {sd1:.0} ns, min RTT {min0} ns -> {min1} ns");
    assert!(sd0 < 100_000.0 && sd1 > 500_000.0, "srtt sd {sd0:.0} ns without jitter, {sd1:.0} ns with ±5 ms");
    assert!(min0 >= ms(40) as i64, "no sample below the base RTT without jitter: {min0}");
    assert!((ms(30) as i64..ms(39) as i64).contains(&min1), "min RTT {min1} with ±5 ms each way");
    assert_ne!(jittered.flow_ts.u64s("srtt_ns"), other_seed.flow_ts.u64s("srtt_ns"), "the jitter follows the seed");
}

/// A sender's jitter varies the access-link directions that carry its delay
/// (`delay_path`); the engine refuses a jitter larger than the delay it varies, naming
/// the field, and a jittered access path keeps every packet and no packet beats it.
#[test]
fn sender_jitter_varies_its_access_path_and_is_checked() {
    let mut cfg = dumbbell(10, &[40], 1.0);
    cfg.duration_ns = secs(10);
    let TopologyConfig::Dumbbell(d) = &mut cfg.topology else { unreachable!() };
    d.senders[0].delay_path = ccsim::config::DelayPath::Ack;
    d.senders[0].jitter_ns = ms(4);
    let mut f = flow(0, "cubic", 0);
    f.rwnd_bytes = 20 * 1448;
    cfg.flows.push(f);
    let out = ccsim::run(&cfg).unwrap();
    assert_conservation(&out);
    let min = out.flows.i64s("min_rtt_ns")[0];
    // All 40 ms on the ACK path, ±4 ms there: samples reach below 40 ms, not below 36.
    assert!((ms(36) as i64..ms(39) as i64).contains(&min), "min RTT {min}");
    // Above the one-way delay it varies: refused by name (40 ms split is 20 ms each way).
    let TopologyConfig::Dumbbell(d) = &mut cfg.topology else { unreachable!() };
    d.senders[0].delay_path = ccsim::config::DelayPath::Split;
    d.senders[0].jitter_ns = ms(21);
    let err = cfg.validate().unwrap_err();
    assert!(err.contains("senders[0].jitter_ns: 21000000 exceeds the one-way access delay it varies (20000000"), "{err}");
    let TopologyConfig::Dumbbell(d) = &mut cfg.topology else { unreachable!() };
    d.senders[0].jitter_ns = 0;
    d.bottleneck.delay_ns = ms(1);
    d.bottleneck.jitter_ns = ms(2);
    let err = cfg.validate().unwrap_err();
    assert!(err.contains("bottleneck.jitter_ns: 2000000 exceeds delay_ns (1000000)"), "{err}");
}
