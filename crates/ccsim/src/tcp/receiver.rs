//! TCP receiver: in-order delivery, out-of-order ranges reported as SACK blocks
//! (RFC 2018, most recently changed block first; D-SACK for duplicates, RFC 2883),
//! the ACK policy of Linux (`tcp/delack.rs`: `__tcp_ack_snd_check`, quick-ACK mode,
//! the `ato` estimator, SACK compression), and ECN echo (RFC 3168: ECE on every ACK
//! after a CE until a segment with CWR arrives).

use crate::host::clock::Jiffies;
use crate::net::{Ack, Ecn, Segment, MAX_SACK_BLOCKS};
use crate::tcp::delack::{AckDecision, AckPolicy, MAX_QUICKACKS};
use crate::units::Time;
use smallvec::SmallVec;

/// Out-of-order ranges (or their starts) kept inline before they move to the heap:
/// almost always one or two, and with thousands of flows a heap block of their own
/// would be a dependent cache miss after the receiver's own lines on every segment.
const OOO_INLINE: usize = 2;

/// `repr(C)` keeps the fields in this order: with thousands of flows the receiver
/// has left the caches by the time the flow's next segment arrives, so the fields
/// every segment reads come first, in about the order `on_segment_in_frame` reads
/// them (it tests the ECN flags first), the out-of-order ranges among them (inline,
/// a `SmallVec`), and the ones only a finite flow's last segment reads come
/// last, outside what [`Receiver::prefetch`] loads.
#[derive(Debug, Clone)]
#[repr(C)]
pub struct Receiver {
    /// DCTCP-style echo: ECE mirrors CE per segment (see `with_accurate_ecn`).
    accurate_ecn: bool,
    /// CE seen and not yet echoed enough (RFC 3168); with `accurate_ecn`, the CE
    /// state of the latest data segment.
    ece_pending: bool,
    mss: u32,
    /// Next in-order segment expected.
    pub rcv_nxt: u64,
    /// Out-of-order ranges [start, end), sorted by start, disjoint.
    ooo: SmallVec<[(u64, u64); OOO_INLINE]>,
    ts_recent: Time,
    /// In-order payload bytes delivered to the application.
    pub delivered_bytes: u64,
    /// `rcv_nxt` when the last ACK was sent (`rcv_wup`).
    rcv_wup: u64,
    /// The receiving socket's RTT estimate, for SACK compression (Linux: the lower of
    /// `rcv_rtt_est` and the handshake's srtt, i.e. about the path's base RTT).
    rtt_hint: Time,
    /// Total segments of a finite flow (None = bulk).
    total_segs: Option<u64>,
    /// When and whether to ACK (Linux's delayed-ACK engine).
    pub policy: AckPolicy,
    /// The duplicate segment to report in the next ACK (D-SACK).
    pending_dsack: Option<u64>,
    /// SACK blocks in recency order (starts of ranges in `ooo`), most recent first.
    recent: SmallVec<[u64; OOO_INLINE]>,

    // ---- read by a finite flow's last segments only (see `Receiver::prefetch`) ----
    /// Time the last segment of a finite flow arrived in order.
    pub completed_at: Option<Time>,
    size_bytes: Option<u64>,
}

impl Receiver {
    pub fn new(delayed_ack: bool, mss: u32, size_bytes: Option<u64>) -> Self {
        Self {
            mss,
            size_bytes,
            rcv_nxt: 0,
            ooo: SmallVec::new(),
            recent: SmallVec::new(),
            delivered_bytes: 0,
            rcv_wup: 0,
            policy: AckPolicy::new(Jiffies::default(), delayed_ack),
            rtt_hint: 0,
            ts_recent: 0,
            ece_pending: false,
            accurate_ecn: false,
            pending_dsack: None,
            total_segs: size_bytes.map(|b| b.div_ceil(mss as u64)),
            completed_at: None,
        }
    }

    /// The host's jiffies clock (delayed-ACK timer granularity) and the path RTT.
    pub fn with_host(mut self, clock: Jiffies, rtt_hint: Time) -> Self {
        let delayed = self.policy.is_delayed();
        self.policy = AckPolicy::new(clock, delayed);
        self.rtt_hint = rtt_hint;
        self
    }

    /// The handshake measured the path's RTT (`tcp_synack_rtt_meas`): it replaces
    /// the hint given at construction.
    pub fn set_rtt_hint(&mut self, rtt: Time) {
        self.rtt_hint = rtt;
    }

    /// Echo CE as DCTCP receivers do (RFC 8257 §3.2, Linux `dctcp_ece_ack_update`):
    /// ECE reflects the CE mark of the latest data segment, CWR is ignored, and a
    /// change of CE state is acknowledged at once so the sender can count marked
    /// packets exactly.
    ///
    /// Deviation: on a change Linux first sends an ACK for the data before it with
    /// the old state, then continues; here one immediate ACK carries the new state,
    /// so with delayed ACKs up to one segment per change is attributed to the new
    /// state.
    pub fn with_accurate_ecn(mut self) -> Self {
        self.accurate_ecn = true;
        self
    }

    /// Ask the CPU to load the receiver's cache lines a segment reads (a hint, no
    /// effect on results): the run loop calls it when a segment reaches its host.
    pub fn prefetch(&self) {
        crate::tcp::prefetch(self as *const Self as *const u8, std::mem::offset_of!(Receiver, completed_at));
    }

    /// Earliest time the receiver must be woken (delayed-ACK or SACK-compression timer).
    pub fn deadline(&self) -> Option<Time> {
        self.policy.deadline()
    }

    /// Process a data segment; returns an ACK to send now, if one is due.
    pub fn on_segment(&mut self, now: Time, s: &Segment, ecn: Ecn) -> Option<Ack> {
        self.on_segment_in_frame(now, s, ecn, false)
    }

    /// Process a data segment that GRO merged into a larger frame: with
    /// `more_in_frame` the ACK decision waits for the frame's last segment, as Linux
    /// makes it once per (merged) skb.
    pub fn on_segment_in_frame(&mut self, now: Time, s: &Segment, ecn: Ecn, more_in_frame: bool) -> Option<Ack> {
        if self.accurate_ecn {
            let ce = ecn == Ecn::Ce;
            if ce != self.ece_pending {
                self.ece_pending = ce;
                self.policy.ack_now();
            }
        } else if s.cwr {
            self.ece_pending = false;
        }
        if ecn == Ecn::Ce && !self.accurate_ecn {
            if !self.ece_pending {
                // `tcp_ecn_check_ce`: "better not delay acks, sender can have a very low cwnd".
                self.policy.enter_quickack_mode(2);
            }
            self.ece_pending = true;
        }
        let mut immediate = false;
        if s.seg < self.rcv_nxt || self.in_ooo(s.seg) {
            // Duplicate: report it with D-SACK, enter quick-ACK mode and ACK at once
            // (Linux `tcp_send_dupack`).
            self.pending_dsack = Some(s.seg);
            self.policy.enter_quickack_mode(MAX_QUICKACKS);
            immediate = true;
        } else if s.seg == self.rcv_nxt {
            self.policy.on_data_recv(now);
            self.ts_recent = s.tsval;
            self.rcv_nxt += 1;
            self.delivered_bytes += s.len as u64;
            // Pull in any out-of-order range that is now contiguous.
            if let Some(&(start, end)) = self.ooo.first() {
                if start == self.rcv_nxt {
                    self.ooo.remove(0);
                    self.recent.retain(|r| *r != start);
                    // Bytes of the pulled-in range: all full segments except possibly
                    // the flow's last one, accounted through the length helper.
                    self.delivered_bytes += self.bytes_of(start, end);
                    self.rcv_nxt = end;
                    if self.ooo.is_empty() {
                        // RFC 5681 4.2: ACK at once when the gap is filled (`ICSK_ACK_NOW`).
                        self.policy.ack_now();
                        // Back inline if a burst of holes moved them to the heap.
                        self.ooo.shrink_to_fit();
                        self.recent.shrink_to_fit();
                    }
                }
            }
            if let Some(total) = self.total_segs {
                if self.rcv_nxt >= total && self.completed_at.is_none() {
                    self.completed_at = Some(now);
                    immediate = true;
                }
            }
        } else {
            self.insert_ooo(s.seg);
        }
        if more_in_frame && !immediate {
            return None;
        }
        let frames = self.rcv_nxt - self.rcv_wup >= 2;
        if immediate
            || self.policy.check(now, frames, !self.ooo.is_empty(), self.rcv_nxt, self.rtt_hint) == AckDecision::Now
        {
            return Some(self.make_ack(false));
        }
        None
    }

    /// A receiver timer (delayed ACK or SACK compression) fired.
    pub fn on_timer(&mut self, now: Time) -> Option<Ack> {
        if self.policy.on_timer(now) {
            Some(self.make_ack(true))
        } else {
            None
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
                self.recent.retain(|r| *r != next.0);
                self.ooo[idx - 1].1 = next.1;
                self.ooo[idx - 1].0
            }
            (true, false) => {
                self.ooo[idx - 1].1 = seg + 1;
                self.ooo[idx - 1].0
            }
            (false, true) => {
                let old = self.ooo[idx].0;
                self.recent.retain(|r| *r != old);
                self.ooo[idx].0 = seg;
                seg
            }
            (false, false) => {
                self.ooo.insert(idx, (seg, seg + 1));
                seg
            }
        };
        self.recent.retain(|r| *r != start);
        self.recent.insert(0, start);
    }

    fn make_ack(&mut self, delayed: bool) -> Ack {
        self.rcv_wup = self.rcv_nxt;
        self.policy.on_ack_sent();
        let mut sack = [(0u64, 0u64); MAX_SACK_BLOCKS];
        let mut n = 0;
        for &start in self.recent.iter() {
            if n == MAX_SACK_BLOCKS {
                break;
            }
            if let Some(&(s, e)) = self.ooo.iter().find(|&&(s, _)| s == start) {
                sack[n] = (s, e);
                n += 1;
            }
        }
        let ack = Ack::new(self.rcv_nxt, &sack[..n], self.pending_dsack, self.ece_pending, self.ts_recent, delayed);
        self.pending_dsack = None;
        ack
    }
}
