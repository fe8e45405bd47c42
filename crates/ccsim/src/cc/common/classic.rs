//! The classic slow-start and additive-increase helpers of Linux `tcp_cong.c`,
//! used by Reno and by every loss-based CCA that builds on it (RFC 5681, RFC 3465).

use crate::cc::TcpState;

/// `tcp_slow_start`: grow cwnd by the number of newly delivered packets (ABC with
/// L = unlimited, as Linux does), without exceeding ssthresh. Returns the acked
/// packets left over once ssthresh is reached, for congestion avoidance.
pub fn slow_start(tp: &mut TcpState, acked: u32) -> u32 {
    let cwnd = (tp.cwnd.saturating_add(acked)).min(tp.ssthresh);
    let leftover = acked - (cwnd - tp.cwnd).min(acked);
    tp.cwnd = cwnd.min(tp.cwnd_clamp);
    leftover
}

/// `tcp_cong_avoid_ai`: in linear growth, add one packet per `w` packets acked.
pub fn cong_avoid_ai(tp: &mut TcpState, w: u32, acked: u32) {
    let w = w.max(1);
    // If credits accumulated at a higher w, apply them gently now.
    if tp.cwnd_cnt >= w {
        tp.cwnd_cnt = 0;
        tp.cwnd = tp.cwnd.saturating_add(1);
    }
    tp.cwnd_cnt = tp.cwnd_cnt.saturating_add(acked);
    if tp.cwnd_cnt >= w {
        let delta = tp.cwnd_cnt / w;
        tp.cwnd_cnt -= delta * w;
        tp.cwnd = tp.cwnd.saturating_add(delta);
    }
    tp.cwnd = tp.cwnd.min(tp.cwnd_clamp);
}

/// `tcp_reno_ssthresh`: half the window, at least 2 packets.
pub fn reno_ssthresh(tp: &TcpState) -> u32 {
    (tp.cwnd >> 1).max(2)
}

/// `tcp_reno_cong_avoid` (the sender has already checked that the flow is
/// cwnd-limited): slow start, then +1 packet per cwnd of acknowledged packets.
pub fn reno_cong_avoid(tp: &mut TcpState, acked: u32) {
    let mut acked = acked;
    if tp.in_slow_start() {
        acked = slow_start(tp, acked);
        if acked == 0 {
            return;
        }
    }
    let w = tp.cwnd;
    cong_avoid_ai(tp, w, acked);
}

/// The trace state of a classic CCA: "slow_start" or "cong_avoid".
pub fn phase(tp: &TcpState) -> &'static str {
    if tp.in_slow_start() {
        "slow_start"
    } else {
        "cong_avoid"
    }
}
