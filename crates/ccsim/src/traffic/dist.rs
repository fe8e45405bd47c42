//! Empirical distributions given as CDF points, as flow-size and RTT files list them
//! (the DCTCP / pFabric / HPCC simulators' `value cumulative-probability` format).

use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::sim::rng::SimRng;

/// How values between two CDF points are drawn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Interpolation {
    /// Linear between consecutive points (a continuous CDF; flow sizes).
    #[default]
    Linear,
    /// Each point is a value with probability mass `p_i − p_{i−1}` (RTT bins: "26.82 % of
    /// hosts have RTT ≤ 10 ms, so 26.82 % of flows get 10 ms").
    Step,
}

/// An empirical distribution: points `(value, cumulative probability)` with values
/// and probabilities non-decreasing and the last probability 1. With `Linear`, the
/// first point's probability is a mass at its value (a CDF that starts above 0).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EmpiricalDist {
    pub points: Vec<(f64, f64)>,
    #[serde(default)]
    pub interpolation: Interpolation,
}

impl EmpiricalDist {
    pub fn validate(&self) -> Result<(), String> {
        let Some(&(_, last)) = self.points.last() else {
            return Err("points: at least one (value, probability) point is required".into());
        };
        let mut prev = (f64::NEG_INFINITY, 0.0);
        for (i, &(v, p)) in self.points.iter().enumerate() {
            if !v.is_finite() || v < 0.0 || !(0.0..=1.0).contains(&p) {
                return Err(format!("points[{i}]: value must be finite and >= 0, probability in [0, 1]"));
            }
            if v < prev.0 || p < prev.1 {
                return Err(format!("points[{i}]: values and probabilities must not decrease"));
            }
            prev = (v, p);
        }
        if (last - 1.0).abs() > 1e-9 {
            return Err(format!("points: the last probability must be 1, not {last}"));
        }
        Ok(())
    }

    /// The value at cumulative probability `u` in [0, 1) (the inverse CDF).
    pub fn quantile(&self, u: f64) -> f64 {
        let i = self.points.partition_point(|&(_, p)| p <= u).min(self.points.len() - 1);
        let (v1, p1) = self.points[i];
        if i == 0 || self.interpolation == Interpolation::Step {
            return v1;
        }
        let (v0, p0) = self.points[i - 1];
        if p1 <= p0 {
            return v1;
        }
        v0 + (v1 - v0) * (u - p0) / (p1 - p0)
    }

    /// One draw by inverse transform.
    pub fn sample(&self, rng: &mut SimRng) -> f64 {
        self.quantile(rng.gen::<f64>())
    }

    /// The mean of the distribution (exact for both interpolations).
    pub fn mean(&self) -> f64 {
        let mut mean = 0.0;
        let mut prev: Option<(f64, f64)> = None;
        for &(v, p) in &self.points {
            mean += match (prev, self.interpolation) {
                (None, _) => v * p,
                (Some((_, p0)), Interpolation::Step) => v * (p - p0),
                (Some((v0, p0)), Interpolation::Linear) => (v0 + v) / 2.0 * (p - p0),
            };
            prev = Some((v, p));
        }
        mean
    }

    /// The mean of ⌈X / `unit`⌉, at least 1 (segments of `unit` bytes a flow of X bytes
    /// needs), exact for both interpolations: a linear piece spreads its mass
    /// uniformly over [v0, v1], so its share is the integral of ⌈x / unit⌉ there over
    /// its width.
    pub fn mean_units(&self, unit: f64) -> f64 {
        // ∫₀ˣ ⌈t/unit⌉ dt, with n = ⌊x/unit⌋ whole units below x.
        let area = |x: f64| {
            let n = (x / unit).floor();
            unit * n * (n + 1.0) / 2.0 + (x - n * unit) * (n + 1.0)
        };
        let units = |x: f64| (x / unit).ceil().max(1.0);
        let mut mean = 0.0;
        let mut prev: Option<(f64, f64)> = None;
        for &(v, p) in &self.points {
            mean += match (prev, self.interpolation) {
                (Some((v0, p0)), Interpolation::Linear) if v > v0 => (p - p0) * (area(v) - area(v0)) / (v - v0),
                (Some((_, p0)), _) => (p - p0) * units(v),
                (None, _) => p * units(v),
            };
            prev = Some((v, p));
        }
        mean
    }

    /// The CDF at `x` (for tests: Kolmogorov–Smirnov against samples).
    pub fn cdf(&self, x: f64) -> f64 {
        let mut prev: Option<(f64, f64)> = None;
        for &(v, p) in &self.points {
            if x < v {
                return match (prev, self.interpolation) {
                    (None, _) => 0.0,
                    (Some((_, p0)), Interpolation::Step) => p0,
                    (Some((v0, p0)), Interpolation::Linear) => p0 + (p - p0) * (x - v0) / (v - v0),
                };
            }
            prev = Some((v, p));
        }
        1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{rng::Component, stream};

    fn dist(points: &[(f64, f64)], interpolation: Interpolation) -> EmpiricalDist {
        EmpiricalDist { points: points.to_vec(), interpolation }
    }

    #[test]
    fn linear_samples_match_their_cdf_by_kolmogorov_smirnov() {
        // A heavy-tailed web-search-like shape with a mass at the first point.
        let d = dist(&[(6e3, 0.15), (13e3, 0.2), (19e3, 0.3), (33e3, 0.4), (53e3, 0.53), (133e3, 0.6), (667e3, 0.7), (1.3e6, 0.8), (6.7e6, 0.9), (2e7, 0.97), (3e7, 1.0)], Interpolation::Linear);
        d.validate().unwrap();
        let mut rng = stream(7, Component::FlowSize, 0);
        let n = 20_000;
        let mut xs: Vec<f64> = (0..n).map(|_| d.sample(&mut rng)).collect();
        xs.sort_by(f64::total_cmp);
        // D_n: the largest gap between the empirical and the model CDF, on both sides
        // of each step; the one-sample KS critical value at alpha = 0.01 is 1.628/sqrt(n).
        let mut ks: f64 = 0.0;
        for (i, &x) in xs.iter().enumerate() {
            let f = d.cdf(x);
            ks = ks.max((f - i as f64 / n as f64).abs()).max(((i + 1) as f64 / n as f64 - f).abs());
        }
        // The mass at 6 KB is an atom: compare just past it instead of at it.
        let atom = xs.iter().filter(|&&x| x == 6e3).count() as f64 / n as f64;
        assert!((atom - 0.15).abs() < 0.015, "atom share {atom}");
        let ks_cont = xs
            .iter()
            .enumerate()
            .filter(|(_, &x)| x > 6e3)
            .map(|(i, &x)| (d.cdf(x) - (i + 1) as f64 / n as f64).abs())
            .fold(0.0, f64::max);
        assert!(ks_cont < 1.628 / (n as f64).sqrt(), "KS statistic {ks_cont} (raw {ks})");
    }

    #[test]
    fn step_distribution_gives_each_value_its_mass() {
        let d = dist(&[(10.0, 0.2682), (20.0, 0.5), (80.0, 0.9), (200.0, 1.0)], Interpolation::Step);
        let mut rng = stream(1, Component::RttMix, 0);
        let n = 40_000;
        let mut counts = [0usize; 4];
        for _ in 0..n {
            let v = d.sample(&mut rng);
            counts[[10.0, 20.0, 80.0, 200.0].iter().position(|&x| x == v).expect("a listed value")] += 1;
        }
        let want = [0.2682, 0.2318, 0.4, 0.1];
        for (c, w) in counts.iter().zip(want) {
            assert!((*c as f64 / n as f64 - w).abs() < 0.01, "{counts:?}");
        }
        assert!((d.mean() - (10.0 * 0.2682 + 20.0 * 0.2318 + 80.0 * 0.4 + 200.0 * 0.1)).abs() < 1e-9);
    }

    #[test]
    fn mean_of_a_linear_cdf_is_the_area_under_its_survival_function() {
        let d = dist(&[(100.0, 0.5), (300.0, 1.0)], Interpolation::Linear);
        assert!((d.mean() - (0.5 * 100.0 + 0.5 * 200.0)).abs() < 1e-9);
        assert!(dist(&[(1.0, 0.5)], Interpolation::Linear).validate().is_err());
    }

    #[test]
    fn mean_units_counts_whole_segments_exactly() {
        // Uniform on [0, 3000] in 1000-byte units: ⌈x/1000⌉ is 1, 2, 3 a third each.
        let d = dist(&[(0.0, 0.0), (3000.0, 1.0)], Interpolation::Linear);
        assert!((d.mean_units(1000.0) - 2.0).abs() < 1e-9);
        // A mass at 400 B (one segment) and a uniform piece on [1000, 2500]: 1 or 2 or 3.
        let d = dist(&[(400.0, 0.5), (1000.0, 0.5), (2500.0, 1.0)], Interpolation::Linear);
        let want = 0.5 * 1.0 + 0.5 * (2.0 * 1000.0 + 3.0 * 500.0) / 1500.0;
        assert!((d.mean_units(1000.0) - want).abs() < 1e-9);
        // Against draws: the sample mean of ⌈x/1448⌉ of a heavy-tailed shape.
        let d = dist(&[(100.0, 0.2), (5e3, 0.6), (1e5, 0.95), (1e6, 1.0)], Interpolation::Linear);
        let mut rng = stream(3, Component::FlowSize, 0);
        let n = 200_000;
        let sampled = (0..n).map(|_| (d.sample(&mut rng) / 1448.0).ceil().max(1.0)).sum::<f64>() / n as f64;
        assert!((sampled / d.mean_units(1448.0) - 1.0).abs() < 0.01, "{sampled} vs {}", d.mean_units(1448.0));
        assert!(dist(&[(2.0, 0.5), (1.0, 1.0)], Interpolation::Linear).validate().is_err());
    }
}
