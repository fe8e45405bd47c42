//! Traffic: how the flows of a flow group arrive and what each one is (size, CCA,
//! sending host), drawn from the **workload seed** — never from the simulation — so
//! the same workload seed gives the same flows whatever CCAs they run.
//!
//! A group with a fixed arrival lists `count` flows starting at `start_ns` (plus the
//! engine-seeded jitter, as before); the other arrival processes ([`Arrival`]) hand
//! out start times lazily, one pending arrival per group, so a workload of 10⁶ flows
//! costs nothing until its flows arrive. Each flow draws its size, CCA and sender
//! from streams of its own kind (`FlowSize`, `CcaMix`, `RttMix`), so changing the CCA
//! mix leaves the sizes and RTTs unchanged.

pub mod dist;

use rand::Rng;
use serde::{Deserialize, Serialize};

pub use dist::{EmpiricalDist, Interpolation};

use crate::config::FlowConfig;
use crate::net::{HEADER_BYTES, SYN_WIRE_BYTES};
use crate::sim::rng::{Component, SimRng};
use crate::sim::stream;
use crate::units::{Bps, Time};

/// How the flows of a group arrive.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Arrival {
    /// All `count` flows at `start_ns`, each plus its engine-seeded `start_jitter_ns`.
    #[default]
    Fixed,
    /// Flow k starts at `start_ns + k · every_ns` ("one flow every 25 s").
    Interval { every_ns: Time },
    /// Each flow starts at a uniform time in `[start_ns, start_ns + window_ns)`
    /// ("each flow starts at a uniform time in [0, 2 min]"); drawn as ascending order
    /// statistics, so they arrive in time order without being stored.
    Uniform { window_ns: Time },
    /// Poisson arrivals at `rate_per_s` from `start_ns` (exponential gaps).
    Poisson { rate_per_s: f64 },
    /// Poisson arrivals at the rate that offers `load_bps` on the forward wire on
    /// average: rate = load / (8 × mean wire bytes per flow), counting every packet a
    /// flow sends with its headers ([`mean_wire_bytes`]).
    PoissonLoad { load_bps: f64 },
    /// Inter-arrival gaps (ns) drawn from an empirical distribution.
    Gaps { gaps_ns: EmpiricalDist },
}

impl Arrival {
    /// Fixed groups are listed at build time; the others arrive lazily.
    pub fn is_lazy(&self) -> bool {
        !matches!(self, Arrival::Fixed)
    }
}

/// One entry of a CCA mix: this CCA (with its parameters) for `fraction` of the flows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CcaShare {
    pub cca: String,
    #[serde(default)]
    pub cca_params: serde_json::Value,
    pub fraction: f64,
}

/// One entry of a sender mix: flows go from sender `sender` (an index into
/// `topology.senders`) with probability `fraction`. A per-flow RTT distribution
/// becomes one sender (access links) per distinct RTT and a mix over them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SenderShare {
    pub sender: usize,
    pub fraction: f64,
}

/// What the application behind a flow does.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum App {
    /// Write everything at once: a bulk transfer, or `size_bytes` then close.
    #[default]
    Bulk,
    /// Write at `rate_bps` (like `iperf3 -b`): the CCA sees an application-limited
    /// sender whenever the window could send faster. With `on_ns`/`off_ns` the
    /// application writes only during on periods (an on/off source).
    RateLimited {
        rate_bps: Bps,
        #[serde(default)]
        on_ns: Option<Time>,
        #[serde(default)]
        off_ns: Option<Time>,
    },
    /// An inelastic UDP source: datagrams of `packet_bytes` (on the wire) at
    /// `rate_bps` (constant bit rate), on/off with `on_ns`/`off_ns`, and at each
    /// burst's rate during its interval (DoS bursts; `rate_bps` may then be 0).
    Udp {
        rate_bps: Bps,
        #[serde(default)]
        on_ns: Option<Time>,
        #[serde(default)]
        off_ns: Option<Time>,
        #[serde(default)]
        bursts: Vec<Burst>,
        #[serde(default = "default_datagram_bytes")]
        packet_bytes: u32,
    },
}

impl App {
    pub fn is_udp(&self) -> bool {
        matches!(self, App::Udp { .. })
    }
}

/// A burst of an inelastic source: `rate_bps` over `[start_ns, end_ns)` (absolute).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Burst {
    pub start_ns: Time,
    pub end_ns: Time,
    pub rate_bps: Bps,
}

/// Default UDP datagram size on the wire (a full Ethernet MTU).
fn default_datagram_bytes() -> u32 {
    1500
}

/// The sending rate of a UDP source at `now` and when it next changes: a burst
/// covering `now` sets it; otherwise `rate_bps`, during on periods only (counted
/// from `start`) if the source is on/off.
pub fn udp_rate_at(app: &App, start: Time, now: Time) -> (Bps, Option<Time>) {
    let App::Udp { rate_bps, on_ns, off_ns, bursts, .. } = app else { return (0, None) };
    if let Some(b) = bursts.iter().find(|b| b.start_ns <= now && now < b.end_ns) {
        return (b.rate_bps, Some(b.end_ns));
    }
    let next_burst = bursts.iter().map(|b| b.start_ns).filter(|&t| t > now).min();
    let (rate, change) = match (on_ns, off_ns) {
        (Some(on), Some(off)) => {
            let period = on + off;
            let into = (now - start) % period;
            let period_start = now - into;
            if into < *on {
                (*rate_bps, Some(period_start + on))
            } else {
                (0, Some(period_start + period))
            }
        }
        _ => (*rate_bps, None),
    };
    let change = match (change, next_burst) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    (rate, change)
}

/// What a flow of a group turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowDraw {
    pub size_bytes: Option<u64>,
    /// 0: the group's `cca`; i + 1: `cca_mix[i]`.
    pub cca: u16,
    pub sender: usize,
}

/// The lazily drawn flows of one group.
#[derive(Debug)]
pub struct GroupSource {
    arrival: ArrivalState,
    sizes: SimRng,
    ccas: SimRng,
    senders: SimRng,
}

#[derive(Debug)]
enum ArrivalState {
    Fixed,
    Interval { start: Time, every: Time, next: u64, count: u64 },
    Uniform { start: Time, window: Time, x: f64, next: u64, count: u64, rng: SimRng },
    /// `t` accumulates in f64 ns so rounding never drifts the rate.
    Gaps { t: f64, next: u64, count: u64, gap: Gap, rng: SimRng },
}

#[derive(Debug)]
enum Gap {
    Exponential { mean_ns: f64 },
    Empirical(EmpiricalDist),
}

impl GroupSource {
    /// The source of group `g` (index into `flows`), seeded from the workload seed.
    pub fn new(workload_seed: u64, g: usize, f: &FlowConfig) -> Self {
        let s = |kind| stream(workload_seed, kind, g as u64);
        let count = f.count;
        let gaps = |gap| ArrivalState::Gaps { t: f.start_ns as f64, next: 0, count, gap, rng: s(Component::Arrivals) };
        let arrival = match &f.arrival {
            Arrival::Fixed => ArrivalState::Fixed,
            &Arrival::Interval { every_ns } => ArrivalState::Interval { start: f.start_ns, every: every_ns, next: 0, count },
            &Arrival::Uniform { window_ns } => {
                ArrivalState::Uniform { start: f.start_ns, window: window_ns, x: 0.0, next: 0, count, rng: s(Component::Arrivals) }
            }
            &Arrival::Poisson { rate_per_s } => gaps(Gap::Exponential { mean_ns: 1e9 / rate_per_s }),
            &Arrival::PoissonLoad { load_bps } => {
                let rate = load_bps / (8.0 * mean_wire_bytes(f));
                gaps(Gap::Exponential { mean_ns: 1e9 / rate })
            }
            Arrival::Gaps { gaps_ns } => gaps(Gap::Empirical(gaps_ns.clone())),
        };
        Self { arrival, sizes: s(Component::FlowSize), ccas: s(Component::CcaMix), senders: s(Component::RttMix) }
    }

    /// The start time of the group's next flow, in non-decreasing order; `None` when
    /// all `count` have arrived (or for a fixed group, whose starts are listed).
    pub fn next_start(&mut self) -> Option<Time> {
        match &mut self.arrival {
            ArrivalState::Fixed => None,
            ArrivalState::Interval { start, every, next, count } => {
                (*next < *count).then(|| {
                    *next += 1;
                    start.saturating_add(every.saturating_mul(*next - 1))
                })
            }
            ArrivalState::Uniform { start, window, x, next, count, rng } => {
                if *next >= *count {
                    return None;
                }
                // The minimum of the n − k uniforms left in [x, 1) is x + (1 − x)(1 − U^{1/(n−k)}).
                let left = (*count - *next) as f64;
                let u: f64 = rng.gen();
                *x += (1.0 - *x) * (1.0 - u.powf(1.0 / left));
                *next += 1;
                Some(*start + (*x * *window as f64) as Time)
            }
            ArrivalState::Gaps { t, next, count, gap, rng } => {
                if *next >= *count {
                    return None;
                }
                *t += match gap {
                    Gap::Exponential { mean_ns } => -(1.0 - rng.gen::<f64>()).ln() * *mean_ns,
                    Gap::Empirical(d) => d.sample(rng),
                };
                *next += 1;
                Some(t.min(u64::MAX as f64) as Time)
            }
        }
    }

    /// Draw what the next flow of the group is.
    pub fn draw(&mut self, f: &FlowConfig) -> FlowDraw {
        let size_bytes = match &f.size_dist {
            Some(d) => Some((d.sample(&mut self.sizes).round() as u64).max(1)),
            None => f.size_bytes,
        };
        let cca = pick(&mut self.ccas, f.cca_mix.iter().map(|c| c.fraction)).map_or(0, |i| i as u16 + 1);
        let sender = pick(&mut self.senders, f.sender_mix.iter().map(|s| s.fraction)).map_or(f.sender, |i| f.sender_mix[i].sender);
        FlowDraw { size_bytes, cca, sender }
    }
}

/// Index drawn with probability proportional to `weights` (None when empty).
fn pick(rng: &mut SimRng, weights: impl Iterator<Item = f64> + Clone) -> Option<usize> {
    let total: f64 = weights.clone().sum();
    if total <= 0.0 {
        return None;
    }
    let u = rng.gen::<f64>() * total;
    let mut acc = 0.0;
    let mut last = 0;
    for (i, w) in weights.enumerate() {
        acc += w;
        last = i;
        if u < acc {
            return Some(i);
        }
    }
    Some(last)
}

/// Mean flow size of a group (bytes): its size distribution's mean or its fixed size.
pub fn mean_size_bytes(f: &FlowConfig) -> f64 {
    match (&f.size_dist, f.size_bytes) {
        (Some(d), _) => d.mean(),
        (None, Some(s)) => s as f64,
        (None, None) => f64::NAN,
    }
}

/// Forward packets a finite flow sends besides its data, with their wire bytes: the
/// SYN and the ACK of its handshake if it opens with one. No FIN is modelled.
fn handshake_wire_bytes(f: &FlowConfig) -> u64 {
    if f.handshake {
        (SYN_WIRE_BYTES + HEADER_BYTES) as u64
    } else {
        0
    }
}

/// Bytes a finite flow of `size` payload bytes puts on the forward wire if nothing
/// is lost: its ⌈size / MSS⌉ data segments with their headers, plus its handshake's
/// SYN and ACK. What a target `load` counts.
pub fn wire_bytes(f: &FlowConfig, size: u64) -> u64 {
    size + HEADER_BYTES as u64 * size.div_ceil(f.mss as u64).max(1) + handshake_wire_bytes(f)
}

/// Mean of [`wire_bytes`] over a group's flow sizes (exact for a size distribution).
pub fn mean_wire_bytes(f: &FlowConfig) -> f64 {
    let segments = match (&f.size_dist, f.size_bytes) {
        (Some(d), _) => d.mean_units(f.mss as f64),
        (None, Some(s)) => s.div_ceil(f.mss as u64).max(1) as f64,
        (None, None) => return f64::NAN,
    };
    mean_size_bytes(f) + HEADER_BYTES as f64 * segments + handshake_wire_bytes(f) as f64
}

/// Check the traffic fields of flow entry `i`; the message names the field.
pub fn validate(i: usize, f: &FlowConfig) -> Result<(), String> {
    match &f.arrival {
        Arrival::Fixed => {}
        Arrival::Interval { every_ns: 0 } => return Err(format!("flows[{i}].arrival.every_ns: must be > 0")),
        Arrival::Uniform { window_ns: 0 } => return Err(format!("flows[{i}].arrival.window_ns: must be > 0")),
        Arrival::Interval { .. } | Arrival::Uniform { .. } => {}
        &Arrival::Poisson { rate_per_s } => {
            if !(rate_per_s.is_finite() && rate_per_s > 0.0) {
                return Err(format!("flows[{i}].arrival.rate_per_s: must be a positive number"));
            }
        }
        &Arrival::PoissonLoad { load_bps } => {
            if !(load_bps.is_finite() && load_bps > 0.0) {
                return Err(format!("flows[{i}].arrival.load_bps: must be a positive number"));
            }
            let mean = mean_size_bytes(f);
            if mean.is_nan() || mean <= 0.0 {
                return Err(format!("flows[{i}].arrival: a target load needs finite flows (size_bytes or size_dist)"));
            }
        }
        Arrival::Gaps { gaps_ns } => {
            gaps_ns.validate().map_err(|e| format!("flows[{i}].arrival.gaps_ns.{e}"))?;
            if gaps_ns.mean() <= 0.0 {
                return Err(format!("flows[{i}].arrival.gaps_ns: the mean gap must be > 0"));
            }
        }
    }
    if let Some(d) = &f.size_dist {
        d.validate().map_err(|e| format!("flows[{i}].size_dist.{e}"))?;
    }
    for (k, c) in f.cca_mix.iter().enumerate() {
        if !(c.fraction.is_finite() && c.fraction >= 0.0) {
            return Err(format!("flows[{i}].cca_mix[{k}].fraction: must be >= 0"));
        }
        crate::cc::build(&c.cca, &c.cca_params).map_err(|e| format!("flows[{i}].cca_mix[{k}].cca: {e}"))?;
    }
    if !f.cca_mix.is_empty() && f.cca_mix.iter().map(|c| c.fraction).sum::<f64>() <= 0.0 {
        return Err(format!("flows[{i}].cca_mix: the fractions must not all be 0"));
    }
    for (k, s) in f.sender_mix.iter().enumerate() {
        if !(s.fraction.is_finite() && s.fraction >= 0.0) {
            return Err(format!("flows[{i}].sender_mix[{k}].fraction: must be >= 0"));
        }
    }
    if !f.sender_mix.is_empty() && f.sender_mix.iter().map(|s| s.fraction).sum::<f64>() <= 0.0 {
        return Err(format!("flows[{i}].sender_mix: the fractions must not all be 0"));
    }
    match &f.app {
        App::Bulk => {}
        &App::RateLimited { rate_bps, on_ns, off_ns } => {
            if rate_bps == 0 {
                return Err(format!("flows[{i}].app.rate_bps: must be > 0"));
            }
            if on_ns.is_some() != off_ns.is_some() || on_ns == Some(0) {
                return Err(format!("flows[{i}].app: on_ns and off_ns go together, and on_ns must be > 0"));
            }
        }
        App::Udp { rate_bps, on_ns, off_ns, bursts, packet_bytes } => {
            if on_ns.is_some() != off_ns.is_some() || *on_ns == Some(0) {
                return Err(format!("flows[{i}].app: on_ns and off_ns go together, and on_ns must be > 0"));
            }
            if *packet_bytes <= crate::net::UDP_HEADER_BYTES || *packet_bytes > 65_535 {
                return Err(format!("flows[{i}].app.packet_bytes: must be in (28, 65535]"));
            }
            if *rate_bps == 0 && bursts.is_empty() {
                return Err(format!("flows[{i}].app.rate_bps: must be > 0 (or give bursts)"));
            }
            for (k, b) in bursts.iter().enumerate() {
                if b.end_ns <= b.start_ns || b.rate_bps == 0 {
                    return Err(format!("flows[{i}].app.bursts[{k}]: end must be after start and the rate > 0"));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
