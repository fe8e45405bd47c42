//! The host layer: what a Linux machine does between its TCP stack (`tcp/`) and the
//! wire (`net/`). TCP asks the host to transmit and the host decides when packets
//! leave and arrive:
//!
//! | part | module | Linux | off (ideal host) |
//! |---|---|---|---|
//! | timing noise | [`noise`] | softirq / NAPI / timer latency, measured on this machine | `timing_noise = 0` |
//! | segmentation offload | [`gso`] | `tcp_tso_autosize`, `tcp_tso_should_defer`, `gso_max_segs` 65535 | `gso_max_segs = 1` |
//! | receive batching and coalescing | [`napi`] | NAPI poll + GRO up to `gro_max_size` 65536 | `gro_max_size = 0` |
//! | kernel clock | [`clock`] | jiffies at `CONFIG_HZ` = 250 | `hz = 1000` |
//!
//! Every part is configured per sending host ([`HostConfig`], the spec's `[host]`
//! table with per-sender overrides); the receiver of a sender's flows runs the same
//! host configuration. Randomness comes from per-host seeded streams.

pub mod clock;
pub mod gso;
pub mod napi;
pub mod noise;

use serde::{Deserialize, Serialize};

use crate::sim::SimRng;
pub use clock::Jiffies;
pub use gso::Gso;
pub use napi::RxBatch;
pub use noise::ProcessingDelay;

/// A host's configuration, resolved (the engine contract; `docs/spec.md` `[host]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct HostConfig {
    /// Multiplier of the measured Linux processing delays (1 = as measured, 0 = exact
    /// timing, the ideal host).
    pub timing_noise: f64,
    /// Device `gso_max_segs` (Linux 65535; 1 = single-MSS skbs, no bursts).
    pub gso_max_segs: u32,
    /// Device `gso_max_size` in bytes (Linux 65536).
    pub gso_max_size: u32,
    /// Device `gro_max_size` in bytes (Linux 65536): in-order segments of one flow
    /// arriving in one NAPI poll merge into frames up to this size, ACKed as one.
    /// Below two packets (e.g. 1500, as the namespace measurements set it, or 0) no
    /// segments merge, but a poll still processes its packets together.
    pub gro_max_size: u32,
    /// `CONFIG_HZ`: the jiffies clock of CUBIC, BBR and the delayed-ACK timer.
    pub hz: u32,
}

impl Default for HostConfig {
    fn default() -> Self {
        Self::linux()
    }
}

impl HostConfig {
    /// Linux defaults (6.18, this machine).
    pub fn linux() -> Self {
        Self {
            timing_noise: 1.0,
            gso_max_segs: gso::GSO_MAX_SEGS,
            gso_max_size: gso::GSO_MAX_SIZE,
            gro_max_size: napi::GRO_MAX_SIZE,
            hz: clock::DEFAULT_HZ,
        }
    }

    /// The ideal host of the engine before the host layer: exact timing, one packet
    /// per send, no receive batching, a 1 ms clock.
    pub fn ideal() -> Self {
        Self { timing_noise: 0.0, gso_max_segs: 1, gso_max_size: gso::GSO_MAX_SIZE, gro_max_size: 0, hz: 1000 }
    }

    pub fn validate(&self, at: &str) -> Result<(), String> {
        if !(self.timing_noise.is_finite() && (0.0..=100.0).contains(&self.timing_noise)) {
            return Err(format!("{at}.timing_noise: {} is not in [0, 100]", self.timing_noise));
        }
        if self.gso_max_segs == 0 {
            return Err(format!("{at}.gso_max_segs: must be >= 1"));
        }
        if self.gso_max_size < 2048 {
            return Err(format!("{at}.gso_max_size: {} is below 2048 bytes", self.gso_max_size));
        }
        if !(100..=10_000).contains(&self.hz) {
            return Err(format!("{at}.hz: {} is not in [100, 10000]", self.hz));
        }
        Ok(())
    }

    pub fn gso(&self) -> Gso {
        Gso { max_segs: self.gso_max_segs, max_size: self.gso_max_size }
    }

    pub fn clock(&self) -> Jiffies {
        Jiffies::new(self.hz)
    }
}

/// One end host at run time: its processing-delay stream and its NAPI batch.
#[derive(Debug)]
pub struct Host {
    pub delay: ProcessingDelay,
    pub rx: RxBatch,
}

impl Host {
    pub fn new(cfg: &HostConfig, table: noise::Quantiles, rng: SimRng) -> Self {
        Self { delay: ProcessingDelay::new(table, cfg.timing_noise, rng), rx: RxBatch::new(cfg.gro_max_size) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_linux_and_validate() {
        let c = HostConfig::default();
        assert_eq!(c, HostConfig::linux());
        assert_eq!((c.gso_max_segs, c.gso_max_size, c.gro_max_size, c.hz), (65_535, 65_536, 65_536, 250));
        c.validate("host").unwrap();
        HostConfig::ideal().validate("host").unwrap();
    }

    #[test]
    fn bad_values_name_the_field() {
        let e = HostConfig { hz: 7, ..HostConfig::linux() }.validate("senders[0].host").unwrap_err();
        assert!(e.starts_with("senders[0].host.hz"), "{e}");
        let e = HostConfig { timing_noise: f64::NAN, ..HostConfig::linux() }.validate("host").unwrap_err();
        assert!(e.contains("timing_noise"), "{e}");
        assert!(HostConfig { gso_max_segs: 0, ..HostConfig::linux() }.validate("h").is_err());
    }

    #[test]
    fn partial_json_fills_linux_defaults() {
        let c: HostConfig = serde_json::from_str(r#"{"gso_max_segs": 1}"#).unwrap();
        assert_eq!(c, HostConfig { gso_max_segs: 1, ..HostConfig::linux() });
        assert!(serde_json::from_str::<HostConfig>(r#"{"bogus": 1}"#).is_err());
    }
}
