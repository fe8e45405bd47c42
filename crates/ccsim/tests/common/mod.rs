//! Builders for small dumbbell configurations used by the scenario tests.
#![allow(dead_code)]

use ccsim::config::*;
use ccsim::units::{ms, secs, Time};
use ccsim::RunOutput;

/// A dumbbell with one sender per RTT in `rtts_ms`, `rate_mbps` bottleneck and a
/// pfifo of `buffer_bdp` × BDP (of the first sender's RTT), 1448-byte MSS.
pub fn dumbbell(rate_mbps: u64, rtts_ms: &[u64], buffer_bdp: f64) -> ExperimentConfig {
    let rate = rate_mbps * 1_000_000;
    let bdp_bytes = rate as f64 / 8.0 * rtts_ms[0] as f64 / 1000.0;
    let limit = ((bdp_bytes * buffer_bdp) / 1500.0).round().max(1.0) as u64;
    ExperimentConfig {
        seed: 1,
        workload_seed: None,
        duration_ns: secs(30),
        warmup_ns: secs(5),
        sample_interval_ns: ms(100),
        sojourn_sample_every: 10,
        packet_events: true,
        topology: TopologyConfig::Dumbbell(DumbbellConfig {
            bottleneck: LinkConfig {
                rate_bps: rate,
                delay_ns: 0,
                jitter_ns: 0,
                qdisc: QdiscConfig::Pfifo { limit_packets: limit },
                loss: 0.0,
                gilbert_elliott: None,
                rate_schedule: vec![],
                limit_includes_head: true,
            },
            reverse_bottleneck: None,
            senders: rtts_ms
                .iter()
                .enumerate()
                .map(|(i, &r)| SenderConfig {
                    name: format!("s{i}"),
                    rtt_ns: ms(r),
                    access_rate_bps: rate * 10,
                    access_queue_packets: 10_000,
                    delay_path: DelayPath::Split,
                    jitter_ns: 0,
                    host: ccsim::host::HostConfig::linux(),
                    route: vec![],
                    access_loss: LossConfig::default(),
                    access_reverse_loss: LossConfig::default(),
                })
                .collect(),
        }),
        flows: vec![],
    }
}

/// Give every sender (and its receivers) the host `h`.
pub fn set_host(cfg: &mut ExperimentConfig, h: ccsim::host::HostConfig) {
    let TopologyConfig::Dumbbell(d) = &mut cfg.topology else { unreachable!("a dumbbell") };
    for s in &mut d.senders {
        s.host = h.clone();
    }
}

pub fn flow(sender: usize, cca: &str, start: Time) -> FlowConfig {
    FlowConfig {
        count: 1,
        arrival: Arrival::Fixed,
        size_dist: None,
        cca_mix: vec![],
        sender_mix: vec![],
        app: App::Bulk,
        handshake: false,
        sender,
        group: cca.to_string(),
        cca: cca.to_string(),
        cca_params: serde_json::Value::Null,
        start_ns: start,
        start_jitter_ns: ms(1),
        stop_ns: None,
        size_bytes: None,
        mss: 1448,
        rwnd_bytes: 64 << 20,
        initial_cwnd: 10,
        delayed_ack: true,
        pacing: false,
        ecn: false,
        min_rto_ns: ms(200),
    }
}

/// Goodput of each flow (bit/s) over [max(warmup, start), end].
pub fn goodputs(cfg: &ExperimentConfig, out: &RunOutput) -> Vec<f64> {
    let f = &out.flows;
    let d = f.u64s("delivered_bytes");
    let w = f.u64s("delivered_bytes_at_warmup");
    let start = f.u64s("start_ns");
    let end = f.u64s("end_ns");
    (0..d.len())
        .map(|i| {
            let t0 = start[i].max(cfg.warmup_ns);
            let dur = end[i].saturating_sub(t0) as f64 / 1e9;
            (d[i] - w[i]) as f64 * 8.0 / dur
        })
        .collect()
}

pub fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    s * s / (x.len() as f64 * s2)
}

/// packets sent = delivered + dropped + still in the network.
pub fn assert_conservation(out: &RunOutput) {
    let s = &out.stats;
    assert_eq!(
        s.data_pkts_sent,
        s.data_pkts_delivered + s.data_pkts_dropped + s.data_pkts_in_network,
        "packet conservation violated: {s:?}"
    );
    assert_eq!(
        s.handshake_pkts_sent,
        s.handshake_pkts_delivered + s.handshake_pkts_dropped + s.handshake_pkts_in_network,
        "handshake packet conservation violated: {s:?}"
    );
}
