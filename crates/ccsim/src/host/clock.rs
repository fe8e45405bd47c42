//! The kernel clock: `jiffies` ticking at `CONFIG_HZ`. Linux times CUBIC's epoch,
//! BBR's min-RTT window and ProbeRTT, and the delayed-ACK timer in jiffies, so their
//! timing is quantized to 1/HZ (4 ms at HZ = 250).
//!
//! Default HZ = 250: this machine's kernel (`CONFIG_HZ=250`, `/proc/config.gz`) and
//! the Kconfig default that Debian and Ubuntu generic kernels ship. RHEL/Fedora use
//! 1000; the spec's `[host] hz` sets it.

use crate::units::{Time, NS_PER_SEC};

/// Linux's default `CONFIG_HZ` (and this machine's).
pub const DEFAULT_HZ: u32 = 250;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Jiffies {
    pub hz: u32,
}

impl Default for Jiffies {
    fn default() -> Self {
        Self { hz: DEFAULT_HZ }
    }
}

impl Jiffies {
    pub fn new(hz: u32) -> Self {
        Self { hz: hz.max(1) }
    }

    /// Nanoseconds per tick.
    pub fn tick(&self) -> Time {
        NS_PER_SEC / self.hz as Time
    }

    /// `jiffies` (as `tcp_jiffies32`, wrapping) at simulated time `now`.
    pub fn at(&self, now: Time) -> u32 {
        crate::cc::common::clock::jiffies(now, self.hz)
    }

    /// `usecs_to_jiffies` / `msecs_to_jiffies`: rounds up.
    pub fn from_ns(&self, d: Time) -> u64 {
        d.div_ceil(self.tick())
    }

    /// When a timer armed at `now` for `jiffies + n` fires: at the start of tick
    /// `jiffies(now) + n` (the timer wheel runs on tick boundaries).
    pub fn timer_expiry(&self, now: Time, n: u64) -> Time {
        (now / self.tick() + n.max(1)) * self.tick()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{ms, us};

    #[test]
    fn hz_250_ticks_every_4_ms() {
        let j = Jiffies::default();
        assert_eq!(j.tick(), ms(4));
        assert_eq!(j.at(ms(3) + us(999)), 0);
        assert_eq!(j.at(ms(4)), 1);
        assert_eq!(j.at(ms(1000)), 250);
    }

    #[test]
    fn conversions_round_up_like_usecs_to_jiffies() {
        let j = Jiffies::new(250);
        assert_eq!(j.from_ns(us(1)), 1);
        assert_eq!(j.from_ns(ms(4)), 1);
        assert_eq!(j.from_ns(ms(4) + 1), 2);
        assert_eq!(j.from_ns(ms(40)), 10); // TCP_ATO_MIN = HZ/25
        assert_eq!(Jiffies::new(1000).from_ns(ms(40)), 40);
    }

    #[test]
    fn timers_fire_on_tick_boundaries() {
        let j = Jiffies::new(250);
        // Armed 1 ms into tick 2 for 10 jiffies: fires at the start of tick 12 (48 ms),
        // 39 ms later, not 40.
        assert_eq!(j.timer_expiry(ms(9), 10), ms(48));
        assert_eq!(j.timer_expiry(ms(8), 10), ms(48));
        // A zero-jiffy timer still waits for the next tick.
        assert_eq!(j.timer_expiry(ms(9), 0), ms(12));
    }
}
