//! TCP receiver: in-order delivery, out-of-order ranges reported as SACK blocks
//! (RFC 2018, most recently changed block first; D-SACK for duplicates, RFC 2883),
//! delayed ACKs as Linux `__tcp_ack_snd_check` (ACK every second full segment,
//! immediately for out-of-order data and while in quick-ack mode, otherwise after
//! the delayed-ACK timer), and ECN echo (RFC 3168: ECE on every ACK after a CE
//! until a segment with CWR arrives).

use crate::net::{Ack, Ecn, Segment, MAX_SACK_BLOCKS};
use crate::units::{ms, Time};

/// Linux `TCP_MAX_QUICKACKS`: ACK the first 16 segments immediately.
pub const MAX_QUICKACKS: u32 = 16;
/// Linux `TCP_DELACK_MIN` (40 ms): the delayed-ACK timeout used here.
/// Deviation: Linux adapts `ato` between 40 ms and 200 ms from inter-arrival times;
/// with ACK-every-2-segments for bulk data the timer rarely fires, so it is fixed.
pub const DELACK_TIMEOUT: Time = ms(40);

#[derive(Debug, Clone)]
pub struct Receiver {
    /// Next in-order segment expected.
    pub rcv_nxt: u64,
    /// Out-of-order ranges [start, end), sorted by start, disjoint.
    ooo: Vec<(u64, u64)>,
    /// SACK blocks in recency order (starts of ranges in `ooo`), most recent first.
    recent: Vec<u64>,
    /// In-order payload bytes delivered to the application.
    pub delivered_bytes: u64,
    /// Full segments received since the last ACK.
    unacked_segs: u32,
    quickacks_left: u32,
    delayed_ack: bool,
    /// Deadline of the delayed-ACK timer.
    pub delack_deadline: Option<Time>,
    ts_recent: Time,
    /// CE seen and not yet echoed enough.
    ece_pending: bool,
    pending_dsack: bool,
    /// Total segments of a finite flow (None = bulk).
    total_segs: Option<u64>,
    mss: u32,
    size_bytes: Option<u64>,
    /// Time the last segment of a finite flow arrived in order.
    pub completed_at: Option<Time>,
}

impl Receiver {
    pub fn new(delayed_ack: bool, mss: u32, size_bytes: Option<u64>) -> Self {
        Self {
            mss,
            size_bytes,
            rcv_nxt: 0,
            ooo: Vec::new(),
            recent: Vec::new(),
            delivered_bytes: 0,
            unacked_segs: 0,
            quickacks_left: MAX_QUICKACKS,
            delayed_ack,
            delack_deadline: None,
            ts_recent: 0,
            ece_pending: false,
            pending_dsack: false,
            total_segs: size_bytes.map(|b| b.div_ceil(mss as u64)),
            completed_at: None,
        }
    }

    /// Process a data segment; returns an ACK to send now, if one is due.
    pub fn on_segment(&mut self, now: Time, s: &Segment, ecn: Ecn) -> Option<Ack> {
        if s.cwr {
            self.ece_pending = false;
        }
        if ecn == Ecn::Ce {
            self.ece_pending = true;
        }
        let mut immediate = false;
        if s.seg < self.rcv_nxt || self.in_ooo(s.seg) {
            // Duplicate: report it with D-SACK and ACK at once (Linux tcp_send_dupack).
            self.pending_dsack = true;
            immediate = true;
        } else if s.seg == self.rcv_nxt {
            self.ts_recent = s.tsval;
            self.rcv_nxt += 1;
            self.delivered_bytes += s.len as u64;
            // Pull in any out-of-order range that is now contiguous.
            if let Some(&(start, end)) = self.ooo.first() {
                if start == self.rcv_nxt {
                    self.ooo.remove(0);
                    self.recent.retain(|&r| r != start);
                    // Bytes of the pulled-in range: all full segments except possibly
                    // the flow's last one, accounted through the length helper.
                    self.delivered_bytes += self.bytes_of(start, end);
                    self.rcv_nxt = end;
                    immediate = true; // a hole was filled: ACK at once (Linux does).
                }
            }
            if !self.ooo.is_empty() {
                immediate = true;
            }
            if let Some(total) = self.total_segs {
                if self.rcv_nxt >= total && self.completed_at.is_none() {
                    self.completed_at = Some(now);
                    immediate = true;
                }
            }
        } else {
            self.insert_ooo(s.seg);
            immediate = true;
        }
        self.unacked_segs += 1;
        if immediate || !self.delayed_ack || self.quickacks_left > 0 || self.unacked_segs >= 2 {
            if self.quickacks_left > 0 {
                self.quickacks_left -= 1;
            }
            return Some(self.make_ack(false));
        }
        if self.delack_deadline.is_none() {
            self.delack_deadline = Some(now + DELACK_TIMEOUT);
        }
        None
    }

    /// The delayed-ACK timer fired.
    pub fn on_timer(&mut self, now: Time) -> Option<Ack> {
        match self.delack_deadline {
            Some(t) if t <= now => Some(self.make_ack(true)),
            _ => None,
        }
    }

    /// Payload bytes in segments [start, end): all full except a finite flow's last.
    fn bytes_of(&self, start: u64, end: u64) -> u64 {
        let mut bytes = (end - start) * self.mss as u64;
        if let (Some(total), Some(size)) = (self.total_segs, self.size_bytes) {
            if end == total {
                bytes = bytes - self.mss as u64 + (size - (total - 1) * self.mss as u64);
            }
        }
        bytes
    }

    fn in_ooo(&self, seg: u64) -> bool {
        self.ooo.iter().any(|&(s, e)| seg >= s && seg < e)
    }

    fn insert_ooo(&mut self, seg: u64) {
        // Find position; merge with neighbours.
        let idx = self.ooo.partition_point(|&(s, _)| s <= seg);
        let merges_prev = idx > 0 && self.ooo[idx - 1].1 == seg;
        let merges_next = idx < self.ooo.len() && self.ooo[idx].0 == seg + 1;
        let start = match (merges_prev, merges_next) {
            (true, true) => {
                let next = self.ooo.remove(idx);
                self.recent.retain(|&r| r != next.0);
                self.ooo[idx - 1].1 = next.1;
                self.ooo[idx - 1].0
            }
            (true, false) => {
                self.ooo[idx - 1].1 = seg + 1;
                self.ooo[idx - 1].0
            }
            (false, true) => {
                let old = self.ooo[idx].0;
                self.recent.retain(|&r| r != old);
                self.ooo[idx].0 = seg;
                seg
            }
            (false, false) => {
                self.ooo.insert(idx, (seg, seg + 1));
                seg
            }
        };
        self.recent.retain(|&r| r != start);
        self.recent.insert(0, start);
    }

    fn make_ack(&mut self, delayed: bool) -> Ack {
        self.unacked_segs = 0;
        self.delack_deadline = None;
        let mut sack = [(0u64, 0u64); MAX_SACK_BLOCKS];
        let mut n = 0;
        for &start in &self.recent {
            if n == MAX_SACK_BLOCKS {
                break;
            }
            if let Some(&(s, e)) = self.ooo.iter().find(|&&(s, _)| s == start) {
                sack[n] = (s, e);
                n += 1;
            }
        }
        let ack = Ack {
            cum: self.rcv_nxt,
            sack,
            n_sack: n as u8,
            dsack: self.pending_dsack,
            ece: self.ece_pending,
            tsecr: self.ts_recent,
            delayed,
        };
        self.pending_dsack = false;
        ack
    }
}
