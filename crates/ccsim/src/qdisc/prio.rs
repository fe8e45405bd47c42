//! Strict priority (Linux `net/sched/sch_prio.c`): several bands, each its own
//! child qdisc; dequeue always serves the lowest-numbered band that has a packet
//! to send, so higher bands only get what band 0 leaves. A classifier picks the
//! band of each arriving packet:
//!
//! * `flow`: a table from flow id to band (the front end resolves "by group" into
//!   it), with a default band for flows not listed;
//! * `bytes_sent`: by how many bytes the flow had sent before this segment (its
//!   sequence number × segment size): band i while below `thresholds_bytes[i]`, the
//!   last band after the last threshold (PIAS-style least-attained-service).
//!
//! ACKs always go to band 0 (they are tiny and carry the reverse flow's clock).

use serde::{Deserialize, Serialize};

use super::{build, AqmState, Qdisc, QdiscCtx, Queued, Report};
use crate::config::QdiscConfig;
use crate::net::{Packet, Payload};
use crate::sim::SimRng;
use crate::units::Time;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "by", rename_all = "snake_case", deny_unknown_fields)]
pub enum Classifier {
    Flow {
        /// Band of flow i (flows beyond the table use `default_band`).
        band_of_flow: Vec<u8>,
        #[serde(default)]
        default_band: u8,
    },
    BytesSent {
        thresholds_bytes: Vec<u64>,
    },
}

impl Classifier {
    /// Check the classifier against `n` classes (bands); errors start with `who`.
    pub fn validate(&self, n: usize, who: &str, what: &str) -> Result<(), String> {
        match self {
            Classifier::Flow { band_of_flow, default_band } => {
                if let Some(b) = band_of_flow.iter().chain([default_band]).find(|&&b| b as usize >= n) {
                    return Err(format!("{who}: {what} {b} does not exist ({what}s 0..{})", n - 1));
                }
            }
            Classifier::BytesSent { thresholds_bytes } => {
                if thresholds_bytes.len() + 1 != n {
                    let need = thresholds_bytes.len() + 1;
                    return Err(format!("{who}: {} thresholds need {need} {what}s, not {n}", thresholds_bytes.len()));
                }
                if thresholds_bytes.windows(2).any(|w| w[0] >= w[1]) {
                    return Err(format!("{who}: thresholds_bytes must increase"));
                }
            }
        }
        Ok(())
    }

    /// The class (band) of a data packet; ACKs go to `ack_class`.
    pub fn class_of(&self, p: &Packet, ack_class: usize) -> usize {
        let Payload::Data(seg) = p.payload else { return ack_class };
        match self {
            Classifier::Flow { band_of_flow, default_band } => *band_of_flow.get(p.flow as usize).unwrap_or(default_band) as usize,
            Classifier::BytesSent { thresholds_bytes } => {
                let sent = seg.seg * seg.len as u64;
                thresholds_bytes.iter().position(|&t| sent < t).unwrap_or(thresholds_bytes.len())
            }
        }
    }

    /// Where unclassified traffic goes: the flow table's default, else class 0.
    pub fn default_class(&self) -> usize {
        match self {
            Classifier::Flow { default_band, .. } => *default_band as usize,
            Classifier::BytesSent { .. } => 0,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PrioConfig {
    /// Band 0 is served first.
    pub bands: Vec<QdiscConfig>,
    pub classifier: Classifier,
}

impl PrioConfig {
    pub fn validate(&self) -> Result<(), String> {
        if self.bands.is_empty() || self.bands.len() > 16 {
            return Err(format!("prio: {} bands; give 1 to 16", self.bands.len()));
        }
        self.classifier.validate(self.bands.len(), "prio", "band")?;
        for b in &self.bands {
            b.validate()?;
        }
        Ok(())
    }
}

#[derive(Debug)]
pub struct Prio {
    classifier: Classifier,
    bands: Vec<Box<dyn Qdisc>>,
}

impl Prio {
    pub fn new(cfg: &PrioConfig, rng: &mut SimRng) -> Self {
        Self { classifier: cfg.classifier.clone(), bands: cfg.bands.iter().map(|b| build(b, rng)).collect() }
    }

    /// ACKs always go to band 0 (they are tiny and carry the reverse flow's clock).
    pub fn band_of(&self, p: &Packet) -> usize {
        self.classifier.class_of(p, 0)
    }
}

impl Qdisc for Prio {
    fn enqueue(&mut self, p: Packet, ctx: &mut QdiscCtx, report: &mut Report) -> bool {
        let band = self.band_of(&p);
        self.bands[band].enqueue(p, ctx, report)
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx, report: &mut Report) -> Option<Queued> {
        self.bands.iter_mut().find_map(|b| b.dequeue(ctx, report))
    }

    fn backlog_bytes(&self) -> u64 {
        self.bands.iter().map(|b| b.backlog_bytes()).sum()
    }
    fn backlog_pkts(&self) -> u64 {
        self.bands.iter().map(|b| b.backlog_pkts()).sum()
    }
    fn aqm_state(&self) -> AqmState {
        self.bands.first().map(|b| b.aqm_state()).unwrap_or_default()
    }
    fn next_ready(&self, now: Time) -> Option<Time> {
        self.bands.iter().filter_map(|b| b.next_ready(now)).min()
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{drain_at_rate, pkt, rng};
    use super::*;
    use crate::net::Ecn;

    fn fifo() -> QdiscConfig {
        QdiscConfig::Pfifo { limit_packets: 10_000 }
    }

    #[test]
    fn high_band_is_always_served_first() {
        let cfg = PrioConfig { bands: vec![fifo(), fifo()], classifier: Classifier::Flow { band_of_flow: vec![1, 0], default_band: 1 } };
        let mut q = Prio::new(&cfg, &mut rng());
        // Both flows at the link rate: flow 1 (band 0) gets everything.
        let mut arrivals: Vec<(Time, Packet)> = (0..2000u64).map(|i| (i * 1_000_000, pkt(0, i, 1500, Ecn::NotEct))).collect();
        arrivals.extend((0..2000u64).map(|i| (i * 1_000_000 + 1, pkt(1, i, 1500, Ecn::NotEct))));
        arrivals.sort_by_key(|a| a.0);
        let (out, _) = drain_at_rate(&mut q, 12_000_000, &arrivals, 1_000_000_000);
        let late: Vec<u32> = out.iter().filter(|(t, _, _)| *t > 100_000_000).map(|(_, _, p)| p.flow).collect();
        assert!(late.iter().filter(|&&f| f == 1).count() as f64 > 0.95 * late.len() as f64);
        let sparse = out.iter().filter(|(_, _, p)| p.flow == 1).map(|x| x.1).max().unwrap();
        assert!(sparse <= 2_000_000, "band 0 waits at most for the packet in service: {sparse}");
    }

    #[test]
    fn bytes_sent_classifier_demotes_long_flows() {
        let cfg = PrioConfig { bands: vec![fifo(), fifo()], classifier: Classifier::BytesSent { thresholds_bytes: vec![100_000] } };
        assert!(cfg.validate().is_ok());
        let q = Prio::new(&cfg, &mut rng());
        assert_eq!(q.band_of(&pkt(0, 10, 1500, Ecn::NotEct)), 0);
        assert_eq!(q.band_of(&pkt(0, 1000, 1500, Ecn::NotEct)), 1);
        let bad = PrioConfig { bands: vec![fifo()], classifier: Classifier::BytesSent { thresholds_bytes: vec![1] } };
        assert!(bad.validate().unwrap_err().contains("need 2 bands"));
    }
}
