//! NCF's switch logic (network-assisted congestion feedback, the dissertation's
//! chapter 6; `docs/ncf.md`): a data plane at the bottleneck that
//!
//! * **classifies** flows: a flow is a *mouse* until the bytes the switch has seen
//!   of it reach `elephant_threshold_bytes`, an *elephant* from then on; a flow idle
//!   for `idle_timeout_ns` is forgotten (aged out) and starts over as a mouse;
//! * **counts** the active elephants: those that sent a packet within the idle
//!   timeout (ageing happens when the count is read);
//! * **isolates** them: mice (and ACKs and feedback packets) wait in one child
//!   queue, elephants in another, and the mice queue is always served first;
//! * **signals**: when an elephant's packet arrives and the elephant queue holds more
//!   than `feedback_threshold_bytes`, it sends that flow's sender a telemetry packet
//!   (link speed, elephant queue backlog, active elephants) over the reverse path
//!   (`net::feedback`), at most one per flow every `feedback_interval_ns`;
//! * **measures** the rate at which it serves the mice queue, with a first-order
//!   low-pass filter of time constant `rate_time_constant_ns` (a Tofino does this
//!   with its `Lpf` extern in rate mode). With `reported_rate = available` the
//!   telemetry carries it, so the rate the elephants are told is the link rate minus
//!   the mice's (`NetworkFeedback::available_rate_bps`), as RCP and XCP routers
//!   estimate spare capacity (C − y from a measured input rate). The default,
//!   `link`, reports the link rate alone: the chapter's telemetry carries "link
//!   speed". `docs/ncf.md` measures both under a mice flood.
//!
//! Deviation: the Tofino program keeps flow state in hashed register arrays
//! (collisions possible); here the table is exact, indexed by flow id.

use serde::{Deserialize, Serialize};

use super::{build, AqmState, Qdisc, QdiscCtx, Queued, Report};
use crate::config::QdiscConfig;
use crate::net::{FeedbackRequest, NetworkFeedback, Packet, Payload};
use crate::sim::SimRng;
use crate::units::Time;

/// Defaults (`docs/ncf.md` gives the reasoning; the chapter states none of them).
pub const DEFAULT_ELEPHANT_THRESHOLD_BYTES: u64 = 100_000;
pub const DEFAULT_IDLE_TIMEOUT_NS: Time = 200_000_000;
pub const DEFAULT_FEEDBACK_THRESHOLD_BYTES: u64 = 30_000;
pub const DEFAULT_FEEDBACK_INTERVAL_NS: Time = 1_000_000;
/// 10 ms: the shortest RTT of the chapter's experiments, so the estimate settles within
/// one RTT of every flow in the study while averaging over tens of mice packets.
pub const DEFAULT_RATE_TIME_CONSTANT_NS: Time = 10_000_000;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NcfConfig {
    /// Queue of mice, ACKs and feedback packets; always served first.
    pub mice: Box<QdiscConfig>,
    /// Queue of elephants.
    pub elephants: Box<QdiscConfig>,
    /// A flow becomes an elephant once the switch has seen this many of its bytes.
    #[serde(default = "default_elephant_threshold")]
    pub elephant_threshold_bytes: u64,
    /// A flow that sent nothing for this long is forgotten (no longer counted).
    #[serde(default = "default_idle_timeout")]
    pub idle_timeout_ns: Time,
    /// Telemetry is sent while the elephant queue holds more than this.
    #[serde(default = "default_feedback_threshold")]
    pub feedback_threshold_bytes: u64,
    /// At most one telemetry packet per flow per this interval.
    #[serde(default = "default_feedback_interval")]
    pub feedback_interval_ns: Time,
    /// Time constant of the mice queue's service-rate estimate.
    #[serde(default = "default_rate_time_constant")]
    pub rate_time_constant_ns: Time,
    /// Which rate the telemetry tells the elephants they share.
    #[serde(default)]
    pub reported_rate: ReportedRate,
}

/// The rate NCF's telemetry reports (the chapter says "link speed" and no more).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReportedRate {
    /// The link rate minus the measured rate of the mice served first: the capacity
    /// the elephant queue actually gets, as RCP/XCP estimate spare capacity.
    Available,
    /// The link rate alone: the telemetry's "link speed" as the chapter names it.
    #[default]
    Link,
}

fn default_elephant_threshold() -> u64 {
    DEFAULT_ELEPHANT_THRESHOLD_BYTES
}
fn default_idle_timeout() -> Time {
    DEFAULT_IDLE_TIMEOUT_NS
}
fn default_feedback_threshold() -> u64 {
    DEFAULT_FEEDBACK_THRESHOLD_BYTES
}
fn default_feedback_interval() -> Time {
    DEFAULT_FEEDBACK_INTERVAL_NS
}
fn default_rate_time_constant() -> Time {
    DEFAULT_RATE_TIME_CONSTANT_NS
}

impl NcfConfig {
    /// Both queues as given, every threshold at its default.
    pub fn with_queues(mice: QdiscConfig, elephants: QdiscConfig) -> Self {
        Self {
            mice: Box::new(mice),
            elephants: Box::new(elephants),
            elephant_threshold_bytes: DEFAULT_ELEPHANT_THRESHOLD_BYTES,
            idle_timeout_ns: DEFAULT_IDLE_TIMEOUT_NS,
            feedback_threshold_bytes: DEFAULT_FEEDBACK_THRESHOLD_BYTES,
            feedback_interval_ns: DEFAULT_FEEDBACK_INTERVAL_NS,
            rate_time_constant_ns: DEFAULT_RATE_TIME_CONSTANT_NS,
            reported_rate: ReportedRate::Link,
        }
    }

    pub fn validate(&self) -> Result<(), String> {
        for (name, v) in [
            ("elephant_threshold_bytes", self.elephant_threshold_bytes),
            ("idle_timeout_ns", self.idle_timeout_ns),
            ("feedback_interval_ns", self.feedback_interval_ns),
            ("rate_time_constant_ns", self.rate_time_constant_ns),
        ] {
            if v == 0 {
                return Err(format!("ncf: {name} must be > 0"));
            }
        }
        self.mice.validate().map_err(|e| format!("ncf mice queue: {e}"))?;
        self.elephants.validate().map_err(|e| format!("ncf elephant queue: {e}"))
    }
}

/// What the switch remembers of one flow.
#[derive(Debug, Clone, Copy, Default)]
struct FlowEntry {
    bytes: u64,
    last_seen: Option<Time>,
    elephant: bool,
    last_feedback: Option<Time>,
}

/// A rate measured by a first-order low-pass filter over the bytes served: each
/// packet adds `bytes / τ` and the sum decays as `exp(−Δt / τ)`, so a steady rate
/// reads as itself and a change is followed with time constant τ.
#[derive(Debug, Clone, Copy)]
struct DecayingRate {
    tau_ns: f64,
    /// Bytes per ns as of `at`.
    value: f64,
    at: Time,
}

impl DecayingRate {
    fn new(tau_ns: Time) -> Self {
        Self { tau_ns: tau_ns as f64, value: 0.0, at: 0 }
    }

    fn decayed(&self, now: Time) -> f64 {
        self.value * (-(now.saturating_sub(self.at) as f64) / self.tau_ns).exp()
    }

    fn add(&mut self, now: Time, bytes: u32) {
        self.value = self.decayed(now) + bytes as f64 / self.tau_ns;
        self.at = now;
    }

    fn bps(&self, now: Time) -> u64 {
        (self.decayed(now) * 8e9).round() as u64
    }
}

#[derive(Debug)]
pub struct Ncf {
    cfg: NcfConfig,
    mice: Box<dyn Qdisc>,
    elephants: Box<dyn Qdisc>,
    /// Indexed by flow id (flows are numbered densely from 0).
    table: Vec<FlowEntry>,
    /// Flow ids currently marked elephant (each once).
    elephant_ids: Vec<u32>,
    /// Rate at which the mice queue (served first) is served.
    mice_rate: DecayingRate,
}

impl Ncf {
    pub fn new(cfg: &NcfConfig, rng: &mut SimRng) -> Self {
        Self {
            mice: build(&cfg.mice, rng),
            elephants: build(&cfg.elephants, rng),
            cfg: cfg.clone(),
            table: Vec::new(),
            elephant_ids: Vec::new(),
            mice_rate: DecayingRate::new(cfg.rate_time_constant_ns),
        }
    }

    /// The measured rate (bit/s) at which the mice queue is served, at `now`.
    pub fn mice_rate_bps(&self, now: Time) -> u64 {
        self.mice_rate.bps(now)
    }

    /// Whether the switch currently classifies `flow` as an elephant.
    pub fn is_elephant(&self, flow: u32) -> bool {
        self.table.get(flow as usize).is_some_and(|e| e.elephant)
    }

    /// Elephants that sent within the idle timeout; the others are aged out here.
    pub fn active_elephants(&mut self, now: Time) -> u32 {
        let timeout = self.cfg.idle_timeout_ns;
        let table = &mut self.table;
        self.elephant_ids.retain(|&f| {
            let e = &mut table[f as usize];
            let active = e.last_seen.is_some_and(|t| now.saturating_sub(t) < timeout);
            if !active {
                *e = FlowEntry::default();
            }
            active
        });
        self.elephant_ids.len() as u32
    }

    /// Backlog of the elephant queue (bytes).
    pub fn elephant_backlog_bytes(&self) -> u64 {
        self.elephants.backlog_bytes()
    }

    /// Account a data packet of `flow` seen at `now`; returns whether it is an elephant's.
    fn classify(&mut self, flow: u32, bytes: u32, now: Time) -> bool {
        let i = flow as usize;
        if self.table.len() <= i {
            self.table.resize(i + 1, FlowEntry::default());
        }
        let e = self.table[i];
        if e.last_seen.is_some_and(|t| now.saturating_sub(t) >= self.cfg.idle_timeout_ns) {
            // Idle too long: forgotten, starts over as a mouse.
            if e.elephant {
                self.elephant_ids.retain(|&f| f != flow);
            }
            self.table[i] = FlowEntry::default();
        }
        let e = &mut self.table[i];
        e.bytes += bytes as u64;
        e.last_seen = Some(now);
        if !e.elephant && e.bytes >= self.cfg.elephant_threshold_bytes {
            e.elephant = true;
            self.elephant_ids.push(flow);
        }
        e.elephant
    }

    /// Telemetry for `flow` if its queue is over the threshold and its rate limit allows.
    fn maybe_feedback(&mut self, flow: u32, hop: u8, now: Time, report: &mut Report) {
        let queue_bytes = self.elephants.backlog_bytes();
        if queue_bytes <= self.cfg.feedback_threshold_bytes {
            return;
        }
        let last = self.table[flow as usize].last_feedback;
        if last.is_some_and(|t| now - t < self.cfg.feedback_interval_ns) {
            return;
        }
        self.table[flow as usize].last_feedback = Some(now);
        let flows = self.active_elephants(now);
        let priority_rate_bps = match self.cfg.reported_rate {
            ReportedRate::Available => self.mice_rate.bps(now),
            ReportedRate::Link => 0,
        };
        let msg = NetworkFeedback { sent_at: now, queue_bytes, flows, priority_rate_bps, ..Default::default() };
        report.feedback.push(FeedbackRequest { flow, hop, msg });
    }
}

impl Qdisc for Ncf {
    fn enqueue(&mut self, p: Packet, ctx: &mut QdiscCtx, report: &mut Report) -> bool {
        if !matches!(p.payload, Payload::Data(_)) {
            return self.mice.enqueue(p, ctx, report);
        }
        let (flow, hop) = (p.flow, p.hop);
        if !self.classify(flow, p.wire_bytes, ctx.now) {
            return self.mice.enqueue(p, ctx, report);
        }
        let admitted = self.elephants.enqueue(p, ctx, report);
        // A packet dropped because the queue is full is the strongest signal: it counts too.
        self.maybe_feedback(flow, hop, ctx.now, report);
        admitted
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx, report: &mut Report) -> Option<Queued> {
        if let Some(q) = self.mice.dequeue(ctx, report) {
            self.mice_rate.add(ctx.now, q.packet.wire_bytes);
            return Some(q);
        }
        self.elephants.dequeue(ctx, report)
    }

    fn backlog_bytes(&self) -> u64 {
        self.mice.backlog_bytes() + self.elephants.backlog_bytes()
    }
    fn backlog_pkts(&self) -> u64 {
        self.mice.backlog_pkts() + self.elephants.backlog_pkts()
    }
    fn admits_with(&self, p: &Packet, extra_pkts: u64, extra_bytes: u64) -> bool {
        let child = if p.is_data() && self.is_elephant(p.flow) { &self.elephants } else { &self.mice };
        child.admits_with(p, extra_pkts, extra_bytes)
    }
    fn aqm_state(&self) -> AqmState {
        self.elephants.aqm_state()
    }
    fn next_ready(&self, now: Time) -> Option<Time> {
        [self.mice.next_ready(now), self.elephants.next_ready(now)].into_iter().flatten().min()
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{drain_at_rate, pkt, rng};
    use super::*;
    use crate::net::Ecn;
    use crate::units::ms;

    fn cfg() -> NcfConfig {
        NcfConfig::with_queues(QdiscConfig::Bfifo { limit_bytes: 1_000_000 }, QdiscConfig::Bfifo { limit_bytes: 1_000_000 })
    }

    fn offer(q: &mut Ncf, p: Packet, now: Time, report: &mut Report) {
        let mut r = rng();
        let mut ctx = QdiscCtx { now, rng: &mut r };
        q.enqueue(p, &mut ctx, report);
    }

    #[test]
    fn a_flow_becomes_an_elephant_at_the_byte_threshold_and_ages_out() {
        let mut c = cfg();
        c.elephant_threshold_bytes = 15_000; // ten 1500-byte packets
        let mut q = Ncf::new(&c, &mut rng());
        let mut report = Report::default();
        for i in 0..9 {
            offer(&mut q, pkt(3, i, 1500, Ecn::NotEct), i * 1000, &mut report);
            assert!(!q.is_elephant(3), "a mouse below the threshold ({} bytes)", (i + 1) * 1500);
        }
        assert_eq!(q.mice.backlog_pkts(), 9);
        offer(&mut q, pkt(3, 9, 1500, Ecn::NotEct), 9000, &mut report);
        assert!(q.is_elephant(3), "exactly at the threshold");
        assert_eq!(q.elephants.backlog_pkts(), 1, "the packet that crosses the threshold is an elephant's");
        assert_eq!(q.active_elephants(10_000), 1);
        // Still counted just before the idle timeout, forgotten at it.
        assert_eq!(q.active_elephants(9000 + DEFAULT_IDLE_TIMEOUT_NS - 1), 1);
        assert_eq!(q.active_elephants(9000 + DEFAULT_IDLE_TIMEOUT_NS), 0);
        assert!(!q.is_elephant(3));
        // Back after idling: a mouse again, counted from zero.
        offer(&mut q, pkt(3, 10, 1500, Ecn::NotEct), ms(500), &mut report);
        assert!(!q.is_elephant(3));
    }

    #[test]
    fn a_returning_flow_is_aged_out_even_if_nobody_counted() {
        let mut c = cfg();
        c.elephant_threshold_bytes = 3000;
        let mut q = Ncf::new(&c, &mut rng());
        let mut report = Report::default();
        offer(&mut q, pkt(0, 0, 1500, Ecn::NotEct), 0, &mut report);
        offer(&mut q, pkt(0, 1, 1500, Ecn::NotEct), 1, &mut report);
        assert!(q.is_elephant(0));
        offer(&mut q, pkt(0, 2, 1500, Ecn::NotEct), 1 + DEFAULT_IDLE_TIMEOUT_NS, &mut report);
        assert!(!q.is_elephant(0));
        assert_eq!(q.active_elephants(2 + DEFAULT_IDLE_TIMEOUT_NS), 0, "no stale id left in the count");
    }

    #[test]
    fn mice_are_served_before_elephants() {
        let mut q = Ncf::new(&cfg(), &mut rng());
        // Flow 0 at twice the link rate becomes an elephant after 100 KB and builds a
        // queue; flow 1 sends 20 small packets (4 KB in all: a mouse throughout).
        let mut arrivals: Vec<(Time, Packet)> = (0..1000u64).map(|i| (i * 500_000, pkt(0, i, 1500, Ecn::NotEct))).collect();
        arrivals.extend((0..20u64).map(|i| (ms(200) + i * ms(10) + 1, pkt(1, i, 200, Ecn::NotEct))));
        arrivals.sort_by_key(|a| a.0);
        let (out, _) = drain_at_rate(&mut q, 12_000_000, &arrivals, ms(600));
        let mouse_max = out.iter().filter(|x| x.2.flow == 1).map(|x| x.1).max().unwrap();
        let late_elephant = out.iter().filter(|x| x.2.flow == 0 && x.0 > ms(200)).map(|x| x.1).min().unwrap();
        assert_eq!(out.iter().filter(|x| x.2.flow == 1).count(), 20);
        // A mouse waits at most for the packet in service (1500 B at 12 Mbit/s = 1 ms).
        assert!(mouse_max <= 1_000_000, "mouse sojourn {mouse_max}");
        assert!(late_elephant > ms(20), "elephants queue behind: {late_elephant}");
    }

    #[test]
    fn telemetry_above_the_queue_threshold_is_rate_limited_per_flow() {
        let mut c = cfg();
        c.elephant_threshold_bytes = 1;
        c.feedback_threshold_bytes = 15_000;
        c.feedback_interval_ns = ms(1);
        let mut q = Ncf::new(&c, &mut rng());
        let mut report = Report::default();
        // Two elephants, 10 µs apart, never dequeued: the queue passes 15 KB after
        // ten packets; from then on each flow may get one message per millisecond.
        let mut t = 0;
        for i in 0..2000u64 {
            offer(&mut q, pkt((i % 2) as u32, i / 2, 1500, Ecn::NotEct), t, &mut report);
            t += 10_000;
        }
        let fb = &report.feedback;
        assert!(fb.iter().all(|r| r.msg.queue_bytes > 15_000));
        assert_eq!(fb.first().unwrap().msg.sent_at, 100_000, "first packet that finds > 15 KB queued");
        for flow in 0..2 {
            let times: Vec<Time> = fb.iter().filter(|r| r.flow == flow).map(|r| r.msg.sent_at).collect();
            assert!(times.windows(2).all(|w| w[1] - w[0] >= ms(1)), "flow {flow}: {times:?}");
            // 20 ms of arrivals after the threshold: 19 or 20 messages, not more.
            assert!((19..=20).contains(&times.len()), "flow {flow}: {} messages", times.len());
        }
        assert!(fb.iter().all(|r| r.msg.flows == 2));
        assert!(fb.iter().all(|r| r.hop == 0));
    }

    #[test]
    fn reported_rate_follows_the_capacity_the_mice_leave() {
        // 12 Mbit/s (one 1500-byte packet per ms). Elephant flow 0 offers twice the
        // link rate throughout, so its queue stays over the threshold; from 200 to
        // 800 ms mice (flows 10.., 20 packets of 1500 B each, below the elephant
        // threshold) take one packet every 4 ms: 3 Mbit/s, a quarter of the link.
        let link = 12_000_000u64;
        let mut c = cfg();
        c.reported_rate = ReportedRate::Available;
        let mut q = Ncf::new(&c, &mut rng());
        let mut arrivals: Vec<(Time, Packet)> = (0..2400u64).map(|i| (i * 500_000, pkt(0, i, 1500, Ecn::NotEct))).collect();
        arrivals.extend((0..150u64).map(|i| (ms(200) + i * ms(4) + 1, pkt(10 + (i / 20) as u32, i % 20, 1500, Ecn::NotEct))));
        arrivals.sort_by_key(|a| a.0);
        let (out, report) = drain_at_rate(&mut q, link, &arrivals, ms(1200));
        assert!(out.iter().filter(|x| x.2.flow >= 10).all(|x| x.1 <= 1_000_000), "every mouse packet is served first");
        // What the sender computes: the link rate (stamped by the world) minus the mice's.
        let available = |r: &FeedbackRequest| NetworkFeedback { link_rate_bps: link, ..r.msg }.available_rate_bps() as f64;
        let between = |t0: Time, t1: Time| -> Vec<f64> {
            report.feedback.iter().filter(|r| (t0..t1).contains(&r.msg.sent_at)).map(available).collect()
        };
        // Flow 0's own first 100 KB were a mouse's (served first until about 67 ms);
        // eight time constants later the elephants have the whole link.
        let before = between(ms(150), ms(200));
        assert!(!before.is_empty() && before.iter().all(|&a| a > 0.999 * link as f64), "{before:?}");
        // Three time constants into the mice: every message within the filter's ripple
        // (one packet per 4 ms against τ = 10 ms) of the 9 Mbit/s left, on average 2 %.
        let during = between(ms(230), ms(800));
        assert!(during.len() > 400, "{} messages", during.len());
        assert!(during.iter().all(|&a| (7.9e6..10.1e6).contains(&a)), "{during:?}");
        let mean = during.iter().sum::<f64>() / during.len() as f64;
        assert!((mean / 9e6 - 1.0).abs() < 0.02, "mean reported {mean}");
        // Five time constants after the mice stop, the elephants have the link again.
        let after = between(ms(860), ms(1200));
        assert!(!after.is_empty() && after.iter().all(|&a| a > 0.99 * link as f64), "{after:?}");
        // Reporting the link rate (the default, the chapter's "link speed") leaves the mice out.
        let (_, report) = drain_at_rate(&mut Ncf::new(&cfg(), &mut rng()), link, &arrivals, ms(1200));
        assert!(report.feedback.len() > 400 && report.feedback.iter().all(|r| r.msg.priority_rate_bps == 0));
    }

    #[test]
    fn no_telemetry_for_mice_or_below_the_threshold() {
        let mut q = Ncf::new(&cfg(), &mut rng());
        let mut report = Report::default();
        for i in 0..60u64 {
            offer(&mut q, pkt(0, i, 1500, Ecn::NotEct), i, &mut report);
        }
        assert!(report.feedback.is_empty(), "a 90 KB mouse gets no telemetry, however full its queue");
        assert!(cfg().validate().is_ok());
        let mut bad = cfg();
        bad.feedback_interval_ns = 0;
        assert!(bad.validate().unwrap_err().contains("feedback_interval_ns"));
        let mut bad = cfg();
        bad.rate_time_constant_ns = 0;
        assert!(bad.validate().unwrap_err().contains("rate_time_constant_ns"));
    }
}
