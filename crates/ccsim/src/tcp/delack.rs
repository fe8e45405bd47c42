//! The receiver's ACK policy as Linux runs it (net/ipv4/tcp_input.c and
//! tcp_output.c, Linux 6.18):
//!
//! * `__tcp_ack_snd_check`: ACK at once when more than one full frame is unacked,
//!   in quick-ACK mode, or when the protocol demands it (`ICSK_ACK_NOW`: a filled
//!   hole, a duplicate); with out-of-order data, the first `TCP_FASTRETRANS_THRESH`
//!   duplicate ACKs per `rcv_nxt` go at once and later ones are **compressed** (one
//!   SACK per min(5 % of the RTT, `tcp_comp_sack_delay_ns` = 1 ms), at most
//!   `tcp_comp_sack_nr` = 44 held back); otherwise the delayed-ACK timer.
//! * quick-ACK mode (`tcp_incr_quickack`, `tcp_enter_quickack_mode`,
//!   `tcp_dec_quickack_mode`): up to 16 immediate ACKs at the start, after a
//!   duplicate segment, after a receive gap longer than the RTO, and 2 after a CE mark.
//! * the `ato` estimator (`tcp_event_data_recv`) and the delayed-ACK timer
//!   (`tcp_send_delayed_ack`, `tcp_delack_timer_handler`), in jiffies.
//!
//! Not modelled: the application's reads (`tcp_cleanup_rbuf` ACKs when the reader
//! drains the queue; the host's timing noise stands in for that jitter), pingpong
//! mode (bulk data has no reverse traffic), receive-window shrink checks.

use crate::host::clock::Jiffies;
use crate::units::{ms, Time};

/// `TCP_MAX_QUICKACKS`.
pub const MAX_QUICKACKS: u32 = 16;
/// `TCP_ATO_MIN` = HZ/25 jiffies (40 ms).
pub const ATO_MIN: Time = ms(40);
/// `TCP_DELACK_MAX` (200 ms), the bound `icsk_delack_max` starts at.
pub const DELACK_MAX: Time = ms(200);
/// The receiver's RTO that caps `ato`. Deviation: Linux uses the receiving
/// socket's own RTO (from the handshake's RTT, so `TCP_RTO_MIN` = 200 ms on any
/// path shorter than ~50 ms); there is no handshake here, so it is that minimum.
pub const RECEIVER_RTO: Time = ms(200);
/// `TCP_FASTRETRANS_THRESH`: duplicate ACKs sent at once before compressing.
pub const FASTRETRANS_THRESH: u32 = 3;
/// `sysctl_tcp_comp_sack_nr`.
pub const COMP_SACK_NR: u32 = 44;
/// `sysctl_tcp_comp_sack_delay_ns`.
pub const COMP_SACK_DELAY: Time = ms(1);
/// `sysctl_tcp_comp_sack_slack_ns` (100 µs): the hrtimer may fire this much later;
/// the model fires at the earliest instant.
pub const COMP_SACK_SLACK: Time = 100_000;

/// What the receiver decided about one arriving segment (or GRO frame).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckDecision {
    Now,
    /// Wait for the delayed-ACK or the SACK-compression timer (`deadline`).
    Later,
}

#[derive(Debug, Clone)]
pub struct AckPolicy {
    clock: Jiffies,
    /// Delayed ACKs on (`false`: ACK every segment, a non-Linux ideal).
    delayed: bool,
    /// `icsk_ack.quick`: immediate ACKs left in quick-ACK mode.
    pub quick: u32,
    /// `icsk_ack.ato` (ns, a whole number of jiffies); 0 until the first data.
    pub ato: Time,
    /// `icsk_ack.lrcvtime` in jiffies.
    lrcvtime: u32,
    /// `ICSK_ACK_NOW`.
    ack_now: bool,
    /// Delayed-ACK timer expiry (`icsk_ack.timeout` with `ICSK_ACK_TIMER`).
    pub delack_timer: Option<Time>,
    /// SACK-compression state: `compressed_ack_rcv_nxt`, `dup_ack_counter`,
    /// `compressed_ack` and the hrtimer.
    compressed_rcv_nxt: u64,
    dup_ack_counter: u32,
    pub compressed: u32,
    pub comp_timer: Option<Time>,
}

impl AckPolicy {
    pub fn new(clock: Jiffies, delayed: bool) -> Self {
        Self {
            clock,
            delayed,
            quick: 0,
            ato: 0,
            lrcvtime: 0,
            ack_now: false,
            delack_timer: None,
            compressed_rcv_nxt: u64::MAX,
            dup_ack_counter: 0,
            compressed: 0,
            comp_timer: None,
        }
    }

    pub fn is_delayed(&self) -> bool {
        self.delayed
    }

    fn ato_min(&self) -> Time {
        self.clock.from_ns(ATO_MIN) * self.clock.tick()
    }

    /// `tcp_incr_quickack` (the receive window is never the limit here, so the
    /// count is `max_quickacks`).
    pub fn incr_quickack(&mut self, max_quickacks: u32) {
        self.quick = self.quick.max(max_quickacks);
    }

    /// `tcp_enter_quickack_mode`.
    pub fn enter_quickack_mode(&mut self, max_quickacks: u32) {
        self.incr_quickack(max_quickacks);
        self.ato = self.ato_min();
    }

    /// `ICSK_ACK_NOW`: the next check sends an ACK (a hole was filled).
    pub fn ack_now(&mut self) {
        self.ack_now = true;
    }

    /// `tcp_event_data_recv`: in-order data arrived at `now`.
    pub fn on_data_recv(&mut self, now: Time) {
        let j = self.clock.at(now);
        if self.ato == 0 {
            // The first data segment initializes the delayed-ACK engine.
            self.incr_quickack(MAX_QUICKACKS);
            self.ato = self.ato_min();
        } else {
            let tick = self.clock.tick();
            let m = j.wrapping_sub(self.lrcvtime) as Time * tick;
            let ato_min = self.ato_min();
            if m <= ato_min / 2 {
                self.ato = round_down(self.ato / 2, tick) + ato_min / 2;
            } else if m < self.ato {
                self.ato = (round_down(self.ato / 2, tick) + m).min(RECEIVER_RTO);
            } else if m > RECEIVER_RTO {
                // "Too long gap. Apparently sender failed to restart window."
                self.incr_quickack(MAX_QUICKACKS);
            }
        }
        self.lrcvtime = j;
    }

    /// `tcp_in_quickack_mode`.
    pub fn in_quickack_mode(&self) -> bool {
        self.quick > 0
    }

    /// `__tcp_ack_snd_check` after a segment (or a GRO frame) was queued.
    /// `frames_unacked_gt1`: more than one full frame since the last ACK
    /// (`rcv_nxt - rcv_wup > rcv_mss`); `ofo`: the out-of-order queue is not empty;
    /// `rcv_nxt` and `srtt` feed SACK compression.
    pub fn check(&mut self, now: Time, frames_unacked_gt1: bool, ofo: bool, rcv_nxt: u64, srtt: Time) -> AckDecision {
        if !self.delayed || frames_unacked_gt1 || self.in_quickack_mode() || self.ack_now {
            return AckDecision::Now;
        }
        if !ofo {
            self.send_delayed_ack(now, srtt);
            return if self.delack_timer.is_some_and(|t| t <= now) { AckDecision::Now } else { AckDecision::Later };
        }
        if self.compressed >= COMP_SACK_NR {
            return AckDecision::Now;
        }
        if self.compressed_rcv_nxt != rcv_nxt {
            self.compressed_rcv_nxt = rcv_nxt;
            self.dup_ack_counter = 0;
        }
        if self.dup_ack_counter < FASTRETRANS_THRESH {
            self.dup_ack_counter += 1;
            return AckDecision::Now;
        }
        self.compressed += 1;
        if self.comp_timer.is_none() {
            // "compress ack timer : 5 % of rtt, but no more than tcp_comp_sack_delay_ns"
            let delay = if srtt > 0 { (srtt / 20).min(COMP_SACK_DELAY) } else { COMP_SACK_DELAY };
            self.comp_timer = Some(now + delay);
        }
        AckDecision::Later
    }

    /// `tcp_send_delayed_ack`: arm (or keep) the delayed-ACK timer. If the armed
    /// timer is within ato/4, the ACK goes now (signalled by an expiry ≤ now).
    fn send_delayed_ack(&mut self, now: Time, srtt: Time) {
        let tick = self.clock.tick();
        let mut ato = self.ato.max(tick);
        if ato > self.ato_min() {
            // Slow path: bound by the RTT estimate and HZ/2.
            let mut max_ato = self.clock.from_ns(crate::units::NS_PER_SEC / 2) * tick;
            if srtt > 0 {
                let rtt = (self.clock.from_ns(srtt) * tick).max(self.ato_min());
                max_ato = max_ato.min(rtt);
            }
            ato = ato.min(max_ato);
        }
        ato = ato.min(DELACK_MAX);
        let n = ato / tick;
        let mut timeout = self.clock.timer_expiry(now, n);
        if let Some(t) = self.delack_timer {
            // "If delack timer is about to expire, send ACK now."
            if t <= (self.clock.at(now) as u64 + n / 4) * tick {
                self.delack_timer = Some(now);
                return;
            }
            timeout = timeout.min(t);
        }
        self.delack_timer = Some(timeout);
    }

    /// Earliest pending timer.
    pub fn deadline(&self) -> Option<Time> {
        match (self.delack_timer, self.comp_timer) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// A timer fired at `now`: whether to send an ACK. The delayed-ACK timer
    /// firing means the ACK was "missed": `ato` doubles (`tcp_delack_timer_handler`).
    pub fn on_timer(&mut self, now: Time) -> bool {
        let mut send = false;
        if self.comp_timer.is_some_and(|t| t <= now) {
            self.comp_timer = None;
            send = self.compressed > 0;
        }
        if self.delack_timer.is_some_and(|t| t <= now) {
            self.delack_timer = None;
            self.ato = (self.ato * 2).min(RECEIVER_RTO);
            send = true;
        }
        send
    }

    /// `tcp_event_ack_sent` → `tcp_dec_quickack_mode` and timer clearing
    /// (`inet_csk_clear_xmit_timer(ICSK_TIME_DACK)`, `tcp_sack_compress_send_ack`).
    pub fn on_ack_sent(&mut self) {
        if self.quick > 0 {
            self.quick -= 1;
            if self.quick == 0 {
                self.ato = self.ato_min();
            }
        }
        self.ack_now = false;
        self.delack_timer = None;
        self.comp_timer = None;
        self.compressed = 0;
    }
}

fn round_down(t: Time, tick: Time) -> Time {
    t / tick * tick
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::us;

    fn policy() -> AckPolicy {
        AckPolicy::new(Jiffies::new(250), true)
    }

    #[test]
    fn first_data_enters_quickack_mode_for_16_acks() {
        let mut p = policy();
        p.on_data_recv(ms(1));
        assert_eq!(p.quick, MAX_QUICKACKS);
        assert_eq!(p.ato, ATO_MIN);
        for _ in 0..MAX_QUICKACKS {
            assert_eq!(p.check(ms(1), false, false, 1, ms(20)), AckDecision::Now);
            p.on_ack_sent();
        }
        assert_eq!(p.check(ms(1), false, false, 1, ms(20)), AckDecision::Later);
        assert_eq!(p.check(ms(1), true, false, 2, ms(20)), AckDecision::Now, "two full frames");
    }

    #[test]
    fn delayed_ack_timer_is_ato_rounded_to_jiffies_and_inflates_when_it_fires() {
        let mut p = policy();
        p.on_data_recv(ms(0));
        p.quick = 0;
        // Armed at 5 ms with ato = 40 ms = 10 jiffies: fires at the start of tick 11 (44 ms).
        assert_eq!(p.check(ms(5), false, false, 1, ms(20)), AckDecision::Later);
        assert_eq!(p.delack_timer, Some(ms(44)));
        // A later segment does not push it back.
        assert_eq!(p.check(ms(6), false, false, 1, ms(20)), AckDecision::Later);
        assert_eq!(p.delack_timer, Some(ms(44)));
        assert!(!p.on_timer(ms(43)));
        assert!(p.on_timer(ms(44)));
        assert_eq!(p.ato, ms(80), "a missed delayed ACK doubles ato");
    }

    #[test]
    fn ato_estimator_follows_tcp_event_data_recv() {
        let mut p = policy();
        p.on_data_recv(ms(0));
        p.ato = ms(200);
        // Back-to-back data (m = 0 ≤ ATO_MIN/2): ato = ato/2 + ATO_MIN/2.
        p.on_data_recv(ms(1));
        assert_eq!(p.ato, ms(120));
        // A 60 ms gap (ATO_MIN/2 < m < ato): ato = ato/2 + m.
        p.on_data_recv(ms(61));
        assert_eq!(p.ato, ms(120));
        // A gap beyond the RTO re-enters quick-ACK mode.
        p.quick = 0;
        p.on_data_recv(ms(400));
        assert_eq!(p.quick, MAX_QUICKACKS);
    }

    #[test]
    fn duplicates_and_holes_force_an_ack_and_quickack_mode() {
        let mut p = policy();
        p.on_data_recv(ms(0));
        p.quick = 0;
        p.enter_quickack_mode(MAX_QUICKACKS);
        assert_eq!(p.check(ms(1), false, false, 5, ms(20)), AckDecision::Now);
        let mut q = policy();
        q.on_data_recv(ms(0));
        q.quick = 0;
        q.ack_now();
        assert_eq!(q.check(ms(1), false, false, 5, ms(20)), AckDecision::Now);
        q.on_ack_sent();
        assert_eq!(q.check(ms(1), false, false, 6, ms(20)), AckDecision::Later);
    }

    #[test]
    fn out_of_order_acks_three_at_once_then_compressed_at_5_percent_of_rtt() {
        let mut p = policy();
        p.on_data_recv(ms(0));
        p.quick = 0;
        for _ in 0..FASTRETRANS_THRESH {
            assert_eq!(p.check(ms(10), false, true, 7, ms(20)), AckDecision::Now);
            p.on_ack_sent();
        }
        assert_eq!(p.check(ms(10), false, true, 7, ms(20)), AckDecision::Later);
        assert_eq!(p.comp_timer, Some(ms(11)), "min(20 ms / 20, 1 ms)");
        assert_eq!(p.check(ms(10) + us(100), false, true, 7, ms(20)), AckDecision::Later);
        assert_eq!(p.compressed, 2);
        assert!(p.on_timer(ms(11)));
        // Short RTT: 5 % of 50 µs.
        let mut s = policy();
        s.on_data_recv(0);
        s.quick = 0;
        for _ in 0..FASTRETRANS_THRESH {
            s.check(ms(1), false, true, 3, us(50));
        }
        s.check(ms(1), false, true, 3, us(50));
        assert_eq!(s.comp_timer, Some(ms(1) + 2_500));
        // A new rcv_nxt restarts the immediate duplicate-ACK count.
        s.on_ack_sent();
        assert_eq!(s.check(ms(2), false, true, 4, us(50)), AckDecision::Now);
    }

    #[test]
    fn at_most_44_acks_are_compressed() {
        let mut p = policy();
        p.on_data_recv(0);
        p.quick = 0;
        p.compressed = COMP_SACK_NR;
        assert_eq!(p.check(ms(1), false, true, 3, ms(20)), AckDecision::Now);
    }

    #[test]
    fn without_delayed_acks_every_segment_is_acked() {
        let mut p = AckPolicy::new(Jiffies::new(250), false);
        p.on_data_recv(0);
        p.quick = 0;
        assert_eq!(p.check(ms(1), false, false, 1, ms(20)), AckDecision::Now);
    }
}
