//! The resolved experiment configuration the engine runs: every unit already
//! converted to integers (ns, bit/s, bytes), every flow listed individually. The
//! Python front end validates the user's TOML spec and produces this JSON; the
//! engine re-checks what it relies on and reports problems as errors, never panics.
//!
//! This is a contract: `docs/results-format.md` and `python/ccbench/spec/` mirror it.

use serde::{Deserialize, Serialize};

pub use crate::net::loss::{GilbertElliottConfig, LossConfig};
pub use crate::qdisc::codel::CodelConfig;
pub use crate::qdisc::fq_codel::FqCodelConfig;
pub use crate::qdisc::fq_pie::FqPieConfig;
pub use crate::qdisc::htb::{HtbClassConfig, HtbConfig};
pub use crate::qdisc::ncf::{NcfConfig, ReportedRate};
pub use crate::qdisc::pie::PieConfig;
pub use crate::qdisc::prio::{Classifier, PrioConfig};
pub use crate::qdisc::red::RedConfig;
pub use crate::qdisc::tbf::TbfConfig;
pub use crate::traffic::{App, Arrival, Burst, CcaShare, EmpiricalDist, Interpolation, SenderShare};
use crate::units::{Bps, Bytes, Time};

/// Most flows one experiment may have (the front end allows the same).
pub const MAX_FLOWS: u64 = 1_000_000;

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExperimentConfig {
    /// Experiment seed; every random stream is derived from it.
    pub seed: u64,
    /// Seed of the workload (arrival times, flow sizes, CCA and sender draws); the
    /// experiment seed when absent. The same workload seed gives the same flows
    /// whatever the CCAs and the engine seed.
    #[serde(default)]
    pub workload_seed: Option<u64>,
    /// Simulated duration (ns).
    pub duration_ns: Time,
    /// Start of the measurement window (ns); summaries count delivery after it.
    #[serde(default)]
    pub warmup_ns: Time,
    /// Interval of the per-flow and per-queue samples (ns); 0 disables them.
    pub sample_interval_ns: Time,
    /// Every this many packets dequeued from a recorded queue, one's sojourn time is
    /// kept in the `sojourn` table (a systematic sample); 0 keeps none.
    #[serde(default = "default_sojourn_every")]
    pub sojourn_sample_every: u64,
    /// Record one `events` row per dropped or CE-marked packet. Off, drops and marks
    /// are only counted (per flow in `flows`, per link in `links` and `queue_ts`), so
    /// the recorded tables do not grow with simulated time.
    #[serde(default = "default_true")]
    pub packet_events: bool,
    pub topology: TopologyConfig,
    pub flows: Vec<FlowConfig>,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
// Built once per run; boxing the dumbbell would only make every use of it noisier.
#[allow(clippy::large_enum_variant)]
pub enum TopologyConfig {
    /// N senders, each with an access link to router A; bottleneck A→B; B to one
    /// receiver per sender. ACKs return over mirror-image reverse links.
    Dumbbell(DumbbellConfig),
    /// k bottlenecks in series (router i → router i + 1 is hop i); each sender's data
    /// crosses a contiguous run of hops (its `route` of routers; default all of them).
    ParkingLot(ParkingLotConfig),
    /// Any graph of routers and duplex links; each sender's `route` lists the routers
    /// its data crosses (the front end resolves shortest paths).
    Graph(GraphConfig),
}

impl TopologyConfig {
    /// The sending hosts, in index order (`FlowConfig::sender` indexes this).
    pub fn senders(&self) -> &[SenderConfig] {
        match self {
            TopologyConfig::Dumbbell(d) => &d.senders,
            TopologyConfig::ParkingLot(p) => &p.senders,
            TopologyConfig::Graph(g) => &g.senders,
        }
    }

    /// The network links (not the access links) with the field path naming each in errors.
    pub fn links(&self) -> Vec<(String, &LinkConfig)> {
        let mut out = Vec::new();
        match self {
            TopologyConfig::Dumbbell(d) => {
                out.push(("bottleneck".to_string(), &d.bottleneck));
                if let Some(r) = &d.reverse_bottleneck {
                    out.push(("reverse_bottleneck".to_string(), r));
                }
            }
            TopologyConfig::ParkingLot(p) => {
                for (i, h) in p.hops.iter().enumerate() {
                    push_duplex(&mut out, format!("hops[{i}]"), h);
                }
            }
            TopologyConfig::Graph(g) => {
                for (i, l) in g.links.iter().enumerate() {
                    push_duplex(&mut out, format!("links[{i}]"), &l.link);
                }
            }
        }
        out
    }
}

fn push_duplex<'a>(out: &mut Vec<(String, &'a LinkConfig)>, path: String, l: &'a DuplexLinkConfig) {
    out.push((format!("{path}.forward"), &l.forward));
    if let Some(r) = &l.reverse {
        out.push((format!("{path}.reverse"), r));
    }
}

/// A link between two routers: its forward direction and, optionally, its reverse
/// one (default: same rate and delay, a 1000-packet pfifo, no loss — as the dumbbell's).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DuplexLinkConfig {
    /// Name of the forward direction in the tables; the reverse one is `{name}_rev`.
    pub name: String,
    pub forward: LinkConfig,
    #[serde(default)]
    pub reverse: Option<LinkConfig>,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ParkingLotConfig {
    /// Hop i carries data from router `r{i}` to router `r{i+1}`.
    pub hops: Vec<DuplexLinkConfig>,
    /// Each sender's `route` names the routers (`r0` … `rk`) its data crosses, a
    /// contiguous increasing run; empty = all of them (the long path).
    pub senders: Vec<SenderConfig>,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GraphConfig {
    /// Router names.
    pub nodes: Vec<String>,
    pub links: Vec<GraphLinkConfig>,
    /// Each sender's `route` (required) names the routers its data crosses, in order;
    /// its ACKs take the same links in the opposite direction.
    pub senders: Vec<SenderConfig>,
}

/// A duplex link of a graph: forward direction `from` → `to`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GraphLinkConfig {
    pub from: String,
    pub to: String,
    pub link: DuplexLinkConfig,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DumbbellConfig {
    pub bottleneck: LinkConfig,
    /// The reverse (ACK) direction of the bottleneck; same rate and delay as the
    /// forward one unless given.
    #[serde(default)]
    pub reverse_bottleneck: Option<LinkConfig>,
    pub senders: Vec<SenderConfig>,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkConfig {
    pub rate_bps: Bps,
    /// One-way propagation delay (ns).
    #[serde(default)]
    pub delay_ns: Time,
    /// Per-packet delay variation (ns): each packet's propagation delay is drawn
    /// uniformly from [delay − jitter, delay + jitter), as netem's `delay D J` with no
    /// distribution table; packets leave in arrival order, so they may be reordered
    /// (netem's time-sorted tfifo). At most `delay_ns`; 0 = a constant delay.
    #[serde(default)]
    pub jitter_ns: Time,
    pub qdisc: QdiscConfig,
    /// Bernoulli loss probability applied to each packet entering the link.
    #[serde(default)]
    pub loss: f64,
    /// Bursty loss instead of `loss`: the Gilbert–Elliott chain `{p, r, loss_good, loss_bad}`.
    #[serde(default)]
    pub gilbert_elliott: Option<GilbertElliottConfig>,
    /// Rate changes: (time ns, new rate bit/s), in increasing time order.
    #[serde(default)]
    pub rate_schedule: Vec<(Time, Bps)>,
    /// Queue accounting like tc's shapers: the packet being serialized still counts
    /// toward the qdisc's limit (`tbf` leaves its head packet in the child `pfifo`
    /// until tokens allow it out), so a limit of N holds N packets in the system, not
    /// N waiting + 1 in service. Default true.
    #[serde(default = "default_true")]
    pub limit_includes_head: bool,
}

impl LinkConfig {
    /// The loss process of the link: Gilbert–Elliott if configured, else Bernoulli.
    pub fn loss_config(&self) -> LossConfig {
        match &self.gilbert_elliott {
            Some(g) => LossConfig::GilbertElliott(g.clone()),
            None => LossConfig::Bernoulli(self.loss),
        }
    }

    /// Set the link's loss process (the inverse of [`Self::loss_config`]).
    pub fn set_loss(&mut self, loss: &LossConfig) {
        (self.loss, self.gilbert_elliott) = match loss {
            LossConfig::Bernoulli(p) => (*p, None),
            LossConfig::GilbertElliott(g) => (0.0, Some(g.clone())),
        };
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum QdiscConfig {
    /// Drop-tail FIFO limited in packets (Linux `pfifo`).
    Pfifo { limit_packets: u64 },
    /// Drop-tail FIFO limited in bytes (Linux `bfifo`).
    Bfifo { limit_bytes: Bytes },
    /// Random Early Detection (`sch_red`), optionally adaptive (ARED).
    Red(RedConfig),
    /// Controlled Delay (RFC 8289, `sch_codel`).
    Codel(CodelConfig),
    /// Flow-queue CoDel (RFC 8290, `sch_fq_codel`).
    FqCodel(FqCodelConfig),
    /// PIE (RFC 8033, `sch_pie`).
    Pie(PieConfig),
    /// Flow-queue PIE (`sch_fq_pie`).
    FqPie(FqPieConfig),
    /// Strict priority over child qdiscs with a classifier (`sch_prio`).
    Prio(PrioConfig),
    /// Token bucket shaper over a child qdisc (`sch_tbf`).
    Tbf(TbfConfig),
    /// Rate-limited classes of flows, borrowing up to a ceiling (`sch_htb`).
    Htb(HtbConfig),
    /// NCF's switch: mice/elephant queues, elephant count, telemetry to senders.
    Ncf(NcfConfig),
}

impl QdiscConfig {
    pub fn validate(&self) -> Result<(), String> {
        match self {
            QdiscConfig::Pfifo { limit_packets: 0 } | QdiscConfig::Bfifo { limit_bytes: 0 } => Err("the queue limit must be > 0".into()),
            QdiscConfig::Pfifo { .. } | QdiscConfig::Bfifo { .. } => Ok(()),
            QdiscConfig::Red(c) => c.validate(),
            QdiscConfig::Codel(c) => c.validate(),
            QdiscConfig::FqCodel(c) => c.validate(),
            QdiscConfig::Pie(c) => c.validate(),
            QdiscConfig::FqPie(c) => c.validate(),
            QdiscConfig::Prio(c) => c.validate(),
            QdiscConfig::Tbf(c) => c.validate(),
            QdiscConfig::Htb(c) => c.validate(),
            QdiscConfig::Ncf(c) => c.validate(),
        }
    }

    /// Whether this discipline can set CE (so ECN-capable flows get marks).
    pub fn can_mark(&self) -> bool {
        match self {
            QdiscConfig::Pfifo { .. } | QdiscConfig::Bfifo { .. } => false,
            QdiscConfig::Red(c) => c.ecn,
            QdiscConfig::Codel(c) => c.ecn || c.ce_threshold_ns.is_some(),
            QdiscConfig::FqCodel(c) => c.ecn || c.ce_threshold_ns.is_some(),
            QdiscConfig::Pie(c) => c.ecn,
            QdiscConfig::FqPie(c) => c.ecn,
            QdiscConfig::Prio(c) => c.bands.iter().any(|b| b.can_mark()),
            QdiscConfig::Tbf(c) => c.child.as_ref().is_some_and(|b| b.can_mark()),
            QdiscConfig::Htb(c) => c.classes.iter().any(|k| k.child.as_ref().is_some_and(QdiscConfig::can_mark)),
            QdiscConfig::Ncf(c) => c.mice.can_mark() || c.elephants.can_mark(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// Where the path's propagation delay (rtt − 2 × bottleneck delay) sits.
    #[serde(default)]
    pub delay_path: DelayPath,
    /// Per-packet variation (ns) of the access links' delay, in each direction that
    /// carries part of the path's delay (see [`LinkConfig::jitter_ns`]); at most that
    /// direction's delay.
    #[serde(default)]
    pub jitter_ns: Time,
    /// The sending host and its receiver's host (Linux by default).
    #[serde(default)]
    pub host: crate::host::HostConfig,
    /// The routers this sender's data crosses, in order (parking lot and graph); the
    /// sender's access link enters at the first, its receivers hang off the last.
    /// Empty in a dumbbell (always A → B) and, in a parking lot, for the full path.
    #[serde(default)]
    pub route: Vec<String>,
    /// Random loss on the sender's access link, data direction (sender → network).
    #[serde(default)]
    pub access_loss: LossConfig,
    /// Random loss on its access link, ACK direction (network → sender).
    #[serde(default)]
    pub access_reverse_loss: LossConfig,
}

/// Placement of a sender's access-path propagation delay.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DelayPath {
    /// Half on the data path, half on the ACK path.
    #[default]
    Split,
    /// All of it on the data path (sender → receiver).
    Data,
    /// All of it on the ACK path (receiver → sender), as a delay line on the
    /// reverse path in the namespace validation runs.
    Ack,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowConfig {
    /// Number of flows this entry stands for (default 1). With a fixed arrival the
    /// flows get consecutive ids in list order, and each draws from its own seeded
    /// streams, exactly as if listed one by one; with another arrival process this is
    /// the most flows that arrive (see [`crate::traffic`]), numbered after every fixed
    /// flow in arrival order.
    #[serde(default = "default_count")]
    pub count: u64,
    /// How the flows arrive (default: all at `start_ns`, plus jitter).
    #[serde(default)]
    pub arrival: Arrival,
    /// Each flow's size drawn from this distribution (bytes) instead of `size_bytes`.
    #[serde(default)]
    pub size_dist: Option<EmpiricalDist>,
    /// Each flow draws its CCA from this mix (`cca` is then only the group's label CCA).
    #[serde(default)]
    pub cca_mix: Vec<CcaShare>,
    /// Each flow draws its sender (so its base RTT) from this mix instead of `sender`.
    #[serde(default)]
    pub sender_mix: Vec<SenderShare>,
    /// What the application does (bulk by default; rate-limited, on/off).
    #[serde(default)]
    pub app: App,
    /// Each flow opens its connection first with a three-way handshake of real
    /// packets and Linux's SYN / SYN-ACK retry timers (`tcp::handshake`): data starts
    /// when the SYN-ACK arrives, the FCT counts from the first SYN. The front end turns
    /// it on for finite flows by default.
    #[serde(default)]
    pub handshake: bool,
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

fn default_sojourn_every() -> u64 {
    crate::trace::network::SOJOURN_SAMPLE_EVERY
}
fn default_count() -> u64 {
    1
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

/// The JSON Schema (draft 2020-12) of [`ExperimentConfig`], generated from these types
/// and their serde attributes: every field, its type, whether it is required and its
/// default. The front end reads it (`ccbench._core.config_schema()`, `ccbench schema
/// --engine`) instead of copying defaults by hand; `tests/test_config_schema.py`
/// checks what `Experiment.resolve()` writes against it.
pub fn json_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(ExperimentConfig)).expect("a JSON schema serializes")
}

impl ExperimentConfig {
    /// The host configuration of sender `i` (and of its receivers).
    pub fn sender_host(&self, i: usize) -> &crate::host::HostConfig {
        &self.topology.senders()[i].host
    }

    /// The seed of the workload draws (see [`ExperimentConfig::workload_seed`]).
    pub fn workload_seed(&self) -> u64 {
        self.workload_seed.unwrap_or(self.seed)
    }

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
        for (name, l) in self.topology.links() {
            if l.rate_bps == 0 {
                return Err(format!("{name}.rate_bps: must be > 0"));
            }
            l.loss_config().validate().map_err(|e| format!("{name}.loss: {e}"))?;
            if l.jitter_ns > l.delay_ns {
                return Err(format!(
                    "{name}.jitter_ns: {} exceeds delay_ns ({}): a delay varies by at most itself",
                    l.jitter_ns, l.delay_ns
                ));
            }
            l.qdisc.validate().map_err(|e| format!("{name}.qdisc: {e}"))?;
            let mut prev = 0;
            for (i, &(t, r)) in l.rate_schedule.iter().enumerate() {
                if t < prev || r == 0 {
                    return Err(format!("{name}.rate_schedule[{i}]: times must increase and rates be > 0"));
                }
                prev = t;
            }
        }
        let senders = self.topology.senders();
        if senders.is_empty() {
            return Err("senders: at least one sender is required".into());
        }
        for (i, s) in senders.iter().enumerate() {
            if s.access_rate_bps == 0 {
                return Err(format!("senders[{i}].access_rate_bps: must be > 0"));
            }
            s.host.validate(&format!("senders[{i}].host"))?;
            s.access_loss.validate().map_err(|e| format!("senders[{i}].access_loss: {e}"))?;
            s.access_reverse_loss.validate().map_err(|e| format!("senders[{i}].access_reverse_loss: {e}"))?;
        }
        // Routes, and RTTs against their propagation delay, are checked by the builders.
        crate::topology::plan(&self.topology)?;
        if self.flows.is_empty() {
            return Err("flows: at least one flow is required".into());
        }
        // Fixed groups are listed up front; a lazily arriving group stops at its count.
        let total = self.flows.iter().filter(|f| !f.arrival.is_lazy()).fold(0u64, |n, f| n.saturating_add(f.count));
        if total > MAX_FLOWS {
            return Err(format!("flows: {total} flows in total is too many (at most {MAX_FLOWS})"));
        }
        if let Some(i) = self.flows.iter().position(|f| f.count > MAX_FLOWS) {
            return Err(format!("flows[{i}].count: at most {MAX_FLOWS}"));
        }
        for (i, f) in self.flows.iter().enumerate() {
            if f.count == 0 {
                return Err(format!("flows[{i}].count: must be >= 1"));
            }
            if f.sender >= senders.len() {
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
            if !f.app.is_udp() && !crate::cc::registry::is_external(&f.cca) {
                crate::cc::build(&f.cca, &f.cca_params).map_err(|e| format!("flows[{i}].cca: {e}"))?;
            }
            crate::traffic::validate(i, f)?;
            for (k, s) in f.sender_mix.iter().enumerate() {
                if s.sender >= senders.len() {
                    return Err(format!("flows[{i}].sender_mix[{k}].sender: {} is not a sender index", s.sender));
                }
            }
        }
        Ok(())
    }
}
