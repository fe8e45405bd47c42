//! TCP-NV (New Vegas): congestion *avoidance* for data centres. Once per RTT it
//! compares cwnd with the window the measured rate needs at the minimum RTT,
//!
//! ```text
//!   max_win = max_rate · min_rtt / mss + pad        (pad = 10 packets)
//! ```
//!
//! where max_rate is the largest in-flight/RTT seen in the round. Above max_win (a
//! queue of more than `pad` packets) it cuts cwnd by 30% of the excess and stops
//! growing; at least `pad_buffer` below it, it grows as Reno (or faster/slower by
//! its growth factor). The min RTT is re-learned every 5 s (±25%, randomized). A
//! loss cuts cwnd by half. Meant for networks where all flows are NV.
//!
//! References: L. Brakmo, "TCP-NV: An Update to TCP-Vegas", 2010
//! (<http://www.brakmo.org/networking/tcp-nv/>); Linux `net/ipv4/tcp_nv.c`
//! (followed hook for hook).
//!
//! Parameters (Linux module defaults): `pad` = 10, `pad_buffer` = 2,
//! `reset_period_s` = 5, `min_cwnd` = 2, `cong_dec_mult` = 38 (30%·128),
//! `ssthresh_factor` = 8 (×8/8), `rtt_factor` = 128 (RTT EWMA ½ old + ½ new),
//! `loss_dec_factor` = 512 (loss ×512/1024), `cwnd_growth_rate_neg` = 8,
//! `cwnd_growth_rate_pos` = 0 (Reno), `dec_eval_min_calls` = 60,
//! `inc_eval_min_calls` = 20, `ssthresh_eval_min_calls` = 30, `stop_rtt_cnt` =
//! 10, `rtt_min_cnt` = 2.
//!
//! Deviation: rounds are the packet-timed rounds of [`RoundCounter`] (Linux:
//! `before(nv_rtt_start_seq, snd_una)` with the start at `snd_nxt`); the TSO
//! adjustment that extends a round by `nv_min_cwnd` packets extends it by that many
//! deliveries. `bytes_acked` counts newly delivered packets × mss (Linux: the
//! advance of `snd_una`). The min-RTT reset time is drawn from the flow's seeded
//! stream (Linux `get_random_bytes`), in ns rather than jiffies.

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::common::classic::{cong_avoid_ai, phase, slow_start};
use super::common::clock::to_us;
use super::common::RoundCounter;
use super::registry::{describe_params, parse_params, CcaInfo};
use super::{AckSample, BoxedCca, CaState, CcMetrics, CongestionControl, TcpState, INFINITE_SSTHRESH};
use crate::units::{secs, Time};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    pub pad: u32,
    pub pad_buffer: u32,
    pub reset_period_s: u32,
    pub min_cwnd: u32,
    pub cong_dec_mult: u32,
    pub ssthresh_factor: u32,
    pub rtt_factor: u32,
    pub loss_dec_factor: u32,
    pub cwnd_growth_rate_neg: u32,
    pub cwnd_growth_rate_pos: u32,
    pub dec_eval_min_calls: u32,
    pub inc_eval_min_calls: u32,
    pub ssthresh_eval_min_calls: u32,
    pub stop_rtt_cnt: u32,
    pub rtt_min_cnt: u32,
}

impl Default for Params {
    fn default() -> Self {
        Self {
            pad: 10,
            pad_buffer: 2,
            reset_period_s: 5,
            min_cwnd: 2,
            cong_dec_mult: 30 * 128 / 100,
            ssthresh_factor: 8,
            rtt_factor: 128,
            loss_dec_factor: 512,
            cwnd_growth_rate_neg: 8,
            cwnd_growth_rate_pos: 0,
            dec_eval_min_calls: 60,
            inc_eval_min_calls: 20,
            ssthresh_eval_min_calls: 30,
            stop_rtt_cnt: 10,
            rtt_min_cnt: 2,
        }
    }
}

const PARAM_DOCS: &[(&str, &str)] = &[
    ("pad", "packets queued allowed above the window the rate needs (nv_pad)"),
    ("pad_buffer", "grow only when cwnd is this far below max_win (nv_pad_buffer)"),
    ("reset_period_s", "min RTT re-learned every this many seconds, ±25% (nv_reset_period)"),
    ("min_cwnd", "no delay-based decrease below this window (nv_min_cwnd)"),
    ("cong_dec_mult", "cut cwnd by excess × this/128 on congestion (nv_cong_dec_mult; 38 = 30%)"),
    ("ssthresh_factor", "on congestion ssthresh = max_win × this/8 (nv_ssthresh_factor)"),
    ("rtt_factor", "RTT EWMA weight of the new sample, /256 (nv_rtt_factor)"),
    ("loss_dec_factor", "a loss multiplies cwnd by this/1024 (nv_loss_dec_factor)"),
    ("cwnd_growth_rate_neg", "non-congested rounds to double a below-Reno growth rate (nv_cwnd_growth_rate_neg)"),
    ("cwnd_growth_rate_pos", "non-congested rounds to double the growth rate; 0 = Reno (nv_cwnd_growth_rate_pos)"),
    ("dec_eval_min_calls", "RTT samples needed before a decrease (nv_dec_eval_min_calls)"),
    ("inc_eval_min_calls", "RTT samples needed before an increase (nv_inc_eval_min_calls)"),
    ("ssthresh_eval_min_calls", "RTT samples needed to end slow start on delay (nv_ssthresh_eval_min_calls)"),
    ("stop_rtt_cnt", "rounds of growth allowed after a no-congestion decision (nv_stop_rtt_cnt)"),
    ("rtt_min_cnt", "rounds before a congestion decision (nv_rtt_min_cnt)"),
];

pub const INFO: CcaInfo = CcaInfo {
    name: "nv",
    family: "delay",
    summary: "TCP-NV: cuts cwnd when it exceeds the window the measured rate needs + 10 packets (Linux tcp_nv.c)",
    reference: "Brakmo, TCP-NV 2010; Linux net/ipv4/tcp_nv.c",
    params: || describe_params::<Params>(PARAM_DOCS),
    build: |v| {
        let p: Params = parse_params("nv", v)?;
        if p.rtt_factor > 256 || p.loss_dec_factor > 1024 || p.reset_period_s == 0 || p.reset_period_s > 3600 {
            return Err(
                "parameters of CCA 'nv': rtt_factor <= 256, loss_dec_factor <= 1024, reset_period_s in 1..=3600".into()
            );
        }
        Ok(Box::new(Nv::new(p)) as BoxedCca)
    },
};

/// Linux `NV_MIN_CWND`, `NV_MIN_CWND_GROW`, `NV_TSO_CWND_BOUND`: the adaptive floor
/// for decisions starts at 4 packets and grows by 2 up to 80 when a round sees a
/// single ACK (TSO/GRO/coalescing make small windows look idle).
const NV_MIN_CWND: u32 = 4;
const NV_MIN_CWND_GROW: u32 = 2;
const NV_TSO_CWND_BOUND: u32 = 80;
/// Linux `NV_INIT_RTT`.
const INIT_RTT: u32 = u32::MAX;

#[derive(Debug, Clone)]
pub struct Nv {
    p: Params,
    min_rtt_reset_at: Time,
    /// < 0: slower than one packet per RTT (after losses).
    cwnd_growth_factor: i32,
    loss_cwnd: u32,
    allow_cwnd_growth: bool,
    reset: bool,
    catchup: bool,
    eval_call_cnt: u32,
    nv_min_cwnd: u32,
    rtt_cnt: u32,
    last_rtt: u32,
    min_rtt: u32,
    min_rtt_new: u32,
    /// Largest rate this round, in 100 bit/s units (Linux's unit).
    rtt_max_rate: u32,
    round: RoundCounter,
    last_delivered: u64,
    no_cong_cnt: u32,
}

impl Nv {
    pub fn new(p: Params) -> Self {
        Self {
            p,
            min_rtt_reset_at: 0,
            cwnd_growth_factor: 0,
            loss_cwnd: 0,
            allow_cwnd_growth: true,
            reset: false,
            catchup: false,
            eval_call_cnt: 0,
            nv_min_cwnd: NV_MIN_CWND,
            rtt_cnt: 0,
            last_rtt: 0,
            min_rtt: INIT_RTT,
            min_rtt_new: INIT_RTT,
            rtt_max_rate: 0,
            round: RoundCounter::default(),
            last_delivered: 0,
            no_cong_cnt: 0,
        }
    }

    /// `tcpnv_reset`.
    fn reset_state(&mut self, tp: &TcpState) {
        self.reset = false;
        self.loss_cwnd = 0;
        self.no_cong_cnt = 0;
        self.rtt_cnt = 0;
        self.last_rtt = 0;
        self.rtt_max_rate = 0;
        self.round.reset_at(tp.delivered);
        self.eval_call_cnt = 0;
        self.last_delivered = tp.delivered;
    }

    /// The once-per-round decision (the `before(nv_rtt_start_seq, snd_una)` block).
    fn end_of_round(&mut self, tp: &mut TcpState, bytes_acked: u64) {
        self.rtt_cnt = (self.rtt_cnt + 1).min(0xff);
        // A single ACK per round: the window is too small to measure (TSO etc.).
        if self.eval_call_cnt == 1
            && bytes_acked >= (self.nv_min_cwnd as u64 - 1) * tp.mss as u64
            && self.nv_min_cwnd < NV_TSO_CWND_BOUND + 1
        {
            self.nv_min_cwnd = (self.nv_min_cwnd + NV_MIN_CWND_GROW).min(NV_TSO_CWND_BOUND + 1);
            self.round.reset_at(tp.delivered + tp.packets_out as u64 + self.nv_min_cwnd as u64);
            self.eval_call_cnt = 0;
            self.allow_cwnd_growth = true;
            return;
        }
        // cwnd the rate needs at min RTT: rate [100 bit/s] · min_rtt [µs] / (80000 · mss).
        let cwnd_by_slope = (self.rtt_max_rate as u64 * self.min_rtt as u64 / (80_000 * tp.mss as u64)) as u32;
        let max_win = cwnd_by_slope.saturating_add(self.p.pad);
        if tp.cwnd > max_win {
            if self.rtt_cnt < self.p.rtt_min_cnt {
                return;
            } else if tp.ssthresh == INFINITE_SSTHRESH {
                if self.eval_call_cnt < self.p.ssthresh_eval_min_calls {
                    return;
                }
            } else if self.eval_call_cnt < self.p.dec_eval_min_calls {
                if self.allow_cwnd_growth && self.rtt_cnt > self.p.stop_rtt_cnt {
                    self.allow_cwnd_growth = false;
                }
                return;
            }
            // Congested: stop growing, cut 30% of the excess (or to max_win).
            self.allow_cwnd_growth = false;
            tp.ssthresh = ((self.p.ssthresh_factor as u64 * max_win as u64) >> 3).max(1) as u32;
            if tp.cwnd - max_win > 2 {
                let dec = (((tp.cwnd - max_win) as u64 * self.p.cong_dec_mult as u64) >> 7).max(2) as u32;
                tp.cwnd = tp.cwnd.saturating_sub(dec);
            } else if self.p.cong_dec_mult > 0 {
                tp.cwnd = max_win;
            }
            if self.cwnd_growth_factor > 0 {
                self.cwnd_growth_factor = 0;
            }
            self.no_cong_cnt = 0;
        } else if tp.cwnd + self.p.pad_buffer <= max_win {
            // Not congested: grow if there are enough samples.
            if self.eval_call_cnt < self.p.inc_eval_min_calls {
                return;
            }
            self.allow_cwnd_growth = true;
            self.no_cong_cnt += 1;
            // Double the growth rate after enough uncongested rounds: towards Reno's
            // rate from below (after losses), and beyond it only if enabled.
            let rounds = if self.cwnd_growth_factor < 0 { self.p.cwnd_growth_rate_neg } else { self.p.cwnd_growth_rate_pos };
            if rounds > 0 && self.no_cong_cnt > rounds {
                self.cwnd_growth_factor += 1;
                self.no_cong_cnt = 0;
            }
        } else {
            return;
        }
        self.eval_call_cnt = 0;
        self.rtt_cnt = 0;
        self.rtt_max_rate = 0;
        tp.cwnd = tp.cwnd.max(self.p.min_cwnd);
    }
}

impl CongestionControl for Nv {
    fn name(&self) -> &'static str {
        "nv"
    }

    /// `tcpnv_init`.
    fn init(&mut self, tp: &mut TcpState) {
        self.reset_state(tp);
        self.allow_cwnd_growth = true;
        self.min_rtt_reset_at = tp.now + secs(2);
        self.min_rtt = INIT_RTT;
        self.min_rtt_new = INIT_RTT;
        self.nv_min_cwnd = NV_MIN_CWND;
        self.catchup = false;
        self.cwnd_growth_factor = 0;
    }

    /// `tcpnv_cong_avoid`.
    fn cong_avoid(&mut self, tp: &mut TcpState, sample: &AckSample) {
        if !self.allow_cwnd_growth {
            return;
        }
        let mut acked = sample.acked_sacked;
        if tp.in_slow_start() {
            acked = slow_start(tp, acked);
            if acked == 0 {
                return;
            }
        }
        let cnt = if self.cwnd_growth_factor < 0 {
            tp.cwnd.saturating_mul(1 << (-self.cwnd_growth_factor).min(31))
        } else {
            (tp.cwnd >> self.cwnd_growth_factor.min(31)).max(4)
        };
        cong_avoid_ai(tp, cnt, acked);
    }

    /// `tcpnv_recalc_ssthresh`.
    fn ssthresh(&mut self, tp: &mut TcpState) -> u32 {
        self.loss_cwnd = tp.cwnd;
        ((tp.cwnd as u64 * self.p.loss_dec_factor as u64) >> 10).max(2) as u32
    }

    /// `tcpnv_undo_cwnd`.
    fn undo_cwnd(&mut self, tp: &mut TcpState) -> u32 {
        tp.cwnd.max(self.loss_cwnd)
    }

    /// `tcpnv_state`.
    fn set_state(&mut self, tp: &mut TcpState, new_state: CaState) {
        match new_state {
            CaState::Open if self.reset => self.reset_state(tp),
            CaState::Loss | CaState::Cwr | CaState::Recovery => {
                self.reset = true;
                self.allow_cwnd_growth = false;
                if new_state == CaState::Loss {
                    self.cwnd_growth_factor = self.cwnd_growth_factor.min(0);
                    if self.p.cwnd_growth_rate_neg > 0 && self.cwnd_growth_factor > -8 {
                        self.cwnd_growth_factor -= 1;
                    }
                }
            }
            _ => {}
        }
    }

    /// `tcpnv_acked`.
    fn pkts_acked(&mut self, tp: &mut TcpState, sample: &AckSample) {
        let Some(rtt) = sample.rs.rtt else { return };
        if !matches!(tp.ca_state, CaState::Open | CaState::Disorder) {
            return;
        }
        if self.catchup && tp.cwnd >= self.p.min_cwnd {
            self.catchup = false;
            self.allow_cwnd_growth = false;
        }
        let bytes_acked = tp.delivered.saturating_sub(self.last_delivered) * tp.mss as u64;
        self.last_delivered = tp.delivered;
        // Linux: in_flight = mss · (delivered − prior_delivered) of the sampled packet.
        let in_flight = tp.mss as u64 * tp.delivered.saturating_sub(sample.rs.prior_delivered);
        if in_flight == 0 {
            return;
        }
        let rtt_us = to_us(rtt).max(1);
        let avg_rtt = if self.p.rtt_factor > 0 {
            let avg = if self.last_rtt > 0 {
                ((rtt_us as u64 * self.p.rtt_factor as u64 + self.last_rtt as u64 * (256 - self.p.rtt_factor) as u64) >> 8)
                    as u32
            } else {
                self.min_rtt = rtt_us.saturating_mul(2);
                rtt_us
            };
            self.last_rtt = avg;
            avg
        } else {
            rtt_us
        }
        .max(1);
        // Rate in 100 bit/s: in_flight bytes · 8e6 / (avg_rtt µs · 100).
        let rate = (in_flight * 8_000_000 / (avg_rtt as u64 * 100)).min(u32::MAX as u64) as u32;
        self.rtt_max_rate = self.rtt_max_rate.max(rate);
        self.eval_call_cnt = (self.eval_call_cnt + 1).min(255);
        self.min_rtt = self.min_rtt.min(avg_rtt);
        self.min_rtt_new = self.min_rtt_new.min(avg_rtt);
        if tp.now >= self.min_rtt_reset_at {
            // Re-learn the min RTT every reset_period · [3/4, 5/4).
            self.min_rtt = self.min_rtt_new;
            self.min_rtt_new = INIT_RTT;
            let r: u64 = tp.rng.gen_range(0..256);
            self.min_rtt_reset_at = tp.now + secs(self.p.reset_period_s as u64) * (384 + r) / 512;
            self.nv_min_cwnd = (self.nv_min_cwnd / 2).max(NV_MIN_CWND);
        }
        if self.round.update(&sample.rs, tp.delivered) {
            self.end_of_round(tp, bytes_acked);
        }
    }

    fn metrics(&self, tp: &TcpState) -> CcMetrics {
        let state = if tp.in_slow_start() {
            phase(tp)
        } else if self.allow_cwnd_growth {
            "grow"
        } else {
            "hold"
        };
        CcMetrics { state, ..Default::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testing::TimelineHarness;
    use crate::units::ms;

    fn nv(cwnd: u32, rtt_ms: u64, pps: f64) -> TimelineHarness {
        TimelineHarness::in_cong_avoid(Box::new(Nv::new(Params::default())), cwnd, ms(rtt_ms)).with_bottleneck_pps(pps)
    }

    #[test]
    fn below_the_rate_window_it_grows_as_reno() {
        // 10 000 packets/s × 20 ms = 200 packets of BDP: at cwnd 50 the window the
        // rate needs is cwnd itself (no queue), max_win = 50 + 10: room to grow;
        // +1 per round as Reno (growth factor 0).
        let mut h = nv(50, 20, 10_000.0);
        h.run_rounds(10);
        assert!((58..=60).contains(&h.tp().cwnd), "cwnd {}", h.tp().cwnd);
    }

    #[test]
    fn a_queue_above_pad_cuts_thirty_percent_of_the_excess() {
        // 1000 packets/s × 20 ms = BDP 20 packets; cwnd 100 keeps ~80 queued, the
        // RTT grows to ~100 ms, but the rate stays 1000/s: max_win = 20 + 10 = 30
        // (with min RTT 20 ms) → after enough samples cwnd −= 30%·(cwnd − 30).
        let mut h = nv(100, 20, 1000.0);
        let mut cut = None;
        for _ in 0..20 {
            let before = h.tp().cwnd;
            h.run_rounds(1);
            if h.tp().cwnd < before {
                cut = Some((before, h.tp().cwnd));
                break;
            }
        }
        let (before, after) = cut.expect("NV never cut a window 3× the BDP + pad");
        let expect = before - (before - 30) * 38 / 128;
        assert!(after.abs_diff(expect) <= 6, "cwnd {before} → {after}, expected ≈ {expect}");
        assert_eq!(h.cca().metrics(h.tp()).state, "hold");
        assert_eq!(h.tp().lost, 0, "before any loss");
    }

    #[test]
    fn a_loss_halves() {
        let mut h = nv(100, 20, 100_000.0);
        assert_eq!(h.loss_at_full_window(), 50);
    }
}
