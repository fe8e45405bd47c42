//! FQ-PIE — flow-queue PIE (RFC 8033 per flow, RFC 8290's scheduler), as Linux
//! `net/sched/sch_fq_pie.c`: FQ-CoDel's hashing and DRR over new/old flow lists
//! ([`super::fq`]), with a PIE controller ([`super::pie`]) per flow deciding drops
//! at enqueue from that flow's own backlog and delay. Every `tupdate` all flows'
//! probabilities are updated (lazily here; flows whose update would change nothing
//! are skipped). With `ecn`, ECN-capable packets are marked while the flow's
//! probability is at most `ecn_prob` percent.
//!
//! Defaults are `tc qdisc add ... fq_pie`'s: limit 10240 packets, flows 1024, target
//! 15 ms, tupdate 15 ms, alpha 2/16, beta 20/16, quantum 1514 (1500 here),
//! memory_limit 32 MiB, ecn_prob 10 %, ecn off, bytemode off, timestamps.

use serde::{Deserialize, Serialize};

use super::fq::{activate, drr_dequeue, DrrLists, FlowHash, FqFlow};
use super::pie::{PieParams, PieVars};
use super::{signal_congestion, AqmState, DropReason, Qdisc, QdiscCtx, Queued, Report};
use crate::net::Packet;
use crate::sim::SimRng;
use crate::units::Time;

fn default_limit() -> u64 {
    super::fq_codel::DEFAULT_LIMIT_PKTS
}
fn default_flows() -> u32 {
    super::fq_codel::DEFAULT_FLOWS
}
fn default_quantum() -> u64 {
    super::fq_codel::DEFAULT_QUANTUM_BYTES
}
fn default_memory() -> u64 {
    super::fq_codel::DEFAULT_MEMORY_LIMIT_BYTES
}
fn default_target() -> Time {
    super::pie::DEFAULT_TARGET_NS
}
fn default_tupdate() -> Time {
    super::pie::DEFAULT_TUPDATE_NS
}
fn default_alpha() -> u32 {
    super::pie::DEFAULT_ALPHA
}
fn default_beta() -> u32 {
    super::pie::DEFAULT_BETA
}
fn default_ecn_prob() -> u32 {
    10
}
fn default_mtu() -> u64 {
    super::codel::DEFAULT_MTU_BYTES
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FqPieConfig {
    #[serde(default = "default_limit")]
    pub limit_packets: u64,
    #[serde(default = "default_flows")]
    pub flows: u32,
    #[serde(default = "default_quantum")]
    pub quantum_bytes: u64,
    #[serde(default = "default_memory")]
    pub memory_limit_bytes: u64,
    #[serde(default = "default_target")]
    pub target_ns: Time,
    #[serde(default = "default_tupdate")]
    pub tupdate_ns: Time,
    #[serde(default = "default_alpha")]
    pub alpha: u32,
    #[serde(default = "default_beta")]
    pub beta: u32,
    #[serde(default)]
    pub ecn: bool,
    /// Percent; mark (rather than drop) while the flow's probability is at most this.
    #[serde(default = "default_ecn_prob")]
    pub ecn_prob: u32,
    #[serde(default)]
    pub bytemode: bool,
    #[serde(default)]
    pub dq_rate_estimator: bool,
    #[serde(default = "default_mtu")]
    pub mtu_bytes: u64,
}

impl FqPieConfig {
    pub fn validate(&self) -> Result<(), String> {
        if self.limit_packets == 0 || self.flows == 0 || self.quantum_bytes == 0 || self.target_ns == 0 || self.tupdate_ns == 0 {
            return Err("fq_pie: limit, flows, quantum, target and tupdate must be > 0".into());
        }
        if self.alpha > 32 || self.beta > 32 || self.ecn_prob > 100 {
            return Err("fq_pie: alpha and beta must be in 0..=32, ecn_prob in 0..=100".into());
        }
        Ok(())
    }
}

#[derive(Debug)]
pub struct FqPie {
    limit: u64,
    memory_limit: u64,
    quantum: i64,
    params: PieParams,
    hash: FlowHash,
    flows: Vec<FqFlow<PieVars>>,
    lists: DrrLists,
    backlog_bytes: u64,
    backlog_pkts: u64,
    next_update: Time,
}

impl FqPie {
    pub fn new(cfg: &FqPieConfig, rng: &mut SimRng) -> Self {
        let params = PieParams {
            target: cfg.target_ns,
            tupdate: cfg.tupdate_ns,
            alpha: cfg.alpha as f64 / 16.0,
            beta: cfg.beta as f64 / 16.0,
            ecn: cfg.ecn,
            bytemode: cfg.bytemode,
            dq_rate_estimator: cfg.dq_rate_estimator,
            mtu: cfg.mtu_bytes,
            ecn_prob: cfg.ecn_prob as f64 / 100.0,
        };
        Self {
            limit: cfg.limit_packets,
            memory_limit: cfg.memory_limit_bytes,
            quantum: cfg.quantum_bytes as i64,
            params,
            hash: FlowHash::new(cfg.flows, rng),
            flows: (0..cfg.flows).map(|_| FqFlow::default()).collect(),
            lists: DrrLists::default(),
            backlog_bytes: 0,
            backlog_pkts: 0,
            next_update: cfg.tupdate_ns,
        }
    }

    fn catch_up(&mut self, now: Time) {
        while now >= self.next_update {
            let mut any = false;
            for f in self.flows.iter_mut() {
                if f.q.is_empty() && f.aqm.is_quiescent() {
                    continue;
                }
                any = true;
                f.aqm.update_probability(&self.params, f.q.bytes());
            }
            self.next_update += self.params.tupdate;
            if !any {
                let skipped = now.saturating_sub(self.next_update) / self.params.tupdate;
                self.next_update += skipped * self.params.tupdate;
            }
        }
    }

    pub fn flow_prob(&self, p: &Packet) -> f64 {
        self.flows[self.hash.bucket(p)].aqm.prob
    }
}

impl Qdisc for FqPie {
    fn enqueue(&mut self, mut p: Packet, ctx: &mut QdiscCtx, report: &mut Report) -> bool {
        self.catch_up(ctx.now);
        let idx = self.hash.bucket(&p);
        if self.backlog_pkts >= self.limit || self.backlog_bytes + p.wire_bytes as u64 > self.memory_limit {
            self.flows[idx].aqm.accu_prob = 0.0;
            report.drop(p, DropReason::TailDrop);
            return false;
        }
        let params = self.params;
        let flow = &mut self.flows[idx];
        let admit = !flow.aqm.drop_early(&params, flow.q.bytes(), p.wire_bytes as u64, ctx.rng)
            || (flow.aqm.prob <= params.ecn_prob && signal_congestion(&mut p, params.ecn, report));
        if !admit {
            flow.aqm.accu_prob = 0.0;
            report.drop(p, DropReason::AqmDrop);
            return false;
        }
        self.backlog_bytes += p.wire_bytes as u64;
        self.backlog_pkts += 1;
        flow.q.push(p, ctx.now);
        activate(&mut self.flows, &mut self.lists, idx, self.quantum);
        true
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx, _report: &mut Report) -> Option<Queued> {
        self.catch_up(ctx.now);
        let (params, now) = (&self.params, ctx.now);
        let (total_bytes, total_pkts) = (&mut self.backlog_bytes, &mut self.backlog_pkts);
        drr_dequeue(&mut self.flows, &mut self.lists, self.quantum, |flow| {
            let q = flow.q.pop()?;
            *total_bytes -= q.packet.wire_bytes as u64;
            *total_pkts -= 1;
            flow.aqm.on_dequeue(params, &q, flow.q.bytes(), now);
            Some(q)
        })
    }

    fn backlog_bytes(&self) -> u64 {
        self.backlog_bytes
    }
    fn backlog_pkts(&self) -> u64 {
        self.backlog_pkts
    }
    fn aqm_state(&self) -> AqmState {
        let prob = self.flows.iter().map(|f| f.aqm.prob).fold(0.0, f64::max);
        AqmState { prob, ..AqmState::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{drain_at_rate, pkt, rng};
    use super::*;
    use crate::net::Ecn;
    use crate::units::{ms, NS_PER_SEC};

    fn cfg() -> FqPieConfig {
        serde_json::from_str("{}").unwrap()
    }

    #[test]
    fn defaults_are_tc_defaults() {
        let c = cfg();
        assert_eq!((c.limit_packets, c.flows, c.target_ns, c.tupdate_ns, c.alpha, c.beta, c.ecn_prob), (10240, 1024, ms(15), ms(15), 2, 20, 10));
        assert!(!c.ecn);
    }

    #[test]
    fn drops_only_the_overloading_flow() {
        // Flow 0 unresponsive at 3x the link; flow 1 light (1 packet / 10 ms).
        let mut arrivals: Vec<(Time, Packet)> = (0..15000u64).map(|i| (i * 333_333, pkt(0, i, 1500, Ecn::NotEct))).collect();
        arrivals.extend((0..500u64).map(|i| (i * 10_000_000 + 11, pkt(1, i, 1500, Ecn::NotEct))));
        arrivals.sort_by_key(|a| a.0);
        let mut q = FqPie::new(&cfg(), &mut rng());
        let (out, report) = drain_at_rate(&mut q, 12_000_000, &arrivals, 5 * NS_PER_SEC);
        assert!(report.drops.iter().any(|(p, _)| p.flow == 0));
        assert!(report.drops.iter().all(|(p, _)| p.flow == 0), "the light flow loses nothing");
        let light_max = out.iter().filter(|(_, _, p)| p.flow == 1).map(|x| x.1).max().unwrap();
        assert!(light_max < ms(5), "{light_max}");
        // The unresponsive flow lost about two thirds of its packets to PIE.
        let aqm = report.drops.iter().filter(|(p, r)| p.flow == 0 && *r == DropReason::AqmDrop).count();
        assert!(aqm > 8000, "{aqm}");
        assert!(q.flow_prob(&pkt(1, 0, 1500, Ecn::NotEct)) < 0.01);
    }
}
