//! Congestion control: the trait every algorithm implements, the samples the TCP
//! sender hands it, and the registry of algorithms.
//!
//! The split mirrors Linux's `tcp_congestion_ops` (see `include/net/tcp.h`):
//! the sender (loss detection, SACK scoreboard, RACK/RTO, PRR, the Open/Disorder/
//! CWR/Recovery/Loss state machine) computes *what happened*; the CCA decides *how
//! much to send*. Two tiers, as in Linux:
//!
//! * **classic** CCAs implement [`CongestionControl::ssthresh`] and
//!   [`CongestionControl::cong_avoid`] (plus optional hooks). The sender applies
//!   PRR during reductions and calls `cong_avoid` only when Linux would
//!   (`tcp_may_raise_cwnd`: not in a cwnd reduction, and cwnd-limited).
//! * **model-based** CCAs (BBR) return `true` from
//!   [`CongestionControl::has_cong_control`]; the sender then calls
//!   [`CongestionControl::cong_control`] on every ACK instead of PRR and
//!   `cong_avoid`, and the CCA sets `cwnd` and `pacing_rate` itself.
//!
//! Windows are counted in **packets** (segments of `mss` bytes), as in Linux, so
//! per-packet arithmetic such as CUBIC's `cnt` and BBR's quanta match the reference.
//! A CCA must never inspect the scoreboard or detect loss itself.

pub mod bbr1;
pub mod bbr2;
pub mod bbr3;
pub mod bic;
pub mod cdg;
pub mod common;
pub mod compound;
pub mod copa;
pub mod cubic;
pub mod dctcp;
pub mod highspeed;
pub mod htcp;
pub mod hybla;
pub mod illinois;
pub mod ledbat;
pub mod nv;
pub mod lp;
pub mod ncf;
pub mod registry;
pub mod reno;
pub mod scalable;
pub mod testing;
pub mod vegas;
pub mod veno;
pub mod vivace;
pub mod westwood;
pub mod yeah;

use crate::sim::SimRng;
use crate::units::Time;

pub use registry::{build, list, CcaInfo, ParamInfo, REGISTRY};

/// Linux's congestion-avoidance states (`enum tcp_ca_state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    /// Nothing bad has been observed recently.
    Open = 0,
    /// Dup ACKs/SACKs seen, no loss marked yet.
    Disorder = 1,
    /// cwnd reduced after an ECN echo (Congestion Window Reduced).
    Cwr = 2,
    /// Fast recovery after loss detected by SACK/RACK.
    Recovery = 3,
    /// After a retransmission timeout.
    Loss = 4,
}

impl CaState {
    pub fn name(self) -> &'static str {
        match self {
            CaState::Open => "open",
            CaState::Disorder => "disorder",
            CaState::Cwr => "cwr",
            CaState::Recovery => "recovery",
            CaState::Loss => "loss",
        }
    }
}

/// Events for [`CongestionControl::cwnd_event`] (Linux `enum tcp_ca_event`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaEvent {
    /// First transmission when no packet is in flight (after idle).
    TxStart,
    /// cwnd restart after idle (`tcp_cwnd_restart`).
    CwndRestart,
    /// End of a CWR/Recovery reduction.
    CompleteCwr,
    /// A retransmission timeout (`tcp_enter_loss`).
    Loss,
    /// An ACK carried ECE (ECN echo) — DCTCP-style CCAs use it.
    EcnIsCe,
    /// An ACK carried no ECE.
    EcnNoCe,
}

/// The part of the connection that a CCA may read and write: the analogue of the
/// `tcp_sock` fields Linux CCAs touch. The sender owns it and keeps the read-only
/// fields current before each hook call.
#[derive(Debug, Clone)]
pub struct TcpState {
    // ---- written by the CCA (and by the sender's loss recovery) ----
    /// Congestion window in packets (`snd_cwnd`). Never below 1... the sender
    /// clamps to `[1, cwnd_clamp]` after each hook.
    pub cwnd: u32,
    /// Slow-start threshold in packets (`snd_ssthresh`); [`INFINITE_SSTHRESH`] = none yet.
    pub ssthresh: u32,
    /// Sub-packet additive-increase counter (`snd_cwnd_cnt`).
    pub cwnd_cnt: u32,
    /// Upper bound on cwnd (`snd_cwnd_clamp`), e.g. from the receive window.
    pub cwnd_clamp: u32,
    /// Pacing rate in **bytes per second** (`sk_pacing_rate`). Model-based CCAs set
    /// it; for classic CCAs the sender computes Linux's default (`tcp_update_pacing_rate`).
    pub pacing_rate: u64,

    // ---- read-only for the CCA ----
    /// Current time (ns).
    pub now: Time,
    /// Payload bytes per full segment (`mss_cache`).
    pub mss: u32,
    /// Current congestion state.
    pub ca_state: CaState,
    /// cwnd before the current reduction began (`prior_cwnd`), for undo.
    pub prior_cwnd: u32,
    /// Segments sent and not yet cumulatively acked (`packets_out`).
    pub packets_out: u32,
    /// Sequence number (counted in segments) of the next new segment (`snd_nxt`):
    /// the segments sent so far are those below it.
    pub snd_nxt: u64,
    /// Segments in flight (`tcp_packets_in_flight`: out − sacked − lost + retrans).
    pub in_flight: u32,
    /// Retransmitted segments in flight (`retrans_out`).
    pub retrans_out: u32,
    /// Total segments delivered (cum-acked or SACKed) so far (`tp->delivered`).
    pub delivered: u64,
    /// Total delivered segments that were CE-marked (`tp->delivered_ce`).
    pub delivered_ce: u64,
    /// Total segments marked lost so far (`tp->lost`).
    pub lost: u64,
    /// Time of the most recent delivery (`delivered_mstamp`).
    pub delivered_time: Time,
    /// Smoothed RTT (ns); 0 before the first sample.
    pub srtt: Time,
    /// Windowed minimum RTT (ns, Linux `tcp_min_rtt`); `Time::MAX` before a sample.
    pub min_rtt: Time,
    /// Whether the flow was cwnd-limited recently (`tp->is_cwnd_limited`).
    pub is_cwnd_limited: bool,
    /// Non-zero while the flow is application-limited (`tp->app_limited`).
    pub app_limited: u64,
    /// Whether the sender paces (Linux: sk_pacing_status != NONE).
    pub pacing_enabled: bool,
    /// The host's `CONFIG_HZ`: CCAs that time things in jiffies (CUBIC's epoch, BBR's
    /// min-RTT window) use it. `TcpState::new` starts at 1000; the sender sets the
    /// host's (Linux default 250, `host::clock`).
    pub hz: u32,
    /// This flow's random stream (BBR's random ProbeBW phase, BBRv2's probe wait).
    pub rng: SimRng,
}

/// Linux `TCP_INFINITE_SSTHRESH`: the slow-start threshold before any congestion.
pub const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

impl TcpState {
    /// The state of a fresh connection (Linux `tcp_init_sock`): `initial_cwnd`
    /// packets, infinite ssthresh, nothing sent, no RTT sample yet.
    pub fn new(mss: u32, initial_cwnd: u32, cwnd_clamp: u32, pacing_enabled: bool, rng: SimRng) -> Self {
        Self {
            cwnd: initial_cwnd.max(1),
            ssthresh: INFINITE_SSTHRESH,
            cwnd_cnt: 0,
            cwnd_clamp,
            pacing_rate: 0,
            now: 0,
            mss,
            ca_state: CaState::Open,
            prior_cwnd: 0,
            packets_out: 0,
            snd_nxt: 0,
            in_flight: 0,
            retrans_out: 0,
            delivered: 0,
            delivered_ce: 0,
            lost: 0,
            delivered_time: 0,
            srtt: 0,
            min_rtt: Time::MAX,
            is_cwnd_limited: false,
            app_limited: 0,
            pacing_enabled,
            hz: 1000,
            rng,
        }
    }

    /// `tcp_in_slow_start`.
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }
    /// Bytes per second -> bits per second helper for traces.
    pub fn pacing_rate_bps(&self) -> u64 {
        self.pacing_rate.saturating_mul(8)
    }
}

/// The delivery-rate sample of one ACK (Linux `struct rate_sample`, `tcp_rate.c`,
/// draft-cheng-iccrg-delivery-rate-estimation). Counts are in packets.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RateSample {
    /// `tp->delivered` when the packet that produced this sample was sent.
    pub prior_delivered: u64,
    /// `tp->delivered_ce` at that time.
    pub prior_delivered_ce: u64,
    /// Send time of that packet's prior delivery stamp (`prior_mstamp`).
    pub prior_time: Time,
    /// Packets delivered over the sampling interval (−1 in Linux = invalid: here `interval == 0`).
    pub delivered: i64,
    /// CE-marked packets delivered over the interval.
    pub delivered_ce: i64,
    /// Sampling interval (max of send and ACK intervals), ns; 0 = no valid sample.
    pub interval: Time,
    /// Send-side interval (ns).
    pub snd_interval: Time,
    /// ACK-side interval (ns).
    pub rcv_interval: Time,
    /// RTT of the most recently sent packet acked by this ACK (ns); `None` if retransmitted.
    pub rtt: Option<Time>,
    /// Packets newly marked lost upon this ACK (`rs->losses`).
    pub losses: u32,
    /// Packets newly delivered (cum-acked or SACKed) by this ACK (`rs->acked_sacked`).
    pub acked_sacked: u32,
    /// Packets in flight before this ACK (`rs->prior_in_flight`).
    pub prior_in_flight: u32,
    /// Packets in flight when the sampled packet was sent (`rs->tx_in_flight`, BBRv2).
    pub tx_in_flight: u32,
    /// Packets lost over the interval (`tp->lost − lost at send`, BBRv2 `rs->lost`).
    pub lost: u32,
    /// The sample was taken while application-limited.
    pub is_app_limited: bool,
    /// The sampled packet was a retransmission.
    pub is_retrans: bool,
    /// The ACK was delayed by the receiver (`is_ack_delayed`).
    pub is_ack_delayed: bool,
}

impl RateSample {
    /// Delivery rate in packets per second as f64, if the sample is valid.
    pub fn delivery_rate_pps(&self) -> Option<f64> {
        if self.interval == 0 || self.delivered <= 0 {
            return None;
        }
        Some(self.delivered as f64 * 1e9 / self.interval as f64)
    }
}

/// What one ACK did, built once by the sender and handed to every hook that needs it
/// (Linux `struct ack_sample` plus the `acked`/`flag` arguments of the hooks).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct AckSample {
    /// Packets newly cumulatively acked by this ACK (`ack_sample.pkts_acked`).
    pub pkts_acked: u32,
    /// Packets newly delivered (cum-acked or SACKed): the `acked` argument Linux passes
    /// to `cong_avoid` (`acked_sacked`).
    pub acked_sacked: u32,
    /// RTT sample from this ACK (ns); `None` when only retransmitted data was acked
    /// (Karn) — Linux passes `rtt_us = -1`.
    pub rtt: Option<Time>,
    /// Packets in flight before this ACK was processed.
    pub prior_in_flight: u32,
    /// The ACK carried an ECN echo.
    pub ece: bool,
    /// The ACK advanced `snd_una`.
    pub advanced_una: bool,
    /// The delivery-rate sample.
    pub rs: RateSample,
}

/// What the CCA reports into the recorded flow samples, beyond cwnd/ssthresh/pacing.
/// Fields a CCA does not have stay `None` (NaN/null in the tables).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CcMetrics {
    /// Mode or phase name (e.g. "startup", "probe_bw_up", "ca"), from a fixed set.
    pub state: &'static str,
    /// Model bandwidth estimate (bits per second).
    pub bw_bps: Option<f64>,
    /// Model min RTT (ns).
    pub min_rtt_ns: Option<u64>,
    pub pacing_gain: Option<f64>,
    pub cwnd_gain: Option<f64>,
    /// BBRv2/v3 inflight_hi / inflight_lo (packets).
    pub inflight_hi: Option<f64>,
    pub inflight_lo: Option<f64>,
    /// BBRv2/v3 bw_lo (bits per second).
    pub bw_lo_bps: Option<f64>,
}

/// A congestion control algorithm. Every hook has a no-op default except the ones
/// a classic algorithm cannot do without. Hooks are named after their Linux
/// counterparts so they can be checked against the reference.
pub trait CongestionControl: std::fmt::Debug + Send {
    /// Registry name ("reno", "cubic", "bbr1", ...).
    fn name(&self) -> &'static str;

    /// Called once when the connection starts (`init`). `tp.cwnd` is already the
    /// initial window.
    fn init(&mut self, _tp: &mut TcpState) {}

    /// New slow-start threshold on entering Recovery, CWR or Loss (`ssthresh`).
    /// Required by classic CCAs; model-based ones may return `tp.ssthresh`.
    fn ssthresh(&mut self, tp: &mut TcpState) -> u32;

    /// Window growth for a classic CCA (`cong_avoid(sk, ack, acked)`), where `acked`
    /// is `sample.acked_sacked`. Called only when not in a cwnd reduction and the
    /// flow is cwnd-limited.
    fn cong_avoid(&mut self, _tp: &mut TcpState, _sample: &AckSample) {}

    /// Per-ACK RTT/ack-count hook, called before `cong_avoid`/`cong_control`
    /// (`pkts_acked`). CUBIC's HyStart and delay_min live here.
    fn pkts_acked(&mut self, _tp: &mut TcpState, _sample: &AckSample) {}

    /// Whether this CCA needs ECN with accurate CE feedback (Linux
    /// `TCP_CONG_NEEDS_ECN`, DCTCP): the flow then sends ECT whatever the spec's
    /// `ecn` says, and its receiver echoes ECE on exactly the ACKs of CE-marked data.
    fn needs_ecn(&self) -> bool {
        false
    }

    /// Whether this CCA takes over cwnd and pacing on every ACK (Linux `cong_control`).
    fn has_cong_control(&self) -> bool {
        false
    }

    /// Model-based control on every ACK (`cong_control(sk, rs)`); only called when
    /// `has_cong_control()` is true.
    fn cong_control(&mut self, _tp: &mut TcpState, _sample: &AckSample) {}

    /// Whether this CCA wants [`CongestionControl::seg_fate`] calls; asked once, when the
    /// sender is built, so that the other CCAs pay nothing per segment.
    fn wants_seg_fates(&self) -> bool {
        false
    }

    /// The first fate of segment `seg` (sequence number in segments): delivered
    /// (cumulatively acked or SACKed before it was ever marked lost) or, with `lost`,
    /// marked lost for the first time (RACK, RTO). Each segment has exactly one first
    /// fate; a retransmission's fate is not reported. `sent`: for a delivered segment
    /// never retransmitted, its send time (now − sent is an unambiguous RTT sample);
    /// `None` otherwise. Called while the ACK (or RTO) is processed, before
    /// `cong_control`; only when `wants_seg_fates()`. No Linux counterpart: PCC's
    /// per-packet acked/lost lists (PCC-Uspace `OnCongestionEvent`).
    fn seg_fate(&mut self, _seg: u64, _lost: bool, _sent: Option<Time>) {}

    /// The congestion state is about to change to `new_state` (`set_state`).
    fn set_state(&mut self, _tp: &mut TcpState, _new_state: CaState) {}

    /// A connection event (`cwnd_event`).
    fn cwnd_event(&mut self, _tp: &mut TcpState, _event: CaEvent) {}

    /// cwnd to restore when a reduction proves spurious (`undo_cwnd`). Linux's
    /// Reno and CUBIC return `max(cwnd, prior_cwnd)`.
    fn undo_cwnd(&mut self, tp: &mut TcpState) -> u32 {
        tp.cwnd.max(tp.prior_cwnd)
    }

    /// A network element's message reached the sender (`net::feedback`, outside any
    /// ACK): a network-assisted CCA (NCF; an XCP/RCP-style one) sets cwnd, ssthresh or
    /// pacing from it; the sender clamps cwnd and sends what the window allows after.
    /// No Linux counterpart; every other CCA ignores it.
    fn on_feedback(&mut self, _tp: &mut TcpState, _fb: &crate::net::NetworkFeedback) {}

    /// Packets the sender may have in flight beyond cwnd for TSO/quantum purposes is
    /// not modelled; model-based CCAs may override this to report their send quantum.
    fn metrics(&self, _tp: &TcpState) -> CcMetrics {
        CcMetrics { state: "", ..Default::default() }
    }
}

/// A boxed CCA instance, as built by the registry.
pub type BoxedCca = Box<dyn CongestionControl>;
