//! HyStart: hybrid slow start, as Linux CUBIC runs it (`net/ipv4/tcp_cubic.c`,
//! `hystart_update`, `bictcp_hystart_reset`, `hystart_ack_delay`).
//!
//! Reference: S. Ha and I. Rhee, "Taming the Elephants: New TCP Slow Start",
//! Computer Networks 55(9), 2011 (NCSU tech report 2008). This is the original
//! HyStart of Linux, not HyStart++ (RFC 9406).
//!
//! Slow start is left (ssthresh := cwnd, before any loss) when, within one round
//! trip, either
//!
//! * **ACK train**: ACKs keep arriving closely spaced (≤ `ack_delta_us` apart) for
//!   longer than half the minimum delay since the round began — the pipe is full;
//! * **delay increase**: the minimum RTT of the round's first [`HYSTART_MIN_SAMPLES`]
//!   samples exceeds the path's minimum delay by `clamp(delay_min / 8, 4 ms, 16 ms)`
//!   — a queue is building.
//!
//! Only cwnds of at least `low_window` packets are examined. The caller (the CCA)
//! owns `delay_min` and decides when to call [`HyStart::update`] (Linux: when not yet
//! found, in slow start, and HyStart is enabled).
//!
//! Deviation: Linux marks a round with sequence numbers (`end_seq = snd_nxt`, a round
//! ends when `snd_una` passes it). The CCA sees no sequence numbers here, so a round
//! ends — as for BBR's packet-timed rounds — when an ACK delivers a packet that was
//! sent after the round began, i.e. whose `rs.prior_delivered` is at least
//! `tp.delivered` at the reset. Without reordering the two are the same.

use crate::cc::{AckSample, TcpState};
use crate::units::NS_PER_US;

/// `HYSTART_ACK_TRAIN`: detection by ACK-train length.
pub const HYSTART_ACK_TRAIN: u8 = 0x1;
/// `HYSTART_DELAY`: detection by RTT increase.
pub const HYSTART_DELAY: u8 = 0x2;

/// Delay samples taken at the start of each round before the delay test runs
/// (`HYSTART_MIN_SAMPLES`): the minimum of 8 samples filters out ACK-compression
/// and delayed-ACK noise.
pub const HYSTART_MIN_SAMPLES: u8 = 8;
/// Lower bound of the delay-increase threshold, µs (`HYSTART_DELAY_MIN`, 4 ms): below
/// it, normal jitter of short-RTT paths would end slow start far too early.
pub const HYSTART_DELAY_MIN_US: u32 = 4_000;
/// Upper bound of the delay-increase threshold, µs (`HYSTART_DELAY_MAX`, 16 ms): on
/// long paths delay_min/8 would let a large queue build before exiting.
pub const HYSTART_DELAY_MAX_US: u32 = 16_000;
/// Default `hystart_low_window` (packets): below 16 packets slow start overshoots
/// little, and the few ACKs per round make both detectors unreliable.
pub const HYSTART_LOW_WINDOW: u32 = 16;
/// Default `hystart_ack_delta_us`: ACKs at most 2 ms apart belong to one train.
pub const HYSTART_ACK_DELTA_US: u32 = 2_000;
/// `sk_gso_max_size` assumed by `hystart_ack_delay` (bytes): Linux's default
/// `GSO_LEGACY_MAX_SIZE`. The simulator models no TSO/GRO, but keeping Linux's
/// cushion keeps the ACK-train threshold (and so the exit point) the same as Linux's.
pub const GSO_MAX_SIZE_BYTES: u64 = 65_536;
/// Cap of the TSO/GRO cushion in `hystart_ack_delay`: 1 ms (`USEC_PER_MSEC`).
const ACK_DELAY_CAP_US: u64 = 1_000;

/// Which detector ended slow start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HyStartExit {
    AckTrain,
    Delay,
}

/// HyStart settings (Linux's `hystart_detect`, `hystart_low_window`,
/// `hystart_ack_delta_us` module parameters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HyStartConfig {
    /// Bit set of [`HYSTART_ACK_TRAIN`] and [`HYSTART_DELAY`].
    pub detect: u8,
    /// Only cwnds of at least this many packets are examined.
    pub low_window: u32,
    /// Maximum spacing of two ACKs of one train, µs.
    pub ack_delta_us: u32,
}

impl Default for HyStartConfig {
    fn default() -> Self {
        Self {
            detect: HYSTART_ACK_TRAIN | HYSTART_DELAY,
            low_window: HYSTART_LOW_WINDOW,
            ack_delta_us: HYSTART_ACK_DELTA_US,
        }
    }
}

/// HyStart state of one flow (the HyStart fields of Linux `struct bictcp`).
#[derive(Debug, Clone)]
pub struct HyStart {
    cfg: HyStartConfig,
    /// An exit point was found (`found`); no further detection until [`HyStart::clear_found`].
    found: bool,
    /// `tp.delivered` when the current round began (stands in for `end_seq`).
    round_end_delivered: u64,
    /// Start of the current round, µs clock (`round_start`).
    round_start_us: u32,
    /// Time of the last ACK of the current train, µs clock (`last_ack`).
    last_ack_us: u32,
    /// Minimum RTT of the current round's first samples, µs (`curr_rtt`).
    curr_rtt_us: u32,
    /// Samples taken this round (`sample_cnt`).
    sample_cnt: u8,
}

/// Linux's `bictcp_clock_us`: `tcp_mstamp` (µs) truncated to 32 bits. All
/// comparisons on it use wrapping (`(s32)(a - b)`) arithmetic, as Linux does.
pub fn clock_us(tp: &TcpState) -> u32 {
    (tp.now / NS_PER_US) as u32
}

impl HyStart {
    pub fn new(cfg: HyStartConfig) -> Self {
        Self {
            cfg,
            found: false,
            round_end_delivered: 0,
            round_start_us: 0,
            last_ack_us: 0,
            curr_rtt_us: u32::MAX,
            sample_cnt: 0,
        }
    }

    pub fn config(&self) -> &HyStartConfig {
        &self.cfg
    }

    /// Whether an exit point has been found since the last [`HyStart::clear_found`].
    pub fn found(&self) -> bool {
        self.found
    }

    /// Forget a found exit point (Linux `bictcp_reset` clears `found`).
    pub fn clear_found(&mut self) {
        self.found = false;
    }

    /// Begin a new round now (`bictcp_hystart_reset`).
    pub fn reset(&mut self, tp: &TcpState) {
        let now = clock_us(tp);
        self.round_start_us = now;
        self.last_ack_us = now;
        self.round_end_delivered = tp.delivered;
        self.curr_rtt_us = u32::MAX;
        self.sample_cnt = 0;
    }

    /// `hystart_update`: feed one ACK's delay sample `delay_us` (> 0) given the
    /// flow's minimum delay `delay_min_us`. On detection sets `tp.ssthresh = tp.cwnd`
    /// (leaving slow start) and returns which detector fired.
    pub fn update(
        &mut self,
        tp: &mut TcpState,
        sample: &AckSample,
        delay_us: u32,
        delay_min_us: u32,
    ) -> Option<HyStartExit> {
        // A round ends when a packet sent after it began is delivered.
        if sample.rs.acked_sacked > 0 && sample.rs.prior_delivered >= self.round_end_delivered {
            self.reset(tp);
        }
        if tp.cwnd < self.cfg.low_window {
            return None;
        }
        let mut exit = None;
        if self.cfg.detect & HYSTART_ACK_TRAIN != 0 {
            let now = clock_us(tp);
            if now.wrapping_sub(self.last_ack_us) as i32 <= self.cfg.ack_delta_us as i32 {
                self.last_ack_us = now;
                let mut threshold = delay_min_us.wrapping_add(ack_delay_us(tp));
                // The train must last half the minimum delay; with pacing, packets
                // may have been spread over up to RTT/2 already, so the full delay.
                if !tp.pacing_enabled {
                    threshold >>= 1;
                }
                if now.wrapping_sub(self.round_start_us) as i32 > threshold as i32 {
                    self.found = true;
                    tp.ssthresh = tp.cwnd;
                    exit = Some(HyStartExit::AckTrain);
                }
            }
        }
        if self.cfg.detect & HYSTART_DELAY != 0 {
            self.curr_rtt_us = self.curr_rtt_us.min(delay_us);
            if self.sample_cnt < HYSTART_MIN_SAMPLES {
                self.sample_cnt += 1;
            } else {
                let thresh = (delay_min_us >> 3).clamp(HYSTART_DELAY_MIN_US, HYSTART_DELAY_MAX_US);
                if self.curr_rtt_us > delay_min_us.saturating_add(thresh) {
                    self.found = true;
                    tp.ssthresh = tp.cwnd;
                    exit = Some(HyStartExit::Delay);
                }
            }
        }
        exit
    }
}

/// `hystart_ack_delay`: a cushion for TSO/GRO aggregation delay, µs: the time to
/// send four GSO-sized bursts at the pacing rate, capped at 1 ms; 0 without a rate.
pub fn ack_delay_us(tp: &TcpState) -> u32 {
    if tp.pacing_rate == 0 {
        return 0;
    }
    let us = (GSO_MAX_SIZE_BYTES * 4 * 1_000_000) / tp.pacing_rate;
    us.min(ACK_DELAY_CAP_US) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testing::tcp_state;
    use crate::cc::RateSample;
    use crate::units::ms;

    fn ack(prior_delivered: u64) -> AckSample {
        AckSample {
            acked_sacked: 1,
            rs: RateSample { prior_delivered, acked_sacked: 1, ..Default::default() },
            ..Default::default()
        }
    }

    #[test]
    fn update_delay_increase_sets_ssthresh_after_min_samples() {
        let mut tp = tcp_state(1448, 32);
        tp.pacing_rate = 0;
        let mut hs = HyStart::new(HyStartConfig { detect: HYSTART_DELAY, ..Default::default() });
        tp.delivered = 100; // packets acked below were sent before the round began
        hs.reset(&tp);
        // delay_min 40 ms -> threshold clamp(5 ms, 4, 16) = 5 ms; samples of 46 ms.
        for i in 0..HYSTART_MIN_SAMPLES {
            assert_eq!(hs.update(&mut tp, &ack(50), 46_000, 40_000), None, "sample {i}");
        }
        assert_eq!(tp.ssthresh, crate::cc::INFINITE_SSTHRESH);
        assert_eq!(hs.update(&mut tp, &ack(50), 46_000, 40_000), Some(HyStartExit::Delay));
        assert_eq!(tp.ssthresh, 32);
        assert!(hs.found());
    }

    #[test]
    fn update_small_delay_increase_is_ignored() {
        let mut tp = tcp_state(1448, 32);
        let mut hs = HyStart::new(HyStartConfig { detect: HYSTART_DELAY, ..Default::default() });
        tp.delivered = 100; // packets acked below were sent before the round began
        hs.reset(&tp);
        // 3.9 ms above a 10 ms minimum is below the 4 ms floor of the threshold.
        for _ in 0..20 {
            assert_eq!(hs.update(&mut tp, &ack(50), 13_900, 10_000), None);
        }
        assert_eq!(tp.ssthresh, crate::cc::INFINITE_SSTHRESH);
    }

    #[test]
    fn update_ack_train_longer_than_half_delay_min_exits() {
        let mut tp = tcp_state(1448, 20);
        tp.pacing_rate = 0;
        let mut hs = HyStart::new(HyStartConfig { detect: HYSTART_ACK_TRAIN, ..Default::default() });
        tp.delivered = 100; // packets acked below were sent before the round began
        hs.reset(&tp);
        // delay_min 10 ms: a train of ACKs 1 ms apart exits once it spans > 5 ms.
        let mut exit_at = None;
        for i in 1..=10u64 {
            tp.now = ms(i);
            if hs.update(&mut tp, &ack(50), 10_000, 10_000).is_some() {
                exit_at = Some(i);
                break;
            }
        }
        assert_eq!(exit_at, Some(6), "train of 6 ms > 5 ms");
        assert_eq!(tp.ssthresh, 20);
    }

    #[test]
    fn update_below_low_window_never_exits() {
        let mut tp = tcp_state(1448, HYSTART_LOW_WINDOW - 1);
        let mut hs = HyStart::new(HyStartConfig::default());
        tp.delivered = 100; // packets acked below were sent before the round began
        hs.reset(&tp);
        for i in 1..=50u64 {
            tp.now = ms(i);
            assert_eq!(hs.update(&mut tp, &ack(50), 100_000, 10_000), None);
        }
    }
}
