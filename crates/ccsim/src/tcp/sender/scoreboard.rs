//! The scoreboard: one entry per outstanding segment (sequence numbers count
//! segments) with SACKed / lost / retransmitted flags, the list of unSACKed,
//! not-lost segments in transmission order that RACK walks (Linux `tsorted_sent_queue`),
//! and the marking of segments delivered or lost (`tcp_sacktag_one`, `tcp_mark_skb_lost`).

use super::rate::RateAcc;
use super::Sender;
use crate::units::Time;

/// End of the transmission-ordered list.
pub(super) const NONE: u64 = u64::MAX;

/// Scoreboard entry of one outstanding segment.
#[derive(Debug, Clone, Copy)]
pub(super) struct Seg {
    /// Time of the latest (re)transmission.
    pub(super) xmit_time: Time,
    pub(super) sacked: bool,
    pub(super) lost: bool,
    /// A retransmission of this segment is in flight (`TCPCB_SACKED_RETRANS`).
    pub(super) retrans: bool,
    /// Ever retransmitted (`TCPCB_EVER_RETRANS`): no RTT samples from it (Karn).
    pub(super) ever_retrans: bool,
    // Delivery-rate snapshot at the latest transmission (`tcp_skb_cb.tx`).
    pub(super) tx_delivered: u64,
    pub(super) tx_delivered_ce: u64,
    pub(super) tx_delivered_time: Time,
    pub(super) tx_first_tx_time: Time,
    pub(super) tx_lost: u64,
    pub(super) tx_in_flight: u32,
    pub(super) tx_app_limited: bool,
    /// The snapshot has not been consumed by a SACK yet.
    pub(super) rate_valid: bool,
    // Links of the transmission-ordered list of unSACKed, not-lost segments.
    pub(super) prev: u64,
    pub(super) next: u64,
    pub(super) in_tsorted: bool,
}

impl Sender {
    pub(super) fn seg_mut(&mut self, seg: u64) -> &mut Seg {
        let i = (seg - self.snd_una) as usize;
        &mut self.segs[i]
    }

    pub(super) fn ts_remove(&mut self, seg: u64) {
        let s = *self.seg_mut(seg);
        if !s.in_tsorted {
            return;
        }
        if s.prev != NONE {
            self.seg_mut(s.prev).next = s.next;
        } else {
            self.ts_head = s.next;
        }
        if s.next != NONE {
            self.seg_mut(s.next).prev = s.prev;
        } else {
            self.ts_tail = s.prev;
        }
        let m = self.seg_mut(seg);
        m.in_tsorted = false;
        m.prev = NONE;
        m.next = NONE;
    }

    pub(super) fn ts_push_back(&mut self, seg: u64) {
        let tail = self.ts_tail;
        {
            let m = self.seg_mut(seg);
            m.prev = tail;
            m.next = NONE;
            m.in_tsorted = true;
        }
        if tail != NONE {
            self.seg_mut(tail).next = seg;
        } else {
            self.ts_head = seg;
        }
        self.ts_tail = seg;
    }

    /// A segment was delivered (cum-ACKed without having been SACKed, or SACKed).
    pub(super) fn mark_delivered(&mut self, now: Time, seg: u64, by_sack: bool, ece: bool, acc: &mut RateAcc) {
        self.ts_remove(seg);
        let s = *self.seg_mut(seg);
        if s.lost {
            self.lost_out -= 1;
            if !s.retrans {
                self.lost_unretx -= 1;
            }
        }
        if s.retrans {
            self.retrans_out -= 1;
        }
        self.tp.delivered += 1;
        if ece {
            self.tp.delivered_ce += 1;
        }
        self.rate_skb_delivered(seg, acc);
        self.rack_advance(now, seg, &s);
        let m = self.seg_mut(seg);
        m.lost = false;
        m.retrans = false;
        if by_sack {
            m.sacked = true;
            m.rate_valid = false;
            self.sacked_out += 1;
        }
    }

    /// `tcp_mark_skb_lost`. A lost retransmission must be sent again; a segment
    /// whose (TLP) retransmission is still in flight is marked lost but not resent.
    pub(super) fn mark_lost(&mut self, seg: u64) {
        self.ts_remove(seg);
        let s = *self.seg_mut(seg);
        if s.sacked {
            return;
        }
        if s.lost {
            if !s.retrans {
                return;
            }
            self.seg_mut(seg).retrans = false;
            self.retrans_out -= 1;
        } else {
            self.seg_mut(seg).lost = true;
            self.lost_out += 1;
            if s.retrans {
                // Still counted in flight through its retransmission.
                self.tp.lost += 1;
                self.counters.segs_lost += 1;
                return;
            }
        }
        self.lost_unretx += 1;
        self.tp.lost += 1;
        self.counters.segs_lost += 1;
        if seg < self.retx_hint {
            self.retx_hint = seg;
        }
    }

    /// The next lost segment that has not been retransmitted (RFC 6675 NextSeg (1)).
    pub(super) fn next_retransmit(&mut self) -> Option<u64> {
        if self.lost_unretx == 0 {
            return None;
        }
        let mut seg = self.retx_hint.max(self.snd_una);
        while seg < self.snd_nxt {
            let s = *self.seg_mut(seg);
            if s.lost && !s.retrans && !s.sacked {
                self.retx_hint = seg;
                return Some(seg);
            }
            seg += 1;
        }
        None
    }

    /// Scoreboard invariants, checked in debug builds after every input (bounded to
    /// small windows so that long debug-mode simulations stay fast): the counters
    /// match the entries, the transmission-ordered list holds the segments RACK must
    /// watch, in transmission order, and the in-flight estimate is within its bounds.
    pub(super) fn debug_check_scoreboard(&self) {
        if !cfg!(debug_assertions) || self.segs.len() > 256 {
            return;
        }
        let (mut sacked, mut lost, mut retrans, mut unretx, mut listed) = (0u32, 0u32, 0u32, 0u32, 0usize);
        for (i, s) in self.segs.iter().enumerate() {
            let seg = self.snd_una + i as u64;
            sacked += s.sacked as u32;
            lost += s.lost as u32;
            retrans += s.retrans as u32;
            unretx += (s.lost && !s.retrans) as u32;
            debug_assert!(!(s.sacked && (s.lost || s.retrans)), "seg {seg}: SACKed and lost/retransmitted: {s:?}");
            // RACK tracks every segment neither SACKed nor lost, and a lost one again
            // once retransmitted after the loss mark (`tcp_rack_detect_loss` unlinks on
            // marking; a retransmission relinks at the tail).
            debug_assert!(!s.in_tsorted || (!s.sacked && (!s.lost || s.retrans)), "seg {seg}: listed {s:?}");
            debug_assert!(s.in_tsorted || s.sacked || s.lost, "seg {seg}: in flight but not listed {s:?}");
            listed += s.in_tsorted as usize;
        }
        debug_assert_eq!(self.segs.len() as u64, self.snd_nxt - self.snd_una, "one entry per outstanding segment");
        debug_assert_eq!(
            (sacked, lost, retrans, unretx),
            (self.sacked_out, self.lost_out, self.retrans_out, self.lost_unretx),
            "scoreboard counters (sacked, lost, retrans, lost not retransmitted)"
        );
        // Walk the RACK list: in order of transmission, and as long as the count.
        let (mut n, mut cur, mut last_xmit) = (0usize, self.ts_head, 0);
        while cur != NONE {
            let s = &self.segs[(cur - self.snd_una) as usize];
            debug_assert!(s.xmit_time >= last_xmit, "RACK list out of transmission order at seg {cur}");
            last_xmit = s.xmit_time;
            n += 1;
            cur = s.next;
            debug_assert!(n <= listed, "RACK list longer than its members (cycle?)");
        }
        debug_assert_eq!(n, listed, "RACK list length");
        debug_assert!(self.sacked_out + self.lost_out <= self.packets_out(), "left_out > packets_out");
        debug_assert!(self.retrans_out <= self.packets_out(), "retrans_out > packets_out");
    }
}
