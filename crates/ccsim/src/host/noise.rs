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
#[derive(Debug, Clone)]
pub struct ProcessingDelay {
    table: Quantiles,
    /// Multiplier of the measured delays; 0 turns the noise off (ideal host).
    scale: f64,
    rng: SimRng,
}

impl ProcessingDelay {
    pub fn new(table: Quantiles, scale: f64, rng: SimRng) -> Self {
        Self { table, scale, rng }
    }

    pub fn is_off(&self) -> bool {
        self.scale == 0.0
    }

    /// Next delay (ns). Draws from the stream only when the noise is on, so an
    /// ideal host consumes no randomness.
    pub fn sample(&mut self) -> Time {
        if self.is_off() {
            return 0;
        }
        let u: f64 = self.rng.gen();
        (inverse_cdf(self.table, u) * self.scale).round() as Time
    }
}

/// Linear interpolation of the quantile function at `u` in [0, 1].
pub fn inverse_cdf(table: Quantiles, u: f64) -> f64 {
    let i = table.partition_point(|&(p, _)| p <= u).clamp(1, table.len() - 1);
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
