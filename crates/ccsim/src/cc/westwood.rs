//! TCP Westwood+: Reno whose loss response uses an end-to-end bandwidth estimate.
//! The sender counts the bytes acknowledged over each RTT, low-pass filters the
//! rate twice (7/8 weights), and after a loss sets ssthresh (and, at the end of
//! recovery, cwnd) to the estimated bandwidth × the minimum RTT — the pipe size
//! the flow had, instead of half the window. That keeps a flow on a lossy
//! (wireless) link from backing off for losses that were not congestion.
//!
//! References: S. Mascolo, C. Casetti, M. Gerla, M. Sanadidi, R. Wang, "TCP
//! Westwood: Bandwidth Estimation for Enhanced Transport over Wireless Links",
//! ACM MobiCom 2001; L. Grieco, S. Mascolo, "Performance evaluation and comparison
//! of Westwood+, New Reno, and Vegas TCP congestion control", ACM CCR 34(2), 2004
//! (the "+": one sample per RTT); Linux `net/ipv4/tcp_westwood.c`.
//!
//! Parameters: none (Linux has none). Constants as Linux: the estimate is sampled
//! at most once per max(RTT, 50 ms) (`TCP_WESTWOOD_RTT_MIN`: shorter intervals are
//! too noisy); before any RTT sample the RTT is taken as 20 s
//! (`TCP_WESTWOOD_INIT_RTT`, deliberately conservative); the filter weights are
//! 7/8 (`westwood_do_filter`); the window set from the estimate is at least 2.
//! Clocks are jiffies of the host's `CONFIG_HZ` (`TcpState::hz`, 250 by default).
//!
//! Deviation: Linux counts acknowledged bytes from `snd_una` advances, with a
//! per-dupack MSS credit that later ACKs pay back (`westwood_acked_count`); here
//! the sender's delivered count (cumulatively acked + SACKed packets × MSS) is
//! used, which is the quantity that heuristic approximates.

use serde::{Deserialize, Serialize};

use super::common::classic::{phase, reno_cong_avoid, reno_ssthresh};
use super::common::clock::{jiffies, to_jiffies_ceil};
use super::registry::{describe_params, parse_params, CcaInfo};
use super::{AckSample, BoxedCca, CaEvent, CcMetrics, CongestionControl, TcpState};

/// Shortest sampling interval (`TCP_WESTWOOD_RTT_MIN` = HZ/20 jiffies = 50 ms).
fn rtt_min_jiffies(hz: u32) -> u32 {
    hz / 20
}
/// RTT assumed before the first sample (`TCP_WESTWOOD_INIT_RTT` = 20·HZ jiffies = 20 s).
fn init_rtt_jiffies(hz: u32) -> u32 {
    20 * hz
}
/// HZ before `init` (the engine's hosts set theirs at init).
const DEFAULT_HZ: u32 = 1000;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {}

pub const INFO: CcaInfo = CcaInfo {
    name: "westwood",
    family: "loss",
    summary: "Westwood+: Reno with ssthresh = bandwidth estimate × min RTT after a loss (Linux tcp_westwood.c)",
    reference: "Mascolo et al., ACM MobiCom 2001; Grieco & Mascolo, ACM CCR 34(2) 2004; Linux net/ipv4/tcp_westwood.c",
    params: || describe_params::<Params>(&[]),
    build: |v| {
        let _: Params = parse_params("westwood", v)?;
        Ok(Box::new(Westwood::default()) as BoxedCca)
    },
};

/// `struct westwood`. Bandwidth in bytes per jiffy, times in jiffies of the host's HZ.
#[derive(Debug, Clone)]
pub struct Westwood {
    /// The host's `CONFIG_HZ` (from `TcpState::hz` at init).
    hz: u32,
    bw_ns_est: u32,
    bw_est: u32,
    rtt_win_sx: u32,
    bk: u32,
    rtt: u32,
    rtt_min: u32,
    first_ack: bool,
    reset_rtt_min: bool,
}

impl Default for Westwood {
    fn default() -> Self {
        Self::with_hz(DEFAULT_HZ)
    }
}

impl Westwood {
    fn with_hz(hz: u32) -> Self {
        Self {
            hz,
            bw_ns_est: 0,
            bw_est: 0,
            rtt_win_sx: 0,
            bk: 0,
            rtt: init_rtt_jiffies(hz),
            rtt_min: init_rtt_jiffies(hz),
            first_ack: true,
            reset_rtt_min: true,
        }
    }

    /// The filtered bandwidth estimate, bytes per second.
    pub fn bw_bytes_per_sec(&self) -> u64 {
        self.bw_est as u64 * self.hz as u64
    }

    /// `westwood_filter`: two cascaded 7/8 low-pass filters; the first sample
    /// initializes both.
    fn filter(&mut self, delta: u32) {
        let sample = self.bk / delta;
        if self.bw_est == 0 && self.bw_ns_est == 0 {
            self.bw_ns_est = sample;
            self.bw_est = sample;
        } else {
            self.bw_ns_est = ((7 * self.bw_ns_est as u64 + sample as u64) >> 3) as u32;
            self.bw_est = ((7 * self.bw_est as u64 + self.bw_ns_est as u64) >> 3) as u32;
        }
    }

    /// `westwood_update_window`: close the sample once an RTT (≥ 50 ms) has passed.
    fn update_window(&mut self, now: u32) {
        let delta = now.wrapping_sub(self.rtt_win_sx);
        if self.first_ack && delta > 0 {
            self.first_ack = false;
        }
        if self.rtt > 0 && delta > self.rtt.max(rtt_min_jiffies(self.hz)) {
            self.filter(delta);
            self.bk = 0;
            self.rtt_win_sx = now;
        }
    }

    fn update_rtt_min(&mut self) {
        if self.reset_rtt_min {
            self.rtt_min = self.rtt;
            self.reset_rtt_min = false;
        } else {
            self.rtt_min = self.rtt_min.min(self.rtt);
        }
    }

    /// `westwood_bw_rttmin`: bandwidth × RTT_min in packets, at least 2.
    fn bw_rttmin(&self, tp: &TcpState) -> u32 {
        ((self.bw_est as u64 * self.rtt_min as u64 / tp.mss.max(1) as u64).min(u32::MAX as u64) as u32).max(2)
    }
}

impl CongestionControl for Westwood {
    fn name(&self) -> &'static str {
        "westwood"
    }

    fn init(&mut self, tp: &mut TcpState) {
        *self = Self::with_hz(tp.hz);
        self.rtt_win_sx = jiffies(tp.now, tp.hz);
    }

    fn ssthresh(&mut self, tp: &mut TcpState) -> u32 {
        reno_ssthresh(tp)
    }

    /// `tcp_westwood_pkts_acked` (RTT) and `tcp_westwood_ack` (byte counting).
    fn pkts_acked(&mut self, tp: &mut TcpState, sample: &AckSample) {
        if let Some(rtt) = sample.rtt.filter(|&r| r > 0) {
            self.rtt = to_jiffies_ceil(rtt, tp.hz);
        }
        self.update_window(jiffies(tp.now, tp.hz));
        self.bk = self.bk.saturating_add(sample.acked_sacked.saturating_mul(tp.mss));
        self.update_rtt_min();
    }

    /// `tcp_reno_cong_avoid`.
    fn cong_avoid(&mut self, tp: &mut TcpState, sample: &AckSample) {
        reno_cong_avoid(tp, sample.acked_sacked);
    }

    /// `tcp_westwood_event`: the loss response.
    fn cwnd_event(&mut self, tp: &mut TcpState, event: CaEvent) {
        match event {
            CaEvent::CompleteCwr => {
                let w = self.bw_rttmin(tp).min(tp.cwnd_clamp);
                tp.cwnd = w;
                tp.ssthresh = w;
            }
            CaEvent::Loss => {
                tp.ssthresh = self.bw_rttmin(tp);
                // An RTO may follow a path change: relearn RTT_min.
                self.reset_rtt_min = true;
            }
            _ => {}
        }
    }

    fn metrics(&self, tp: &TcpState) -> CcMetrics {
        CcMetrics {
            state: phase(tp),
            bw_bps: Some(self.bw_bytes_per_sec() as f64 * 8.0),
            min_rtt_ns: Some(self.rtt_min as u64 * 1_000_000),
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testing::TimelineHarness;
    use crate::units::ms;

    #[test]
    fn loss_sets_window_to_bandwidth_times_min_rtt() {
        // Bottleneck 1000 packets/s, 100 ms RTT: BDP = 100 packets. Run in
        // congestion avoidance above the BDP so the queue holds the excess, then
        // lose one packet: Reno would halve cwnd (≈ 70); Westwood+ sets it to the
        // estimated rate × RTT_min = 1000 pkt/s × 0.1 s ≈ 100 packets (RTT_min is in
        // whole jiffies rounded up: 101 ms). The first sample spans the first RTT
        // without ACKs and starts the cascaded 7/8 filters low: after 60 samples the
        // residual is below 1% ((7/8)^60·60/8).
        let mut h = TimelineHarness::new(Box::new(Westwood::default()), 1448, 140)
            .with_rtt(ms(100))
            .with_bottleneck_pps(1000.0);
        h.tp_mut().ssthresh = 140;
        h.run_rounds(60);
        let cwnd = h.tp().cwnd;
        h.lose(1);
        assert_eq!(h.tp().ssthresh, cwnd / 2, "ssthresh() is Reno's");
        h.end_recovery();
        let w = h.tp().cwnd;
        assert!((95..=102).contains(&w), "cwnd after recovery {w}, expected ≈ BDP 100 (Reno: {})", cwnd / 2);
        assert_eq!(h.tp().ssthresh, w);
    }

    #[test]
    fn clocks_run_in_the_hosts_jiffies() {
        let mut w = Westwood::default();
        let mut tp = crate::cc::testing::tcp_state(1448, 10);
        tp.hz = 250;
        tp.now = ms(1000);
        w.init(&mut tp);
        assert_eq!((w.hz, w.rtt_win_sx, w.rtt), (250, 250, 5000), "20 s = 5000 jiffies at HZ 250");
        assert_eq!(rtt_min_jiffies(250), 12, "HZ/20: 48 ms at HZ 250");
        w.bw_est = 1000; // bytes per jiffy
        assert_eq!(w.bw_bytes_per_sec(), 250_000);
    }

    #[test]
    fn estimate_converges_to_the_delivery_rate() {
        let mut h = TimelineHarness::new(Box::new(Westwood::default()), 1000, 50)
            .with_rtt(ms(100))
            .with_bottleneck_pps(500.0);
        h.tp_mut().ssthresh = 50;
        h.run_rounds(40);
        // 500 packets/s × 1000 B = 500 kB/s = 4 Mbit/s, within the filters' lag.
        let bw = h.cca().metrics(h.tp()).bw_bps.unwrap();
        assert!((bw - 4e6).abs() < 0.05 * 4e6, "bw {bw} bit/s");
    }

    #[test]
    fn rto_sets_ssthresh_from_the_estimate() {
        let mut h = TimelineHarness::new(Box::new(Westwood::default()), 1448, 140)
            .with_rtt(ms(100))
            .with_bottleneck_pps(1000.0);
        h.tp_mut().ssthresh = 140;
        h.run_rounds(60);
        h.rto();
        assert_eq!(h.tp().cwnd, 1);
        assert!((95..=102).contains(&h.tp().ssthresh), "ssthresh {}", h.tp().ssthresh);
    }
}
