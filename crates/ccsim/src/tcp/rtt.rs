//! RTT estimation and RTO as Linux `tcp_rtt_estimator` / `tcp_set_rto` (RFC 6298
//! with Linux's variations): srtt gain 1/8, mdev gain 1/4 with the "don't let a
//! falling RTT inflate mdev" rule, rttvar = max(mdev_max over the last RTT,
//! rto_min), RTO = srtt + rttvar, clamped to [rto_min, 120 s].

use crate::cc::common::MinFilter;
use crate::units::{secs, Time};

/// Linux `TCP_RTO_MAX`.
pub const RTO_MAX: Time = secs(120);
/// Linux `TCP_TIMEOUT_INIT`: 1 s before the first RTT sample (RFC 6298 §2.1).
pub const RTO_INIT: Time = secs(1);
/// Window of the min-RTT filter (Linux sysctl `tcp_min_rtt_wlen` = 300 s).
pub const MIN_RTT_WINDOW: Time = secs(300);

#[derive(Debug, Clone)]
pub struct RttEstimator {
    /// Smoothed RTT (ns); 0 until the first sample.
    pub srtt: Time,
    mdev: Time,
    mdev_max: Time,
    rttvar: Time,
    /// snd_una-based epoch for mdev_max resets (Linux `rtt_seq`).
    rtt_seq: u64,
    min_rtt: MinFilter,
    pub rto: Time,
    rto_min: Time,
}

impl RttEstimator {
    pub fn new(rto_min: Time) -> Self {
        Self {
            srtt: 0,
            mdev: 0,
            mdev_max: 0,
            rttvar: 0,
            rtt_seq: 0,
            min_rtt: MinFilter::new(MIN_RTT_WINDOW),
            rto: RTO_INIT,
            rto_min,
        }
    }

    pub fn min_rtt(&self) -> Time {
        self.min_rtt.get()
    }

    /// Update the windowed min RTT with the most recent sample (`tcp_update_rtt_min`).
    pub fn update_min(&mut self, now: Time, rtt: Time) {
        self.min_rtt.update(now, rtt.max(1));
    }

    /// Feed one RTT sample; `snd_una`/`snd_nxt` in segments delimit mdev_max epochs.
    pub fn sample(&mut self, m: Time, snd_una: u64, snd_nxt: u64) {
        let m = m.max(1);
        if self.srtt == 0 {
            // First measurement (RFC 6298 (2.2)).
            self.srtt = m;
            self.mdev = m / 2;
            self.mdev_max = self.mdev.max(self.rto_min);
            self.rttvar = self.mdev_max;
            self.rtt_seq = snd_nxt;
        } else {
            let err = m as i64 - self.srtt as i64;
            self.srtt = (self.srtt as i64 + err / 8) as Time;
            let abs = err.unsigned_abs();
            if err < 0 {
                // Linux: a sample below srtt counts with weight 1/32 toward mdev, so a
                // falling RTT does not inflate the RTO.
                let e = abs as i64 - self.mdev as i64;
                let e = if e > 0 { e >> 3 } else { e };
                self.mdev = (self.mdev as i64 + e / 4).max(0) as Time;
            } else {
                let e = abs as i64 - self.mdev as i64;
                self.mdev = (self.mdev as i64 + e / 4).max(0) as Time;
            }
            if self.mdev > self.mdev_max {
                self.mdev_max = self.mdev;
                if self.mdev_max > self.rttvar {
                    self.rttvar = self.mdev_max;
                }
            }
            if snd_una > self.rtt_seq {
                // One RTT has passed: let rttvar decay toward mdev_max.
                if self.mdev_max < self.rttvar {
                    self.rttvar -= (self.rttvar - self.mdev_max) / 4;
                }
                self.rtt_seq = snd_nxt;
                self.mdev_max = self.rto_min;
            }
        }
        // Linux `__tcp_set_rto`: srtt + rttvar, where rttvar already holds ≥ rto_min.
        self.rto = (self.srtt + self.rttvar.max(self.rto_min)).clamp(self.rto_min, RTO_MAX);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::ms;

    #[test]
    fn rto_is_srtt_plus_at_least_rto_min() {
        let mut r = RttEstimator::new(ms(200));
        assert_eq!(r.rto, RTO_INIT);
        for i in 0..100 {
            r.sample(ms(100), i, i + 10);
        }
        assert!((r.srtt as i64 - ms(100) as i64).abs() < ms(1) as i64);
        assert!(r.rto >= ms(300) && r.rto < ms(400), "rto {}", r.rto);
    }
}
