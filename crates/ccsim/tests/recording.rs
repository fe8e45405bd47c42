//! Per-packet event rows are opt-in (`packet_events`); drops and CE marks are always
//! counted per flow, so a run recorded without the rows loses no count and its
//! other tables are bit-identical.

mod common;

use ccsim::config::{QdiscConfig, TopologyConfig};
use ccsim::qdisc::codel::CodelConfig;
use ccsim::trace::{Column, Table};
use ccsim::units::{ms, secs};
use common::*;

/// Per flow, the `events` rows of `kind` for data packets, in all and before `warmup`.
fn rows_per_flow(events: &Table, kind: &str, flows: usize, warmup: u64) -> (Vec<u64>, Vec<u64>) {
    let Some(Column::Dict { codes, values }) = events.column("kind") else { panic!("kind is a dictionary column") };
    let (t, f, v2) = (events.u64s("time_ns"), events.i64s("flow_id"), events.f64s("value2"));
    let (mut all, mut early) = (vec![0; flows], vec![0; flows]);
    for i in 0..t.len() {
        // Drop rows say data (1) or not (0) in value2; mark rows are data only (NaN).
        if values[codes[i] as usize] == kind && v2[i] != 0.0 {
            all[f[i] as usize] += 1;
            early[f[i] as usize] += (t[i] < warmup) as u64;
        }
    }
    (all, early)
}

fn kinds(events: &Table) -> Vec<String> {
    let Some(Column::Dict { codes, values }) = events.column("kind") else { panic!("kind is a dictionary column") };
    codes.iter().map(|&c| values[c as usize].clone()).collect()
}

#[test]
fn drops_and_marks_are_counted_per_flow_with_or_without_event_rows() {
    // A CoDel bottleneck marking above 1 ms for the ECN flows and dropping the others.
    let mut cfg = dumbbell(50, &[20, 40], 1.0);
    cfg.duration_ns = secs(12);
    cfg.warmup_ns = secs(4);
    let TopologyConfig::Dumbbell(d) = &mut cfg.topology else { unreachable!("a dumbbell") };
    d.bottleneck.qdisc = QdiscConfig::Codel(CodelConfig {
        limit_packets: 200,
        target_ns: ms(5),
        interval_ns: ms(100),
        ecn: true,
        ce_threshold_ns: None,
        mtu_bytes: 1514,
    });
    for (sender, ecn) in [(0, false), (1, true), (0, true), (1, false)] {
        let mut f = flow(sender, "reno", 0);
        f.ecn = ecn;
        cfg.flows.push(f);
    }
    cfg.packet_events = true;
    let with = ccsim::run(&cfg).unwrap();
    cfg.packet_events = false;
    let without = ccsim::run(&cfg).unwrap();
    assert_conservation(&with);

    let n = cfg.flows.len();
    let flows = &with.flows;
    let (drops, drops_early) = rows_per_flow(&with.events, "drop", n, cfg.warmup_ns);
    let (marks, marks_early) = rows_per_flow(&with.events, "ecn_mark", n, cfg.warmup_ns);
    println!("drops {drops:?} (before warm-up {drops_early:?}), marks {marks:?} (before {marks_early:?})");
    assert_eq!(flows.u64s("dropped_pkts"), drops.as_slice());
    assert_eq!(flows.u64s("dropped_pkts_at_warmup"), drops_early.as_slice());
    assert_eq!(flows.u64s("ecn_marked_pkts"), marks.as_slice());
    assert_eq!(flows.u64s("ecn_marked_pkts_at_warmup"), marks_early.as_slice());
    assert_eq!(drops.iter().sum::<u64>(), with.stats.data_pkts_dropped);
    // The run exercised both: the plain flows lost packets, the ECN flows got marks,
    // and both before and after the warm-up.
    assert!(drops[0] > 0 && drops[3] > 0 && marks[1] > 0 && marks[2] > 0, "drops {drops:?}, marks {marks:?}");
    assert!(drops_early.iter().sum::<u64>() < drops.iter().sum::<u64>());

    // Without the rows: the same run, bit for bit, minus exactly the per-packet rows.
    for (a, b) in [(&with.flows, &without.flows), (&with.flow_ts, &without.flow_ts), (&with.queue_ts, &without.queue_ts), (&with.links, &without.links)] {
        assert!(a.bit_identical(b), "packet_events changed a table other than events");
    }
    assert_eq!(with.stats, without.stats);
    let per_packet = |k: &String| k == "drop" || k == "ecn_mark";
    let kept: Vec<String> = kinds(&with.events).into_iter().filter(|k| !per_packet(k)).collect();
    assert_eq!(kinds(&without.events), kept);
    assert!(kinds(&with.events).iter().filter(|k| per_packet(k)).count() as u64 >= with.stats.data_pkts_dropped);
}
