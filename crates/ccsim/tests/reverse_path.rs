//! The reverse bottleneck is a link like any other: its `rate_schedule` is applied
//! (issue 14 found it accepted and silently ignored).

mod common;

use ccsim::config::*;
use ccsim::trace::Column;
use ccsim::units::secs;
use common::*;

#[test]
fn the_reverse_bottlenecks_rate_schedule_is_applied() {
    let mut cfg = dumbbell(100, &[20], 1.0);
    cfg.duration_ns = secs(4);
    cfg.warmup_ns = 0;
    cfg.sample_interval_ns = 0;
    let TopologyConfig::Dumbbell(d) = &mut cfg.topology else { unreachable!() };
    let mut rev = d.bottleneck.clone();
    // ACKs of a 100 Mbit/s flow need ~3.5 Mbit/s: at 0.5 Mbit/s they throttle it.
    rev.rate_schedule = vec![(secs(2), 500_000)];
    d.reverse_bottleneck = Some(rev);
    cfg.flows.push(flow(0, "cubic", 0));
    let out = ccsim::run(&cfg).unwrap();
    assert_conservation(&out);
    let (Some(Column::Dict { codes, values }), Some(Column::Dict { codes: lc, values: lv })) =
        (out.events.column("kind"), out.events.column("link"))
    else {
        panic!("events columns")
    };
    let changes: Vec<&str> = (0..codes.len())
        .filter(|&i| values[codes[i] as usize] == "rate_change")
        .map(|i| lv[lc[i] as usize].as_str())
        .collect();
    assert_eq!(changes, ["bottleneck_rev"]);
    // Delivery slows once the ACK path is throttled.
    let delivered = out.flows.u64s("delivered_bytes")[0];
    let mut fast = cfg.clone();
    let TopologyConfig::Dumbbell(d) = &mut fast.topology else { unreachable!() };
    d.reverse_bottleneck.as_mut().unwrap().rate_schedule.clear();
    let unthrottled = ccsim::run(&fast).unwrap().flows.u64s("delivered_bytes")[0];
    assert!((delivered as f64) < 0.8 * unthrottled as f64, "{delivered} vs {unthrottled}");
}
