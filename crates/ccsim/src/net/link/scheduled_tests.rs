//! Departures at enqueue against the eager link: the same packets offered to a link
//! that runs a transmit-completion event per queued packet and to one that schedules
//! each packet's departure when it admits it must give the same drops, the same
//! arrival times at the far end, and the same queue seen at every observation (backlog,
//! counters, sojourn summary and samples) and at the end (byte counters after
//! `close`). At an instant where an arrival or an observation coincides with a
//! completion, the eager link here runs the completion after them: the order the
//! scheduled link reproduces (see the module's documentation).

use rand::Rng;

use super::*;
use crate::config::QdiscConfig;
use crate::net::{Ecn, Payload};
use crate::qdisc::testing::pkt;
use crate::sim::{rng::Component, stream};

#[derive(Debug, Clone, Copy)]
enum Input {
    Arrive(Packet),
    Observe,
}

/// What a test can see of a link's queue at an instant.
#[derive(Debug, PartialEq)]
struct View {
    at: Time,
    backlog_pkts: u64,
    backlog_bytes: u64,
    stats: QueueStats,
    sojourn: (u64, u64, u64),
    data_in_link: u64,
}

#[derive(Debug, PartialEq)]
struct Outcome {
    dropped: Vec<u64>,
    views: Vec<View>,
    sojourn_samples: Vec<(Time, Time)>,
    /// `tx_pkts`, `tx_bytes` after `close` at the end, and the warm-up snapshot.
    closed: (u64, u64, QueueStats),
    /// (arrival time, segment) of every packet on the delay line once all have started.
    line: Vec<(Time, u64)>,
}

fn seg(p: &Packet) -> u64 {
    match p.payload {
        Payload::Data(s) => s.seg,
        _ => unreachable!("data packets only"),
    }
}

fn view(l: &mut Link, at: Time) -> View {
    l.advance(at);
    let s = l.queue.take_sojourn();
    View {
        at,
        backlog_pkts: l.queue.backlog_pkts(),
        backlog_bytes: l.queue.backlog_bytes(),
        stats: l.queue.stats,
        sojourn: (s.count, s.sum_ns, s.max_ns),
        data_in_link: l.data_in_link,
    }
}

/// Offer `inputs` (in time order) to `l`, snapshot at `warmup`, close at `end`, then
/// let every admitted packet start. On the eager link `tx` holds its pending
/// completion, run before any input at a later instant (and after those at its own).
fn drive(l: &mut Link, inputs: &[(Time, Input)], warmup: Time, end: Time) -> Outcome {
    let mut tx: Option<Time> = None;
    let mut dropped = Vec::new();
    let mut views = Vec::new();
    let complete_before = |l: &mut Link, tx: &mut Option<Time>, t: Time| {
        while let Some(d) = tx.filter(|&d| d < t) {
            *tx = match l.on_tx_done(d).0 {
                LinkWake::TxDone(x) => Some(x),
                _ => None,
            };
        }
    };
    let mut warmup_taken = false;
    for &(t, input) in inputs {
        complete_before(l, &mut tx, t);
        if !warmup_taken && t >= warmup {
            complete_before(l, &mut tx, warmup);
            l.snapshot_at_warmup(warmup);
            warmup_taken = true;
        }
        match input {
            Input::Arrive(p) => {
                let (wake, _) = l.enqueue(p, t);
                if let LinkWake::TxDone(x) = wake {
                    assert!(!l.scheduled, "a link with departures at enqueue asked for a completion");
                    assert!(tx.is_none(), "two completions pending");
                    tx = Some(x);
                }
                dropped.extend(l.queue.report.drops.drain(..).map(|(p, _)| seg(&p)));
            }
            Input::Observe => views.push(view(l, t)),
        }
    }
    complete_before(l, &mut tx, end);
    views.push(view(l, end));
    let (tx_pkts, tx_bytes) = (l.tx_pkts, l.tx_bytes);
    l.close(end);
    let closed = (l.tx_pkts, l.tx_bytes, l.stats_at_warmup);
    let sojourn_samples = std::mem::take(&mut l.queue.sojourn_samples);
    (l.tx_pkts, l.tx_bytes) = (tx_pkts, tx_bytes);
    complete_before(l, &mut tx, Time::MAX);
    Outcome {
        dropped,
        views,
        sojourn_samples,
        closed,
        line: l.line.iter().map(|e| (e.at, seg(&e.p))).collect(),
    }
}

/// Random arrivals (sizes from `sizes`, gaps multiples of `grain` up to about two
/// serializations, so the queue fills, overflows and drains) with observations mixed
/// in, some at the very instants of arrivals.
fn inputs(seed: u64, n: u64, sizes: &[u32], grain: Time, max_gap: Time) -> Vec<(Time, Input)> {
    let mut rng = stream(seed, Component::Arrivals, 0);
    let mut t = 0;
    let mut out = Vec::new();
    for i in 0..n {
        t += rng.gen_range(0..=max_gap / grain) * grain;
        let bytes = sizes[rng.gen_range(0..sizes.len())];
        out.push((t, Input::Arrive(pkt(0, i, bytes, Ecn::NotEct))));
        if rng.gen_range(0..4) == 0 {
            out.push((t + rng.gen_range(0..3) * grain, Input::Observe));
        }
    }
    out.sort_by_key(|&(t, _)| t);
    out
}

/// A link of `rate` with a 5 ms delay, its queue sampled every third packet.
fn link(qdisc: &QdiscConfig, rate: Bps, head: bool) -> Link {
    let q = Queue::from_config(qdisc, stream(3, Component::Qdisc, 0));
    let mut l = Link::new("l".into(), rate, 5_000_000, LossConfig::default(), q, stream(3, Component::LinkLoss, 0));
    l.limit_includes_head = head;
    l.queue.sojourn_every = 3;
    l
}

fn compare(qdisc: &QdiscConfig, rate: Bps, head: bool, inputs: &[(Time, Input)]) -> Outcome {
    let last = inputs.last().unwrap().0;
    let (warmup, end) = (last / 3, last * 2 / 3);
    let mut eager = link(qdisc, rate, head);
    let mut scheduled = link(qdisc, rate, head);
    assert!(scheduled.schedule_departures());
    let a = drive(&mut eager, inputs, warmup, end);
    let b = drive(&mut scheduled, inputs, warmup, end);
    assert_eq!(a.dropped, b.dropped, "{qdisc:?} head {head}: drops");
    assert_eq!(a.views, b.views, "{qdisc:?} head {head}: the queue at the observations");
    assert_eq!(a.sojourn_samples, b.sojourn_samples, "{qdisc:?} head {head}: sojourn samples");
    assert_eq!(a.closed, b.closed, "{qdisc:?} head {head}: byte counters at the end, warm-up snapshot");
    assert_eq!(a.line, b.line, "{qdisc:?} head {head}: arrivals at the far end");
    a
}

#[test]
fn departures_at_enqueue_match_the_eager_link() {
    let qdiscs = [QdiscConfig::Pfifo { limit_packets: 6 }, QdiscConfig::Bfifo { limit_bytes: 7000 }];
    for qdisc in &qdiscs {
        for head in [false, true] {
            // 8 Mbit/s: a byte takes 1 µs, so serializations and gaps (multiples of
            // 100 µs) coincide often: ties between arrivals, observations and completions.
            let a = compare(qdisc, 8_000_000, head, &inputs(1, 4000, &[100, 500, 1000, 1500], 100_000, 1_600_000));
            // A rate that leaves sub-nanosecond remainders to carry; gaps of any length.
            let b = compare(qdisc, 1_000_000_007, head, &inputs(2, 4000, &[64, 577, 1500], 1, 11_000));
            for o in [a, b] {
                // The runs exercised what they are meant to: drops, a queue, samples.
                println!("{qdisc:?} head {head}: {} dropped, {} sojourn samples above 0", o.dropped.len(), o.sojourn_samples.iter().filter(|s| s.1 > 0).count());
                assert!(o.dropped.len() > 50 && o.views.iter().any(|v| v.backlog_pkts >= 3), "{qdisc:?}: {o:?}");
                assert!(o.sojourn_samples.iter().filter(|s| s.1 > 0).count() > 100, "{qdisc:?}");
            }
        }
    }
}

#[test]
fn only_plain_fifos_with_a_constant_rate_and_delay_schedule_departures() {
    let fifo = QdiscConfig::Pfifo { limit_packets: 10 };
    let make = |qdisc: &QdiscConfig| link(qdisc, 1_000_000, false);
    assert!(make(&fifo).schedule_departures());
    assert!(make(&QdiscConfig::Bfifo { limit_bytes: 10_000 }).schedule_departures());
    assert!(!make(&serde_json::from_str::<QdiscConfig>(r#"{"kind": "codel"}"#).unwrap()).schedule_departures());
    let mut jittered = make(&fifo);
    jittered.set_jitter(1_000, stream(3, Component::LinkJitter, 0));
    assert!(!jittered.schedule_departures());
    let mut rate_change = make(&fifo);
    rate_change.rate_schedule = vec![(1_000_000, 2_000_000)];
    assert!(!rate_change.schedule_departures());
}
