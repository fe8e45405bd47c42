//! The experiment: builds the world from an [`ExperimentConfig`] (the network from
//! [`crate::topology`], flows with their CCAs), runs the event loop to the configured
//! duration, and returns the output tables and run statistics. The event loop knows
//! only links and routes: a packet carries its route and hop, and on arrival moves
//! on to the route's next link or to its endpoint.
//!
//! Flows come and go: a flow's TCP state exists from its start until it finishes
//! (all data acknowledged, or stopped with nothing outstanding), then only its row
//! of the flows table ([`FlowRow`]) remains. Fixed groups list their flows up front;
//! other arrival processes ([`crate::traffic`]) keep one pending arrival per group.

use rand::Rng;

use crate::cc;
use std::collections::BTreeSet;

use crate::config::{ExperimentConfig, FlowConfig};
use crate::host::{noise, Host, HostConfig};
use crate::net::feedback::reverse_entry_hop;
use crate::net::{
    Ack, Ecn, FeedbackRequest, FeedbackTable, Handshake, HandshakeKind, Link, LinkId, Packet, Payload, Segment, FEEDBACK_WIRE_BYTES,
    HEADER_BYTES, MAX_WINDOW_SEGS, SYN_WIRE_BYTES, UDP_HEADER_BYTES,
};
use crate::net::link::LinkWake;
use crate::net::CutThrough;
use crate::sim::{rng::Component, stream, EventQueue};
use crate::tcp::handshake::{Connect, Listen, SynTimeout};
use crate::tcp::sender::{SenderCounters, SenderEvent, SenderParams, INFINITE_SSTHRESH};
use crate::tcp::{Receiver, ScoreboardHint, Sender};
use crate::topology::{self, FlowPath, RouteId, RouteTable};
use crate::traffic::{App, GroupSource};
use crate::trace::flows::{flows_table, FlowNames, FlowRow};
use crate::trace::recorder::{EventsBuilder, FlowSample, FlowTsBuilder, QueueSample, QueueTsBuilder};
use crate::trace::spill::Spill;
use crate::trace::network::{links_table, SojournBuilder};
use crate::trace::Table;
use crate::units::{ms, Time};

#[derive(Debug, Clone, Copy)]
enum Event {
    TxDone(LinkId),
    Arrival(LinkId),
    /// A shaping qdisc may release a packet now.
    LinkPoll(LinkId),
    SenderTimer(u32),
    ReceiverTimer(u32),
    FlowStart(u32),
    FlowStop(u32),
    /// A timer of flow `f`'s handshake (the client's SYN or the server's SYN-ACK).
    HandshakeTimer(u32),
    /// The next flow of a lazily arriving group (index into `flows` of the config).
    GroupArrival(u32),
    /// A rate-limited application writes what is due.
    AppWrite(u32),
    /// A UDP source sends its next datagram.
    UdpSend(u32),
    /// Entry of `World::rate_changes`. (Two fields would make `Event` 12 bytes, which
    /// `EventQueue::schedule` then receives through memory: the CPU cannot forward the
    /// caller's two 4-byte stores to its 8-byte load, a stall on every event.)
    RateChange(u32),
    /// A host's NAPI poll: process the packets that reached it (see `host::napi`).
    HostPoll(u32),
    Sample,
    Warmup,
}
// Small enough to travel in registers (see `Event::RateChange`).
const _: () = assert!(std::mem::size_of::<Event>() == 8);

/// A flow while it runs: its TCP endpoints and wakeup bookkeeping.
#[derive(Debug)]
struct FlowRt {
    sender: Sender,
    receiver: Receiver,
    delivered_at_warmup: u64,
    /// The sender's counters and delivered segments at the warm-up, so that every
    /// summary figure can cover the same measurement window.
    counters_at_warmup: SenderCounters,
    segs_delivered_at_warmup: u64,
    completion_recorded: bool,
    /// A rate-limited application: segments written so far.
    app_segs: u64,
}

/// Flows running at once from which a packet reaching its host prefetches its
/// endpoint's state: a flow's state is about 3 KB, so a few hundred fill a core's
/// 1–2 MB L2 cache; below that the state is still cached and the hint only costs
/// instructions (2 % more on scenario (a)).
const PREFETCH_FROM_FLOWS: usize = 256;

impl FlowRt {
    /// Start loading the endpoint a packet reaching its host will be processed by (a
    /// cache hint, no effect on results): with thousands of flows its state has left
    /// the caches since the flow's last packet, and the host's poll comes a few
    /// events later.
    fn prefetch(&self, to_sender: bool, scoreboard: ScoreboardHint) {
        if to_sender {
            self.sender.prefetch();
            scoreboard.prefetch();
        } else {
            self.receiver.prefetch();
        }
    }

    /// Start loading what [`World::sample`] reads of the flow: the sender's input
    /// fields (its counters among them) and the receiver's delivered bytes.
    fn prefetch_for_sample(&self) {
        self.sender.prefetch();
        crate::tcp::prefetch(&self.receiver.delivered_bytes as *const u64 as *const u8, 8);
    }
}

/// How many flows ahead [`World::sample`] prefetches (a flow's sample reads about 8
/// lines of its state; a few flows ahead covers a miss's latency).
const SAMPLE_PREFETCH_AHEAD: usize = 4;

/// An inelastic (UDP) source: what it sent and what arrived.
#[derive(Debug, Default)]
struct UdpRt {
    seq: u64,
    delivered_bytes: u64,
    delivered_at_warmup: u64,
    stopped: bool,
}

/// Every flow that arrived: where its packets go, its row, and its state while it
/// runs (a UDP source, kept to the end; TCP endpoints are in [`FlowHot`]).
#[derive(Debug)]
struct FlowSlot {
    path: FlowPath,
    row: FlowRow,
    udp: Option<Box<UdpRt>>,
}

/// What the per-packet path reads of a flow, in a dense array beside the flow slots
/// (`World::hot`, same index): a `FlowSlot` is over 300 bytes, so with thousands of
/// flows reading one for every packet reaching its host (and every segment or ACK
/// sent) missed the caches; one 64-byte line a flow mostly stays cached (reno5000:
/// −7 % CPU at 40 bytes, before the timer copies joined).
#[derive(Debug)]
#[repr(align(64))]
struct FlowHot {
    /// The TCP endpoints while the flow runs.
    rt: Option<Box<FlowRt>>,
    /// The three-way handshake, from the first SYN until the server has its ACK
    /// (every data segment reaching the server asks whether one is pending).
    hs: Option<Box<HandshakeRt>>,
    /// The flow's sender (index into the senders; its hosts are `2 sender` and `2 sender + 1`).
    sender: u32,
    fwd_route: RouteId,
    rev_route: RouteId,
    /// The sender's [`Sender::scoreboard_hint`] after its latest input: where the
    /// next ACK's prefetch finds the scoreboard's entries (a hint only), its fields
    /// apart so that the whole of `FlowHot` fits one line.
    sb_head: usize,
    sb_head_entries: u8,
    sb_wrap: usize,
    sb_wrapped: u16,
    /// The sender is ECN-capable (its new data is sent ECT).
    ecn: bool,
    /// When the flow's sender and receiver timer slots fire ([`NOT_ARMED`]: they
    /// are empty): the event queue's own `timer_at`, copied here because every ACK
    /// and every data segment asks it, and the queue finds it through two dependent
    /// loads in its timer heap (10,000 entries at 5,000 flows, beyond the caches),
    /// while this line is already loaded. Debug builds check the two agree.
    sender_wake: Time,
    receiver_wake: Time,
}

// One cache line a flow.
const _: () = assert!(std::mem::size_of::<FlowHot>() == 64);

/// [`FlowHot::sender_wake`] of an empty timer slot (no timer is ever armed at the
/// end of time: its time is a sum of finite delays).
const NOT_ARMED: Time = Time::MAX;

impl FlowHot {
    fn scoreboard_hint(&self) -> ScoreboardHint {
        ScoreboardHint { head: self.sb_head, head_entries: self.sb_head_entries, wrap: self.sb_wrap, wrapped: self.sb_wrapped }
    }

    fn new(path: &FlowPath) -> Self {
        Self {
            rt: None,
            hs: None,
            sender: path.sender as u32,
            fwd_route: path.fwd_route,
            rev_route: path.rev_route,
            sb_head: 0,
            sb_head_entries: 0,
            sb_wrap: 0,
            sb_wrapped: 0,
            ecn: false,
            sender_wake: NOT_ARMED,
            receiver_wake: NOT_ARMED,
        }
    }
}

/// Both ends of a connection being opened (`tcp::handshake`).
#[derive(Debug)]
struct HandshakeRt {
    /// The client, until the SYN-ACK arrives.
    connect: Option<Connect>,
    /// The server's request socket.
    listen: Listen,
}

/// Interval of a rate-limited application's writes (iperf3's default
/// `--pacing-timer` of 1 ms). Deviation: iperf3 writes whole 128 KB blocks whenever
/// it is behind its average rate; this writes exactly what is due every tick.
const APP_WRITE_TICK: Time = ms(1);

/// Totals for invariant checks and the manifest.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunStats {
    pub events_processed: u64,
    pub data_pkts_sent: u64,
    pub data_pkts_delivered: u64,
    pub data_pkts_dropped: u64,
    pub data_pkts_in_network: u64,
    pub ack_pkts_sent: u64,
    pub ack_pkts_delivered: u64,
    pub ack_pkts_dropped: u64,
    /// Handshake packets (SYN, SYN-ACK, the client's ACK): the same conservation.
    pub handshake_pkts_sent: u64,
    pub handshake_pkts_delivered: u64,
    pub handshake_pkts_dropped: u64,
    pub handshake_pkts_in_network: u64,
    /// Network-to-sender feedback packets (`net::feedback`).
    pub feedback_pkts_sent: u64,
    pub feedback_pkts_delivered: u64,
    pub feedback_pkts_dropped: u64,
    pub sim_time_ns: u64,
    /// Largest number of pending events at any time (scales with components).
    pub max_pending_events: u64,
    /// Most flows running at once (what the engine's memory scales with).
    pub max_concurrent_flows: u64,
}

impl RunStats {
    /// Every statistic with its manifest key, in order: the one list of those keys.
    pub fn entries(&self) -> [(&'static str, u64); 18] {
        [
            ("events_processed", self.events_processed),
            ("data_pkts_sent", self.data_pkts_sent),
            ("data_pkts_delivered", self.data_pkts_delivered),
            ("data_pkts_dropped", self.data_pkts_dropped),
            ("data_pkts_in_network", self.data_pkts_in_network),
            ("ack_pkts_sent", self.ack_pkts_sent),
            ("ack_pkts_delivered", self.ack_pkts_delivered),
            ("ack_pkts_dropped", self.ack_pkts_dropped),
            ("handshake_pkts_sent", self.handshake_pkts_sent),
            ("handshake_pkts_delivered", self.handshake_pkts_delivered),
            ("handshake_pkts_dropped", self.handshake_pkts_dropped),
            ("handshake_pkts_in_network", self.handshake_pkts_in_network),
            ("feedback_pkts_sent", self.feedback_pkts_sent),
            ("feedback_pkts_delivered", self.feedback_pkts_delivered),
            ("feedback_pkts_dropped", self.feedback_pkts_dropped),
            ("sim_time_ns", self.sim_time_ns),
            ("max_pending_events", self.max_pending_events),
            ("max_concurrent_flows", self.max_concurrent_flows),
        ]
    }
}

/// Everything a run produces.
#[derive(Debug, Clone)]
pub struct RunOutput {
    pub flows: Table,
    pub flow_ts: Table,
    pub queue_ts: Table,
    pub events: Table,
    /// One row per link: configuration and byte counters at the end.
    pub links: Table,
    /// Sampled per-packet sojourn times of the recorded queues.
    pub sojourn: Table,
    pub stats: RunStats,
    /// The control callback stopped the run at `stats.sim_time_ns`, before the
    /// configured duration: the tables cover only that much.
    pub interrupted: bool,
}

/// The run loop consults its control callback after every this many events: often
/// enough to react within milliseconds (a few million events per second), rarely
/// enough that the check (one comparison per event) costs nothing measurable.
pub const CONTROL_EVERY_EVENTS: u64 = 1 << 14;

/// Where a run is, as the control callback sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Simulated time reached (ns).
    pub sim_time_ns: Time,
    /// Configured duration (ns).
    pub duration_ns: Time,
    pub events_processed: u64,
    /// Memory the recorded samples and events take so far (bytes).
    pub recorded_bytes: u64,
}

/// What the control callback tells the run loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    Continue,
    /// Stop now; the output covers the simulated time so far (`interrupted`).
    Stop,
}

struct World<'a, 'e> {
    cfg: &'a ExperimentConfig,
    /// Builds the `python:` CCAs when their flows start (the Python binding's).
    external: Option<&'a mut cc::registry::ExternalCcas<'e>>,
    /// A flow's CCA could not be built: the run stops and reports it.
    error: Option<String>,
    q: EventQueue<Event>,
    links: Vec<Link>,
    routes: RouteTable,
    /// Links that take packets from their one feeding link when it starts sending them.
    cut: CutThrough,
    sender_names: Vec<String>,
    sender_paths: Vec<FlowPath>,
    flows: Vec<FlowSlot>,
    /// The per-packet part of each flow (index = flow id, as `flows`).
    hot: Vec<FlowHot>,
    /// Ids of the flows running now (sampled in id order).
    live: BTreeSet<u32>,
    /// One source per flow entry, drawing arrivals, sizes, CCAs and senders.
    sources: Vec<GroupSource>,
    warmup_passed: bool,
    flow_ts: FlowTsBuilder,
    queue_ts: QueueTsBuilder,
    sojourn: SojournBuilder,
    events: EventsBuilder,
    /// Where full chunks of the growing tables go while the run goes (none: all stay).
    spill: Option<Spill<'a>>,
    stats: RunStats,
    seg_buf: Vec<Segment>,
    /// Messages of the feedback packets in flight (`Payload::Feedback` holds a slot).
    feedback_msgs: FeedbackTable,
    /// End hosts: `2 i` is sender i's host (its flows' ACKs arrive there), `2 i + 1`
    /// the host of sender i's receivers (data arrives there).
    hosts: Vec<Host>,
    /// Whether host `h` delivers packets at once (no noise, no coalescing: the ideal host).
    host_direct: Vec<bool>,
    poll_buf: Vec<Packet>,
    more_buf: Vec<bool>,
    /// Scheduled rate changes: (link, index into its `rate_schedule`).
    rate_changes: Vec<(LinkId, u32)>,
}

/// Run an experiment to completion.
pub fn run(cfg: &ExperimentConfig) -> Result<RunOutput, String> {
    run_with(cfg, &mut |_| Control::Continue)
}

/// Run an experiment, calling `control` every [`CONTROL_EVERY_EVENTS`] events with the
/// progress so far; it may stop the run (progress display, Ctrl-C, memory budget).
/// The callback sees only progress, never the world, so it cannot change results.
pub fn run_with(cfg: &ExperimentConfig, control: &mut dyn FnMut(&Progress) -> Control) -> Result<RunOutput, String> {
    run_with_ccas(cfg, control, None)
}

/// [`run_with`], building the `python:` CCAs through `external` (the Python binding).
pub fn run_with_ccas(
    cfg: &ExperimentConfig,
    control: &mut dyn FnMut(&Progress) -> Control,
    external: Option<&mut cc::registry::ExternalCcas<'_>>,
) -> Result<RunOutput, String> {
    run_streaming(cfg, control, external, None)
}

/// [`run_with_ccas`], handing the growing tables to `spill` in chunks while it runs
/// (see [`crate::trace::spill`]); the output holds the rows after the last chunk.
pub fn run_streaming(
    cfg: &ExperimentConfig,
    control: &mut dyn FnMut(&Progress) -> Control,
    external: Option<&mut cc::registry::ExternalCcas<'_>>,
    spill: Option<Spill<'_>>,
) -> Result<RunOutput, String> {
    cfg.validate()?;
    let mut world = World::build(cfg, external)?;
    world.spill = spill.map(|s| Spill { chunk_rows: s.chunk_rows, sink: s.sink });
    let interrupted = world.run(control);
    if let Some(e) = world.error.take() {
        return Err(e);
    }
    Ok(world.finish(interrupted))
}

/// Parse the JSON configuration and run it.
pub fn run_json(text: &str) -> Result<RunOutput, String> {
    run_json_with(text, &mut |_| Control::Continue)
}

/// [`run_json`] with a control callback (see [`run_with`]).
pub fn run_json_with(text: &str, control: &mut dyn FnMut(&Progress) -> Control) -> Result<RunOutput, String> {
    run_json_with_ccas(text, control, None)
}

/// [`run_json_with`], building the `python:` CCAs through `external`.
pub fn run_json_with_ccas(
    text: &str,
    control: &mut dyn FnMut(&Progress) -> Control,
    external: Option<&mut cc::registry::ExternalCcas<'_>>,
) -> Result<RunOutput, String> {
    let cfg = ExperimentConfig::from_json(text)?;
    run_with_ccas(&cfg, control, external)
}

/// [`run_json_with_ccas`] with a [`Spill`] (see [`run_streaming`]).
pub fn run_json_streaming(
    text: &str,
    control: &mut dyn FnMut(&Progress) -> Control,
    external: Option<&mut cc::registry::ExternalCcas<'_>>,
    spill: Option<Spill<'_>>,
) -> Result<RunOutput, String> {
    let cfg = ExperimentConfig::from_json(text)?;
    run_streaming(&cfg, control, external, spill)
}

fn ack_wire_bytes(a: &Ack) -> u32 {
    // SACK option: kind+len (2) + 8 per block, padded with two NOPs (Linux).
    HEADER_BYTES + if a.n_sack() > 0 { 4 + 8 * a.n_sack() as u32 } else { 0 }
}

impl<'a, 'e> World<'a, 'e> {
    fn build(cfg: &'a ExperimentConfig, external: Option<&'a mut cc::registry::ExternalCcas<'e>>) -> Result<Self, String> {
        let topology::Network { mut links, routes, sender_paths, sender_names } = topology::build(cfg)?;
        for l in links.iter_mut().filter(|l| l.recorded) {
            l.queue.sojourn_every = cfg.sojourn_sample_every;
        }
        let mut sources: Vec<GroupSource> =
            cfg.flows.iter().enumerate().map(|(g, f)| GroupSource::new(cfg.workload_seed(), g, f)).collect();
        // Fixed groups' flows first, in list order: ids 0.. as if listed one by one.
        let fixed: u64 = cfg.flows.iter().filter(|f| !f.arrival.is_lazy()).map(|f| f.count).sum();
        let mut flows = Vec::new();
        flows.try_reserve_exact(fixed as usize).map_err(|_| format!("flows: not enough memory for {fixed} flows"))?;
        for (g, f) in cfg.flows.iter().enumerate().filter(|(_, f)| !f.arrival.is_lazy()) {
            for _ in 0..f.count {
                let id = flows.len() as u64;
                let jitter = if f.start_jitter_ns > 0 {
                    stream(cfg.seed, Component::FlowStart, id).gen_range(0..f.start_jitter_ns)
                } else {
                    0
                };
                let draw = sources[g].draw(f);
                flows.push(Self::new_slot(&sender_paths, g, f, draw, f.start_ns + jitter));
            }
        }
        let mut hosts = Vec::new();
        let mut host_direct = Vec::new();
        for i in 0..sender_names.len() {
            let hc = cfg.sender_host(i);
            for (side, table) in [noise::LINUX_TX, noise::LINUX_RX].into_iter().enumerate() {
                let idx = 2 * i + side;
                hosts.push(Host::new(hc, table, stream(cfg.seed, Component::Jitter, idx as u64)));
                host_direct.push(hc.timing_noise == 0.0 && hc.gro_max_size == 0);
            }
        }
        Ok(Self {
            cfg,
            external,
            error: None,
            q: EventQueue::new(),
            cut: CutThrough::new(&links, &routes, !links.iter().any(|l| l.may_send_feedback)),
            links,
            routes,
            sender_names,
            sender_paths,
            hot: flows.iter().map(|s: &FlowSlot| FlowHot::new(&s.path)).collect(),
            flows,
            live: BTreeSet::new(),
            sources,
            warmup_passed: false,
            flow_ts: FlowTsBuilder::default(),
            queue_ts: QueueTsBuilder::default(),
            sojourn: SojournBuilder::default(),
            events: EventsBuilder::default(),
            spill: None,
            stats: RunStats::default(),
            seg_buf: Vec::new(),
            feedback_msgs: FeedbackTable::default(),
            hosts,
            host_direct,
            poll_buf: Vec::new(),
            more_buf: Vec::new(),
            rate_changes: Vec::new(),
        })
    }

    fn new_slot(sender_paths: &[FlowPath], g: usize, f: &FlowConfig, draw: crate::traffic::FlowDraw, start: Time) -> FlowSlot {
        let path = sender_paths[draw.sender].clone();
        let row = FlowRow {
            sender: draw.sender as u64,
            group: g as u32,
            cca: draw.cca,
            start_ns: start,
            stop_ns: f.stop_ns,
            size_bytes: draw.size_bytes,
            base_rtt_ns: path.base_rtt_ns,
            mss: f.mss,
            ..FlowRow::default()
        };
        FlowSlot { path, row, udp: None }
    }

    /// The TCP endpoints of flow `id`, created when it starts.
    fn build_flow(&mut self, id: u32) -> Result<FlowRt, String> {
        let slot = &self.flows[id as usize];
        let f = &self.cfg.flows[slot.row.group as usize];
        let host: &HostConfig = self.cfg.sender_host(slot.path.sender);
        let (cca_name, cca_params) = match slot.row.cca {
            0 => (&f.cca, &f.cca_params),
            k => (&f.cca_mix[k as usize - 1].cca, &f.cca_mix[k as usize - 1].cca_params),
        };
        let cca = cc::registry::build_for_flow(id as usize, cca_name, cca_params, self.external.as_deref_mut())
            .map_err(|e| format!("flows[{}].cca: {e}", slot.row.group))?;
        // A CCA that needs ECN (DCTCP) turns it on, with accurate CE echo.
        let accurate_ecn = cca.needs_ecn();
        let ecn = f.ecn || accurate_ecn;
        // At most `MAX_WINDOW_SEGS` (an ACK's SACK offsets are 24 bits; TCP's own
        // largest window is no more segments than that).
        let rwnd_segs = (f.rwnd_bytes / f.mss as u64).clamp(2, MAX_WINDOW_SEGS as u64) as u32;
        let size_bytes = slot.row.size_bytes;
        let params = SenderParams {
            mss: f.mss,
            initial_cwnd: f.initial_cwnd,
            rwnd_segs,
            pacing: f.pacing,
            ecn,
            min_rto: f.min_rto_ns,
            size_bytes,
            gso: host.gso(),
            hz: host.hz,
        };
        let mut sender = Sender::new(params, cca, stream(self.cfg.seed, Component::Cca, id as u64));
        if matches!(f.app, App::RateLimited { .. }) {
            sender.limit_app();
        }
        let mut receiver = Receiver::new(f.delayed_ack, f.mss, size_bytes).with_host(host.clock(), slot.path.base_rtt_ns);
        if accurate_ecn {
            receiver = receiver.with_accurate_ecn();
        }
        Ok(FlowRt {
            sender,
            receiver,
            delivered_at_warmup: 0,
            counters_at_warmup: SenderCounters::default(),
            segs_delivered_at_warmup: 0,
            completion_recorded: false,
            app_segs: 0,
        })
    }

    fn progress(&self, now: Time) -> Progress {
        let rows = self.flow_ts.len() * FlowTsBuilder::ROW_BYTES
            + self.queue_ts.len() * QueueTsBuilder::ROW_BYTES
            + self.events.len() * EventsBuilder::ROW_BYTES;
        Progress {
            sim_time_ns: now,
            duration_ns: self.cfg.duration_ns,
            events_processed: self.stats.events_processed,
            recorded_bytes: rows as u64,
        }
    }

    /// The event loop. Returns whether `control` stopped it early.
    fn run(&mut self, control: &mut dyn FnMut(&Progress) -> Control) -> bool {
        let duration = self.cfg.duration_ns;
        for (i, f) in self.flows.iter().enumerate() {
            if f.row.start_ns < duration {
                self.q.schedule(f.row.start_ns, Event::FlowStart(i as u32));
            }
            if let Some(stop) = f.row.stop_ns {
                if stop < duration {
                    self.q.schedule(stop.max(f.row.start_ns), Event::FlowStop(i as u32));
                }
            }
        }
        for g in 0..self.sources.len() {
            self.schedule_arrival(g);
        }
        for (l, link) in self.links.iter().enumerate() {
            for (idx, &(t, _)) in link.rate_schedule.iter().enumerate() {
                if t < duration {
                    self.q.schedule(t, Event::RateChange(self.rate_changes.len() as u32));
                    self.rate_changes.push((l as LinkId, idx as u32));
                }
            }
        }
        if self.cfg.warmup_ns > 0 && self.cfg.warmup_ns < duration {
            self.q.schedule(self.cfg.warmup_ns, Event::Warmup);
        }
        if self.cfg.sample_interval_ns > 0 {
            self.q.schedule(0, Event::Sample);
        }
        let mut end = duration;
        let mut next_control = CONTROL_EVERY_EVENTS;
        while let Some((now, ev)) = self.q.pop_before(duration) {
            // Pending events before this one left the queue.
            self.stats.max_pending_events = self.stats.max_pending_events.max(self.q.len() as u64 + 1);
            self.stats.events_processed += 1;
            self.handle(now, ev);
            if self.error.is_some() {
                end = now;
                break;
            }
            if self.stats.events_processed >= next_control {
                next_control += CONTROL_EVERY_EVENTS;
                if control(&self.progress(now)) == Control::Stop {
                    end = now;
                    break;
                }
            }
        }
        self.stats.sim_time_ns = end;
        if self.cfg.sample_interval_ns > 0 {
            self.sample(end);
        }
        end < duration
    }

    fn handle(&mut self, now: Time, ev: Event) {
        match ev {
            Event::TxDone(l) => self.link_op(now, l, |link| link.on_tx_done(now)),
            Event::LinkPoll(l) => self.link_op(now, l, |link| link.on_poll(now)),
            Event::Arrival(l) => {
                let (p, next) = self.links[l as usize].on_arrival();
                if let Some(t) = next {
                    self.q.schedule(t, Event::Arrival(l));
                }
                if let Some(next_link) = self.routes.link_at(p.route, p.hop as usize + 1) {
                    self.cut.note_arrived(l, next_link);
                }
                self.forward(now, p);
            }
            Event::SenderTimer(f) => {
                // The slot's timer just left the queue.
                self.hot[f as usize].sender_wake = NOT_ARMED;
                self.prefetch_next_timer();
                let Some(flow) = self.hot[f as usize].rt.as_deref_mut() else { return };
                let mut out = std::mem::take(&mut self.seg_buf);
                flow.sender.on_timer(now, &mut out);
                self.emit_segments(now, f, &mut out);
                self.seg_buf = out;
                self.after_sender(now, f);
            }
            Event::ReceiverTimer(f) => {
                self.hot[f as usize].receiver_wake = NOT_ARMED;
                self.prefetch_next_timer();
                let Some(flow) = self.hot[f as usize].rt.as_deref_mut() else { return };
                if let Some(ack) = flow.receiver.on_timer(now) {
                    self.emit_ack(now, f, ack);
                }
                self.resched_receiver(f);
            }
            Event::FlowStart(f) => self.open_flow(now, f),
            Event::HandshakeTimer(f) => self.handshake_timer(now, f),
            Event::GroupArrival(g) => {
                let f = &self.cfg.flows[g as usize];
                let draw = self.sources[g as usize].draw(f);
                let id = self.flows.len() as u32;
                let slot = Self::new_slot(&self.sender_paths, g as usize, f, draw, now);
                self.hot.push(FlowHot::new(&slot.path));
                self.flows.push(slot);
                self.open_flow(now, id);
                if let Some(stop) = f.stop_ns.filter(|&s| s < self.cfg.duration_ns) {
                    self.q.schedule(stop.max(now), Event::FlowStop(id));
                }
                self.schedule_arrival(g as usize);
            }
            Event::AppWrite(f) => self.app_write(now, f),
            Event::UdpSend(f) => self.udp_send(now, f),
            Event::FlowStop(f) => {
                if let Some(u) = self.flows[f as usize].udp.as_deref_mut() {
                    u.stopped = true;
                    self.events.push(now, "flow_stop", f as i64, "", "", f64::NAN, f64::NAN);
                    return;
                }
                if self.hot[f as usize].hs.as_ref().is_some_and(|h| h.connect.is_some()) {
                    // The application closes a socket still in SYN_SENT: the
                    // connection attempt ends. Deviation: the server's request goes
                    // with it (Linux: when the RST answering its next SYN-ACK arrives).
                    self.hot[f as usize].hs = None;
                    self.events.push(now, "flow_stop", f as i64, "", "", f64::NAN, f64::NAN);
                    return;
                }
                let Some(flow) = self.hot[f as usize].rt.as_deref_mut() else { return };
                flow.sender.stop();
                self.events.push(now, "flow_stop", f as i64, "", "", f64::NAN, f64::NAN);
                self.after_sender(now, f);
            }
            Event::RateChange(i) => {
                let (l, idx) = self.rate_changes[i as usize];
                let link = &mut self.links[l as usize];
                let rate = link.rate_schedule[idx as usize].1;
                let old = link.rate_bps;
                link.set_rate(rate);
                let name = link.name.clone();
                self.events.push(now, "rate_change", -1, &name, "", rate as f64, old as f64);
            }
            Event::HostPoll(h) => {
                let mut batch = std::mem::take(&mut self.poll_buf);
                let mut more = std::mem::take(&mut self.more_buf);
                self.hosts[h as usize].rx.take(&mut batch, &mut more);
                for (p, more_in_frame) in batch.drain(..).zip(more.iter().copied()) {
                    self.deliver(now, p, more_in_frame);
                }
                self.poll_buf = batch;
                self.more_buf = more;
            }
            Event::Sample => {
                self.sample(now);
                let next = now + self.cfg.sample_interval_ns;
                if next < self.cfg.duration_ns {
                    self.q.schedule(next, Event::Sample);
                }
            }
            Event::Warmup => {
                self.warmup_passed = true;
                for &f in &self.live {
                    let slot = &mut self.flows[f as usize];
                    if let Some(flow) = self.hot[f as usize].rt.as_deref_mut() {
                        flow.delivered_at_warmup = flow.receiver.delivered_bytes;
                        flow.counters_at_warmup = flow.sender.counters;
                        flow.segs_delivered_at_warmup = flow.sender.tp.delivered;
                    }
                    if let Some(u) = slot.udp.as_deref_mut() {
                        u.delivered_at_warmup = u.delivered_bytes;
                        // Datagrams sent so far: the UDP row's segs_sent_at_warmup.
                        slot.row.counters_at_warmup.segs_sent = slot.row.counters.segs_sent;
                    }
                }
                for l in &mut self.links {
                    l.snapshot_at_warmup(now);
                }
            }
        }
    }

    /// A packet finished a hop: on to the next link, or to its endpoint.
    fn forward(&mut self, now: Time, p: Packet) {
        let next_hop = p.hop as usize + 1;
        if let Some(next_link) = self.routes.link_at(p.route, next_hop) {
            let mut p = p;
            p.hop = next_hop as u8;
            self.enqueue(now, next_link, p);
            return;
        }
        // The packet reached its end host: the host's NAPI poll processes it.
        if cfg!(debug_assertions) {
            self.check_not_faster_than_its_path(now, &p);
        }
        let hot = &self.hot[p.flow as usize];
        let h = 2 * hot.sender as usize + !p.to_sender() as usize;
        if self.live.len() >= PREFETCH_FROM_FLOWS {
            if let Some(rt) = hot.rt.as_deref() {
                rt.prefetch(p.to_sender(), hot.scoreboard_hint());
            }
        }
        if self.host_direct[h] {
            self.deliver(now, p, false);
            return;
        }
        let host = &mut self.hosts[h];
        if let Some(t) = host.rx.push(p, now, || host.delay.sample()) {
            self.q.schedule(t, Event::HostPoll(h as u32));
        }
    }

    /// With thousands of flows, start loading the endpoint of the flow whose timer
    /// is due next (a cache hint, no effect on results), as [`World::forward`] does
    /// for a packet reaching its host: the timers of many flows fire one after the
    /// other, a few events apart, each on a flow whose state has left the caches.
    fn prefetch_next_timer(&self) {
        if self.live.len() < PREFETCH_FROM_FLOWS {
            return;
        }
        let (f, to_sender) = match self.q.next_timer_event() {
            Some(Event::SenderTimer(f)) => (f, true),
            Some(Event::ReceiverTimer(f)) => (f, false),
            _ => return,
        };
        let hot = &self.hot[f as usize];
        if let Some(rt) = hot.rt.as_deref() {
            rt.prefetch(to_sender, hot.scoreboard_hint());
        }
    }

    /// Invariant (debug builds, so every engine test checks it): a segment or
    /// handshake packet reaches its end host no earlier than its send time plus the
    /// propagation and serialization of every link on its route.
    fn check_not_faster_than_its_path(&self, now: Time, p: &Packet) {
        let sent = match p.payload {
            Payload::Data(s) => s.tsval,
            Payload::Handshake(h) => h.tsval,
            _ => return,
        };
        let floor: Time =
            self.routes.hops(p.route).iter().map(|&l| self.links[l as usize].crossing_floor(p.wire_bytes)).sum();
        assert!(now >= sent + floor, "a packet crossed its path in {} ns, below its floor {floor} ns: {p:?}", now - sent);
    }

    /// TCP processes a packet at its end host (`more_in_frame`: GRO merged it with
    /// the next segment of the same flow, so the ACK decision waits).
    fn deliver(&mut self, now: Time, p: Packet, more_in_frame: bool) {
        let f = p.flow;
        match p.payload {
            Payload::Data(seg) => {
                self.stats.data_pkts_delivered += 1;
                // Data carries the ACK flag: it completes a server's pending request
                // whose ACK was lost.
                self.server_acked(now, f, None);
                // A finished flow's state is gone: late duplicates just arrive.
                let Some(flow) = self.hot[f as usize].rt.as_deref_mut() else { return };
                if let Some(ack) = flow.receiver.on_segment_in_frame(now, &seg, p.ecn, more_in_frame) {
                    self.emit_ack(now, f, ack);
                }
                let flow = self.hot[f as usize].rt.as_deref_mut().expect("still running");
                if let (Some(t), false) = (flow.receiver.completed_at, flow.completion_recorded) {
                    flow.completion_recorded = true;
                    let fct = t - self.flows[f as usize].row.start_ns;
                    self.events.push(t, "flow_complete", f as i64, "", "", fct as f64, f64::NAN);
                }
                self.resched_receiver(f);
            }
            Payload::Datagram { .. } => {
                self.stats.data_pkts_delivered += 1;
                if let Some(u) = self.flows[f as usize].udp.as_deref_mut() {
                    u.delivered_bytes += (p.wire_bytes - UDP_HEADER_BYTES) as u64;
                }
            }
            Payload::Ack(ack) => {
                self.stats.ack_pkts_delivered += 1;
                let Some(flow) = self.hot[f as usize].rt.as_deref_mut() else { return };
                let mut out = std::mem::take(&mut self.seg_buf);
                flow.sender.on_ack(now, &ack, &mut out);
                self.emit_segments(now, f, &mut out);
                self.seg_buf = out;
                self.after_sender(now, f);
            }
            Payload::Handshake(h) => {
                self.stats.handshake_pkts_delivered += 1;
                self.handshake_arrived(now, f, h);
            }
            Payload::Feedback(slot) => {
                let fb = self.feedback_msgs.take(slot);
                self.stats.feedback_pkts_delivered += 1;
                let name = &self.links[fb.link as usize].name;
                self.events.push(now, "feedback", f as i64, name, "", fb.sent_at as f64, fb.flows as f64);
                let Some(flow) = self.hot[f as usize].rt.as_deref_mut() else { return };
                let mut out = std::mem::take(&mut self.seg_buf);
                flow.sender.on_feedback(now, &fb, &mut out);
                self.emit_segments(now, f, &mut out);
                self.seg_buf = out;
                self.after_sender(now, f);
            }
        }
    }

    /// A network element on link `l` asked to tell a flow's sender something: send
    /// it over the reverse path from the element (see `net::feedback`).
    fn send_feedback(&mut self, now: Time, l: LinkId, req: FeedbackRequest) {
        self.stats.feedback_pkts_sent += 1;
        let mut msg = req.msg;
        msg.link = l;
        msg.link_rate_bps = self.links[l as usize].rate_bps;
        let path = &self.flows[req.flow as usize].path;
        let rev = path.rev_route;
        let (fwd_len, rev_len) = (self.routes.hops(path.fwd_route).len(), self.routes.hops(rev).len());
        let p = Packet { flow: req.flow, wire_bytes: FEEDBACK_WIRE_BYTES, route: rev, hop: 0, ecn: Ecn::NotEct, payload: Payload::Feedback(self.feedback_msgs.insert(msg)) };
        match reverse_entry_hop(fwd_len, rev_len, req.hop as usize) {
            Some(hop) => {
                let link = self.routes.hops(rev)[hop];
                self.enqueue(now, link, Packet { hop: hop as u8, ..p });
            }
            None => self.deliver(now, p, false),
        }
    }

    fn enqueue(&mut self, now: Time, l: LinkId, p: Packet) {
        self.link_op(now, l, |link| link.enqueue(p, now));
    }

    /// Run an operation of link `l` at `now` and schedule what it asks for. A packet
    /// it started serializing goes on to the next link at once when that link takes
    /// it (`net::cut_through`), else onto `l`'s delay line.
    fn link_op(&mut self, now: Time, l: LinkId, op: impl FnOnce(&mut Link) -> (LinkWake, Option<Time>)) {
        let link = &mut self.links[l as usize];
        let started_before = link.tx_pkts;
        let (wake, mut arrival) = op(link);
        if link.tx_pkts != started_before && self.cut.feeds(l) && self.cut_through(l) {
            // The line is as it was before the packet started: its head, if any, is
            // already scheduled.
            arrival = None;
        }
        self.schedule_link(l, (wake, arrival));
        self.collect_queue_report(now, l);
    }

    /// The packet link `l` just started serializing: hand it to the next link now if
    /// that link takes it (it will be idle at the packet's arrival, and only `l`
    /// feeds it), and say so; otherwise it stays on `l`'s delay line.
    fn cut_through(&mut self, l: LinkId) -> bool {
        let (at, p) = self.links[l as usize].last_on_line().expect("a packet just started");
        let Some(next) = self.routes.link_at(p.route, p.hop as usize + 1) else { return false };
        // Not past the end (it would count a packet that never arrived).
        if !self.cut.may_cut(l, next) || at >= self.cfg.duration_ns || !self.links[next as usize].idle_at(at, p) {
            self.cut.note_on_line(l, next);
            return false;
        }
        if self.before_warmup() && at >= self.cfg.warmup_ns {
            // Everything the next link does from now on happens at or after the
            // warm-up (only `l` feeds it, and it is idle until `at`): its counters
            // now are its counters at the warm-up.
            self.links[next as usize].snapshot_at_warmup(self.cfg.warmup_ns);
        }
        let (at, mut p) = self.links[l as usize].take_started();
        p.hop += 1;
        self.link_op(at, next, |link| link.enqueue(p, at));
        true
    }

    /// Schedule what a link operation asked for: its transmit completion or shaper
    /// poll, and the arrival of its delay line's head.
    fn schedule_link(&mut self, l: LinkId, (wake, arrival): (LinkWake, Option<Time>)) {
        match wake {
            LinkWake::TxDone(t) => self.q.schedule(t, Event::TxDone(l)),
            // The link's one poll slot: an earlier poll replaces a pending later one.
            LinkWake::Poll(t) => self.q.set_timer(l, t, Event::LinkPoll(l)),
            LinkWake::None => {}
        }
        if let Some(t) = arrival {
            self.q.schedule(t, Event::Arrival(l));
        }
    }

    fn record_drop(&mut self, now: Time, l: LinkId, p: &Packet, reason: &str) {
        if p.is_data() {
            let before_warmup = self.before_warmup();
            let row = &mut self.flows[p.flow as usize].row;
            row.dropped_pkts += 1;
            row.dropped_pkts_at_warmup += before_warmup as u64;
        }
        let seg = match p.payload {
            Payload::Data(s) => {
                self.stats.data_pkts_dropped += 1;
                s.seg as f64
            }
            Payload::Ack(a) => {
                self.stats.ack_pkts_dropped += 1;
                a.cum as f64
            }
            Payload::Feedback(slot) => {
                self.feedback_msgs.take(slot);
                self.stats.feedback_pkts_dropped += 1;
                f64::NAN
            }
            Payload::Handshake(_) => {
                self.stats.handshake_pkts_dropped += 1;
                f64::NAN
            }
            Payload::Datagram { seq } => {
                self.stats.data_pkts_dropped += 1;
                seq as f64
            }
        };
        if self.cfg.packet_events {
            let name = &self.links[l as usize].name;
            self.events.push(now, "drop", p.flow as i64, name, reason, seg, if p.is_data() { 1.0 } else { 0.0 });
        }
    }

    /// Whether the warm-up instant is still ahead (counts before it are kept apart).
    /// Like the other `_at_warmup` figures, nothing counts as before a warm-up that
    /// never comes (0, or past the end): the window is then the whole run.
    fn before_warmup(&self) -> bool {
        !self.warmup_passed && self.cfg.warmup_ns > 0 && self.cfg.warmup_ns < self.cfg.duration_ns
    }

    /// Record the drops and CE marks a link's queue made (at enqueue or dequeue).
    /// Inline, so that the common case (nothing to record) costs no call per link
    /// operation.
    #[inline]
    fn collect_queue_report(&mut self, now: Time, l: LinkId) {
        if !self.links[l as usize].queue.report.is_empty() {
            self.record_queue_report(now, l);
        }
    }

    #[inline(never)]
    fn record_queue_report(&mut self, now: Time, l: LinkId) {
        let mut report = std::mem::take(&mut self.links[l as usize].queue.report);
        for (p, reason) in &report.drops {
            if p.is_data() {
                self.links[l as usize].note_data_dropped_in_queue();
            }
            if p.is_handshake() {
                self.links[l as usize].note_handshake_dropped_in_queue();
            }
            self.record_drop(now, l, p, reason.name());
        }
        for p in &report.marks {
            if let Payload::Data(s) = p.payload {
                let before_warmup = self.before_warmup();
                let row = &mut self.flows[p.flow as usize].row;
                row.ecn_marked_pkts += 1;
                row.ecn_marked_pkts_at_warmup += before_warmup as u64;
                if self.cfg.packet_events {
                    let name = &self.links[l as usize].name;
                    self.events.push(now, "ecn_mark", p.flow as i64, name, "", s.seg as f64, f64::NAN);
                }
            }
        }
        report.drops.clear();
        report.marks.clear();
        let mut feedback = std::mem::take(&mut report.feedback);
        // Hand the (empty) buffers back so steady state does not allocate.
        self.links[l as usize].queue.report = report;
        for req in feedback.drain(..) {
            self.send_feedback(now, l, req);
        }
        // Hand the buffer back unless sending queued new requests here meanwhile.
        let slot = &mut self.links[l as usize].queue.report.feedback;
        if slot.is_empty() {
            *slot = feedback;
        }
    }

    fn emit_segments(&mut self, now: Time, f: u32, out: &mut Vec<Segment>) {
        let hot = &self.hot[f as usize];
        let route = hot.fwd_route;
        let first = self.routes.hops(route)[0];
        let ecn_capable = hot.ecn;
        for seg in out.drain(..) {
            // RFC 3168 §6.1.5 (Linux `tcp_ecn_send`): retransmissions are not ECT.
            let ecn = if ecn_capable && !seg.is_retrans { Ecn::Ect } else { Ecn::NotEct };
            self.stats.data_pkts_sent += 1;
            let p = Packet {
                flow: f,
                wire_bytes: seg.len + HEADER_BYTES,
                route,
                hop: 0,
                ecn,
                payload: Payload::Data(seg),
            };
            self.enqueue(now, first, p);
        }
    }

    fn emit_ack(&mut self, now: Time, f: u32, ack: Ack) {
        self.stats.ack_pkts_sent += 1;
        let route = self.hot[f as usize].rev_route;
        let first = self.routes.hops(route)[0];
        let p = Packet { flow: f, wire_bytes: ack_wire_bytes(&ack), route, hop: 0, ecn: Ecn::NotEct, payload: Payload::Ack(ack) };
        self.enqueue(now, first, p);
    }

    /// Record sender events and schedule its next wakeup.
    fn after_sender(&mut self, now: Time, f: u32) {
        let slot = self.sender_timer_slot(f);
        let hot = &mut self.hot[f as usize];
        let sender_host = hot.sender as usize;
        let Some(flow) = hot.rt.as_deref_mut() else { return };
        for (t, ev) in flow.sender.events.drain(..) {
            match ev {
                SenderEvent::Reduction { reason, cwnd_before, ssthresh } => {
                    self.events.push(t, "cwnd_reduction", f as i64, "", reason, cwnd_before as f64, ssthresh as f64)
                }
                SenderEvent::Undo { cwnd } => self.events.push(t, "undo", f as i64, "", "", cwnd as f64, f64::NAN),
                SenderEvent::Rto { backoff } => self.events.push(t, "rto", f as i64, "", "", backoff as f64, f64::NAN),
            }
        }
        let hot = &mut self.hot[f as usize];
        let flow = hot.rt.as_deref_mut().expect("still running");
        if flow.sender.is_finished() && (flow.receiver.completed_at.is_some() || flow.sender.is_stopped()) {
            self.retire(f);
            return;
        }
        let sb = flow.sender.scoreboard_hint();
        (hot.sb_head, hot.sb_head_entries, hot.sb_wrap, hot.sb_wrapped) = (sb.head, sb.head_entries, sb.wrap, sb.wrapped);
        if let Some(t) = flow.sender.next_wakeup() {
            let t = t.max(now);
            // One timer slot per sender: a pending wakeup at or before `t` just
            // re-evaluates when it fires; a later one is moved to `t`.
            debug_assert_eq!(self.q.timer_at(slot), Some(hot.sender_wake).filter(|&w| w != NOT_ARMED));
            if hot.sender_wake > t {
                // Timers fire late by the sending host's processing delay.
                let t = t + self.hosts[2 * sender_host].delay.sample();
                debug_assert!(t != NOT_ARMED);
                self.q.set_timer(slot, t, Event::SenderTimer(f));
                hot.sender_wake = t;
            }
        }
    }

    /// Schedule group `g`'s next arrival, if it has one before the end.
    fn schedule_arrival(&mut self, g: usize) {
        if let Some(t) = self.sources[g].next_start().filter(|&t| t < self.cfg.duration_ns) {
            self.q.schedule(t, Event::GroupArrival(g as u32));
        }
    }

    /// Flow `f` arrives now: a connection that opens first sends its SYN, any
    /// other flow starts at once.
    fn open_flow(&mut self, now: Time, f: u32) {
        let group = &self.cfg.flows[self.flows[f as usize].row.group as usize];
        if !group.handshake || group.app.is_udp() {
            self.start_flow(now, f, None);
            return;
        }
        self.hot[f as usize].hs = Some(Box::new(HandshakeRt { connect: Some(Connect::new(now)), listen: Listen::default() }));
        self.send_handshake(now, f, HandshakeKind::Syn, 0);
        self.q.schedule(now + crate::tcp::rtt::RTO_INIT, Event::HandshakeTimer(f));
    }

    /// Send a handshake segment of flow `f` (TSval now, echoing `tsecr`).
    fn send_handshake(&mut self, now: Time, f: u32, kind: HandshakeKind, tsecr: Time) {
        self.stats.handshake_pkts_sent += 1;
        let path = &self.flows[f as usize].path;
        let (route, wire_bytes) = match kind {
            HandshakeKind::Syn => (path.fwd_route, SYN_WIRE_BYTES),
            HandshakeKind::SynAck => (path.rev_route, SYN_WIRE_BYTES),
            HandshakeKind::Ack => (path.fwd_route, HEADER_BYTES),
        };
        let first = self.routes.hops(route)[0];
        let payload = Payload::Handshake(Handshake { kind, tsval: now, tsecr });
        self.enqueue(now, first, Packet { flow: f, wire_bytes, route, hop: 0, ecn: Ecn::NotEct, payload });
    }

    /// A handshake segment of flow `f` reached its end host.
    fn handshake_arrived(&mut self, now: Time, f: u32, h: Handshake) {
        let slot = &mut self.flows[f as usize];
        // An abandoned or finished connection: late handshake segments just arrive.
        let Some(hs) = self.hot[f as usize].hs.as_deref_mut() else { return };
        match h.kind {
            HandshakeKind::Syn => {
                if let Some(tsecr) = hs.listen.on_syn(now, h.tsval) {
                    let timer = hs.listen.timer();
                    self.send_handshake(now, f, HandshakeKind::SynAck, tsecr);
                    if let Some(t) = timer {
                        self.q.schedule(t, Event::HandshakeTimer(f));
                    }
                }
            }
            HandshakeKind::SynAck => match hs.connect.take() {
                Some(c) => {
                    // SYN_SENT → ESTABLISHED: ACK at once, then send.
                    let rtt = c.rtt_sample(now, h.tsecr);
                    slot.row.setup_ns = Some(now - slot.row.start_ns);
                    slot.row.syn_retrans = c.retransmits;
                    self.send_handshake(now, f, HandshakeKind::Ack, h.tsval);
                    self.start_flow(now, f, Some((rtt, c.restarts_at_one_segment())));
                }
                // A resent SYN-ACK reached an established client: it ACKs again.
                None => self.send_handshake(now, f, HandshakeKind::Ack, h.tsval),
            },
            HandshakeKind::Ack => self.server_acked(now, f, Some(h.tsecr)),
        }
    }

    /// The server got the client's ACK (echoing `tsecr`) or a data segment: its
    /// pending request completes, and its RTT sample is the receiver's estimate.
    fn server_acked(&mut self, now: Time, f: u32, tsecr: Option<Time>) {
        let hot = &mut self.hot[f as usize];
        let Some(hs) = hot.hs.as_deref_mut() else { return };
        let rtt = hs.listen.on_ack(now, tsecr);
        if hs.connect.is_none() && hs.listen.established {
            hot.hs = None;
        }
        if let (Some(rtt), Some(rt)) = (rtt, hot.rt.as_deref_mut()) {
            rt.receiver.set_rtt_hint(rtt);
        }
    }

    /// A handshake timer of flow `f` may be due: the client resends its SYN or
    /// gives up, the server resends its SYN-ACK or drops the request.
    fn handshake_timer(&mut self, now: Time, f: u32) {
        let slot = &mut self.flows[f as usize];
        let Some(hs) = self.hot[f as usize].hs.as_deref_mut() else { return };
        if let Some(c) = hs.connect.as_mut().filter(|c| c.timer <= now) {
            match c.on_timer(now) {
                SynTimeout::Resend => {
                    let t = c.timer;
                    self.send_handshake(now, f, HandshakeKind::Syn, 0);
                    self.q.schedule(t, Event::HandshakeTimer(f));
                }
                SynTimeout::Fail => {
                    slot.row.setup_failed = true;
                    slot.row.syn_retrans = c.retransmits;
                    self.hot[f as usize].hs = None;
                    self.events.push(now, "connect_failed", f as i64, "", "", f64::NAN, f64::NAN);
                    return;
                }
            }
        }
        let Some(hs) = self.hot[f as usize].hs.as_deref_mut() else { return };
        if let Some(tsecr) = hs.listen.on_timer(now) {
            let t = hs.listen.timer();
            self.send_handshake(now, f, HandshakeKind::SynAck, tsecr);
            if let Some(t) = t {
                self.q.schedule(t, Event::HandshakeTimer(f));
            }
        }
    }

    /// Flow `f` starts now: its TCP endpoints come to life and send (or its UDP
    /// source starts sending). `opened`: the handshake's RTT sample and whether the
    /// transfer starts at cwnd 1 (see `Sender::open_from_handshake`).
    fn start_flow(&mut self, now: Time, f: u32, opened: Option<(Time, bool)>) {
        if self.cfg.flows[self.flows[f as usize].row.group as usize].app.is_udp() {
            self.flows[f as usize].udp = Some(Box::default());
            self.live.insert(f);
            self.stats.max_concurrent_flows = self.stats.max_concurrent_flows.max(self.live.len() as u64);
            self.events.push(now, "flow_start", f as i64, "", "", f64::NAN, f64::NAN);
            self.udp_send(now, f);
            return;
        }
        let rt = match self.build_flow(f) {
            Ok(rt) => Box::new(rt),
            Err(e) => {
                self.error = Some(e);
                return;
            }
        };
        let hot = &mut self.hot[f as usize];
        hot.ecn = rt.sender.params().ecn;
        hot.rt = Some(rt);
        self.live.insert(f);
        self.stats.max_concurrent_flows = self.stats.max_concurrent_flows.max(self.live.len() as u64);
        self.events.push(now, "flow_start", f as i64, "", "", f64::NAN, f64::NAN);
        let mut out = std::mem::take(&mut self.seg_buf);
        let sender = &mut self.hot[f as usize].rt.as_deref_mut().expect("just built").sender;
        if let Some((rtt, cwnd_one)) = opened {
            sender.open_from_handshake(now, rtt, cwnd_one);
        }
        sender.start(now, &mut out);
        self.emit_segments(now, f, &mut out);
        self.seg_buf = out;
        if matches!(self.cfg.flows[self.flows[f as usize].row.group as usize].app, App::RateLimited { .. }) {
            self.app_write(now, f);
        }
        self.after_sender(now, f);
    }

    /// A rate-limited application writes what is due by `now`, then waits a tick
    /// (or for its next on period).
    fn app_write(&mut self, now: Time, f: u32) {
        let slot = &mut self.flows[f as usize];
        let App::RateLimited { rate_bps, on_ns, off_ns } = self.cfg.flows[slot.row.group as usize].app else { return };
        let Some(flow) = self.hot[f as usize].rt.as_deref_mut() else { return };
        let start = slot.row.start_ns;
        let elapsed = now - start;
        // Time spent in on periods so far, and when the application next writes.
        let (on_time, next) = match (on_ns, off_ns) {
            (Some(on), Some(off)) => {
                let (k, into) = (elapsed / (on + off), elapsed % (on + off));
                let on_time = k * on + into.min(on);
                let next = if into < on { now + APP_WRITE_TICK.min(on - into) } else { start + (k + 1) * (on + off) };
                (on_time, next)
            }
            _ => (elapsed, now + APP_WRITE_TICK),
        };
        let due_bytes = (rate_bps as u128 * on_time as u128 / 8 / 1_000_000_000) as u64;
        let due = due_bytes / slot.row.mss as u64;
        if due > flow.app_segs {
            let mut out = std::mem::take(&mut self.seg_buf);
            flow.sender.app_write(now, due - flow.app_segs, &mut out);
            flow.app_segs = due;
            self.emit_segments(now, f, &mut out);
            self.seg_buf = out;
            self.after_sender(now, f);
        }
        let done = self.hot[f as usize].rt.as_deref().is_none_or(|r| r.sender.is_stopped() || r.sender.is_complete());
        if !done && next < self.cfg.duration_ns {
            self.q.schedule(next, Event::AppWrite(f));
        }
    }

    /// A UDP source sends a datagram if its rate is above 0 now, and wakes at its
    /// next datagram or rate change.
    fn udp_send(&mut self, now: Time, f: u32) {
        let slot = &mut self.flows[f as usize];
        let app = &self.cfg.flows[slot.row.group as usize].app;
        let App::Udp { packet_bytes, .. } = *app else { return };
        let Some(u) = slot.udp.as_deref_mut() else { return };
        if u.stopped {
            return;
        }
        let (rate, change) = crate::traffic::udp_rate_at(app, slot.row.start_ns, now);
        let next = if rate > 0 {
            let p = Packet {
                flow: f,
                wire_bytes: packet_bytes,
                route: slot.path.fwd_route,
                hop: 0,
                ecn: Ecn::NotEct,
                payload: Payload::Datagram { seq: u.seq },
            };
            u.seq += 1;
            slot.row.counters.segs_sent += 1;
            let gap = ((packet_bytes as u128 * 8 * 1_000_000_000) / rate as u128).max(1) as Time;
            let first = self.routes.hops(p.route)[0];
            self.stats.data_pkts_sent += 1;
            self.enqueue(now, first, p);
            Some(change.map_or(now + gap, |c| c.min(now + gap)))
        } else {
            change
        };
        if let Some(t) = next.filter(|&t| t < self.cfg.duration_ns) {
            self.q.schedule(t, Event::UdpSend(f));
        }
    }

    /// Flow `f` finished: keep its row, free its TCP state.
    fn retire(&mut self, f: u32) {
        let slot = &mut self.flows[f as usize];
        let hot = &mut self.hot[f as usize];
        let rt = hot.rt.take().expect("retiring a running flow");
        hot.hs = None;
        (hot.sender_wake, hot.receiver_wake) = (NOT_ARMED, NOT_ARMED);
        self.live.remove(&f);
        fill_row(&mut slot.row, &rt, !self.warmup_passed && self.cfg.warmup_ns > 0);
        let timers = self.sender_timer_slot(f);
        self.q.cancel_timer(timers);
        self.q.cancel_timer(timers + 1);
    }

    fn resched_receiver(&mut self, f: u32) {
        let slot = self.sender_timer_slot(f) + 1;
        let hot = &mut self.hot[f as usize];
        let Some(flow) = hot.rt.as_deref() else { return };
        if let Some(t) = flow.receiver.deadline() {
            debug_assert_eq!(self.q.timer_at(slot), Some(hot.receiver_wake).filter(|&w| w != NOT_ARMED));
            if hot.receiver_wake > t {
                debug_assert!(t != NOT_ARMED);
                self.q.set_timer(slot, t, Event::ReceiverTimer(f));
                hot.receiver_wake = t;
            }
        }
    }

    /// Timer slots ([`EventQueue::set_timer`]): link `l`'s shaper poll is slot `l`;
    /// flow `f`'s sender timer comes after the links' slots and its receiver's
    /// (delayed ACK) timer right after that.
    fn sender_timer_slot(&self, f: u32) -> u32 {
        self.links.len() as u32 + 2 * f
    }

    fn sample(&mut self, now: Time) {
        // With thousands of flows each one's state has left the caches: load the flow
        // a few places ahead while this one is recorded (a cache hint only).
        let prefetch = self.live.len() >= PREFETCH_FROM_FLOWS;
        let mut ahead = self.live.iter().skip(SAMPLE_PREFETCH_AHEAD);
        for &i in &self.live {
            if let (true, Some(&j)) = (prefetch, ahead.next()) {
                if let Some(rt) = self.hot[j as usize].rt.as_deref() {
                    rt.prefetch_for_sample();
                }
            }
            let slot = &self.flows[i as usize];
            let Some(f) = self.hot[i as usize].rt.as_deref() else {
                if let Some(u) = slot.udp.as_deref() {
                    self.flow_ts.push(&FlowSample {
                        time_ns: now,
                        flow_id: i as u64,
                        delivered_bytes: u.delivered_bytes,
                        cwnd_pkts: 0,
                        ssthresh_pkts: -1,
                        srtt_ns: 0,
                        min_rtt_ns: -1,
                        pacing_rate_bps: 0,
                        inflight_pkts: 0,
                        inflight_bytes: 0,
                        retrans_total: 0,
                        lost_total: 0,
                        ca_state: "udp",
                        cc: Default::default(),
                    });
                }
                continue;
            };
            let s = &f.sender;
            let tp = &s.tp;
            let cc = s.cca().metrics(tp);
            self.flow_ts.push(&FlowSample {
                time_ns: now,
                flow_id: i as u64,
                delivered_bytes: f.receiver.delivered_bytes,
                cwnd_pkts: tp.cwnd as u64,
                ssthresh_pkts: if tp.ssthresh >= INFINITE_SSTHRESH { -1 } else { tp.ssthresh as i64 },
                srtt_ns: s.srtt(),
                min_rtt_ns: s.min_rtt().map_or(-1, |m| m as i64),
                pacing_rate_bps: if tp.pacing_enabled { tp.pacing_rate_bps() } else { 0 },
                inflight_pkts: s.in_flight() as u64,
                inflight_bytes: s.in_flight() as u64 * tp.mss as u64,
                retrans_total: s.counters.segs_retrans,
                lost_total: s.counters.segs_lost,
                ca_state: tp.ca_state.name(),
                cc,
            });
        }
        for l in self.links.iter_mut().filter(|l| l.recorded) {
            // A link with departures at enqueue counts the packets started by now first.
            l.advance(now);
            let sojourn = l.queue.take_sojourn();
            self.queue_ts.push(&QueueSample {
                time_ns: now,
                link: &l.name,
                backlog_bytes: l.queue.backlog_bytes(),
                backlog_pkts: l.queue.backlog_pkts(),
                stats: l.queue.stats,
                sojourn,
                aqm: l.queue.aqm_state(),
            });
            self.sojourn.extend(&l.name, &mut l.queue.sojourn_samples);
        }
        if let Some(spill) = self.spill.as_mut() {
            spill.offer_all(&mut self.flow_ts, &mut self.queue_ts, &mut self.sojourn, &mut self.events);
        }
    }

    fn finish(mut self, interrupted: bool) -> RunOutput {
        self.stats.data_pkts_in_network = self.links.iter().map(|l| l.data_in_link).sum::<u64>()
            + self.hosts.iter().map(|h| h.rx.packets.iter().filter(|p| p.is_data()).count() as u64).sum::<u64>();
        self.stats.handshake_pkts_in_network = self.links.iter().map(|l| l.handshake_in_link).sum::<u64>()
            + self.hosts.iter().map(|h| h.rx.packets.iter().filter(|p| p.is_handshake()).count() as u64).sum::<u64>();
        let duration = self.stats.sim_time_ns;
        for (slot, hot) in self.flows.iter_mut().zip(&mut self.hot) {
            if let Some(rt) = hot.rt.take() {
                fill_row(&mut slot.row, &rt, false);
            }
            if let Some(u) = slot.udp.take() {
                slot.row.delivered_bytes = u.delivered_bytes;
                slot.row.delivered_bytes_at_warmup = u.delivered_at_warmup;
            }
        }
        let rows: Vec<FlowRow> = self.flows.drain(..).map(|s| s.row).collect();
        let names = FlowNames {
            senders: &self.sender_names,
            groups: self.cfg.flows.iter().map(|f| f.group.as_str()).collect(),
            ccas: self.cfg.flows.iter().map(|f| std::iter::once(f.cca.as_str()).chain(f.cca_mix.iter().map(|c| c.cca.as_str())).collect()).collect(),
        };
        RunOutput {
            flows: flows_table(&rows, &names, duration),
            flow_ts: self.flow_ts.finish(),
            queue_ts: self.queue_ts.finish(),
            links: {
                for l in &mut self.links {
                    l.close(duration);
                }
                links_table(&self.links)
            },
            sojourn: {
                for l in self.links.iter_mut().filter(|l| l.recorded) {
                    self.sojourn.extend(&l.name, &mut l.queue.sojourn_samples);
                }
                std::mem::take(&mut self.sojourn).finish()
            },
            events: self.events.finish(),
            stats: self.stats,
            interrupted,
        }
    }
}

/// Copy what a flow's table row needs out of its running state.
/// `before_warmup`: the flow ended before the warmup instant, so it delivered
/// everything before it.
fn fill_row(row: &mut FlowRow, rt: &FlowRt, before_warmup: bool) {
    row.delivered_bytes = rt.receiver.delivered_bytes;
    row.delivered_bytes_at_warmup = if before_warmup { rt.receiver.delivered_bytes } else { rt.delivered_at_warmup };
    row.counters_at_warmup = if before_warmup { rt.sender.counters } else { rt.counters_at_warmup };
    row.segs_delivered_at_warmup = if before_warmup { rt.sender.tp.delivered } else { rt.segs_delivered_at_warmup };
    row.completed_at = rt.receiver.completed_at;
    row.counters = rt.sender.counters;
    row.segs_delivered = rt.sender.tp.delivered;
    row.min_rtt_ns = rt.sender.min_rtt();
    row.srtt_ns = rt.sender.srtt();
}
