//! BBR version 1 (Bottleneck Bandwidth and Round-trip propagation time), as Linux
//! mainline `net/ipv4/tcp_bbr.c`.
//!
//! Heads up! Before working on this folder read `tcp_bbr.c` top to bottom (it is
//! short and its comments are the specification), and `tcp_rate.c` for what the
//! rate sample means. References:
//! * N. Cardwell, Y. Cheng, C. S. Gunn, S. Hassas Yeganeh, V. Jacobson, "BBR:
//!   Congestion-Based Congestion Control", ACM Queue 14(5), 2016.
//! * Linux `net/ipv4/tcp_bbr.c` (the reference this port follows function by
//!   function; functions keep their Linux names without the `bbr_` prefix).
//!
//! In a nutshell, on every ACK BBR updates a model of the path
//!
//! ```text
//! bottleneck_bw = windowed_max(delivered / elapsed, 10 packet-timed rounds)
//! min_rtt       = windowed_min(rtt, 10 seconds)
//! ```
//!
//! and then controls: `pacing_rate = pacing_gain × bw`, `cwnd = max(cwnd_gain × bw ×
//! min_rtt (+ ACK-aggregation allowance), 4)`. Loss is not a congestion signal,
//! except for packet conservation during the first round of recovery and the
//! long-term ("policer") bandwidth estimate.
//!
//! ```text
//!             |
//!             V
//!    +---> STARTUP  ----+
//!    |        |         |
//!    |        V         |
//!    |      DRAIN   ----+
//!    |        |         |
//!    |        V         |
//!    +---> PROBE_BW ----+
//!    |      ^    |      |
//!    |      |    |      |
//!    |      +----+      |
//!    |                  |
//!    +---- PROBE_RTT <--+
//! ```
//!
//! Where to look:
//!
//! | file | Linux functions |
//! |---|---|
//! | `mod.rs` | `bbr_main`, `bbr_update_model`, `bbr_update_gains`, the ops table (`init`, `ssthresh`, `undo_cwnd`, `set_state`, `cwnd_event`, `get_info`) |
//! | `model.rs` | `bbr_update_bw`, `bbr_update_ack_aggregation`, `bbr_bdp`, `bbr_inflight`, `bbr_quantization_budget`, `bbr_tso_segs_goal`, pacing-rate helpers |
//! | `startup.rs` | `bbr_check_full_bw_reached`, `bbr_reset_startup_mode` |
//! | `drain.rs` | `bbr_check_drain` |
//! | `probe_bw.rs` | `bbr_update_cycle_phase`, `bbr_is_next_cycle_phase`, `bbr_reset_probe_bw_mode` |
//! | `probe_rtt.rs` | `bbr_update_min_rtt`, `bbr_check_probe_rtt_done` |
//! | `lt_bw.rs` | `bbr_lt_bw_sampling` and friends (policer detection) |
//! | `cwnd.rs` | `bbr_set_cwnd`, `bbr_set_cwnd_to_recover_or_restore`, `bbr_save_cwnd` |
//!
//! Arithmetic is Linux's fixed point: gains in units of [`BBR_UNIT`] (1/256),
//! bandwidth in packets per microsecond scaled by 2^[`BW_SCALE`], RTTs in whole
//! microseconds, so cwnd and pacing values match the kernel's integer results.
//! 64-bit products that could overflow in Linux are done in `u128` here, which
//! gives the same result wherever Linux does not overflow.

mod cwnd;
mod drain;
mod lt_bw;
mod model;
mod probe_bw;
mod probe_rtt;
mod startup;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

use super::common::{MaxFilter, RoundCounter};
use super::registry::{describe_params, parse_params, CcaInfo};
use super::{AckSample, BoxedCca, CaEvent, CaState, CcMetrics, CongestionControl, RateSample, TcpState};
use crate::units::Time;

use lt_bw::LtBw;

/// Scale of the bandwidth fixed point: bw is in packets/µs << 24, so one unit is
/// about 1500 B / 1 µs / 2^24 ≈ 715 bit/s and a `u32` would reach ≈ 3 Tbit/s.
pub(crate) const BW_SCALE: u32 = 24;
pub(crate) const BW_UNIT: u64 = 1 << BW_SCALE;
/// Scale of gains and other fractions: 8 bits, so a gain of 1.0 is 256.
pub(crate) const BBR_SCALE: u32 = 8;
pub(crate) const BBR_UNIT: u32 = 1 << BBR_SCALE;

/// Linux `TCP_INIT_CWND`: the cwnd cap used while no RTT sample exists (RFC 6928).
const TCP_INIT_CWND: u32 = 10;
/// Microseconds per second, for the bytes-per-second conversions.
const USEC_PER_SEC: u64 = 1_000_000;

/// Tunables. Defaults are Linux's compile-time constants; gains are written as
/// multiples and rounded to the nearest 1/256 (`BBR_UNIT`), so the defaults
/// reproduce Linux's integers exactly (e.g. `high_gain` = 739/256 = 2.88671875).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Startup pacing and cwnd gain (and Drain cwnd gain).
    pub high_gain: f64,
    /// Drain pacing gain.
    pub drain_gain: f64,
    /// ProbeBW cwnd gain.
    pub cwnd_gain: f64,
    /// ProbeBW pacing gain of the probing phase (phase 0 of the cycle).
    pub probe_bw_up_gain: f64,
    /// ProbeBW pacing gain of the draining phase (phase 1 of the cycle).
    pub probe_bw_down_gain: f64,
    /// Window of the max-bandwidth filter, in packet-timed rounds.
    pub bw_rtts: u32,
    /// Window of the min-RTT filter, in seconds.
    pub min_rtt_win_sec: u32,
    /// Minimum time spent at `cwnd_min_target` in ProbeRTT (ms); 0 disables ProbeRTT.
    pub probe_rtt_mode_ms: u32,
    /// Smallest cwnd target, and the ProbeRTT cwnd (packets).
    pub cwnd_min_target: u32,
    /// Startup: bw growth per round that counts as "still growing".
    pub full_bw_thresh: f64,
    /// Startup: rounds without such growth after which the pipe is deemed full.
    pub full_bw_cnt: u32,
    /// Pace this many percent below the estimated bandwidth.
    pub pacing_margin_percent: u32,
    /// Gain on the ACK-aggregation estimate added to cwnd (0 disables it).
    pub extra_acked_gain: f64,
    /// Window of the extra_acked max filter, in rounds (the filter spans k..2k).
    pub extra_acked_win_rtts: u32,
    /// Cap on the aggregation allowance, as time at the estimated bw (ms).
    pub extra_acked_max_ms: u32,
    /// Long-term sampling: minimum rounds in a policer sampling interval.
    pub lt_intvl_min_rtts: u32,
    /// Long-term sampling: lost/delivered ratio above which an interval is lossy.
    pub lt_loss_thresh: f64,
    /// Long-term sampling: rounds to use the policed rate before re-probing.
    pub lt_bw_max_rtts: u32,
    /// Size the quantization budget as Linux does (`bbr_tso_segs_goal`: ≈1 ms of
    /// data at the pacing rate, up to 64 KB, per skb). On by default, as in Linux,
    /// whose TCP builds GSO skbs whatever the device; `false` gives the budget of a
    /// single-packet sender (`bbr_min_tso_segs`); see `model.rs`.
    pub tso_autosize: bool,
}

impl Default for Params {
    fn default() -> Self {
        Self {
            // 2/ln 2 ≈ 2.885: the smallest gain that doubles the sending rate every
            // round, like slow start (Linux: BBR_UNIT * 2885 / 1000 + 1 = 739).
            high_gain: 739.0 / 256.0,
            // ≈ 1/high_gain: drains Startup's queue in about one round
            // (Linux: BBR_UNIT * 1000 / 2885 = 88).
            drain_gain: 88.0 / 256.0,
            // Tolerates delayed and stretched ACKs in steady state.
            cwnd_gain: 2.0,
            // Probe for 25% more bandwidth, then drain the queue that may have built.
            probe_bw_up_gain: 1.25,
            probe_bw_down_gain: 0.75,
            // CYCLE_LEN + 2: a full gain cycle plus slack, so the probing phase's
            // sample survives until the next probe.
            bw_rtts: 10,
            min_rtt_win_sec: 10,
            // Bounds the ProbeRTT throughput penalty to about 2% (200 ms / 10 s).
            probe_rtt_mode_ms: 200,
            // Two outstanding 2-packet ACK-every-other-packet sequences.
            cwnd_min_target: 4,
            full_bw_thresh: 1.25,
            // 1: rwin autotuning grows rwin, 2: we fill it, 3: higher samples arrive.
            full_bw_cnt: 3,
            pacing_margin_percent: 1,
            extra_acked_gain: 1.0,
            extra_acked_win_rtts: 5,
            extra_acked_max_ms: 100,
            lt_intvl_min_rtts: 4,
            // Linux: 50 / BBR_UNIT ≈ 20% loss marks a policed interval.
            lt_loss_thresh: 50.0 / 256.0,
            lt_bw_max_rtts: 48,
            tso_autosize: true,
        }
    }
}

const PARAM_DOCS: &[(&str, &str)] = &[
    ("high_gain", "Startup pacing/cwnd gain and Drain cwnd gain (2/ln2, Linux 739/256)"),
    ("drain_gain", "Drain pacing gain (Linux 88/256 ≈ 1/high_gain)"),
    ("cwnd_gain", "ProbeBW cwnd gain (× BDP)"),
    ("probe_bw_up_gain", "ProbeBW pacing gain of the probing phase"),
    ("probe_bw_down_gain", "ProbeBW pacing gain of the draining phase"),
    ("bw_rtts", "max-bandwidth filter window (packet-timed rounds)"),
    ("min_rtt_win_sec", "min-RTT filter window (s); its expiry triggers ProbeRTT"),
    ("probe_rtt_mode_ms", "minimum ProbeRTT duration at cwnd_min_target (ms); 0 disables ProbeRTT"),
    ("cwnd_min_target", "minimum cwnd and ProbeRTT cwnd (packets)"),
    ("full_bw_thresh", "Startup bw growth ratio per round that counts as growth"),
    ("full_bw_cnt", "rounds without growth before Startup deems the pipe full"),
    ("pacing_margin_percent", "pace this many percent below the bandwidth estimate"),
    ("extra_acked_gain", "gain on the ACK-aggregation cwnd allowance (0 disables)"),
    ("extra_acked_win_rtts", "ACK-aggregation max filter window (rounds)"),
    ("extra_acked_max_ms", "cap on the ACK-aggregation allowance (ms at the estimated bw)"),
    ("lt_intvl_min_rtts", "policer detection: minimum rounds per sampling interval"),
    ("lt_loss_thresh", "policer detection: loss ratio that makes an interval lossy"),
    ("lt_bw_max_rtts", "policer detection: rounds to pace at the policed rate"),
    ("tso_autosize", "quantization budget sized like Linux's GSO skbs, bbr_tso_segs_goal (false: a single-packet sender's)"),
];

pub const INFO: CcaInfo = CcaInfo {
    name: "bbr1",
    family: "model",
    summary: "BBR v1: model-based, paces at the max delivery rate, cwnd 2×BDP (Linux tcp_bbr.c)",
    reference: "Cardwell et al., ACM Queue 14(5) 2016; Linux net/ipv4/tcp_bbr.c",
    params: || describe_params::<Params>(PARAM_DOCS),
    build: |v| {
        let p: Params = parse_params("bbr1", v)?;
        Ok(Box::new(Bbr1::new(p)?) as BoxedCca)
    },
};

/// The parameters converted to Linux's fixed-point units, once.
#[derive(Debug, Clone)]
struct Consts {
    high_gain: u32,
    drain_gain: u32,
    cwnd_gain: u32,
    /// The ProbeBW pacing-gain cycle (`bbr_pacing_gain[]`).
    pacing_gain_cycle: [u32; probe_bw::CYCLE_LEN],
    bw_rtts: u64,
    min_rtt_win: Time,
    probe_rtt_mode: Time,
    cwnd_min_target: u32,
    full_bw_thresh: u32,
    full_bw_cnt: u32,
    pacing_margin_percent: u64,
    extra_acked_gain: u32,
    extra_acked_win_rtts: u32,
    extra_acked_max_us: u64,
    lt_intvl_min_rtts: u32,
    lt_loss_thresh: u32,
    lt_bw_max_rtts: u32,
    tso_autosize: bool,
}

/// A gain as a multiple -> BBR_UNIT fixed point, rejecting what Linux could not hold.
fn to_unit(name: &str, x: f64, allow_zero: bool) -> Result<u32, String> {
    // Linux keeps gains in 10-bit fields: at most 1023/256 ≈ 4.
    if !x.is_finite() || x < 0.0 || (!allow_zero && x == 0.0) || x * 256.0 > 1023.0 {
        return Err(format!("parameters of CCA 'bbr1': {name} = {x} is out of range (0, 3.99]"));
    }
    let v = (x * BBR_UNIT as f64).round() as u32;
    if v == 0 && !allow_zero {
        return Err(format!("parameters of CCA 'bbr1': {name} = {x} rounds to zero"));
    }
    Ok(v)
}

impl Consts {
    fn from_params(p: &Params) -> Result<Self, String> {
        let nonzero = |name: &str, v: u32| {
            if v == 0 {
                Err(format!("parameters of CCA 'bbr1': {name} must be at least 1"))
            } else {
                Ok(v)
            }
        };
        if p.pacing_margin_percent >= 100 {
            return Err("parameters of CCA 'bbr1': pacing_margin_percent must be below 100".into());
        }
        if !(p.lt_loss_thresh.is_finite() && p.lt_loss_thresh >= 0.0 && p.lt_loss_thresh <= 1.0) {
            return Err("parameters of CCA 'bbr1': lt_loss_thresh must be within [0, 1]".into());
        }
        let up = to_unit("probe_bw_up_gain", p.probe_bw_up_gain, false)?;
        let down = to_unit("probe_bw_down_gain", p.probe_bw_down_gain, false)?;
        let u = BBR_UNIT;
        Ok(Self {
            high_gain: to_unit("high_gain", p.high_gain, false)?,
            drain_gain: to_unit("drain_gain", p.drain_gain, false)?,
            cwnd_gain: to_unit("cwnd_gain", p.cwnd_gain, false)?,
            pacing_gain_cycle: [up, down, u, u, u, u, u, u],
            bw_rtts: nonzero("bw_rtts", p.bw_rtts)? as u64,
            min_rtt_win: nonzero("min_rtt_win_sec", p.min_rtt_win_sec)? as Time * crate::units::NS_PER_SEC,
            probe_rtt_mode: p.probe_rtt_mode_ms as Time * crate::units::NS_PER_MS,
            cwnd_min_target: nonzero("cwnd_min_target", p.cwnd_min_target)?,
            full_bw_thresh: to_unit("full_bw_thresh", p.full_bw_thresh, false)?,
            full_bw_cnt: nonzero("full_bw_cnt", p.full_bw_cnt)?,
            pacing_margin_percent: p.pacing_margin_percent as u64,
            extra_acked_gain: to_unit("extra_acked_gain", p.extra_acked_gain, true)?,
            extra_acked_win_rtts: nonzero("extra_acked_win_rtts", p.extra_acked_win_rtts)?,
            extra_acked_max_us: p.extra_acked_max_ms as u64 * 1000,
            lt_intvl_min_rtts: nonzero("lt_intvl_min_rtts", p.lt_intvl_min_rtts)?,
            lt_loss_thresh: (p.lt_loss_thresh * BBR_UNIT as f64).round() as u32,
            lt_bw_max_rtts: nonzero("lt_bw_max_rtts", p.lt_bw_max_rtts)?,
            tso_autosize: p.tso_autosize,
        })
    }
}

/// BBR's modes (`enum bbr_mode`), carrying the state only that mode uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Ramp up the sending rate rapidly to fill the pipe.
    Startup,
    /// Drain the queue created in Startup.
    Drain,
    /// Discover and share bandwidth: pace around the estimate with a gain cycle.
    ProbeBw {
        /// Index into the pacing-gain cycle (`cycle_idx`).
        cycle_idx: usize,
        /// `delivered_time` when this phase began (`cycle_mstamp`).
        cycle_stamp: Time,
    },
    /// Cut inflight to `cwnd_min_target` to re-measure the propagation delay.
    ProbeRtt {
        /// When ProbeRTT may end (`probe_rtt_done_stamp`); `None` until inflight
        /// first reaches the minimum.
        done_stamp: Option<Time>,
        /// A packet-timed round passed at the minimum inflight (`probe_rtt_round_done`).
        round_done: bool,
    },
}

impl Mode {
    fn name(&self) -> &'static str {
        match self {
            Mode::Startup => "startup",
            Mode::Drain => "drain",
            Mode::ProbeBw { .. } => "probe_bw",
            Mode::ProbeRtt { .. } => "probe_rtt",
        }
    }
}

/// One BBRv1 flow (Linux `struct bbr`).
#[derive(Debug, Clone)]
pub struct Bbr1 {
    c: Consts,
    mode: Mode,

    // ---- bandwidth model ----
    /// Max recent delivery rate, packets/µs << BW_SCALE, windowed over rounds.
    bw: MaxFilter,
    /// Packet-timed rounds (`rtt_cnt`, `next_rtt_delivered`).
    round: RoundCounter,
    /// This ACK started a new round (`round_start`); also forced by an RTO.
    round_start: bool,
    /// Long-term (policer) bandwidth estimation.
    lt: LtBw,

    // ---- RTT model ----
    /// Min RTT (µs) within `min_rtt_win`; `u32::MAX` before any sample.
    min_rtt_us: u32,
    /// When `min_rtt_us` was last set (ns).
    min_rtt_stamp: Time,
    /// An RTT has been seen, so pacing was initialised from srtt (`has_seen_rtt`).
    has_seen_rtt: bool,

    // ---- gains and Startup ----
    /// Current pacing gain (BBR_UNIT).
    pacing_gain: u32,
    /// Current cwnd gain (BBR_UNIT).
    cwnd_gain: u32,
    /// Startup estimated the pipe is full (`full_bw_reached`).
    full_bw_reached: bool,
    /// Bandwidth at the last significant growth (`full_bw`).
    full_bw: u64,
    /// Rounds without significant growth (`full_bw_cnt`).
    full_bw_cnt: u32,

    // ---- cwnd ----
    /// CA state seen on the previous ACK (`prev_ca_state`).
    prev_ca_state: CaState,
    /// In the first round of recovery: packet conservation (`packet_conservation`).
    packet_conservation: bool,
    /// Last known good cwnd, restored after recovery or ProbeRTT (`prior_cwnd`).
    prior_cwnd: u32,
    /// Restarting from idle; cleared by the first ACK that delivers data.
    idle_restart: bool,

    // ---- ACK aggregation ----
    /// Start of the current ACK sampling epoch (`ack_epoch_mstamp`, ns).
    ack_epoch_stamp: Time,
    /// Packets (S)ACKed in the epoch (`ack_epoch_acked`, 20 bits in Linux).
    ack_epoch_acked: u32,
    /// Max excess packets ACKed per half window (`extra_acked[2]`).
    // Deviation: u32 rather than Linux's u16 (values are capped at cwnd, so this
    // differs only for cwnd above 65535 packets).
    extra_acked: [u32; 2],
    /// Age of the current half window, in rounds (`extra_acked_win_rtts`).
    extra_acked_win_rtts: u32,
    /// Which half window is current (`extra_acked_win_idx`).
    extra_acked_win_idx: usize,
}

impl Bbr1 {
    pub fn new(p: Params) -> Result<Self, String> {
        let c = Consts::from_params(&p)?;
        let mut bw = MaxFilter::new(c.bw_rtts);
        bw.reset(0, 0);
        Ok(Self {
            mode: Mode::Startup,
            bw,
            round: RoundCounter::default(),
            round_start: false,
            lt: LtBw::default(),
            min_rtt_us: u32::MAX,
            min_rtt_stamp: 0,
            has_seen_rtt: false,
            pacing_gain: c.high_gain,
            cwnd_gain: c.high_gain,
            full_bw_reached: false,
            full_bw: 0,
            full_bw_cnt: 0,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            prior_cwnd: 0,
            idle_restart: false,
            ack_epoch_stamp: 0,
            ack_epoch_acked: 0,
            extra_acked: [0, 0],
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            c,
        })
    }

    /// Current mode (for tests).
    #[cfg(test)]
    pub(crate) fn mode(&self) -> Mode {
        self.mode
    }

    /// `bbr_update_model`: the model update, in Linux's order.
    fn update_model(&mut self, tp: &mut TcpState, rs: &RateSample) {
        self.update_bw(tp, rs);
        self.update_ack_aggregation(tp, rs);
        self.update_cycle_phase(tp, rs);
        self.check_full_bw_reached(rs);
        self.check_drain(tp);
        self.update_min_rtt(tp, rs);
        self.update_gains();
    }

    /// `bbr_update_gains`: each mode's pacing and cwnd gain.
    fn update_gains(&mut self) {
        let (pacing, cwnd) = match self.mode {
            Mode::Startup => (self.c.high_gain, self.c.high_gain),
            // Pace slowly to drain, but keep cwnd so the pipe stays full.
            Mode::Drain => (self.c.drain_gain, self.c.high_gain),
            Mode::ProbeBw { cycle_idx, .. } => {
                let g = if self.lt.use_bw { BBR_UNIT } else { self.c.pacing_gain_cycle[cycle_idx] };
                (g, self.c.cwnd_gain)
            }
            Mode::ProbeRtt { .. } => (BBR_UNIT, BBR_UNIT),
        };
        self.pacing_gain = pacing;
        self.cwnd_gain = cwnd;
    }

    /// `bbr_reset_mode`: after ProbeRTT, resume probing or keep filling the pipe.
    fn reset_mode(&mut self, tp: &mut TcpState) {
        if !self.full_bw_reached {
            self.reset_startup_mode();
        } else {
            self.reset_probe_bw_mode(tp);
        }
    }
}

impl CongestionControl for Bbr1 {
    fn name(&self) -> &'static str {
        "bbr1"
    }

    /// `bbr_init`.
    fn init(&mut self, tp: &mut TcpState) {
        self.prior_cwnd = 0;
        tp.ssthresh = crate::cc::INFINITE_SSTHRESH;
        self.round = RoundCounter::default();
        self.prev_ca_state = CaState::Open;
        self.packet_conservation = false;
        self.min_rtt_us = if tp.min_rtt == Time::MAX { u32::MAX } else { model::ns_to_us32(tp.min_rtt) };
        self.min_rtt_stamp = tp.now;
        self.bw.reset(0, 0);
        self.has_seen_rtt = false;
        self.init_pacing_rate_from_rtt(tp);
        self.round_start = false;
        self.idle_restart = false;
        self.full_bw_reached = false;
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.reset_lt_bw_sampling(tp);
        self.reset_startup_mode();
        self.pacing_gain = self.c.high_gain;
        self.cwnd_gain = self.c.high_gain;
        self.ack_epoch_stamp = tp.now;
        self.ack_epoch_acked = 0;
        self.extra_acked_win_rtts = 0;
        self.extra_acked_win_idx = 0;
        self.extra_acked = [0, 0];
        // Deviation: Linux sets sk_pacing_status = SK_PACING_NEEDED here; pacing is
        // the sender's decision (`tp.pacing_enabled`), which must pace a
        // cong_control CCA at `tp.pacing_rate`.
    }

    /// `bbr_ssthresh`: entering loss recovery; save cwnd for when we exit or undo.
    fn ssthresh(&mut self, tp: &mut TcpState) -> u32 {
        self.save_cwnd(tp);
        tp.ssthresh
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    /// `bbr_main`: update the model, then set pacing rate and cwnd from it.
    fn cong_control(&mut self, tp: &mut TcpState, sample: &AckSample) {
        let rs = &sample.rs;
        self.update_model(tp, rs);
        let bw = self.bw();
        self.set_pacing_rate(tp, bw, self.pacing_gain);
        self.set_cwnd(tp, rs, rs.acked_sacked, bw, self.cwnd_gain);
    }

    /// `bbr_set_state`: an RTO is treated like the end of a round with a loss.
    fn set_state(&mut self, tp: &mut TcpState, new_state: CaState) {
        if new_state == CaState::Loss {
            let rs = RateSample { losses: 1, ..Default::default() };
            self.prev_ca_state = CaState::Loss;
            self.full_bw = 0;
            self.round_start = true;
            self.lt_bw_sampling(tp, &rs);
        }
    }

    /// `bbr_cwnd_event`: restarting from idle while app-limited.
    fn cwnd_event(&mut self, tp: &mut TcpState, event: CaEvent) {
        if event == CaEvent::TxStart && tp.app_limited != 0 {
            self.idle_restart = true;
            self.ack_epoch_stamp = tp.now;
            self.ack_epoch_acked = 0;
            // Avoid pointless buffer overflows: pace at the estimated bw if we do
            // not need more speed (restarting from idle and app-limited).
            match self.mode {
                Mode::ProbeBw { .. } => {
                    let bw = self.bw();
                    self.set_pacing_rate(tp, bw, BBR_UNIT);
                }
                Mode::ProbeRtt { .. } => self.check_probe_rtt_done(tp),
                _ => {}
            }
        }
    }

    /// `bbr_undo_cwnd`: a spurious slow-down; reset full-pipe and policer detection.
    fn undo_cwnd(&mut self, tp: &mut TcpState) -> u32 {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.reset_lt_bw_sampling(tp);
        tp.cwnd
    }

    /// `bbr_get_info`.
    fn metrics(&self, tp: &TcpState) -> CcMetrics {
        // bytes/s = bw * mss * 1e6 >> BW_SCALE, as get_info reports it.
        let bytes_per_sec = (self.bw() as u128 * tp.mss as u128 * USEC_PER_SEC as u128) >> BW_SCALE;
        CcMetrics {
            state: self.mode.name(),
            bw_bps: Some(bytes_per_sec as f64 * 8.0),
            min_rtt_ns: (self.min_rtt_us != u32::MAX).then(|| self.min_rtt_us as u64 * crate::units::NS_PER_US),
            pacing_gain: Some(self.pacing_gain as f64 / BBR_UNIT as f64),
            cwnd_gain: Some(self.cwnd_gain as f64 / BBR_UNIT as f64),
            ..Default::default()
        }
    }
}
