//! TBF — token bucket filter, as Linux `net/sched/sch_tbf.c` (`tc qdisc add ... tbf
//! rate R burst B limit L [peakrate P mtu M]`): a shaper in front of a child qdisc
//! (a bfifo of `limit` bytes unless another child, e.g. an AQM, is given).
//!
//! Tokens are kept as transmission time at `rate`: the bucket holds at most
//! `burst` bytes' worth and starts full. The head packet (taken from the child, as
//! Linux's `qdisc_peek_dequeued`) leaves when the bucket — and, with `peakrate`,
//! the one-packet peak bucket of `mtu` bytes — holds its length; otherwise the queue
//! waits for the tokens (Linux's watchdog; the link polls again at [`Qdisc::next_ready`]).
//! A full burst thus leaves at line rate, after which the output holds `rate`.
//! Packets larger than the bucket can never pass and are dropped on arrival.

use serde::{Deserialize, Serialize};

use super::{build, AqmState, DropReason, Qdisc, QdiscCtx, Queued, Report};
use crate::config::QdiscConfig;
use crate::net::Packet;
use crate::sim::SimRng;
use crate::units::{Bps, Time, NS_PER_SEC};

fn default_mtu() -> u64 {
    super::codel::DEFAULT_MTU_BYTES
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TbfConfig {
    pub rate_bps: Bps,
    pub burst_bytes: u64,
    /// Limit of the default bfifo child (bytes); ignored when `child` is given.
    #[serde(default)]
    pub limit_bytes: Option<u64>,
    #[serde(default)]
    pub child: Option<Box<QdiscConfig>>,
    #[serde(default)]
    pub peakrate_bps: Option<Bps>,
    /// Size of the peak-rate bucket (tc `mtu`/`minburst`).
    #[serde(default = "default_mtu")]
    pub mtu_bytes: u64,
}

impl TbfConfig {
    pub fn validate(&self) -> Result<(), String> {
        if self.rate_bps == 0 || self.burst_bytes == 0 {
            return Err("tbf: rate and burst must be > 0".into());
        }
        match (&self.child, self.limit_bytes) {
            (Some(c), _) => c.validate()?,
            (None, Some(l)) if l > 0 => {}
            (None, _) => return Err("tbf: give limit_bytes (the bfifo child's limit) or a child qdisc".into()),
        }
        if let Some(p) = self.peakrate_bps {
            if p <= self.rate_bps {
                return Err(format!("tbf: peakrate ({p} bit/s) must exceed rate ({} bit/s)", self.rate_bps));
            }
        }
        Ok(())
    }
}

/// Transmission time of `bytes` at `rate` (Linux `psched_l2t_ns`).
fn l2t(bytes: u64, rate: Bps) -> i64 {
    (bytes as u128 * 8 * NS_PER_SEC as u128 / rate as u128) as i64
}

#[derive(Debug)]
pub struct Tbf {
    rate: Bps,
    peak: Option<Bps>,
    /// Bucket depths as time (`buffer`, `mtu` in Linux).
    buffer: i64,
    mtu: i64,
    max_size: u64,
    tokens: i64,
    ptokens: i64,
    t_c: Time,
    child: Box<dyn Qdisc>,
    peeked: Option<Queued>,
    watchdog: Option<Time>,
}

impl Tbf {
    pub fn new(cfg: &TbfConfig, rng: &mut SimRng) -> Self {
        let child = match &cfg.child {
            Some(c) => build(c, rng),
            None => Box::new(super::Fifo::bytes(cfg.limit_bytes.unwrap_or(cfg.burst_bytes))),
        };
        let buffer = l2t(cfg.burst_bytes, cfg.rate_bps);
        let mtu = cfg.peakrate_bps.map_or(0, |p| l2t(cfg.mtu_bytes, p));
        let max_size = if cfg.peakrate_bps.is_some() { cfg.burst_bytes.min(cfg.mtu_bytes) } else { cfg.burst_bytes };
        Self { rate: cfg.rate_bps, peak: cfg.peakrate_bps, buffer, mtu, max_size, tokens: buffer, ptokens: mtu, t_c: 0, child, peeked: None, watchdog: None }
    }
}

impl Qdisc for Tbf {
    fn enqueue(&mut self, p: Packet, ctx: &mut QdiscCtx, report: &mut Report) -> bool {
        if p.wire_bytes as u64 > self.max_size {
            report.drop(p, DropReason::TailDrop);
            return false;
        }
        self.child.enqueue(p, ctx, report)
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx, report: &mut Report) -> Option<Queued> {
        if self.peeked.is_none() {
            self.peeked = self.child.dequeue(ctx, report);
        }
        let head = self.peeked.as_ref()?;
        let len = head.packet.wire_bytes as u64;
        let now = ctx.now;
        let mut toks = ((now - self.t_c) as i64).min(self.buffer);
        let mut ptoks = 0;
        if let Some(peak) = self.peak {
            ptoks = (toks + self.ptokens).min(self.mtu) - l2t(len, peak);
        }
        toks = (toks + self.tokens).min(self.buffer) - l2t(len, self.rate);
        if toks >= 0 && ptoks >= 0 {
            self.t_c = now;
            self.tokens = toks;
            self.ptokens = ptoks;
            self.watchdog = None;
            return self.peeked.take();
        }
        self.watchdog = Some(now + (-toks).max(-ptoks) as Time);
        None
    }

    fn backlog_bytes(&self) -> u64 {
        self.child.backlog_bytes() + self.peeked.map_or(0, |q| q.packet.wire_bytes as u64)
    }
    fn backlog_pkts(&self) -> u64 {
        self.child.backlog_pkts() + self.peeked.is_some() as u64
    }
    fn aqm_state(&self) -> AqmState {
        self.child.aqm_state()
    }
    fn next_ready(&self, now: Time) -> Option<Time> {
        match self.watchdog {
            Some(t) if self.backlog_pkts() > 0 => Some(t.max(now)),
            _ => self.child.next_ready(now),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{pkt, rng};
    use super::*;
    use crate::net::Ecn;

    /// Dequeue as a 1 Gbit/s link would, honouring the watchdog.
    fn run(cfg: &TbfConfig, n: u64) -> Vec<Time> {
        let mut q = Tbf::new(cfg, &mut rng());
        let mut r = rng();
        let mut rep = Report::default();
        let mut ctx = QdiscCtx { now: 0, rng: &mut r };
        for i in 0..n {
            q.enqueue(pkt(0, i, 1500, Ecn::NotEct), &mut ctx, &mut rep);
        }
        assert!(rep.drops.is_empty());
        let line_ns = 12_000; // 1500 B at 1 Gbit/s
        let mut t = 0;
        let mut out = Vec::new();
        while out.len() < n as usize {
            let mut ctx = QdiscCtx { now: t, rng: &mut r };
            match q.dequeue(&mut ctx, &mut rep) {
                Some(_) => {
                    out.push(t);
                    t += line_ns;
                }
                None => t = q.next_ready(t).expect("backlogged tbf must say when it can send"),
            }
        }
        out
    }

    #[test]
    fn passes_its_burst_at_line_rate_then_holds_its_rate() {
        let cfg = TbfConfig { rate_bps: 100_000_000, burst_bytes: 15_000, limit_bytes: Some(1_000_000), child: None, peakrate_bps: None, mtu_bytes: 1500 };
        let times = run(&cfg, 200);
        // The first 10 packets (the 15 kB burst) leave back to back at 1 Gbit/s.
        for w in times[..10].windows(2) {
            assert_eq!(w[1] - w[0], 12_000);
        }
        // Afterwards one packet per 120 µs (1500 B at 100 Mbit/s).
        let tail = &times[20..];
        let rate = (tail.len() - 1) as f64 * 1500.0 * 8.0 / ((tail[tail.len() - 1] - tail[0]) as f64 / 1e9);
        assert!((rate - 100e6).abs() < 1e6, "rate {rate}");
    }

    #[test]
    fn peakrate_spaces_the_burst() {
        let cfg = TbfConfig { rate_bps: 100_000_000, burst_bytes: 15_000, limit_bytes: Some(1_000_000), child: None, peakrate_bps: Some(500_000_000), mtu_bytes: 1500 };
        let times = run(&cfg, 10);
        for w in times.windows(2) {
            assert!(w[1] - w[0] >= 24_000, "peak 500 Mbit/s: {:?}", w);
        }
    }

    #[test]
    fn needs_a_limit_or_a_child() {
        let cfg = TbfConfig { rate_bps: 1, burst_bytes: 1, limit_bytes: None, child: None, peakrate_bps: None, mtu_bytes: 1500 };
        assert!(cfg.validate().unwrap_err().contains("limit_bytes"));
    }
}
