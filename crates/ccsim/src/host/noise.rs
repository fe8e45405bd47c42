//! Host timing noise: the per-packet processing delay of a real host (softirq,
//! NAPI poll, TCP processing, timer and scheduling latency), drawn from a seeded
//! stream so that runs stay bit-identical per seed.
//!
//! Real hosts never answer at exactly the same instant, and that is what keeps a
//! deterministic drop-tail simulation out of phase lock-in (Floyd & Jacobson 1991):
//! with ideal hosts the service time is exactly one packet time and every ACK comes
//! back after exactly the same delay, so which flow meets the full queue is fixed by
//! the initial phase.
//!
//! The distributions are **measured** on this project's reference machine (Linux
//! 6.18, HZ=250, veth pairs in network namespaces, `validation/host_kernel_batch.sh
//! mech`, pooled by `validation/host_noise_calibration.py`, raw quantiles in
//! `validation/data/host/noise-calibration.json`):
//!
//! * receiver: data segment entering the receiver's interface → the ACK covering it
//!   leaving it, for ACKs sent on the immediate-ACK path (71 496 samples);
//! * sender: ACK entering the sender's interface → the next data segment leaving it
//!   for ACK-clocked, unpaced CUBIC transmits (19 765 samples, cut at 100 µs; four
//!   captures, `validation/data/host/unpaced-mech/noise-calibration-unpaced.json`).
//!   An earlier calibration (15 359 samples) came from CUBIC flows that the namespace
//!   rig had left paced, whose waits for the pacing timer inflated the tail (p95 54 µs
//!   against 12.5 µs unpaced); see docs/validation.md, "Hosts".
//!
//! The machine was shared (load average 7–8 on 2 cores for the receiver captures,
//! 11–22 for the sender's) during the captures, so the upper tail is probably heavier
//! than on an idle host; the body (p5–p80, 3–15 µs) is what a loaded host adds. Samples are drawn by inverse-CDF interpolation
//! between the measured quantiles; the top 0.1 % beyond p99.9 is not modelled.

use rand::Rng;

use crate::sim::SimRng;
use crate::units::Time;

/// (cumulative probability, delay in ns) knots of an empirical distribution.
pub type Quantiles = &'static [(f64, Time)];

/// Receiver: data in → ACK out, immediate ACKs (µs quantiles p0 … p99.9 of
/// `noise-calibration.json`, `receiver_ack_delay_us`).
pub const LINUX_RX: Quantiles = &[
    (0.0, 1_522),
    (0.01, 3_385),
    (0.05, 4_286),
    (0.10, 4_697),
    (0.20, 5_689),
    (0.30, 8_523),
    (0.40, 9_664),
    (0.50, 10_376),
    (0.60, 11_197),
    (0.70, 12_478),
    (0.80, 15_252),
    (0.90, 25_193),
    (0.95, 38_878),
    (0.98, 88_601),
    (0.99, 157_043),
    (1.0, 650_904),
];

/// Sender: ACK in → data out, ACK-clocked unpaced transmits (`sender_ack_to_send_us`
/// of `unpaced-mech/noise-calibration-unpaced.json`).
pub const LINUX_TX: Quantiles = &[
    (0.0, 1_507),
    (0.01, 2_734),
    (0.05, 2_955),
    (0.10, 3_215),
    (0.20, 3_776),
    (0.30, 4_197),
    (0.40, 4_657),
    (0.50, 5_188),
    (0.60, 5_829),
    (0.70, 6_469),
    (0.80, 7_130),
    (0.90, 8_543),
    (0.95, 12_459),
    (0.98, 22_955),
    (0.99, 30_756),
    (1.0, 89_074),
];

/// A seeded processing-delay generator: `scale` × a draw from `table`.
///
/// A draw happens for every packet a noisy host receives and every ACK-clocked send,
/// so the interpolation is precomputed ([`Segment`]) and the knot search starts from a
/// 64-bucket index of `u` instead of a binary search; `sample` gives exactly the bits
/// of `round(inverse_cdf(table, u) * scale)` (tested below).
#[derive(Debug, Clone)]
pub struct ProcessingDelay {
    /// The table's segments between consecutive knots (index i: knots i - 1 and i,
    /// index 0 unused, as `inverse_cdf` numbers them).
    segments: Vec<Segment>,
    /// `first[b]`: the segment `inverse_cdf` picks for u = b / 64, the lowest it can
    /// pick for any u in [b / 64, (b + 1) / 64).
    first: [u8; BUCKETS],
    /// Multiplier of the measured delays; 0 turns the noise off (ideal host).
    scale: f64,
    rng: SimRng,
    /// The next delay, drawn one call ahead: the caller schedules with a value
    /// already computed, and the next draw (a chain of dependent floating-point
    /// operations, a division among them) runs while the event loop goes on. The
    /// stream yields the same values in the same order.
    next: Time,
}

const BUCKETS: usize = 64;

/// Knot i - 1 and the differences to knot i, computed once with the same
/// floating-point operations `inverse_cdf` does per call (so the same bits).
#[derive(Debug, Clone, Copy, Default)]
struct Segment {
    p1: f64,
    p0: f64,
    width: f64,
    t0: f64,
    span: f64,
}

impl ProcessingDelay {
    pub fn new(table: Quantiles, scale: f64, rng: SimRng) -> Self {
        assert!(table.len() >= 2 && table.len() <= u8::MAX as usize, "a quantile table has 2..=255 knots");
        let mut segments = vec![Segment::default(); table.len()];
        for i in 1..table.len() {
            let ((p0, t0), (p1, t1)) = (table[i - 1], table[i]);
            segments[i] = Segment { p1, p0, width: p1 - p0, t0: t0 as f64, span: t1 as f64 - t0 as f64 };
        }
        let first = std::array::from_fn(|b| knot_index(table, b as f64 / BUCKETS as f64) as u8);
        let mut d = Self { segments, first, scale, rng, next: 0 };
        if !d.is_off() {
            d.next = d.draw();
        }
        d
    }

    pub fn is_off(&self) -> bool {
        self.scale == 0.0
    }

    /// Next delay (ns). Draws from the stream only when the noise is on, so an
    /// ideal host consumes no randomness.
    #[inline]
    pub fn sample(&mut self) -> Time {
        if self.is_off() {
            return 0;
        }
        let t = self.next;
        self.next = self.draw();
        t
    }

    fn draw(&mut self) -> Time {
        let u: f64 = self.rng.gen();
        round_to_time(self.interpolate(u) * self.scale)
    }

    /// `inverse_cdf(table, u)`, bit for bit.
    fn interpolate(&self, u: f64) -> f64 {
        // u * 64 is exact (a power of two), so the bucket is exactly floor(64 u); a
        // 32-bit conversion is cheaper than a saturating one to usize.
        let mut i = self.first[((u * BUCKETS as f64) as u32 as usize).min(BUCKETS - 1)] as usize;
        // The tables' knots are at least 0.01 apart, so this moves at most twice.
        while i < self.segments.len() - 1 && self.segments[i].p1 <= u {
            i += 1;
        }
        let s = self.segments[i];
        let w = if s.width > 0.0 { ((u - s.p0) / s.width).clamp(0.0, 1.0) } else { 0.0 };
        s.t0 + w * s.span
    }
}

/// The knot `inverse_cdf` interpolates towards at `u`.
fn knot_index(table: Quantiles, u: f64) -> usize {
    table.partition_point(|&(p, _)| p <= u).clamp(1, table.len() - 1)
}

/// `x.round() as Time` (half away from zero, saturating) without the libm call.
/// Below 2^52 the truncation to i64 and back and the fraction `x - trunc(x)` are
/// exact, and signed conversions are single instructions (unsigned ones are not).
fn round_to_time(x: f64) -> Time {
    if (0.0..4_503_599_627_370_496.0).contains(&x) {
        let whole = x as i64;
        return (whole + (x - whole as f64 >= 0.5) as i64) as Time;
    }
    x.round() as Time
}

/// Linear interpolation of the quantile function at `u` in [0, 1].
pub fn inverse_cdf(table: Quantiles, u: f64) -> f64 {
    let i = knot_index(table, u);
    let (p0, t0) = table[i - 1];
    let (p1, t1) = table[i];
    let w = if p1 > p0 { ((u - p0) / (p1 - p0)).clamp(0.0, 1.0) } else { 0.0 };
    t0 as f64 + w * (t1 as f64 - t0 as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{rng::Component, stream};

    fn rng() -> SimRng {
        stream(7, Component::Jitter, 0)
    }

    #[test]
    fn tables_are_monotone_and_span_zero_to_one() {
        for t in [LINUX_RX, LINUX_TX] {
            assert_eq!(t.first().unwrap().0, 0.0);
            assert_eq!(t.last().unwrap().0, 1.0);
            assert!(t.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1));
        }
    }

    #[test]
    fn inverse_cdf_hits_the_knots_and_interpolates() {
        assert_eq!(inverse_cdf(LINUX_RX, 0.5), 10_376.0);
        assert_eq!(inverse_cdf(LINUX_RX, 0.0), 1_522.0);
        assert_eq!(inverse_cdf(LINUX_RX, 1.0), 650_904.0);
        let mid = inverse_cdf(LINUX_RX, 0.55);
        assert!(mid > 10_376.0 && mid < 11_197.0);
    }

    #[test]
    fn samples_follow_the_measured_median_and_tail() {
        let mut d = ProcessingDelay::new(LINUX_RX, 1.0, rng());
        let mut xs: Vec<Time> = (0..20_000).map(|_| d.sample()).collect();
        xs.sort_unstable();
        let median = xs[xs.len() / 2] as f64;
        assert!((median - 10_376.0).abs() < 600.0, "median {median}");
        let p95 = xs[xs.len() * 95 / 100] as f64;
        assert!((p95 - 38_878.0).abs() < 4_000.0, "p95 {p95}");
        assert!(xs.iter().all(|&x| (1_522..=650_904).contains(&x)));
    }

    /// The precomputed sampler gives exactly the reference's bits: on random draws,
    /// on every knot and its floating-point neighbours, and on the bucket edges.
    #[test]
    fn fast_path_is_bit_identical_to_the_reference() {
        let mut r = rng();
        for table in [LINUX_RX, LINUX_TX] {
            for scale in [1.0, 0.37, 2.5, 100.0] {
                let d = ProcessingDelay::new(table, scale, rng());
                let mut us: Vec<f64> = (0..100_000).map(|_| r.gen::<f64>()).collect();
                for &(p, _) in table.iter() {
                    us.extend([p, p.next_down(), p.next_up()]);
                }
                us.extend((0..=BUCKETS).map(|b| b as f64 / BUCKETS as f64));
                for u in us.into_iter().filter(|u| (0.0..=1.0).contains(u)) {
                    let (fast, slow) = (d.interpolate(u), inverse_cdf(table, u));
                    assert_eq!(fast.to_bits(), slow.to_bits(), "u = {u}");
                    assert_eq!(round_to_time(fast * scale), (slow * scale).round() as Time, "u = {u}");
                }
            }
        }
    }

    /// Drawing one ahead changes nothing: the delays are the reference's, in order.
    #[test]
    fn samples_are_the_streams_draws_in_order() {
        for scale in [1.0, 0.37] {
            let mut d = ProcessingDelay::new(LINUX_RX, scale, rng());
            let mut r = rng();
            for i in 0..10_000 {
                let want = (inverse_cdf(LINUX_RX, r.gen::<f64>()) * scale).round() as Time;
                assert_eq!(d.sample(), want, "draw {i} at scale {scale}");
            }
        }
    }

    #[test]
    fn round_to_time_is_round_then_saturating_cast() {
        let mut r = rng();
        let mut xs = vec![0.0, -0.0, 0.5, 1.5, 2.5, -0.5, -3.7, 0.49999999999999994, 4503599627370497.0, 1e30, -1e30,
            f64::INFINITY, f64::NEG_INFINITY, f64::NAN, u64::MAX as f64, (1u64 << 53) as f64 + 2.0];
        xs.extend((0..100_000).map(|_| r.gen::<f64>() * 1e6));
        xs.extend((0..1000).map(|i| i as f64 / 4.0).flat_map(|x| [x, x.next_up(), x.next_down()]));
        for x in xs {
            assert_eq!(round_to_time(x), x.round() as Time, "x = {x}");
        }
    }

    #[test]
    fn scale_zero_is_the_ideal_host_and_consumes_no_randomness() {
        let mut d = ProcessingDelay::new(LINUX_TX, 0.0, rng());
        assert!((0..100).all(|_| d.sample() == 0));
        let mut fresh = rng();
        let mut used = d.rng.clone();
        assert_eq!(fresh.gen::<u64>(), used.gen::<u64>());
    }

    #[test]
    fn scale_multiplies_and_seeds_differ() {
        let a: Vec<Time> = { let mut d = ProcessingDelay::new(LINUX_TX, 1.0, rng()); (0..50).map(|_| d.sample()).collect() };
        let b: Vec<Time> = { let mut d = ProcessingDelay::new(LINUX_TX, 2.0, rng()); (0..50).map(|_| d.sample()).collect() };
        for (x, y) in a.iter().zip(&b) {
            assert!((*y as i64 - 2 * *x as i64).abs() <= 1);
        }
        let mut other = ProcessingDelay::new(LINUX_TX, 1.0, stream(8, Component::Jitter, 0));
        let c: Vec<Time> = (0..50).map(|_| other.sample()).collect();
        assert_ne!(a, c);
    }
}
