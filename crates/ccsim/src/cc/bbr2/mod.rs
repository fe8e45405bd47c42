//! BBRv2 (and, through [`Version::V3`], BBRv3): model-based congestion control
//! that paces at an estimate of the bottleneck bandwidth, bounds in-flight data by
//! the estimated BDP, and — unlike BBRv1 — also reacts to loss and ECN through an
//! explicit *upper* bound (`inflight_hi`, learned while probing) and a short-term
//! *lower* bound (`bw_lo`/`inflight_lo`, cut multiplicatively by loss/ECN while not
//! probing).
//!
//! Heads up! Before working on this folder read:
//! * `google/bbr` branch `v2alpha`, `net/ipv4/tcp_bbr2.c` — the reference for v2;
//! * `google/bbr` branch `v3`, `net/ipv4/tcp_bbr.c` and draft-ietf-ccwg-bbr — v3;
//! * `cc/mod.rs` for what the sender hands us (`RateSample` mirrors `tcp_rate.c`).
//!
//! Function names follow the reference (`bbr2_` / `bbr_` prefix dropped) so each
//! can be checked against its C counterpart. The code is written once; where v3
//! behaves differently the branch is an explicit `match self.version` / `self.v3()`
//! with a `// v3:` comment, and `cc/bbr3/mod.rs` lists every such difference.
//!
//! ```text
//!              |
//!              V
//!     +---> STARTUP  ----+
//!     |        |         |
//!     |        V         |
//!     |      DRAIN   ----+
//!     |        |         |
//!     |        V         |
//!     +---> PROBE_BW ----+      PROBE_BW = DOWN -> CRUISE -> REFILL -> UP -> DOWN ...
//!     |      ^    |      |
//!     |      |    |      |
//!     |      +----+      |
//!     |                  |
//!     +---- PROBE_RTT <--+
//! ```
//!
//! Files, one per phase: [`model`] (bw/min_rtt filters, BDP, cwnd and pacing),
//! [`startup`], [`drain`], [`probe_bw`] (the four-phase cycle and the upper
//! bounds), [`lower_bounds`] (loss/ECN response while not probing) and
//! [`probe_rtt`]. [`Bbr2::bbr2_main`] is the per-ACK entry point (`cong_control`).
//!
//! Units: windows in packets; bandwidth in Linux's fixed point, packets per µs
//! scaled by 2^24 ([`Bw`]); gains in 1/256 units (`BBR_UNIT`), exactly as the
//! reference so its integer rounding is reproduced; time in ns.
//!
//! Deviations from the reference that apply to both versions (each is also marked
//! `// Deviation:` where it lives):
//! * No `skb_marked_lost` hook exists in our CCA trait: its loss-round bookkeeping
//!   (`note_loss`) runs at the start of `cong_control` for ACKs with `rs.losses > 0`
//!   and on entering Loss; its per-skb `inflight_hi` cut (with the "lost prefix"
//!   refinement) is replaced by the per-ACK check in `adapt_upper_bounds`, which the
//!   reference also performs.
//! * No earliest-departure-time (EDT) is visible: `packets_in_net_at_edt` assumes the
//!   next departure is now.
//! * `dctcp_ece_ack_update` (receiver-side delayed-ACK CE state) is not modelled;
//!   the receiver belongs to the sender model.
//! * Time is kept in ns, not µs/jiffies, so rounding of intervals differs slightly.

mod drain;
mod lower_bounds;
mod model;
mod probe_bw;
mod probe_rtt;
mod startup;
#[cfg(test)]
pub(crate) mod tests;

use std::marker::PhantomData;

use serde::{Deserialize, Serialize};

use super::registry::{describe_params, parse_params, CcaInfo, ParamInfo};
use super::{AckSample, BoxedCca, CaEvent, CaState, CcMetrics, CongestionControl, TcpState};
use crate::units::{Time, NS_PER_MS, NS_PER_SEC, NS_PER_US};

// ---- fixed-point scales (as Linux) ----

/// Scale of gains and fractions: 8 bits, so 256 = 1.0 (`BBR_SCALE`).
pub(crate) const BBR_SCALE: u32 = 8;
/// 1.0 in gain units (`BBR_UNIT`).
pub(crate) const BBR_UNIT: u32 = 1 << BBR_SCALE;
/// Bandwidth is packets per µs scaled by 2^24 (`BW_SCALE`): ~715 bit/s resolution at
/// 1500 B packets; we hold it in a u64 so no rate overflows.
pub(crate) const BW_SCALE: u32 = 24;
/// 1 packet/µs in [`Bw`] units.
pub(crate) const BW_UNIT: u64 = 1 << BW_SCALE;
/// "Unset / infinite" for packet counts (Linux `~0U`).
pub(crate) const INF: u32 = u32::MAX;
/// "Unset / infinite" for bandwidths.
pub(crate) const BW_INF: Bw = u64::MAX;

/// Bandwidth in packets per µs << [`BW_SCALE`].
pub type Bw = u64;

// ---- BBRv2 default constants (tcp_bbr2.c); v3's live in cc/bbr3/mod.rs ----

/// 2/ln(2) ≈ 2.885: the smallest pacing gain that doubles the sending rate every
/// round, like an unpaced slow start (`bbr_high_gain` = 256*2885/1000+1 = 739).
pub(crate) const V2_HIGH_GAIN: u32 = BBR_UNIT * 2885 / 1000 + 1;
/// v2 uses the same 2.885 for the Startup cwnd (`bbr_startup_cwnd_gain`).
pub(crate) const V2_STARTUP_CWND_GAIN: u32 = BBR_UNIT * 2885 / 1000 + 1;
/// 1/2.885: drains the Startup queue in about one round (`bbr_drain_gain` = 88).
pub(crate) const DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;
/// 2.0: steady-state cwnd tolerates delayed and stretched ACKs (`bbr_cwnd_gain`).
pub(crate) const CWND_GAIN: u32 = BBR_UNIT * 2;
/// 1.25: PROBE_UP paces 25% above the estimate to look for more bandwidth.
pub(crate) const PROBE_UP_GAIN: u32 = BBR_UNIT * 5 / 4;
/// v2 PROBE_DOWN gain 0.75: drain the probe's queue and yield to other flows.
pub(crate) const V2_PROBE_DOWN_GAIN: u32 = BBR_UNIT * 3 / 4;
/// Startup is full when bw grew < 25% (`bbr_full_bw_thresh` = 320/256) ...
pub(crate) const FULL_BW_THRESH: u32 = BBR_UNIT * 5 / 4;
/// ... for 3 rounds: 1 for rwin autotuning, 1 to fill it, 1 to see the samples.
pub(crate) const FULL_BW_CNT: u32 = 3;
/// v2 exits Startup on loss after >= 8 loss-marking events in a Recovery round.
pub(crate) const V2_FULL_LOSS_CNT: u32 = 8;
/// Exit Startup after 2 consecutive rounds with CE ratio above `ecn_thresh`.
pub(crate) const FULL_ECN_CNT: u32 = 2;
/// Loss rate above which probing went too far: 256*2/100 = 5/256 ≈ 1.95% (the
/// reference's integer "2%").
pub(crate) const LOSS_THRESH: u32 = BBR_UNIT * 2 / 100;
/// Multiplicative cut on loss/ECN: 256*30/100 = 76/256 ≈ 0.297, i.e. scale to ~0.7.
pub(crate) const BETA: u32 = BBR_UNIT * 30 / 100;
/// Leave 15% of inflight_hi unused while cruising (256*15/100 = 38/256), for
/// fairness convergence and lower queues.
pub(crate) const INFLIGHT_HEADROOM: u32 = BBR_UNIT * 15 / 100;
/// CE ratio above which probing went too far (1/2).
pub(crate) const ECN_THRESH: u32 = BBR_UNIT / 2;
/// On ECN cut inflight_lo by alpha * 1/3 (85/256).
pub(crate) const ECN_FACTOR: u32 = BBR_UNIT / 3;
/// EWMA gain of the CE ratio (1/16), as DCTCP.
pub(crate) const ECN_ALPHA_GAIN: u32 = BBR_UNIT / 16;
/// ecn_alpha starts at 1.0 so a flow starting into congestion responds at once.
pub(crate) const ECN_ALPHA_INIT: u32 = BBR_UNIT;
/// ECN logic only for paths with min_rtt <= 5 ms (shallow-threshold datacenter ECN).
pub(crate) const ECN_MAX_RTT_US: u64 = 5000;
/// PROBE_UP target inflight 1.25 x BDP before v2 decides a queue is building.
pub(crate) const BW_PROBE_PIF_GAIN: u32 = BBR_UNIT * 5 / 4;
/// Reno-coexistence probe interval in rounds = 1.0 x BDP (Reno's sawtooth period).
pub(crate) const BW_PROBE_RENO_GAIN: u32 = BBR_UNIT;
/// ... capped at 63 rounds: fair to a 25 Mbit/s, 30 ms Reno flow (BDP ≈ 62 pkts).
pub(crate) const BW_PROBE_MAX_ROUNDS: u32 = 63;
/// Randomize the round bound over 0..2 rounds for mixing.
pub(crate) const BW_PROBE_RAND_ROUNDS: u32 = 2;
/// Wall-clock probe wait >= 2 s: lets a 25 Mbit/s, 30 ms Reno flow (BDP*RTT ≈ 1.9 s
/// between losses) reach its rate ...
pub(crate) const BW_PROBE_BASE_MS: u64 = 2000;
/// ... and < 3 s (base + up to 1 s random) to find freed bandwidth at human time scales.
pub(crate) const BW_PROBE_RAND_MS: u64 = 1000;
/// At least 200 ms in PROBE_RTT: bounds its cost to ~2% of a 10 s window.
pub(crate) const PROBE_RTT_MODE_MS: u64 = 200;
/// PROBE_RTT after 5 s without a new probe_rtt_min sample (v2 halved v1's 10 s).
pub(crate) const PROBE_RTT_WIN_MS: u64 = 5000;
/// PROBE_RTT cwnd = 0.5 x BDP (v1 used 4 packets), cheaper for bulk flows.
pub(crate) const PROBE_RTT_CWND_GAIN: u32 = BBR_UNIT / 2;
/// min_rtt filter window: 10 s.
pub(crate) const MIN_RTT_WIN_SEC: u64 = 10;
/// 4 packets keep an ACK-every-other-packet receiver busy (`bbr_cwnd_min_target`).
pub(crate) const CWND_MIN_TARGET: u32 = 4;
/// Provision 1.0 x the measured ACK aggregation in cwnd.
pub(crate) const EXTRA_ACKED_GAIN: u32 = BBR_UNIT;
/// extra_acked max filter spans 5-10 rounds (1-2 in Startup).
pub(crate) const EXTRA_ACKED_WIN_RTTS: u32 = 5;
/// Cap the aggregation allowance at 100 ms worth of bw.
pub(crate) const EXTRA_ACKED_MAX_US: u64 = 100_000;
/// Restart the aggregation epoch after 2^20 packets (the reference's 20-bit field).
pub(crate) const ACK_EPOCH_ACKED_RESET_THRESH: u32 = 1 << 20;
/// Pace 1% below the estimate so queues drain (`bbr_pacing_margin_percent`).
pub(crate) const PACING_MARGIN_PERCENT: u64 = 1;
/// `sk_pacing_shift` default 10: a TSO burst is ~1 ms of data.
pub(crate) const PACING_SHIFT: u32 = 10;
/// GSO_MAX_SIZE / GSO_LEGACY_MAX_SIZE: 64 KB.
pub(crate) const GSO_MAX_SIZE: u64 = 65_536;
/// Linux MAX_TCP_HEADER on x86-64 (L1-aligned 128 + MAX_HEADER).
pub(crate) const MAX_TCP_HEADER: u64 = 320;
/// Halve the min_rtt-based TSO allowance per 2^9 µs of min_rtt.
pub(crate) const TSO_RTT_SHIFT: u32 = 9;
/// v2 skips TSO (1-segment bursts) below 1.2 Mbit/s (`bbr_min_tso_rate`).
pub(crate) const MIN_TSO_RATE_BPS: u64 = 1_200_000;

/// Which reference the shared code follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// `google/bbr` v2alpha `tcp_bbr2.c`.
    V2,
    /// `google/bbr` v3 `tcp_bbr.c` / draft-ietf-ccwg-bbr.
    V3,
}

/// A set of defaults for [`Params`]: one per version, so each registry entry
/// documents its own defaults.
pub trait Profile: std::fmt::Debug + Clone + Send + Sync + 'static {
    /// Version whose behaviour the code follows.
    const VERSION: Version;
    /// The reference defaults of this version.
    fn defaults() -> Params<Self>;
}

/// BBRv2 (v2alpha) defaults.
#[derive(Debug, Clone, Copy, Default)]
pub struct V2;

impl Profile for V2 {
    const VERSION: Version = Version::V2;
    fn defaults() -> Params<V2> {
        Params {
            startup_pacing_gain: unit(V2_HIGH_GAIN),
            startup_cwnd_gain: unit(V2_STARTUP_CWND_GAIN),
            drain_gain: unit(DRAIN_GAIN),
            cwnd_gain: unit(CWND_GAIN),
            probe_up_pacing_gain: unit(PROBE_UP_GAIN),
            probe_down_pacing_gain: unit(V2_PROBE_DOWN_GAIN),
            // v2 has no extra cwnd gain in PROBE_UP.
            probe_up_cwnd_gain_add: 0.0,
            full_bw_thresh: unit(FULL_BW_THRESH),
            full_bw_cnt: FULL_BW_CNT,
            full_loss_cnt: V2_FULL_LOSS_CNT,
            full_ecn_cnt: FULL_ECN_CNT,
            loss_thresh: unit(LOSS_THRESH),
            beta: unit(BETA),
            headroom: unit(INFLIGHT_HEADROOM),
            // tcp_bbr2.c: bbr_ecn_enable = false (lab use only, DCTCP-style marks).
            ecn_enable: false,
            ecn_thresh: unit(ECN_THRESH),
            ecn_factor: unit(ECN_FACTOR),
            ecn_alpha_gain: unit(ECN_ALPHA_GAIN),
            ecn_alpha_init: unit(ECN_ALPHA_INIT),
            ecn_max_rtt_us: ECN_MAX_RTT_US,
            // v2: bbr_ecn_reprobe_gain = 0 (disabled).
            ecn_reprobe_gain: 0.0,
            bw_probe_pif_gain: unit(BW_PROBE_PIF_GAIN),
            bw_probe_reno_gain: unit(BW_PROBE_RENO_GAIN),
            bw_probe_max_rounds: BW_PROBE_MAX_ROUNDS,
            bw_probe_rand_rounds: BW_PROBE_RAND_ROUNDS,
            bw_probe_base_ms: BW_PROBE_BASE_MS,
            bw_probe_rand_ms: BW_PROBE_RAND_MS,
            probe_rtt_mode_ms: PROBE_RTT_MODE_MS,
            probe_rtt_win_ms: PROBE_RTT_WIN_MS,
            probe_rtt_cwnd_gain: unit(PROBE_RTT_CWND_GAIN),
            min_rtt_win_sec: MIN_RTT_WIN_SEC,
            cwnd_min_target: CWND_MIN_TARGET,
            extra_acked_gain: unit(EXTRA_ACKED_GAIN),
            extra_acked_win_rtts: EXTRA_ACKED_WIN_RTTS,
            // v2: bbr_refill_add_inc = 0 (disabled).
            refill_add_inc: 0,
            drain_to_target: true,
            fast_path: true,
            undo: true,
            _profile: PhantomData,
        }
    }
}

/// A gain in `BBR_UNIT`s as the f64 the parameters use (exact: n/256).
pub(crate) fn unit(g: u32) -> f64 {
    g as f64 / BBR_UNIT as f64
}

/// Tunables. Gains and fractions are plain numbers (1.0 = 100%) and are rounded to
/// the reference's 1/256 fixed point; the defaults are exactly the reference's
/// integers, which is why e.g. `loss_thresh` is 0.01953125 (5/256, Linux's "2%").
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, bound = "")]
pub struct Params<P: Profile = V2> {
    pub startup_pacing_gain: f64,
    pub startup_cwnd_gain: f64,
    pub drain_gain: f64,
    pub cwnd_gain: f64,
    pub probe_up_pacing_gain: f64,
    pub probe_down_pacing_gain: f64,
    pub probe_up_cwnd_gain_add: f64,
    pub full_bw_thresh: f64,
    pub full_bw_cnt: u32,
    pub full_loss_cnt: u32,
    pub full_ecn_cnt: u32,
    pub loss_thresh: f64,
    pub beta: f64,
    pub headroom: f64,
    pub ecn_enable: bool,
    pub ecn_thresh: f64,
    pub ecn_factor: f64,
    pub ecn_alpha_gain: f64,
    pub ecn_alpha_init: f64,
    pub ecn_max_rtt_us: u64,
    pub ecn_reprobe_gain: f64,
    pub bw_probe_pif_gain: f64,
    pub bw_probe_reno_gain: f64,
    pub bw_probe_max_rounds: u32,
    pub bw_probe_rand_rounds: u32,
    pub bw_probe_base_ms: u64,
    pub bw_probe_rand_ms: u64,
    pub probe_rtt_mode_ms: u64,
    pub probe_rtt_win_ms: u64,
    pub probe_rtt_cwnd_gain: f64,
    pub min_rtt_win_sec: u64,
    pub cwnd_min_target: u32,
    pub extra_acked_gain: f64,
    pub extra_acked_win_rtts: u32,
    pub refill_add_inc: u32,
    pub drain_to_target: bool,
    pub fast_path: bool,
    pub undo: bool,
    #[serde(skip)]
    pub _profile: PhantomData<P>,
}

impl<P: Profile> Default for Params<P> {
    fn default() -> Self {
        P::defaults()
    }
}

impl<P: Profile> Params<P> {
    /// The same values under another profile (used to derive v3's defaults from v2's).
    pub fn with_profile<Q: Profile>(self) -> Params<Q> {
        let Params {
            startup_pacing_gain,
            startup_cwnd_gain,
            drain_gain,
            cwnd_gain,
            probe_up_pacing_gain,
            probe_down_pacing_gain,
            probe_up_cwnd_gain_add,
            full_bw_thresh,
            full_bw_cnt,
            full_loss_cnt,
            full_ecn_cnt,
            loss_thresh,
            beta,
            headroom,
            ecn_enable,
            ecn_thresh,
            ecn_factor,
            ecn_alpha_gain,
            ecn_alpha_init,
            ecn_max_rtt_us,
            ecn_reprobe_gain,
            bw_probe_pif_gain,
            bw_probe_reno_gain,
            bw_probe_max_rounds,
            bw_probe_rand_rounds,
            bw_probe_base_ms,
            bw_probe_rand_ms,
            probe_rtt_mode_ms,
            probe_rtt_win_ms,
            probe_rtt_cwnd_gain,
            min_rtt_win_sec,
            cwnd_min_target,
            extra_acked_gain,
            extra_acked_win_rtts,
            refill_add_inc,
            drain_to_target,
            fast_path,
            undo,
            _profile,
        } = self;
        Params {
            startup_pacing_gain,
            startup_cwnd_gain,
            drain_gain,
            cwnd_gain,
            probe_up_pacing_gain,
            probe_down_pacing_gain,
            probe_up_cwnd_gain_add,
            full_bw_thresh,
            full_bw_cnt,
            full_loss_cnt,
            full_ecn_cnt,
            loss_thresh,
            beta,
            headroom,
            ecn_enable,
            ecn_thresh,
            ecn_factor,
            ecn_alpha_gain,
            ecn_alpha_init,
            ecn_max_rtt_us,
            ecn_reprobe_gain,
            bw_probe_pif_gain,
            bw_probe_reno_gain,
            bw_probe_max_rounds,
            bw_probe_rand_rounds,
            bw_probe_base_ms,
            bw_probe_rand_ms,
            probe_rtt_mode_ms,
            probe_rtt_win_ms,
            probe_rtt_cwnd_gain,
            min_rtt_win_sec,
            cwnd_min_target,
            extra_acked_gain,
            extra_acked_win_rtts,
            refill_add_inc,
            drain_to_target,
            fast_path,
            undo,
            _profile: PhantomData,
        }
    }
}

/// Parameter docs shared by `bbr2` and `bbr3` (`ccbench list ccas`).
pub(crate) const PARAM_DOCS: &[(&str, &str)] = &[
    ("startup_pacing_gain", "Startup pacing gain (v2 2.885 = 2/ln2; v3 2.77 = 4ln2)"),
    ("startup_cwnd_gain", "Startup/Drain cwnd gain (v2 2.885; v3 2.0)"),
    ("drain_gain", "Drain pacing gain, 1/2.885: empties the Startup queue in ~1 round"),
    ("cwnd_gain", "ProbeBW cwnd gain (x BDP), tolerates delayed/stretched ACKs"),
    ("probe_up_pacing_gain", "PROBE_UP pacing gain"),
    ("probe_down_pacing_gain", "PROBE_DOWN pacing gain (v2 0.75; v3 0.91)"),
    ("probe_up_cwnd_gain_add", "Extra cwnd gain in PROBE_UP (v2 0; v3 0.25 = bw_probe_cwnd_gain 1)"),
    ("full_bw_thresh", "Bandwidth growth factor that counts as 'still growing' (1.25)"),
    ("full_bw_cnt", "Rounds without full_bw_thresh growth before the pipe is full (3)"),
    ("full_loss_cnt", "Loss-marking events in a Recovery round needed to exit Startup on loss (v2 8; v3 6); 0 disables"),
    ("full_ecn_cnt", "Consecutive rounds with CE ratio >= ecn_thresh that end Startup (2)"),
    ("loss_thresh", "Loss rate (lost / tx_in_flight) above which probing went too far (5/256 ~ 2%)"),
    ("beta", "Multiplicative cut of inflight_hi/bw_lo/inflight_lo on loss (76/256 ~ 0.3, leaves ~0.7)"),
    ("headroom", "Fraction of inflight_hi left unused while cruising (38/256 ~ 15%)"),
    ("ecn_enable", "Use DCTCP/L4S-style ECN signals (v2 bbr_ecn_enable; v3 needs ECN_OK+ECN_LOW)"),
    ("ecn_thresh", "CE ratio above which probing went too far (0.5)"),
    ("ecn_factor", "inflight_lo cut on ECN = 1 - ecn_factor * ecn_alpha (1/3)"),
    ("ecn_alpha_gain", "EWMA gain of the per-round CE ratio (1/16)"),
    ("ecn_alpha_init", "Initial ecn_alpha (1.0)"),
    ("ecn_max_rtt_us", "Use ECN only if min_rtt <= this (5000 us); 0 = any RTT"),
    ("ecn_reprobe_gain", "After an ECN-only cycle, reprobe starting at this x inflight_hi (v2 0 = off; v3 0.5)"),
    ("bw_probe_pif_gain", "v2: PROBE_UP ends once inflight >= this x BDP after one min_rtt (1.25)"),
    ("bw_probe_reno_gain", "Reno-coexistence probe interval in rounds = this x BDP (1.0); 0 disables"),
    ("bw_probe_max_rounds", "Upper bound on the Reno-coexistence probe interval in rounds (63)"),
    ("bw_probe_rand_rounds", "Random 0..N rounds subtracted from the round bound (2)"),
    ("bw_probe_base_ms", "Wall-clock probe interval base (2000 ms)"),
    ("bw_probe_rand_ms", "Wall-clock probe interval random extra 0..N (1000 ms)"),
    ("probe_rtt_mode_ms", "Minimum time held in PROBE_RTT (200 ms); 0 disables PROBE_RTT"),
    ("probe_rtt_win_ms", "PROBE_RTT when no new probe_rtt_min for this long (5000 ms)"),
    ("probe_rtt_cwnd_gain", "PROBE_RTT cwnd as a fraction of BDP (0.5); 0 = cwnd_min_target"),
    ("min_rtt_win_sec", "min_rtt filter window (10 s)"),
    ("cwnd_min_target", "Minimum cwnd in packets (4)"),
    ("extra_acked_gain", "Gain on the ACK-aggregation cwnd allowance (1.0)"),
    ("extra_acked_win_rtts", "ACK-aggregation max filter length in rounds (5)"),
    ("refill_add_inc", "v2: packets added to inflight_hi on entering REFILL (0)"),
    ("drain_to_target", "PROBE_DOWN holds until inflight <= BDP (true); else also ends after min_rtt"),
    ("fast_path", "Skip model/control updates on app-limited ACKs that change nothing (Linux fast path)"),
    ("undo", "Restore bw_lo/inflight_lo/inflight_hi when a loss recovery was spurious"),
];

/// [`Params`] resolved to the reference's fixed-point units.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub startup_pacing_gain: u32,
    pub startup_cwnd_gain: u32,
    pub drain_gain: u32,
    pub cwnd_gain: u32,
    pub probe_up_pacing_gain: u32,
    pub probe_down_pacing_gain: u32,
    pub probe_up_cwnd_gain_add: u32,
    pub full_bw_thresh: u32,
    pub full_bw_cnt: u32,
    pub full_loss_cnt: u32,
    pub full_ecn_cnt: u32,
    pub loss_thresh: u32,
    pub beta: u32,
    pub inflight_headroom: u32,
    pub ecn_enable: bool,
    pub ecn_thresh: u32,
    pub ecn_factor: u32,
    pub ecn_alpha_gain: u32,
    pub ecn_alpha_init: u32,
    pub ecn_max_rtt: Time,
    pub ecn_reprobe_gain: u32,
    pub bw_probe_pif_gain: u32,
    pub bw_probe_reno_gain: u32,
    pub bw_probe_max_rounds: u32,
    pub bw_probe_rand_rounds: u32,
    pub bw_probe_base_us: u64,
    pub bw_probe_rand_us: u64,
    pub probe_rtt_mode: Time,
    pub probe_rtt_win: Time,
    pub probe_rtt_cwnd_gain: u32,
    pub min_rtt_win: Time,
    pub cwnd_min_target: u32,
    pub extra_acked_gain: u32,
    pub extra_acked_win_rtts: u32,
    pub refill_add_inc: u32,
    pub drain_to_target: bool,
    pub fast_path: bool,
    pub undo: bool,
}

impl Config {
    fn from_params<P: Profile>(p: &Params<P>) -> Result<Self, String> {
        // A gain or fraction in 1/256 units, range-checked like the reference's
        // bit fields (`max` in BBR_UNITs).
        fn g(name: &str, v: f64, max: u32) -> Result<u32, String> {
            if !v.is_finite() || v < 0.0 {
                return Err(format!("{name} must be a finite number >= 0, got {v}"));
            }
            let u = (v * BBR_UNIT as f64).round();
            if u > max as f64 {
                return Err(format!("{name} must be at most {}, got {v}", unit(max)));
            }
            Ok(u as u32)
        }
        // Fractions of 1 that the reference keeps in 8 bits (< 1.0).
        let frac = |name: &str, v: f64| g(name, v, BBR_UNIT - 1);
        let gain = |name: &str, v: f64| g(name, v, 0x7FF);
        if p.cwnd_min_target == 0 {
            return Err("cwnd_min_target must be >= 1".into());
        }
        if p.min_rtt_win_sec == 0 {
            return Err("min_rtt_win_sec must be >= 1".into());
        }
        Ok(Config {
            startup_pacing_gain: gain("startup_pacing_gain", p.startup_pacing_gain)?,
            startup_cwnd_gain: gain("startup_cwnd_gain", p.startup_cwnd_gain)?,
            drain_gain: gain("drain_gain", p.drain_gain)?,
            cwnd_gain: gain("cwnd_gain", p.cwnd_gain)?,
            probe_up_pacing_gain: gain("probe_up_pacing_gain", p.probe_up_pacing_gain)?,
            probe_down_pacing_gain: gain("probe_down_pacing_gain", p.probe_down_pacing_gain)?,
            probe_up_cwnd_gain_add: gain("probe_up_cwnd_gain_add", p.probe_up_cwnd_gain_add)?,
            full_bw_thresh: gain("full_bw_thresh", p.full_bw_thresh)?,
            full_bw_cnt: p.full_bw_cnt,
            full_loss_cnt: p.full_loss_cnt,
            full_ecn_cnt: p.full_ecn_cnt,
            loss_thresh: frac("loss_thresh", p.loss_thresh)?,
            beta: frac("beta", p.beta)?,
            inflight_headroom: frac("headroom", p.headroom)?,
            ecn_enable: p.ecn_enable,
            ecn_thresh: frac("ecn_thresh", p.ecn_thresh)?,
            ecn_factor: frac("ecn_factor", p.ecn_factor)?,
            ecn_alpha_gain: frac("ecn_alpha_gain", p.ecn_alpha_gain)?,
            ecn_alpha_init: g("ecn_alpha_init", p.ecn_alpha_init, BBR_UNIT)?,
            ecn_max_rtt: p.ecn_max_rtt_us.saturating_mul(NS_PER_US),
            ecn_reprobe_gain: g("ecn_reprobe_gain", p.ecn_reprobe_gain, 0x1FF)?,
            bw_probe_pif_gain: g("bw_probe_pif_gain", p.bw_probe_pif_gain, 0x1FF)?,
            bw_probe_reno_gain: g("bw_probe_reno_gain", p.bw_probe_reno_gain, 0x1FF)?,
            bw_probe_max_rounds: p.bw_probe_max_rounds,
            bw_probe_rand_rounds: p.bw_probe_rand_rounds,
            bw_probe_base_us: p.bw_probe_base_ms.saturating_mul(1000),
            bw_probe_rand_us: p.bw_probe_rand_ms.saturating_mul(1000),
            probe_rtt_mode: p.probe_rtt_mode_ms.saturating_mul(NS_PER_MS),
            // As bbr_init: the PROBE_RTT window never exceeds the min_rtt window.
            probe_rtt_win: p.probe_rtt_win_ms.min(p.min_rtt_win_sec.saturating_mul(1000)).saturating_mul(NS_PER_MS),
            probe_rtt_cwnd_gain: frac("probe_rtt_cwnd_gain", p.probe_rtt_cwnd_gain)?,
            min_rtt_win: p.min_rtt_win_sec.saturating_mul(NS_PER_SEC),
            cwnd_min_target: p.cwnd_min_target,
            extra_acked_gain: gain("extra_acked_gain", p.extra_acked_gain)?,
            extra_acked_win_rtts: p.extra_acked_win_rtts.min(0x1F),
            refill_add_inc: p.refill_add_inc,
            drain_to_target: p.drain_to_target,
            fast_path: p.fast_path,
            undo: p.undo,
        })
    }
}

/// BBR's top-level modes; ProbeBW carries its cycle phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Ramp up quickly to fill the pipe.
    Startup,
    /// Drain the queue Startup built.
    Drain,
    /// Steady state: cycle through the phases to discover and share bandwidth.
    ProbeBw(Phase),
    /// Cut inflight to re-measure the propagation delay.
    ProbeRtt,
}

/// ProbeBW phases (`enum bbr_pacing_gain_phase`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Push inflight up to probe for bandwidth and volume.
    Up,
    /// Drain excess inflight from the queue.
    Down,
    /// Use the pipe with headroom, reacting only to loss/ECN.
    Cruise,
    /// Refill the pipe to 100% before probing.
    Refill,
}

/// How the incoming ACK stream relates to our bandwidth probing (`bbr_ack_phase`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AckPhase {
    Init,
    Refilling,
    ProbeStarting,
    ProbeFeedback,
    ProbeStopping,
}

/// The BBRv2/v3 state (`struct bbr`). One struct for both versions.
#[derive(Debug, Clone)]
pub struct Bbr2 {
    version: Version,
    cfg: Config,

    // ---- mode ----
    mode: Mode,
    /// CA state seen on the previous ACK.
    prev_ca_state: CaState,
    pacing_gain: u32,
    cwnd_gain: u32,
    init_cwnd: u32,
    /// Last known good cwnd, restored after recovery or PROBE_RTT.
    prior_cwnd: u32,
    try_fast_path: bool,
    idle_restart: bool,
    has_seen_rtt: bool,

    // ---- rounds ----
    /// `tp.delivered` at which the current packet-timed round ends.
    next_rtt_delivered: u64,
    round_start: bool,

    // ---- min RTT (ns; Time::MAX = no sample) ----
    min_rtt: Time,
    min_rtt_stamp: Time,
    probe_rtt_min: Time,
    probe_rtt_min_stamp: Time,
    probe_rtt_done_stamp: Option<Time>,
    probe_rtt_round_done: bool,

    // ---- bandwidth: max filter of 2 slots advanced once per ProbeBW cycle ----
    max_bw: [Bw; 2],
    /// Startup / v3 PROBE_UP plateau detector.
    full_bw: Bw,
    full_bw_cnt: u32,
    full_bw_reached: bool,
    /// v3: recently saw a bandwidth plateau (reset when probing resumes).
    full_bw_now: bool,

    // ---- ACK aggregation ----
    ack_epoch_stamp: Time,
    ack_epoch_acked: u32,
    extra_acked: [u32; 2],
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,

    // ---- ProbeBW cycle ----
    cycle_stamp: Time,
    ack_phase: AckPhase,
    bw_probe_up_rounds: u32,
    bw_probe_up_cnt: u32,
    bw_probe_up_acks: u32,
    probe_wait: Time,
    rounds_since_probe: u32,
    bw_probe_samples: bool,
    prev_probe_too_high: bool,
    stopped_risky_probe: bool,
    /// v2: saw a probe sample whose loss/ECN was acceptable.
    got_ok_bw_probe_sample: bool,

    // ---- upper and lower bounds ----
    /// v2 only (ECN cut); stays infinite in v3, which dropped it.
    bw_hi: Bw,
    bw_lo: Bw,
    inflight_hi: u32,
    inflight_lo: u32,
    bw_latest: Bw,
    inflight_latest: u32,
    undo_bw_lo: Bw,
    undo_inflight_lo: u32,
    undo_inflight_hi: u32,

    // ---- congestion signals ----
    loss_round_delivered: u64,
    loss_round_start: bool,
    loss_in_round: bool,
    ecn_in_round: bool,
    loss_in_cycle: bool,
    ecn_in_cycle: bool,
    loss_events_in_round: u32,
    startup_ecn_rounds: u32,
    ecn_eligible: bool,
    ecn_alpha: u32,
    alpha_last_delivered: u64,
    alpha_last_delivered_ce: u64,
}

pub const INFO: CcaInfo = CcaInfo {
    name: "bbr2",
    family: "model",
    summary: "BBRv2: model-based (bw, min_rtt) with loss/ECN-aware inflight_hi and bw_lo/inflight_lo bounds",
    reference: "google/bbr v2alpha net/ipv4/tcp_bbr2.c; IETF 104-106 ICCRG BBRv2 slides",
    params: params_v2,
    build: build_v2,
};

fn params_v2() -> Vec<ParamInfo> {
    describe_params::<Params<V2>>(PARAM_DOCS)
}

fn build_v2(v: &serde_json::Value) -> Result<BoxedCca, String> {
    let p: Params<V2> = parse_params("bbr2", v)?;
    Ok(Box::new(Bbr2::new(&p).map_err(|e| format!("parameters of CCA 'bbr2': {e}"))?) as BoxedCca)
}

impl Bbr2 {
    /// Build with the given parameters; the profile picks the version.
    pub fn new<P: Profile>(p: &Params<P>) -> Result<Self, String> {
        Ok(Self::fresh(P::VERSION, Config::from_params(p)?))
    }

    /// The state `bbr_init` starts from (connection-dependent parts are set by `init`).
    fn fresh(version: Version, cfg: Config) -> Self {
        Bbr2 {
            version,
            mode: Mode::Startup,
            prev_ca_state: CaState::Open,
            pacing_gain: cfg.startup_pacing_gain,
            cwnd_gain: cfg.startup_cwnd_gain,
            init_cwnd: 0,
            prior_cwnd: 0,
            try_fast_path: false,
            idle_restart: false,
            has_seen_rtt: false,
            next_rtt_delivered: 0,
            round_start: false,
            min_rtt: Time::MAX,
            min_rtt_stamp: 0,
            probe_rtt_min: Time::MAX,
            probe_rtt_min_stamp: 0,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            max_bw: [0, 0],
            full_bw: 0,
            full_bw_cnt: 0,
            full_bw_reached: false,
            full_bw_now: false,
            ack_epoch_stamp: 0,
            ack_epoch_acked: 0,
            extra_acked: [0, 0],
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            cycle_stamp: 0,
            ack_phase: AckPhase::Init,
            bw_probe_up_rounds: 0,
            bw_probe_up_cnt: INF,
            bw_probe_up_acks: 0,
            probe_wait: 0,
            rounds_since_probe: 0,
            bw_probe_samples: false,
            prev_probe_too_high: false,
            stopped_risky_probe: false,
            got_ok_bw_probe_sample: false,
            bw_hi: BW_INF,
            bw_lo: BW_INF,
            inflight_hi: INF,
            inflight_lo: INF,
            bw_latest: 0,
            inflight_latest: 0,
            undo_bw_lo: 0,
            undo_inflight_lo: 0,
            undo_inflight_hi: 0,
            loss_round_delivered: 0,
            loss_round_start: false,
            loss_in_round: false,
            ecn_in_round: false,
            loss_in_cycle: false,
            ecn_in_cycle: false,
            loss_events_in_round: 0,
            startup_ecn_rounds: 0,
            ecn_eligible: false,
            ecn_alpha: cfg.ecn_alpha_init,
            alpha_last_delivered: 0,
            alpha_last_delivered_ce: 0,
            cfg,
        }
    }

    /// Whether the v3 behaviour applies.
    pub(crate) fn v3(&self) -> bool {
        self.version == Version::V3
    }

    /// Version this instance follows.
    pub fn version(&self) -> Version {
        self.version
    }

    /// Current mode (and ProbeBW phase).
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Current pacing and cwnd gains in `BBR_UNIT`s.
    pub fn gains(&self) -> (u32, u32) {
        (self.pacing_gain, self.cwnd_gain)
    }

    /// inflight_hi in packets (None = unset).
    pub fn inflight_hi(&self) -> Option<u32> {
        (self.inflight_hi != INF).then_some(self.inflight_hi)
    }

    /// inflight_lo in packets (None = unset).
    pub fn inflight_lo(&self) -> Option<u32> {
        (self.inflight_lo != INF).then_some(self.inflight_lo)
    }

    /// bw_lo in [`Bw`] units (None = unset).
    pub fn bw_lo(&self) -> Option<Bw> {
        (self.bw_lo != BW_INF).then_some(self.bw_lo)
    }

    /// Whether Startup decided the pipe is full.
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }

    fn state_name(&self) -> &'static str {
        match self.mode {
            Mode::Startup => "startup",
            Mode::Drain => "drain",
            Mode::ProbeBw(Phase::Down) => "probe_bw_down",
            Mode::ProbeBw(Phase::Cruise) => "probe_bw_cruise",
            Mode::ProbeBw(Phase::Refill) => "probe_bw_refill",
            Mode::ProbeBw(Phase::Up) => "probe_bw_up",
            Mode::ProbeRtt => "probe_rtt",
        }
    }

    /// `bbr2_main`: the per-ACK model update followed by the control update.
    pub(crate) fn bbr2_main(&mut self, tp: &mut TcpState, ack: &AckSample) {
        let rs = &ack.rs;

        // Deviation: Linux calls skb_marked_lost() for each skb as loss detection
        // marks it, before cong_control(); we only learn of those marks here.
        if rs.losses > 0 {
            self.note_loss(tp);
        }

        self.update_round_start(tp, rs);
        if self.round_start {
            self.rounds_since_probe = (self.rounds_since_probe + 1).min(0xFF);
            self.update_ecn_alpha(tp);
        }

        // v3: only ECN-eligible flows note ECE (v2 notes it always and checks
        // eligibility when adapting).
        self.ecn_in_round |= ack.ece && (!self.v3() || self.ecn_eligible);
        let sample_bw = self.calculate_bw_sample(rs);
        if self.v3() {
            self.update_latest_delivery_signals(tp, rs, sample_bw);
        }

        let mut update_model = true;
        if !self.run_fast_path(tp, rs, sample_bw, &mut update_model) {
            if update_model {
                self.update_model(tp, rs, sample_bw);
            }
            self.update_gains();
            let bw = self.bw();
            self.set_pacing_rate(tp, bw, self.pacing_gain);
            self.set_cwnd(tp, rs.acked_sacked, bw, self.cwnd_gain);
            self.bound_cwnd_for_inflight_model(tp);
        }

        if self.v3() {
            self.advance_latest_delivery_signals(rs, sample_bw);
        }
        self.prev_ca_state = tp.ca_state;
        self.loss_in_cycle |= rs.lost > 0;
        self.ecn_in_cycle |= rs.delivered_ce > 0;
    }

    /// `bbr2_update_model`.
    fn update_model(&mut self, tp: &mut TcpState, rs: &super::RateSample, sample_bw: Bw) {
        self.update_congestion_signals(tp, rs, sample_bw);
        self.update_ack_aggregation(tp, rs);
        self.check_loss_too_high_in_startup(tp, rs);
        self.check_full_bw_reached(rs, sample_bw);
        self.check_drain(tp);
        self.update_cycle_phase(tp, rs, sample_bw);
        self.update_min_rtt(tp, rs);
    }

    /// `bbr2_fast_path`: on app-limited ACKs that bring no news, skip the model
    /// update (and, if nothing changed, the control update too).
    fn run_fast_path(
        &mut self,
        tp: &mut TcpState,
        rs: &super::RateSample,
        sample_bw: Bw,
        update_model: &mut bool,
    ) -> bool {
        if self.cfg.fast_path
            && self.try_fast_path
            && rs.is_app_limited
            && sample_bw < self.max_bw()
            && !self.loss_in_round
            && !self.ecn_in_round
        {
            let prev_mode = self.mode;
            let prev_min_rtt = self.min_rtt;
            self.check_drain(tp);
            self.update_cycle_phase(tp, rs, sample_bw);
            self.update_min_rtt(tp, rs);
            if self.mode == prev_mode && self.min_rtt == prev_min_rtt && self.try_fast_path {
                return true;
            }
            *update_model = false;
        }
        false
    }
}

impl CongestionControl for Bbr2 {
    fn name(&self) -> &'static str {
        match self.version {
            Version::V2 => "bbr2",
            Version::V3 => "bbr3",
        }
    }

    /// `bbr_init` + `bbr2_init`.
    fn init(&mut self, tp: &mut TcpState) {
        *self = Bbr2::fresh(self.version, self.cfg.clone());
        self.init_cwnd = tp.cwnd.min(0x7F);
        self.prior_cwnd = tp.prior_cwnd;
        tp.ssthresh = crate::cc::INFINITE_SSTHRESH;
        // v3 anchors the first round at the current delivered count (v2 at 0).
        self.next_rtt_delivered = if self.v3() { tp.delivered } else { 0 };
        self.probe_rtt_min = tp.min_rtt;
        self.probe_rtt_min_stamp = tp.now;
        self.min_rtt = tp.min_rtt;
        self.min_rtt_stamp = tp.now;
        self.init_pacing_rate_from_rtt(tp);
        self.ack_epoch_stamp = tp.now;
        // Start sampling loss rounds after the first full flight is ACKed.
        self.loss_round_delivered = tp.delivered + 1;
        self.update_gains();
    }

    fn ssthresh(&mut self, tp: &mut TcpState) -> u32 {
        // bbr2_ssthresh: entering recovery; save state for undo.
        self.save_cwnd(tp);
        self.undo_bw_lo = self.bw_lo;
        self.undo_inflight_lo = self.inflight_lo;
        self.undo_inflight_hi = self.inflight_hi;
        tp.ssthresh
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    fn cong_control(&mut self, tp: &mut TcpState, sample: &AckSample) {
        self.bbr2_main(tp, sample);
    }

    /// `bbr2_set_state`.
    fn set_state(&mut self, tp: &mut TcpState, new_state: CaState) {
        if new_state == CaState::Loss {
            self.prev_ca_state = CaState::Loss;
            // v3: a timeout may have re-pathed the flow: restart the plateau
            // detector entirely (v2 only forgets full_bw).
            if self.v3() {
                self.reset_full_bw();
            } else {
                self.full_bw = 0;
            }
            if !self.is_probing_bandwidth() && self.inflight_lo == INF {
                // adapt_lower_bounds needs the cwnd from before the RTO.
                // v3: max(cwnd, prior_cwnd); v2: prior_cwnd.
                self.inflight_lo =
                    if self.v3() { tp.cwnd.max(self.prior_cwnd) } else { self.prior_cwnd };
            }
            // Deviation: an RTO marks the whole flight lost, which Linux reports
            // through skb_marked_lost(); note the loss round here.
            self.note_loss(tp);
        } else if self.prev_ca_state == CaState::Loss {
            // bbr_exit_loss_recovery
            tp.cwnd = tp.cwnd.max(self.prior_cwnd);
            self.try_fast_path = false;
        }
    }

    /// `bbr_cwnd_event`.
    fn cwnd_event(&mut self, tp: &mut TcpState, event: CaEvent) {
        if event == CaEvent::TxStart && tp.app_limited != 0 {
            self.idle_restart = true;
            self.ack_epoch_stamp = tp.now;
            self.ack_epoch_acked = 0;
            // Restarting from idle and app-limited: pace at the estimate, no faster.
            match self.mode {
                Mode::ProbeBw(_) => self.set_pacing_rate(tp, self.bw(), BBR_UNIT),
                Mode::ProbeRtt => self.check_probe_rtt_done(tp),
                _ => {}
            }
        }
        // Deviation: CA_EVENT_ECN_IS_CE/NO_CE drive dctcp_ece_ack_update(), the
        // receiver's CE-state ACK policy, which belongs to our receiver model.
    }

    /// `bbr2_undo_cwnd`: the recovery was spurious; revert the loss response.
    fn undo_cwnd(&mut self, tp: &mut TcpState) -> u32 {
        if self.v3() {
            self.reset_full_bw();
        } else {
            self.full_bw = 0;
            self.full_bw_cnt = 0;
        }
        self.loss_in_round = false;
        if !self.cfg.undo {
            return tp.cwnd;
        }
        self.bw_lo = self.bw_lo.max(self.undo_bw_lo);
        self.inflight_lo = self.inflight_lo.max(self.undo_inflight_lo);
        self.inflight_hi = self.inflight_hi.max(self.undo_inflight_hi);
        self.try_fast_path = false;
        self.prior_cwnd
    }

    fn metrics(&self, tp: &TcpState) -> CcMetrics {
        CcMetrics {
            state: self.state_name(),
            bw_bps: Some(self.bw_bits_per_sec(tp, self.bw())),
            min_rtt_ns: (self.min_rtt != Time::MAX).then_some(self.min_rtt),
            pacing_gain: Some(unit(self.pacing_gain)),
            cwnd_gain: Some(unit(self.cwnd_gain)),
            inflight_hi: self.inflight_hi().map(f64::from),
            inflight_lo: self.inflight_lo().map(f64::from),
            bw_lo_bps: self.bw_lo().map(|b| self.bw_bits_per_sec(tp, b)),
        }
    }
}
