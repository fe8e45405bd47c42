//! Monitor intervals (MIs): the segments an MI sent, the fates charged to it, its
//! RTT samples and their least-squares slope (the module doc of `vivace` describes
//! the bookkeeping and its references).

use crate::units::Time;

/// Fewest new segments an MI sends before it may end: the NSDI 2018 code
/// (PCC-Uspace branch `NSDI-2018`, `pcc-gradient/sender/src/core.cpp`,
/// `CUDT::start_monitor`) sizes an MI in packets, one RTT's worth at the rate but
/// at least 10. An MI of a few packets has a loss rate in steps of 1/n and an RTT
/// slope over a few samples: one packet decides its utility.
pub(super) const MIN_MI_SEGS: u64 = 10;

/// What an MI is for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Purpose {
    /// Starting phase: rate doubling.
    Start,
    /// Learning: the r(1 + ε) or r(1 − ε) test.
    TestUp,
    TestDown,
    /// Not scored.
    Filler,
}

/// One monitor interval and the feedback attributed to it.
#[derive(Debug, Clone)]
pub(super) struct Mi {
    pub(super) purpose: Purpose,
    pub(super) start: Time,
    /// When its sending time (one minimum RTT) is over (it also needs
    /// `MIN_MI_SEGS` segments).
    pub(super) end: Time,
    /// Sending rate, packets per second.
    pub(super) rate: f64,
    /// The new segments it sent: `first_seg..end_seg`; `end_seg` is known once the
    /// next MI starts (until then the MI is open and still sending).
    pub(super) first_seg: u64,
    pub(super) end_seg: Option<u64>,
    /// The test pair it belongs to (`Vivace::pair` when it started).
    pub(super) pair: u32,
    /// Of its segments: first fates known so far (delivered, or marked lost).
    pub(super) delivered: u64,
    pub(super) lost: u64,
    // Least-squares sums over (send time s, rtt r) in seconds.
    pub(super) n: f64,
    st: f64,
    pub(super) sr: f64,
    stt: f64,
    str_: f64,
}

impl Mi {
    pub(super) fn new(purpose: Purpose, start: Time, len: Time, rate: f64, first_seg: u64) -> Self {
        Self {
            purpose,
            start,
            end: start + len,
            rate,
            first_seg,
            end_seg: None,
            pair: 0,
            delivered: 0,
            lost: 0,
            n: 0.0,
            st: 0.0,
            sr: 0.0,
            stt: 0.0,
            str_: 0.0,
        }
    }

    /// The open MI may end at `now` with `snd_nxt` as its end: its sending time is
    /// over and it sent at least `MIN_MI_SEGS` new segments.
    pub(super) fn may_end(&self, now: Time, snd_nxt: u64) -> bool {
        now >= self.end && snd_nxt.saturating_sub(self.first_seg) >= MIN_MI_SEGS
    }

    /// Every segment it sent has been delivered or marked lost.
    pub(super) fn complete(&self) -> bool {
        self.end_seg.is_some_and(|e| self.delivered + self.lost >= e - self.first_seg)
    }

    /// Lost / (delivered + lost) of its segments.
    pub(super) fn loss_rate(&self) -> f64 {
        let total = (self.delivered + self.lost) as f64;
        if total > 0.0 {
            self.lost as f64 / total
        } else {
            0.0
        }
    }

    pub(super) fn add_rtt(&mut self, sent: Time, rtt: Time) {
        let (t, r) = ((sent as f64 - self.start as f64) / 1e9, rtt as f64 / 1e9);
        self.n += 1.0;
        self.st += t;
        self.sr += r;
        self.stt += t * t;
        self.str_ += t * r;
    }

    /// dRTT/dT, the least-squares slope.
    pub(super) fn rtt_gradient(&self) -> f64 {
        let den = self.n * self.stt - self.st * self.st;
        if self.n < 2.0 || den <= 0.0 {
            return 0.0;
        }
        (self.n * self.str_ - self.st * self.sr) / den
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::ms;

    #[test]
    fn an_mi_ends_after_its_time_and_at_least_ten_segments() {
        // Sending time 100 ms from t = 0, first segment 50: at 100 ms with 9
        // segments sent it goes on; with 10 it may end; before 100 ms never.
        let mi = Mi::new(Purpose::TestUp, 0, ms(100), 100.0, 50);
        assert!(!mi.may_end(ms(99), 500));
        assert!(!mi.may_end(ms(100), 59));
        assert!(mi.may_end(ms(100), 60));
        assert!(mi.may_end(ms(400), 60));
    }

}
