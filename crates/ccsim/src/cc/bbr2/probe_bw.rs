//! PROBE_BW: the steady-state cycle and the long-term upper bound `inflight_hi`.
//!
//! ```text
//!   DOWN (0.75 v2 / 0.91 v3) --inflight <= min(BDP, inflight_hi - headroom)--> CRUISE (1.0)
//!   CRUISE/DOWN --2-3 s wall clock, or min(63, BDP) rounds (Reno coexistence)--> REFILL (1.0)
//!   REFILL --one round--> UP (1.25; v3 cwnd gain 2.25)
//!   UP --loss/ECN too high, inflight hit inflight_hi, or queue (v2) / bw plateau (v3)--> DOWN
//! ```
//!
//! While probing (REFILL/UP) the lower bounds are off; in UP, inflight_hi grows by
//! 1, 2, 4, ... packets per round (`bw_probe_up_cnt` halves each round) while the
//! loss rate stays under `loss_thresh` (5/256) and the CE ratio under `ecn_thresh`;
//! once exceeded, inflight_hi is cut to max(tx_in_flight, 0.7 x target inflight)
//! and the cycle restarts with DOWN.
//!
//! Reference: `tcp_bbr2.c` `bbr2_update_cycle_phase`, `bbr2_adapt_upper_bounds`,
//! `bbr2_is_inflight_too_high`, `bbr2_handle_inflight_too_high`,
//! `bbr2_probe_inflight_hi_upward`, `bbr2_raise_inflight_hi_slope`,
//! `bbr2_pick_probe_wait`, `bbr2_is_reno_coexistence_probe_time`,
//! `bbr2_check_time_to_probe_bw`, `bbr2_check_time_to_cruise`,
//! `bbr2_start_bw_probe_{down,cruise,refill,up}`, and their v3 counterparts.

use rand::Rng;

use super::{AckPhase, Bbr2, Bw, Mode, Phase, BBR_SCALE, BBR_UNIT, BW_INF, INF};
use crate::cc::{CaState, RateSample, TcpState};
use crate::units::{Time, NS_PER_US};

impl Bbr2 {
    /// `bbr2_is_probing_bandwidth`: Startup, REFILL and UP push inflight up, so the
    /// lower bounds do not apply.
    pub(super) fn is_probing_bandwidth(&self) -> bool {
        matches!(self.mode, Mode::Startup | Mode::ProbeBw(Phase::Refill) | Mode::ProbeBw(Phase::Up))
    }

    /// `bbr2_has_elapsed_in_phase`.
    pub(super) fn has_elapsed_in_phase(&self, tp: &TcpState, interval: Time) -> bool {
        tp.now > self.cycle_stamp.saturating_add(interval)
    }

    /// `bbr2_set_cycle_idx`: a new phase needs new cwnd and pacing.
    fn set_phase(&mut self, phase: Phase) {
        self.mode = Mode::ProbeBw(phase);
        self.try_fast_path = false;
    }

    /// `bbr2_is_inflight_too_high`: does this sample's loss rate or CE ratio say we
    /// put too much in flight?
    pub(super) fn is_inflight_too_high(&self, rs: &RateSample) -> bool {
        if rs.lost > 0 && rs.tx_in_flight > 0 {
            let loss_thresh = (rs.tx_in_flight as u64 * self.cfg.loss_thresh as u64) >> BBR_SCALE;
            if rs.lost as u64 > loss_thresh {
                return true;
            }
        }
        if rs.delivered_ce > 0 && rs.delivered > 0 && self.ecn_eligible && self.cfg.ecn_thresh > 0 {
            let ecn_thresh = (rs.delivered as u64 * self.cfg.ecn_thresh as u64) >> BBR_SCALE;
            let ce = rs.delivered_ce as u64;
            // v3 needs strictly more than the threshold; v2 also fires at equality.
            if if self.v3() { ce > ecn_thresh } else { ce >= ecn_thresh } {
                return true;
            }
        }
        false
    }

    /// `bbr2_inflight_with_headroom`: inflight_hi less 15% (at least 1 packet),
    /// leaving room for other flows; never below cwnd_min_target.
    pub(super) fn inflight_with_headroom(&self) -> u32 {
        if self.inflight_hi == INF {
            return INF;
        }
        let headroom = ((self.inflight_hi as u64 * self.cfg.inflight_headroom as u64) >> BBR_SCALE).max(1) as u32;
        self.inflight_hi.saturating_sub(headroom).max(self.cfg.cwnd_min_target)
    }

    /// `bbr2_raise_inflight_hi_slope`: each round of UP doubles the probe volume.
    fn raise_inflight_hi_slope(&mut self, tp: &TcpState) {
        let growth_this_round = 1u32 << self.bw_probe_up_rounds.min(30);
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(30);
        self.bw_probe_up_cnt = (tp.cwnd / growth_this_round).max(1);
    }

    /// `bbr2_probe_inflight_hi_upward`: no high loss/ECN yet, so raise inflight_hi
    /// by 1 per `bw_probe_up_cnt` packets ACKed — if we are actually using it.
    fn probe_inflight_hi_upward(&mut self, tp: &TcpState, rs: &RateSample) {
        if !tp.is_cwnd_limited || tp.cwnd < self.inflight_hi {
            if !self.v3() {
                // v2: don't accumulate unused credits (v3 keeps them).
                self.bw_probe_up_acks = 0;
            }
            return;
        }
        self.bw_probe_up_acks += rs.acked_sacked;
        if self.bw_probe_up_acks >= self.bw_probe_up_cnt {
            let delta = self.bw_probe_up_acks / self.bw_probe_up_cnt;
            self.bw_probe_up_acks -= delta * self.bw_probe_up_cnt;
            self.inflight_hi = self.inflight_hi.saturating_add(delta);
            self.try_fast_path = false;
        }
        if self.round_start {
            self.raise_inflight_hi_slope(tp);
        }
    }

    /// v2 `bbr2_handle_inflight_too_high_via_ecn`: ECN during a probe that never saw
    /// an acceptable sample also cuts bw_hi (v3 has no bw_hi).
    fn handle_inflight_too_high_via_ecn(&mut self) {
        if self.ecn_eligible && !self.got_ok_bw_probe_sample {
            let ecn_cut = self.ecn_cut();
            if self.bw_hi == BW_INF {
                self.bw_hi = self.max_bw();
            }
            self.bw_hi = ((self.bw_hi as u128 * ecn_cut as u128) >> BBR_SCALE) as Bw;
        }
    }

    /// `bbr2_handle_inflight_too_high`: loss/ECN too high while probing. React once
    /// per probe: cut inflight_hi to max(tx_in_flight, (1 - beta) x target) and
    /// restart the cycle.
    pub(super) fn handle_inflight_too_high(&mut self, tp: &mut TcpState, rs: &RateSample) {
        self.prev_probe_too_high = true;
        self.bw_probe_samples = false; // only react once per probe
        // If app-limited we were not robustly probing the volume we think safe.
        if !rs.is_app_limited {
            let cut = (self.target_inflight(tp) as u64 * (BBR_UNIT - self.cfg.beta) as u64) >> BBR_SCALE;
            self.inflight_hi = rs.tx_in_flight.max(cut as u32);
            if !self.v3() {
                self.handle_inflight_too_high_via_ecn();
            }
        }
        if self.mode == Mode::ProbeBw(Phase::Up) {
            self.start_bw_probe_down(tp);
        }
    }

    /// `bbr2_adapt_upper_bounds`: cut inflight_hi when probing overshot, raise it
    /// when a higher level proved safe. Returns whether it decided a transition.
    fn adapt_upper_bounds(&mut self, tp: &mut TcpState, rs: &RateSample, sample_bw: Bw) -> bool {
        // Track when we'll see bw/loss samples resulting from our bw probes.
        if self.ack_phase == AckPhase::ProbeStarting && self.round_start {
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round_start {
            // End of samples from the probing phase.
            self.bw_probe_samples = false;
            self.ack_phase = AckPhase::Init;
            // Our best chance to have seen the highest available bw is now: forget
            // the previous cycle's samples.
            if matches!(self.mode, Mode::ProbeBw(_)) && !rs.is_app_limited {
                self.advance_max_bw_filter();
            }
            // We pushed inflight to inflight_hi without high loss/ECN: probe again,
            // holding inflight_hi for a round, then accelerating beyond it.
            if matches!(self.mode, Mode::ProbeBw(_)) && self.stopped_risky_probe && !self.prev_probe_too_high {
                self.start_bw_probe_refill(tp, 0);
                return true;
            }
        }

        if self.is_inflight_too_high(rs) {
            if self.bw_probe_samples {
                self.handle_inflight_too_high(tp, rs);
            }
        } else {
            // Loss/ECN rate is declared safe: adjust the upper bound upward.
            if !self.v3() {
                self.got_ok_bw_probe_sample |= self.bw_probe_samples;
            }
            let no_signals = if self.v3() {
                self.inflight_hi == INF
            } else {
                self.inflight_hi == INF && self.bw_hi == BW_INF
            };
            if no_signals {
                return false; // no excess queue signals yet
            }
            // To be resilient to random loss, raise inflight_hi (and v2's bw_hi)
            // whenever any phase shows a higher level is safe.
            if rs.tx_in_flight > self.inflight_hi {
                self.inflight_hi = rs.tx_in_flight;
            }
            if !self.v3() && sample_bw > self.bw_hi {
                self.bw_hi = sample_bw;
            }
            if self.mode == Mode::ProbeBw(Phase::Up) {
                self.probe_inflight_hi_upward(tp, rs);
            }
        }
        false
    }

    /// `bbr2_pick_probe_wait`: randomize both probe bounds for mixing and fairness.
    fn pick_probe_wait(&mut self, tp: &mut TcpState) {
        let rand_rounds = self.cfg.bw_probe_rand_rounds;
        self.rounds_since_probe = if rand_rounds > 0 { tp.rng.gen_range(0..rand_rounds) } else { 0 };
        let rand_us = self.cfg.bw_probe_rand_us;
        let extra_us = if rand_us > 0 { tp.rng.gen_range(0..rand_us) } else { 0 };
        self.probe_wait = (self.cfg.bw_probe_base_us + extra_us) * NS_PER_US;
    }

    /// `bbr2_is_reno_coexistence_probe_time`: an idealized Reno flow loses once per
    /// BDP rounds; probe no less often than that (and at least every 63 rounds, to
    /// survive random loss). v3 hard-codes reno gain 1.0, the v2 default.
    fn is_reno_coexistence_probe_time(&self, tp: &TcpState) -> bool {
        let mut rounds = self.cfg.bw_probe_max_rounds;
        if self.cfg.bw_probe_reno_gain > 0 {
            let inflight = self.target_inflight(tp);
            let reno_rounds = ((inflight as u64 * self.cfg.bw_probe_reno_gain as u64) >> BBR_SCALE) as u32;
            rounds = rounds.min(reno_rounds);
        }
        self.rounds_since_probe >= rounds
    }

    /// `bbr2_start_bw_probe_refill`: send at the estimate to fill the pipe before
    /// probing above it, so a shallow buffer's loss does not under-measure.
    pub(super) fn start_bw_probe_refill(&mut self, tp: &TcpState, bw_probe_up_rounds: u32) {
        self.reset_lower_bounds();
        if !self.v3() && self.inflight_hi != INF {
            self.inflight_hi = self.inflight_hi.saturating_add(self.cfg.refill_add_inc);
        }
        self.bw_probe_up_rounds = bw_probe_up_rounds.min(30);
        self.bw_probe_up_acks = 0;
        self.stopped_risky_probe = false;
        if !self.v3() {
            self.got_ok_bw_probe_sample = false;
        }
        self.ack_phase = AckPhase::Refilling;
        self.next_rtt_delivered = tp.delivered;
        self.set_phase(Phase::Refill);
    }

    /// `bbr2_start_bw_probe_up`: probe max deliverable rate and volume.
    fn start_bw_probe_up(&mut self, tp: &TcpState, sample_bw: Bw) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.next_rtt_delivered = tp.delivered;
        self.cycle_stamp = tp.now;
        if self.v3() {
            // v3 ends UP on a bw plateau: restart the detector from this sample.
            self.reset_full_bw();
            self.full_bw = sample_bw;
        }
        self.set_phase(Phase::Up);
        self.raise_inflight_hi_slope(tp);
    }

    /// `bbr2_start_bw_probe_down`: start a new cycle; pick when to probe next.
    pub(super) fn start_bw_probe_down(&mut self, tp: &mut TcpState) {
        self.reset_congestion_signals();
        self.bw_probe_up_cnt = INF; // not growing inflight_hi any more
        self.pick_probe_wait(tp);
        self.cycle_stamp = tp.now; // start the wall clock
        self.ack_phase = AckPhase::ProbeStopping;
        self.next_rtt_delivered = tp.delivered;
        self.set_phase(Phase::Down);
    }

    /// `bbr2_start_bw_probe_cruise`: a neutral operating point that only reacts to
    /// loss/ECN.
    pub(super) fn start_bw_probe_cruise(&mut self) {
        if self.inflight_lo != INF {
            self.inflight_lo = self.inflight_lo.min(self.inflight_hi);
        }
        self.set_phase(Phase::Cruise);
    }

    /// `bbr2_check_time_to_probe_bw`.
    fn check_time_to_probe_bw(&mut self, tp: &mut TcpState) -> bool {
        // ECN marks but no loss in this cycle: once marks stop, reprobe quickly,
        // starting with inflight_hi x ecn_reprobe_gain (v3 0.5; v2 off).
        if self.cfg.ecn_reprobe_gain > 0
            && self.ecn_eligible
            && self.ecn_in_cycle
            && !self.loss_in_cycle
            && tp.ca_state == CaState::Open
        {
            let target = (self.inflight_hi as u64 * self.cfg.ecn_reprobe_gain as u64) >> BBR_SCALE;
            let n = if target > 0 { target.ilog2() } else { 0 };
            self.start_bw_probe_refill(tp, n);
            return true;
        }
        if self.has_elapsed_in_phase(tp, self.probe_wait) || self.is_reno_coexistence_probe_time(tp) {
            self.start_bw_probe_refill(tp, 0);
            return true;
        }
        false
    }

    /// `bbr2_check_time_to_cruise`: DOWN ends once inflight is below both the
    /// headroom target and the BDP.
    fn check_time_to_cruise(&self, tp: &TcpState, inflight: u32, bw: Bw) -> bool {
        if inflight > self.inflight_with_headroom() {
            return false;
        }
        let is_under_bdp = inflight <= self.inflight(tp, bw, BBR_UNIT);
        if self.cfg.drain_to_target {
            return is_under_bdp;
        }
        is_under_bdp || self.has_elapsed_in_phase(tp, self.min_rtt)
    }

    /// `bbr2_update_cycle_phase`: the PROBE_BW state machine.
    pub(super) fn update_cycle_phase(&mut self, tp: &mut TcpState, rs: &RateSample, sample_bw: Bw) {
        if !self.full_bw_reached {
            return;
        }
        // In DRAIN, PROBE_BW or PROBE_RTT, adjust the upper bounds.
        if self.adapt_upper_bounds(tp, rs, sample_bw) {
            return;
        }
        let Mode::ProbeBw(phase) = self.mode else { return };
        let inflight = self.packets_in_net_at_edt(tp, rs.prior_in_flight);
        let bw = self.max_bw();

        match phase {
            // Cruise at 1.0 x bw; adapt to loss/ECN by slowing down.
            Phase::Cruise => {
                self.check_time_to_probe_bw(tp);
            }
            // After one full round of REFILL, samples start to reflect it.
            Phase::Refill => {
                if self.round_start {
                    self.bw_probe_samples = true;
                    self.start_bw_probe_up(tp, sample_bw);
                }
            }
            // End UP when (1) inflight reached the inflight_hi that overshot last
            // time, (2) v2: after min_rtt, inflight >= 1.25 x BDP (a queue is
            // building) / v3: bw plateaued while inflight_hi was not limiting;
            // (3)/(4) loss/ECN too high (adapt_upper_bounds).
            Phase::Up => {
                let mut done = false;
                if self.prev_probe_too_high && inflight >= self.inflight_hi {
                    self.stopped_risky_probe = true;
                    done = true;
                } else if self.v3() {
                    if tp.is_cwnd_limited && tp.cwnd >= self.inflight_hi {
                        // inflight_hi is limiting bw growth: not a plateau.
                        self.reset_full_bw();
                        self.full_bw = sample_bw;
                    } else if self.full_bw_now {
                        done = true; // plateau in estimated bw: pipe looks full
                    }
                } else if self.has_elapsed_in_phase(tp, self.min_rtt)
                    && inflight >= self.inflight(tp, bw, self.cfg.bw_probe_pif_gain)
                {
                    done = true; // building a queue
                }
                if done {
                    self.prev_probe_too_high = false; // no loss/ECN (yet)
                    self.start_bw_probe_down(tp);
                }
            }
            // Hold the sub-unity gain until the queue has drained.
            Phase::Down => {
                if self.check_time_to_probe_bw(tp) {
                    return;
                }
                if self.check_time_to_cruise(tp, inflight, bw) {
                    self.start_bw_probe_cruise();
                }
            }
        }
    }
}
