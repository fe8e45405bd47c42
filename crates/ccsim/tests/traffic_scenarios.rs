//! Traffic end to end: arrival processes, finished flows leaving, rate-limited
//! sources, mice floods and workload reproducibility (issue 8's "Must show").

mod common;

use ccsim::config::*;
use ccsim::trace::Column;
use ccsim::units::{ms, secs};
use common::*;

fn finite_flows(cfg: &mut ExperimentConfig, arrival: Arrival, count: u64, size: u64) {
    let mut f = flow(0, "reno", 0);
    f.arrival = arrival;
    f.count = count;
    f.size_bytes = Some(size);
    f.start_jitter_ns = 0;
    cfg.flows.push(f);
}

fn strs(t: &ccsim::trace::Table, name: &str) -> Vec<String> {
    match t.column(name) {
        Some(Column::Dict { codes, values }) => codes.iter().map(|&c| values[c as usize].clone()).collect(),
        _ => panic!("{name} is not a string column"),
    }
}

#[test]
fn staggered_arrivals_and_departures_appear_in_the_time_series_at_their_times() {
    // One 2 MB flow every 2 s: each finishes long before the next arrives.
    let mut cfg = dumbbell(100, &[20], 1.0);
    cfg.duration_ns = secs(9);
    cfg.warmup_ns = 0;
    cfg.sample_interval_ns = ms(50);
    finite_flows(&mut cfg, Arrival::Interval { every_ns: secs(2) }, 4, 2_000_000);
    let out = ccsim::run(&cfg).unwrap();
    assert_conservation(&out);
    let starts = out.flows.u64s("start_ns");
    assert_eq!(starts, &[secs(0), secs(2), secs(4), secs(6)]);
    let fct = out.flows.i64s("fct_ns");
    assert!(fct.iter().all(|&f| f > 0 && (f as u64) < secs(1)), "{fct:?}");
    let ts_flow = out.flow_ts.u64s("flow_id");
    let ts_time = out.flow_ts.u64s("time_ns");
    for (k, (&start, &fct)) in starts.iter().zip(fct).enumerate() {
        let times: Vec<u64> = ts_flow.iter().zip(ts_time).filter(|(&f, _)| f == k as u64).map(|(_, &t)| t).collect();
        let (first, last) = (times[0], *times.last().unwrap());
        // Sampled from the first sample at or after its start to the last before it ends.
        assert!(first >= start && first < start + ms(50), "flow {k}: first sample {first}");
        assert!(last <= start + fct as u64 && last + ms(50) > start + fct as u64, "flow {k}: last sample {last}");
    }
    assert_eq!(out.stats.max_concurrent_flows, 1, "each flow left before the next arrived");
}

#[test]
fn poisson_mice_come_and_go_and_concurrency_stays_small() {
    let mut cfg = dumbbell(100, &[20], 1.0);
    cfg.duration_ns = secs(10);
    cfg.warmup_ns = 0;
    cfg.sample_interval_ns = 0;
    // 10 KB flows offering 20 Mbit/s on the wire (7 segments of headers: 10,364 bytes
    // each): 241 flows/s.
    finite_flows(&mut cfg, Arrival::PoissonLoad { load_bps: 20e6 }, 1_000_000, 10_000);
    let out = ccsim::run(&cfg).unwrap();
    assert_conservation(&out);
    let n = out.flows.num_rows();
    assert!((2170..2650).contains(&n), "{n} arrivals in 10 s at 241/s");
    let starts = out.flows.u64s("start_ns");
    assert!(starts.windows(2).all(|w| w[0] <= w[1]), "ids follow arrival order");
    let completed = out.flows.i64s("fct_ns").iter().filter(|&&f| f >= 0).count();
    assert!(completed + 10 >= n, "{completed} of {n} completed");
    // Each flow lives ~2 RTTs; 241/s x 40 ms = 10 at once on average.
    assert!(out.stats.max_concurrent_flows < 60, "max concurrent {}", out.stats.max_concurrent_flows);
    let delivered: u64 = out.flows.u64s("delivered_bytes").iter().sum();
    let offered = delivered as f64 * 8.0 / 10.0;
    assert!((offered / (20e6 * 10_000.0 / 10_364.0) - 1.0).abs() < 0.1, "delivered {offered} bit/s of payload");
}

#[test]
fn the_same_workload_seed_gives_the_same_flows_under_other_ccas_and_engine_seeds() {
    let run = |cca: &str, seed: u64| {
        let mut cfg = dumbbell(100, &[10, 50], 1.0);
        cfg.seed = seed;
        cfg.workload_seed = Some(42);
        cfg.duration_ns = secs(5);
        cfg.sample_interval_ns = 0;
        let mut f = flow(0, cca, 0);
        f.arrival = Arrival::Poisson { rate_per_s: 100.0 };
        f.count = 300;
        f.size_dist = Some(EmpiricalDist { points: vec![(1e3, 0.3), (1e5, 0.9), (1e6, 1.0)], interpolation: Interpolation::Linear });
        f.sender_mix = vec![SenderShare { sender: 0, fraction: 0.5 }, SenderShare { sender: 1, fraction: 0.5 }];
        cfg.flows.push(f);
        ccsim::run(&cfg).unwrap()
    };
    let (a, b) = (run("cubic", 1), run("reno", 2));
    for col in ["start_ns", "base_rtt_ns", "sender"] {
        assert_eq!(a.flows.u64s(col), b.flows.u64s(col), "{col}");
    }
    assert_eq!(a.flows.i64s("size_bytes"), b.flows.i64s("size_bytes"));
    assert_eq!(strs(&a.flows, "cca")[0], "cubic");
    assert_eq!(strs(&b.flows, "cca")[0], "reno");
    let rtts = a.flows.u64s("base_rtt_ns");
    assert!(rtts.contains(&ms(10)) && rtts.contains(&ms(50)), "per-flow RTTs from the sender mix");
    assert_ne!(a.flows.i64s("fct_ns"), b.flows.i64s("fct_ns"), "the CCAs did run differently");
}

#[test]
fn a_rate_limited_flow_holds_its_rate_and_its_cca_sees_app_limited_samples() {
    let mut cfg = dumbbell(100, &[20], 1.0);
    cfg.duration_ns = secs(10);
    cfg.warmup_ns = secs(2);
    let mut f = flow(0, "cubic", 0);
    f.app = App::RateLimited { rate_bps: 20_000_000, on_ns: None, off_ns: None };
    cfg.flows.push(f);
    let mut onoff = flow(0, "cubic", 0);
    onoff.app = App::RateLimited { rate_bps: 30_000_000, on_ns: Some(ms(500)), off_ns: Some(ms(1500)) };
    cfg.flows.push(onoff);
    let out = ccsim::run(&cfg).unwrap();
    assert_conservation(&out);
    let g = goodputs(&cfg, &out);
    assert!((g[0] / 20e6 - 1.0).abs() < 0.03, "rate-limited goodput {}", g[0]);
    // On a quarter of the time at 30 Mbit/s.
    assert!((g[1] / 7.5e6 - 1.0).abs() < 0.05, "on/off goodput {}", g[1]);
    let app_limited = out.flows.u64s("app_limited_samples");
    let delivered = out.flows.u64s("segs_delivered");
    assert!(app_limited[0] * 2 > delivered[0] / 2, "{app_limited:?} of ~{delivered:?}/2 ACKs");
    assert_eq!(out.flows.u64s("segs_retrans")[0], 0, "20 of 100 Mbit/s never fills the queue");
}

#[test]
fn a_mice_flood_takes_about_its_offered_share_from_an_elastic_flow() {
    // 1000-byte mice with their handshake: 1164 bytes each on the wire (SYN 60, ACK 52,
    // one 1052-byte segment), offering 30 % of a 100 Mbit/s link on the wire.
    let mut cfg = dumbbell(100, &[20], 2.0);
    cfg.duration_ns = secs(20);
    cfg.warmup_ns = secs(5);
    cfg.sample_interval_ns = 0;
    cfg.flows.push(flow(0, "cubic", 0));
    let mut mice = flow(0, "reno", secs(1));
    mice.group = "mice".into();
    mice.arrival = Arrival::PoissonLoad { load_bps: 30e6 };
    mice.count = 1_000_000;
    mice.size_bytes = Some(1000);
    mice.handshake = true;
    cfg.flows.push(mice);
    let out = ccsim::run(&cfg).unwrap();
    assert_conservation(&out);
    let g = goodputs(&cfg, &out);
    let elastic = g[0];
    let groups = strs(&out.flows, "group");
    let (d, w) = (out.flows.u64s("delivered_bytes"), out.flows.u64s("delivered_bytes_at_warmup"));
    let start = out.flows.u64s("start_ns");
    // What the mice put through the bottleneck on the wire after the warm-up: their
    // payload in 1052-byte segments plus the handshakes of those that arrived since.
    let mice: Vec<usize> = (0..d.len()).filter(|&i| groups[i] == "mice").collect();
    let payload: u64 = mice.iter().map(|&i| d[i] - w[i]).sum();
    let handshakes = mice.iter().filter(|&&i| start[i] >= cfg.warmup_ns).count() as u64;
    let wire_bits = (payload * 1052 / 1000 + handshakes * 112) * 8;
    let mice_rate = wire_bits as f64 / 15.0;
    // Tight enough to fail if `load` counted payload only (mice would take 34.8 Mbit/s).
    assert!((mice_rate / 30e6 - 1.0).abs() < 0.04, "mice took {mice_rate} bit/s on the wire");
    // The elastic flow keeps the rest: 70 Mbit/s on the wire, 67.6 of it goodput (the
    // old payload-only load left it 62.9).
    let want = 70e6 * 1448.0 / 1500.0;
    assert!((elastic / want - 1.0).abs() < 0.04, "elastic flow kept {elastic} bit/s, want ~{want}");
    // Every completed mouse paid its handshake: its FCT (to the last byte's arrival)
    // is at least 1.5 base RTTs (SYN, SYN-ACK, then the segment) plus the packets'
    // serializations, the floor of `handshake_scenarios`' exact one-mouse test (here
    // 1 Gbit/s access links, 8 ns a byte, around the 80 ns bottleneck). Queueing
    // behind the elastic flow comes on top: it drains to a few ms when the flood
    // starts and cuts CUBIC's window twice, so mice then finish near the floor.
    let crossing = |bytes: u64| bytes * (8 + 80 + 8);
    let floor = ms(30) + 2 * crossing(60) + 52 * 8 + crossing(1052);
    let fct = out.flows.i64s("fct_ns");
    let done: Vec<u64> = mice.iter().filter(|&&i| fct[i] > 0).map(|&i| fct[i] as u64).collect();
    let fastest = done.iter().min().copied().expect("mice completed");
    assert!(fastest >= floor, "a mouse completed in {fastest} ns, below its physical floor {floor} ns");
}

/// Goodput (bit/s) of flow `id` between two sample times, from `flow_ts`.
fn goodput_between(out: &ccsim::RunOutput, id: u64, from: u64, to: u64) -> f64 {
    let (f, t, d) = (out.flow_ts.u64s("flow_id"), out.flow_ts.u64s("time_ns"), out.flow_ts.u64s("delivered_bytes"));
    let at = |time: u64| (0..f.len()).find(|&i| f[i] == id && t[i] == time).map(|i| d[i]).expect("a sample");
    (at(to) - at(from)) as f64 * 8.0 / ((to - from) as f64 / 1e9)
}

#[test]
fn a_dos_burst_window_shows_as_the_elastic_flows_dip_and_recovery() {
    let mut cfg = dumbbell(100, &[20], 1.0);
    cfg.duration_ns = secs(30);
    cfg.warmup_ns = 0;
    cfg.sample_interval_ns = ms(500);
    cfg.flows.push(flow(0, "cubic", 0));
    let mut dos = flow(0, "udp", 0);
    dos.app = App::Udp {
        rate_bps: 0,
        on_ns: None,
        off_ns: None,
        bursts: vec![Burst { start_ns: secs(10), end_ns: secs(20), rate_bps: 80_000_000 }],
        packet_bytes: 1500,
    };
    cfg.flows.push(dos);
    let out = ccsim::run(&cfg).unwrap();
    assert_conservation(&out);
    let before = goodput_between(&out, 0, secs(5), secs(10));
    let during = goodput_between(&out, 0, secs(12), secs(20));
    let after = goodput_between(&out, 0, secs(25), secs(30));
    let udp = goodput_between(&out, 1, secs(11), secs(20));
    assert!(before > 85e6, "before the burst {before}");
    assert!(during < 25e6, "during the burst {during}");
    assert!(after > 85e6, "recovered {after}");
    // The inelastic burst keeps sending at its rate whatever is dropped: it gets
    // most of its 80 Mbit/s through a 100 Mbit/s bottleneck it shares with CUBIC.
    assert!((60e6..81e6).contains(&udp), "burst delivered {udp}");
    assert_eq!(goodput_between(&out, 1, secs(21), secs(29)), 0.0, "silent outside the burst");
}

#[test]
fn a_udp_on_off_source_sends_at_its_rate_in_on_periods_only() {
    let mut cfg = dumbbell(100, &[20], 1.0);
    cfg.duration_ns = secs(8);
    cfg.warmup_ns = 0;
    let mut cbr = flow(0, "udp", 0);
    cbr.start_jitter_ns = 0;
    cbr.app = App::Udp { rate_bps: 40_000_000, on_ns: Some(secs(1)), off_ns: Some(secs(1)), bursts: vec![], packet_bytes: 1000 };
    cfg.flows.push(cbr);
    let out = ccsim::run(&cfg).unwrap();
    assert_conservation(&out);
    let sent = out.flows.u64s("segs_sent")[0];
    assert_eq!(sent, 4 * 5000, "4 on-seconds at 40 Mbit/s in 1000-byte datagrams");
    let delivered = out.flows.u64s("delivered_bytes")[0];
    assert!(delivered <= 4 * 5000 * 972 && delivered > 4 * 4990 * 972, "{delivered}");
    assert_eq!(out.stats.data_pkts_dropped, 0);
}

/// A UDP source's row has the warm-up counters TCP rows have (issue #19's
/// `*_at_warmup`): datagrams sent and bytes delivered at the warm-up, so its
/// measurement-window figures cover the same window as everyone else's.
#[test]
fn a_udp_source_records_its_counters_at_the_warmup() {
    let mut cfg = dumbbell(100, &[20], 1.0);
    cfg.duration_ns = secs(4);
    cfg.warmup_ns = secs(2);
    let mut cbr = flow(0, "udp", 0);
    cbr.start_jitter_ns = 0;
    cbr.app = App::Udp { rate_bps: 40_000_000, on_ns: None, off_ns: None, bursts: vec![], packet_bytes: 1000 };
    let mut late = cbr.clone();
    late.start_ns = secs(3); // starts after the warm-up: nothing before it
    cfg.flows = vec![cbr, late];
    let out = ccsim::run(&cfg).unwrap();
    assert_conservation(&out);
    let f = &out.flows;
    let (sent, sent_w) = (f.u64s("segs_sent"), f.u64s("segs_sent_at_warmup"));
    let (deliv, deliv_w) = (f.u64s("delivered_bytes"), f.u64s("delivered_bytes_at_warmup"));
    assert_eq!((sent[0], sent_w[0]), (20_000, 10_000), "2 s of 5,000 datagrams/s at the warm-up, 4 s in all");
    // What the first 2 s delivered (less the ~10 ms still on the 20 ms path).
    assert!((9_900 * 972..=10_000 * 972).contains(&deliv_w[0]), "{}", deliv_w[0]);
    assert!(deliv[0] > deliv_w[0]);
    assert_eq!((sent_w[1], deliv_w[1]), (0, 0), "a source starting after the warm-up");
    assert_eq!(sent[1], 5_000);
}
