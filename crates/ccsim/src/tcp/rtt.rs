//! RTT estimation and RTO as Linux `tcp_rtt_estimator` / `tcp_set_rto` (RFC 6298
//! with Linux's variations): srtt gain 1/8, the deviation kept ×4 (`mdev_us`) with
//! gain 1/4 and the "don't let a falling RTT inflate mdev" rule, rttvar = max(mdev_max
//! over the last RTT, rto_min), RTO = srtt + rttvar (≤ 120 s).

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
    /// Mean deviation scaled by 4 (Linux `mdev_us`), and its maximum over the
    /// current RTT (`mdev_max_us`).
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
    /// Linux `tcp_rtt_estimator` keeps the deviation scaled by 4 (`mdev_us`): the
    /// first sample sets it to 2·m, so the first RTO is srtt + max(2·m, rto_min)
    /// ("rto = 3·rtt"), and later errors move it by |err| − mdev_us/4.
    pub fn sample(&mut self, m: Time, snd_una: u64, snd_nxt: u64) {
        let m = m.max(1);
        if self.srtt == 0 {
            // First measurement.
            self.srtt = m;
            self.mdev = 2 * m;
            self.rttvar = self.mdev.max(self.rto_min);
            self.mdev_max = self.rttvar;
            self.rtt_seq = snd_nxt;
        } else {
            let err = m as i64 - self.srtt as i64;
            self.srtt = (self.srtt as i64 + err / 8).max(1) as Time;
            let mdev4 = self.mdev as i64;
            let delta = if err < 0 {
                // A sample below srtt counts with weight 1/32 toward the deviation, so a
                // falling RTT does not inflate the RTO.
                let e = -err - mdev4 / 4;
                if e > 0 {
                    e >> 3
                } else {
                    e
                }
            } else {
                err - mdev4 / 4
            };
            self.mdev = (mdev4 + delta).max(0) as Time;
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
        // Linux `__tcp_set_rto` + `tcp_bound_rto`: srtt + rttvar, where rttvar already
        // holds at least rto_min.
        self.rto = (self.srtt + self.rttvar).min(RTO_MAX);
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

    /// Linux `tcp_rtt_estimator` (v6.x): the first sample m sets mdev_us = 2·m and
    /// rttvar = max(mdev_us, rto_min), so the RTO is 3·m when 2·m ≥ rto_min.
    #[test]
    fn first_sample_of_300ms_gives_a_900ms_rto_as_linux() {
        let mut r = RttEstimator::new(ms(200));
        r.sample(ms(300), 0, 10);
        assert_eq!(r.srtt, ms(300));
        assert_eq!(r.rto, ms(900));
        // A short first sample: rttvar is floored at rto_min.
        let mut r = RttEstimator::new(ms(200));
        r.sample(ms(20), 0, 10);
        assert_eq!(r.rto, ms(220));
    }

    /// The same sequence computed by hand with Linux's integer steps (in ns): an RTT
    /// alternating 100 / 490 ms, one sample per RTT. Linux keeps the deviation ×4, so
    /// rttvar follows 4·mdev, not mdev.
    #[test]
    fn swinging_rtt_follows_linux_scaled_deviation() {
        let mut r = RttEstimator::new(ms(200));
        // Reference: Linux's update with srtt in ns and mdev_us ×4, written out.
        let (mut srtt, mut mdev4, mut mdev_max, mut rttvar, mut rtt_seq): (i64, i64, i64, i64, u64) = (0, 0, 0, 0, 0);
        let rto_min = ms(200) as i64;
        for i in 0..40u64 {
            let m = if i % 2 == 0 { ms(100) } else { ms(490) } as i64;
            let (una, nxt) = (i * 10, i * 10 + 10);
            r.sample(m as Time, una, nxt);
            if srtt == 0 {
                srtt = m;
                mdev4 = 2 * m;
                rttvar = mdev4.max(rto_min);
                mdev_max = rttvar;
                rtt_seq = nxt;
            } else {
                let err = m - srtt;
                srtt += err / 8;
                let e = if err < 0 { let e = -err - mdev4 / 4; if e > 0 { e >> 3 } else { e } } else { err - mdev4 / 4 };
                mdev4 += e;
                if mdev4 > mdev_max {
                    mdev_max = mdev4;
                    rttvar = rttvar.max(mdev_max);
                }
                if una > rtt_seq {
                    if mdev_max < rttvar {
                        rttvar -= (rttvar - mdev_max) / 4;
                    }
                    rtt_seq = nxt;
                    mdev_max = rto_min;
                }
            }
            assert_eq!(r.rto as i64, srtt + rttvar, "sample {i}");
        }
        // Swinging by 390 ms: the ×4 deviation keeps the RTO well above srtt + 390 ms.
        assert!(r.rto > r.srtt + ms(390) * 2, "rto {} srtt {}", r.rto, r.srtt);
    }
}
