//! TCP Hybla: removes Reno's bias against long-RTT (satellite) paths by making the
//! window grow per unit of *time* like a Reno flow with a reference RTT, RTT₀ =
//! 25 ms. With ρ = RTT/RTT₀ (at least 1), per ACK:
//!
//! ```text
//!   slow start:              cwnd += 2^ρ − 1
//!   congestion avoidance:    cwnd += ρ² / cwnd
//! ```
//!
//! so a flow on a 600 ms path (ρ = 24) gains ρ² = 576 packets per RTT, i.e. 24
//! packets per 25 ms — Reno's rate of growth at RTT₀ in time. Loss response is
//! Reno's; in any state other than Open the increase is Reno's.
//!
//! References: C. Caini, R. Firrincieli, "TCP Hybla: a TCP enhancement for
//! heterogeneous networks", Int. J. Satellite Communications and Networking
//! 22(5), 2004; Linux `net/ipv4/tcp_hybla.c`.
//!
//! Parameters (Linux module default): `rtt0_ms` = 25. Constants as Linux: ρ is
//! kept ×8 and ρ² ×128 (3 and 7 fractional bits), 2^(fraction of ρ) comes from an
//! 8-entry table ×128, increments below one packet accumulate in `snd_cwnd_cents`
//! (×128), and the slow-start exponent is capped at 16 (2^16 per ACK is already
//! far beyond any window) so it cannot overflow; cwnd_clamp is 65535 as in Linux.
//!
//! Linux's `init` runs after the handshake, when srtt holds the SYN's RTT, and sets
//! cwnd = ρ; so does this one for a flow that opened with a handshake (finite flows
//! by default, `tcp::handshake`). Deviation: a flow without a handshake has no RTT at
//! `init`, so ρ is first computed from the first srtt (in `cong_avoid`) and the
//! initial window is the configured one.

use serde::{Deserialize, Serialize};

use super::common::classic::{phase, reno_cong_avoid, reno_ssthresh};
use super::common::clock::to_us;
use super::registry::{describe_params, parse_params, CcaInfo};
use super::{AckSample, BoxedCca, CaState, CcMetrics, CongestionControl, TcpState};

/// 2^(k/8) × 128 for k = 0..7 (`hybla_fraction`).
const FRACTIONS: [u32; 8] = [128, 139, 152, 165, 181, 197, 215, 234];
/// Linux sets `snd_cwnd_clamp = 65535` in `hybla_init`.
const CWND_CLAMP: u32 = 65_535;
/// Cap on the integer part of ρ in 2^ρ (Linux `min(ca->rho, 16U)`).
const MAX_RHO_EXPONENT: u32 = 16;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    pub rtt0_ms: u32,
}

impl Default for Params {
    fn default() -> Self {
        Self { rtt0_ms: 25 }
    }
}

const PARAM_DOCS: &[(&str, &str)] = &[("rtt0_ms", "reference RTT RTT₀ in ms: flows grow in time as Reno would at RTT₀ (Linux 25)")];

pub const INFO: CcaInfo = CcaInfo {
    name: "hybla",
    family: "loss",
    summary: "Hybla: Reno growth scaled by (RTT/25 ms) for long-delay paths (Linux tcp_hybla.c)",
    reference: "Caini & Firrincieli, Int. J. Satell. Commun. Netw. 22(5) 2004; Linux net/ipv4/tcp_hybla.c",
    params: || describe_params::<Params>(PARAM_DOCS),
    build: |v| {
        let p: Params = parse_params("hybla", v)?;
        if p.rtt0_ms == 0 {
            return Err("parameters of CCA 'hybla': rtt0_ms must be >= 1".into());
        }
        Ok(Box::new(Hybla::new(p)) as BoxedCca)
    },
};

/// `struct hybla`.
#[derive(Debug, Clone)]
pub struct Hybla {
    p: Params,
    hybla_en: bool,
    snd_cwnd_cents: u32,
    rho: u32,
    rho2: u32,
    rho_3ls: u32,
    rho2_7ls: u32,
    /// Smallest srtt seen (µs); `u32::MAX` before the first.
    minrtt_us: u32,
}

impl Hybla {
    pub fn new(p: Params) -> Self {
        Self { p, hybla_en: true, snd_cwnd_cents: 0, rho: 0, rho2: 0, rho_3ls: 0, rho2_7ls: 0, minrtt_us: u32::MAX }
    }

    /// ρ as a real number (×8 precision).
    pub fn rho(&self) -> f64 {
        self.rho_3ls as f64 / 8.0
    }

    /// `hybla_recalc_param`: ρ = srtt/RTT₀, at least 1.
    fn recalc(&mut self, srtt_us: u32) {
        self.rho_3ls = ((srtt_us as u64 * 8) / (self.p.rtt0_ms as u64 * 1000)).max(8) as u32;
        self.rho = self.rho_3ls >> 3;
        self.rho2_7ls = (self.rho_3ls * self.rho_3ls) << 1;
        self.rho2 = self.rho2_7ls >> 7;
    }
}

impl CongestionControl for Hybla {
    fn name(&self) -> &'static str {
        "hybla"
    }

    fn init(&mut self, tp: &mut TcpState) {
        *self = Self::new(self.p.clone());
        tp.cwnd_clamp = tp.cwnd_clamp.min(CWND_CLAMP);
        tp.cwnd = tp.cwnd.min(tp.cwnd_clamp);
        if tp.srtt > 0 {
            // `hybla_init`: the first ρ from the handshake's srtt, cwnd = ρ.
            let srtt_us = to_us(tp.srtt);
            self.recalc(srtt_us);
            self.minrtt_us = srtt_us;
            tp.cwnd = self.rho.clamp(1, tp.cwnd_clamp);
        }
    }

    fn ssthresh(&mut self, tp: &mut TcpState) -> u32 {
        reno_ssthresh(tp)
    }

    /// `hybla_state`: Hybla's increase only in Open.
    fn set_state(&mut self, _tp: &mut TcpState, new_state: CaState) {
        self.hybla_en = new_state == CaState::Open;
    }

    /// `hybla_cong_avoid`.
    fn cong_avoid(&mut self, tp: &mut TcpState, sample: &AckSample) {
        let srtt_us = to_us(tp.srtt);
        if tp.srtt > 0 && srtt_us < self.minrtt_us {
            self.recalc(srtt_us);
            self.minrtt_us = srtt_us;
        }
        if !self.hybla_en || self.rho == 0 {
            // Reno (no RTT yet, or not in Open).
            reno_cong_avoid(tp, sample.acked_sacked);
            return;
        }
        let rho_fractions = self.rho_3ls - (self.rho << 3);
        let is_slow_start = tp.in_slow_start();
        let increment = if is_slow_start {
            // 2^ρ − 1, ×128: 2^int · 2^frac(×128) − 128.
            (1u32 << self.rho.min(MAX_RHO_EXPONENT)) * FRACTIONS[rho_fractions as usize] - 128
        } else {
            // ρ²/cwnd, ×128.
            let inc = self.rho2_7ls / tp.cwnd;
            if inc < 128 {
                tp.cwnd_cnt += 1;
            }
            inc
        };
        let odd = increment % 128;
        tp.cwnd = tp.cwnd.saturating_add(increment >> 7);
        self.snd_cwnd_cents += odd;
        while self.snd_cwnd_cents >= 128 {
            tp.cwnd += 1;
            self.snd_cwnd_cents -= 128;
            tp.cwnd_cnt = 0;
        }
        if is_slow_start {
            tp.cwnd = tp.cwnd.min(tp.ssthresh);
        }
        tp.cwnd = tp.cwnd.min(tp.cwnd_clamp);
    }

    fn metrics(&self, tp: &TcpState) -> CcMetrics {
        CcMetrics { state: phase(tp), ..Default::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::reno::Reno;
    use crate::cc::testing::TimelineHarness;
    use crate::units::ms;

    fn harness(cca: BoxedCca, cwnd: u32, rtt_ms: u64) -> TimelineHarness {
        TimelineHarness::in_cong_avoid(cca, cwnd, ms(rtt_ms))
    }

    /// `hybla_init` after a handshake: ρ from the SYN's srtt, cwnd = ρ (200 ms / 25 ms = 8).
    #[test]
    fn init_after_a_handshake_starts_at_rho() {
        let mut tp = crate::cc::testing::tcp_state(1448, 10);
        tp.srtt = ms(200);
        let mut hy = Hybla::new(Params::default());
        hy.init(&mut tp);
        assert_eq!((hy.rho, tp.cwnd), (8, 8));
        let mut tp = crate::cc::testing::tcp_state(1448, 10);
        hy.init(&mut tp);
        assert_eq!((hy.rho, tp.cwnd), (0, 10), "no RTT yet: the configured window");
    }

    #[test]
    fn at_rtt0_hybla_is_reno() {
        // Differential: RTT = RTT₀ → ρ = 1, ρ² = 1: +1/cwnd per ACK, Reno's +1 per
        // RTT. Linux counts it in 1/128ths truncated per ACK (128/cwnd: 6 at cwnd 20,
        // i.e. 21.3 ACKs per packet; 4 at cwnd 27, 32 ACKs), so Hybla lags Reno a
        // little, never leads it: over 10 rounds from 20 Reno reaches 30.
        let mut hy = harness(Box::new(Hybla::new(Params::default())), 20, 25);
        let mut re = harness(Box::new(Reno), 20, 25);
        for _ in 0..10 {
            hy.run_rounds(1);
            re.run_rounds(1);
            assert!(hy.tp().cwnd <= re.tp().cwnd, "hybla {} reno {}", hy.tp().cwnd, re.tp().cwnd);
        }
        assert_eq!(re.tp().cwnd, 30);
        assert!(hy.tp().cwnd >= 27, "hybla {} after 10 rounds", hy.tp().cwnd);
        // Slow start too: 2^1 − 1 = +1 per ACK, doubling per RTT.
        let mut hy = TimelineHarness::new(Box::new(Hybla::new(Params::default())), 1448, 10).with_rtt(ms(25));
        hy.run_rounds(3);
        assert!((70..=80).contains(&hy.tp().cwnd), "cwnd {} after 3 slow-start rounds", hy.tp().cwnd);
    }

    #[test]
    fn congestion_avoidance_scales_with_rho_squared() {
        // RTT 100 ms = 4·RTT₀: ρ = 4, ρ² = 16 → +16 packets per RTT, the same growth
        // per 25 ms as Reno at RTT₀. In Linux's fixed point the per-ACK increment is
        // ρ²·128/cwnd truncated (2048/214 = 9, not 9.57), so 14–16 per RTT.
        let mut h = harness(Box::new(Hybla::new(Params::default())), 200, 100);
        h.run_rounds(2);
        let c = h.tp().cwnd;
        h.run_rounds(1);
        let step = h.tp().cwnd - c;
        assert!((14..=16).contains(&step), "step {step}");
    }

    #[test]
    fn rho_from_srtt_with_three_fraction_bits() {
        // srtt 60 ms / 25 ms = 2.4 → ρ×8 = 19 (2.375), ρ = 2, ρ²×128 = 19²·2 = 722.
        let mut c = Hybla::new(Params::default());
        c.recalc(60_000);
        assert_eq!((c.rho_3ls, c.rho, c.rho2_7ls, c.rho2), (19, 2, 722, 5));
        // Below RTT₀, ρ is 1 (never slower than Reno).
        c.recalc(10_000);
        assert_eq!(c.rho(), 1.0);
    }
}
