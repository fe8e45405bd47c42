//! The experiment: builds the world from an [`ExperimentConfig`] (dumbbell
//! topology, flows with their CCAs), runs the event loop to the configured
//! duration, and returns the output tables and run statistics.
//!
//! Dumbbell layout (links are unidirectional; ACKs use the mirror-image path):
//!
//! ```text
//! sender i ──access_fwd[i]──▶ A ══bottleneck══▶ B ──egress_fwd[i]──▶ receiver i
//! sender i ◀──access_rev[i]── A ◀═bottleneck_rev═ B ◀──egress_rev[i]── receiver i
//! ```
//!
//! Sender i's base RTT is carried by its access links ((rtt − 2·bottleneck
//! delay)/2 each way); egress links have no delay.

use rand::Rng;

use crate::cc;
use crate::config::{ExperimentConfig, FlowConfig, QdiscConfig, TopologyConfig};
use crate::net::{Ack, Ecn, Link, LinkId, Packet, Payload, Segment, HEADER_BYTES};
use crate::net::link::LinkWake;
use crate::qdisc::Queue;
use crate::sim::{rng::Component, stream, EventQueue};
use crate::tcp::sender::{SenderEvent, SenderParams, INFINITE_SSTHRESH};
use crate::tcp::{Receiver, Sender};
use crate::trace::recorder::{EventsBuilder, FlowSample, FlowTsBuilder, QueueSample, QueueTsBuilder};
use crate::trace::{Column, Interner, Table};
use crate::units::Time;

/// Queue limit of the reverse bottleneck when not configured (Linux's default
/// `txqueuelen` of 1000 packets).
pub const DEFAULT_REVERSE_QUEUE_PKTS: u64 = 1000;

#[derive(Debug, Clone, Copy)]
enum Event {
    TxDone(LinkId),
    Arrival(LinkId),
    SenderTimer(u32),
    ReceiverTimer(u32),
    FlowStart(u32),
    FlowStop(u32),
    RateChange(LinkId, u32),
    Sample,
    Warmup,
}

#[derive(Debug)]
struct FlowRt {
    sender: Sender,
    receiver: Receiver,
    fwd_route: u32,
    rev_route: u32,
    ecn: bool,
    start: Time,
    started: bool,
    /// Times of this flow's sender / receiver wakeups still in the event queue.
    /// A new wakeup is scheduled only if none of these is at or before it (an
    /// early wakeup just re-evaluates), so each flow keeps O(1) pending events.
    sender_wakes: Vec<Time>,
    receiver_wakes: Vec<Time>,
    delivered_at_warmup: u64,
    completion_recorded: bool,
    finished_at: Option<Time>,
}

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
    pub sim_time_ns: u64,
    /// Largest number of pending events at any time (scales with components).
    pub max_pending_events: u64,
}

/// Everything a run produces.
#[derive(Debug, Clone)]
pub struct RunOutput {
    pub flows: Table,
    pub flow_ts: Table,
    pub queue_ts: Table,
    pub events: Table,
    pub stats: RunStats,
}

struct World<'a> {
    cfg: &'a ExperimentConfig,
    q: EventQueue<Event>,
    links: Vec<Link>,
    routes: Vec<[LinkId; 3]>,
    flows: Vec<FlowRt>,
    flow_ts: FlowTsBuilder,
    queue_ts: QueueTsBuilder,
    events: EventsBuilder,
    stats: RunStats,
    seg_buf: Vec<Segment>,
}

/// Run an experiment to completion.
pub fn run(cfg: &ExperimentConfig) -> Result<RunOutput, String> {
    cfg.validate()?;
    let mut world = World::build(cfg)?;
    world.run();
    Ok(world.finish())
}

/// Parse the JSON configuration and run it.
pub fn run_json(text: &str) -> Result<RunOutput, String> {
    let cfg = ExperimentConfig::from_json(text)?;
    run(&cfg)
}

fn ack_wire_bytes(a: &Ack) -> u32 {
    // SACK option: kind+len (2) + 8 per block, padded with two NOPs (Linux).
    HEADER_BYTES + if a.n_sack > 0 { 4 + 8 * a.n_sack as u32 } else { 0 }
}

impl<'a> World<'a> {
    fn build(cfg: &'a ExperimentConfig) -> Result<Self, String> {
        let TopologyConfig::Dumbbell(d) = &cfg.topology;
        let mut links = Vec::new();
        let link_rng = |i: usize| stream(cfg.seed, Component::LinkLoss, i as u64);
        let bn = &d.bottleneck;
        let mut fwd = Link::new("bottleneck".into(), bn.rate_bps, bn.delay_ns, bn.loss, Queue::from_config(&bn.qdisc), link_rng(0));
        fwd.recorded = true;
        links.push(fwd);
        let rev_cfg = d.reverse_bottleneck.clone();
        let mut rev = match &rev_cfg {
            Some(r) => Link::new("bottleneck_rev".into(), r.rate_bps, r.delay_ns, r.loss, Queue::from_config(&r.qdisc), link_rng(1)),
            None => Link::new(
                "bottleneck_rev".into(),
                bn.rate_bps,
                bn.delay_ns,
                0.0,
                Queue::from_config(&QdiscConfig::Pfifo { limit_packets: DEFAULT_REVERSE_QUEUE_PKTS }),
                link_rng(1),
            ),
        };
        rev.recorded = true;
        links.push(rev);

        let mut routes = Vec::new();
        for (i, s) in d.senders.iter().enumerate() {
            let one_way = (s.rtt_ns - 2 * bn.delay_ns) / 2;
            let q = || Queue::from_config(&QdiscConfig::Pfifo { limit_packets: s.access_queue_packets });
            let base = links.len() as LinkId;
            let names = ["access_fwd", "egress_fwd", "egress_rev", "access_rev"];
            let delays = [one_way, 0, 0, one_way];
            for (k, (name, delay)) in names.iter().zip(delays).enumerate() {
                links.push(Link::new(format!("{name}:{}", s.name), s.access_rate_bps, delay, 0.0, q(), link_rng(2 + 4 * i + k)));
            }
            routes.push([base, 0, base + 1]); // data: access_fwd, bottleneck, egress_fwd
            routes.push([base + 2, 1, base + 3]); // acks: egress_rev, bottleneck_rev, access_rev
        }

        let mut flows = Vec::with_capacity(cfg.flows.len());
        for (i, f) in cfg.flows.iter().enumerate() {
            flows.push(Self::build_flow(cfg, i, f)?);
        }
        Ok(Self {
            cfg,
            q: EventQueue::new(),
            links,
            routes,
            flows,
            flow_ts: FlowTsBuilder::default(),
            queue_ts: QueueTsBuilder::default(),
            events: EventsBuilder::default(),
            stats: RunStats::default(),
            seg_buf: Vec::new(),
        })
    }

    fn build_flow(cfg: &ExperimentConfig, i: usize, f: &FlowConfig) -> Result<FlowRt, String> {
        let cca = cc::build(&f.cca, &f.cca_params).map_err(|e| format!("flows[{i}].cca: {e}"))?;
        let rwnd_segs = (f.rwnd_bytes / f.mss as u64).clamp(2, u32::MAX as u64) as u32;
        let params = SenderParams {
            mss: f.mss,
            initial_cwnd: f.initial_cwnd,
            rwnd_segs,
            pacing: f.pacing,
            ecn: f.ecn,
            min_rto: f.min_rto_ns,
            size_bytes: f.size_bytes,
        };
        let sender = Sender::new(params, cca, stream(cfg.seed, Component::Cca, i as u64));
        let receiver = Receiver::new(f.delayed_ack, f.mss, f.size_bytes);
        let jitter = if f.start_jitter_ns > 0 {
            stream(cfg.seed, Component::FlowStart, i as u64).gen_range(0..f.start_jitter_ns)
        } else {
            0
        };
        Ok(FlowRt {
            sender,
            receiver,
            fwd_route: 2 * f.sender as u32,
            rev_route: 2 * f.sender as u32 + 1,
            ecn: f.ecn,
            start: f.start_ns + jitter,
            started: false,
            sender_wakes: Vec::new(),
            receiver_wakes: Vec::new(),
            delivered_at_warmup: 0,
            completion_recorded: false,
            finished_at: None,
        })
    }

    fn run(&mut self) {
        let duration = self.cfg.duration_ns;
        for (i, f) in self.flows.iter().enumerate() {
            if f.start < duration {
                self.q.schedule(f.start, Event::FlowStart(i as u32));
            }
            if let Some(stop) = self.cfg.flows[i].stop_ns {
                if stop < duration {
                    self.q.schedule(stop.max(f.start), Event::FlowStop(i as u32));
                }
            }
        }
        let TopologyConfig::Dumbbell(d) = &self.cfg.topology;
        for (idx, &(t, _)) in d.bottleneck.rate_schedule.iter().enumerate() {
            if t < duration {
                self.q.schedule(t, Event::RateChange(0, idx as u32));
            }
        }
        if self.cfg.warmup_ns > 0 && self.cfg.warmup_ns < duration {
            self.q.schedule(self.cfg.warmup_ns, Event::Warmup);
        }
        if self.cfg.sample_interval_ns > 0 {
            self.q.schedule(0, Event::Sample);
        }
        while let Some(t) = self.q.peek_time() {
            if t >= duration {
                break;
            }
            self.stats.max_pending_events = self.stats.max_pending_events.max(self.q.len() as u64);
            let (now, ev) = self.q.pop().expect("peeked");
            self.stats.events_processed += 1;
            self.handle(now, ev);
        }
        self.stats.sim_time_ns = duration;
        if self.cfg.sample_interval_ns > 0 {
            self.sample(duration);
        }
    }

    fn handle(&mut self, now: Time, ev: Event) {
        match ev {
            Event::TxDone(l) => {
                let (arrival, next) = self.links[l as usize].on_tx_done(now);
                if let Some(t) = arrival {
                    self.q.schedule(t, Event::Arrival(l));
                }
                if let LinkWake::TxDone(t) = next {
                    self.q.schedule(t, Event::TxDone(l));
                }
                self.collect_dequeue_drops(now, l);
            }
            Event::Arrival(l) => {
                let (p, next) = self.links[l as usize].on_arrival();
                if let Some(t) = next {
                    self.q.schedule(t, Event::Arrival(l));
                }
                self.forward(now, p);
            }
            Event::SenderTimer(f) => {
                let flow = &mut self.flows[f as usize];
                take_wake(&mut flow.sender_wakes, now);
                let mut out = std::mem::take(&mut self.seg_buf);
                flow.sender.on_timer(now, &mut out);
                self.emit_segments(now, f, &mut out);
                self.seg_buf = out;
                self.after_sender(now, f);
            }
            Event::ReceiverTimer(f) => {
                let flow = &mut self.flows[f as usize];
                take_wake(&mut flow.receiver_wakes, now);
                if let Some(ack) = flow.receiver.on_timer(now) {
                    self.emit_ack(now, f, ack);
                }
                self.resched_receiver(f);
            }
            Event::FlowStart(f) => {
                self.flows[f as usize].started = true;
                self.events.push(now, "flow_start", f as i64, "", "", f64::NAN, f64::NAN);
                let mut out = std::mem::take(&mut self.seg_buf);
                self.flows[f as usize].sender.start(now, &mut out);
                self.emit_segments(now, f, &mut out);
                self.seg_buf = out;
                self.after_sender(now, f);
            }
            Event::FlowStop(f) => {
                self.flows[f as usize].sender.stop();
                self.events.push(now, "flow_stop", f as i64, "", "", f64::NAN, f64::NAN);
                self.after_sender(now, f);
            }
            Event::RateChange(l, idx) => {
                let TopologyConfig::Dumbbell(d) = &self.cfg.topology;
                let rate = d.bottleneck.rate_schedule[idx as usize].1;
                let link = &mut self.links[l as usize];
                let old = link.rate_bps;
                link.set_rate(rate);
                let name = link.name.clone();
                self.events.push(now, "rate_change", -1, &name, "", rate as f64, old as f64);
            }
            Event::Sample => {
                self.sample(now);
                let next = now + self.cfg.sample_interval_ns;
                if next < self.cfg.duration_ns {
                    self.q.schedule(next, Event::Sample);
                }
            }
            Event::Warmup => {
                for f in &mut self.flows {
                    f.delivered_at_warmup = f.receiver.delivered_bytes;
                }
            }
        }
    }

    /// A packet finished a hop: on to the next link, or to its endpoint.
    fn forward(&mut self, now: Time, p: Packet) {
        let route = self.routes[p.route as usize];
        let next_hop = p.hop as usize + 1;
        if next_hop < route.len() {
            let mut p = p;
            p.hop = next_hop as u8;
            self.enqueue(now, route[next_hop], p);
            return;
        }
        let f = p.flow;
        match p.payload {
            Payload::Data(seg) => {
                self.stats.data_pkts_delivered += 1;
                let flow = &mut self.flows[f as usize];
                if let Some(ack) = flow.receiver.on_segment(now, &seg, p.ecn) {
                    self.emit_ack(now, f, ack);
                }
                let flow = &mut self.flows[f as usize];
                if let (Some(t), false) = (flow.receiver.completed_at, flow.completion_recorded) {
                    flow.completion_recorded = true;
                    let fct = t - flow.start;
                    self.events.push(t, "flow_complete", f as i64, "", "", fct as f64, f64::NAN);
                }
                self.resched_receiver(f);
            }
            Payload::Ack(ack) => {
                self.stats.ack_pkts_delivered += 1;
                let mut out = std::mem::take(&mut self.seg_buf);
                self.flows[f as usize].sender.on_ack(now, &ack, &mut out);
                self.emit_segments(now, f, &mut out);
                self.seg_buf = out;
                self.after_sender(now, f);
            }
        }
    }

    fn enqueue(&mut self, now: Time, l: LinkId, p: Packet) {
        match self.links[l as usize].enqueue(p, now) {
            Ok(LinkWake::TxDone(t)) => self.q.schedule(t, Event::TxDone(l)),
            Ok(LinkWake::None) => {}
            Err((p, reason)) => self.record_drop(now, l, &p, reason.name()),
        }
    }

    fn record_drop(&mut self, now: Time, l: LinkId, p: &Packet, reason: &str) {
        if p.is_data() {
            self.stats.data_pkts_dropped += 1;
        } else {
            self.stats.ack_pkts_dropped += 1;
        }
        let name = &self.links[l as usize].name;
        let seg = match p.payload {
            Payload::Data(s) => s.seg as f64,
            Payload::Ack(a) => a.cum as f64,
        };
        self.events.push(now, "drop", p.flow as i64, name, reason, seg, if p.is_data() { 1.0 } else { 0.0 });
    }

    fn collect_dequeue_drops(&mut self, now: Time, l: LinkId) {
        if self.links[l as usize].queue.dequeue_drops.is_empty() {
            return;
        }
        let drops = std::mem::take(&mut self.links[l as usize].queue.dequeue_drops);
        for (p, reason) in &drops {
            if p.is_data() {
                self.links[l as usize].note_data_dropped_in_queue();
            }
            self.record_drop(now, l, p, reason.name());
        }
    }

    fn emit_segments(&mut self, now: Time, f: u32, out: &mut Vec<Segment>) {
        let flow = &self.flows[f as usize];
        let route = flow.fwd_route;
        let ecn = if flow.ecn { Ecn::Ect } else { Ecn::NotEct };
        let first = self.routes[route as usize][0];
        for seg in out.drain(..) {
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
        let route = self.flows[f as usize].rev_route;
        let first = self.routes[route as usize][0];
        let p = Packet { flow: f, wire_bytes: ack_wire_bytes(&ack), route, hop: 0, ecn: Ecn::NotEct, payload: Payload::Ack(ack) };
        self.enqueue(now, first, p);
    }

    /// Record sender events and schedule its next wakeup.
    fn after_sender(&mut self, now: Time, f: u32) {
        let flow = &mut self.flows[f as usize];
        for (t, ev) in flow.sender.events.drain(..) {
            match ev {
                SenderEvent::Reduction { reason, cwnd_before, ssthresh } => {
                    self.events.push(t, "cwnd_reduction", f as i64, "", reason, cwnd_before as f64, ssthresh as f64)
                }
                SenderEvent::Undo { cwnd } => self.events.push(t, "undo", f as i64, "", "", cwnd as f64, f64::NAN),
                SenderEvent::Rto { backoff } => self.events.push(t, "rto", f as i64, "", "", backoff as f64, f64::NAN),
            }
        }
        let flow = &mut self.flows[f as usize];
        if flow.finished_at.is_none() && flow.sender.is_finished() {
            flow.finished_at = Some(now);
        }
        if let Some(t) = flow.sender.next_wakeup() {
            let t = t.max(now);
            if !flow.sender_wakes.iter().any(|&w| w <= t) {
                flow.sender_wakes.push(t);
                self.q.schedule(t, Event::SenderTimer(f));
            }
        }
    }

    fn resched_receiver(&mut self, f: u32) {
        let flow = &mut self.flows[f as usize];
        if let Some(t) = flow.receiver.delack_deadline {
            if !flow.receiver_wakes.iter().any(|&w| w <= t) {
                flow.receiver_wakes.push(t);
                self.q.schedule(t, Event::ReceiverTimer(f));
            }
        }
    }

    fn sample(&mut self, now: Time) {
        for (i, f) in self.flows.iter().enumerate() {
            if !f.started || f.finished_at.is_some_and(|t| t < now) {
                continue;
            }
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
        for l in self.links.iter().filter(|l| l.recorded) {
            self.queue_ts.push(&QueueSample {
                time_ns: now,
                link: &l.name,
                backlog_bytes: l.queue.backlog_bytes(),
                backlog_pkts: l.queue.backlog_pkts(),
                stats: l.queue.stats,
            });
        }
    }

    fn finish(mut self) -> RunOutput {
        self.stats.data_pkts_in_network = self.links.iter().map(|l| l.data_in_link).sum();
        let duration = self.cfg.duration_ns;
        let TopologyConfig::Dumbbell(d) = &self.cfg.topology;
        let mut cols = FlowsColumns::default();
        for (i, (f, fc)) in self.flows.iter().zip(&self.cfg.flows).enumerate() {
            let c = &f.sender.counters;
            let completed_at = f.receiver.completed_at;
            let end = completed_at
                .or(fc.stop_ns.map(|s| s.min(duration)))
                .unwrap_or(duration)
                .max(f.start.min(duration));
            cols.flow_id.push(i as u64);
            cols.sender.push(fc.sender as u64);
            cols.sender_name.push(d.senders[fc.sender].name.as_str());
            cols.group.push(fc.group.as_str());
            cols.cca.push(fc.cca.as_str());
            cols.start_ns.push(f.start);
            cols.stop_ns.push(fc.stop_ns.map_or(-1, |s| s as i64));
            cols.size_bytes.push(fc.size_bytes.map_or(-1, |s| s as i64));
            cols.base_rtt_ns.push(d.senders[fc.sender].rtt_ns);
            cols.mss.push(fc.mss as u64);
            cols.delivered_bytes.push(f.receiver.delivered_bytes);
            cols.delivered_bytes_at_warmup.push(f.delivered_at_warmup);
            cols.completed.push(completed_at.is_some());
            cols.fct_ns.push(completed_at.map_or(-1, |t| (t - f.start) as i64));
            cols.end_ns.push(end);
            cols.segs_sent.push(c.segs_sent);
            cols.segs_retrans.push(c.segs_retrans);
            cols.segs_lost.push(c.segs_lost);
            cols.segs_delivered.push(f.sender.tp.delivered);
            cols.cwnd_reductions.push(c.cwnd_reductions);
            cols.rtos.push(c.rtos);
            cols.undos.push(c.undos);
            cols.min_rtt_ns.push(f.sender.min_rtt().map_or(-1, |m| m as i64));
            cols.srtt_ns.push(f.sender.srtt());
        }
        RunOutput {
            flows: cols.finish(),
            flow_ts: self.flow_ts.finish(),
            queue_ts: self.queue_ts.finish(),
            events: self.events.finish(),
            stats: self.stats,
        }
    }
}

/// Forget the pending wakeup at `now` (it is being handled).
fn take_wake(wakes: &mut Vec<Time>, now: Time) {
    if let Some(i) = wakes.iter().position(|&w| w == now) {
        wakes.swap_remove(i);
    }
}

#[derive(Default)]
struct FlowsColumns<'s> {
    flow_id: Vec<u64>,
    sender: Vec<u64>,
    sender_name: Vec<&'s str>,
    group: Vec<&'s str>,
    cca: Vec<&'s str>,
    start_ns: Vec<u64>,
    stop_ns: Vec<i64>,
    size_bytes: Vec<i64>,
    base_rtt_ns: Vec<u64>,
    mss: Vec<u64>,
    delivered_bytes: Vec<u64>,
    delivered_bytes_at_warmup: Vec<u64>,
    completed: Vec<bool>,
    fct_ns: Vec<i64>,
    end_ns: Vec<u64>,
    segs_sent: Vec<u64>,
    segs_retrans: Vec<u64>,
    segs_lost: Vec<u64>,
    segs_delivered: Vec<u64>,
    cwnd_reductions: Vec<u64>,
    rtos: Vec<u64>,
    undos: Vec<u64>,
    min_rtt_ns: Vec<i64>,
    srtt_ns: Vec<u64>,
}

fn dict(values: &[&str]) -> Column {
    let mut interner = Interner::default();
    let codes = values.iter().map(|v| interner.code(v)).collect();
    Column::Dict { codes, values: interner.into_values() }
}

impl<'s> FlowsColumns<'s> {
    fn finish(self) -> Table {
        Table {
            columns: vec![
                ("flow_id", Column::U64(self.flow_id)),
                ("sender", Column::U64(self.sender)),
                ("sender_name", dict(&self.sender_name)),
                ("group", dict(&self.group)),
                ("cca", dict(&self.cca)),
                ("start_ns", Column::U64(self.start_ns)),
                ("stop_ns", Column::I64(self.stop_ns)),
                ("size_bytes", Column::I64(self.size_bytes)),
                ("base_rtt_ns", Column::U64(self.base_rtt_ns)),
                ("mss", Column::U64(self.mss)),
                ("delivered_bytes", Column::U64(self.delivered_bytes)),
                ("delivered_bytes_at_warmup", Column::U64(self.delivered_bytes_at_warmup)),
                ("completed", Column::Bool(self.completed)),
                ("fct_ns", Column::I64(self.fct_ns)),
                ("end_ns", Column::U64(self.end_ns)),
                ("segs_sent", Column::U64(self.segs_sent)),
                ("segs_retrans", Column::U64(self.segs_retrans)),
                ("segs_lost", Column::U64(self.segs_lost)),
                ("segs_delivered", Column::U64(self.segs_delivered)),
                ("cwnd_reductions", Column::U64(self.cwnd_reductions)),
                ("rtos", Column::U64(self.rtos)),
                ("undos", Column::U64(self.undos)),
                ("min_rtt_ns", Column::I64(self.min_rtt_ns)),
                ("srtt_ns", Column::U64(self.srtt_ns)),
            ],
        }
    }
}
