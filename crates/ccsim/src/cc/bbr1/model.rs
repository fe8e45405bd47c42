//! The path model: the max-bandwidth filter, the ACK-aggregation estimate, and
//! what is derived from bw × min_rtt (BDP, inflight targets with the quantization
//! budget, the pacing rate). Linux `bbr_update_bw`, `bbr_update_ack_aggregation`,
//! `bbr_bdp`, `bbr_inflight`, `bbr_quantization_budget`, `bbr_tso_segs_goal`,
//! `bbr_rate_bytes_per_sec`, `bbr_set_pacing_rate`.

use super::{Bbr1, Mode, BBR_SCALE, BBR_UNIT, BW_SCALE, BW_UNIT, TCP_INIT_CWND, USEC_PER_SEC};
use crate::cc::{RateSample, TcpState};
use crate::units::{Time, NS_PER_US};

/// Below this pacing rate (bits/s) Linux sends one packet per skb (`bbr_min_tso_rate`).
const MIN_TSO_RATE_BPS: u64 = 1_200_000;
/// `sk_pacing_shift` default (`sock_init_data`): an skb carries ~1/2^10 s of data.
const PACING_SHIFT: u32 = 10;
/// `GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER`: 65536 − 1 − 320, MAX_TCP_HEADER
/// being 320 bytes on a typical x86-64 distribution kernel.
const GSO_MAX_PAYLOAD: u64 = 65_536 - 1 - 320;
/// `bbr_tso_segs_goal` caps the goal at 0x7F segments.
const TSO_SEGS_MAX: u32 = 0x7F;
/// Period of the initial pacing rate when no RTT is known yet (`USEC_PER_MSEC`).
const NOMINAL_RTT_US: u64 = 1_000;
/// `ack_epoch_acked` is a 20-bit field in Linux; at this count the epoch restarts.
const ACK_EPOCH_ACKED_RESET_THRESH: u32 = 1 << 20;
/// `extra_acked_win_rtts` is a 5-bit field in Linux and saturates at 31.
const EXTRA_ACKED_WIN_RTTS_MAX: u32 = 0x1F;

/// Nanoseconds -> whole microseconds as a `u32` (Linux keeps RTTs in u32 µs).
pub(super) fn ns_to_us32(t: Time) -> u32 {
    (t / NS_PER_US).min(u32::MAX as u64) as u32
}

/// `tcp_stamp_us_delta(t1, t0)`: whole microseconds between two instants as a µs
/// clock would read them, never negative.
pub(super) fn stamp_us_delta(t1: Time, t0: Time) -> u64 {
    (t1 / NS_PER_US).saturating_sub(t0 / NS_PER_US)
}

impl Bbr1 {
    /// `bbr_max_bw`: the windowed max recent bandwidth, packets/µs << BW_SCALE.
    pub(super) fn max_bw(&self) -> u64 {
        self.bw.get()
    }

    /// `bbr_bw`: the estimate in use: the policed rate if one was detected.
    pub(super) fn bw(&self) -> u64 {
        if self.lt.use_bw {
            self.lt.bw
        } else {
            self.max_bw()
        }
    }

    /// `bbr_extra_acked`: max extra ACKed in the past k..2k rounds.
    fn extra_acked_max(&self) -> u32 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    /// `bbr_rate_bytes_per_sec`: packets/µs << BW_SCALE times a gain -> bytes/s,
    /// `pacing_margin_percent` below the estimate.
    pub(super) fn rate_bytes_per_sec(&self, mss: u32, rate: u64, gain: u32) -> u64 {
        // Same operation order as Linux (so the same truncations), in u128 so that
        // rates Linux could not hold in u64 (> 2.9 Tbit/s) do not wrap.
        let mut r = rate as u128 * mss as u128;
        r *= gain as u128;
        r >>= BBR_SCALE;
        r *= (USEC_PER_SEC / 100 * (100 - self.c.pacing_margin_percent)) as u128;
        (r >> BW_SCALE).min(u64::MAX as u128) as u64
    }

    /// `bbr_bw_to_pacing_rate`.
    // Deviation: no `sk_max_pacing_rate` cap (SO_MAX_PACING_RATE); unset in Linux
    // by default.
    fn bw_to_pacing_rate(&self, mss: u32, bw: u64, gain: u32) -> u64 {
        self.rate_bytes_per_sec(mss, bw, gain)
    }

    /// `bbr_init_pacing_rate_from_rtt`: high_gain × initial cwnd / RTT (srtt, or a
    /// nominal 1 ms before any sample).
    ///
    /// Linux behaviour, kept: a zero pacing rate. `bw = cwnd << 24 / srtt_us`
    /// truncates to 0 once srtt exceeds cwnd × 2^24 µs (cwnd × 16.78 s, e.g. cwnd
    /// 1 and an RTT sample of 16 777 217 µs), and `bbr_update_bw` likewise stores
    /// a 0 sample when fewer than one packet per 2^24 µs was delivered. Both give
    /// `sk_pacing_rate = 0` in Linux (`bbr_rate_bytes_per_sec(0) = 0`; before the
    /// pipe is full `bbr_set_pacing_rate` only raises the rate, after it it copies
    /// it). Linux's TCP-internal pacing (`tcp_update_skb_after_send`) and our
    /// sender treat a pacing rate of 0 as *unpaced*, so the flow is then limited
    /// by cwnd only (BDP 0 → `cwnd_min_target`), and the first sample of at least
    /// one packet per 2^24 µs makes the rate positive again. We do not clamp to
    /// 1 B/s: that would pace one 1448-byte packet per ~24 minutes, which is not
    /// what Linux does. With the default gains and MSS, the pacing rate BBRv1
    /// sets is 0 exactly when its bandwidth model ([`Self::bw`], reported as
    /// `bw_bps`) is 0; the property test checks that condition.
    pub(super) fn init_pacing_rate_from_rtt(&mut self, tp: &mut TcpState) {
        let rtt_us = if tp.srtt != 0 {
            self.has_seen_rtt = true;
            (tp.srtt / NS_PER_US).max(1)
        } else {
            NOMINAL_RTT_US
        };
        let bw = tp.cwnd as u64 * BW_UNIT / rtt_us;
        tp.pacing_rate = self.bw_to_pacing_rate(tp.mss, bw, self.c.high_gain);
    }

    /// `bbr_set_pacing_rate`: pace at bw × gain, but never lower the rate before
    /// the pipe is full (a low early estimate must not slow Startup down).
    pub(super) fn set_pacing_rate(&mut self, tp: &mut TcpState, bw: u64, gain: u32) {
        let rate = self.bw_to_pacing_rate(tp.mss, bw, gain);
        if !self.has_seen_rtt && tp.srtt != 0 {
            self.init_pacing_rate_from_rtt(tp);
        }
        if self.full_bw_reached || rate > tp.pacing_rate {
            tp.pacing_rate = rate;
        }
    }

    /// `bbr_min_tso_segs`: one packet per skb below 1.2 Mbit/s, else two.
    fn min_tso_segs(&self, tp: &TcpState) -> u32 {
        if tp.pacing_rate < MIN_TSO_RATE_BPS >> 3 {
            1
        } else {
            2
        }
    }

    /// `bbr_tso_segs_goal`: packets per skb, which sizes the quantization budget
    /// (cwnd += 3 × goal) and the EDT skb counted in flight. Linux sizes it like
    /// `tcp_tso_autosize` (≈1 ms of data at the pacing rate, up to 64 KB, at least
    /// `bbr_min_tso_segs`) because its TCP always builds GSO skbs (`sk_setup_caps`
    /// forces GSO), which the host layer now models: skbs of that size leave back
    /// to back (`host::gso`). Measured on this machine's kernel (docs/validation.md):
    /// a lone BBR flow at ~60 µs queues ~20 packets, which this budget reproduces
    /// (22) and the single-packet budget (2 × 3 = 6) does not. `tso_autosize =
    /// false` keeps the single-packet sender's budget, `bbr_min_tso_segs` per skb.
    pub(super) fn tso_segs_goal(&self, tp: &TcpState) -> u32 {
        let min_segs = self.min_tso_segs(tp);
        if !self.c.tso_autosize {
            return min_segs;
        }
        let bytes = (tp.pacing_rate >> PACING_SHIFT).min(GSO_MAX_PAYLOAD);
        let segs = ((bytes / tp.mss.max(1) as u64) as u32).max(min_segs);
        segs.min(TSO_SEGS_MAX)
    }

    /// `bbr_bdp`: ceil(bw × min_rtt × gain) in packets; the initial window while
    /// no RTT sample exists.
    pub(super) fn bdp(&self, bw: u64, gain: u32) -> u32 {
        if self.min_rtt_us == u32::MAX {
            return TCP_INIT_CWND;
        }
        let w = bw as u128 * self.min_rtt_us as u128;
        // Apply the gain, remove the BW_SCALE shift and round up, to avoid a
        // negative feedback loop.
        let bdp = ((w * gain as u128) >> BBR_SCALE).div_ceil(BW_UNIT as u128);
        bdp.min(u32::MAX as u128) as u32
    }

    /// `bbr_quantization_budget`: room for the skbs in the end hosts (one in the
    /// qdisc, one in TSO/GSO, one in the receiver's GRO/delayed-ACK engine), an
    /// even cwnd to reduce delayed ACKs, and +2 in the probing phase so gain
    /// cycling lifts inflight above BDP even for tiny BDPs.
    pub(super) fn quantization_budget(&self, tp: &TcpState, cwnd: u32) -> u32 {
        let mut cwnd = cwnd.saturating_add(3 * self.tso_segs_goal(tp));
        cwnd = (cwnd.saturating_add(1)) & !1u32;
        if let Mode::ProbeBw { cycle_idx: 0, .. } = self.mode {
            cwnd = cwnd.saturating_add(2);
        }
        cwnd
    }

    /// `bbr_inflight`: the inflight target for bw × gain.
    pub(super) fn inflight(&self, tp: &TcpState, bw: u64, gain: u32) -> u32 {
        let bdp = self.bdp(bw, gain);
        self.quantization_budget(tp, bdp)
    }

    /// `bbr_packets_in_net_at_edt`: packets that will still be in the network when
    /// the next packet departs. Linux subtracts what the bw delivers between now and
    /// the earliest departure time (EDT) already scheduled by the pacer
    /// (`tp->tcp_wstamp_ns`); when increasing inflight it counts the departing skb.
    // Deviation: `TcpState` carries no EDT of the next departure, so EDT = now
    // (nothing pre-scheduled; interval_delivered = 0), which is exact for a sender
    // that paces by delaying the decision to send rather than stamping ahead.
    pub(super) fn packets_in_net_at_edt(&self, tp: &TcpState, inflight_now: u32) -> u32 {
        let edt = tp.now;
        let interval_us = stamp_us_delta(edt, tp.now);
        let interval_delivered = ((self.bw() as u128 * interval_us as u128) >> BW_SCALE) as u64;
        let mut inflight_at_edt = inflight_now as u64;
        if self.pacing_gain > BBR_UNIT {
            inflight_at_edt += self.tso_segs_goal(tp) as u64; // include the EDT skb
        }
        if interval_delivered >= inflight_at_edt {
            return 0;
        }
        (inflight_at_edt - interval_delivered) as u32
    }

    /// `bbr_ack_aggregation_cwnd`: the cwnd allowance for ACK aggregation, only
    /// once the pipe is full, capped at `extra_acked_max_ms` of data at bw.
    pub(super) fn ack_aggregation_cwnd(&self) -> u32 {
        if self.c.extra_acked_gain == 0 || !self.full_bw_reached {
            return 0;
        }
        let max_aggr_cwnd = (self.bw() as u128 * self.c.extra_acked_max_us as u128 / BW_UNIT as u128) as u64;
        let aggr_cwnd = (self.c.extra_acked_gain as u64 * self.extra_acked_max() as u64) >> BBR_SCALE;
        aggr_cwnd.min(max_aggr_cwnd) as u32
    }

    /// `bbr_update_bw`: count rounds and feed the max filter with this ACK's
    /// delivery rate.
    pub(super) fn update_bw(&mut self, tp: &mut TcpState, rs: &RateSample) {
        self.round_start = false;
        let interval_us = rs.interval / NS_PER_US;
        if rs.delivered < 0 || interval_us == 0 {
            return; // not a valid observation
        }

        // A round ends when a packet sent after the previous round's end is
        // delivered. The sample is valid here, so the counter's own validity test
        // passes and its test reduces to Linux's `!before(prior_delivered, next)`.
        if self.round.update(rs, tp.delivered) {
            self.round_start = true;
            self.packet_conservation = false;
        }

        self.lt_bw_sampling(tp, rs);

        // delivered is in packets and interval in µs, so their ratio is << 1 for
        // most paths: scale delivered first.
        let bw = rs.delivered as u64 * BW_UNIT / interval_us;

        // An app-limited sample shows the application's rate, not the path's; use
        // it only if it is at least as good as the model (it is then a valid lower
        // bound), so the flow keeps the last measured network rate while idle-ish.
        if !rs.is_app_limited || bw >= self.max_bw() {
            // Deviation: Linux stores bw in a u32 (wraps above ≈ 3 Tbit/s); u64 here.
            self.bw.update(self.round.count(), bw);
        }
    }

    /// `bbr_update_ack_aggregation`: estimate the windowed max degree of ACK
    /// aggregation as the data ACKed beyond bw × (time since the epoch began).
    pub(super) fn update_ack_aggregation(&mut self, tp: &TcpState, rs: &RateSample) {
        if self.c.extra_acked_gain == 0 || rs.acked_sacked == 0 || rs.delivered < 0 || rs.interval / NS_PER_US == 0 {
            return;
        }

        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(EXTRA_ACKED_WIN_RTTS_MAX);
            if self.extra_acked_win_rtts >= self.c.extra_acked_win_rtts {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }

        // Packets we expected to be delivered over the epoch.
        let epoch_us = stamp_us_delta(tp.delivered_time, self.ack_epoch_stamp);
        let mut expected_acked = (self.bw() as u128 * epoch_us as u128 / BW_UNIT as u128) as u64;

        // Restart the epoch if ACKs arrive below the expected rate, or after very
        // many ACKs (a potentially stale epoch).
        if self.ack_epoch_acked as u64 <= expected_acked
            || self.ack_epoch_acked + rs.acked_sacked >= ACK_EPOCH_ACKED_RESET_THRESH
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_stamp = tp.delivered_time;
            expected_acked = 0;
        }

        // Excess delivered beyond expectation, at most a cwnd.
        self.ack_epoch_acked = (self.ack_epoch_acked + rs.acked_sacked).min(ACK_EPOCH_ACKED_RESET_THRESH - 1);
        let extra = (self.ack_epoch_acked as u64 - expected_acked).min(tp.cwnd as u64) as u32;
        let slot = &mut self.extra_acked[self.extra_acked_win_idx];
        if extra > *slot {
            *slot = extra;
        }
    }
}
