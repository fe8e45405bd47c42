//! FQ-CoDel — Flow Queue CoDel (RFC 8290), as Linux `net/sched/sch_fq_codel.c`:
//!
//! * Packets are hashed (seeded, per queue) into `flows` buckets, each a FIFO with
//!   its own CoDel state ([`super::codel`]); CoDel's "more than one MTU queued"
//!   test uses the whole qdisc's backlog, as Linux.
//! * Deficit round robin with `quantum` bytes over two lists: a flow that becomes
//!   active joins the *new* list (served first, so sparse flows see little delay);
//!   a flow that uses up its deficit moves to the *old* list; an emptied new flow
//!   goes to the old list once before leaving (prevents starvation, RFC 8290 §4.2).
//! * Over `limit` packets or `memory_limit` bytes, drop from the head of the flow
//!   with the largest backlog until half of its backlog (at most 64 packets) is
//!   gone (`fq_codel_drop`).
//!
//! Defaults are `tc qdisc add ... fq_codel`'s: limit 10240 packets, flows 1024,
//! quantum 1514 (here 1500: packets carry no link-layer header), target 5 ms,
//! interval 100 ms, memory_limit 32 MiB, ecn ON, no ce_threshold, drop_batch 64.
//!
//! Deviation: the memory limit counts wire bytes (Linux counts skb truesize, about
//! 1.5× larger for full-sized packets).

use serde::{Deserialize, Serialize};

use super::codel::{codel_dequeue, CodelParams, CodelSource, CodelVars};
use super::fq::{activate, drr_dequeue, DrrLists, FlowHash, FqFlow};
use super::{AqmState, DropReason, Qdisc, QdiscCtx, Queued, Report};
use crate::net::Packet;
use crate::sim::SimRng;
use crate::units::Time;

pub const DEFAULT_LIMIT_PKTS: u64 = 10240;
pub const DEFAULT_FLOWS: u32 = 1024;
pub const DEFAULT_QUANTUM_BYTES: u64 = 1500;
pub const DEFAULT_MEMORY_LIMIT_BYTES: u64 = 32 << 20;
pub const DROP_BATCH: usize = 64;

fn default_limit() -> u64 {
    DEFAULT_LIMIT_PKTS
}
fn default_flows() -> u32 {
    DEFAULT_FLOWS
}
fn default_quantum() -> u64 {
    DEFAULT_QUANTUM_BYTES
}
fn default_memory() -> u64 {
    DEFAULT_MEMORY_LIMIT_BYTES
}
fn default_target() -> Time {
    super::codel::DEFAULT_TARGET_NS
}
fn default_interval() -> Time {
    super::codel::DEFAULT_INTERVAL_NS
}
fn default_true() -> bool {
    true
}
fn default_mtu() -> u64 {
    super::codel::DEFAULT_MTU_BYTES
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FqCodelConfig {
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
    #[serde(default = "default_interval")]
    pub interval_ns: Time,
    #[serde(default = "default_true")]
    pub ecn: bool,
    #[serde(default)]
    pub ce_threshold_ns: Option<Time>,
    #[serde(default = "default_mtu")]
    pub mtu_bytes: u64,
}

impl FqCodelConfig {
    pub fn validate(&self) -> Result<(), String> {
        if self.limit_packets == 0 || self.flows == 0 || self.quantum_bytes == 0 || self.target_ns == 0 || self.interval_ns == 0 {
            return Err("fq_codel: limit, flows, quantum, target and interval must be > 0".into());
        }
        if self.flows > 65536 {
            return Err(format!("fq_codel: flows {} is above Linux's maximum of 65536", self.flows));
        }
        Ok(())
    }
}

#[derive(Debug)]
pub struct FqCodel {
    limit: u64,
    memory_limit: u64,
    quantum: i64,
    params: CodelParams,
    hash: FlowHash,
    flows: Vec<FqFlow<CodelVars>>,
    lists: DrrLists,
    backlog_bytes: u64,
    backlog_pkts: u64,
}

/// CoDel's view of one flow: pops from the flow, backlog of the whole qdisc.
struct FlowSource<'a> {
    flow: &'a mut crate::qdisc::TimedFifo,
    total_bytes: &'a mut u64,
    total_pkts: &'a mut u64,
}

impl CodelSource for FlowSource<'_> {
    fn pop(&mut self) -> Option<Queued> {
        let q = self.flow.pop()?;
        *self.total_bytes -= q.packet.wire_bytes as u64;
        *self.total_pkts -= 1;
        Some(q)
    }
    fn backlog(&self) -> u64 {
        *self.total_bytes
    }
}

impl FqCodel {
    pub fn new(cfg: &FqCodelConfig, rng: &mut SimRng) -> Self {
        let flows = (0..cfg.flows).map(|_| FqFlow { q: Default::default(), deficit: 0, list: None, aqm: CodelVars::default() }).collect();
        Self {
            limit: cfg.limit_packets,
            memory_limit: cfg.memory_limit_bytes,
            quantum: cfg.quantum_bytes as i64,
            params: CodelParams {
                target: cfg.target_ns,
                interval: cfg.interval_ns,
                mtu: cfg.mtu_bytes,
                ecn: cfg.ecn,
                ce_threshold: cfg.ce_threshold_ns,
            },
            hash: FlowHash::new(cfg.flows, rng),
            flows,
            lists: DrrLists::default(),
            backlog_bytes: 0,
            backlog_pkts: 0,
        }
    }

    /// `fq_codel_drop`: drop from the head of the fattest flow until half its backlog
    /// (at most `DROP_BATCH` packets) is gone. Returns the flow's index.
    fn drop_from_fattest(&mut self, report: &mut Report) -> usize {
        let (idx, _) = self.flows.iter().enumerate().fold((0, 0), |best, (i, f)| if f.q.bytes() > best.1 { (i, f.q.bytes()) } else { best });
        let threshold = self.flows[idx].q.bytes() / 2;
        let mut dropped = 0;
        let mut n = 0;
        while let Some(q) = self.flows[idx].q.pop() {
            dropped += q.packet.wire_bytes as u64;
            self.backlog_bytes -= q.packet.wire_bytes as u64;
            self.backlog_pkts -= 1;
            report.drop(q.packet, DropReason::TailDrop);
            n += 1;
            if n >= DROP_BATCH || dropped >= threshold {
                break;
            }
        }
        idx
    }
}

impl Qdisc for FqCodel {
    fn enqueue(&mut self, p: Packet, ctx: &mut QdiscCtx, report: &mut Report) -> bool {
        let idx = self.hash.bucket(&p);
        self.backlog_bytes += p.wire_bytes as u64;
        self.backlog_pkts += 1;
        self.flows[idx].q.push(p, ctx.now);
        activate(&mut self.flows, &mut self.lists, idx, self.quantum);
        if self.backlog_pkts > self.limit || self.backlog_bytes > self.memory_limit {
            self.drop_from_fattest(report);
        }
        // The arriving packet counts as enqueued even if the batch drop took it.
        true
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx, report: &mut Report) -> Option<Queued> {
        let (params, now) = (&self.params, ctx.now);
        let (total_bytes, total_pkts) = (&mut self.backlog_bytes, &mut self.backlog_pkts);
        drr_dequeue(&mut self.flows, &mut self.lists, self.quantum, |flow| {
            let mut src = FlowSource { flow: &mut flow.q, total_bytes: &mut *total_bytes, total_pkts: &mut *total_pkts };
            codel_dequeue(&mut src, params, &mut flow.aqm, now, report)
        })
    }

    fn backlog_bytes(&self) -> u64 {
        self.backlog_bytes
    }
    fn backlog_pkts(&self) -> u64 {
        self.backlog_pkts
    }
    fn aqm_state(&self) -> AqmState {
        let dropping = self.lists.new.iter().chain(&self.lists.old).filter(|&&i| self.flows[i as usize].aqm.dropping).count();
        AqmState { dropping: dropping as u64, ..AqmState::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{drain_at_rate, pkt, rng};
    use super::super::Fifo;
    use super::*;
    use crate::net::Ecn;
    use crate::units::{ms, NS_PER_SEC};

    fn cfg() -> FqCodelConfig {
        FqCodelConfig {
            limit_packets: DEFAULT_LIMIT_PKTS,
            flows: DEFAULT_FLOWS,
            quantum_bytes: DEFAULT_QUANTUM_BYTES,
            memory_limit_bytes: DEFAULT_MEMORY_LIMIT_BYTES,
            target_ns: ms(5),
            interval_ns: ms(100),
            ecn: false,
            ce_threshold_ns: None,
            mtu_bytes: 1500,
        }
    }

    #[test]
    fn sparse_flow_keeps_low_delay_beside_a_bulk_flow() {
        // Bulk flow 0 at 2x a 12 Mbit/s link (unresponsive: its queue stays long);
        // sparse flow 1 sends one small packet every 50 ms.
        let mut arrivals: Vec<(Time, Packet)> = (0..6000u64).map(|i| (i * 500_000, pkt(0, i, 1500, Ecn::NotEct))).collect();
        arrivals.extend((0..60u64).map(|i| (i * 50_000_000 + 123, pkt(1, i, 100, Ecn::NotEct))));
        arrivals.sort_by_key(|a| a.0);
        let mut fq = FqCodel::new(&cfg(), &mut rng());
        assert_ne!(fq.hash.bucket(&arrivals[0].1), fq.hash.bucket(&pkt(1, 0, 100, Ecn::NotEct)), "test flows collide");
        let (out, _) = drain_at_rate(&mut fq, 12_000_000, &arrivals, 3 * NS_PER_SEC);
        let sparse: Vec<Time> = out.iter().filter(|(_, _, p)| p.flow == 1).map(|x| x.1).collect();
        let bulk_late: Vec<Time> = out.iter().filter(|(t, _, p)| p.flow == 0 && *t > NS_PER_SEC).map(|x| x.1).collect();
        let max_sparse = *sparse.iter().max().unwrap();
        let mean_bulk = bulk_late.iter().sum::<u64>() / bulk_late.len() as u64;
        assert!(max_sparse < ms(2), "sparse flow delay {max_sparse}");
        assert!(mean_bulk > ms(4), "bulk flow delay {mean_bulk}");
        // A FIFO makes the sparse flow wait behind the bulk queue.
        let mut fifo = Fifo::packets(1000);
        let (out, _) = drain_at_rate(&mut fifo, 12_000_000, &arrivals, 3 * NS_PER_SEC);
        let fifo_sparse = out.iter().filter(|(_, _, p)| p.flow == 1).map(|x| x.1).max().unwrap();
        assert!(fifo_sparse > ms(100), "{fifo_sparse}");
    }

    #[test]
    fn two_backlogged_flows_share_the_link_equally() {
        // Flow 0 offers 3x the link, flow 1 offers 1x: DRR gives each half.
        let mut arrivals: Vec<(Time, Packet)> = (0..9000u64).map(|i| (i * 333_333, pkt(0, i, 1500, Ecn::NotEct))).collect();
        arrivals.extend((0..3000u64).map(|i| (i * 1_000_000 + 7, pkt(1, i, 1500, Ecn::NotEct))));
        arrivals.sort_by_key(|a| a.0);
        let mut fq = FqCodel::new(&cfg(), &mut rng());
        let (out, _) = drain_at_rate(&mut fq, 12_000_000, &arrivals, 3 * NS_PER_SEC);
        let late = out.iter().filter(|(t, _, _)| *t > NS_PER_SEC);
        let (a, b) = late.fold((0, 0), |(a, b), (_, _, p)| if p.flow == 0 { (a + 1, b) } else { (a, b + 1) });
        let share = a as f64 / (a + b) as f64;
        assert!((share - 0.5).abs() < 0.03, "share {share}");
    }

    #[test]
    fn overflow_drops_from_the_fattest_flow() {
        let mut fq = FqCodel::new(&FqCodelConfig { limit_packets: 100, ..cfg() }, &mut rng());
        let mut r = rng();
        let mut rep = Report::default();
        let mut ctx = QdiscCtx { now: 0, rng: &mut r };
        for i in 0..90 {
            fq.enqueue(pkt(0, i, 1500, Ecn::NotEct), &mut ctx, &mut rep);
        }
        for i in 0..11 {
            fq.enqueue(pkt(1, i, 1500, Ecn::NotEct), &mut ctx, &mut rep);
        }
        assert!(!rep.drops.is_empty());
        assert!(rep.drops.iter().all(|(p, _)| p.flow == 0), "drops hit the fat flow only");
        assert_eq!(rep.drops.len(), 45, "half of the fat flow's 90 packets");
        assert_eq!(fq.backlog_pkts(), 101 - 45);
    }

    #[test]
    fn with_ecn_marks_instead_of_dropping() {
        let arrivals: Vec<(Time, Packet)> = (0..4000u64).map(|i| (i * 500_000, pkt(0, i, 1500, Ecn::Ect))).collect();
        let mut fq = FqCodel::new(&FqCodelConfig { ecn: true, ..cfg() }, &mut rng());
        let (_, report) = drain_at_rate(&mut fq, 12_000_000, &arrivals, 2 * NS_PER_SEC);
        assert!(report.drops.iter().all(|(_, r)| *r != DropReason::AqmDrop));
        assert!(!report.marks.is_empty());
    }
}
