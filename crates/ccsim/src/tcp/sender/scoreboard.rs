//! The scoreboard: one entry per outstanding segment (sequence numbers count
//! segments) with SACKed / lost / retransmitted flags, the list of unSACKed,
//! not-lost segments in transmission order that RACK walks (Linux `tsorted_sent_queue`),
//! and the marking of segments delivered or lost (`tcp_sacktag_one`, `tcp_mark_skb_lost`).

use super::rate::RateAcc;
use super::Sender;
use crate::units::Time;

/// End of the transmission-ordered list.
pub(super) const NONE: u64 = u64::MAX;

// Flags of a scoreboard entry (`Seg::flags`).
pub(super) const SACKED: u8 = 1;
pub(super) const LOST: u8 = 1 << 1;
/// A retransmission of this segment is in flight (`TCPCB_SACKED_RETRANS`).
pub(super) const RETRANS: u8 = 1 << 2;
/// Ever retransmitted (`TCPCB_EVER_RETRANS`): no RTT samples from it (Karn).
pub(super) const EVER_RETRANS: u8 = 1 << 3;
/// The delivery-rate snapshot was taken while the sender was application-limited.
pub(super) const APP_LIMITED: u8 = 1 << 4;
/// The snapshot has not been consumed by a SACK yet.
pub(super) const RATE_VALID: u8 = 1 << 5;
/// On the transmission-ordered list of unSACKed, not-lost segments.
pub(super) const IN_TSORTED: u8 = 1 << 6;

/// Scoreboard entry of one outstanding segment: one cache line (with thousands of
/// flows every entry an ACK reads or a send writes is a cache miss, so the flags share
/// a byte and the list links are 32-bit offsets; 80 bytes before, 2 lines for most).
#[derive(Clone, Copy)]
#[repr(align(64))]
pub(super) struct Seg {
    /// Time of the latest (re)transmission.
    pub(super) xmit_time: Time,
    // Delivery-rate snapshot at the latest transmission (`tcp_skb_cb.tx`).
    pub(super) tx_delivered: u64,
    pub(super) tx_delivered_ce: u64,
    pub(super) tx_delivered_time: Time,
    pub(super) tx_first_tx_time: Time,
    pub(super) tx_lost: u64,
    pub(super) tx_in_flight: u32,
    /// Links of the transmission-ordered list of unSACKed, not-lost segments, as
    /// offsets from this entry's sequence number (0: none; an entry never links to
    /// itself, and a window holds far fewer than 2^31 segments).
    prev: i32,
    next: i32,
    flags: u8,
}

const _: () = assert!(std::mem::size_of::<Seg>() == 64);

impl Seg {
    /// A fresh entry: `flags` set, not on the transmission-ordered list.
    pub(super) fn new(xmit_time: Time, flags: u8) -> Self {
        Self {
            xmit_time,
            tx_delivered: 0,
            tx_delivered_ce: 0,
            tx_delivered_time: 0,
            tx_first_tx_time: 0,
            tx_lost: 0,
            tx_in_flight: 0,
            prev: 0,
            next: 0,
            flags,
        }
    }
    pub(super) fn is(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }
    pub(super) fn set(&mut self, flag: u8, on: bool) {
        if on {
            self.flags |= flag;
        } else {
            self.flags &= !flag;
        }
    }
    pub(super) fn flags(&self) -> u8 {
        self.flags
    }
    /// The next segment on the list after this one (`seg`), or `NONE`.
    pub(super) fn next(&self, seg: u64) -> u64 {
        link_to(seg, self.next)
    }
    pub(super) fn prev(&self, seg: u64) -> u64 {
        link_to(seg, self.prev)
    }
    fn set_next(&mut self, seg: u64, to: u64) {
        self.next = link_from(seg, to);
    }
    fn set_prev(&mut self, seg: u64, to: u64) {
        self.prev = link_from(seg, to);
    }
}

fn link_to(seg: u64, off: i32) -> u64 {
    if off == 0 {
        NONE
    } else {
        seg.wrapping_add(off as i64 as u64)
    }
}

fn link_from(seg: u64, to: u64) -> i32 {
    if to == NONE {
        return 0;
    }
    let off = to.wrapping_sub(seg) as i64;
    debug_assert!(off != 0 && i32::try_from(off).is_ok(), "scoreboard link {seg} -> {to}");
    off as i32
}

impl std::fmt::Debug for Seg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names = [
            (SACKED, "sacked"),
            (LOST, "lost"),
            (RETRANS, "retrans"),
            (EVER_RETRANS, "ever_retrans"),
            (APP_LIMITED, "app_limited"),
            (RATE_VALID, "rate_valid"),
            (IN_TSORTED, "in_tsorted"),
        ];
        let set: Vec<&str> = names.iter().filter(|(b, _)| self.is(*b)).map(|(_, n)| *n).collect();
        f.debug_struct("Seg")
            .field("xmit_time", &self.xmit_time)
            .field("flags", &set)
            .field("prev", &self.prev)
            .field("next", &self.next)
            .field("tx_delivered", &self.tx_delivered)
            .field("tx_in_flight", &self.tx_in_flight)
            .finish()
    }
}

impl Sender {
    pub(super) fn seg_mut(&mut self, seg: u64) -> &mut Seg {
        let i = (seg - self.snd_una) as usize;
        &mut self.segs[i]
    }

    pub(super) fn ts_remove(&mut self, seg: u64) {
        let s = self.seg_mut(seg);
        if !s.is(IN_TSORTED) {
            return;
        }
        let (prev, next) = (s.prev(seg), s.next(seg));
        if prev != NONE {
            self.seg_mut(prev).set_next(prev, next);
        } else {
            self.ts_head = next;
        }
        if next != NONE {
            self.seg_mut(next).set_prev(next, prev);
        } else {
            self.ts_tail = prev;
        }
        let m = self.seg_mut(seg);
        m.set(IN_TSORTED, false);
        m.prev = 0;
        m.next = 0;
    }

    pub(super) fn ts_push_back(&mut self, seg: u64) {
        let tail = self.ts_tail;
        {
            let m = self.seg_mut(seg);
            m.set_prev(seg, tail);
            m.next = 0;
            m.set(IN_TSORTED, true);
        }
        if tail != NONE {
            self.seg_mut(tail).set_next(tail, seg);
        } else {
            self.ts_head = seg;
        }
        self.ts_tail = seg;
    }

    /// A segment was delivered (cum-ACKed without having been SACKed, or SACKed).
    pub(super) fn mark_delivered(&mut self, now: Time, seg: u64, by_sack: bool, ece: bool, acc: &mut RateAcc) {
        self.ts_remove(seg);
        let s = *self.seg_mut(seg);
        if self.seg_fates && !s.is(LOST) {
            // Never marked lost (LOST stays set until delivery): its first fate.
            self.cca.seg_fate(seg, false, (!s.is(EVER_RETRANS)).then_some(s.xmit_time));
        }
        if s.is(LOST) {
            self.lost_out -= 1;
            if !s.is(RETRANS) {
                self.lost_unretx -= 1;
            }
        }
        if s.is(RETRANS) {
            self.retrans_out -= 1;
        }
        self.tp.delivered += 1;
        if ece {
            self.tp.delivered_ce += 1;
        }
        self.rate_skb_delivered(seg, acc);
        self.rack_advance(now, seg, &s);
        let m = self.seg_mut(seg);
        m.set(LOST | RETRANS, false);
        if by_sack {
            m.set(SACKED, true);
            m.set(RATE_VALID, false);
            self.sacked_out += 1;
        }
    }

    /// `tcp_mark_skb_lost`. A lost retransmission must be sent again; a segment
    /// whose (TLP) retransmission is still in flight is marked lost but not resent.
    pub(super) fn mark_lost(&mut self, seg: u64) {
        self.ts_remove(seg);
        let s = *self.seg_mut(seg);
        if s.is(SACKED) {
            return;
        }
        if s.is(LOST) {
            if !s.is(RETRANS) {
                return;
            }
            self.seg_mut(seg).set(RETRANS, false);
            self.retrans_out -= 1;
        } else {
            self.seg_mut(seg).set(LOST, true);
            self.lost_out += 1;
            if self.seg_fates {
                self.cca.seg_fate(seg, true, None);
            }
            if s.is(RETRANS) {
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
            if s.flags() & (LOST | RETRANS | SACKED) == LOST {
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
            let (s_sacked, s_lost, s_retrans, s_listed) = (s.is(SACKED), s.is(LOST), s.is(RETRANS), s.is(IN_TSORTED));
            sacked += s_sacked as u32;
            lost += s_lost as u32;
            retrans += s_retrans as u32;
            unretx += (s_lost && !s_retrans) as u32;
            debug_assert!(!(s_sacked && (s_lost || s_retrans)), "seg {seg}: SACKed and lost/retransmitted: {s:?}");
            // RACK tracks every segment neither SACKed nor lost, and a lost one again
            // once retransmitted after the loss mark (`tcp_rack_detect_loss` unlinks on
            // marking; a retransmission relinks at the tail).
            debug_assert!(!s_listed || (!s_sacked && (!s_lost || s_retrans)), "seg {seg}: listed {s:?}");
            debug_assert!(s_listed || s_sacked || s_lost, "seg {seg}: in flight but not listed {s:?}");
            debug_assert!(s_listed || (s.prev == 0 && s.next == 0), "seg {seg}: unlisted with links {s:?}");
            listed += s_listed as usize;
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
            cur = s.next(cur);
            debug_assert!(n <= listed, "RACK list longer than its members (cycle?)");
        }
        debug_assert_eq!(n, listed, "RACK list length");
        debug_assert!(self.sacked_out + self.lost_out <= self.packets_out(), "left_out > packets_out");
        debug_assert!(self.retrans_out <= self.packets_out(), "retrans_out > packets_out");
    }
}
