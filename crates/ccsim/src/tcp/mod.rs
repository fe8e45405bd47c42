//! TCP endpoints: the sender (scoreboard, loss detection and recovery, RTO,
//! PRR, delivery-rate samples, pacing, the congestion state machine) and the
//! receiver (cumulative and selective ACKs, delayed ACKs with quick-ack, ECN echo),
//! and the three-way handshake that opens a connection (`handshake`).
//! Both are sans-IO state machines: they take `now` and packets, and return packets
//! to send and the time they next need to be woken.

pub mod delack;
pub mod handshake;
pub mod receiver;
pub mod rtt;
pub mod sender;

pub use receiver::Receiver;
pub use sender::{ScoreboardHint, Sender, SenderCounters};

/// Ask the CPU to start loading `bytes` from `ptr` into its caches (a hint: no effect
/// on results). With thousands of flows, a flow's state has left the caches by the time
/// its next ACK arrives; loading all its lines at once overlaps the misses instead of
/// taking them one after another as the code reaches each field.
#[inline(always)]
pub(crate) fn prefetch(ptr: *const u8, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let mut off = 0;
        while off < bytes {
            // SAFETY: prefetching is a hint and never faults, even for invalid addresses.
            unsafe { _mm_prefetch(ptr.wrapping_add(off) as *const i8, _MM_HINT_T0) };
            off += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (ptr, bytes);
}
