//! End-to-end BBR scenarios through the real sender (loss detection, recovery,
//! pacing, delayed ACKs) on small seeded dumbbells, checked against what the BBR
//! literature reports:
//!
//! * Cardwell et al., "BBR: Congestion-Based Congestion Control", ACM Queue 14(5),
//!   2016 (Fig. 8: goodput vs random loss on 100 Mbit/s / 100 ms — CUBIC collapses
//!   around 0.1–1 %, BBRv1 keeps the link up to ~5 % and beyond; BBR keeps the
//!   bottleneck queue near empty in deep buffers);
//! * Cardwell et al., "BBR v2", IETF 104/105 ICCRG (v2 bounds inflight once the
//!   per-round loss rate exceeds `loss_thresh` = 2 %), and the BBRv3 update at
//!   IETF 117;
//! * Hock, Bless, Zitterbart, "Experimental evaluation of BBR congestion control",
//!   ICNP 2017, and Ware et al., "Modeling BBR's interactions with loss-based
//!   congestion control", IMC 2019 (BBRv1 takes most of a shallow-buffered link
//!   from CUBIC; CUBIC's share grows with the buffer and wins in deep buffers).
//!
//! Thresholds were set after measuring (numbers in each test's comment, seed 1,
//! and checked for seeds 2–4), with margin, without touching any model constant.
//! Every test checks packet conservation. `cargo test --test bbr_scenarios --
//! --nocapture` prints the measured numbers.

mod common;

use ccsim::config::TopologyConfig;
use ccsim::units::{ms, secs, Time};
use ccsim::{ExperimentConfig, RunOutput};
use common::*;

/// Bottleneck rate of every scenario (Mbit/s).
const RATE_MBPS: u64 = 100;

/// Goodput ceiling of the bottleneck: the payload share of each 1500-byte packet.
fn ceiling() -> f64 {
    RATE_MBPS as f64 * 1e6 * 1448.0 / 1500.0
}

/// BDP in 1500-byte packets, as `dumbbell` sizes its buffer.
fn bdp_pkts(rtt_ms: u64) -> f64 {
    RATE_MBPS as f64 * 1e6 / 8.0 * rtt_ms as f64 / 1000.0 / 1500.0
}

fn set_loss(cfg: &mut ExperimentConfig, p: f64) {
    let TopologyConfig::Dumbbell(d) = &mut cfg.topology else { unreachable!("a dumbbell") };
    d.bottleneck.loss = p;
}

/// Run, and check packet conservation.
fn run(cfg: &ExperimentConfig) -> RunOutput {
    let out = ccsim::run(cfg).unwrap();
    assert_conservation(&out);
    out
}

/// A dictionary-encoded string column, decoded.
fn strings(t: &ccsim::trace::Table, name: &str) -> Vec<String> {
    match t.column(name) {
        Some(ccsim::trace::Column::Dict { codes, values }) => codes.iter().map(|&c| values[c as usize].clone()).collect(),
        other => panic!("column {name} is not a dictionary column: {other:?}"),
    }
}

/// Forward-bottleneck backlog samples (packets) at or after `from`, sorted.
fn sorted_backlog_after(out: &RunOutput, from: Time) -> Vec<u64> {
    let q = &out.queue_ts;
    let (t, b, link) = (q.u64s("time_ns"), q.u64s("backlog_pkts"), strings(q, "link"));
    let mut v: Vec<u64> = (0..t.len()).filter(|&i| link[i] == "bottleneck" && t[i] >= from).map(|i| b[i]).collect();
    assert!(v.len() > 100, "too few queue samples: {}", v.len());
    v.sort_unstable();
    v
}

fn quantile(sorted: &[u64], q: f64) -> u64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// The `cc_state` of flow `flow` as runs of equal consecutive samples:
/// (state, first sample time, last sample time, max cwnd in the run).
fn state_runs(out: &RunOutput, flow: u64) -> Vec<(String, Time, Time, u64)> {
    let ts = &out.flow_ts;
    let (t, id, cwnd, st) = (ts.u64s("time_ns"), ts.u64s("flow_id"), ts.u64s("cwnd_pkts"), strings(ts, "cc_state"));
    let mut runs: Vec<(String, Time, Time, u64)> = vec![];
    for i in (0..t.len()).filter(|&i| id[i] == flow) {
        match runs.last_mut() {
            Some(r) if r.0 == st[i] => {
                r.2 = t[i];
                r.3 = r.3.max(cwnd[i]);
            }
            _ => runs.push((st[i].clone(), t[i], t[i], cwnd[i])),
        }
    }
    runs
}

fn describe(runs: &[(String, Time, Time, u64)]) -> String {
    runs.iter().map(|r| format!("{}@{:.3}s", r.0, r.1 as f64 / 1e9)).collect::<Vec<_>>().join(" → ")
}

// ---------------------------------------------------------------------------
// (a) random loss
// ---------------------------------------------------------------------------

/// One flow alone on 100 Mbit/s, 100 ms, 1 BDP pfifo, with random loss on the
/// forward bottleneck; goodput after the 5 s warm-up of a 30 s run.
fn lossy_goodput(cca: &str, loss: f64) -> f64 {
    let mut cfg = dumbbell(RATE_MBPS, &[100], 1.0);
    set_loss(&mut cfg, loss);
    cfg.flows.push(flow(0, cca, 0));
    let out = run(&cfg);
    let g = goodputs(&cfg, &out)[0];
    println!("loss {:.0}%: {cca:5} goodput {:6.2} Mbit/s ({:.3} of the link)", loss * 100.0, g / 1e6, g / ceiling());
    g
}

/// At 1% random loss BBRv1 ignores loss as a signal and keeps the link, while
/// CUBIC collapses to its Mathis rate (MSS/RTT · 1.22/√p ≈ 1.4 Mbit/s here).
/// BBRv2/v3 stay high too: a 1% random loss rate rarely exceeds their 2%
/// per-round `loss_thresh`.
///
/// Measured (seeds 1–3): bbr1 92.5–92.8 Mbit/s (0.96 of the link), cubic
/// 1.2–1.5 Mbit/s (≈0.013), bbr2 82.8–83.4, bbr3 83.7–85.9 (≈0.86–0.89).
/// Thresholds: bbr1 > 0.85 of the link, cubic < 0.05 (3× the Mathis rate),
/// bbr2/bbr3 > 0.6 and still more than 20× CUBIC.
#[test]
fn bbr1_keeps_the_link_under_1pct_loss_where_cubic_collapses() {
    let bbr1 = lossy_goodput("bbr1", 0.01);
    let cubic = lossy_goodput("cubic", 0.01);
    let bbr2 = lossy_goodput("bbr2", 0.01);
    let bbr3 = lossy_goodput("bbr3", 0.01);
    assert!(bbr1 > 0.85 * ceiling(), "bbr1 at 1% loss: {:.2} Mbit/s", bbr1 / 1e6);
    assert!(cubic < 0.05 * ceiling(), "cubic at 1% loss should collapse: {:.2} Mbit/s", cubic / 1e6);
    for (name, g) in [("bbr2", bbr2), ("bbr3", bbr3)] {
        assert!(g > 0.6 * ceiling(), "{name} at 1% loss (below its 2% threshold): {:.2} Mbit/s", g / 1e6);
        assert!(g > 20.0 * cubic, "{name} {:.2} vs cubic {:.2} Mbit/s", g / 1e6, cubic / 1e6);
    }
}

/// At 5% random loss BBRv1 still keeps the link (the ACM Queue paper: it "meets
/// the limit [link × (1 − p)] up to 5% loss"), while BBRv2 and BBRv3 see more than
/// their 2% `loss_thresh` in every probing round, cap inflight_hi and back off.
///
/// Measured (seeds 1–3): bbr1 89.2–90.8 Mbit/s (0.92–0.94 of the link; the
/// limit is 0.95), bbr2 2.3–6.1 Mbit/s, bbr3 1.5–5.6 Mbit/s (≤ 7% of bbr1).
/// Thresholds: bbr1 > 0.85 of the link; bbr2/bbr3 < 0.25 × bbr1.
#[test]
fn bbr2_and_bbr3_back_off_above_their_loss_threshold_while_bbr1_does_not() {
    let bbr1 = lossy_goodput("bbr1", 0.05);
    let bbr2 = lossy_goodput("bbr2", 0.05);
    let bbr3 = lossy_goodput("bbr3", 0.05);
    assert!(bbr1 > 0.85 * ceiling(), "bbr1 at 5% loss: {:.2} Mbit/s", bbr1 / 1e6);
    for (name, g) in [("bbr2", bbr2), ("bbr3", bbr3)] {
        assert!(g < 0.25 * bbr1, "{name} at 5% loss must back off: {:.2} vs bbr1 {:.2} Mbit/s", g / 1e6, bbr1 / 1e6);
        assert!(g > 0.0, "{name} delivered nothing");
    }
}

// ---------------------------------------------------------------------------
// (b) deep buffer, lone flow
// ---------------------------------------------------------------------------

/// A lone flow on 100 Mbit/s, 20 ms (BDP ≈ 167 packets) with an 8-BDP pfifo
/// (1333 packets), 30 s. BBR paces at its bandwidth estimate and bounds inflight
/// near the BDP, so the bottleneck queue stays near empty (only ProbeBW's
/// 1.25× probes add ≈ 0.25 BDP for one round); CUBIC fills the buffer until it
/// overflows and then only backs off by 30%.
///
/// Measured backlog after warm-up (median / p90 / max, packets): bbr1 1/30/47,
/// bbr2 0/0/33, bbr3 0/37/133; cubic 1114/1273/1333. Goodput 94.5 / 95.6 /
/// 93.6 / 96.5 Mbit/s (ideal host). With Linux's GSO budget (`tso_autosize`, the
/// default since the host layer) BBRv1's cwnd carries 3 × ~7 packets of quantization
/// budget, which stand in the queue: median 18 packets, as the kernel's ~20
/// (docs/validation.md). Thresholds: BBR median < 0.15 BDP, p90 < 0.5 BDP and
/// goodput > 0.9 of the link; CUBIC median > 0.6 of the buffer.
#[test]
fn a_lone_bbr_flow_keeps_a_deep_buffer_nearly_empty_while_cubic_fills_it() {
    let bdp = bdp_pkts(20);
    let buffer = 8.0 * bdp;
    for cca in ["bbr1", "bbr2", "bbr3", "cubic"] {
        let mut cfg = dumbbell(RATE_MBPS, &[20], 8.0);
        cfg.flows.push(flow(0, cca, 0));
        let out = run(&cfg);
        let g = goodputs(&cfg, &out)[0];
        let q = sorted_backlog_after(&out, cfg.warmup_ns);
        let (median, p90, max) = (quantile(&q, 0.5), quantile(&q, 0.9), *q.last().unwrap());
        println!(
            "8 BDP buffer ({buffer:.0} pkts, BDP {bdp:.0}): {cca:5} backlog median {median} p90 {p90} max {max} pkts; goodput {:.2} Mbit/s",
            g / 1e6
        );
        if cca == "cubic" {
            assert!(median as f64 > 0.6 * buffer, "cubic should fill most of the buffer: median {median} pkts");
        } else {
            assert!((median as f64) < 0.15 * bdp, "{cca}: median backlog {median} pkts, BDP {bdp:.0}");
            assert!((p90 as f64) < 0.5 * bdp, "{cca}: p90 backlog {p90} pkts, BDP {bdp:.0}");
            assert!(g > 0.9 * ceiling(), "{cca}: a small queue must not cost throughput: {:.2} Mbit/s", g / 1e6);
        }
    }
}

// ---------------------------------------------------------------------------
// (c) BBRv1 against CUBIC
// ---------------------------------------------------------------------------

/// One BBRv1 and one CUBIC flow, same 20 ms RTT, starting together, 30 s.
/// In a shallow buffer CUBIC's losses keep it small while BBRv1 (which does not
/// react to loss) paces at the bandwidth it measured; as the buffer grows, CUBIC
/// keeps more packets queued while BBRv1's inflight stays capped at cwnd_gain ×
/// its estimated BDP, so CUBIC's share grows (and wins in deep buffers).
///
/// Measured CUBIC share of the pair's goodput at 0.5 / 2 / 8 BDP (seeds 1–4):
/// 0.08 / 0.36–0.40 / 0.85–0.88; the pair uses ≥ 0.98 of the link. Thresholds:
/// BBRv1 > 0.75 at 0.5 BDP, CUBIC's share grows by > 0.1 per step, CUBIC > 0.5 at
/// 8 BDP, pair > 0.9 of the link.
#[test]
fn bbr1_dominates_cubic_in_shallow_buffers_and_cubic_gains_with_buffer_depth() {
    let mut cubic_share = vec![];
    for buf in [0.5, 2.0, 8.0] {
        let mut cfg = dumbbell(RATE_MBPS, &[20], buf);
        cfg.flows.push(flow(0, "bbr1", 0));
        cfg.flows.push(flow(0, "cubic", 0));
        let out = run(&cfg);
        let g = goodputs(&cfg, &out);
        let total = g[0] + g[1];
        let share = g[1] / total;
        println!(
            "{buf} BDP: bbr1 {:.2} Mbit/s, cubic {:.2} Mbit/s, cubic share {share:.3}, link use {:.3}",
            g[0] / 1e6,
            g[1] / 1e6,
            total / ceiling()
        );
        assert!(total > 0.9 * ceiling(), "{buf} BDP: the pair leaves the link idle: {:.2} Mbit/s", total / 1e6);
        if buf == 0.5 {
            assert!(1.0 - share > 0.75, "bbr1 should take most of a 0.5-BDP link from cubic: share {:.3}", 1.0 - share);
        }
        cubic_share.push(share);
    }
    println!("cubic share at 0.5/2/8 BDP: {cubic_share:.3?}");
    for w in cubic_share.windows(2) {
        assert!(w[1] > w[0] + 0.1, "cubic's share must grow with the buffer: {cubic_share:.3?}");
    }
    assert!(cubic_share[2] > 0.5, "in an 8-BDP buffer cubic should win: {cubic_share:.3?}");
}

// ---------------------------------------------------------------------------
// (d) the state machines, as recorded in flow_ts
// ---------------------------------------------------------------------------

/// One flow on 100 Mbit/s, 20 ms, 1 BDP pfifo, flow_ts sampled every 5 ms (Drain
/// and PROBE_BW's REFILL last about one round, 20 ms). The ideal host (exact
/// timing): these tests need a path whose RTT samples all equal the minimum; with a
/// Linux host's timing noise a later, slightly lower sample restarts the min-RTT
/// window, as on a real machine.
fn state_machine_run(cca: &str, duration: Time) -> RunOutput {
    let mut cfg = dumbbell(RATE_MBPS, &[20], 1.0);
    set_host(&mut cfg, ccsim::host::HostConfig::ideal());
    cfg.duration_ns = duration;
    cfg.sample_interval_ns = ms(5);
    cfg.flows.push(flow(0, cca, 0));
    run(&cfg)
}

/// BBRv1: Startup → Drain → ProbeBW, then ProbeRTT when the min-RTT estimate is
/// 10 s old: cwnd 4 for ≥ 200 ms and a round, then back to ProbeBW (the pipe was
/// full), and again 10 s after that. On this fixed-delay path every later RTT
/// sample *equals* the minimum, so this also checks that equal samples do not
/// postpone ProbeRTT (mainline's strict `<` since v5.10).
///
/// Measured (first sample of each run, s): startup@0.005 → probe_bw@0.305 →
/// probe_rtt@10.025 → probe_bw@10.250 → probe_rtt@20.250 → probe_bw@20.475
/// (Drain lasted one ACK). (Before the `<` fix in `cc/bbr1/probe_rtt.rs` no probe_rtt
/// ever appeared here.)
#[test]
fn bbr1_state_machine_shows_in_flow_ts() {
    let out = state_machine_run("bbr1", secs(21));
    let all = state_runs(&out, 0);
    println!("bbr1: {}", describe(&all));
    // Drain may be over within one ACK: `bbr_check_drain` enters Drain and leaves it
    // on the same ACK when in-flight is already at most one BDP, as after Startup's
    // losses on this 1-BDP buffer (RACK marks them after its reordering window plus
    // TCP_TIMEOUT_MIN). So Drain need not show in 5 ms samples.
    let runs: Vec<_> = all.into_iter().filter(|r| r.0 != "drain").collect();
    let names: Vec<&str> = runs.iter().map(|r| r.0.as_str()).collect();
    assert!(runs[1].1 < secs(1), "ProbeBW should come within the first second: {}", describe(&runs));
    let expected = ["startup", "probe_bw", "probe_rtt", "probe_bw", "probe_rtt", "probe_bw"];
    assert_eq!(names, expected, "{}", describe(&runs));
    let (first, second) = (&runs[2], &runs[4]);
    // The min RTT is first seen in the first round (≈ 20–40 ms).
    assert!(first.1 >= secs(10) && first.1 < secs(10) + ms(300), "first ProbeRTT at {} ns", first.1);
    for r in [first, second] {
        assert!(r.3 <= 4, "cwnd {} in ProbeRTT (cwnd_min_target 4)", r.3);
        // Sampled every 5 ms: held ≥ 200 ms, and not much longer on a 20 ms path.
        let held = r.2 - r.1;
        assert!(held >= ms(190) && held < ms(300), "ProbeRTT held {held} ns");
    }
    // The next ProbeRTT is 10 s after the previous one ended (stamp reset on exit).
    let next = second.1 - runs[3].1;
    assert!(next >= secs(10) - ms(10) && next < secs(10) + ms(100), "ProbeRTT period {next} ns");
}

/// BBRv2/v3: Startup → Drain → the PROBE_BW cycle DOWN → CRUISE → REFILL → UP →
/// DOWN, each substate recorded by name. Only the cycle's transitions may appear
/// (DOWN may go straight to REFILL when it is time to probe; v3 leaves Drain and
/// PROBE_RTT through DOWN straight into CRUISE within one ACK).
///
/// BBRv3 refreshes its 5 s PROBE_RTT window only on a strictly lower RTT, so on
/// this fixed-delay path it enters PROBE_RTT at ≈ 5 s (measured 5.0 s). BBRv2
/// (v2alpha) refreshes it on an equal sample too, so on a fixed-delay path it
/// never does: measured no probe_rtt in 25 s. Not asserted for v2.
///
/// Measured (s): bbr2 startup@0.005 → drain@0.215 → probe_bw_down@0.245 →
/// probe_bw_cruise@0.255 → probe_bw_refill@1.525 → probe_bw_up@1.550 →
/// probe_bw_down@1.570 → probe_bw_cruise@1.585 → … (5 probes in 8 s); bbr3
/// startup@0.005 → drain@0.225 → probe_bw_cruise@0.255 → probe_bw_refill@1.535 →
/// probe_bw_up@1.555 → probe_bw_down@1.635 → … → probe_rtt@5.025 →
/// probe_bw_cruise@5.235 → …
#[test]
fn bbr2_and_bbr3_probe_bw_substates_show_in_flow_ts() {
    const SUBSTATES: [&str; 4] = ["probe_bw_down", "probe_bw_cruise", "probe_bw_refill", "probe_bw_up"];
    let allowed = |from: &str, to: &str| {
        matches!(
            (from, to),
            ("startup", "drain")
                | ("drain", "probe_bw_down" | "probe_bw_cruise")
                | ("probe_bw_down", "probe_bw_cruise" | "probe_bw_refill")
                | ("probe_bw_cruise", "probe_bw_refill")
                | ("probe_bw_refill", "probe_bw_up")
                | ("probe_bw_up", "probe_bw_down")
                | ("probe_bw_down" | "probe_bw_cruise" | "probe_bw_refill" | "probe_bw_up", "probe_rtt")
                | ("probe_rtt", "probe_bw_down" | "probe_bw_cruise")
        )
    };
    for cca in ["bbr2", "bbr3"] {
        let out = state_machine_run(cca, secs(8));
        let runs = state_runs(&out, 0);
        println!("{cca}: {}", describe(&runs));
        let names: Vec<&str> = runs.iter().map(|r| r.0.as_str()).collect();
        assert_eq!(&names[..2], ["startup", "drain"], "{cca}: {}", describe(&runs));
        for s in SUBSTATES {
            assert!(names.contains(&s), "{cca}: {s} never recorded: {}", describe(&runs));
        }
        for w in names.windows(2) {
            assert!(allowed(w[0], w[1]), "{cca}: unexpected transition {} → {}: {}", w[0], w[1], describe(&runs));
        }
        // At least two full probing cycles (REFILL → UP → DOWN) in 8 s.
        let probes = names.windows(3).filter(|w| *w == ["probe_bw_refill", "probe_bw_up", "probe_bw_down"]).count();
        assert!(probes >= 2, "{cca}: {probes} bandwidth probes: {}", describe(&runs));
        if cca == "bbr3" {
            let rtt = runs.iter().find(|r| r.0 == "probe_rtt").expect("bbr3 never entered probe_rtt");
            assert!(rtt.1 >= secs(5) && rtt.1 < secs(6), "bbr3 probe_rtt at {} ns", rtt.1);
        }
    }
}
