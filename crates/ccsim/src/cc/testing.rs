//! A timeline harness for tests of congestion control algorithms, driving the
//! **real** TCP sender ([`Sender`]) and receiver ([`Receiver`]) over a scripted path.
//!
//! [`TimelineHarness`] owns one `Sender` (with the CCA under test), one `Receiver`
//! (an ACK for every segment: no delayed ACKs) and an ideal path: a fixed two-way
//! delay (`with_rtt`), optionally a bottleneck that returns at most `pps` ACKs per
//! second (`with_bottleneck_pps`), and no loss unless a test injects it. Everything
//! the CCA sees — hook order, rate samples, RACK, PRR, RTO, undo — is the sender's
//! own code; the harness only decides when packets arrive, which are lost, and how
//! much data the application offers. Tests read like a timeline (quiche
//! `TestSender`, s2n-quic's CC tests, packetdrill):
//!
//! ```
//! use ccsim::cc::{build, testing::TimelineHarness};
//! use ccsim::units::ms;
//!
//! let mut h = TimelineHarness::new(build("reno", &serde_json::Value::Null).unwrap(), 1448, 10)
//!     .with_rtt(ms(50));
//! h.run_rounds(1);                 // send a window, ACK it packet by packet
//! assert_eq!(h.tp().cwnd, 20);     // slow start doubled it
//! h.lose(1);                       // drop one; the sender detects it (RACK) and enters Recovery
//! assert_eq!(h.tp().ssthresh, 10);
//! h.end_recovery();                // run the path until the sender is back in Open
//! assert_eq!(h.tp().cwnd, 10);     // cwnd = ssthresh
//! ```
//!
//! # API (every CCA's tests use it)
//!
//! | call | what it does |
//! |---|---|
//! | `new(cca, mss, initial_cwnd)` | a started connection (`init` called) whose application has written nothing yet |
//! | `with_rtt(t)` / `set_rtt(t)` | path RTT for packets sent from now on (default 100 ms) |
//! | `with_bottleneck_pps(r)` / `set_bottleneck_pps(Some(r))` | ACKs return at most `r` per second |
//! | `with_cwnd_clamp(n)`, `with_pacing(bool)` | `tp.cwnd_clamp`, `tp.pacing_enabled` |
//! | `now()`, `advance(d)` | the clock; `advance` fires the sender's timers that fall due (RTO, TLP, RACK, pacing) but delivers no ACK |
//! | `send(n)` | the application writes `n` segments; the sender sends what cwnd and pacing allow (lost ones first); returns segments sent |
//! | `fill_window()` | the application becomes a bulk writer; the sender sends what it may now |
//! | `ack(n)`, `ack_ece(n)` | the `n` oldest segments in flight arrive (CE-marked for `ack_ece`); the sender gets one ACK covering them |
//! | `step()` | bulk: run the path (ACKs, sender timers) up to and including the next ACK |
//! | `run_rounds(k)` | `k` round trips of a bulk sender, one ACK per packet |
//! | `lose(n)` | the path drops the `n` oldest segments in flight; run the path until the sender has reacted (Recovery or Loss) |
//! | `end_recovery()` | run the path until the sender is back in Open |
//! | `rto()` | the path blackholes what is in flight until the sender's RTO fires |
//! | `undo()` | the segments `lose`/`rto` dropped were only delayed: they arrive now, then the path runs until the sender is in Open |
//! | `mark_app_limited()` | the application has no more data (`tcp_rate_check_app_limited` runs in the sender) |
//! | `tp()`, `tp_mut()`, `cca()`, `sender()` | inspect or poke the state |
//! | `last_sample()` | the `AckSample` of the last ACK |
//! | `violations()` | hook-contract breaches seen (cwnd 0 or above the clamp, pacing rate set to 0, ssthresh 0) |
//!
//! The sender clamps cwnd to `[1, cwnd_clamp]` after the hooks; the audit wrapper
//! around the CCA records a [`TimelineHarness::violations`] entry (and clamps, so the
//! next hook sees a legal value) whenever a hook leaves it outside.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use super::{AckSample, BoxedCca, CaEvent, CaState, CcMetrics, CongestionControl, TcpState};
use crate::net::{Ack, Ecn, Segment};
use crate::sim::rng::{stream, Component};
use crate::tcp::sender::{Sender, SenderParams};
use crate::tcp::Receiver;
use crate::units::{ms, Time, NS_PER_SEC};

/// Default path RTT of the harness.
const DEFAULT_RTT: Time = ms(100);
/// Bound on the events one harness call may process (a stuck sender fails loudly).
const MAX_EVENTS_PER_CALL: usize = 1_000_000;

/// A [`TcpState`] as a fresh connection has it (Linux `tcp_init_sock` defaults:
/// infinite ssthresh, no RTT sample yet, cwnd clamp "unlimited").
pub fn tcp_state(mss: u32, initial_cwnd: u32) -> TcpState {
    TcpState::new(mss, initial_cwnd, u32::MAX, false, stream(0, Component::Cca, 0))
}

/// What the audit wrapper saw the CCA do wrong.
#[derive(Debug, Default)]
struct Audit {
    violations: Vec<String>,
}

/// Wraps the CCA under test: delegates every hook and checks the sender's contract
/// on what the hook wrote.
#[derive(Debug)]
struct AuditedCca {
    inner: BoxedCca,
    audit: Arc<Mutex<Audit>>,
}

impl AuditedCca {
    fn checked<R>(&mut self, name: &str, tp: &mut TcpState, f: impl FnOnce(&mut BoxedCca, &mut TcpState) -> R) -> R {
        let pacing_before = tp.pacing_rate;
        let r = f(&mut self.inner, tp);
        let mut audit = self.audit.lock().expect("audit lock");
        // Pacing rate 0 is allowed only while the CCA's own bandwidth model is exactly
        // 0 (Linux BBR's integer arithmetic, kept; 0 = unpaced), judged right after the
        // hook that set it: a later hook of the same step may have moved the model.
        if tp.pacing_rate != pacing_before && tp.pacing_rate == 0 {
            let bw_bps = self.inner.metrics(tp).bw_bps;
            if bw_bps != Some(0.0) {
                audit.violations.push(format!(
                    "{name} set pacing_rate to 0 at t={} ns while its bandwidth model is {bw_bps:?} bit/s",
                    tp.now
                ));
            }
        }
        let (cwnd, clamp) = (tp.cwnd, tp.cwnd_clamp.max(1));
        if cwnd == 0 || cwnd > clamp {
            audit.violations.push(format!("{name} left cwnd {cwnd} outside [1, {clamp}] at t={} ns", tp.now));
            tp.cwnd = cwnd.clamp(1, clamp);
        }
        r
    }
}

impl CongestionControl for AuditedCca {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn init(&mut self, tp: &mut TcpState) {
        self.checked("init", tp, |c, tp| c.init(tp))
    }
    fn ssthresh(&mut self, tp: &mut TcpState) -> u32 {
        let ss = self.checked("ssthresh", tp, |c, tp| c.ssthresh(tp));
        if ss == 0 {
            self.audit.lock().expect("audit lock").violations.push(format!("ssthresh() returned 0 at t={} ns", tp.now));
            return 1;
        }
        ss
    }
    fn cong_avoid(&mut self, tp: &mut TcpState, sample: &AckSample) {
        self.checked("cong_avoid", tp, |c, tp| c.cong_avoid(tp, sample))
    }
    fn pkts_acked(&mut self, tp: &mut TcpState, sample: &AckSample) {
        self.checked("pkts_acked", tp, |c, tp| c.pkts_acked(tp, sample))
    }
    fn has_cong_control(&self) -> bool {
        self.inner.has_cong_control()
    }
    fn cong_control(&mut self, tp: &mut TcpState, sample: &AckSample) {
        self.checked("cong_control", tp, |c, tp| c.cong_control(tp, sample))
    }
    fn set_state(&mut self, tp: &mut TcpState, new_state: CaState) {
        self.checked("set_state", tp, |c, tp| c.set_state(tp, new_state))
    }
    fn cwnd_event(&mut self, tp: &mut TcpState, event: CaEvent) {
        self.checked("cwnd_event", tp, |c, tp| c.cwnd_event(tp, event))
    }
    fn undo_cwnd(&mut self, tp: &mut TcpState) -> u32 {
        let cwnd = self.checked("undo_cwnd", tp, |c, tp| c.undo_cwnd(tp));
        let clamp = tp.cwnd_clamp.max(1);
        if cwnd == 0 || cwnd > clamp {
            self.audit.lock().expect("audit lock").violations.push(format!(
                "undo_cwnd returned {cwnd} outside [1, {clamp}] at t={} ns",
                tp.now
            ));
            return cwnd.clamp(1, clamp);
        }
        cwnd
    }
    fn on_feedback(&mut self, tp: &mut TcpState, fb: &crate::net::NetworkFeedback) {
        self.checked("on_feedback", tp, |c, tp| c.on_feedback(tp, fb))
    }
    fn metrics(&self, tp: &TcpState) -> CcMetrics {
        self.inner.metrics(tp)
    }
}

/// A data segment on the path, and when its ACK reaches the sender.
#[derive(Debug, Clone, Copy)]
struct Flight {
    seg: Segment,
    ack_due: Time,
    /// Transmission order over the whole connection.
    order: u64,
}

/// The real sender and receiver on a scripted path; see the module docs.
#[derive(Debug)]
pub struct TimelineHarness {
    sender: Sender,
    receiver: Receiver,
    audit: Arc<Mutex<Audit>>,
    now: Time,
    rtt: Time,
    /// Minimum spacing of returning ACKs (1/pps), if there is a bottleneck.
    ack_gap: Option<Time>,
    /// Arrival time of the latest ACK the path has scheduled (keeps the path FIFO).
    last_ack_due: Time,
    /// Segments in flight, in transmission (= arrival) order.
    pipe: VecDeque<Flight>,
    next_order: u64,
    /// Segments the path dropped that `undo()` may still deliver (only delayed).
    held: Vec<Segment>,
    /// While set, everything the sender transmits is dropped (held).
    blackhole: bool,
    /// Segments the sender handed out, the receiver got, and the path dropped.
    emitted: u64,
    arrived: u64,
    dropped: u64,
}

impl TimelineHarness {
    /// A started connection with `initial_cwnd` packets of `mss` bytes whose
    /// application has written nothing yet.
    pub fn new(cca: BoxedCca, mss: u32, initial_cwnd: u32) -> Self {
        let audit = Arc::new(Mutex::new(Audit::default()));
        let params = SenderParams {
            mss,
            initial_cwnd,
            // The receive window never limits the harness (the cwnd clamp may).
            rwnd_segs: u32::MAX / 2,
            pacing: false,
            ecn: true,
            min_rto: ms(200),
            size_bytes: None,
            // One packet per segment: the harness's path counts packets.
            gso: crate::host::Gso::OFF,
            hz: 1000,
        };
        let cca: BoxedCca = Box::new(AuditedCca { inner: cca, audit: Arc::clone(&audit) });
        let mut sender = Sender::new(params, cca, stream(0, Component::Cca, 0));
        sender.tp.cwnd_clamp = u32::MAX;
        sender.keep_last_sample();
        let mut h = Self {
            sender,
            receiver: Receiver::new(false, mss, None),
            audit,
            now: 0,
            rtt: DEFAULT_RTT,
            ack_gap: None,
            last_ack_due: 0,
            pipe: VecDeque::new(),
            next_order: 0,
            held: Vec::new(),
            blackhole: false,
            emitted: 0,
            arrived: 0,
            dropped: 0,
        };
        let mut out = Vec::new();
        h.sender.set_app_unlimited(0, false, &mut out);
        h.sender.start(0, &mut out);
        h.emit(out);
        h
    }

    /// `cca` in congestion avoidance at `cwnd` packets (ssthresh = cwnd) on a path
    /// of round-trip time `rtt`: the start of most control-law tests.
    pub fn in_cong_avoid(cca: BoxedCca, cwnd: u32, rtt: Time) -> Self {
        let mut h = Self::new(cca, 1448, cwnd).with_rtt(rtt);
        h.tp_mut().ssthresh = cwnd;
        h
    }

    /// Fill the window and lose its first packet; returns the CCA's new ssthresh.
    pub fn loss_at_full_window(&mut self) -> u32 {
        self.fill_window();
        self.lose(1);
        self.tp().ssthresh
    }

    pub fn with_rtt(mut self, rtt: Time) -> Self {
        self.rtt = rtt;
        self
    }
    /// Change the path RTT for packets sent from now on (ACKs stay in order).
    pub fn set_rtt(&mut self, rtt: Time) {
        self.rtt = rtt;
    }
    pub fn with_bottleneck_pps(mut self, pps: f64) -> Self {
        self.set_bottleneck_pps(Some(pps));
        self
    }
    /// ACKs return no faster than `pps` per second (`None`: no bottleneck).
    pub fn set_bottleneck_pps(&mut self, pps: Option<f64>) {
        self.ack_gap = pps.map(|r| {
            assert!(r > 0.0 && r.is_finite(), "bottleneck rate must be positive, got {r}");
            ((NS_PER_SEC as f64 / r).round() as Time).max(1)
        });
    }
    pub fn with_cwnd_clamp(mut self, clamp: u32) -> Self {
        let tp = &mut self.sender.tp;
        tp.cwnd_clamp = clamp.max(1);
        tp.cwnd = tp.cwnd.min(tp.cwnd_clamp);
        self
    }
    pub fn with_pacing(mut self, on: bool) -> Self {
        self.sender.tp.pacing_enabled = on;
        self
    }

    pub fn now(&self) -> Time {
        self.now
    }
    pub fn tp(&self) -> &TcpState {
        &self.sender.tp
    }
    pub fn tp_mut(&mut self) -> &mut TcpState {
        &mut self.sender.tp
    }
    pub fn cca(&self) -> &dyn CongestionControl {
        self.sender.cca()
    }
    pub fn sender(&self) -> &Sender {
        &self.sender
    }
    /// The `AckSample` handed to the hooks on the last ACK.
    pub fn last_sample(&self) -> &AckSample {
        self.sender.last_sample().expect("the harness keeps the last sample")
    }
    /// Hook-contract breaches seen so far (empty for a well-behaved CCA).
    pub fn violations(&self) -> Vec<String> {
        self.audit.lock().expect("audit lock").violations.clone()
    }
    /// Segments marked lost and not yet retransmitted.
    pub fn lost_out(&self) -> u32 {
        self.sender.lost_not_retransmitted()
    }
    /// Segments on the path (sent, neither delivered nor dropped).
    pub fn on_path(&self) -> usize {
        self.pipe.len()
    }

    /// Conservation between the endpoints and the path: every segment the sender
    /// transmitted arrived, was dropped, or is still on the path; the sender counts
    /// the same transmissions; the receiver has everything the sender saw acked.
    pub fn check_conservation(&self) -> Result<(), String> {
        let c = &self.sender.counters;
        if c.segs_sent != self.emitted {
            return Err(format!("sender counted {} segments sent, the path saw {}", c.segs_sent, self.emitted));
        }
        let accounted = self.arrived + self.dropped + self.pipe.len() as u64;
        if self.emitted != accounted {
            return Err(format!(
                "sent {} != arrived {} + dropped {} + on the path {}",
                self.emitted,
                self.arrived,
                self.dropped,
                self.pipe.len()
            ));
        }
        if self.sender.snd_una() > self.receiver.rcv_nxt {
            return Err(format!("snd_una {} beyond the receiver's rcv_nxt {}", self.sender.snd_una(), self.receiver.rcv_nxt));
        }
        Ok(())
    }

    // ------------------------------------------------------------------ time

    /// Let `dur` pass: the sender's timers that fall due fire at their time; the
    /// path delivers nothing (ACKs due meanwhile arrive at the next `ack`/`step`).
    pub fn advance(&mut self, dur: Time) {
        let until = self.now + dur;
        for _ in 0..MAX_EVENTS_PER_CALL {
            match self.sender.next_wakeup() {
                Some(t) if t <= until => self.fire_timer(t.max(self.now)),
                _ => break,
            }
        }
        self.now = until;
        self.sync();
    }

    // ------------------------------------------------------------------ sending

    /// The application writes `n` segments; returns how many the sender sent now.
    pub fn send(&mut self, n: u32) -> u32 {
        let mut out = Vec::new();
        self.sender.app_write(self.now, n as u64, &mut out);
        self.emit(out)
    }

    /// The application becomes a bulk writer; returns how many segments the sender
    /// sent now (cwnd and pacing permitting).
    pub fn fill_window(&mut self) -> u32 {
        let mut out = Vec::new();
        self.sender.set_app_unlimited(self.now, true, &mut out);
        self.emit(out)
    }

    /// The application has no more data for now (`tcp_rate_check_app_limited`
    /// runs in the sender's transmit path).
    pub fn mark_app_limited(&mut self) {
        let mut out = Vec::new();
        self.sender.set_app_unlimited(self.now, false, &mut out);
        self.emit(out);
    }

    // ------------------------------------------------------------------ ACKs

    /// The `n` oldest segments in flight arrive; the sender gets one ACK covering them.
    pub fn ack(&mut self, n: u32) {
        self.deliver(n, false);
    }

    /// As [`TimelineHarness::ack`], with the segments CE-marked (the receiver echoes ECE).
    pub fn ack_ece(&mut self, n: u32) {
        self.deliver(n, true);
    }

    /// Bulk sender: run the path (ACK arrivals and the sender's timers, in time
    /// order) up to and including the next ACK. False if nothing is left to happen.
    pub fn step(&mut self) -> bool {
        self.fill_window();
        let mut acked = false;
        for _ in 0..MAX_EVENTS_PER_CALL {
            match self.next_event() {
                Some(Some(_)) => {
                    acked = true;
                    break;
                }
                Some(None) => {}
                None => break,
            }
        }
        self.sync();
        acked
    }

    /// Run `k` round trips of a bulk sender: until the ACK of the last segment sent
    /// before each round began (or of a later one) has arrived. Returns the rounds
    /// completed (fewer than `k` only if nothing could be sent).
    pub fn run_rounds(&mut self, k: u32) -> u32 {
        for done in 0..k {
            self.fill_window();
            let Some(marker) = self.pipe.back().map(|f| f.order) else { return done };
            let mut finished = false;
            for _ in 0..MAX_EVENTS_PER_CALL {
                match self.next_event() {
                    Some(Some(order)) if order >= marker => {
                        finished = true;
                        break;
                    }
                    Some(_) => {}
                    None => break,
                }
            }
            self.sync();
            if !finished {
                return done;
            }
        }
        k
    }

    // ------------------------------------------------------------------ losses

    /// The path drops the `n` oldest segments in flight; then the path runs until the
    /// sender has reacted (Recovery or Loss), or nothing is left to happen.
    pub fn lose(&mut self, n: u32) {
        let k = (n as usize).min(self.pipe.len());
        if k == 0 {
            return;
        }
        self.held.extend(self.pipe.drain(..k).map(|f| f.seg));
        self.dropped += k as u64;
        self.run_until(|h| h.tp().ca_state >= CaState::Recovery);
    }

    /// The path drops the `n` oldest segments in flight, and nothing else happens.
    pub fn drop_oldest(&mut self, n: u32) {
        let k = (n as usize).min(self.pipe.len());
        self.held.extend(self.pipe.drain(..k).map(|f| f.seg));
        self.dropped += k as u64;
    }

    /// Run the path until the sender is back in Open (a reduction or a loss
    /// episode ended), or nothing is left to happen.
    pub fn end_recovery(&mut self) {
        self.run_until(|h| h.tp().ca_state == CaState::Open);
    }

    /// The path blackholes everything in flight (and whatever is sent meanwhile,
    /// such as a loss probe) until the sender's retransmission timer fires.
    /// No-op with nothing outstanding.
    pub fn rto(&mut self) {
        if self.sender.packets_out() == 0 {
            return;
        }
        let rtos = self.sender.counters.rtos;
        self.dropped += self.pipe.len() as u64;
        self.held.extend(self.pipe.drain(..).map(|f| f.seg));
        self.blackhole = true;
        for _ in 0..MAX_EVENTS_PER_CALL {
            if self.sender.counters.rtos > rtos {
                break;
            }
            let Some(t) = self.sender.next_wakeup() else { break };
            self.now = self.now.max(t);
            let before = self.sender.counters.rtos;
            let mut out = Vec::new();
            self.sender.on_timer(self.now, &mut out);
            // What the RTO itself retransmits goes out on a working path.
            if self.sender.counters.rtos > before {
                self.blackhole = false;
            }
            self.emit(out);
        }
        self.blackhole = false;
        self.sync();
    }

    /// The segments `lose`/`rto` dropped were only delayed: they arrive now (each
    /// with its own ACK, as a receiver sends them), then the path runs until the
    /// sender is in Open (having undone the reduction if it judged it spurious).
    pub fn undo(&mut self) {
        let held = std::mem::take(&mut self.held);
        let delayed: Vec<u64> = held.iter().map(|s| s.seg).collect();
        // Dropped after all, late: count them as arrived instead.
        self.dropped -= held.len() as u64;
        self.arrived += held.len() as u64;
        for seg in held {
            let ack = self.receiver.on_segment(self.now, &seg, Ecn::Ect);
            if let Some(ack) = ack {
                self.sender_ack(&ack);
            }
        }
        // Until their retransmissions have arrived too (each reported as a D-SACK).
        let resent_on_path =
            |h: &Self| h.pipe.iter().any(|f| f.seg.is_retrans && delayed.contains(&f.seg.seg));
        self.run_until(|h| h.tp().ca_state == CaState::Open && !resent_on_path(h));
    }

    // ------------------------------------------------------------------ internals

    /// Hand segments the sender transmitted to the path; returns how many.
    fn emit(&mut self, out: Vec<Segment>) -> u32 {
        let n = out.len() as u32;
        self.emitted += n as u64;
        for seg in out {
            if self.blackhole {
                self.held.push(seg);
                self.dropped += 1;
                continue;
            }
            let mut ack_due = self.now + self.rtt;
            if let Some(gap) = self.ack_gap {
                ack_due = ack_due.max(self.last_ack_due + gap);
            }
            // The path is FIFO: an ACK never overtakes an earlier one.
            ack_due = ack_due.max(self.last_ack_due);
            self.last_ack_due = ack_due;
            self.pipe.push_back(Flight { seg, ack_due, order: self.next_order });
            self.next_order += 1;
        }
        self.sync();
        n
    }

    fn sync(&mut self) {
        self.sender.refresh_tp(self.now);
    }

    fn fire_timer(&mut self, t: Time) {
        self.now = t;
        let mut out = Vec::new();
        self.sender.on_timer(t, &mut out);
        self.emit(out);
    }

    fn sender_ack(&mut self, ack: &Ack) {
        let mut out = Vec::new();
        self.sender.on_ack(self.now, ack, &mut out);
        self.emit(out);
    }

    /// Deliver the `n` oldest segments now and give the sender one ACK for them.
    fn deliver(&mut self, n: u32, ce: bool) {
        let mut last: Option<Ack> = None;
        let mut dsack = None;
        for _ in 0..n {
            let Some(f) = self.pipe.pop_front() else { break };
            self.arrived += 1;
            let ecn = if ce { Ecn::Ce } else { Ecn::Ect };
            if let Some(ack) = self.receiver.on_segment(self.now, &f.seg, ecn) {
                dsack = ack.dsack().or(dsack);
                last = Some(ack);
            }
        }
        if let Some(mut ack) = last {
            ack.set_dsack(ack.dsack().or(dsack));
            self.sender_ack(&ack);
        }
        self.sync();
    }

    /// Process the next event of the path: a sender timer or the next ACK arrival,
    /// whichever is first (the timer on a tie). Returns None if nothing is pending,
    /// Some(None) for a timer, Some(Some(order)) for the ACK of that transmission.
    fn next_event(&mut self) -> Option<Option<u64>> {
        let ack_at = self.pipe.front().map(|f| f.ack_due.max(self.now));
        let timer_at = self.sender.next_wakeup().map(|t| t.max(self.now));
        match (ack_at, timer_at) {
            (Some(a), t) if t.is_none_or(|t| a < t) => {
                self.now = a;
                let order = self.pipe.front().map(|f| f.order);
                self.deliver(1, false);
                Some(order)
            }
            (_, Some(t)) => {
                self.fire_timer(t);
                Some(None)
            }
            _ => None,
        }
    }

    fn run_until(&mut self, done: impl Fn(&Self) -> bool) {
        for _ in 0..MAX_EVENTS_PER_CALL {
            if done(self) || self.next_event().is_none() {
                break;
            }
        }
        self.sync();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::reno::Reno;

    fn harness() -> TimelineHarness {
        TimelineHarness::new(Box::new(Reno), 1448, 10).with_rtt(ms(50))
    }

    #[test]
    fn rate_sample_delivery_rate_matches_bottleneck() {
        let mut h = harness().with_bottleneck_pps(1000.0);
        h.run_rounds(8);
        let rs = h.last_sample().rs;
        let rate = rs.delivery_rate_pps().expect("valid sample");
        assert!((rate - 1000.0).abs() < 20.0, "delivery rate {rate} pkt/s vs 1000");
        assert!(rs.interval >= h.tp().min_rtt);
        assert_eq!(rs.delivered as u64, h.tp().delivered - rs.prior_delivered);
        assert_eq!(rs.acked_sacked, 1);
        assert!(rs.tx_in_flight >= 1 && !rs.is_app_limited);
        assert_eq!(h.tp().min_rtt, ms(50));
    }

    #[test]
    fn retransmission_rtt_comes_from_the_timestamp_echo() {
        let mut h = harness();
        assert_eq!(h.send(1), 1);
        // The segment is blackholed. With no RTT sample the loss probe fires after
        // TCP_TIMEOUT_INIT (1 s, also lost), and the RTO, re-armed by the probe, 1 s later.
        h.rto();
        assert_eq!((h.sender().counters.tlp_probes, h.sender().counters.rtos), (1, 1));
        assert_eq!(h.now(), 2 * crate::tcp::rtt::RTO_INIT);
        h.advance(ms(50));
        h.ack(1);
        // Karn forbids a sample from the retransmitted segment's send time; the echoed
        // timestamp of the retransmission gives one (`tcp_ack_update_rtt`).
        assert_eq!(h.last_sample().rtt, Some(ms(50)));
        assert_eq!(h.tp().srtt, ms(50));
    }

    #[test]
    fn mark_app_limited_flags_samples_until_delivered_passes_mark() {
        let mut h = harness();
        h.send(3);
        h.mark_app_limited();
        assert_eq!(h.tp().app_limited, 3, "mark = delivered + in_flight");
        h.advance(ms(50));
        h.ack(3);
        assert!(h.last_sample().rs.is_app_limited, "the sampled packet was sent app-limited");
        // A bulk writer: the mark clears once delivered passes it.
        h.run_rounds(2);
        assert_eq!(h.tp().app_limited, 0, "cleared once delivered passed the mark");
        assert!(!h.last_sample().rs.is_app_limited);
    }

    #[test]
    fn accounting_tracks_sacks_losses_and_retransmissions() {
        let mut h = harness();
        assert_eq!(h.send(10), 10);
        h.advance(ms(50));
        h.lose(2); // the other 8 arrive as SACKs; RACK marks the 2 lost
        assert_eq!(h.tp().ca_state, CaState::Recovery);
        assert_eq!((h.tp().lost, h.sender().counters.segs_lost), (2, 2));
        // RACK's reordering window is 0 once 3 segments are SACKed (`tcp_rack_reo_wnd`).
        assert_eq!(h.tp().delivered, 3);
        h.end_recovery();
        assert_eq!(h.tp().ca_state, CaState::Open, "recovery ended when the window was acked");
        assert_eq!(h.tp().delivered, 10);
        assert_eq!((h.tp().packets_out, h.tp().in_flight, h.tp().retrans_out), (0, 0, 0));
        assert_eq!(h.sender().counters.segs_retrans, 2);
        assert_eq!(h.tp().cwnd, 5, "cwnd = ssthresh at the end of recovery");
        assert!(h.violations().is_empty());
    }

    #[test]
    fn ack_ece_enters_cwr_once() {
        let mut h = harness();
        h.send(10);
        h.advance(ms(50));
        h.ack_ece(1);
        assert_eq!(h.tp().ca_state, CaState::Cwr);
        assert_eq!(h.tp().ssthresh, 5);
        assert_eq!(h.tp().delivered_ce, 1);
        h.ack_ece(1);
        assert_eq!(h.tp().ssthresh, 5, "one reduction per window");
    }

    #[test]
    fn undo_delivers_delayed_originals_and_the_sender_undoes() {
        let mut h = harness();
        h.run_rounds(2);
        let cwnd = h.tp().cwnd;
        h.lose(1);
        assert_eq!(h.tp().ca_state, CaState::Recovery);
        h.undo();
        assert_eq!(h.tp().ca_state, CaState::Open);
        assert_eq!(h.sender().counters.undos, 1, "the D-SACK or the timestamp proved the loss spurious");
        assert!(h.tp().cwnd >= cwnd, "cwnd {} restored to at least {cwnd}", h.tp().cwnd);
    }
}
