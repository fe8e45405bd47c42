//! HTB — hierarchical token bucket, as Linux `net/sched/sch_htb.c` (`tc qdisc add
//! ... htb` + `tc class add ... htb rate R ceil C burst B cburst CB prio P quantum Q`),
//! for the flat hierarchy the studies use to rate-limit flow groups: one root class of
//! rate `rate_bps` and leaf classes under it, each with its own child qdisc. A
//! classifier (the one of [`super::prio`]) puts each packet in a leaf.
//!
//! Each class keeps two token buckets as transmission time: `tokens` at its `rate`
//! (depth `burst`) and `ctokens` at its `ceil` (depth `cburst`). With Linux's default
//! (`htb_hysteresis = 0`) a class is
//!
//! * CAN_SEND while `tokens >= 0` (and `ctokens >= 0`): it sends on its own rate;
//! * MAY_BORROW while `tokens < 0 <= ctokens`: it may send what the root lends;
//! * CANT_SEND while `ctokens < 0`.
//!
//! Dequeue (`htb_dequeue`) serves level 0 first — the leaves that CAN_SEND, lowest
//! `prio` first, deficit round robin by `quantum` within a priority — then level 1:
//! the leaves that MAY_BORROW while the root CAN_SEND, in the same order. Sending
//! charges the packet (`htb_charge_class`) to the leaf's `ctokens` always and to its
//! `tokens` only when it sent on its own rate, and to the root's buckets. When nothing
//! may send, the queue waits for the earliest class to change mode (the watchdog).
//!
//! Defaults as `tc`: `ceil = rate`; `burst = rate / hz + mtu` bytes with `mtu = 1600`
//! (and `hz = 10⁹` on a high-resolution-timer kernel, `/proc/net/psched`), likewise
//! `cburst` from `ceil`; `quantum = rate / r2q` bytes with `r2q = 10`, clamped to
//! [1000, 200000] as the kernel does. Deviation: one level of classes (no inner
//! classes between the root and the leaves).

use serde::{Deserialize, Serialize};

use super::prio::Classifier;
use super::{build, AqmState, Qdisc, QdiscCtx, Queued, Report};
use crate::config::QdiscConfig;
use crate::net::Packet;
use crate::sim::SimRng;
use crate::units::{Bps, Time, NS_PER_SEC};

/// `tc`'s default `mtu` for HTB bursts (q_htb.c).
pub const TC_HTB_MTU_BYTES: u64 = 1600;
/// Clock rate `tc` divides by on a kernel with high-resolution timers.
pub const TC_HZ: u64 = 1_000_000_000;
/// Default rate-to-quantum divisor (`r2q`).
pub const R2Q: u64 = 10;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HtbClassConfig {
    pub rate_bps: Bps,
    /// Most it may send by borrowing (default: `rate_bps`, no borrowing).
    #[serde(default)]
    pub ceil_bps: Option<Bps>,
    /// Bucket depth at `rate` (default as tc: rate / hz + 1600 bytes).
    #[serde(default)]
    pub burst_bytes: Option<u64>,
    /// Bucket depth at `ceil` (default as tc: ceil / hz + 1600 bytes).
    #[serde(default)]
    pub cburst_bytes: Option<u64>,
    /// Lower is served first (tc 0..7).
    #[serde(default)]
    pub prio: u8,
    /// DRR quantum among classes of one priority (default rate / r2q, in [1000, 200000]).
    #[serde(default)]
    pub quantum_bytes: Option<u64>,
    /// The class's queue.
    pub child: QdiscConfig,
}

impl HtbClassConfig {
    fn ceil(&self) -> Bps {
        self.ceil_bps.unwrap_or(self.rate_bps)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HtbConfig {
    /// Rate of the root class: what borrowing classes share.
    pub rate_bps: Bps,
    /// Root bucket depth (default as tc: rate / hz + 1600 bytes).
    #[serde(default)]
    pub burst_bytes: Option<u64>,
    pub classes: Vec<HtbClassConfig>,
    /// Which class each packet goes to (class numbers as prio's bands).
    pub classifier: Classifier,
}

/// `tc`'s default bucket depth for `rate`.
fn default_burst(rate: Bps) -> u64 {
    rate / 8 / TC_HZ + TC_HTB_MTU_BYTES
}

impl HtbConfig {
    pub fn validate(&self) -> Result<(), String> {
        if self.rate_bps == 0 {
            return Err("htb: rate must be > 0".into());
        }
        if self.classes.is_empty() || self.classes.len() > 64 {
            return Err(format!("htb: {} classes; give 1 to 64", self.classes.len()));
        }
        for (i, c) in self.classes.iter().enumerate() {
            if c.rate_bps == 0 || c.ceil() < c.rate_bps {
                return Err(format!("htb: classes[{i}]: rate must be > 0 and ceil >= rate"));
            }
            if c.prio > 7 {
                return Err(format!("htb: classes[{i}].prio: {} is not in 0..7", c.prio));
            }
            if c.burst_bytes == Some(0) || c.cburst_bytes == Some(0) || c.quantum_bytes == Some(0) {
                return Err(format!("htb: classes[{i}]: burst, cburst and quantum must be > 0"));
            }
            c.child.validate().map_err(|e| format!("htb: classes[{i}].child: {e}"))?;
        }
        self.classifier.validate(self.classes.len(), "htb", "class")
    }
}

/// Transmission time of `bytes` at `rate` (Linux `psched_l2t_ns`).
fn l2t(bytes: u64, rate: Bps) -> i64 {
    (bytes as u128 * 8 * NS_PER_SEC as u128 / rate as u128) as i64
}

/// A class's two buckets (the root's `ceil` is its rate).
#[derive(Debug)]
struct Buckets {
    rate: Bps,
    ceil: Bps,
    buffer: i64,
    cbuffer: i64,
    tokens: i64,
    ctokens: i64,
    t_c: Time,
}

/// Linux `mbuffer`: the most idle time a bucket remembers (60 s).
const MBUFFER_NS: i64 = 60 * NS_PER_SEC as i64;

impl Buckets {
    fn new(rate: Bps, ceil: Bps, burst: u64, cburst: u64) -> Self {
        let (buffer, cbuffer) = (l2t(burst, rate), l2t(cburst, ceil));
        Self { rate, ceil, buffer, cbuffer, tokens: buffer, ctokens: cbuffer, t_c: 0 }
    }

    fn diff(&self, now: Time) -> i64 {
        ((now - self.t_c) as i64).min(MBUFFER_NS)
    }

    /// (tokens, ctokens) as they stand at `now`, before any charge.
    fn at(&self, now: Time) -> (i64, i64) {
        let d = self.diff(now);
        ((self.tokens + d).min(self.buffer), (self.ctokens + d).min(self.cbuffer))
    }

    /// `htb_charge_class` for one class: `own` = the packet went out on this class's rate.
    fn charge(&mut self, now: Time, bytes: u64, own: bool) {
        let d = self.diff(now);
        if own {
            self.tokens = ((self.tokens + d).min(self.buffer) - l2t(bytes, self.rate)).max(1 - MBUFFER_NS);
        } else {
            self.tokens = (self.tokens + d).min(self.buffer);
        }
        self.ctokens = ((self.ctokens + d).min(self.cbuffer) - l2t(bytes, self.ceil)).max(1 - MBUFFER_NS);
        self.t_c = now;
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    CanSend,
    MayBorrow,
    CantSend,
}

#[derive(Debug)]
struct Leaf {
    buckets: Buckets,
    prio: u8,
    quantum: i64,
    /// DRR deficit at each level (own rate, borrowed).
    deficit: [i64; 2],
    child: Box<dyn Qdisc>,
}

impl Leaf {
    /// `htb_class_mode` with hysteresis off, and the time until the mode can improve.
    fn mode(&self, now: Time) -> (Mode, i64) {
        let (toks, ctoks) = self.buckets.at(now);
        if ctoks < 0 {
            (Mode::CantSend, -ctoks)
        } else if toks >= 0 {
            (Mode::CanSend, 0)
        } else {
            (Mode::MayBorrow, -toks)
        }
    }
}

#[derive(Debug)]
pub struct Htb {
    root: Buckets,
    leaves: Vec<Leaf>,
    classifier: Classifier,
    /// Next leaf to try in the DRR of each (level, prio).
    next: [[usize; 8]; 2],
    watchdog: Option<Time>,
}

impl Htb {
    pub fn new(cfg: &HtbConfig, rng: &mut SimRng) -> Self {
        let root_burst = cfg.burst_bytes.unwrap_or_else(|| default_burst(cfg.rate_bps));
        let leaves = cfg
            .classes
            .iter()
            .map(|c| Leaf {
                buckets: Buckets::new(
                    c.rate_bps,
                    c.ceil(),
                    c.burst_bytes.unwrap_or_else(|| default_burst(c.rate_bps)),
                    c.cburst_bytes.unwrap_or_else(|| default_burst(c.ceil())),
                ),
                prio: c.prio,
                quantum: c.quantum_bytes.unwrap_or_else(|| (c.rate_bps / 8 / R2Q).clamp(1000, 200_000)) as i64,
                deficit: [0; 2],
                child: build(&c.child, rng),
            })
            .collect();
        Self {
            root: Buckets::new(cfg.rate_bps, cfg.rate_bps, root_burst, root_burst),
            leaves,
            classifier: cfg.classifier.clone(),
            next: [[0; 8]; 2],
            watchdog: None,
        }
    }

    /// Deficit round robin among the backlogged leaves of `level` and `prio` that
    /// `eligible` admits (`htb_dequeue_tree`): the leaf at the pointer sends; when its
    /// deficit runs out it gets another quantum and the pointer moves on.
    fn drr(&mut self, level: usize, prio: u8, eligible: &[bool], ctx: &mut QdiscCtx, report: &mut Report) -> Option<Queued> {
        let n = self.leaves.len();
        let start = self.next[level][prio as usize];
        for k in 0..n {
            let i = (start + k) % n;
            if !eligible[i] || self.leaves[i].prio != prio {
                continue;
            }
            let leaf = &mut self.leaves[i];
            let Some(q) = leaf.child.dequeue(ctx, report) else { continue };
            let len = q.packet.wire_bytes as u64;
            leaf.deficit[level] -= len as i64;
            self.next[level][prio as usize] = i;
            if leaf.deficit[level] < 0 {
                leaf.deficit[level] += leaf.quantum;
                self.next[level][prio as usize] = (i + 1) % n;
            }
            leaf.buckets.charge(ctx.now, len, level == 0);
            self.root.charge(ctx.now, len, true);
            return Some(q);
        }
        None
    }
}

impl Qdisc for Htb {
    fn enqueue(&mut self, p: Packet, ctx: &mut QdiscCtx, report: &mut Report) -> bool {
        // ACKs (a reverse path's) go to the default class.
        let class = self.classifier.class_of(&p, self.classifier.default_class()).min(self.leaves.len() - 1);
        self.leaves[class].child.enqueue(p, ctx, report)
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx, report: &mut Report) -> Option<Queued> {
        let now = ctx.now;
        // At most 64 classes: the per-call mode table lives on the stack.
        let mut can = [false; 64];
        let mut borrow = [false; 64];
        let mut wait = i64::MAX;
        let (root_toks, _) = self.root.at(now);
        let root_can = root_toks >= 0;
        for (i, leaf) in self.leaves.iter().enumerate() {
            if leaf.child.backlog_pkts() == 0 {
                continue;
            }
            match leaf.mode(now) {
                (Mode::CanSend, _) => can[i] = true,
                (Mode::MayBorrow, t) if root_can => {
                    borrow[i] = true;
                    wait = wait.min(t);
                }
                (Mode::MayBorrow, t) => wait = wait.min(t.min(-root_toks)),
                (Mode::CantSend, t) => wait = wait.min(t),
            }
        }
        let n = self.leaves.len();
        for (level, eligible) in [(0, &can[..n]), (1, &borrow[..n])] {
            for prio in 0..8u8 {
                if !eligible.iter().zip(&self.leaves).any(|(&e, l)| e && l.prio == prio) {
                    continue;
                }
                if let Some(q) = self.drr(level, prio, eligible, ctx, report) {
                    self.watchdog = None;
                    return Some(q);
                }
            }
        }
        self.watchdog = (wait != i64::MAX && self.backlog_pkts() > 0).then(|| now + wait.max(1) as Time);
        None
    }

    fn backlog_bytes(&self) -> u64 {
        self.leaves.iter().map(|l| l.child.backlog_bytes()).sum()
    }
    fn backlog_pkts(&self) -> u64 {
        self.leaves.iter().map(|l| l.child.backlog_pkts()).sum()
    }
    fn aqm_state(&self) -> AqmState {
        self.leaves.first().map(|l| l.child.aqm_state()).unwrap_or_default()
    }
    fn next_ready(&self, now: Time) -> Option<Time> {
        let children = self.leaves.iter().filter_map(|l| l.child.next_ready(now)).min();
        match (self.watchdog, children) {
            (Some(w), Some(c)) => Some(w.min(c).max(now)),
            (Some(w), None) => Some(w.max(now)),
            (None, c) => c,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{pkt, rng};
    use super::*;
    use crate::net::Ecn;

    fn class(rate_mbps: u64, ceil_mbps: u64, prio: u8) -> HtbClassConfig {
        HtbClassConfig {
            rate_bps: rate_mbps * 1_000_000,
            ceil_bps: Some(ceil_mbps * 1_000_000),
            burst_bytes: None,
            cburst_bytes: None,
            prio,
            quantum_bytes: None,
            child: QdiscConfig::Pfifo { limit_packets: 100_000 },
        }
    }

    fn htb(root_mbps: u64, classes: Vec<HtbClassConfig>) -> HtbConfig {
        let n = classes.len() as u8;
        HtbConfig {
            rate_bps: root_mbps * 1_000_000,
            burst_bytes: None,
            classes,
            classifier: Classifier::Flow { band_of_flow: (0..n).collect(), default_band: n - 1 },
        }
    }

    /// Packets of each flow sent through a 100 Mbit/s link over 1 s, every flow
    /// offering `offered_mbps`.
    fn shares(cfg: &HtbConfig, offered_mbps: &[u64]) -> Vec<f64> {
        assert!(cfg.validate().is_ok(), "{:?}", cfg.validate());
        let mut q = Htb::new(cfg, &mut rng());
        let mut arrivals = Vec::new();
        for (f, &mbps) in offered_mbps.iter().enumerate() {
            let gap = 1500 * 8 * 1000 / mbps; // ns between packets
            arrivals.extend((0..1_000_000_000 / gap).map(|i| (i * gap + f as u64, pkt(f as u32, i, 1500, Ecn::NotEct))));
        }
        arrivals.sort_by_key(|a| a.0);
        let (out, _) = drain_with_watchdog(&mut q, &arrivals);
        let late: Vec<_> = out.iter().filter(|(t, _)| *t >= 200_000_000).collect();
        (0..offered_mbps.len())
            .map(|f| late.iter().filter(|(_, flow)| *flow == f as u32).count() as f64 * 1500.0 * 8.0 / 0.8 / 1e6)
            .collect()
    }

    /// A 100 Mbit/s link that polls the shaper at its watchdog, for 1 s.
    fn drain_with_watchdog(q: &mut Htb, arrivals: &[(Time, Packet)]) -> (Vec<(Time, u32)>, Report) {
        let mut r = rng();
        let mut rep = Report::default();
        let mut out = Vec::new();
        let (mut i, mut now) = (0, 0);
        while now < 1_000_000_000 {
            while i < arrivals.len() && arrivals[i].0 <= now {
                let mut ctx = QdiscCtx { now: arrivals[i].0, rng: &mut r };
                q.enqueue(arrivals[i].1, &mut ctx, &mut rep);
                i += 1;
            }
            let mut ctx = QdiscCtx { now, rng: &mut r };
            match q.dequeue(&mut ctx, &mut rep) {
                Some(d) => {
                    out.push((now, d.packet.flow));
                    now += 120_000; // 1500 B at 100 Mbit/s
                }
                None => {
                    let next_arrival = arrivals.get(i).map_or(u64::MAX, |a| a.0);
                    now = q.next_ready(now).unwrap_or(u64::MAX).min(next_arrival);
                }
            }
        }
        (out, rep)
    }

    #[test]
    fn a_class_without_borrowing_holds_its_rate() {
        // Class 0 limited to 20 Mbit/s (ceil = rate) though it offers 80; class 1 takes the rest.
        let s = shares(&htb(100, vec![class(20, 20, 0), class(10, 100, 0)]), &[80, 80]);
        assert!((s[0] - 20.0).abs() < 0.5, "{s:?}");
        assert!((s[1] - 80.0).abs() < 1.0, "{s:?}");
    }

    #[test]
    fn borrowing_shares_the_excess_by_quantum_up_to_ceil() {
        // Both guaranteed 10 Mbit/s, both may borrow to 100: the rest is split evenly
        // (equal quanta).
        let s = shares(&htb(100, vec![class(10, 100, 0), class(10, 100, 0)]), &[100, 100]);
        assert!((s[0] - 50.0).abs() < 2.0 && (s[1] - 50.0).abs() < 2.0, "{s:?}");
        // A ceil of 30 Mbit/s caps the first class; it keeps its guaranteed 10. (With
        // tc's one-packet cburst it borrows little while the other class holds the
        // round-robin turn: it is out of the active set whenever its ceil bucket is
        // empty, as in Linux.)
        let s = shares(&htb(100, vec![class(10, 30, 0), class(10, 100, 0)]), &[100, 100]);
        assert!(s[0] >= 9.5 && s[0] <= 30.5 && (s[0] + s[1] - 100.0).abs() < 1.0, "{s:?}");
        // Alone, it borrows up to its ceil and no further.
        let s = shares(&htb(100, vec![class(10, 30, 0), class(10, 100, 0)]), &[100, 1]);
        assert!((s[0] - 30.0).abs() < 1.0, "{s:?}");
    }

    #[test]
    fn a_higher_priority_class_borrows_first() {
        let s = shares(&htb(100, vec![class(10, 100, 1), class(10, 100, 0)]), &[100, 100]);
        // Class 1 (prio 0) borrows everything beyond class 0's own 10 Mbit/s.
        assert!((s[0] - 10.0).abs() < 1.0 && (s[1] - 90.0).abs() < 1.5, "{s:?}");
    }

    #[test]
    fn the_root_rate_bounds_borrowing() {
        // Root 50 Mbit/s on a 100 Mbit/s link: guaranteed 10 + 10, borrowing up to 50 total.
        let s = shares(&htb(50, vec![class(10, 100, 0), class(10, 100, 0)]), &[100, 100]);
        assert!((s[0] + s[1] - 50.0).abs() < 1.5, "{s:?}");
    }

    #[test]
    fn tc_defaults_and_validation() {
        let q = Htb::new(&htb(100, vec![class(20, 20, 0)]), &mut rng());
        // quantum = 20 Mbit/s / 8 / 10 = 250 kB, clamped to 200 kB.
        assert_eq!(q.leaves[0].quantum, 200_000);
        // burst = 2.5 MB/s / 1e9 + 1600 bytes: the time of 1600 bytes at 20 Mbit/s.
        assert_eq!(q.leaves[0].buckets.buffer, l2t(1600, 20_000_000));
        let mut bad = htb(100, vec![class(20, 10, 0)]);
        assert!(bad.validate().unwrap_err().contains("ceil >= rate"));
        bad = htb(100, vec![class(20, 20, 9)]);
        assert!(bad.validate().unwrap_err().contains("prio"));
    }
}
