//! Random loss on a link's entry, per direction, from the link's own seeded stream:
//! Bernoulli (each packet lost with probability p) or the Gilbert–Elliott two-state
//! Markov model (Gilbert 1960, Elliott 1963; the parameterisation of netem's
//! `gemodel p r 1-h 1-k`): the channel moves Good→Bad with probability `p` and
//! Bad→Good with `r` at each packet, and loses a packet with probability
//! `loss_good` in Good and `loss_bad` in Bad. The state transition is drawn before
//! the loss decision, as netem does.

use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::sim::SimRng;

fn one() -> f64 {
    1.0
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum LossConfig {
    /// Bernoulli loss probability in [0, 1).
    Bernoulli(f64),
    GilbertElliott(GilbertElliottConfig),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GilbertElliottConfig {
    /// Probability of moving Good → Bad at a packet.
    pub p: f64,
    /// Probability of moving Bad → Good at a packet.
    pub r: f64,
    #[serde(default)]
    pub loss_good: f64,
    #[serde(default = "one")]
    pub loss_bad: f64,
}

impl Default for LossConfig {
    fn default() -> Self {
        LossConfig::Bernoulli(0.0)
    }
}

impl LossConfig {
    pub fn validate(&self) -> Result<(), String> {
        let unit = |name: &str, v: f64| {
            if (0.0..=1.0).contains(&v) {
                Ok(())
            } else {
                Err(format!("{name} {v} is not a probability in [0, 1]"))
            }
        };
        match self {
            LossConfig::Bernoulli(p) if !(0.0..1.0).contains(p) => Err(format!("loss {p} is not in [0, 1)")),
            LossConfig::Bernoulli(_) => Ok(()),
            LossConfig::GilbertElliott(g) => {
                unit("gilbert_elliott.p", g.p)?;
                unit("gilbert_elliott.r", g.r)?;
                unit("gilbert_elliott.loss_good", g.loss_good)?;
                unit("gilbert_elliott.loss_bad", g.loss_bad)?;
                if g.r == 0.0 && g.p > 0.0 && g.loss_bad >= 1.0 {
                    return Err("gilbert_elliott: r = 0 with loss_bad = 1 loses every packet once Bad".into());
                }
                Ok(())
            }
        }
    }

    /// Long-run loss probability (for checks and docs).
    pub fn mean_loss(&self) -> f64 {
        match self {
            LossConfig::Bernoulli(p) => *p,
            LossConfig::GilbertElliott(g) => {
                if g.p + g.r == 0.0 {
                    return g.loss_good;
                }
                let bad = g.p / (g.p + g.r);
                bad * g.loss_bad + (1.0 - bad) * g.loss_good
            }
        }
    }
}

/// The loss process of one link direction.
#[derive(Debug)]
pub struct LossModel {
    cfg: LossConfig,
    bad: bool,
    rng: SimRng,
}

impl LossModel {
    pub fn new(cfg: LossConfig, rng: SimRng) -> Self {
        Self { cfg, bad: false, rng }
    }

    /// Whether the next packet is lost. Draws nothing when the model cannot lose.
    pub fn lose(&mut self) -> bool {
        match &self.cfg {
            LossConfig::Bernoulli(p) => *p > 0.0 && self.rng.gen::<f64>() < *p,
            LossConfig::GilbertElliott(g) => {
                let u: f64 = self.rng.gen();
                self.bad = if self.bad { u >= g.r } else { u < g.p };
                let loss = if self.bad { g.loss_bad } else { g.loss_good };
                loss > 0.0 && self.rng.gen::<f64>() < loss
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{rng::Component, stream};

    #[test]
    fn gilbert_elliott_matches_its_stationary_loss_and_is_bursty() {
        let cfg = LossConfig::GilbertElliott(GilbertElliottConfig { p: 0.01, r: 0.2, loss_good: 0.0, loss_bad: 1.0 });
        let mut m = LossModel::new(cfg.clone(), stream(3, Component::LinkLoss, 0));
        let n = 400_000;
        let losses: Vec<bool> = (0..n).map(|_| m.lose()).collect();
        let rate = losses.iter().filter(|&&l| l).count() as f64 / n as f64;
        assert!((rate - cfg.mean_loss()).abs() < 0.1 * cfg.mean_loss(), "{rate} vs {}", cfg.mean_loss());
        // Mean burst length 1/r = 5 packets (Bernoulli at the same rate: ~1.05).
        let bursts = losses.windows(2).filter(|w| !w[0] && w[1]).count();
        let mean_burst = losses.iter().filter(|&&l| l).count() as f64 / bursts as f64;
        assert!((mean_burst - 5.0).abs() < 0.5, "{mean_burst}");
    }

    #[test]
    fn bernoulli_is_seeded_and_matches_p() {
        let run = |seed| {
            let mut m = LossModel::new(LossConfig::Bernoulli(0.05), stream(seed, Component::LinkLoss, 0));
            (0..100_000).filter(|_| m.lose()).count()
        };
        assert_eq!(run(1), run(1));
        assert_ne!(run(1), run(2));
        assert!((run(1) as f64 / 100_000.0 - 0.05).abs() < 0.005);
    }
}
