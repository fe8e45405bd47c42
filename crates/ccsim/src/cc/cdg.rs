//! CDG (CAIA Delay-Gradient): Reno growth, plus a probabilistic backoff driven by
//! the *gradient* of the RTT rather than its level. Once per RTT it takes the
//! change of the round's minimum and maximum RTT, sums it over a window of
//! `window` rounds (the paper's moving average without the division), and with a
//! positive gradient g (µs) backs off with probability
//!
//! ```text
//!   P = 1 − exp(−g · backoff_factor · 1e-6)        (the paper's 1 − e^(−g/G))
//! ```
//!
//! multiplying cwnd by β = 0.7071. Two coexistence heuristics: the *shadow window*
//! remembers the window it would have had without delay backoffs, so a loss
//! against loss-based flows costs no more than Reno's halving of it; *ineffectual
//! backoff detection* stops backing off after `use_ineff` backoffs that did not
//! reduce the delay (a competing loss-based flow keeps the queue).
//!
//! References: D. A. Hayes and G. Armitage, "Revisiting TCP Congestion Control
//! Using Delay Gradients", IFIP Networking 2011; Linux `net/ipv4/tcp_cdg.c`
//! (followed hook for hook, with its HyStart variant: ACK train and delay).
//!
//! Parameters (Linux module defaults): `window` = 8 rounds, `backoff_beta` = 724
//! (0.7071·1024, √½), `backoff_factor` = 42 (= 1000/(G·window) with the paper's
//! G = 3), `hystart_detect` = 3 (both), `use_ineff` = 5, `use_shadow` = true,
//! `use_tolerance` = false.
//!
//! Deviation: Linux backs off with `tcp_enter_cwr`, which sets ssthresh and lets
//! PRR bring cwnd down over the next round trip; a CCA here cannot start a CWR
//! episode, so the backoff sets ssthresh = cwnd·β and cwnd = ssthresh at once, and
//! performs the `CA_EVENT_COMPLETE_CWR` bookkeeping at the same moment.
//! Deviation: the delayed-ACK filter applies "when nothing is SACKed"
//! (`sacked_out == 0`), which the engine does not expose; it applies in the Open
//! state, where nothing is SACKed.
//! Deviation: rounds are the packet-timed rounds of [`RoundCounter`] (Linux:
//! `after(ack, rtt_seq)` with `rtt_seq = snd_nxt`), and a round that ends with no
//! RTT sample is skipped (Linux keeps waiting for the first ACK that has one).
//! Deviation: the backoff draw uses the flow's seeded stream (Linux:
//! `get_random_u32`), so runs are reproducible.

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::common::classic::{phase, reno_cong_avoid};
use super::common::clock::to_us;
use super::common::RoundCounter;
use super::registry::{describe_params, parse_params, CcaInfo};
use super::{AckSample, BoxedCca, CaEvent, CaState, CcMetrics, CongestionControl, TcpState};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    pub window: u32,
    pub backoff_beta: u32,
    pub backoff_factor: u32,
    pub hystart_detect: u32,
    pub use_ineff: u32,
    pub use_shadow: bool,
    pub use_tolerance: bool,
}

impl Default for Params {
    fn default() -> Self {
        Self {
            window: 8,
            backoff_beta: 724,
            backoff_factor: 42,
            hystart_detect: 3,
            use_ineff: 5,
            use_shadow: true,
            use_tolerance: false,
        }
    }
}

const PARAM_DOCS: &[(&str, &str)] = &[
    ("window", "gradient window in rounds, a power of two <= 256 (Linux 8)"),
    ("backoff_beta", "delay backoff multiplies cwnd by backoff_beta/1024 (Linux 724 = 0.7071)"),
    ("backoff_factor", "backoff probability 1 - exp(-gradient_us * factor / 1e6) (Linux 42)"),
    ("hystart_detect", "HyStart: 0 off, 1 ACK train, 2 delay, 3 both (Linux 3)"),
    ("use_ineff", "stop backing off after this many ineffectual backoffs; 0 = never (Linux 5)"),
    ("use_shadow", "shadow window: a loss halves the window delay backoffs would have left (Linux true)"),
    ("use_tolerance", "loss tolerance: ignore losses while the queue is not full (Linux false)"),
];

pub const INFO: CcaInfo = CcaInfo {
    name: "cdg",
    family: "loss+delay",
    summary: "CDG: Reno with a probabilistic backoff on a rising RTT gradient (Linux tcp_cdg.c)",
    reference: "Hayes & Armitage, IFIP Networking 2011; Linux net/ipv4/tcp_cdg.c",
    params: || describe_params::<Params>(PARAM_DOCS),
    build: |v| {
        let p: Params = parse_params("cdg", v)?;
        if !(1..=256).contains(&p.window) || !p.window.is_power_of_two() || p.backoff_beta > 1024 || p.hystart_detect > 3 {
            return Err(
                "parameters of CCA 'cdg': window must be a power of two in 1..=256, backoff_beta <= 1024, hystart_detect in 0..=3"
                    .into(),
            );
        }
        Ok(Box::new(Cdg::new(p)) as BoxedCca)
    },
};

const HYSTART_ACK_TRAIN: u32 = 1;
const HYSTART_DELAY: u32 = 2;

/// A round's minimum and maximum RTT (µs); (0, 0) = no sample.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct MinMax {
    min: i32,
    max: i32,
}

impl MinMax {
    fn is_empty(&self) -> bool {
        *self == MinMax::default()
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    Unknown,
    NonFull,
    Full,
    Backoff,
}

#[derive(Debug, Clone)]
pub struct Cdg {
    p: Params,
    rtt: MinMax,
    rtt_prev: MinMax,
    /// The last `window` per-round gradients and their sum.
    gradients: Vec<MinMax>,
    gsum: MinMax,
    gfilled: bool,
    tail: usize,
    state: State,
    /// Delayed-ACK filter credit (`delack`).
    delack: u32,
    round: RoundCounter,
    shadow_wnd: u32,
    backoff_cnt: u32,
    sample_cnt: u32,
    delay_min: i32,
    /// HyStart ACK train (µs; 0 = none).
    last_ack: u64,
    round_start: u64,
}

/// `nexp_u32`: exp(−ux·1e-6)·2^32, through the same table and steps as Linux.
fn nexp_u32(ux: u32) -> u32 {
    // exp(−x)·65536 − 1 for x = 0, 0.000256, 0.000512, ... doubling.
    const V: [u32; 17] =
        [65535, 65518, 65501, 65468, 65401, 65267, 65001, 64470, 63422, 61378, 57484, 50423, 38795, 22965, 8047, 987, 14];
    let mut msb = ux >> 8;
    if msb > u16::MAX as u32 {
        return 0;
    }
    let mut res: u32 = u32::MAX - (ux & 0xff) * (u32::MAX / 1_000_000);
    let mut i = 1;
    while msb != 0 {
        let y = if msb & 1 != 0 { V[i] } else { V[0] } + 1;
        res = ((res as u64 * y as u64) >> 16) as u32;
        i += 1;
        msb >>= 1;
    }
    res
}

impl Cdg {
    pub fn new(p: Params) -> Self {
        let window = p.window as usize;
        Self {
            p,
            rtt: MinMax::default(),
            rtt_prev: MinMax::default(),
            gradients: vec![MinMax::default(); if window > 1 { window } else { 0 }],
            gsum: MinMax::default(),
            gfilled: false,
            tail: 0,
            state: State::Unknown,
            delack: 0,
            round: RoundCounter::default(),
            shadow_wnd: 0,
            backoff_cnt: 0,
            sample_cnt: 0,
            delay_min: 0,
            last_ack: 0,
            round_start: 0,
        }
    }

    /// `tcp_cdg_hystart_update`.
    fn hystart_update(&mut self, tp: &mut TcpState) {
        if self.delay_min == 0 || (self.rtt.min != 0 && self.rtt.min < self.delay_min) {
            self.delay_min = self.rtt.min;
        }
        if self.delay_min == 0 {
            return;
        }
        if self.p.hystart_detect & HYSTART_ACK_TRAIN != 0 {
            let now_us = tp.now / 1000;
            if self.last_ack == 0 || !tp.is_cwnd_limited {
                self.last_ack = now_us;
                self.round_start = now_us;
            } else if now_us < self.last_ack + 3000 {
                let base_owd = (self.delay_min as u64 / 2).max(125);
                self.last_ack = now_us;
                if now_us > self.round_start + base_owd {
                    tp.ssthresh = tp.cwnd;
                    return;
                }
            }
        }
        if self.p.hystart_detect & HYSTART_DELAY != 0 {
            if self.sample_cnt < 8 {
                self.sample_cnt += 1;
            } else {
                let thresh = (self.delay_min + self.delay_min / 8).max(125);
                if self.rtt.min > thresh {
                    tp.ssthresh = tp.cwnd;
                }
            }
        }
    }

    /// `tcp_cdg_grad`: this round's gradient, summed over the window (µs).
    fn grad(&mut self) -> i32 {
        let mut gmin = self.rtt.min - self.rtt_prev.min;
        let mut gmax = self.rtt.max - self.rtt_prev.max;
        let window = self.p.window as i32;
        if !self.gradients.is_empty() {
            let old = self.gradients[self.tail];
            self.gsum.min += gmin - old.min;
            self.gsum.max += gmax - old.max;
            self.gradients[self.tail] = MinMax { min: gmin, max: gmax };
            self.tail = (self.tail + 1) & (self.p.window as usize - 1);
            gmin = self.gsum.min;
            gmax = self.gsum.max;
        }
        let mut grad = if gmin > 0 { gmin } else { gmax };
        // Extrapolate while the window is not yet full.
        if !self.gfilled {
            if self.gradients.is_empty() || self.tail == 0 {
                self.gfilled = true;
            } else {
                grad = grad * window / self.tail as i32;
            }
        }
        if gmin <= -32 || gmax <= -32 {
            // The last backoff reduced the delay: it was effectual.
            self.backoff_cnt = 0;
        }
        if self.p.use_tolerance {
            // Reduce small variations to zero (DIV_ROUND_CLOSEST by 64).
            let round = |g: i32| if g >= 0 { (g + 32) / 64 } else { (g - 32) / 64 };
            let (gmin, gmax) = (round(gmin), round(gmax));
            if gmin > 0 && gmax <= 0 {
                self.state = State::Full;
            } else if (gmin > 0 && gmax > 0) || gmax < 0 {
                self.state = State::NonFull;
            }
        }
        grad
    }

    /// `tcp_cdg_backoff`: back off with probability 1 − exp(−grad·factor·1e-6).
    fn backoff(&mut self, tp: &mut TcpState, grad: u32) -> bool {
        if tp.rng.gen::<u32>() <= nexp_u32(grad.saturating_mul(self.p.backoff_factor)) {
            return false;
        }
        if self.p.use_ineff > 0 {
            self.backoff_cnt += 1;
            if self.backoff_cnt > self.p.use_ineff {
                return false;
            }
        }
        self.shadow_wnd = self.shadow_wnd.max(tp.cwnd);
        self.state = State::Backoff;
        // tcp_enter_cwr (see the Deviation note): ssthresh = cwnd·β, applied at once.
        tp.ssthresh = self.ssthresh(tp);
        tp.cwnd = tp.ssthresh;
        self.complete_cwr(tp);
        true
    }

    /// The `CA_EVENT_COMPLETE_CWR` bookkeeping: a fresh round after a reduction.
    fn complete_cwr(&mut self, tp: &TcpState) {
        self.state = State::Unknown;
        self.round.reset_at(tp.delivered);
        self.rtt_prev = self.rtt;
        self.rtt = MinMax::default();
    }
}

impl CongestionControl for Cdg {
    fn name(&self) -> &'static str {
        "cdg"
    }

    /// `tcp_cdg_init`.
    fn init(&mut self, tp: &mut TcpState) {
        self.round.reset_at(tp.delivered);
        self.shadow_wnd = tp.cwnd;
    }

    /// `tcp_cdg_acked`: the round's min and max RTT, with Hayes' delayed-ACK filter.
    fn pkts_acked(&mut self, tp: &mut TcpState, sample: &AckSample) {
        let Some(rtt) = sample.rtt.filter(|&r| r > 0) else { return };
        let rtt_us = to_us(rtt).min(i32::MAX as u32) as i32;
        if tp.ca_state == CaState::Open {
            if sample.pkts_acked == 1 && self.delack > 0 {
                // A delayed ACK counts only if provably below the current minimum.
                self.rtt.min = self.rtt.min.min(rtt_us);
                self.delack -= 1;
                return;
            } else if sample.pkts_acked > 1 && self.delack < 5 {
                self.delack += 1;
            }
        }
        self.rtt.min = if self.rtt.min == 0 { rtt_us } else { self.rtt.min.min(rtt_us) };
        self.rtt.max = self.rtt.max.max(rtt_us);
    }

    /// `tcp_cdg_cong_avoid` (not called in CWR or Recovery).
    fn cong_avoid(&mut self, tp: &mut TcpState, sample: &AckSample) {
        if tp.in_slow_start() && self.p.hystart_detect != 0 {
            self.hystart_update(tp);
        }
        if self.round.update(&sample.rs, tp.delivered) && !self.rtt.is_empty() {
            let grad = if self.rtt_prev.is_empty() { 0 } else { self.grad() };
            self.rtt_prev = self.rtt;
            self.rtt = MinMax::default();
            self.last_ack = 0;
            self.sample_cnt = 0;
            if grad > 0 && self.backoff(tp, grad as u32) {
                return;
            }
        }
        if !tp.is_cwnd_limited {
            self.shadow_wnd = self.shadow_wnd.min(tp.cwnd);
            return;
        }
        let prior = tp.cwnd;
        reno_cong_avoid(tp, sample.acked_sacked);
        let incr = tp.cwnd.saturating_sub(prior);
        self.shadow_wnd = self.shadow_wnd.saturating_add(incr);
    }

    /// `tcp_cdg_ssthresh`.
    fn ssthresh(&mut self, tp: &mut TcpState) -> u32 {
        if self.state == State::Backoff {
            return ((tp.cwnd as u64 * self.p.backoff_beta.min(1024) as u64) >> 10).max(2) as u32;
        }
        if self.state == State::NonFull && self.p.use_tolerance {
            return tp.cwnd;
        }
        self.shadow_wnd = (self.shadow_wnd >> 1).min(tp.cwnd);
        if self.p.use_shadow {
            return self.shadow_wnd.max(tp.cwnd >> 1).max(2);
        }
        (tp.cwnd >> 1).max(2)
    }

    /// `tcp_cdg_cwnd_event`.
    fn cwnd_event(&mut self, tp: &mut TcpState, event: CaEvent) {
        match event {
            CaEvent::CwndRestart => {
                let p = self.p.clone();
                *self = Cdg::new(p);
                self.round.reset_at(tp.delivered);
                self.shadow_wnd = tp.cwnd;
            }
            CaEvent::CompleteCwr => self.complete_cwr(tp),
            _ => {}
        }
    }

    fn metrics(&self, tp: &TcpState) -> CcMetrics {
        let state = match self.state {
            State::Backoff => "backoff",
            State::Full => "full",
            State::NonFull => "nonfull",
            State::Unknown => phase(tp),
        };
        CcMetrics { state, ..Default::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testing::{tcp_state, TimelineHarness};
    use crate::units::ms;

    #[test]
    fn nexp_matches_the_exponential() {
        // exp(−x)·2^32 to within Linux's table precision (~1e-4 relative).
        for ux in [0u32, 100, 1_000, 42_000, 250_000, 1_000_000, 5_000_000] {
            let exact = (-(ux as f64) * 1e-6).exp() * u32::MAX as f64;
            let got = nexp_u32(ux) as f64;
            assert!((got - exact).abs() <= 2e-3 * u32::MAX as f64, "ux {ux}: {got} vs {exact}");
        }
        assert_eq!(nexp_u32(1 << 25), 0);
    }

    #[test]
    fn the_gradient_is_the_windowed_sum_extrapolated_until_full() {
        // Round minimum RTT rising 1 ms per round: per-round gradient 1000 µs; after
        // k < 8 rounds the sum k·1000 is extrapolated to 8/k of it = 8000 µs (the
        // paper's (rtt_latest − rtt_oldest) without the division by the window).
        let mut c = Cdg::new(Params::default());
        c.rtt_prev = MinMax { min: 50_000, max: 51_000 };
        for k in 1..=10 {
            c.rtt = MinMax { min: c.rtt_prev.min + 1000, max: c.rtt_prev.max + 1000 };
            assert_eq!(c.grad(), 8000, "round {k}");
            c.rtt_prev = c.rtt;
        }
        assert!(c.gfilled);
    }

    #[test]
    fn backoff_probability_follows_one_minus_exp() {
        // grad 8000 µs × factor 42 = 336 000 → P = 1 − e^−0.336 = 0.285. Over 2000
        // seeded draws (with ineffectual-backoff detection off) the rate is within
        // ±0.04 of it; a backoff sets cwnd to 724/1024 of it.
        let p = Params { use_ineff: 0, ..Params::default() };
        let mut hits = 0;
        let mut tp = tcp_state(1448, 1000);
        for _ in 0..2000 {
            let mut c = Cdg::new(p.clone());
            tp.cwnd = 1000;
            if c.backoff(&mut tp, 8000) {
                hits += 1;
                assert_eq!(tp.cwnd, 707);
            }
        }
        let rate = hits as f64 / 2000.0;
        assert!((rate - 0.285).abs() < 0.04, "backoff rate {rate}");
    }

    #[test]
    fn ineffectual_backoffs_stop_after_use_ineff() {
        // With P ≈ 1 (huge gradient) and no effectual decrease in between, only
        // use_ineff = 5 backoffs happen.
        let mut c = Cdg::new(Params::default());
        let mut tp = tcp_state(1448, 1000);
        let n = (0..20).filter(|_| c.backoff(&mut tp, 10_000_000)).count();
        assert_eq!(n, 5);
    }

    #[test]
    fn with_a_constant_delay_it_is_reno_and_a_loss_halves_the_shadow_window() {
        let mut h = TimelineHarness::in_cong_avoid(Box::new(Cdg::new(Params::default())), 100, ms(40));
        h.run_rounds(5);
        assert_eq!(h.tp().cwnd, 105, "no gradient, no backoff: Reno's +1 per round");
        assert_eq!(h.loss_at_full_window(), 52);
    }
}
