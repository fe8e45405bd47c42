//! Congestion signals and the short-term lower bounds `bw_lo` / `inflight_lo`.
//!
//! When loss or ECN appears while *not* probing, BBRv2 moves toward flow balance by
//! multiplicatively cutting its safe rate and volume once per round:
//! `bw_lo = max(bw_latest, 0.7 x bw_lo)`, `inflight_lo = max(inflight_latest, 0.7 x
//! inflight_lo)` for loss, `inflight_lo x (1 - ecn_factor x ecn_alpha)` for ECN —
//! never below what the path delivered in the latest round. Multiplicative decrease
//! converges to a lower capacity in time logarithmic in the decrease. The bounds
//! are reset when the next probe (REFILL) or PROBE_RTT exit starts.
//!
//! Reference: `tcp_bbr2.c` `bbr2_update_congestion_signals`, `bbr2_adapt_lower_bounds`,
//! `bbr2_reset_lower_bounds`, `bbr2_reset_congestion_signals`, `bbr2_update_ecn_alpha`,
//! `bbr2_ecn_cut`, the loss-round part of `bbr2_skb_marked_lost`; v3 `tcp_bbr.c`
//! `bbr_update_latest_delivery_signals`, `bbr_advance_latest_delivery_signals`,
//! `bbr_init_lower_bounds`, `bbr_loss_lower_bounds`, `bbr_ecn_lower_bounds`,
//! `bbr_note_loss`.

use super::{Bbr2, Bw, BBR_SCALE, BBR_UNIT, BW_INF, INF};
use crate::cc::{RateSample, TcpState};

impl Bbr2 {
    /// `bbr_note_loss` (the loss-round part of `skb_marked_lost`): capture the data
    /// over the full round trip of loss, to see the path's full capacity.
    pub(super) fn note_loss(&mut self, tp: &TcpState) {
        if !self.loss_in_round {
            self.loss_round_delivered = tp.delivered; // first loss in this round
        }
        self.loss_in_round = true;
        self.loss_in_cycle = true;
    }

    /// `bbr2_ecn_cut`: 1 - ecn_alpha x ecn_factor, in BBR_UNITs.
    pub(super) fn ecn_cut(&self) -> u32 {
        BBR_UNIT - ((self.ecn_alpha * self.cfg.ecn_factor) >> BBR_SCALE)
    }

    /// `bbr2_update_ecn_alpha` (once per round): EWMA of the CE ratio since the last
    /// update, as DCTCP; also drives the ECN exit from Startup.
    pub(super) fn update_ecn_alpha(&mut self, tp: &TcpState) {
        let rtt_ok = self.cfg.ecn_max_rtt == 0 || self.min_rtt <= self.cfg.ecn_max_rtt;
        if self.v3() {
            // v3: eligibility also needs ecn_factor; no alpha without eligibility.
            // Deviation: "both ends negotiated ECN and the route is low-threshold
            // (TCP_ECN_OK && TCP_ECN_LOW)" is the `ecn_enable` parameter.
            if !self.ecn_eligible && self.cfg.ecn_enable && self.cfg.ecn_factor > 0 && rtt_ok {
                self.ecn_eligible = true;
            }
            if !self.ecn_eligible {
                return;
            }
        } else if self.cfg.ecn_factor == 0 {
            return;
        }
        let delivered = tp.delivered.saturating_sub(self.alpha_last_delivered);
        let delivered_ce = tp.delivered_ce.saturating_sub(self.alpha_last_delivered_ce);
        if delivered == 0 {
            return;
        }
        if !self.v3() && !self.ecn_eligible && self.cfg.ecn_enable && rtt_ok {
            self.ecn_eligible = true;
        }
        let ce_ratio = ((delivered_ce << BBR_SCALE) / delivered) as u32;
        let gain = self.cfg.ecn_alpha_gain;
        let alpha = (((BBR_UNIT - gain) * self.ecn_alpha) >> BBR_SCALE) + ((gain * ce_ratio.min(BBR_UNIT)) >> BBR_SCALE);
        self.ecn_alpha = alpha.min(BBR_UNIT);
        self.alpha_last_delivered = tp.delivered;
        self.alpha_last_delivered_ce = tp.delivered_ce;
        self.check_ecn_too_high_in_startup(tp, ce_ratio);
    }

    /// `bbr2_reset_lower_bounds`: let inflight be pushed up again.
    pub(super) fn reset_lower_bounds(&mut self) {
        self.bw_lo = BW_INF;
        self.inflight_lo = INF;
    }

    /// `bbr2_reset_congestion_signals`: after probing, start adapting afresh.
    pub(super) fn reset_congestion_signals(&mut self) {
        self.loss_in_round = false;
        self.ecn_in_round = false;
        self.loss_in_cycle = false;
        self.ecn_in_cycle = false;
        self.bw_latest = 0;
        self.inflight_latest = 0;
    }

    /// `bbr2_adapt_lower_bounds` (once per loss round, only when not probing).
    fn adapt_lower_bounds(&mut self, tp: &TcpState) {
        if self.is_probing_bandwidth() {
            return; // probing needs to push inflight higher
        }
        let mut ecn_inflight_lo = INF;
        let mut ecn_bw_lo = BW_INF;

        // ECN response: inflight (and, in v2, bw) to (1 - alpha x ecn_factor).
        let ecn_active = if self.v3() {
            self.ecn_in_round && self.cfg.ecn_factor > 0 // ecn_in_round implies eligible
        } else {
            self.ecn_in_round && self.ecn_eligible && self.cfg.ecn_factor > 0
        };
        if ecn_active {
            let cut = self.ecn_cut() as u64;
            // v2 (ecn_bw_lo): ECN also bounds bw_lo; v3 bounds inflight only.
            let cut_bw = !self.v3();
            self.init_lower_bounds(tp, cut_bw);
            ecn_inflight_lo = ((self.inflight_lo as u64 * cut) >> BBR_SCALE) as u32;
            if cut_bw {
                ecn_bw_lo = ((self.bw_lo as u128 * cut as u128) >> BBR_SCALE) as Bw;
            }
        }

        // Loss response: bw and inflight to (1 - beta), not below the latest round.
        if self.loss_in_round {
            self.init_lower_bounds(tp, true);
            let loss_cut = (BBR_UNIT - self.cfg.beta) as u128;
            self.bw_lo = self.bw_latest.max(((self.bw_lo as u128 * loss_cut) >> BBR_SCALE) as Bw);
            self.inflight_lo =
                self.inflight_latest.max(((self.inflight_lo as u128 * loss_cut) >> BBR_SCALE) as u32);
        }

        // Adjust to the lower of the levels implied by loss or ECN.
        self.inflight_lo = self.inflight_lo.min(ecn_inflight_lo);
        self.bw_lo = self.bw_lo.min(ecn_bw_lo);
        if self.v3() {
            self.bw_lo = self.bw_lo.max(1);
        }
    }

    /// `bbr_init_lower_bounds`: start the bounds from the current max bw and cwnd.
    fn init_lower_bounds(&mut self, tp: &TcpState, init_bw: bool) {
        if init_bw && self.bw_lo == BW_INF {
            self.bw_lo = self.max_bw();
        }
        if self.inflight_lo == INF {
            self.inflight_lo = tp.cwnd;
        }
    }

    /// `bbr2_update_congestion_signals`: feed the bw filter, note loss, track the
    /// latest round's delivery rate and volume, and once per loss round adapt the
    /// lower bounds.
    pub(super) fn update_congestion_signals(&mut self, tp: &TcpState, rs: &RateSample, sample_bw: Bw) {
        if !self.v3() {
            self.loss_round_start = false;
        }
        if rs.interval == 0 || rs.acked_sacked == 0 {
            return; // not a valid observation
        }
        if !rs.is_app_limited || sample_bw >= self.max_bw() {
            self.take_max_bw_sample(sample_bw);
        }
        self.loss_in_round |= rs.losses > 0;

        if self.v3() {
            // v3 tracked bw_latest/inflight_latest and the loss round before the
            // fast path (update_latest_delivery_signals).
            if !self.loss_round_start {
                return;
            }
            self.adapt_lower_bounds(tp);
            self.loss_in_round = false;
            self.ecn_in_round = false;
            return;
        }

        self.bw_latest = self.bw_latest.max(sample_bw);
        self.inflight_latest = self.inflight_latest.max(rs.delivered.max(0) as u32);
        if rs.prior_delivered < self.loss_round_delivered {
            return; // skip the per-round-trip updates
        }
        self.loss_round_delivered = tp.delivered;
        self.loss_round_start = true;
        self.adapt_lower_bounds(tp);
        // Restart the single-round "latest" filters.
        self.loss_in_round = false;
        self.ecn_in_round = false;
        self.bw_latest = sample_bw;
        self.inflight_latest = rs.delivered.max(0) as u32;
    }

    /// v3 `bbr_update_latest_delivery_signals`: rate and volume delivered in the
    /// latest round, and the loss-round boundary; runs even on the fast path.
    pub(super) fn update_latest_delivery_signals(&mut self, tp: &TcpState, rs: &RateSample, sample_bw: Bw) {
        self.loss_round_start = false;
        if rs.interval == 0 || rs.acked_sacked == 0 {
            return;
        }
        self.bw_latest = self.bw_latest.max(sample_bw);
        self.inflight_latest = self.inflight_latest.max(rs.delivered.max(0) as u32);
        if rs.prior_delivered >= self.loss_round_delivered {
            self.loss_round_delivered = tp.delivered;
            self.loss_round_start = true;
        }
    }

    /// v3 `bbr_advance_latest_delivery_signals`: once per round, restart the latest
    /// filters (after the control used them).
    /// Deviation: v3 keeps the filters when the ACK covers a TLP retransmission
    /// (`rs->is_acking_tlp_retrans_seq`), which RateSample does not report.
    pub(super) fn advance_latest_delivery_signals(&mut self, rs: &RateSample, sample_bw: Bw) {
        if self.loss_round_start {
            self.bw_latest = sample_bw;
            self.inflight_latest = rs.delivered.max(0) as u32;
        }
    }
}
