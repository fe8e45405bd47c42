//! The resolved experiment configuration the engine runs: every unit already
//! converted to integers (ns, bit/s, bytes), every flow listed individually. The
//! Python front end validates the user's TOML spec and produces this JSON; the
//! engine re-checks what it relies on and reports problems as errors, never panics.
//!
//! This is a contract: `docs/results-format.md` and `python/ccbench/spec.py` mirror it.

use serde::{Deserialize, Serialize};

use crate::units::{Bps, Bytes, Time};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentConfig {
    /// Experiment seed; every random stream is derived from it.
    pub seed: u64,
    /// Simulated duration (ns).
    pub duration_ns: Time,
    /// Start of the measurement window (ns); summaries count delivery after it.
    #[serde(default)]
    pub warmup_ns: Time,
    /// Interval of the per-flow and per-queue samples (ns); 0 disables them.
    pub sample_interval_ns: Time,
    pub topology: TopologyConfig,
    pub flows: Vec<FlowConfig>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum TopologyConfig {
    /// N senders, each with an access link to router A; bottleneck A→B; B to one
    /// receiver per sender. ACKs return over mirror-image reverse links.
    Dumbbell(DumbbellConfig),
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DumbbellConfig {
    pub bottleneck: LinkConfig,
    /// The reverse (ACK) direction of the bottleneck; same rate and delay as the
    /// forward one unless given.
    #[serde(default)]
    pub reverse_bottleneck: Option<LinkConfig>,
    pub senders: Vec<SenderConfig>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkConfig {
    pub rate_bps: Bps,
    /// One-way propagation delay (ns).
    #[serde(default)]
    pub delay_ns: Time,
    pub qdisc: QdiscConfig,
    /// Bernoulli loss probability applied to each packet entering the link.
    #[serde(default)]
    pub loss: f64,
    /// Rate changes: (time ns, new rate bit/s), in increasing time order.
    #[serde(default)]
    pub rate_schedule: Vec<(Time, Bps)>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum QdiscConfig {
    /// Drop-tail FIFO limited in packets (Linux `pfifo`).
    Pfifo { limit_packets: u64 },
    /// Drop-tail FIFO limited in bytes (Linux `bfifo`).
    Bfifo { limit_bytes: Bytes },
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SenderConfig {
    pub name: String,
    /// Base round-trip propagation delay of this sender's path (ns). The access
    /// links carry (rtt − 2 × bottleneck delay) / 2 each way.
    pub rtt_ns: Time,
    /// Rate of the sender's access link and of its receiver's link (bit/s).
    pub access_rate_bps: Bps,
    /// Queue limit of the access link (packets).
    pub access_queue_packets: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowConfig {
    /// Index of the sender (into `topology.senders`).
    pub sender: usize,
    /// Group label from the spec (e.g. "cubic-flows"), for tables.
    #[serde(default)]
    pub group: String,
    pub cca: String,
    /// CCA parameter overrides (JSON object) or null.
    #[serde(default)]
    pub cca_params: serde_json::Value,
    pub start_ns: Time,
    /// The flow starts at `start_ns` plus a uniform draw from [0, start_jitter_ns),
    /// taken from the flow's seeded stream (so seeds differ in start offsets).
    #[serde(default)]
    pub start_jitter_ns: Time,
    #[serde(default)]
    pub stop_ns: Option<Time>,
    /// Bytes to send; `None` = bulk (unlimited).
    #[serde(default)]
    pub size_bytes: Option<Bytes>,
    /// Payload bytes per segment.
    pub mss: u32,
    /// Receive window (bytes).
    pub rwnd_bytes: Bytes,
    /// Initial congestion window (packets).
    #[serde(default = "default_iw")]
    pub initial_cwnd: u32,
    /// Receiver delays ACKs (Linux-like: every 2nd segment, quick-ack at start).
    #[serde(default = "default_true")]
    pub delayed_ack: bool,
    /// Pace classic CCAs at Linux's default rate (model-based CCAs always pace).
    #[serde(default)]
    pub pacing: bool,
    /// Negotiate ECN (ECT(0) on data).
    #[serde(default)]
    pub ecn: bool,
    /// Minimum RTO (ns), Linux 200 ms.
    #[serde(default = "default_min_rto")]
    pub min_rto_ns: Time,
}

fn default_iw() -> u32 {
    10
}
fn default_true() -> bool {
    true
}
fn default_min_rto() -> Time {
    crate::units::ms(200)
}

impl ExperimentConfig {
    /// Parse and check the configuration; the message names the offending field.
    pub fn from_json(text: &str) -> Result<Self, String> {
        let cfg: Self = serde_json::from_str(text).map_err(|e| format!("invalid engine config: {e}"))?;
        cfg.validate()?;
        Ok(cfg)
    }

    pub fn validate(&self) -> Result<(), String> {
        if self.duration_ns == 0 {
            return Err("duration_ns: must be > 0".into());
        }
        let TopologyConfig::Dumbbell(d) = &self.topology;
        let mut links = vec![("bottleneck", &d.bottleneck)];
        if let Some(r) = &d.reverse_bottleneck {
            links.push(("reverse_bottleneck", r));
        }
        for (name, l) in links {
            if l.rate_bps == 0 {
                return Err(format!("{name}.rate_bps: must be > 0"));
            }
            if !(0.0..1.0).contains(&l.loss) {
                return Err(format!("{name}.loss: {} is not in [0, 1)", l.loss));
            }
            let mut prev = 0;
            for (i, &(t, r)) in l.rate_schedule.iter().enumerate() {
                if t < prev || r == 0 {
                    return Err(format!("{name}.rate_schedule[{i}]: times must increase and rates be > 0"));
                }
                prev = t;
            }
        }
        if d.senders.is_empty() {
            return Err("senders: at least one sender is required".into());
        }
        for (i, s) in d.senders.iter().enumerate() {
            if s.access_rate_bps == 0 {
                return Err(format!("senders[{i}].access_rate_bps: must be > 0"));
            }
            if s.rtt_ns < 2 * d.bottleneck.delay_ns {
                return Err(format!(
                    "senders[{i}].rtt_ns: {} is below twice the bottleneck delay ({})",
                    s.rtt_ns, d.bottleneck.delay_ns
                ));
            }
        }
        if self.flows.is_empty() {
            return Err("flows: at least one flow is required".into());
        }
        for (i, f) in self.flows.iter().enumerate() {
            if f.sender >= d.senders.len() {
                return Err(format!("flows[{i}].sender: {} is not a sender index", f.sender));
            }
            if f.mss < 64 || f.mss > 65000 {
                return Err(format!("flows[{i}].mss: {} is not in [64, 65000]", f.mss));
            }
            if f.initial_cwnd == 0 {
                return Err(format!("flows[{i}].initial_cwnd: must be >= 1"));
            }
            if let Some(stop) = f.stop_ns {
                if stop <= f.start_ns {
                    return Err(format!("flows[{i}].stop_ns: must be after start_ns"));
                }
            }
            if f.size_bytes == Some(0) {
                return Err(format!("flows[{i}].size_bytes: must be > 0"));
            }
            crate::cc::build(&f.cca, &f.cca_params).map_err(|e| format!("flows[{i}].cca: {e}"))?;
        }
        Ok(())
    }
}
