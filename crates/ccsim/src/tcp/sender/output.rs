//! The transmit path (`tcp_write_xmit`, `tcp_xmit_retransmit_queue`,
//! `tcp_transmit_skb`) and pacing (Linux internal pacing, EDT).
//!
//! This is the seam where TCP hands packets out: `send_segment` is the only place
//! that pushes a `Segment` into the caller's `out` vector; everything below TCP
//! (host, links, qdiscs) starts from that vector.

use super::scoreboard::{Seg, APP_LIMITED, EVER_RETRANS, LOST, RATE_VALID, RETRANS, SACKED};
use super::timers::XmitTimer;
use super::Sender;
use crate::cc::{CaEvent, CaState};
use crate::host::gso::{cwnd_quota, should_defer, DeferInput};
use crate::net::Segment;
use crate::units::Time;

impl Sender {
    pub(super) fn has_new_data(&self) -> bool {
        !self.stopped
            && self.total_segs.is_none_or(|t| self.snd_nxt < t)
            && self.app_written.is_none_or(|w| self.snd_nxt < w)
    }

    /// `tcp_write_xmit` / `tcp_xmit_retransmit_queue`: send while cwnd, the receive
    /// window and pacing allow, lost segments first. New data leaves in skbs of up to
    /// `tcp_tso_segs` segments (one pacing check per skb, so an skb's segments leave
    /// back to back); retransmissions are one segment per skb.
    pub(super) fn transmit(&mut self, now: Time, out: &mut Vec<Segment>) {
        let mut cwnd_limited = false;
        self.pacing_blocked = false;
        let paced = self.tp.pacing_enabled && self.tp.pacing_rate > 0;
        // Segments the current skb may still carry (0: the next segment starts an skb).
        let mut skb_left = 0u32;
        let mut sent = 0u32;
        loop {
            if self.in_flight() >= self.tp.cwnd {
                cwnd_limited = true;
                break;
            }
            let candidate = if let Some(seg) = self.next_retransmit() {
                Some((seg, true))
            } else if self.has_new_data() && self.snd_nxt - self.snd_una < self.rwnd_segs as u64 {
                Some((self.snd_nxt, false))
            } else {
                None
            };
            let Some((seg, is_retrans)) = candidate else {
                // Nothing to send although cwnd allows: application-limited
                // (`tcp_rate_check_app_limited`).
                if !self.has_new_data() {
                    self.tp.app_limited = (self.tp.delivered + self.in_flight() as u64).max(1);
                }
                break;
            };
            if skb_left == 0 || is_retrans {
                // `tcp_pacing_check`, once per skb.
                if paced && self.next_send_time > now {
                    self.pacing_blocked = true;
                    break;
                }
                skb_left = if is_retrans { 1 } else { self.new_skb_segs(now) };
                if skb_left == 0 {
                    // `tcp_tso_should_defer`: wait for an ACK to build a bigger skb. A
                    // deferral for want of cwnd (not of receive window or data) marks
                    // the flow cwnd-limited.
                    let cong_win = self.tp.cwnd.saturating_sub(self.in_flight()) as u64;
                    let rwnd_room = (self.rwnd_segs as u64).saturating_sub(self.snd_nxt - self.snd_una);
                    let data_left = self.total_segs.map_or(u64::MAX, |t| t - self.snd_nxt);
                    if cong_win < rwnd_room.min(data_left) {
                        cwnd_limited = true;
                    }
                    break;
                }
                self.last_skb_time = now;
            }
            skb_left -= 1;
            if is_retrans {
                self.lost_unretx -= 1;
            }
            self.send_segment(now, seg, is_retrans, out);
            sent += 1;
        }
        // `tcp_cwnd_validate`, only when something was sent or cwnd stopped us
        // (`tcp_write_xmit`).
        cwnd_limited |= self.in_flight() >= self.tp.cwnd;
        let packets_out = self.packets_out();
        let validate = sent > 0 || cwnd_limited;
        if validate
            && (self.snd_una >= self.cwnd_usage_seq
                || cwnd_limited
                || (!self.tp.is_cwnd_limited && packets_out > self.max_packets_out))
        {
            self.tp.is_cwnd_limited = cwnd_limited;
            self.max_packets_out = packets_out;
            self.cwnd_usage_seq = self.snd_nxt;
        }
        if self.xmit_timer.is_none() && self.packets_out() > 0 {
            self.set_xmit_timer(now);
        }
    }

    /// Segments in the next skb of new data (`tcp_tso_segs` capped by
    /// `tcp_cwnd_test`), or 0 when `tcp_tso_should_defer` holds it back.
    fn new_skb_segs(&self, now: Time) -> u32 {
        let gso = self.gso;
        if gso.is_off() {
            return 1;
        }
        let max_segs = gso.tso_segs(self.tp.pacing_rate, self.mss, self.rtt.min_rtt());
        if max_segs <= 1 {
            return 1;
        }
        let in_flight = self.in_flight();
        let rwnd_room = (self.rwnd_segs as u64).saturating_sub(self.snd_nxt - self.snd_una);
        let data_left = self.total_segs.map_or(u64::MAX, |t| t - self.snd_nxt);
        let send_window = rwnd_room.min(data_left);
        let defer = should_defer(&DeferInput {
            now,
            last_send: if self.tp.pacing_enabled { self.next_send_time } else { self.last_skb_time },
            recovering: matches!(self.tp.ca_state, CaState::Recovery | CaState::Loss),
            cwnd: self.tp.cwnd,
            in_flight,
            send_window,
            // A bulk writer's write-queue skbs are full size goals (`tcp_xmit_size_goal`).
            skb_segs: (max_segs as u64).min(data_left) as u32,
            max_segs,
            more_queued_after: data_left > max_segs as u64,
            head_sent: self.segs.front().map(|s| s.xmit_time),
            srtt: self.rtt.srtt,
        });
        if defer {
            return 0;
        }
        let quota = cwnd_quota(self.tp.cwnd, in_flight).max(1);
        (max_segs.min(quota) as u64).min(send_window).max(1) as u32
    }

    pub(super) fn send_segment(&mut self, now: Time, seg: u64, is_retrans: bool, out: &mut Vec<Segment>) {
        let in_flight_before = self.in_flight();
        if self.packets_out() == 0 {
            // `tcp_rate_skb_sent`: start a new flight's send interval.
            self.first_tx_time = now;
            self.tp.delivered_time = now;
            if !is_retrans {
                self.cca.cwnd_event(&mut self.tp, CaEvent::TxStart);
            }
        }
        let len = match self.total_segs {
            Some(t) if seg + 1 == t => {
                let size = self.params.size_bytes.unwrap();
                (size - (t - 1) * self.mss as u64) as u32
            }
            _ => self.mss,
        };
        let mut flags = RATE_VALID;
        if is_retrans {
            flags |= RETRANS | EVER_RETRANS;
        }
        if self.tp.app_limited != 0 {
            flags |= APP_LIMITED;
        }
        let mut snapshot = Seg::new(now, flags);
        snapshot.tx_delivered = self.tp.delivered;
        snapshot.tx_delivered_ce = self.tp.delivered_ce;
        snapshot.tx_delivered_time = self.tp.delivered_time;
        snapshot.tx_first_tx_time = self.first_tx_time;
        snapshot.tx_lost = self.tp.lost;
        snapshot.tx_in_flight = in_flight_before + 1;
        if is_retrans {
            self.ts_remove(seg);
            let s = self.seg_mut(seg);
            let kept = s.flags() & (LOST | SACKED);
            *s = snapshot;
            s.set(kept, true);
            self.retrans_out += 1;
            self.counters.segs_retrans += 1;
            if self.retrans_stamp == 0 {
                self.retrans_stamp = now;
            }
            if self.undo_marker.is_some() {
                self.undo_retrans = self.undo_retrans.max(0) + 1;
            }
            // A retransmitted lost segment is tracked by RACK again.
            self.ts_push_back(seg);
        } else {
            debug_assert_eq!(seg, self.snd_nxt);
            self.segs.push_back(snapshot);
            self.snd_nxt += 1;
            self.ts_push_back(seg);
        }
        if matches!(self.tp.ca_state, CaState::Cwr | CaState::Recovery) {
            self.prr_out += 1;
        }
        // `tcp_update_skb_after_send`: the first 10 data segments of the connection
        // (`data_segs_out`, counted after this one) do not advance the pacing clock.
        let data_segs_out = self.counters.segs_sent + 1;
        if self.tp.pacing_enabled && self.tp.pacing_rate > 0 && data_segs_out >= 10 {
            let len_ns = (len as u128 * 1_000_000_000 / self.tp.pacing_rate as u128) as Time;
            self.next_send_time = self.next_send_time.max(now) + len_ns;
        }
        self.counters.segs_sent += 1;
        let cwr = !is_retrans && std::mem::take(&mut self.cwr_pending);
        out.push(Segment { seg, len, tsval: now, is_retrans, cwr });
        if self.xmit_timer.is_none() || matches!(self.xmit_timer, Some((_, XmitTimer::LossProbe))) && !is_retrans {
            self.set_xmit_timer(now);
        }
    }

    /// `tcp_update_pacing_rate` for classic CCAs: 200% of cwnd/srtt in slow start
    /// (cwnd < ssthresh/2), 120% otherwise.
    /// Linux computes `sk_pacing_rate` for every flow, paced or not: it sizes GSO
    /// skbs (`tcp_tso_autosize`) even when nothing paces. Without GSO an unpaced
    /// flow does not need it.
    pub(super) fn update_pacing_rate(&mut self) {
        if self.cca.has_cong_control() || (!self.tp.pacing_enabled && self.gso.is_off()) {
            return;
        }
        let srtt = self.rtt.srtt;
        if srtt == 0 {
            self.tp.pacing_rate = 0; // unpaced until the first RTT sample
            return;
        }
        let ratio: u128 = if self.tp.cwnd < self.tp.ssthresh / 2 { 200 } else { 120 };
        let window = self.tp.cwnd.max(self.packets_out()) as u128 * self.mss as u128;
        let bytes_scaled = window * ratio * 10_000_000;
        // A 64-bit division is several times cheaper than a 128-bit one (a library
        // call); the quotient is the same whenever the dividend fits.
        self.tp.pacing_rate = match u64::try_from(bytes_scaled) {
            Ok(b) => b / srtt,
            Err(_) => (bytes_scaled / srtt as u128) as u64,
        };
    }
}
