//! Linux's coarse clocks, for CCAs whose reference keeps time in jiffies or µs.
//! The modelled kernel has `CONFIG_HZ = 1000` (the common server configuration),
//! so one jiffy is 1 ms.

use crate::units::{Time, NS_PER_MS, NS_PER_US};

/// Jiffies per second (`HZ`).
pub const HZ: u32 = 1000;

/// `tcp_jiffies32` at simulated time `t` (wraps as the kernel's does).
pub fn jiffies(t: Time) -> u32 {
    (t / NS_PER_MS) as u32
}

/// `usecs_to_jiffies`: rounds up, so a non-zero duration is at least one jiffy.
pub fn to_jiffies_ceil(d: Time) -> u32 {
    d.div_ceil(NS_PER_MS) as u32
}

/// A duration in whole µs (`rtt_us`), saturating at `u32::MAX`.
pub fn to_us(d: Time) -> u32 {
    (d / NS_PER_US).min(u32::MAX as Time) as u32
}
