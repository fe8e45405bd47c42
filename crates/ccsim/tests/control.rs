//! The run loop's control callback (progress, interruption) and `count` expansion in
//! the engine: neither may change results.

mod common;

use ccsim::units::{ms, secs};
use ccsim::{run, run_with, Control, Progress};
use common::*;

fn two_cubic_flows() -> ccsim::ExperimentConfig {
    let mut cfg = dumbbell(50, &[40], 1.0);
    cfg.duration_ns = secs(3);
    cfg.flows = vec![flow(0, "cubic", 0), flow(0, "cubic", ms(100))];
    cfg
}

#[test]
fn callback_sees_monotonic_progress_and_does_not_change_results() {
    let cfg = two_cubic_flows();
    let plain = run(&cfg).unwrap();
    let mut seen: Vec<Progress> = Vec::new();
    let watched = run_with(&cfg, &mut |p| {
        seen.push(*p);
        Control::Continue
    })
    .unwrap();
    assert!(!watched.interrupted && !plain.interrupted);
    assert!(seen.len() >= 2, "a 3 s run at 50 Mbit/s has far more than 2 x 16k events");
    for w in seen.windows(2) {
        assert!(w[0].sim_time_ns <= w[1].sim_time_ns && w[0].events_processed < w[1].events_processed);
        assert!(w[0].recorded_bytes <= w[1].recorded_bytes);
    }
    assert!(seen.iter().all(|p| p.duration_ns == cfg.duration_ns && p.sim_time_ns < cfg.duration_ns));
    assert_eq!(seen[0].events_processed, ccsim::experiment::CONTROL_EVERY_EVENTS);
    assert!(plain.flows.bit_identical(&watched.flows) && plain.flow_ts.bit_identical(&watched.flow_ts));
    assert!(plain.events.bit_identical(&watched.events) && plain.queue_ts.bit_identical(&watched.queue_ts));
    assert_eq!(plain.stats, watched.stats);
}

#[test]
fn stop_ends_the_run_early_with_consistent_partial_output() {
    let cfg = two_cubic_flows();
    let mut calls = 0;
    let out = run_with(&cfg, &mut |_| {
        calls += 1;
        if calls == 3 {
            Control::Stop
        } else {
            Control::Continue
        }
    })
    .unwrap();
    assert!(out.interrupted);
    assert_eq!(calls, 3);
    assert_eq!(out.stats.events_processed, 3 * ccsim::experiment::CONTROL_EVERY_EVENTS);
    assert!(out.stats.sim_time_ns > 0 && out.stats.sim_time_ns < cfg.duration_ns);
    assert_conservation(&out);
    let end = out.flows.u64s("end_ns");
    assert!(end.iter().all(|&e| e <= out.stats.sim_time_ns));
    assert!(out.flow_ts.u64s("time_ns").iter().all(|&t| t <= out.stats.sim_time_ns));
}

#[test]
fn count_is_expanded_by_the_engine_exactly_like_listed_flows() {
    let mut listed = two_cubic_flows();
    listed.flows = vec![flow(0, "cubic", 0), flow(0, "cubic", 0), flow(0, "cubic", 0), flow(0, "reno", ms(50))];
    let mut counted = listed.clone();
    let mut three = flow(0, "cubic", 0);
    three.count = 3;
    counted.flows = vec![three, flow(0, "reno", ms(50))];
    let a = run(&listed).unwrap();
    let b = run(&counted).unwrap();
    assert!(a.flows.bit_identical(&b.flows) && a.flow_ts.bit_identical(&b.flow_ts) && a.events.bit_identical(&b.events));
    assert_eq!(a.stats, b.stats);

    let mut zero = counted.clone();
    zero.flows[0].count = 0;
    assert!(run(&zero).unwrap_err().contains("flows[0].count"));
    let mut huge = counted;
    huge.flows[0].count = u64::MAX;
    assert!(run(&huge).unwrap_err().contains("too many"));
}
