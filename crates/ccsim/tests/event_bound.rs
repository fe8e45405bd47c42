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
