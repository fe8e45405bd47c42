//! The three-way handshake end to end (`tcp::handshake`): SYN, SYN-ACK and the
//! client's ACK are packets on the path, lost like any other, with Linux's retry
//! timers; setup time, SYN retransmissions and failures land in the flows table.

mod common;

use ccsim::config::*;
use ccsim::trace::{Column, Table};
use ccsim::units::{ms, secs};
use common::*;

fn bools(t: &Table, name: &str) -> Vec<bool> {
    match t.column(name) {
        Some(Column::Bool(v)) => v.clone(),
        _ => panic!("no bool column {name}"),
    }
}

fn kinds(out: &ccsim::RunOutput) -> Vec<String> {
    match out.events.column("kind") {
        Some(Column::Dict { codes, values }) => codes.iter().map(|&c| values[c as usize].clone()).collect(),
        _ => panic!("events kind"),
    }
}

/// A 40 ms path at 100 Mbit/s carrying one finite flow that opens with a handshake.
fn one_mouse(size: u64) -> ExperimentConfig {
    let mut cfg = dumbbell(100, &[40], 1.0);
    cfg.duration_ns = secs(10);
    cfg.warmup_ns = 0;
    cfg.sample_interval_ns = 0;
    let mut f = flow(0, "cubic", ms(100));
    f.start_jitter_ns = 0;
    f.size_bytes = Some(size);
    f.handshake = true;
    cfg.flows.push(f);
    cfg
}

/// Lose every other packet entering the sender's access link in `direction`
/// (Gilbert–Elliott flipping state at each packet: the first is lost).
fn lose_alternate(cfg: &mut ExperimentConfig, reverse: bool) {
    let TopologyConfig::Dumbbell(d) = &mut cfg.topology else { unreachable!() };
    let ge = LossConfig::GilbertElliott(ccsim::net::loss::GilbertElliottConfig { p: 1.0, r: 1.0, loss_good: 0.0, loss_bad: 1.0 });
    if reverse {
        d.senders[0].access_reverse_loss = ge;
    } else {
        d.senders[0].access_loss = ge;
    }
}

#[test]
fn a_clean_handshake_takes_one_rtt_seeds_srtt_and_counts_in_the_fct() {
    let cfg = one_mouse(1448 * 10);
    let out = ccsim::run(&cfg).unwrap();
    assert_conservation(&out);
    let setup = out.flows.i64s("setup_ns")[0];
    // One base RTT plus serializations and the hosts' processing delays.
    assert!(setup >= ms(40) as i64 && setup < (ms(40) + 200_000) as i64, "setup {setup}");
    assert_eq!(out.stats.handshake_pkts_sent, 3, "SYN, SYN-ACK, ACK");
    assert_eq!(out.stats.handshake_pkts_delivered, 3);
    assert_eq!(out.flows.u64s("syn_retrans")[0], 0);
    // IW10 goes out when the SYN-ACK arrives: the last byte arrives half an RTT
    // (plus ten serializations) after the handshake.
    let fct = out.flows.i64s("fct_ns")[0];
    assert!(fct >= setup + ms(20) as i64 && fct < setup + ms(22) as i64, "fct {fct} setup {setup}");
    // Without the handshake the same flow completes one RTT sooner.
    let mut plain = cfg.clone();
    plain.flows[0].handshake = false;
    let p = ccsim::run(&plain).unwrap();
    assert_eq!(p.flows.i64s("setup_ns")[0], -1);
    assert_eq!(p.stats.handshake_pkts_sent, 0);
    let gap = fct - p.flows.i64s("fct_ns")[0];
    assert!((gap - setup).abs() < ms(1) as i64, "handshake adds {gap}, setup {setup}");
}

/// With exact hosts a one-segment mouse completes exactly at its physical floor:
/// 1.5 RTTs (SYN, SYN-ACK, then the segment) plus each packet's serialization on
/// every link it crosses. The receiver's last data hop and the sender's last two ACK
/// hops take their packets cut through from the link feeding them
/// (`net/cut_through.rs`): a hop's delay skipped there would show as an early
/// completion, a wait as a late one.
#[test]
fn a_one_segment_mouse_completes_exactly_at_its_physical_floor() {
    let mut cfg = one_mouse(1000);
    let TopologyConfig::Dumbbell(d) = &mut cfg.topology else { unreachable!() };
    d.senders[0].host = ccsim::host::HostConfig::ideal();
    // 5 ms of the 20 each way on the bottleneck, which feeds the cut-through hops.
    d.bottleneck.delay_ns = ms(5);
    let out = ccsim::run(&cfg).unwrap();
    assert_conservation(&out);
    // Access links at 1 Gbit/s (8 ns a byte), the bottleneck at 100 Mbit/s (80 ns).
    let crossing = |bytes: u64| bytes * (8 + 80 + 8);
    // The handshake's ACK (52 bytes) leaves just before the segment (1052 bytes),
    // which waits for it on the access link only (it is done at the bottleneck by the
    // time the segment gets there).
    let floor = ms(60) + 2 * crossing(60) + 52 * 8 + crossing(1052);
    assert_eq!(out.flows.i64s("fct_ns")[0], floor as i64);
}

/// `tcp_ack_update_rtt` on the SYN-ACK: srtt is the SYN's RTT, so the first data RTO
/// is srtt + max(2·srtt, rto_min) = 40 + 200 ms, not TCP_TIMEOUT_INIT (1 s). A tail
/// loss that only the RTO can repair shows it.
#[test]
fn the_handshakes_rtt_sample_sets_the_first_rto() {
    // 2 segments with the data direction losing every other packet after the
    // handshake's ACK: SYN lost, SYN ok, ACK lost, segment 0 ok, segment 1 lost.
    let mut cfg = one_mouse(1448 * 2);
    lose_alternate(&mut cfg, false);
    let out = ccsim::run(&cfg).unwrap();
    assert_conservation(&out);
    let setup = out.flows.i64s("setup_ns")[0] as u64;
    // The first SYN was lost: the resend at 1 s (TCP_TIMEOUT_INIT) got through.
    assert_eq!(out.flows.u64s("syn_retrans")[0], 1);
    assert!(setup >= secs(1) + ms(40) && setup < secs(1) + ms(41), "setup {setup}");
    assert!(out.stats.handshake_pkts_dropped >= 2, "the first SYN and the ACK");
    assert!(bools(&out.flows, "completed")[0], "data completes the server's handshake without its ACK");
    // The lost last segment is repaired by TLP/RTO well within a second of the start.
    let fct = out.flows.i64s("fct_ns")[0] as u64;
    assert!(fct < setup + ms(700), "fct {fct}: RTO from the handshake's srtt, not 1 s");
}

#[test]
fn a_lost_syn_ack_is_resent_when_the_syn_is() {
    let mut cfg = one_mouse(1448 * 4);
    lose_alternate(&mut cfg, true);
    let out = ccsim::run(&cfg).unwrap();
    assert_conservation(&out);
    let setup = out.flows.i64s("setup_ns")[0] as u64;
    // SYN-ACK lost; both timers fire at 1 s: the resent SYN meets a resent SYN-ACK.
    assert!(setup >= secs(1) && setup < secs(1) + ms(41), "setup {setup}");
    assert_eq!(out.flows.u64s("syn_retrans")[0], 1);
}

#[test]
fn syn_retries_exhausted_fail_the_connection_after_131_s() {
    let mut cfg = one_mouse(100_000);
    cfg.duration_ns = secs(140);
    let TopologyConfig::Dumbbell(d) = &mut cfg.topology else { unreachable!() };
    d.senders[0].access_loss =
        LossConfig::GilbertElliott(ccsim::net::loss::GilbertElliottConfig { p: 0.0, r: 1.0, loss_good: 1.0, loss_bad: 1.0 });
    let out = ccsim::run(&cfg).unwrap();
    assert_conservation(&out);
    assert!(bools(&out.flows, "setup_failed")[0]);
    assert_eq!(out.flows.i64s("setup_ns")[0], -1);
    assert_eq!(out.flows.u64s("syn_retrans")[0], 10, "tcp_syn_retries 6 + tcp_syn_linear_timeouts 4");
    assert_eq!(out.stats.handshake_pkts_sent, 11);
    assert_eq!(out.stats.handshake_pkts_dropped, 11);
    assert_eq!(out.stats.data_pkts_sent, 0);
    let k = kinds(&out);
    let i = k.iter().position(|k| k == "connect_failed").expect("a connect_failed event");
    assert_eq!(out.events.u64s("time_ns")[i], ms(100) + secs(131));
    assert!(!bools(&out.flows, "completed")[0]);
}

#[test]
fn a_stop_while_connecting_ends_the_attempt() {
    let mut cfg = one_mouse(100_000);
    let TopologyConfig::Dumbbell(d) = &mut cfg.topology else { unreachable!() };
    d.senders[0].access_loss =
        LossConfig::GilbertElliott(ccsim::net::loss::GilbertElliottConfig { p: 0.0, r: 1.0, loss_good: 1.0, loss_bad: 1.0 });
    cfg.flows[0].stop_ns = Some(ms(2500));
    let out = ccsim::run(&cfg).unwrap();
    assert_conservation(&out);
    // SYNs at 0.1, 1.1, 2.1 s, then none: the stop at 2.5 s closed the socket.
    assert_eq!(out.stats.handshake_pkts_sent, 3);
    assert!(!bools(&out.flows, "setup_failed")[0]);
    assert_eq!(out.flows.i64s("setup_ns")[0], -1);
    assert_eq!(out.stats.data_pkts_sent, 0, "a stopped connection never starts sending");
    assert!(kinds(&out).iter().any(|k| k == "flow_stop"));
}

/// A full drop-tail queue drops SYNs too: with a 2-packet buffer filled by a bulk
/// flow, mice connections take retries, and every handshake packet is accounted for.
#[test]
fn syns_meet_a_full_queue_and_conservation_holds() {
    let mut cfg = dumbbell(10, &[20], 0.1);
    cfg.duration_ns = secs(20);
    cfg.warmup_ns = 0;
    cfg.sample_interval_ns = 0;
    cfg.flows.push(flow(0, "cubic", 0));
    let mut mice = flow(0, "reno", secs(1));
    mice.group = "mice".into();
    mice.arrival = Arrival::Interval { every_ns: ms(50) };
    mice.count = 200;
    mice.size_bytes = Some(3_000);
    mice.handshake = true;
    cfg.flows.push(mice);
    let out = ccsim::run(&cfg).unwrap();
    assert_conservation(&out);
    assert!(out.stats.handshake_pkts_dropped > 0, "{:?}", out.stats);
    let retrans = out.flows.u64s("syn_retrans");
    let setup = out.flows.i64s("setup_ns");
    assert!(retrans.iter().any(|&r| r > 0));
    // A resent SYN costs at least the 1 s initial timeout.
    for i in 1..setup.len() {
        if retrans[i] > 0 && setup[i] >= 0 {
            assert!(setup[i] as u64 >= secs(1), "flow {i}: setup {} after {} resends", setup[i], retrans[i]);
        }
    }
}
