//! HTB — hierarchical token bucket, as Linux `net/sched/sch_htb.c` (`tc qdisc add
//! ... htb` + `tc class add ... htb rate R ceil C burst B cburst CB prio P quantum Q`):
//! a root class of rate `rate_bps`, inner classes under it (`parent`) and leaf classes,
//! each leaf with its own child qdisc. A classifier (the one of [`super::prio`]) puts
//! each packet in a leaf.
//!
//! Each class keeps two token buckets as transmission time: `tokens` at its `rate`
//! (depth `burst`) and `ctokens` at its `ceil` (depth `cburst`). With Linux's default
//! (`htb_hysteresis = 0`) a class is
//!
//! * CAN_SEND while `tokens >= 0` (and `ctokens >= 0`): it sends on its own rate;
//! * MAY_BORROW while `tokens < 0 <= ctokens`: it may send what the root lends;
//! * CANT_SEND while `ctokens < 0`.
//!
//! Levels are Linux's: leaves are level 0, the root level 7 (`TC_HTB_MAXDEPTH - 1`),
//! an inner class one below its parent. A backlogged leaf is served at the level of
//! the first class on its way up that CAN_SEND, provided every class below that one
//! MAY_BORROW (a CANT_SEND class on the way blocks it). Dequeue (`htb_dequeue`) serves
//! level 0 first — the leaves that CAN_SEND, lowest `prio` first, deficit round robin
//! by `quantum` within a priority — then each higher level in turn: the leaves
//! borrowing from a class of that level, in the same order. Sending charges the packet
//! (`htb_charge_class`) to every class from the leaf up to the root: to `ctokens`
//! always, and to `tokens` for the classes at or above the level it was served at.
//! When nothing may send, the queue waits for the earliest class on a backlogged
//! leaf's way up to change mode (the watchdog).
//!
//! Defaults as `tc`: `ceil = rate`; `burst = rate / hz + mtu` bytes with `mtu = 1600`
//! (and `hz = 10⁹` on a high-resolution-timer kernel, `/proc/net/psched`), likewise
//! `cburst` from `ceil`; `quantum = rate / r2q` bytes with `r2q = 10`, clamped to
//! [1000, 200000] as the kernel does. Deviation: the leaves served at one level take
//! turns in one deficit round robin per priority, where Linux keeps one per inner
//! class of that level (its "feeds") and serves those inner classes in classid order;
//! with one inner class per level (or a flat hierarchy) the two are the same.

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
/// Linux `TC_HTB_MAXDEPTH`: levels 0 (leaves) to 7 (the root).
const MAX_DEPTH: usize = 8;
const ROOT_LEVEL: usize = MAX_DEPTH - 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// The class's parent: the index of an earlier (inner) class; none = the root.
    #[serde(default)]
    pub parent: Option<usize>,
    /// The queue of a leaf class; an inner class (some class's parent) has none.
    #[serde(default)]
    pub child: Option<QdiscConfig>,
}

impl HtbClassConfig {
    fn ceil(&self) -> Bps {
        self.ceil_bps.unwrap_or(self.rate_bps)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
        let inner = self.inner_classes();
        let mut level = vec![0usize; self.classes.len()];
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
            if let Some(p) = c.parent {
                if p >= i {
                    return Err(format!("htb: classes[{i}].parent: {p} is not an earlier class"));
                }
            }
            let parent_level = c.parent.map_or(ROOT_LEVEL, |p| level[p]);
            if inner[i] {
                level[i] = parent_level - 1;
                if level[i] == 0 {
                    return Err(format!("htb: classes[{i}]: inner classes nest at most {} deep", ROOT_LEVEL - 1));
                }
            }
            match (&c.child, inner[i]) {
                (Some(_), true) => return Err(format!("htb: classes[{i}].child: an inner class has no queue")),
                (None, false) => return Err(format!("htb: classes[{i}].child: a leaf class needs a queue")),
                (Some(q), false) => q.validate().map_err(|e| format!("htb: classes[{i}].child: {e}"))?,
                (None, true) => {}
            }
        }
        self.classifier.validate(self.classes.len(), "htb", "class")?;
        match classifier_targets(&self.classifier).into_iter().find(|&k| inner[k]) {
            Some(k) => Err(format!("htb: classifier: class {k} is an inner class; packets go to leaves")),
            None => Ok(()),
        }
    }

    /// Whether each class is some class's parent.
    fn inner_classes(&self) -> Vec<bool> {
        let mut inner = vec![false; self.classes.len()];
        for p in self.classes.iter().filter_map(|c| c.parent) {
            if let Some(x) = inner.get_mut(p) {
                *x = true;
            }
        }
        inner
    }
}

/// Every class the classifier can put a packet in.
fn classifier_targets(c: &Classifier) -> Vec<usize> {
    match c {
        Classifier::Flow { band_of_flow, default_band } => band_of_flow.iter().chain([default_band]).map(|&b| b as usize).collect(),
        Classifier::BytesSent { thresholds_bytes } => (0..=thresholds_bytes.len()).collect(),
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
struct Class {
    buckets: Buckets,
    prio: u8,
    quantum: i64,
    /// Linux's level: 0 for a leaf, one below its parent for an inner class.
    level: usize,
    parent: Option<usize>,
    /// DRR deficit at each level it can be served at.
    deficit: [i64; MAX_DEPTH],
    /// The leaf's queue (none: an inner class).
    child: Option<Box<dyn Qdisc>>,
}

impl Class {
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

    fn backlog_pkts(&self) -> u64 {
        self.child.as_ref().map_or(0, |c| c.backlog_pkts())
    }
}

#[derive(Debug)]
pub struct Htb {
    root: Buckets,
    classes: Vec<Class>,
    classifier: Classifier,
    /// Next leaf to try in the DRR of each (level, prio).
    next: [[usize; 8]; MAX_DEPTH],
    watchdog: Option<Time>,
}

/// A backlogged leaf's standing: the level it may be served at now (and, when it
/// borrows, how long until a class below that level has tokens of its own), or how
/// long until a class on its way up can change mode.
enum Standing {
    ServeAt(usize, i64),
    Wait(i64),
}

impl Htb {
    pub fn new(cfg: &HtbConfig, rng: &mut SimRng) -> Self {
        let root_burst = cfg.burst_bytes.unwrap_or_else(|| default_burst(cfg.rate_bps));
        let inner = cfg.inner_classes();
        let mut classes: Vec<Class> = Vec::with_capacity(cfg.classes.len());
        for (i, c) in cfg.classes.iter().enumerate() {
            let parent_level = c.parent.map_or(ROOT_LEVEL, |p| classes[p].level);
            classes.push(Class {
                buckets: Buckets::new(
                    c.rate_bps,
                    c.ceil(),
                    c.burst_bytes.unwrap_or_else(|| default_burst(c.rate_bps)),
                    c.cburst_bytes.unwrap_or_else(|| default_burst(c.ceil())),
                ),
                prio: c.prio,
                quantum: c.quantum_bytes.unwrap_or_else(|| (c.rate_bps / 8 / R2Q).clamp(1000, 200_000)) as i64,
                level: if inner[i] { parent_level - 1 } else { 0 },
                parent: c.parent,
                deficit: [0; MAX_DEPTH],
                child: c.child.as_ref().map(|q| build(q, rng)),
            });
        }
        Self {
            root: Buckets::new(cfg.rate_bps, cfg.rate_bps, root_burst, root_burst),
            classes,
            classifier: cfg.classifier.clone(),
            next: [[0; 8]; MAX_DEPTH],
            watchdog: None,
        }
    }

    /// Walk up from leaf `i`: served at the level of the first class that CAN_SEND if
    /// every class below it MAY_BORROW; blocked by a CANT_SEND class (or the root
    /// without tokens) until the earliest of those classes changes mode.
    fn standing(&self, i: usize, now: Time) -> Standing {
        let mut wait = i64::MAX;
        let mut at = Some(i);
        while let Some(k) = at {
            let c = &self.classes[k];
            match c.mode(now) {
                (Mode::CanSend, _) => return Standing::ServeAt(c.level, wait),
                (Mode::MayBorrow, t) => wait = wait.min(t),
                (Mode::CantSend, t) => return Standing::Wait(wait.min(t)),
            }
            at = c.parent;
        }
        let (root_toks, _) = self.root.at(now);
        if root_toks >= 0 {
            Standing::ServeAt(ROOT_LEVEL, wait)
        } else {
            Standing::Wait(wait.min(-root_toks))
        }
    }

    /// Charge a packet of `len` bytes sent by leaf `i` at `level` (`htb_charge_class`).
    fn charge(&mut self, i: usize, level: usize, now: Time, len: u64) {
        let mut at = Some(i);
        while let Some(k) = at {
            let c = &mut self.classes[k];
            c.buckets.charge(now, len, c.level >= level);
            at = c.parent;
        }
        self.root.charge(now, len, true);
    }

    /// Deficit round robin among the backlogged leaves served at `level` with `prio`
    /// (`htb_dequeue_tree`): the leaf at the pointer sends; when its deficit runs out
    /// it gets another quantum and the pointer moves on.
    fn drr(&mut self, level: usize, prio: u8, serve_at: &[usize], ctx: &mut QdiscCtx, report: &mut Report) -> Option<Queued> {
        let n = self.classes.len();
        let start = self.next[level][prio as usize];
        for k in 0..n {
            let i = (start + k) % n;
            if serve_at[i] != level || self.classes[i].prio != prio {
                continue;
            }
            let c = &mut self.classes[i];
            let Some(q) = c.child.as_mut().and_then(|child| child.dequeue(ctx, report)) else { continue };
            let len = q.packet.wire_bytes as u64;
            c.deficit[level] -= len as i64;
            self.next[level][prio as usize] = i;
            if c.deficit[level] < 0 {
                c.deficit[level] += c.quantum;
                self.next[level][prio as usize] = (i + 1) % n;
            }
            self.charge(i, level, ctx.now, len);
            return Some(q);
        }
        None
    }
}

impl Qdisc for Htb {
    fn enqueue(&mut self, p: Packet, ctx: &mut QdiscCtx, report: &mut Report) -> bool {
        // ACKs (a reverse path's) go to the default class; validation made every class
        // the classifier can name a leaf.
        let class = self.classifier.class_of(&p, self.classifier.default_class()).min(self.classes.len() - 1);
        match self.classes[class].child.as_mut() {
            Some(child) => child.enqueue(p, ctx, report),
            None => {
                report.drop(p, super::DropReason::TailDrop);
                false
            }
        }
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx, report: &mut Report) -> Option<Queued> {
        let now = ctx.now;
        // At most 64 classes: the per-call level table lives on the stack.
        const IDLE: usize = usize::MAX;
        let mut serve_at = [IDLE; 64];
        let mut wait = i64::MAX;
        let mut levels = [false; MAX_DEPTH];
        for (i, slot) in serve_at.iter_mut().enumerate().take(self.classes.len()) {
            if self.classes[i].backlog_pkts() == 0 {
                continue;
            }
            match self.standing(i, now) {
                Standing::ServeAt(level, own_tokens_in) => {
                    *slot = level;
                    levels[level] = true;
                    wait = wait.min(own_tokens_in);
                }
                Standing::Wait(t) => wait = wait.min(t),
            }
        }
        let n = self.classes.len();
        for level in (0..MAX_DEPTH).filter(|&l| levels[l]) {
            for prio in 0..8u8 {
                if !(0..n).any(|i| serve_at[i] == level && self.classes[i].prio == prio) {
                    continue;
                }
                if let Some(q) = self.drr(level, prio, &serve_at[..n], ctx, report) {
                    self.watchdog = None;
                    return Some(q);
                }
            }
        }
        self.watchdog = (wait != i64::MAX && self.backlog_pkts() > 0).then(|| now + wait.max(1) as Time);
        None
    }

    fn backlog_bytes(&self) -> u64 {
        self.classes.iter().filter_map(|c| c.child.as_ref()).map(|q| q.backlog_bytes()).sum()
    }
    fn backlog_pkts(&self) -> u64 {
        self.classes.iter().map(Class::backlog_pkts).sum()
    }
    fn aqm_state(&self) -> AqmState {
        self.classes.iter().find_map(|c| c.child.as_ref()).map(|q| q.aqm_state()).unwrap_or_default()
    }
    fn next_ready(&self, now: Time) -> Option<Time> {
        let children = self.classes.iter().filter_map(|c| c.child.as_ref()?.next_ready(now)).min();
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
            parent: None,
            child: Some(QdiscConfig::Pfifo { limit_packets: 100_000 }),
        }
    }

    /// An inner class (no queue) under `parent` (none: the root).
    fn inner(rate_mbps: u64, ceil_mbps: u64, parent: Option<usize>) -> HtbClassConfig {
        HtbClassConfig { parent, child: None, ..class(rate_mbps, ceil_mbps, 0) }
    }

    fn under(parent: usize, c: HtbClassConfig) -> HtbClassConfig {
        HtbClassConfig { parent: Some(parent), ..c }
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
    fn an_inner_class_bounds_what_its_children_borrow() {
        // root 100 > inner "a" 30/30 > leaves a1, a2 (10, may borrow to 100); leaf b
        // (10, may borrow to 100). a1 and a2 borrow only what "a" has: 30 together.
        let classes = vec![
            inner(30, 30, None),
            under(0, class(10, 100, 0)),
            under(0, class(10, 100, 0)),
            class(10, 100, 0),
        ];
        let cfg = HtbConfig {
            classifier: Classifier::Flow { band_of_flow: vec![1, 2, 3], default_band: 3 },
            ..htb(100, classes)
        };
        let s = shares(&cfg, &[100, 100, 100]);
        assert!((s[0] + s[1] - 30.0).abs() < 1.0 && (s[0] - s[1]).abs() < 2.0, "{s:?}");
        assert!((s[2] - 70.0).abs() < 1.5, "{s:?}");
        // Flat (no inner class), the same leaves split the link evenly.
        let flat = HtbConfig {
            classifier: Classifier::Flow { band_of_flow: vec![0, 1, 2], default_band: 2 },
            ..htb(100, vec![class(10, 100, 0), class(10, 100, 0), class(10, 100, 0)])
        };
        let s = shares(&flat, &[100, 100, 100]);
        assert!(s.iter().all(|x| (x - 33.3).abs() < 2.0), "{s:?}");
    }

    #[test]
    fn an_inner_class_lends_its_rate_to_its_children_first() {
        // inner "a" 60/100 with a1 (10/100) and a2 (10/100); b 40/100. All backlogged:
        // a1 and a2 borrow from "a" (level 6) before anyone borrows from the root, so
        // "a" keeps its 60 and b its 40.
        let classes = vec![inner(60, 100, None), under(0, class(10, 100, 0)), under(0, class(10, 100, 0)), class(40, 100, 0)];
        let cfg = HtbConfig {
            classifier: Classifier::Flow { band_of_flow: vec![1, 2, 3], default_band: 3 },
            ..htb(100, classes)
        };
        let s = shares(&cfg, &[100, 100, 100]);
        assert!((s[0] + s[1] - 60.0).abs() < 2.0 && (s[2] - 40.0).abs() < 2.0, "{s:?}");
        // b idle: a1 and a2 borrow the rest from the root through "a" (ceil 100).
        let s = shares(&cfg, &[100, 100, 1]);
        assert!((s[0] + s[1] - 99.0).abs() < 2.0, "{s:?}");
    }

    #[test]
    fn hierarchy_validation_names_the_class() {
        let cfg = |classes, leaf: u8| HtbConfig {
            classifier: Classifier::Flow { band_of_flow: vec![leaf], default_band: leaf },
            ..htb(100, classes)
        };
        let later_parent = cfg(vec![under(1, class(10, 10, 0)), inner(10, 10, None)], 0);
        assert!(later_parent.validate().unwrap_err().contains("classes[0].parent: 1 is not an earlier class"));
        let queued_inner = cfg(vec![class(10, 10, 0), under(0, class(10, 10, 0))], 1);
        assert!(queued_inner.validate().unwrap_err().contains("classes[0].child: an inner class has no queue"));
        let bare_leaf = cfg(vec![inner(10, 10, None), HtbClassConfig { child: None, ..under(0, class(10, 10, 0)) }], 1);
        assert!(bare_leaf.validate().unwrap_err().contains("classes[1].child: a leaf class needs a queue"));
        let to_inner = cfg(vec![inner(10, 10, None), under(0, class(10, 10, 0))], 0);
        assert!(to_inner.validate().unwrap_err().contains("class 0 is an inner class"));
        let mut deep = vec![inner(10, 10, None)];
        for p in 0..6 {
            deep.push(HtbClassConfig { parent: Some(p), child: None, ..class(10, 10, 0) });
        }
        deep.push(under(6, class(10, 10, 0)));
        assert!(cfg(deep.clone(), 7).validate().unwrap_err().contains("nest at most 6 deep"));
        deep.remove(6);
        deep[6].parent = Some(5);
        assert!(cfg(deep, 6).validate().is_ok());
    }

    #[test]
    fn tc_defaults_and_validation() {
        let q = Htb::new(&htb(100, vec![class(20, 20, 0)]), &mut rng());
        // quantum = 20 Mbit/s / 8 / 10 = 250 kB, clamped to 200 kB.
        assert_eq!(q.classes[0].quantum, 200_000);
        // burst = 2.5 MB/s / 1e9 + 1600 bytes: the time of 1600 bytes at 20 Mbit/s.
        assert_eq!(q.classes[0].buckets.buffer, l2t(1600, 20_000_000));
        let mut bad = htb(100, vec![class(20, 10, 0)]);
        assert!(bad.validate().unwrap_err().contains("ceil >= rate"));
        bad = htb(100, vec![class(20, 20, 9)]);
        assert!(bad.validate().unwrap_err().contains("prio"));
    }
}
