//! The three-way handshake, as Linux 6.18 opens a connection:
//!
//! * the client ([`Connect`], `SYN_SENT`): `tcp_connect` sends the SYN and arms the
//!   retransmission timer at `TCP_TIMEOUT_INIT` (1 s); `tcp_retransmit_timer` resends
//!   it, keeping the timeout at 1 s for the first `tcp_syn_linear_timeouts` (4)
//!   backoffs and doubling it after (≤ `TCP_RTO_MAX`); `tcp_write_timeout` gives up
//!   when the timer fires after `tcp_syn_retries` (6) + 4 retransmissions, 131 s after
//!   the first SYN. The SYN-ACK completes it (`tcp_rcv_synsent_state_process`): the
//!   client ACKs at once and starts sending.
//! * the server ([`Listen`], a request socket): `tcp_conn_request` answers a SYN with
//!   a SYN-ACK and arms `reqsk_timer_handler` at 1 s, doubling per timeout; it gives
//!   up after `tcp_synack_retries` (5) resends (63 s). A retransmitted SYN makes it
//!   resend the SYN-ACK at once (`tcp_check_req` → `inet_rtx_syn_ack`). The client's
//!   ACK, or a data segment (it carries the ACK flag), completes it.
//!
//! RTT: the client takes its first sample from the SYN-ACK (`tcp_ack_update_rtt`):
//! the SYN's send time if it was never resent (Karn), else the echoed timestamp in
//! the 1 ms TS clock; the server from its SYN-ACK (`tcp_synack_rtt_meas`, the same
//! rule). `tcp_init_transfer` then starts the client at cwnd 1 if more than one SYN
//! was resent, else at the initial window, with ssthresh reset to infinity
//! (`tcp_init_metrics`: "ssthresh may have been reduced unnecessarily during 3WHS").
//!
//! Deviations: no TCP metrics cache (each connection starts fresh, as with
//! `tcp_no_metrics_save = 1`); no out-of-window rate limit on SYN-ACKs answering
//! retransmitted SYNs (`tcp_invalid_ratelimit`, 500 ms: client SYNs are ≥ 1 s apart);
//! no listen-queue overflow or SYN cookies; the CCA sees nothing of the SYN's RTT
//! sample but `srtt` and `min_rtt` at its `init` (Linux's `pkts_acked` on the SYN's
//! ACK runs on a CCA that `tcp_init_transfer` then re-initialises).

use crate::tcp::rtt::{RTO_INIT, RTO_MAX};
use crate::units::{ms, Time};

/// `sysctl_tcp_syn_retries`.
pub const SYN_RETRIES: u32 = 6;
/// `sysctl_tcp_syn_linear_timeouts` (Linux ≥ 6.5): SYN backoffs kept at 1 s.
pub const SYN_LINEAR_TIMEOUTS: u32 = 4;
/// `sysctl_tcp_synack_retries`.
pub const SYNACK_RETRIES: u32 = 5;
/// One tick of the TCP timestamp clock (`TCP_TS_HZ` = 1000).
const TS_TICK: Time = ms(1);

/// An RTT sample from an echoed timestamp: whole 1 ms ticks, at least one
/// (`tcp_ack_update_rtt` with `rcv_tsecr`).
pub fn ts_rtt(now: Time, tsecr: Time) -> Time {
    (now / TS_TICK).saturating_sub(tsecr / TS_TICK).max(1) * TS_TICK
}

/// What the client's SYN timer decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SynTimeout {
    /// Resend the SYN (its timer is rearmed).
    Resend,
    /// Give up: the connection failed (`tcp_write_err`, ETIMEDOUT).
    Fail,
}

/// The client while its SYN is unanswered (`SYN_SENT`).
#[derive(Debug, Clone)]
pub struct Connect {
    /// When the first SYN left.
    pub first_syn: Time,
    /// SYN retransmissions so far (`icsk_retransmits`, `total_retrans`).
    pub retransmits: u32,
    rto: Time,
    /// When the retransmission timer fires.
    pub timer: Time,
}

impl Connect {
    /// The first SYN leaves now (`tcp_connect`).
    pub fn new(now: Time) -> Self {
        Self { first_syn: now, retransmits: 0, rto: RTO_INIT, timer: now + RTO_INIT }
    }

    /// The timer fired (`tcp_retransmit_timer` in `SYN_SENT`).
    pub fn on_timer(&mut self, now: Time) -> SynTimeout {
        if self.retransmits >= SYN_RETRIES + SYN_LINEAR_TIMEOUTS {
            return SynTimeout::Fail;
        }
        self.retransmits += 1;
        // icsk_backoff equals the retransmissions here: linear while ≤ 4.
        if self.retransmits > SYN_LINEAR_TIMEOUTS {
            self.rto = (2 * self.rto).min(RTO_MAX);
        }
        self.timer = now + self.rto;
        SynTimeout::Resend
    }

    /// The RTT sample the SYN-ACK gives (echoing `tsecr`), arriving `now`.
    pub fn rtt_sample(&self, now: Time, tsecr: Time) -> Time {
        if self.retransmits == 0 {
            (now - self.first_syn).max(1)
        } else {
            ts_rtt(now, tsecr)
        }
    }

    /// `tcp_init_transfer`: cwnd 1 after more than one SYN retransmission.
    pub fn restarts_at_one_segment(&self) -> bool {
        self.retransmits > 1
    }
}

/// The server's request socket while its SYN-ACK is unanswered.
#[derive(Debug, Clone)]
struct Request {
    /// `num_timeout`: timer-driven SYN-ACK resends.
    num_timeout: u32,
    /// `num_retrans`: all SYN-ACK resends (timer or retransmitted SYN).
    num_retrans: u32,
    timer: Time,
    /// When the latest SYN-ACK left (`snt_synack`).
    sent: Time,
    /// TSval of the SYN that opened the request (`ts_recent`), echoed in SYN-ACKs.
    ts_recent: Time,
}

/// The server's side of the handshake: at most one pending request.
#[derive(Debug, Clone, Default)]
pub struct Listen {
    req: Option<Request>,
    /// The request was answered (client's ACK or data): the connection is up.
    pub established: bool,
}

impl Listen {
    /// A SYN with `tsval` arrives: returns the TSecr of the SYN-ACK to send now, if any.
    pub fn on_syn(&mut self, now: Time, tsval: Time) -> Option<Time> {
        if self.established {
            // Linux answers a SYN on an established socket with a challenge ACK; the
            // client is past SYN_SENT and ignores it, so nothing is modelled.
            return None;
        }
        match &mut self.req {
            Some(r) => {
                // `tcp_check_req` returns on a retransmitted SYN before it updates
                // `ts_recent`: the SYN-ACK still echoes the first SYN's TSval.
                r.num_retrans += 1;
                r.sent = now;
                // `tcp_check_req` re-arms the timer from its current backoff.
                r.timer = now + (RTO_INIT << r.num_timeout).min(RTO_MAX);
            }
            None => {
                self.req =
                    Some(Request { num_timeout: 0, num_retrans: 0, timer: now + RTO_INIT, sent: now, ts_recent: tsval })
            }
        }
        self.req.as_ref().map(|r| r.ts_recent)
    }

    /// When the SYN-ACK timer fires, if a request is pending.
    pub fn timer(&self) -> Option<Time> {
        self.req.as_ref().map(|r| r.timer)
    }

    /// The SYN-ACK timer fired (`reqsk_timer_handler`): the TSecr of the SYN-ACK to
    /// resend, or None if the request was dropped after its retries.
    pub fn on_timer(&mut self, now: Time) -> Option<Time> {
        let r = self.req.as_mut()?;
        if r.timer > now {
            return None;
        }
        if r.num_timeout >= SYNACK_RETRIES {
            self.req = None;
            return None;
        }
        r.num_timeout += 1;
        r.num_retrans += 1;
        r.sent = now;
        r.timer = now + (RTO_INIT << r.num_timeout).min(RTO_MAX);
        Some(r.ts_recent)
    }

    /// The client's ACK (echoing `tsecr`; None for a data segment's, which the model
    /// does not time) completes the request: returns the server's RTT sample
    /// (`tcp_synack_rtt_meas`), or None if no request was pending.
    pub fn on_ack(&mut self, now: Time, tsecr: Option<Time>) -> Option<Time> {
        let r = self.req.take()?;
        self.established = true;
        if r.num_retrans == 0 {
            Some((now - r.sent).max(1))
        } else {
            tsecr.map(|t| ts_rtt(now, t))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::secs;

    /// Linux ≥ 6.5 with its defaults: SYNs at 0, 1, 2, 3, 4, 5, 7, 11, 19, 35, 67 s and
    /// ETIMEDOUT at 131 s (`tcp_syn_linear_timeouts` = 4, `tcp_syn_retries` = 6).
    #[test]
    fn syn_resends_follow_linux_linear_then_exponential_backoff_and_fail_at_131_s() {
        let mut c = Connect::new(0);
        let mut resends = vec![];
        loop {
            let t = c.timer;
            match c.on_timer(t) {
                SynTimeout::Resend => resends.push(t / secs(1)),
                SynTimeout::Fail => {
                    assert_eq!(t, secs(131));
                    break;
                }
            }
        }
        assert_eq!(resends, [1, 2, 3, 4, 5, 7, 11, 19, 35, 67]);
    }

    /// `reqsk_timer_handler`: SYN-ACK resends at 1, 3, 7, 15, 31 s, dropped at 63 s.
    #[test]
    fn synack_resends_double_and_the_request_is_dropped_after_five() {
        let mut l = Listen::default();
        assert_eq!(l.on_syn(0, 7), Some(7));
        let mut resends = vec![];
        while let Some(t) = l.timer() {
            match l.on_timer(t) {
                Some(tsecr) => {
                    assert_eq!(tsecr, 7);
                    resends.push(t / secs(1));
                }
                None => assert_eq!(t, secs(63)),
            }
        }
        assert_eq!(resends, [1, 3, 7, 15, 31]);
        // A SYN after the drop opens a fresh request.
        assert_eq!(l.on_syn(secs(64), 9), Some(9));
        assert_eq!(l.timer(), Some(secs(65)));
    }

    #[test]
    fn rtt_samples_follow_karn_then_timestamps() {
        let c = Connect::new(ms(10));
        assert_eq!(c.rtt_sample(ms(10) + 60_000, ms(10)), 60_000, "an unresent SYN is timed exactly");
        let mut c = Connect::new(0);
        assert_eq!(c.on_timer(secs(1)), SynTimeout::Resend);
        // The SYN-ACK echoes the resent SYN's TSval: whole ms ticks, at least one.
        assert_eq!(c.rtt_sample(secs(1) + 60_000, secs(1)), ms(1));
        assert_eq!(c.rtt_sample(secs(1) + ms(30) + 1, secs(1)), ms(30));
        assert!(!c.restarts_at_one_segment());
        c.on_timer(secs(2));
        assert!(c.restarts_at_one_segment(), "tcp_init_transfer: cwnd 1 after two SYN resends");

        let mut l = Listen::default();
        l.on_syn(ms(5), ms(5));
        assert_eq!(l.on_ack(ms(25), Some(ms(5))), Some(ms(20)));
        assert!(l.established && l.timer().is_none());
        assert_eq!(l.on_syn(ms(30), ms(30)), None, "a late SYN opens nothing once established");
        // The SYN-ACK was lost: the resent SYN's answer echoes the first SYN.
        let mut l = Listen::default();
        assert_eq!(l.on_syn(0, 0), Some(0));
        assert_eq!(l.on_syn(secs(1), secs(1)), Some(0));
        assert_eq!(l.timer(), Some(secs(2)));
        assert_eq!(l.on_ack(secs(1) + ms(20), Some(secs(1))), Some(ms(20)), "a resent SYN-ACK is timed by TSecr");
    }
}
