//! The event queue holds O(components), not O(packets in flight): links keep their
//! packets in FIFOs with at most one pending event of each kind, timers have one slot
//! each. Checked on runs whose buffers hold thousands of packets.

mod common;

use ccsim::units::secs;
use common::*;

/// The most events the engine may have pending for a run with these components:
/// per link a transmit completion, a delay-line arrival and a shaper poll; per end
/// host a NAPI poll; per flow its start, its stop, its sender and receiver timer
/// slots and an application write; the sampler and the warm-up mark.
fn component_bound(links: usize, hosts: usize, flows: usize) -> u64 {
    (3 * links + hosts + 5 * flows + 2) as u64
}

#[test]
fn pending_events_are_bounded_by_components_not_packets_in_flight() {
    // Loss-based CCAs fill any buffer; BBR paces (a sender timer per packet).
    for (cca, pacing) in [("cubic", false), ("bbr1", true)] {
        let mut pending = vec![];
        for buffer_bdp in [1.0, 10.0, 40.0] {
            let mut cfg = dumbbell(100, &[20, 40], buffer_bdp);
            cfg.duration_ns = secs(8);
            for sender in 0..2 {
                for _ in 0..4 {
                    let mut f = flow(sender, cca, 0);
                    f.pacing = pacing;
                    cfg.flows.push(f);
                }
            }
            let out = ccsim::run(&cfg).unwrap();
            assert_conservation(&out);
            let hosts = 2 * cfg.topology.senders().len();
            let bound = component_bound(out.links.num_rows(), hosts, cfg.flows.len());
            let s = &out.stats;
            println!(
                "{cca} {buffer_bdp} BDP: max pending {} (bound {bound}), data packets in the network at the end {}",
                s.max_pending_events, s.data_pkts_in_network
            );
            assert!(s.max_pending_events <= bound, "{cca} at {buffer_bdp} BDP: {} pending > {bound}", s.max_pending_events);
            pending.push((s.max_pending_events, s.data_pkts_in_network));
        }
        // The deep buffers really held far more packets than the bound (a FIFO per
        // link, not an event per packet), and the pending count did not grow with them.
        let (small, deep) = (pending[0], pending[2]);
        if cca == "cubic" {
            assert!(deep.1 > 20 * deep.0 && deep.1 > 10 * small.1, "{cca}: the deep buffer must fill: {pending:?}");
        }
        assert!(deep.0 <= small.0 + 2, "{cca}: pending events grew with the buffer: {pending:?}");
    }
}

/// A link that only one link feeds (on a dumbbell with one sender: the receiver's
/// last hop of the data path, the sender's of the ACK path) takes each packet when its
/// feeder starts sending it, so the packet costs no arrival event there
/// (`net/cut_through.rs`). Random loss on a link keeps its arrivals (the draw belongs
/// to the arrival): a loss rate far too small to ever lose a packet on the sender's
/// last ACK hop gives the same run with one more event per ACK.
#[test]
fn links_fed_by_one_link_cost_no_event_per_packet() {
    let mut cut = dumbbell(100, &[20], 1.0);
    cut.duration_ns = secs(5);
    for _ in 0..4 {
        cut.flows.push(flow(0, "cubic", 0));
    }
    let mut kept = cut.clone();
    let ccsim::config::TopologyConfig::Dumbbell(d) = &mut kept.topology else { unreachable!("a dumbbell") };
    d.senders[0].access_reverse_loss = ccsim::net::LossConfig::Bernoulli(1e-15);
    let (a, b) = (ccsim::run(&cut).unwrap(), ccsim::run(&kept).unwrap());
    assert_conservation(&a);
    assert_conservation(&b);
    assert_eq!(b.stats.ack_pkts_dropped, a.stats.ack_pkts_dropped, "the tiny loss rate lost nothing");
    let saved = b.stats.events_processed as f64 - a.stats.events_processed as f64;
    let acks = a.stats.ack_pkts_delivered as f64;
    println!("events {} vs {}, ACKs delivered {acks}", a.stats.events_processed, b.stats.events_processed);
    assert!((saved - acks).abs() < 0.02 * acks, "one event saved per ACK: saved {saved}, ACKs {acks}");
    // Otherwise the same run, up to the order of events at the very same nanosecond.
    let (da, db) = (a.stats.data_pkts_delivered as f64, b.stats.data_pkts_delivered as f64);
    assert!((da - db).abs() < 0.01 * da, "delivered {da} vs {db}");
}

/// A plain FIFO with a constant rate and delay computes each packet's departure when
/// it admits it, so a packet that waits in its queue costs no transmit-completion
/// event (`net/link.rs`, departures at enqueue). A rate change scheduled after the end
/// (never applied) keeps the bottleneck on the eager path: that run has one more event
/// per packet that waited at the bottleneck (its sojourn above zero; every packet's
/// sojourn is sampled), and is otherwise the same run up to the order of events at
/// the very same nanosecond.
#[test]
fn packets_waiting_in_a_fifo_cost_no_completion_event() {
    let mut scheduled = dumbbell(100, &[20], 2.0);
    scheduled.duration_ns = secs(5);
    scheduled.sojourn_sample_every = 1;
    for _ in 0..4 {
        scheduled.flows.push(flow(0, "cubic", 0));
    }
    let mut eager = scheduled.clone();
    let ccsim::config::TopologyConfig::Dumbbell(d) = &mut eager.topology else { unreachable!("a dumbbell") };
    d.bottleneck.rate_schedule = vec![(eager.duration_ns + 1, d.bottleneck.rate_bps)];
    let (a, b) = (ccsim::run(&scheduled).unwrap(), ccsim::run(&eager).unwrap());
    assert_conservation(&a);
    assert_conservation(&b);
    // The forward bottleneck's samples (its reverse direction is sampled too).
    let Some(ccsim::trace::Column::Dict { codes, values }) = a.sojourn.column("link") else { panic!("sojourn.link") };
    let forward = values.iter().position(|v| v == "bottleneck").expect("the bottleneck is sampled") as u32;
    let sojourns = a.sojourn.u64s("sojourn_ns").iter().zip(codes);
    let waited = sojourns.filter(|&(&s, &l)| l == forward && s > 0).count() as f64;
    let saved = b.stats.events_processed as f64 - a.stats.events_processed as f64;
    println!("events {} vs {}, packets that waited {waited}", a.stats.events_processed, b.stats.events_processed);
    assert!(waited > 0.5 * a.stats.data_pkts_delivered as f64, "the queue must build: {waited} waited");
    assert!((saved - waited).abs() < 0.02 * waited, "one event saved per packet that waited: saved {saved}, waited {waited}");
    let (da, db) = (a.stats.data_pkts_delivered as f64, b.stats.data_pkts_delivered as f64);
    assert!((da - db).abs() < 0.01 * da, "delivered {da} vs {db}");
}
