//! The RTT bookkeeping Vegas and its descendants (Veno, YeAH) share
//! (Linux `tcp_vegas_pkts_acked`, `vegas_enable`, the `beg_snd_nxt` round):
//! baseRTT is the minimum over the connection, minRTT the minimum within the
//! current round trip, cntRTT the number of samples in it.
//!
//! Linux ends a round when the cumulative ACK passes `beg_snd_nxt`, the `snd_nxt`
//! recorded when the round began, i.e. when a packet sent after the round began
//! is acknowledged. The sender's rate samples carry `prior_delivered` (the
//! delivered count when the acknowledged packet was sent), which identifies the
//! same event without sequence numbers ([`RoundCounter`]).

use super::RoundCounter;
use crate::cc::{AckSample, TcpState};

use super::clock::to_us;

/// `0x7fffffff`: "no sample yet" for baseRTT and minRTT, as Linux.
pub const NO_RTT: u32 = 0x7fff_ffff;

#[derive(Debug, Clone)]
pub struct VegasRtt {
    /// Minimum RTT over the connection, µs + 1 (`baseRTT`).
    pub base_rtt: u32,
    /// Minimum RTT in this round, µs + 1 (`minRTT`).
    pub min_rtt: u32,
    /// Samples in this round (`cntRTT`).
    pub cnt_rtt: u32,
    round: RoundCounter,
}

impl Default for VegasRtt {
    fn default() -> Self {
        Self { base_rtt: NO_RTT, min_rtt: NO_RTT, cnt_rtt: 0, round: RoundCounter::default() }
    }
}

impl VegasRtt {
    /// `vegas_enable`'s reset: a new round starts now, with no samples.
    pub fn restart_round(&mut self, tp: &TcpState) {
        self.round.reset_at(tp.delivered);
        self.cnt_rtt = 0;
        self.min_rtt = NO_RTT;
    }

    /// `tcp_vegas_pkts_acked`: record the ACK's RTT sample (µs + 1, never 0).
    pub fn on_sample(&mut self, sample: &AckSample) {
        let Some(rtt) = sample.rtt else { return };
        let vrtt = to_us(rtt).saturating_add(1);
        self.base_rtt = self.base_rtt.min(vrtt);
        self.min_rtt = self.min_rtt.min(vrtt);
        self.cnt_rtt += 1;
    }

    /// Whether this ACK ends the round (`after(ack, beg_snd_nxt)`); if so the next
    /// round begins at once. Call once per ACK, from `cong_avoid`.
    pub fn round_ended(&mut self, tp: &TcpState, sample: &AckSample) -> bool {
        self.round.update(&sample.rs, tp.delivered)
    }

    /// Clear the per-round samples (`cntRTT = 0; minRTT = ∞`).
    pub fn clear_round(&mut self) {
        self.cnt_rtt = 0;
        self.min_rtt = NO_RTT;
    }
}
