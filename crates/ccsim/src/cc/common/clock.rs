//! Linux's coarse clocks, for CCAs whose reference keeps time in jiffies or µs.
//! A jiffy is 1/`CONFIG_HZ` s of the sending host (`TcpState::hz`, the spec's
//! `[host] hz`: 250 by default, as this machine's kernel and Debian/Ubuntu generic
//! kernels; `crate::host::clock`), so every CCA that Linux times in jiffies is
//! quantized as the modelled host's kernel would quantize it.

use crate::units::{Time, NS_PER_SEC, NS_PER_US};

/// `tcp_jiffies32` at simulated time `t` on a host with `hz` ticks per second
/// (wraps as the kernel's does).
pub fn jiffies(t: Time, hz: u32) -> u32 {
    // Called on every ACK: the usual HZ values divide by a constant, which compiles
    // to a multiplication instead of two divisions (same result).
    match hz {
        250 => (t / (NS_PER_SEC / 250)) as u32,
        1000 => (t / (NS_PER_SEC / 1000)) as u32,
        _ => (t / (NS_PER_SEC / hz.max(1) as Time)) as u32,
    }
}

/// `usecs_to_jiffies` / `nsecs_to_jiffies` rounded up: a non-zero duration is at
/// least one jiffy.
pub fn to_jiffies_ceil(d: Time, hz: u32) -> u32 {
    (d as u128 * hz as u128).div_ceil(NS_PER_SEC as u128).min(u32::MAX as u128) as u32
}

/// `msecs_to_jiffies` (rounds up).
pub fn msecs_to_jiffies(ms: u32, hz: u32) -> u32 {
    (ms as u64 * hz as u64).div_ceil(1000) as u32
}

/// A duration in whole µs (`rtt_us`), saturating at `u32::MAX`.
pub fn to_us(d: Time) -> u32 {
    (d / NS_PER_US).min(u32::MAX as Time) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{ms, us};

    #[test]
    fn jiffies_follow_the_hosts_hz() {
        assert_eq!(jiffies(ms(7), 250), 1);
        assert_eq!(jiffies(ms(8), 250), 2);
        assert_eq!(jiffies(ms(7), 1000), 7);
        assert_eq!(jiffies(ms(1000), 100), 100);
    }

    #[test]
    fn conversions_round_up() {
        assert_eq!(to_jiffies_ceil(us(50), 250), 1);
        assert_eq!(to_jiffies_ceil(ms(20), 250), 5);
        assert_eq!(to_jiffies_ceil(ms(20) + 1, 250), 6);
        assert_eq!(to_jiffies_ceil(ms(20), 1000), 20);
        assert_eq!(to_jiffies_ceil(0, 250), 0);
        assert_eq!(msecs_to_jiffies(10, 250), 3); // 2.5 jiffies round up
        assert_eq!(msecs_to_jiffies(20, 250), 5);
        assert_eq!(msecs_to_jiffies(20, 1000), 20);
    }
}
