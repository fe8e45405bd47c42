//! Delivery-rate samples as Linux `tcp_rate.c`: the snapshot taken at each
//! (re)transmission, the most recent delivered one kept over an ACK, and the
//! sample generated at the end of the ACK.

use super::scoreboard::{APP_LIMITED, EVER_RETRANS, RATE_VALID};
use super::Sender;
use crate::cc::RateSample;
use crate::units::Time;

/// Accumulates the delivery-rate sample over one ACK.
#[derive(Debug, Default)]
pub(super) struct RateAcc {
    pub(super) has: bool,
    pub(super) rs: RateSample,
    pub(super) last_end: u64,
    pub(super) prior_lost: u64,
    pub(super) last_xmit: Time,
}

impl Sender {
    /// `tcp_rate_skb_delivered`: keep the snapshot of the most recently sent
    /// delivered segment.
    pub(super) fn rate_skb_delivered(&mut self, seg: u64, acc: &mut RateAcc) {
        let s = *self.seg_mut(seg);
        if !s.is(RATE_VALID) {
            return;
        }
        let newer = !acc.has
            || s.xmit_time > acc.last_xmit
            || (s.xmit_time == acc.last_xmit && seg + 1 > acc.last_end);
        if newer {
            acc.has = true;
            acc.rs.prior_delivered = s.tx_delivered;
            acc.rs.prior_delivered_ce = s.tx_delivered_ce;
            acc.rs.prior_time = s.tx_delivered_time;
            acc.rs.is_app_limited = s.is(APP_LIMITED);
            acc.rs.is_retrans = s.is(EVER_RETRANS);
            acc.rs.tx_in_flight = s.tx_in_flight;
            acc.prior_lost = s.tx_lost;
            acc.last_end = seg + 1;
            acc.last_xmit = s.xmit_time;
            // The send interval starts at this segment's flight's first send.
            self.first_tx_time = s.xmit_time;
            acc.rs.snd_interval = s.xmit_time.saturating_sub(s.tx_first_tx_time);
        }
    }

    /// `tcp_rate_gen`: finish the sample of this ACK.
    pub(super) fn rate_gen(
        &mut self,
        now: Time,
        acc: &mut RateAcc,
        delivered: u32,
        lost: u32,
        rtt: Option<Time>,
        delayed: bool,
    ) -> RateSample {
        if self.tp.app_limited != 0 && self.tp.delivered > self.tp.app_limited {
            self.tp.app_limited = 0;
        }
        if delivered > 0 {
            self.tp.delivered_time = now;
        }
        let mut rs = acc.rs; // carries prior_in_flight even without a valid sample
        rs.acked_sacked = delivered;
        rs.losses = lost;
        rs.rtt = rtt;
        rs.is_ack_delayed = delayed;
        if !acc.has {
            rs.delivered = -1;
            rs.interval = 0;
            return rs;
        }
        rs.delivered = (self.tp.delivered - rs.prior_delivered) as i64;
        rs.delivered_ce = (self.tp.delivered_ce - rs.prior_delivered_ce) as i64;
        rs.lost = (self.tp.lost - acc.prior_lost) as u32;
        rs.rcv_interval = now.saturating_sub(rs.prior_time);
        rs.interval = rs.snd_interval.max(rs.rcv_interval);
        // Linux discards intervals shorter than min_rtt (ACK compression artefacts),
        // and so every sample before the first RTT sample (min_rtt is ~0 until then).
        if rs.interval < self.rtt.min_rtt() {
            rs.interval = 0;
        }
        if rs.is_app_limited {
            self.counters.app_limited_samples += 1;
        }
        rs
    }
}
