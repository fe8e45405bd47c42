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

/// Division by a 64-bit divisor fixed for many divisions (a link's rate), by a
/// multiplication: Granlund & Montgomery, "Division by invariant integers using
/// multiplication" (PLDI 1994), figure 4.1, exact for every 64-bit dividend. A
/// hardware 64-bit division takes tens of cycles on every packet a link serializes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Divisor {
    d: u64,
    /// m' = floor(2^64 (2^l - d) / d) + 1, l = ceil(log2 d).
    m: u64,
    sh1: u32,
    sh2: u32,
}

impl Divisor {
    pub fn new(d: u64) -> Self {
        assert!(d > 0, "division by zero");
        let l = 64 - (d - 1).leading_zeros(); // ceil(log2 d); 0 for d = 1
        let m = (((1u128 << 64) * ((1u128 << l) - d as u128)) / d as u128 + 1) as u64;
        Self { d, m, sh1: l.min(1), sh2: l.saturating_sub(1) }
    }

    pub fn get(&self) -> u64 {
        self.d
    }

    /// (n / d, n % d).
    #[inline]
    pub fn div_rem(&self, n: u64) -> (u64, u64) {
        let t1 = ((self.m as u128 * n as u128) >> 64) as u64;
        let q = (t1 + ((n - t1) >> self.sh1)) >> self.sh2;
        (q, n - q * self.d)
    }
}

/// [`serialization`] at the rate `rate` holds, with its division by a multiplication.
#[inline]
pub fn serialization_by(bytes: Bytes, rate: &Divisor, carried_remainder: u64) -> (Time, u64) {
    // Every packet's numerator fits 64 bits (a packet below 2 GB, a remainder below
    // the rate); anything else takes the 128-bit path.
    match bytes.checked_mul(8 * NS_PER_SEC).and_then(|b| b.checked_add(carried_remainder)) {
        Some(n) => rate.div_rem(n),
        None => serialization(bytes, rate.get(), carried_remainder),
    }
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
    fn divisor_divides_exactly() {
        use rand::{Rng, SeedableRng};
        let mut r = rand_pcg::Pcg64Mcg::seed_from_u64(3);
        let mut ds = vec![1, 2, 3, 7, 10, 1_000_000_000, 10_000_000_000, 7_000_000, (1 << 63) - 1, 1 << 63, (1 << 63) + 1, u64::MAX - 1, u64::MAX];
        ds.extend((0..2000).map(|_| r.gen::<u64>() >> r.gen_range(0..64)).filter(|&d| d > 0));
        for d in ds {
            let div = Divisor::new(d);
            let mut ns = vec![0, 1, d - 1, d, d.wrapping_add(1), u64::MAX, u64::MAX - 1, u64::MAX / d * d, (u64::MAX / d * d).wrapping_sub(1)];
            ns.extend((0..200).map(|_| r.gen::<u64>() >> r.gen_range(0..64)));
            for n in ns {
                assert_eq!(div.div_rem(n), (n / d, n % d), "{n} / {d}");
            }
        }
        for (b, rate, rem) in [(1500, 7_000_000, 6_999_999), (52, 10_000_000_000, 9_999_999_999), (1 << 40, 10_000_000_000, 5)] {
            assert_eq!(serialization_by(b, &Divisor::new(rate), rem), serialization(b, rate, rem));
        }
    }

    #[test]
    fn rate_and_bytes_round_trip() {
        assert_eq!(bytes_in(100_000_000, ms(100)), 1_250_000);
        assert_eq!(rate_of(1_250_000, ms(100)), 100_000_000);
        assert_eq!(time_to_send(1500, 12_000_000), ms(1));
    }
}
