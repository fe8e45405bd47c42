//! NCF's sender logic (network-assisted congestion feedback, the dissertation's
//! chapter 6, sender "NCF_s1"; `docs/ncf.md`): a base CCA runs as usual, and when
//! the bottleneck switch's telemetry arrives (`qdisc/ncf.rs`, over `net::feedback`)
//! the window is set from it at once, a fraction of an RTT after the queue built:
//!
//! ```text
//! rate   = link_rate − priority_rate                      what the switch says the elephants get
//! share  = rate × min_rtt / (8 × mss × elephants)          fair share of the BDP (packets)
//! drain  = elephant_queue_bytes / (mss × elephants)        this flow's part of the queue
//! cwnd     = max(min_cwnd, ⌊share − drain⌋)
//! ssthresh = max(min_cwnd, ⌊share⌋)
//! ```
//!
//! (`NetworkFeedback::available_rate_bps`: `priority_rate` is 0 with the switch's
//! default `reported_rate = link`, the measured rate of the strict-priority mice
//! queue with `reported_rate = available`), so the elephants together send one BDP
//! of that rate and the standing queue drains within
//! about one RTT; the base CCA then grows back towards the share (slow start up to
//! ssthresh, then its own congestion avoidance) until the queue passes the switch's
//! threshold again. Each flow uses its own min RTT, so flows with different RTTs get
//! the same rate. A reduction first lets the base CCA record a congestion event
//! (its `ssthresh` hook: CUBIC's W_max and epoch), whose result is then overridden.
//! During Recovery, CWR or Loss only ssthresh is set (the reduction ends there).
//!
//! The chapter's exact window formula is not in our copy of the spec; this rule is
//! our stated reading of "sets its window from link speed, queue size and the number
//! of elephants" (see `docs/ncf.md`).

use serde::{Deserialize, Serialize};

use super::registry::{describe_params, parse_params, CcaInfo};
use super::{AckSample, BoxedCca, CaEvent, CaState, CcMetrics, CongestionControl, TcpState};
use crate::net::NetworkFeedback;
use crate::units::Time;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// The classic CCA that runs between telemetry messages.
    pub base: String,
    /// Its parameter overrides (an object, or null).
    pub base_params: serde_json::Value,
    /// Smallest window telemetry may set (packets).
    pub min_cwnd: u32,
}

impl Default for Params {
    fn default() -> Self {
        // F-Stack, on which the chapter's NCF sender runs, uses FreeBSD's TCP stack,
        // whose default congestion control is NewReno.
        Self { base: "reno".into(), base_params: serde_json::Value::Null, min_cwnd: 2 }
    }
}

#[derive(Debug)]
pub struct Ncf {
    base: BoxedCca,
    min_cwnd: u32,
    /// Fair-share rate (bit/s) of the latest telemetry, for the traces.
    share_bps: Option<f64>,
}

pub const INFO: CcaInfo = CcaInfo {
    name: "ncf",
    family: "network",
    summary: "NCF sender: window from the bottleneck's telemetry (rate, queue, elephants), else its base CCA",
    reference: "D2 (dissertation) ch. 6, NCF_s1; Fathalli et al., IEEE TNSM 2026; docs/ncf.md",
    params: || {
        describe_params::<Params>(&[
            ("base", "classic CCA run between telemetry messages (default reno: F-Stack/FreeBSD NewReno)"),
            ("base_params", "parameter overrides of the base CCA"),
            ("min_cwnd", "smallest window telemetry may set, packets"),
        ])
    },
    build: |v| Ok(Box::new(Ncf::new(parse_params("ncf", v)?)?) as BoxedCca),
};

impl Ncf {
    pub fn new(p: Params) -> Result<Self, String> {
        if p.base == "ncf" {
            return Err("parameters of CCA 'ncf': base cannot be 'ncf' itself".into());
        }
        if p.min_cwnd == 0 {
            return Err("parameters of CCA 'ncf': min_cwnd must be >= 1".into());
        }
        let base = super::build(&p.base, &p.base_params).map_err(|e| format!("parameters of CCA 'ncf': base: {e}"))?;
        if base.has_cong_control() {
            return Err(format!("parameters of CCA 'ncf': base '{}' is model-based; give a classic CCA (reno, cubic, ...)", p.base));
        }
        Ok(Self { base, min_cwnd: p.min_cwnd, share_bps: None })
    }

    /// (cwnd, ssthresh) the telemetry `fb` asks of a flow with `min_rtt` and `mss`.
    pub fn window_from(fb: &NetworkFeedback, min_rtt: Time, mss: u32, min_cwnd: u32) -> Option<(u32, u32)> {
        let rate = fb.available_rate_bps();
        if fb.flows == 0 || fb.link_rate_bps == 0 || min_rtt == Time::MAX || min_rtt == 0 {
            return None;
        }
        let n = fb.flows as f64;
        let mss = mss as f64;
        let share = rate as f64 * min_rtt as f64 / (8e9 * mss * n);
        let drain = fb.queue_bytes as f64 / (mss * n);
        let floor = |x: f64| (x.max(0.0).floor() as u32).max(min_cwnd);
        Some((floor(share - drain), floor(share)))
    }
}

impl CongestionControl for Ncf {
    fn name(&self) -> &'static str {
        "ncf"
    }
    fn init(&mut self, tp: &mut TcpState) {
        self.base.init(tp)
    }
    fn ssthresh(&mut self, tp: &mut TcpState) -> u32 {
        self.base.ssthresh(tp)
    }
    fn cong_avoid(&mut self, tp: &mut TcpState, sample: &AckSample) {
        self.base.cong_avoid(tp, sample)
    }
    fn pkts_acked(&mut self, tp: &mut TcpState, sample: &AckSample) {
        self.base.pkts_acked(tp, sample)
    }
    fn needs_ecn(&self) -> bool {
        self.base.needs_ecn()
    }
    fn set_state(&mut self, tp: &mut TcpState, new_state: CaState) {
        self.base.set_state(tp, new_state)
    }
    fn cwnd_event(&mut self, tp: &mut TcpState, event: CaEvent) {
        self.base.cwnd_event(tp, event)
    }
    fn undo_cwnd(&mut self, tp: &mut TcpState) -> u32 {
        self.base.undo_cwnd(tp)
    }

    fn on_feedback(&mut self, tp: &mut TcpState, fb: &NetworkFeedback) {
        let Some((cwnd, ssthresh)) = Self::window_from(fb, tp.min_rtt, tp.mss, self.min_cwnd) else { return };
        self.share_bps = Some(fb.available_rate_bps() as f64 / fb.flows as f64);
        if matches!(tp.ca_state, CaState::Open | CaState::Disorder) {
            if cwnd < tp.cwnd {
                // Let the base CCA note the congestion event; NCF sets the numbers.
                let _ = self.base.ssthresh(tp);
            }
            tp.cwnd = cwnd;
            tp.cwnd_cnt = 0;
        }
        tp.ssthresh = ssthresh;
    }

    fn metrics(&self, tp: &TcpState) -> CcMetrics {
        CcMetrics { bw_bps: self.share_bps, ..self.base.metrics(tp) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testing::tcp_state;
    use crate::units::ms;

    fn fb(rate_bps: u64, queue_bytes: u64, flows: u32) -> NetworkFeedback {
        NetworkFeedback { link_rate_bps: rate_bps, queue_bytes, flows, ..Default::default() }
    }

    #[test]
    fn window_is_the_fair_share_of_the_bdp_minus_the_queue_share() {
        // 200 Mbit/s × 20 ms = 500 KB = 345.3 packets of 1448 B; 4 elephants: 86.3 each;
        // 60 KB queued: 10.4 packets each to drain.
        assert_eq!(Ncf::window_from(&fb(200_000_000, 60_000, 4), ms(20), 1448, 2), Some((75, 86)));
        // A deep queue cannot push the window below min_cwnd.
        assert_eq!(Ncf::window_from(&fb(200_000_000, 5_000_000, 4), ms(20), 1448, 2), Some((2, 86)));
        // Mice served first at 50 Mbit/s leave 150: the share shrinks by a quarter.
        let with_mice = NetworkFeedback { priority_rate_bps: 50_000_000, ..fb(200_000_000, 60_000, 4) };
        assert_eq!(Ncf::window_from(&with_mice, ms(20), 1448, 2), Some((54, 64)));
        // Mice measured at the whole link leave nothing: the floor.
        let all_mice = NetworkFeedback { priority_rate_bps: 250_000_000, ..fb(200_000_000, 0, 4) };
        assert_eq!(Ncf::window_from(&all_mice, ms(20), 1448, 2), Some((2, 2)));
        // No RTT sample or no elephant counted: nothing to compute.
        assert_eq!(Ncf::window_from(&fb(200_000_000, 0, 4), Time::MAX, 1448, 2), None);
        assert_eq!(Ncf::window_from(&fb(200_000_000, 0, 0), ms(20), 1448, 2), None);
    }

    #[test]
    fn flows_with_different_rtts_get_windows_for_the_same_rate() {
        let (w10, _) = Ncf::window_from(&fb(200_000_000, 0, 2), ms(10), 1448, 2).unwrap();
        let (w80, _) = Ncf::window_from(&fb(200_000_000, 0, 2), ms(80), 1448, 2).unwrap();
        let rate = |w: u32, rtt: Time| w as f64 * 1448.0 * 8.0 / (rtt as f64 / 1e9);
        let (r10, r80) = (rate(w10, ms(10)), rate(w80, ms(80)));
        assert!((r10 / r80 - 1.0).abs() < 0.02, "{r10} vs {r80}");
    }

    #[test]
    fn telemetry_sets_the_window_in_open_and_only_ssthresh_in_recovery() {
        let mut c = Ncf::new(Params { base: "cubic".into(), ..Default::default() }).unwrap();
        let mut tp = tcp_state(1448, 10);
        c.init(&mut tp);
        tp.cwnd = 400;
        tp.min_rtt = ms(20);
        c.on_feedback(&mut tp, &fb(200_000_000, 60_000, 4));
        assert_eq!((tp.cwnd, tp.ssthresh), (75, 86));
        assert_eq!(c.metrics(&tp).bw_bps, Some(50e6));
        // Below the share, telemetry raises the window too (demand meets supply).
        tp.cwnd = 20;
        c.on_feedback(&mut tp, &fb(200_000_000, 60_000, 4));
        assert_eq!(tp.cwnd, 75);
        tp.ca_state = CaState::Recovery;
        tp.cwnd = 300;
        c.on_feedback(&mut tp, &fb(200_000_000, 0, 2));
        assert_eq!((tp.cwnd, tp.ssthresh), (300, 172), "PRR ends the reduction at the share");
    }

    #[test]
    fn bad_parameters_are_refused_by_name() {
        let build = |v: serde_json::Value| (INFO.build)(&v).map(|_| ()).unwrap_err();
        assert!(build(serde_json::json!({"base": "bbr1"})).contains("model-based"));
        assert!(build(serde_json::json!({"base": "ncf"})).contains("itself"));
        assert!(build(serde_json::json!({"base": "nope"})).contains("unknown CCA 'nope'"));
        assert!(build(serde_json::json!({"min_cwnd": 0})).contains("min_cwnd"));
        assert!(build(serde_json::json!({"bogus": 1})).contains("bogus"));
        assert!((INFO.build)(&serde_json::json!({"base": "cubic", "base_params": {"beta": 717}})).is_ok());
    }
}
