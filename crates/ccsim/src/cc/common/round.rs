//! Packet-timed round-trip counter (BBR's `round_start` logic in Linux
//! `bbr_update_bw`): a round ends when a packet sent after the previous round's end
//! is delivered, detected through the rate sample's `prior_delivered`.

use crate::cc::RateSample;

#[derive(Debug, Clone, Default)]
pub struct RoundCounter {
    /// `tp->delivered` at which the current round ends (`next_rtt_delivered`).
    next_round_delivered: u64,
    /// Rounds completed so far (`rtt_cnt`).
    count: u64,
    /// Whether the ACK just processed started a new round (`round_start`).
    round_start: bool,
}

impl RoundCounter {
    /// Update on an ACK; `delivered` is `tp.delivered` after the ACK.
    /// Returns whether a new round started.
    pub fn update(&mut self, rs: &RateSample, delivered: u64) -> bool {
        self.round_start = false;
        if (rs.interval > 0 || rs.delivered > 0 || rs.acked_sacked > 0)
            && rs.prior_delivered >= self.next_round_delivered
        {
            self.next_round_delivered = delivered;
            self.count += 1;
            self.round_start = true;
        }
        self.round_start
    }
    pub fn round_start(&self) -> bool {
        self.round_start
    }
    pub fn count(&self) -> u64 {
        self.count
    }
    /// Start a new round at the current delivered count (BBRv2 `bbr2_start_round`
    /// style callers use this to re-anchor).
    pub fn reset_at(&mut self, delivered: u64) {
        self.next_round_delivered = delivered;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_ends_when_a_packet_sent_after_it_began_is_delivered() {
        let mut r = RoundCounter::default();
        // First ACK starts round 1 (next_round_delivered = 0).
        let rs = RateSample { prior_delivered: 0, acked_sacked: 1, delivered: 1, interval: 1, ..Default::default() };
        assert!(r.update(&rs, 1));
        // Packets sent before delivered reached 1 do not end the round.
        let rs = RateSample { prior_delivered: 0, acked_sacked: 1, delivered: 1, interval: 1, ..Default::default() };
        assert!(!r.update(&rs, 2));
        // A packet sent when delivered was 1 does.
        let rs = RateSample { prior_delivered: 1, acked_sacked: 1, delivered: 1, interval: 1, ..Default::default() };
        assert!(r.update(&rs, 3));
        assert_eq!(r.count(), 2);
    }
}
