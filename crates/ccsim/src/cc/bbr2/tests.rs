//! BBRv2/v3 tests. Two drivers:
//!
//! * [`Driver`] calls the hooks directly with synthetic rate samples, for the exact
//!   rules (Startup exits, inflight_hi cut, lower bounds, v3-vs-v2 differences);
//! * [`PathSim`] is a tiny timeline: one sender (cwnd- and pacing-limited,
//!   `tcp_rate.c` rate samples, one ACK per packet, loss marked when a later packet
//!   is ACKed, a minimal Open/Recovery/Loss machine) over a FIFO bottleneck of fixed
//!   packet rate with an optional drop-tail buffer, for the mode sequence over time.
//!
//! Note: the shared `cc::testing::TimelineHarness` did not exist when these were
//! written; `PathSim` can be replaced by it.

use std::collections::VecDeque;

use super::*;
use crate::cc::{RateSample, TcpState};
use crate::sim::rng::{stream, Component};
use crate::units::{ms, secs};

const MSS: u32 = 1500;

fn tcp_state(seed: u64) -> TcpState {
    let mut tp = TcpState::new(MSS, 10, u32::MAX, true, stream(seed, Component::Cca, 0));
    tp.is_cwnd_limited = true;
    tp
}

/// Packets per second in [`Bw`] units (packets/µs << 24).
fn bw_of(pps: u64) -> Bw {
    pps * BW_UNIT / 1_000_000
}

fn v2() -> Bbr2 {
    Bbr2::new(&V2::defaults()).unwrap()
}

fn v3() -> Bbr2 {
    Bbr2::new(&crate::cc::bbr3::V3::defaults()).unwrap()
}

fn both() -> [Bbr2; 2] {
    [v2(), v3()]
}

// ---------------------------------------------------------------------------
// Driver: synthetic ACKs
// ---------------------------------------------------------------------------

/// One synthetic ACK. `delivered` packets over `interval` give the bw sample;
/// `new_round` makes `prior_delivered` reach the current round's end.
#[derive(Debug, Clone, Copy)]
struct A {
    new_round: bool,
    acked: u32,
    delivered: i64,
    interval: Time,
    losses: u32,
    lost: u32,
    tx_in_flight: u32,
    ce: u32,
    ece: bool,
    rtt: Option<Time>,
    app_limited: bool,
    prior_in_flight: u32,
    dt: Time,
}

impl Default for A {
    fn default() -> Self {
        A {
            new_round: true,
            acked: 1,
            delivered: 20,
            interval: ms(20),
            losses: 0,
            lost: 0,
            tx_in_flight: 20,
            ce: 0,
            ece: false,
            rtt: Some(ms(20)),
            app_limited: false,
            prior_in_flight: 10,
            dt: ms(1),
        }
    }
}

struct Driver {
    cca: Bbr2,
    tp: TcpState,
    /// `tp.delivered` after the last round-starting ACK.
    anchor: u64,
}

impl Driver {
    /// A connection with a 20 ms RTT already measured, then `init`.
    fn new(cca: Bbr2) -> Self {
        Self::with_rtt(cca, ms(20))
    }

    fn with_rtt(mut cca: Bbr2, rtt: Time) -> Self {
        let mut tp = tcp_state(1);
        tp.srtt = rtt;
        tp.min_rtt = rtt;
        tp.now = ms(100);
        tp.in_flight = 10;
        cca.init(&mut tp);
        Driver { cca, tp, anchor: 0 }
    }

    fn ack(&mut self, a: A) {
        let tp = &mut self.tp;
        tp.now += a.dt;
        let prior_delivered = if a.new_round { tp.delivered } else { self.anchor.saturating_sub(1) };
        tp.delivered += a.acked as u64;
        tp.delivered_ce += a.ce as u64;
        tp.lost += a.losses as u64;
        tp.delivered_time = tp.now;
        if a.new_round {
            self.anchor = tp.delivered;
        }
        let rs = RateSample {
            prior_delivered,
            delivered: a.delivered,
            delivered_ce: a.ce as i64,
            interval: a.interval,
            rtt: a.rtt,
            losses: a.losses,
            acked_sacked: a.acked,
            prior_in_flight: a.prior_in_flight,
            tx_in_flight: a.tx_in_flight,
            lost: a.lost,
            is_app_limited: a.app_limited,
            ..Default::default()
        };
        let ack = AckSample {
            pkts_acked: a.acked,
            acked_sacked: a.acked,
            rtt: a.rtt,
            prior_in_flight: a.prior_in_flight,
            ece: a.ece,
            advanced_una: true,
            rs,
        };
        self.cca.cong_control(tp, &ack);
    }

    /// Put the flow in PROBE_BW `phase` with a known model: max bw `pps`, min_rtt
    /// 20 ms, no probe due for a long time.
    fn probe_bw(&mut self, phase: Phase, pps: u64, cwnd: u32) {
        let c = &mut self.cca;
        c.full_bw_reached = true;
        c.mode = Mode::ProbeBw(phase);
        c.max_bw = [bw_of(pps), 0];
        c.cycle_stamp = self.tp.now;
        c.probe_wait = secs(100);
        c.rounds_since_probe = 0;
        c.ack_phase = AckPhase::Init;
        c.update_gains();
        self.tp.cwnd = cwnd;
    }
}

// ---------------------------------------------------------------------------
// PathSim: a tiny timeline
// ---------------------------------------------------------------------------

#[derive(Debug, Clone)]
struct Pkt {
    seq: u64,
    sent: Time,
    delivered: u64,
    delivered_time: Time,
    first_tx: Time,
    lost: u64,
    delivered_ce: u64,
    tx_in_flight: u32,
    app_limited: bool,
    dropped: bool,
    ce: bool,
}

struct PathSim {
    cca: Bbr2,
    tp: TcpState,
    /// Two-way propagation delay (all on the ACK path).
    rtt: Time,
    /// Added to every later packet's ACK path (to freeze the min RTT).
    extra_delay: Time,
    /// Bottleneck service time per packet.
    service: Time,
    /// Drop-tail buffer (packets waiting or in service); None = unlimited.
    buffer: Option<usize>,
    pkts: VecDeque<Pkt>,
    arrivals: VecDeque<(Time, u64)>,
    queue: VecDeque<Time>,
    free_at: Time,
    next_send: Time,
    next_seq: u64,
    first_tx: Time,
    recovery_point: Option<u64>,
    /// When a packet was last marked lost (stands in for Linux's `lost_out`: our
    /// sender never retransmits, so a loss counts as unrepaired for one srtt).
    last_loss: Time,
}

impl PathSim {
    fn new(cca: Bbr2, pps: u64, rtt: Time) -> Self {
        let mut tp = tcp_state(7);
        let mut cca = cca;
        cca.init(&mut tp);
        PathSim {
            cca,
            tp,
            rtt,
            extra_delay: 0,
            service: 1_000_000_000 / pps,
            buffer: None,
            pkts: VecDeque::new(),
            arrivals: VecDeque::new(),
            queue: VecDeque::new(),
            free_at: 0,
            next_send: 0,
            next_seq: 0,
            first_tx: 0,
            recovery_point: None,
            last_loss: 0,
        }
    }

    /// Run until `end`, calling `f` after every ACK.
    fn run_until(&mut self, end: Time, mut f: impl FnMut(&Self)) {
        while self.tp.now < end {
            let next_ack = self.arrivals.front().map(|a| a.0);
            let can_send = (self.pkts.len() as u32) < self.tp.cwnd;
            let send_at = self.next_send.max(self.tp.now);
            if can_send && next_ack.is_none_or(|t| send_at <= t) {
                self.tp.now = send_at;
                self.send();
            } else if let Some(t) = next_ack {
                self.tp.now = t;
                self.on_ack();
                f(self);
            } else {
                // Everything outstanding was dropped: a retransmission timeout.
                self.tp.now += secs(1);
                self.rto();
            }
        }
    }

    fn send(&mut self) {
        let now = self.tp.now;
        if self.pkts.is_empty() {
            // tcp_rate_skb_sent: a new flight starts the sampling clocks.
            self.first_tx = now;
            self.tp.delivered_time = now;
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        while self.queue.front().is_some_and(|&d| d <= now) {
            self.queue.pop_front();
        }
        let qlen = self.queue.len();
        let dropped = self.buffer.is_some_and(|b| qlen >= b);
        if !dropped {
            let dep = now.max(self.free_at) + self.service;
            self.free_at = dep;
            self.queue.push_back(dep);
            self.arrivals.push_back((dep + self.rtt + self.extra_delay, seq));
        }
        self.pkts.push_back(Pkt {
            seq,
            sent: now,
            delivered: self.tp.delivered,
            delivered_time: self.tp.delivered_time,
            first_tx: self.first_tx,
            lost: self.tp.lost,
            delivered_ce: self.tp.delivered_ce,
            tx_in_flight: self.pkts.len() as u32 + 1,
            app_limited: self.tp.app_limited != 0,
            dropped,
            ce: false,
        });
        if let Some(gap) = (MSS as u64 * 1_000_000_000).checked_div(self.tp.pacing_rate) {
            self.next_send = now + gap;
        }
        self.tp.packets_out = self.pkts.len() as u32;
        self.tp.in_flight = self.pkts.len() as u32;
        self.tp.is_cwnd_limited = self.pkts.len() as u32 >= self.tp.cwnd;
    }

    fn set_state(&mut self, s: CaState) {
        self.cca.set_state(&mut self.tp, s);
        self.tp.ca_state = s;
    }

    fn rto(&mut self) {
        self.tp.ssthresh = self.cca.ssthresh(&mut self.tp);
        self.cca.cwnd_event(&mut self.tp, CaEvent::Loss);
        self.tp.lost += self.pkts.len() as u64;
        self.pkts.clear();
        self.tp.in_flight = 0;
        self.tp.packets_out = 0;
        self.set_state(CaState::Loss);
        self.tp.cwnd = 1;
        self.recovery_point = Some(self.next_seq);
    }

    fn on_ack(&mut self) {
        let (_, seq) = self.arrivals.pop_front().unwrap();
        let now = self.tp.now;
        let prior_in_flight = self.pkts.len() as u32;
        let mut losses = 0;
        while self.pkts.front().is_some_and(|p| p.seq < seq) {
            let p = self.pkts.pop_front().unwrap();
            assert!(p.dropped, "FIFO path: only dropped packets are skipped");
            losses += 1;
        }
        let p = self.pkts.pop_front().unwrap();
        assert_eq!(p.seq, seq);
        if losses > 0 {
            self.last_loss = now;
        }
        let tp = &mut self.tp;
        tp.lost += losses as u64;
        let rtt = now - p.sent;
        tp.min_rtt = tp.min_rtt.min(rtt);
        tp.srtt = if tp.srtt == 0 { rtt } else { (7 * tp.srtt + rtt) / 8 };
        tp.delivered += 1;
        if p.ce {
            tp.delivered_ce += 1;
        }
        tp.delivered_time = now;
        self.first_tx = p.sent;
        let snd_interval = p.sent - p.first_tx;
        let rcv_interval = now - p.delivered_time;
        let mut rs = RateSample {
            prior_delivered: p.delivered,
            prior_delivered_ce: p.delivered_ce,
            prior_time: p.delivered_time,
            delivered: (tp.delivered - p.delivered) as i64,
            delivered_ce: (tp.delivered_ce - p.delivered_ce) as i64,
            interval: snd_interval.max(rcv_interval),
            snd_interval,
            rcv_interval,
            rtt: Some(rtt),
            losses,
            acked_sacked: 1,
            prior_in_flight,
            tx_in_flight: p.tx_in_flight,
            lost: (tp.lost - p.lost) as u32,
            is_app_limited: p.app_limited,
            is_retrans: false,
            is_ack_delayed: false,
        };
        if rs.interval < tp.min_rtt {
            rs.interval = 0; // tcp_rate_gen: too short to be a valid sample
        }
        if tp.app_limited != 0 && tp.delivered > tp.app_limited {
            tp.app_limited = 0;
        }
        tp.in_flight = self.pkts.len() as u32;
        tp.packets_out = self.pkts.len() as u32;
        // tcp_fastretrans_alert: leave Recovery/Loss once the recovery point is
        // passed and no loss is left unrepaired; enter Recovery on new loss.
        if let Some(rp) = self.recovery_point {
            let repaired = now > self.last_loss + self.tp.srtt;
            if repaired && self.pkts.front().is_none_or(|f| f.seq >= rp) {
                self.set_state(CaState::Open);
                self.recovery_point = None;
            }
        }
        if losses > 0 && matches!(self.tp.ca_state, CaState::Open | CaState::Disorder) {
            self.tp.prior_cwnd = self.tp.cwnd;
            self.tp.ssthresh = self.cca.ssthresh(&mut self.tp);
            self.set_state(CaState::Recovery);
            self.recovery_point = Some(self.next_seq);
        }
        let ack = AckSample {
            pkts_acked: 1,
            acked_sacked: 1,
            rtt: Some(rtt),
            prior_in_flight,
            ece: p.ce,
            advanced_una: true,
            rs,
        };
        self.cca.pkts_acked(&mut self.tp, &ack);
        self.cca.cong_control(&mut self.tp, &ack);
        self.tp.cwnd = self.tp.cwnd.clamp(1, self.tp.cwnd_clamp);
    }
}

/// Expected (pacing, cwnd) gains per mode for a version.
fn expected_gains(version: Version, mode: Mode) -> (u32, u32) {
    let v3 = version == Version::V3;
    match mode {
        Mode::Startup if v3 => (710, 512),
        Mode::Startup => (739, 739),
        Mode::Drain if v3 => (88, 512),
        Mode::Drain => (88, 739),
        Mode::ProbeBw(Phase::Up) if v3 => (320, 576),
        Mode::ProbeBw(Phase::Up) => (320, 512),
        Mode::ProbeBw(Phase::Down) if v3 => (232, 512),
        Mode::ProbeBw(Phase::Down) => (192, 512),
        Mode::ProbeBw(_) => (256, 512),
        Mode::ProbeRtt => (256, 256),
    }
}

// ---------------------------------------------------------------------------
// Startup
// ---------------------------------------------------------------------------

#[test]
fn startup_exits_after_three_rounds_without_25pct_growth() {
    for cca in both() {
        let version = cca.version();
        let mut d = Driver::new(cca);
        d.tp.in_flight = 1000; // keep Drain from ending at once
        // 20, 30 (+50%: resets), then 32 per round (+7%: no growth).
        for delivered in [20, 30, 32, 32] {
            d.ack(A { delivered, ..A::default() });
            assert_eq!(d.cca.mode(), Mode::Startup, "{version:?}: still growing or < 3 flat rounds");
        }
        d.ack(A { delivered: 32, ..A::default() });
        assert!(d.cca.full_bw_reached(), "{version:?}: 3 rounds without 25% growth fill the pipe");
        assert_eq!(d.cca.mode(), Mode::Drain, "{version:?}");
        assert_eq!(d.cca.gains(), expected_gains(version, Mode::Drain));
    }
}

/// `k` loss-marking ACKs in one Recovery round of Startup, then the ACK ending the
/// loss round, whose sample shows `lost` of `tx_in_flight` lost.
fn startup_loss_round(cca: Bbr2, k: u32, lost: u32, tx_in_flight: u32, big_delivery: bool) -> Driver {
    let mut d = Driver::new(cca);
    d.tp.in_flight = 1000;
    d.ack(A::default()); // round 1 (before the first loss round)
    d.ack(A::default()); // round 2: a loss round starts
    d.tp.ca_state = CaState::Recovery;
    for i in 0..k {
        // A large volume at the same rate (200 packets over 200 ms).
        let (delivered, interval) = if big_delivery && i == 0 { (200, ms(200)) } else { (20, ms(20)) };
        d.ack(A { new_round: false, losses: 1, delivered, interval, ..A::default() });
    }
    assert_eq!(d.cca.mode(), Mode::Startup, "no exit before the loss round ends");
    d.ack(A { lost, tx_in_flight, ..A::default() });
    d
}

#[test]
fn startup_exits_on_loss_rate_above_threshold_after_full_loss_cnt_events() {
    // v2: 8 events; v3: 6. 10 lost of 100 in flight is above 5/256 ≈ 2%.
    for (cca, events) in [(v2(), 8), (v3(), 6)] {
        let version = cca.version();
        let d = startup_loss_round(cca, events, 10, 100, false);
        assert!(d.cca.full_bw_reached(), "{version:?}: loss exit");
        assert_eq!(d.cca.mode(), Mode::Drain, "{version:?}");
        let bdp = d.cca.inflight(&d.tp, d.cca.max_bw(), BBR_UNIT);
        assert_eq!(d.cca.inflight_hi(), Some(bdp), "{version:?}: inflight_hi = BDP at exit");
    }
}

#[test]
fn startup_ignores_loss_below_threshold_or_too_few_events() {
    for (cca, events) in [(v2(), 8), (v3(), 6)] {
        let version = cca.version();
        // 1 lost of 100: 1 > 100 * 5 / 256 = 1 is false.
        let d = startup_loss_round(cca.clone(), events + 2, 1, 100, false);
        assert_eq!(d.cca.mode(), Mode::Startup, "{version:?}: 1% loss is tolerated");
        let d = startup_loss_round(cca, events - 1, 10, 100, false);
        assert_eq!(d.cca.mode(), Mode::Startup, "{version:?}: too few loss events");
    }
}

// ---------------------------------------------------------------------------
// Drain
// ---------------------------------------------------------------------------

#[test]
fn drain_ends_when_inflight_at_most_bdp() {
    for cca in both() {
        let version = cca.version();
        let mut sim = PathSim::new(cca, 1000, ms(20));
        let mut prev = Mode::Startup;
        let mut drain_acks = 0;
        let mut exited = false;
        sim.run_until(secs(3), |s| {
            let mode = s.cca.mode();
            let bdp = s.cca.inflight(&s.tp, s.cca.max_bw(), BBR_UNIT);
            if mode == Mode::Drain {
                drain_acks += 1;
                assert!(s.tp.in_flight > bdp, "{version:?}: Drain holds while in-flight > BDP");
                assert_eq!(s.cca.gains(), expected_gains(version, Mode::Drain));
            }
            if prev == Mode::Drain && mode != Mode::Drain && !exited {
                exited = true;
                assert!(matches!(mode, Mode::ProbeBw(_)), "{version:?}: Drain -> ProbeBW");
                assert!(s.tp.in_flight <= bdp, "{version:?}: leaves at in-flight {} <= BDP {bdp}", s.tp.in_flight);
            }
            prev = mode;
        });
        assert!(drain_acks > 0 && exited, "{version:?}: went through Drain ({drain_acks} ACKs)");
    }
}

// ---------------------------------------------------------------------------
// ProbeBW
// ---------------------------------------------------------------------------

#[test]
fn probe_bw_cycles_down_cruise_refill_up_with_reference_gains() {
    for cca in both() {
        let version = cca.version();
        let mut sim = PathSim::new(cca, 1000, ms(20));
        let mut seq: Vec<Mode> = Vec::new();
        sim.run_until(secs(12), |s| {
            let mode = s.cca.mode();
            assert_eq!(s.cca.gains(), expected_gains(version, mode), "{version:?} gains in {mode:?}");
            if seq.last() != Some(&mode) {
                seq.push(mode);
            }
        });
        let allowed = |a: Mode, b: Mode| {
            use Phase::*;
            matches!(
                (a, b),
                (Mode::ProbeBw(Down), Mode::ProbeBw(Cruise))
                    | (Mode::ProbeBw(Down), Mode::ProbeBw(Refill))
                    | (Mode::ProbeBw(Cruise), Mode::ProbeBw(Refill))
                    | (Mode::ProbeBw(Refill), Mode::ProbeBw(Up))
                    | (Mode::ProbeBw(Up), Mode::ProbeBw(Down))
                    | (Mode::ProbeBw(_), Mode::ProbeRtt)
                    | (Mode::ProbeRtt, Mode::ProbeBw(Cruise))
            )
        };
        let start = seq.iter().position(|m| matches!(m, Mode::ProbeBw(_))).expect("reached ProbeBW");
        assert_eq!(seq[start], Mode::ProbeBw(Phase::Down), "{version:?}: ProbeBW starts in DOWN");
        for w in seq[start..].windows(2) {
            assert!(allowed(w[0], w[1]), "{version:?}: unexpected transition {:?} -> {:?} in {seq:?}", w[0], w[1]);
        }
        let ups = seq.iter().filter(|m| **m == Mode::ProbeBw(Phase::Up)).count();
        let cruises = seq.iter().filter(|m| **m == Mode::ProbeBw(Phase::Cruise)).count();
        assert!(ups >= 3 && cruises >= 3, "{version:?}: several full cycles: {seq:?}");
    }
}

/// Time from the start of a cycle (DOWN) to REFILL, per cycle.
fn probe_intervals(cca: Bbr2, pps: u64, rtt: Time, end: Time) -> Vec<(Time, u32)> {
    let mut sim = PathSim::new(cca, pps, rtt);
    let mut prev = Mode::Startup;
    let mut stamp = 0;
    let mut out = Vec::new();
    sim.run_until(end, |s| {
        let mode = s.cca.mode();
        if mode == Mode::ProbeBw(Phase::Refill) && prev != mode && prev != Mode::ProbeRtt {
            out.push((s.tp.now - stamp, s.cca.target_inflight(&s.tp)));
        }
        stamp = s.cca.cycle_stamp;
        prev = mode;
    });
    out
}

#[test]
fn probe_bw_waits_2_to_3_s_wall_clock_when_bdp_exceeds_63_rounds() {
    // 5000 pkt/s x 100 ms: BDP 500 packets, so the Reno bound (min(63, BDP)
    // rounds ≈ 6.3 s) is later than the 2-3 s wall-clock bound.
    for cca in both() {
        let version = cca.version();
        let iv = probe_intervals(cca, 5000, ms(100), secs(14));
        assert!(iv.len() >= 2, "{version:?}: probes happened: {iv:?}");
        for (t, _) in iv {
            assert!(t >= secs(2) && t <= secs(3) + ms(110), "{version:?}: probe after {t} ns");
        }
    }
}

#[test]
fn probe_bw_reno_coexistence_bound_probes_after_bdp_rounds_on_small_bdp() {
    // 1000 pkt/s x 20 ms: BDP ~21 packets (+ budget), so probing comes after about
    // that many rounds (0.5 s), well before 2 s.
    for cca in both() {
        let version = cca.version();
        let iv = probe_intervals(cca, 1000, ms(20), secs(6));
        assert!(iv.len() >= 3, "{version:?}: {iv:?}");
        for (t, target) in iv {
            // A round is one min_rtt (21 ms) plus whatever queue the cycle holds.
            assert!(t < secs(2), "{version:?}: Reno bound before the wall clock: {t}");
            assert!(
                t >= (target as u64).saturating_sub(3) * ms(21) && t <= (target as u64 + 3) * ms(25),
                "{version:?}: ~{target} rounds, took {t} ns"
            );
        }
    }
}

#[test]
fn inflight_hi_cut_when_probe_loss_exceeds_threshold() {
    for cca in both() {
        let version = cca.version();
        // (a) tx_in_flight dominates: inflight_hi = tx_in_flight.
        let mut d = Driver::new(cca.clone());
        d.probe_bw(Phase::Up, 1000, 40);
        d.cca.bw_probe_samples = true;
        let target = d.cca.target_inflight(&d.tp);
        // prior_in_flight 100 > inflight_hi - headroom keeps DOWN from ending at once.
        d.ack(A { new_round: false, lost: 5, tx_in_flight: 100, prior_in_flight: 100, ..A::default() });
        assert_eq!(d.cca.inflight_hi(), Some(100.max(target * 180 / 256)), "{version:?}");
        assert_eq!(d.cca.inflight_hi(), Some(100));
        assert_eq!(d.cca.mode(), Mode::ProbeBw(Phase::Down), "{version:?}: probe ends");

        // (b) 0.7 x target dominates: 10000 pkt/s x 20 ms = 200 (+2 in UP), cwnd 200.
        let mut d = Driver::new(cca.clone());
        d.probe_bw(Phase::Up, 10_000, 200);
        d.cca.bw_probe_samples = true;
        assert_eq!(d.cca.target_inflight(&d.tp), 200);
        d.ack(A { new_round: false, delivered: 200, lost: 5, tx_in_flight: 50, prior_in_flight: 300, ..A::default() });
        assert_eq!(d.cca.inflight_hi(), Some(200 * (256 - 76) / 256), "{version:?}: x0.7 (beta 76/256)");

        // (c) below 5/256: 1 of 100 lost; no cut, still probing.
        let mut d = Driver::new(cca.clone());
        d.probe_bw(Phase::Up, 1000, 40);
        d.cca.bw_probe_samples = true;
        d.ack(A { new_round: false, lost: 1, tx_in_flight: 100, ..A::default() });
        assert_eq!(d.cca.inflight_hi(), None, "{version:?}");
        assert_eq!(d.cca.mode(), Mode::ProbeBw(Phase::Up));

        // (d) not a probe sample: no cut.
        let mut d = Driver::new(cca);
        d.probe_bw(Phase::Up, 1000, 40);
        d.ack(A { new_round: false, lost: 5, tx_in_flight: 100, ..A::default() });
        assert_eq!(d.cca.inflight_hi(), None, "{version:?}: only samples from the probe count");
    }
}

#[test]
fn inflight_hi_learned_on_a_shallow_buffer() {
    for cca in both() {
        let version = cca.version();
        let mut sim = PathSim::new(cca, 1000, ms(20));
        sim.buffer = Some(10);
        let mut hi_after_probe = None;
        sim.run_until(secs(8), |s| {
            if matches!(s.cca.mode(), Mode::ProbeBw(_)) && s.cca.inflight_hi().is_some() {
                hi_after_probe = s.cca.inflight_hi();
            }
        });
        assert!(sim.tp.lost > 0, "{version:?}: the buffer overflowed");
        let hi = hi_after_probe.expect("inflight_hi set");
        // Path holds BDP 21 + 10 queued packets; the bound must be near that.
        assert!((15..=50).contains(&hi), "{version:?}: inflight_hi {hi}");
    }
}

// ---------------------------------------------------------------------------
// Lower bounds
// ---------------------------------------------------------------------------

#[test]
fn lower_bounds_react_to_loss_in_cruise() {
    for cca in both() {
        let version = cca.version();
        let mut d = Driver::new(cca.clone());
        d.probe_bw(Phase::Cruise, 1000, 40);
        d.cca.loss_round_delivered = 0;
        d.ack(A { delivered: 10, ..A::default() }); // a loss round starts
        d.ack(A { new_round: false, losses: 2, delivered: 10, ..A::default() }); // loss in round
        assert_eq!(d.cca.bw_lo(), None, "{version:?}: reacts once per round");
        let cwnd = d.tp.cwnd;
        d.ack(A { delivered: 10, ..A::default() }); // round ends: adapt
        // bw_latest = 10 pkts / 20 ms = 500 pkt/s and inflight_latest = 10 are below
        // 0.7 x (1000 pkt/s, cwnd): the multiplicative cut (x 180/256) wins.
        assert_eq!(d.cca.bw_lo(), Some(bw_of(1000) * 180 / 256), "{version:?}");
        assert_eq!(d.cca.inflight_lo(), Some(cwnd * 180 / 256), "{version:?}");
        assert_eq!(d.cca.bw(), d.cca.bw_lo().unwrap(), "{version:?}: bw bounded by bw_lo");
        assert!(d.tp.cwnd <= cwnd * 180 / 256, "{version:?}: cwnd bounded by inflight_lo");

        // Probing (UP): no lower-bound reaction.
        let mut d = Driver::new(cca);
        d.probe_bw(Phase::Up, 1000, 40);
        d.cca.loss_round_delivered = 0;
        d.ack(A { delivered: 10, ..A::default() });
        d.ack(A { new_round: false, losses: 2, delivered: 10, ..A::default() });
        d.ack(A { delivered: 10, ..A::default() });
        assert_eq!((d.cca.bw_lo(), d.cca.inflight_lo()), (None, None), "{version:?}");
    }
}

#[test]
fn lower_bounds_reset_when_refill_starts() {
    for cca in both() {
        let mut d = Driver::new(cca);
        d.probe_bw(Phase::Cruise, 1000, 40);
        d.cca.bw_lo = bw_of(500);
        d.cca.inflight_lo = 20;
        d.cca.probe_wait = 0;
        d.ack(A::default());
        assert_eq!(d.cca.mode(), Mode::ProbeBw(Phase::Refill));
        assert_eq!((d.cca.bw_lo(), d.cca.inflight_lo()), (None, None));
    }
}

// ---------------------------------------------------------------------------
// ProbeRTT
// ---------------------------------------------------------------------------

#[test]
fn probe_rtt_holds_cwnd_at_half_bdp_for_at_least_200ms() {
    for cca in both() {
        let version = cca.version();
        let mut sim = PathSim::new(cca, 1000, ms(20));
        sim.run_until(secs(1), |_| {});
        // From now on every RTT sample is 2 ms above the minimum, so probe_rtt_min
        // is not refreshed and PROBE_RTT comes due 5 s after the last refresh.
        sim.extra_delay = ms(2);
        let mut entered = None;
        let mut low_since = None;
        let mut exited = None;
        let mut prev = sim.cca.mode();
        sim.run_until(secs(9), |s| {
            let mode = s.cca.mode();
            if mode == Mode::ProbeRtt {
                entered.get_or_insert(s.tp.now);
                let cap = s.cca.probe_rtt_cwnd();
                assert_eq!(cap, s.cca.bdp(s.cca.bw(), BBR_UNIT / 2).max(4));
                assert!(s.tp.cwnd <= cap, "{version:?}: cwnd {} <= ProbeRTT cap {cap}", s.tp.cwnd);
                if s.cca.probe_rtt_done_stamp.is_some() {
                    low_since.get_or_insert(s.tp.now);
                }
            }
            if prev == Mode::ProbeRtt && mode != Mode::ProbeRtt && exited.is_none() {
                exited = Some(s.tp.now);
                assert_eq!(mode, Mode::ProbeBw(Phase::Cruise), "{version:?}: back to CRUISE");
            }
            prev = mode;
        });
        let (entered, low, exited) = (entered.unwrap(), low_since.unwrap(), exited.expect("left ProbeRTT"));
        assert!(entered > secs(5) && entered < secs(7), "{version:?}: entered at {entered}");
        assert!(exited - low >= ms(200), "{version:?}: held {} ns", exited - low);
        assert!(exited - low < ms(300), "{version:?}: but not much longer");
        // Half of a ~22-packet BDP.
        let cap = sim.cca.bdp(sim.cca.bw(), BBR_UNIT / 2);
        assert!((10..=12).contains(&cap), "{version:?}: cap {cap}");
    }
}

// ---------------------------------------------------------------------------
// Registry and parameters
// ---------------------------------------------------------------------------

#[test]
fn params_defaults_are_the_reference_integers() {
    let c = Config::from_params(&V2::defaults()).unwrap();
    assert_eq!((c.startup_pacing_gain, c.startup_cwnd_gain, c.drain_gain), (739, 739, 88));
    assert_eq!((c.loss_thresh, c.beta, c.inflight_headroom, c.ecn_thresh), (5, 76, 38, 128));
    assert_eq!((c.probe_rtt_cwnd_gain, c.probe_down_pacing_gain, c.full_loss_cnt), (128, 192, 8));
    assert_eq!(c.probe_rtt_mode, ms(200));
    assert_eq!(c.probe_rtt_win, ms(5000));
    let built = crate::cc::build("bbr2", &serde_json::json!({"beta": 0.5, "probe_rtt_mode_ms": 100})).unwrap();
    assert_eq!(built.name(), "bbr2");
    assert!(crate::cc::build("bbr2", &serde_json::json!({"betta": 0.5})).is_err());
    assert!(crate::cc::build("bbr2", &serde_json::json!({"loss_thresh": 1.5})).is_err());
    let params = (INFO.params)();
    assert!(params.iter().all(|p| !p.doc.is_empty()), "every parameter is documented");
}

#[test]
fn metrics_report_state_and_model() {
    let mut d = Driver::new(v2());
    d.ack(A::default());
    let m = d.cca.metrics(&d.tp);
    assert_eq!(m.state, "startup");
    assert_eq!(m.min_rtt_ns, Some(ms(20)));
    assert_eq!(m.inflight_hi, None);
    assert_eq!(m.bw_lo_bps, None);
    // 20 packets per 20 ms = 1000 pkt/s = 12 Mbit/s at 1500 B.
    let bw = m.bw_bps.unwrap();
    assert!((bw - 12e6).abs() < 1e3, "bw {bw}");
    assert!((m.pacing_gain.unwrap() - 2.887).abs() < 1e-3);
}

// ---------------------------------------------------------------------------
// v3 vs v2: one test per behavioural difference (numbered as in cc/bbr3/mod.rs)
// ---------------------------------------------------------------------------

mod v3_vs_v2 {
    use super::*;

    /// 1, 2: Startup gains.
    #[test]
    fn startup_gains() {
        let mut a = Driver::new(v2());
        let mut b = Driver::new(v3());
        a.ack(A::default());
        b.ack(A::default());
        assert_eq!(a.cca.gains(), (739, 739), "v2: 2.885 / 2.885");
        assert_eq!(b.cca.gains(), (710, 512), "v3: 2.77 / 2.0");
        assert!(b.tp.pacing_rate < a.tp.pacing_rate);
    }

    /// 3, 4: PROBE_DOWN pacing gain and PROBE_UP cwnd gain.
    #[test]
    fn probe_bw_gains() {
        for (cca, down, up_cwnd) in [(v2(), 192, 512), (v3(), 232, 576)] {
            let mut d = Driver::new(cca);
            d.probe_bw(Phase::Down, 1000, 40);
            assert_eq!(d.cca.gains(), (down, 512));
            d.probe_bw(Phase::Up, 1000, 40);
            assert_eq!(d.cca.gains(), (320, up_cwnd));
        }
    }

    /// 5: loss exit needs 6 events in v3, 8 in v2.
    #[test]
    fn startup_loss_exit_event_count() {
        assert_eq!(startup_loss_round(v3(), 6, 10, 100, false).cca.mode(), Mode::Drain);
        assert_eq!(startup_loss_round(v2(), 6, 10, 100, false).cca.mode(), Mode::Startup);
    }

    /// 6: ECN re-probe after an ECN-only cycle.
    #[test]
    fn ecn_reprobe() {
        for (cca, reprobes) in [(v2(), false), (v3(), true)] {
            let mut d = Driver::new(cca);
            d.probe_bw(Phase::Cruise, 1000, 40);
            d.cca.ecn_eligible = true;
            d.cca.ecn_in_cycle = true;
            d.cca.inflight_hi = 100;
            d.ack(A::default());
            if reprobes {
                assert_eq!(d.cca.mode(), Mode::ProbeBw(Phase::Refill));
                assert_eq!(d.cca.bw_probe_up_rounds, 5, "2^5 ≈ 0.5 x inflight_hi 100");
            } else {
                assert_eq!(d.cca.mode(), Mode::ProbeBw(Phase::Cruise));
            }
        }
    }

    /// 7: plateau detection on per-ACK samples (mid-round growth counts at once).
    #[test]
    fn full_bw_from_samples() {
        let run = |cca: Bbr2| {
            let mut d = Driver::new(cca);
            d.tp.in_flight = 1000;
            d.ack(A { delivered: 20, ..A::default() }); // r1: full_bw 1000 pkt/s
            d.ack(A { delivered: 20, ..A::default() }); // r2: flat
            d.ack(A { new_round: false, delivered: 26, ..A::default() }); // +30% mid-round
            for _ in 0..3 {
                d.ack(A { delivered: 20, ..A::default() }); // r3..r5
            }
            d.cca.full_bw_reached()
        };
        assert!(run(v3()), "v3: the mid-round sample reset the count; 3 flat rounds followed");
        assert!(!run(v2()), "v2: growth only seen at r3's round start, count restarts there");
    }

    /// 8: PROBE_UP ends on a bw plateau in v3; on a queue in v2.
    #[test]
    fn probe_up_exit() {
        for cca in both() {
            let version = cca.version();
            let mut d = Driver::new(cca);
            d.probe_bw(Phase::Up, 1000, 40);
            d.tp.is_cwnd_limited = false;
            d.cca.full_bw = bw_of(1000);
            for _ in 0..3 {
                d.ack(A { prior_in_flight: 10, ..A::default() });
            }
            match version {
                Version::V3 => assert_eq!(d.cca.mode(), Mode::ProbeBw(Phase::Down), "v3 plateau"),
                Version::V2 => {
                    assert_eq!(d.cca.mode(), Mode::ProbeBw(Phase::Up), "v2: no queue yet");
                    d.tp.now += ms(30);
                    d.ack(A { prior_in_flight: 40, ..A::default() }); // >= 1.25 x BDP
                    assert_eq!(d.cca.mode(), Mode::ProbeBw(Phase::Down), "v2: queue");
                }
            }
        }
    }

    /// 9: loss exit from Startup keeps inflight_hi >= inflight_latest in v3.
    #[test]
    fn startup_exit_inflight_hi_includes_latest_delivery() {
        let a = startup_loss_round(v2(), 8, 10, 100, true);
        let b = startup_loss_round(v3(), 8, 10, 100, true);
        assert_eq!(a.cca.inflight_hi(), Some(a.cca.inflight(&a.tp, a.cca.max_bw(), BBR_UNIT)));
        assert_eq!(b.cca.inflight_hi(), Some(200), "v3: max(BDP, inflight_latest 200)");
    }

    /// 10: ECN in a probe cuts v2's bw_hi; v3 has none.
    #[test]
    fn ecn_probe_cuts_bw_hi_only_in_v2() {
        for cca in both() {
            let version = cca.version();
            let mut d = Driver::with_rtt(cca, ms(2));
            d.probe_bw(Phase::Up, 1000, 40);
            d.cca.bw_probe_samples = true;
            d.cca.ecn_eligible = true;
            d.ack(A { new_round: false, delivered: 10, ce: 6, ..A::default() });
            assert!(d.cca.inflight_hi().is_some(), "{version:?}: CE ratio 0.6 > 0.5");
            if version == Version::V2 {
                assert_eq!(d.cca.bw_hi, bw_of(1000) * 171 / 256, "v2: bw_hi x (1 - 1/3)");
            } else {
                assert_eq!(d.cca.bw_hi, BW_INF);
            }
        }
    }

    /// 11: ECN cuts bw_lo in v2, only inflight_lo in v3.
    #[test]
    fn ecn_lower_bounds() {
        // Without v3's ECN re-probe, which would start REFILL (and reset the
        // bounds) on the same ACK.
        let p3 = crate::cc::bbr3::Params { ecn_reprobe_gain: 0.0, ..crate::cc::bbr3::V3::defaults() };
        for cca in [v2(), Bbr2::new(&p3).unwrap()] {
            let version = cca.version();
            let mut d = Driver::with_rtt(cca, ms(2));
            d.probe_bw(Phase::Cruise, 1000, 40);
            d.cca.ecn_eligible = true;
            d.cca.loss_round_delivered = 0;
            d.ack(A::default());
            d.ack(A { new_round: false, ece: true, ce: 1, ..A::default() });
            let cwnd = d.tp.cwnd;
            d.ack(A::default());
            let cut = d.cca.ecn_cut();
            assert!(cut < 256);
            assert_eq!(d.cca.inflight_lo(), Some(cwnd * cut / 256), "{version:?}: x (1 - alpha/3)");
            match version {
                Version::V2 => assert!(d.cca.bw_lo().is_some()),
                Version::V3 => assert_eq!(d.cca.bw_lo(), None),
            }
        }
    }

    /// 12: ECN "too high" at exactly ecn_thresh only in v2.
    #[test]
    fn ecn_thresh_equality() {
        for (mut cca, too_high) in [(v2(), true), (v3(), false)] {
            cca.ecn_eligible = true;
            let rs = RateSample { delivered: 10, delivered_ce: 5, ..Default::default() };
            assert_eq!(cca.is_inflight_too_high(&rs), too_high);
        }
    }

    /// 13: v3 tracks the latest-round delivery even on the fast path.
    #[test]
    fn latest_delivery_signals_on_fast_path() {
        for cca in both() {
            let version = cca.version();
            let mut d = Driver::new(cca);
            d.probe_bw(Phase::Cruise, 1000, 40);
            d.cca.try_fast_path = true;
            d.cca.bw_latest = 0;
            d.ack(A { new_round: false, app_limited: true, delivered: 10, ..A::default() });
            assert_eq!(d.cca.bw_latest > 0, version == Version::V3, "{version:?}");
        }
    }

    /// 14: an RTT equal to probe_rtt_min refreshes its stamp only in v2.
    #[test]
    fn probe_rtt_min_refresh_needs_lower_rtt_in_v3() {
        for (cca, refreshed) in [(v2(), true), (v3(), false)] {
            let mut d = Driver::new(cca);
            let before = d.cca.probe_rtt_min_stamp;
            d.ack(A { rtt: Some(ms(20)), ..A::default() });
            assert_eq!(d.cca.probe_rtt_min_stamp != before, refreshed);
        }
    }

    /// 15: unused inflight_hi growth credits are kept in v3.
    #[test]
    fn probe_up_credits() {
        for (cca, kept) in [(v2(), 0), (v3(), 5)] {
            let mut d = Driver::new(cca);
            d.probe_bw(Phase::Up, 1000, 40);
            d.cca.inflight_hi = 100;
            d.cca.bw_probe_up_acks = 5;
            d.ack(A { new_round: false, ..A::default() });
            assert_eq!(d.cca.bw_probe_up_acks, kept);
        }
    }

    /// 16: RTO in CRUISE: inflight_lo from max(cwnd, prior_cwnd) in v3.
    #[test]
    fn rto_inflight_lo() {
        for (cca, lo) in [(v2(), 20), (v3(), 40)] {
            let mut d = Driver::new(cca);
            d.probe_bw(Phase::Cruise, 1000, 40);
            d.cca.prior_cwnd = 20;
            d.cca.full_bw_now = true;
            d.cca.set_state(&mut d.tp, CaState::Loss);
            assert_eq!(d.cca.inflight_lo(), Some(lo));
            assert_eq!(d.cca.full_bw_now, lo == 20, "v3 resets the plateau detector");
        }
    }

    /// 17: first-round anchor and TSO floor.
    #[test]
    fn init_anchor_and_tso_floor() {
        for (mut cca, anchor, segs) in [(v2(), 0, 1), (v3(), 100, 2)] {
            let mut tp = tcp_state(3);
            tp.delivered = 100;
            cca.init(&mut tp);
            assert_eq!(cca.next_rtt_delivered, anchor);
            tp.pacing_rate = 100_000; // 0.8 Mbit/s
            assert_eq!(cca.tso_segs_goal(&tp), segs);
        }
    }

    /// 18: v2's refill_add_inc experiment is gone in v3.
    #[test]
    fn refill_add_inc_is_v2_only() {
        let p2 = Params::<V2> { refill_add_inc: 3, ..V2::defaults() };
        let p3 = crate::cc::bbr3::Params { refill_add_inc: 3, ..crate::cc::bbr3::V3::defaults() };
        for (cca, hi) in [(Bbr2::new(&p2).unwrap(), 103), (Bbr2::new(&p3).unwrap(), 100)] {
            let mut d = Driver::new(cca);
            d.probe_bw(Phase::Cruise, 1000, 40);
            d.cca.inflight_hi = 100;
            d.cca.probe_wait = 0;
            d.ack(A::default());
            assert_eq!(d.cca.mode(), Mode::ProbeBw(Phase::Refill));
            assert_eq!(d.cca.inflight_hi(), Some(hi));
        }
    }
}

