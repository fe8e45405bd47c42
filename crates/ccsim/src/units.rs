//! Units of the engine. Time is an integer number of nanoseconds; rates are bits per
//! second; sizes are bytes. All unit conversions that mix them live here, with their
//! rounding stated, so no other module multiplies rates by durations by hand.

/// Simulated time or a duration, in nanoseconds (584 years of range).
pub type Time = u64;
/// Bytes.
pub type Bytes = u64;
/// Bits per second.
pub type Bps = u64;

pub const NS_PER_US: Time = 1_000;
pub const NS_PER_MS: Time = 1_000_000;
pub const NS_PER_SEC: Time = 1_000_000_000;

pub const fn ms(v: u64) -> Time {
    v * NS_PER_MS
}
pub const fn us(v: u64) -> Time {
    v * NS_PER_US
}
pub const fn secs(v: u64) -> Time {
    v * NS_PER_SEC
}

/// Serialization of `bytes` at `rate_bps`: returns (whole nanoseconds, remainder).
/// The remainder is in units of 1/rate_bps ns and must be carried into the next
/// packet by the caller so that long runs do not drift (`Transmitter` does this).
pub fn serialization(bytes: Bytes, rate_bps: Bps, carried_remainder: u64) -> (Time, u64) {
    debug_assert!(rate_bps > 0, "serialization at zero rate");
    // bits * 1e9 fits u128 for any packet and rate.
    let numerator = bytes as u128 * 8 * NS_PER_SEC as u128 + carried_remainder as u128;
    let ns = numerator / rate_bps as u128;
    let rem = numerator % rate_bps as u128;
    (ns as Time, rem as u64)
}

/// Bytes that `rate_bps` carries in `dur` (rounded down).
pub fn bytes_in(rate_bps: Bps, dur: Time) -> Bytes {
    (rate_bps as u128 * dur as u128 / (8 * NS_PER_SEC as u128)) as Bytes
}

/// Rate (bits per second) of `bytes` delivered over `dur` (rounded down); 0 if dur is 0.
pub fn rate_of(bytes: Bytes, dur: Time) -> Bps {
    if dur == 0 {
        return 0;
    }
    (bytes as u128 * 8 * NS_PER_SEC as u128 / dur as u128) as Bps
}

/// Time to send `bytes` at `rate_bps`, rounded up (0 if the rate is 0: unpaced).
pub fn time_to_send(bytes: Bytes, rate_bps: Bps) -> Time {
    if rate_bps == 0 {
        return 0;
    }
    (bytes as u128 * 8 * NS_PER_SEC as u128).div_ceil(rate_bps as u128) as Time
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialization_carries_remainder_without_drift() {
        // 1500 B at 7 Mbit/s is 1714285.71 ns; a million packets must take exactly
        // 1e6 * 1500 * 8 / 7e6 s once remainders are carried.
        let mut rem = 0;
        let mut total: u128 = 0;
        for _ in 0..1_000_000 {
            let (ns, r) = serialization(1500, 7_000_000, rem);
            rem = r;
            total += ns as u128;
        }
        let exact = 1_000_000u128 * 1500 * 8 * 1_000_000_000 / 7_000_000;
        assert_eq!(total, exact);
    }

    #[test]
    fn rate_and_bytes_round_trip() {
        assert_eq!(bytes_in(100_000_000, ms(100)), 1_250_000);
        assert_eq!(rate_of(1_250_000, ms(100)), 100_000_000);
        assert_eq!(time_to_send(1500, 12_000_000), ms(1));
    }
}
