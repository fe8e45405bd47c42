//! The path model: packet-timed rounds, the bandwidth sample and its 2-slot max
//! filter, min_rtt / probe_rtt_min, BDP and the in-flight targets derived from it,
//! the ACK-aggregation allowance, and the control outputs (pacing rate, cwnd).
//!
//! Reference: `tcp_bbr2.c` (v2alpha) `bbr_max_bw`, `bbr_bw`, `bbr_rate_bytes_per_sec`,
//! `bbr_set_pacing_rate`, `bbr_bdp`, `bbr_quantization_budget`, `bbr_inflight`,
//! `bbr_packets_in_net_at_edt`, `bbr_update_ack_aggregation`, `bbr_set_cwnd`,
//! `bbr_update_min_rtt`, `bbr2_bound_cwnd_for_inflight_model`; the v3 `tcp_bbr.c`
//! functions of the same names.
//!
//! Why not `cc::common`: BBRv2 keeps the max bw over 1-2 ProbeBW *cycles* in two
//! slots advanced by the cycle (not a round-timed Kathleen Nichols filter), its
//! min_rtt is a pair of expiring minima rather than a windowed filter, and its round
//! counter only counts ACKs with a valid rate interval (`RoundCounter` also counts
//! ACKs without one).

use super::{
    Bbr2, Bw, Mode, Phase, ACK_EPOCH_ACKED_RESET_THRESH, BBR_SCALE, BBR_UNIT, BW_SCALE, BW_UNIT,
    EXTRA_ACKED_MAX_US, GSO_MAX_SIZE, INF, MAX_TCP_HEADER, MIN_TSO_RATE_BPS, PACING_MARGIN_PERCENT,
    PACING_SHIFT, TSO_RTT_SHIFT,
};
use crate::cc::{CaState, RateSample, TcpState};
use crate::units::{Time, NS_PER_US};

/// One packet per µs in [`Bw`] units, per ns of interval: `BW_UNIT * 1000`.
const BW_UNIT_NS: u128 = BW_UNIT as u128 * NS_PER_US as u128;

impl Bbr2 {
    /// `bbr_max_bw`: the windowed max of the last 1-2 ProbeBW cycles.
    pub(super) fn max_bw(&self) -> Bw {
        self.max_bw[0].max(self.max_bw[1])
    }

    /// `bbr_bw`: the bandwidth we use, bounded by the short-term lower bound (and,
    /// in v2, by the ECN-derived bw_hi, which stays infinite in v3).
    pub(super) fn bw(&self) -> Bw {
        self.max_bw().min(self.bw_lo).min(self.bw_hi)
    }

    /// `bbr_extra_acked`: max excess ACKed data over the last k..2k rounds.
    pub(super) fn extra_acked(&self) -> u32 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    /// `bbr2_take_max_bw_sample`.
    pub(super) fn take_max_bw_sample(&mut self, bw: Bw) {
        self.max_bw[1] = self.max_bw[1].max(bw);
    }

    /// `bbr2_advance_max_bw_filter`: keep the max of the last 1-2 cycles.
    pub(super) fn advance_max_bw_filter(&mut self) {
        if self.max_bw[1] == 0 {
            return; // no samples in this window; remember the old one
        }
        self.max_bw[0] = self.max_bw[1];
        self.max_bw[1] = 0;
    }

    /// `bbr_rate_bytes_per_sec`: bw x gain x (1 - margin) in bytes per second.
    pub(super) fn rate_bytes_per_sec(&self, tp: &TcpState, bw: Bw, gain: u32, margin: u64) -> u64 {
        let mut rate = bw as u128 * tp.mss as u128;
        rate = (rate * gain as u128) >> BBR_SCALE;
        rate *= (1_000_000 / 100 * (100 - margin)) as u128;
        rate >>= BW_SCALE;
        // Deviation: Linux can return 0 here for a near-zero bw (the sender then
        // does not pace); we floor at 1 byte/s, which equally means "barely paced"
        // only in those degenerate cases. bbr1 keeps Linux's 0 (see its model.rs).
        (rate.min(u64::MAX as u128) as u64).max(1)
    }

    /// Bandwidth in bits per second, for metrics.
    pub(super) fn bw_bits_per_sec(&self, tp: &TcpState, bw: Bw) -> f64 {
        ((bw as u128 * tp.mss as u128 * 1_000_000 * 8) >> BW_SCALE) as f64
    }

    /// `bbr_bw_to_pacing_rate`.
    pub(super) fn bw_to_pacing_rate(&self, tp: &TcpState, bw: Bw, gain: u32) -> u64 {
        self.rate_bytes_per_sec(tp, bw, gain, PACING_MARGIN_PERCENT)
    }

    /// `bbr_init_pacing_rate_from_rtt`: startup gain x cwnd / RTT (1 ms nominal RTT
    /// before any sample).
    pub(super) fn init_pacing_rate_from_rtt(&mut self, tp: &mut TcpState) {
        let rtt: Time = if tp.srtt > 0 {
            self.has_seen_rtt = true;
            tp.srtt.max(NS_PER_US)
        } else {
            1_000 * NS_PER_US
        };
        let bw = (tp.cwnd as u128 * BW_UNIT_NS / rtt as u128) as Bw;
        tp.pacing_rate = self.bw_to_pacing_rate(tp, bw, self.cfg.startup_pacing_gain);
    }

    /// `bbr_set_pacing_rate`: never slow down before the pipe is known to be full.
    pub(super) fn set_pacing_rate(&mut self, tp: &mut TcpState, bw: Bw, gain: u32) {
        let rate = self.bw_to_pacing_rate(tp, bw, gain);
        if !self.has_seen_rtt && tp.srtt > 0 {
            self.init_pacing_rate_from_rtt(tp);
        }
        if self.full_bw_reached || rate > tp.pacing_rate {
            tp.pacing_rate = rate;
        }
    }

    /// `bbr_tso_segs_goal`: the TSO burst Linux would build at this pacing rate
    /// (about 1 ms of data, plus a min_rtt-based allowance on short paths), as the
    /// host layer's GSO sender builds them (`host::gso`).
    pub(super) fn tso_segs_goal(&self, tp: &TcpState) -> u32 {
        let mut bytes = tp.pacing_rate >> PACING_SHIFT;
        let min_rtt_us = self.min_rtt / NS_PER_US;
        let r = min_rtt_us >> TSO_RTT_SHIFT;
        if r < 32 {
            bytes += GSO_MAX_SIZE >> r;
        }
        bytes = bytes.min(GSO_MAX_SIZE - 1 - MAX_TCP_HEADER);
        // v2: bbr_min_tso_segs (1 below 1.2 Mbit/s); v3: sysctl_tcp_min_tso_segs = 2.
        let min_segs = if !self.v3() && tp.pacing_rate < MIN_TSO_RATE_BPS / 8 { 1 } else { 2 };
        ((bytes / tp.mss.max(1) as u64) as u32).max(min_segs)
    }

    /// `bbr_bdp`: ceil(bw x min_rtt x gain), in packets; the initial cwnd before any
    /// RTT sample.
    pub(super) fn bdp(&self, bw: Bw, gain: u32) -> u32 {
        if self.min_rtt == Time::MAX {
            return self.init_cwnd;
        }
        let w = bw as u128 * self.min_rtt as u128;
        let bdp = ((w * gain as u128) >> BBR_SCALE).div_ceil(BW_UNIT_NS);
        bdp.min(u32::MAX as u128) as u32
    }

    /// `bbr_quantization_budget`: room for 3 TSO bursts, at least cwnd_min_target,
    /// and +2 in PROBE_UP so gain cycling lifts inflight above a small BDP.
    pub(super) fn quantization_budget(&self, tp: &TcpState, cwnd: u32) -> u32 {
        let tso_segs_goal = 3 * self.tso_segs_goal(tp);
        let mut cwnd = cwnd.max(tso_segs_goal).max(self.cfg.cwnd_min_target);
        if self.mode == Mode::ProbeBw(Phase::Up) {
            cwnd = cwnd.saturating_add(2);
        }
        cwnd
    }

    /// `bbr_inflight`: BDP x gain plus the quantization budget.
    pub(super) fn inflight(&self, tp: &TcpState, bw: Bw, gain: u32) -> u32 {
        let bdp = self.bdp(bw, gain);
        self.quantization_budget(tp, bdp)
    }

    /// `bbr2_target_inflight`: our BDP, unless congestion cut cwnd.
    pub(super) fn target_inflight(&self, tp: &TcpState) -> u32 {
        self.inflight(tp, self.bw(), BBR_UNIT).min(tp.cwnd)
    }

    /// `bbr_packets_in_net_at_edt`.
    /// Deviation: no earliest departure time is visible to the CCA, so the next
    /// departure is taken to be now (nothing is delivered before it).
    pub(super) fn packets_in_net_at_edt(&self, tp: &TcpState, inflight_now: u32) -> u32 {
        let mut inflight_at_edt = inflight_now;
        if self.pacing_gain > BBR_UNIT {
            inflight_at_edt += self.tso_segs_goal(tp); // include the EDT skb
        }
        inflight_at_edt
    }

    /// `bbr_ack_aggregation_cwnd`: cwnd allowance for ACK aggregation, capped at
    /// 100 ms of bw. (v2's `extra_acked_in_startup` is on, as v3 always is.)
    pub(super) fn ack_aggregation_cwnd(&self) -> u32 {
        if self.cfg.extra_acked_gain == 0 {
            return 0;
        }
        let max_aggr_cwnd = (self.bw() as u128 * EXTRA_ACKED_MAX_US as u128 / BW_UNIT as u128) as u64;
        let aggr_cwnd = (self.cfg.extra_acked_gain as u64 * self.extra_acked() as u64) >> BBR_SCALE;
        aggr_cwnd.min(max_aggr_cwnd).min(u32::MAX as u64) as u32
    }

    /// `bbr_update_round_start`: a round ends when a packet sent after the previous
    /// round ended is delivered.
    pub(super) fn update_round_start(&mut self, tp: &TcpState, rs: &RateSample) {
        self.round_start = false;
        if rs.interval > 0 && rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = tp.delivered;
            self.round_start = true;
        }
    }

    /// `bbr_calculate_bw_sample`: delivered / interval, rounded up so low rates grow.
    pub(super) fn calculate_bw_sample(&self, rs: &RateSample) -> Bw {
        if rs.interval == 0 || rs.delivered < 0 {
            return 0;
        }
        (rs.delivered as u128 * BW_UNIT_NS).div_ceil(rs.interval as u128) as Bw
    }

    /// `bbr_update_ack_aggregation`: the windowed max of data ACKed beyond what
    /// bw x elapsed predicts (5-10 rounds; 1-2 in Startup), capped by cwnd.
    pub(super) fn update_ack_aggregation(&mut self, tp: &TcpState, rs: &RateSample) {
        if self.cfg.extra_acked_gain == 0 || rs.acked_sacked == 0 || rs.delivered < 0 || rs.interval == 0 {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1F);
            let thresh = if self.full_bw_reached { self.cfg.extra_acked_win_rtts } else { 1 };
            if self.extra_acked_win_rtts >= thresh {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch = tp.delivered_time.saturating_sub(self.ack_epoch_stamp);
        let mut expected_acked = (self.bw() as u128 * epoch as u128 / BW_UNIT_NS) as u64;
        if self.ack_epoch_acked as u64 <= expected_acked
            || self.ack_epoch_acked + rs.acked_sacked >= ACK_EPOCH_ACKED_RESET_THRESH
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_stamp = tp.delivered_time;
            expected_acked = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + rs.acked_sacked).min(0xFFFFF);
        let extra = (self.ack_epoch_acked as u64 - expected_acked).min(tp.cwnd as u64) as u32;
        let slot = &mut self.extra_acked[self.extra_acked_win_idx];
        *slot = (*slot).max(extra);
    }

    /// `bbr_update_gains`.
    pub(super) fn update_gains(&mut self) {
        let c = &self.cfg;
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (c.startup_pacing_gain, c.startup_cwnd_gain),
            Mode::Drain => (c.drain_gain, c.startup_cwnd_gain), // slow, to drain; keep cwnd
            Mode::ProbeBw(phase) => {
                let pacing = match phase {
                    Phase::Up => c.probe_up_pacing_gain,
                    Phase::Down => c.probe_down_pacing_gain,
                    Phase::Cruise | Phase::Refill => BBR_UNIT,
                };
                // v3: bw_probe_cwnd_gain adds 0.25 in PROBE_UP (0 by default in v2).
                let add = if phase == Phase::Up { c.probe_up_cwnd_gain_add } else { 0 };
                (pacing, c.cwnd_gain + add)
            }
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
    }

    /// `bbr_save_cwnd`: remember the last known good cwnd.
    pub(super) fn save_cwnd(&mut self, tp: &TcpState) {
        if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = tp.cwnd;
        } else {
            // Loss recovery or PROBE_RTT have temporarily cut cwnd.
            self.prior_cwnd = self.prior_cwnd.max(tp.cwnd);
        }
    }

    /// `bbr_set_cwnd`: slow-start toward the target (if bw is growing or loss drew
    /// us below it), or snap down to it once the pipe is known to be full.
    pub(super) fn set_cwnd(&mut self, tp: &mut TcpState, acked: u32, bw: Bw, gain: u32) {
        let mut cwnd = tp.cwnd;
        if acked > 0 {
            let mut target = self.bdp(bw, gain);
            target = target.saturating_add(self.ack_aggregation_cwnd());
            target = self.quantization_budget(tp, target);

            self.try_fast_path = false;
            if self.full_bw_reached {
                cwnd = cwnd.saturating_add(acked);
                if cwnd >= target {
                    cwnd = target;
                    self.try_fast_path = true;
                }
            } else if cwnd < target || cwnd < 2 * self.init_cwnd {
                cwnd = cwnd.saturating_add(acked);
            } else {
                self.try_fast_path = true;
            }
            // Deviation: v2's usage_based_cwnd experiment (off by default) needs
            // tp->max_packets_out, which TcpState does not carry.
            cwnd = cwnd.max(self.cfg.cwnd_min_target);
        }
        tp.cwnd = cwnd.min(tp.cwnd_clamp);
        if self.mode == Mode::ProbeRtt {
            tp.cwnd = tp.cwnd.min(self.probe_rtt_cwnd());
        }
    }

    /// `bbr2_bound_cwnd_for_inflight_model`: cap cwnd by inflight_hi while probing
    /// (with headroom while cruising or in PROBE_RTT) and by inflight_lo always.
    pub(super) fn bound_cwnd_for_inflight_model(&mut self, tp: &mut TcpState) {
        let mut cap = match self.mode {
            Mode::ProbeBw(Phase::Cruise) | Mode::ProbeRtt => self.inflight_with_headroom(),
            Mode::ProbeBw(_) => self.inflight_hi,
            Mode::Startup | Mode::Drain => INF,
        };
        cap = cap.min(self.inflight_lo);
        cap = cap.max(self.cfg.cwnd_min_target);
        tp.cwnd = tp.cwnd.min(cap);
    }

    /// `bbr_update_min_rtt`, model half: track probe_rtt_min over the PROBE_RTT
    /// window and min_rtt over the 10 s window; then hand over to PROBE_RTT.
    pub(super) fn update_min_rtt(&mut self, tp: &mut TcpState, rs: &RateSample) {
        let probe_rtt_expired = tp.now > self.probe_rtt_min_stamp.saturating_add(self.cfg.probe_rtt_win);
        if let Some(rtt) = rs.rtt {
            // v3 refreshes only on a strictly lower sample (v2 also on an equal one).
            let lower = if self.v3() { rtt < self.probe_rtt_min } else { rtt <= self.probe_rtt_min };
            if lower || (probe_rtt_expired && !rs.is_ack_delayed) {
                self.probe_rtt_min = rtt;
                self.probe_rtt_min_stamp = tp.now;
            }
        }
        let min_rtt_expired = tp.now > self.min_rtt_stamp.saturating_add(self.cfg.min_rtt_win);
        if self.probe_rtt_min <= self.min_rtt || min_rtt_expired {
            self.min_rtt = self.probe_rtt_min;
            self.min_rtt_stamp = self.probe_rtt_min_stamp;
        }
        self.update_probe_rtt(tp, rs, probe_rtt_expired);
        // Restart after idle ends only once we process a new S/ACK for data.
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }
}
