//! BBRv3: the shared BBRv2 code of `cc/bbr2/` run with `Version::V3` and v3's
//! constants. Reference: `google/bbr` branch `v3`, `net/ipv4/tcp_bbr.c` (the v3
//! module, registered there as "bbr"), and draft-ietf-ccwg-bbr, which specifies it.
//!
//! Differences from v2 (v2alpha `tcp_bbr2.c`) that this implements — each is a
//! `v3()` branch or a default below, and each has a test with its number in
//! `cc/bbr2/tests.rs` (`mod v3_vs_v2`, which needs the shared private state):
//!
//! Constants:
//! 1. Startup pacing gain 2.77 (= 4 ln 2, 256*277/100+1 = 710) instead of 2.885.
//! 2. Startup (and Drain) cwnd gain 2.0 instead of 2.885.
//! 3. PROBE_DOWN pacing gain 0.91 (256*91/100 = 232) instead of 0.75.
//! 4. PROBE_UP cwnd gain 2.25 (`bw_probe_cwnd_gain` = 1 quarter) instead of 2.0.
//! 5. Startup loss exit after 6 loss-marking events per round (`full_loss_cnt`) instead of 8.
//! 6. ECN re-probe (`ecn_reprobe_gain` 0.5) on: after an ECN-only cycle, REFILL
//!    starts at once with the first UP round adding ~0.5 x inflight_hi (v2: off).
//!
//! Behaviour:
//! 7. Full-bandwidth detection uses each ACK's bandwidth sample: any sample
//!    of at least 1.25 x full_bw restarts the count, rounds without one are counted, and
//!    the detector keeps running after Startup (`full_bw_now`).
//! 8. PROBE_UP ends on a bandwidth plateau (`full_bw_now`, 3 rounds without 25%
//!    growth while inflight_hi is not what limits us) instead of v2's
//!    "min_rtt elapsed and inflight >= 1.25 x BDP" queue test.
//! 9. The loss/ECN exit from Startup sets inflight_hi = max(BDP, inflight_latest).
//! 10. No `bw_hi`: v3's bw = min(max_bw, bw_lo); ECN no longer cuts a bw upper bound.
//! 11. ECN cuts only inflight_lo (v2 also cut bw_lo); ECE is noted only when ECN-
//!     eligible; eligibility also needs ecn_factor > 0; ecn_alpha is not updated
//!     for ineligible flows; bw_lo is kept >= 1.
//! 12. ECN "too high" needs CE > ecn_thresh x delivered (v2: >=).
//! 13. The latest-round delivery signals (bw_latest, inflight_latest) and the loss
//!     round are updated before the fast path and restarted after the control step.
//! 14. probe_rtt_min is refreshed only by a strictly lower RTT (v2: lower or equal).
//! 15. PROBE_UP keeps unused inflight_hi growth credits when not cwnd-limited (v2
//!     zeroes them).
//! 16. On RTO (set_state Loss) the plateau detector is fully reset and, if not
//!     probing, inflight_lo = max(cwnd, prior_cwnd) (v2: prior_cwnd); undo also
//!     resets full_bw_now.
//! 17. The first round is anchored at the current delivered count; TSO floor is 2
//!     segments (sysctl_tcp_min_tso_segs) instead of v2's rate-dependent 1 or 2.
//! 18. v2-only experiments are gone: refill_add_inc, got_ok_bw_probe_sample.
//!
//! v3 changes not implemented (Deviations):
//! * Loss-probe recovery (`CA_EVENT_TLP_RECOVERY` -> `bbr_run_loss_probe_recovery`,
//!   which counts a TLP-repaired tail loss as a loss) — our `CaEvent` has no such
//!   event; and the TLP-retransmit exception in
//!   `bbr_advance_latest_delivery_signals` (RateSample lacks
//!   `is_acking_tlp_retrans_seq`).
//! * Protective Load Balancing (`bbr_plb`, flow-label rehash on sustained CE): the
//!   simulator has one path per flow.
//! * ECN eligibility from the handshake and route (`TCP_ECN_OK && TCP_ECN_LOW`) is
//!   the `ecn_enable` parameter; `TCP_ECN_ECT_PERMANENT` is the sender's business.
//! * The draft's PROBE_DOWN gain is 0.90; we keep Linux's 232/256 ≈ 0.906.

use super::bbr2::{self, unit, Bbr2, Params as Bbr2Params, Profile, Version, V2, BBR_UNIT};
use super::registry::{describe_params, parse_params, CcaInfo, ParamInfo};
use super::BoxedCca;

/// 4 ln 2 ≈ 2.77: the v3 Startup pacing gain (`bbr_startup_pacing_gain`
/// = 256*277/100+1 = 710), the smallest gain that doubles the delivery rate each
/// round when cwnd is the limit at 2x (the draft's analysis).
pub const V3_STARTUP_PACING_GAIN: u32 = BBR_UNIT * 277 / 100 + 1;
/// 2.0: enough cwnd for the 2.77 pacing gain to double delivery each round.
pub const V3_STARTUP_CWND_GAIN: u32 = BBR_UNIT * 2;
/// 0.91: a gentler PROBE_DOWN that still drains the probe's queue within a round
/// or so, at less cost in utilization (`bbr_pacing_gain[DOWN]` = 232).
pub const V3_PROBE_DOWN_GAIN: u32 = BBR_UNIT * 91 / 100;
/// +0.25 cwnd gain in PROBE_UP (`bbr_bw_probe_cwnd_gain` = 1 quarter): lets
/// inflight reach 1.25 x BDP plus ACK-clock slack while probing.
pub const V3_PROBE_UP_CWND_GAIN_ADD: u32 = BBR_UNIT / 4;
/// 6 loss-marking events per round exit Startup (`bbr_full_loss_cnt`).
pub const V3_FULL_LOSS_CNT: u32 = 6;
/// Re-probe at 0.5 x inflight_hi once ECN marks (without loss) stop.
pub const V3_ECN_REPROBE_GAIN: u32 = BBR_UNIT / 2;

/// BBRv3 defaults.
#[derive(Debug, Clone, Copy, Default)]
pub struct V3;

impl Profile for V3 {
    const VERSION: Version = Version::V3;
    fn defaults() -> Bbr2Params<V3> {
        Bbr2Params {
            startup_pacing_gain: unit(V3_STARTUP_PACING_GAIN),
            startup_cwnd_gain: unit(V3_STARTUP_CWND_GAIN),
            probe_down_pacing_gain: unit(V3_PROBE_DOWN_GAIN),
            probe_up_cwnd_gain_add: unit(V3_PROBE_UP_CWND_GAIN_ADD),
            full_loss_cnt: V3_FULL_LOSS_CNT,
            ecn_reprobe_gain: unit(V3_ECN_REPROBE_GAIN),
            // Removed in v3 (always 0 / fixed); kept at v2's defaults, which match.
            refill_add_inc: 0,
            ..V2::defaults().with_profile::<V3>()
        }
    }
}

/// BBRv3 parameters: the BBRv2 set with v3 defaults.
pub type Params = Bbr2Params<V3>;

pub const INFO: CcaInfo = CcaInfo {
    name: "bbr3",
    family: "model",
    summary: "BBRv3: BBRv2 with v3's gains, plateau-ended PROBE_UP, and v3 bug fixes",
    reference: "google/bbr v3 net/ipv4/tcp_bbr.c; draft-ietf-ccwg-bbr",
    params: params_v3,
    build: build_v3,
};

fn params_v3() -> Vec<ParamInfo> {
    describe_params::<Params>(bbr2::PARAM_DOCS)
}

fn build_v3(v: &serde_json::Value) -> Result<BoxedCca, String> {
    let p: Params = parse_params("bbr3", v)?;
    Ok(Box::new(Bbr2::new(&p).map_err(|e| format!("parameters of CCA 'bbr3': {e}"))?) as BoxedCca)
}

#[cfg(test)]
mod tests;
