//! Scripted tests of the sender in the spirit of packetdrill: each drives the real
//! `Sender` and `Receiver` through `cc::testing::TimelineHarness` and states the
//! Linux behaviour (function, kernel version) it checks.

use crate::cc::testing::TimelineHarness;
use crate::cc::{build, CaState};
use crate::units::{ms, us, Time};

fn reno(rtt: Time) -> TimelineHarness {
    TimelineHarness::new(build("reno", &serde_json::Value::Null).unwrap(), 1448, 10).with_rtt(rtt)
}

/// `tcp_schedule_loss_probe` (6.x): PTO = 2·srtt + TCP_TIMEOUT_MIN with several
/// segments out, 2·srtt + TCP_RTO_MIN with one.
#[test]
fn tlp_timeout_is_two_srtt_plus_timeout_min() {
    let mut h = reno(ms(10));
    h.send(2);
    h.advance(ms(10));
    h.ack(1); // srtt = 10 ms; one segment still out
    let t0 = h.now();
    h.send(1); // two out: PTO = 2·10 + 2 ms after the last transmission
    let probe_at = h.sender().next_wakeup().unwrap();
    assert_eq!(probe_at - t0, ms(22));
    h.advance(ms(22));
    assert_eq!(h.sender().counters.tlp_probes, 1);

    let mut h = reno(ms(10));
    h.send(1);
    h.advance(ms(10));
    h.ack(1);
    let t0 = h.now();
    h.send(1); // a single segment out: 2·10 + 200 ms, capped at the RTO (10 + 200 ms)
    assert_eq!(h.sender().next_wakeup().unwrap() - t0, ms(210));
}

/// `tcp_schedule_loss_probe`: a probe may be scheduled in CWR as in Open.
#[test]
fn tlp_is_scheduled_in_cwr() {
    let mut h = reno(ms(10));
    h.send(10);
    h.advance(ms(10));
    h.ack_ece(1);
    assert_eq!(h.tp().ca_state, CaState::Cwr);
    h.rto(); // blackhole: the probe must come before the RTO
    assert_eq!(h.sender().counters.tlp_probes, 1, "a loss probe was sent in CWR");
}

/// `tcp_rack_detect_loss` (6.x): the reordering timer fires at the remaining time
/// plus TCP_TIMEOUT_MIN (2 ms), so at a 60 µs RTT a hole waits ≥ 2 ms, not µs.
#[test]
fn rack_reorder_timer_adds_timeout_min() {
    // Drop one segment and deliver a single SACK after it: fewer than 3 SACKed, so
    // RACK's reordering window (min_rtt/4) applies and the timer is armed.
    let mut h = reno(us(60));
    h.send(3);
    h.advance(us(60));
    h.ack(3); // min_rtt = 60 µs
    h.send(3);
    h.advance(us(60));
    let t0 = h.now();
    h.drop_oldest(1);
    h.ack(1);
    assert_eq!(h.tp().ca_state, CaState::Disorder);
    let fire = h.sender().next_wakeup().unwrap();
    assert!(fire - t0 >= ms(2), "reorder timer after {} ns", fire - t0);
    assert!(fire - t0 <= ms(2) + us(60), "reorder timer after {} ns", fire - t0);
    h.advance(fire - t0);
    assert_eq!(h.sender().counters.segs_lost, 1, "the hole was marked lost when the timer fired");
    assert_eq!(h.tp().ca_state, CaState::Recovery);
}

/// `tcp_init_cwnd_reduction` zeroes `snd_cwnd_cnt`.
#[test]
fn cwnd_reduction_resets_cwnd_cnt() {
    let mut h = reno(ms(10));
    h.tp_mut().ssthresh = 10; // congestion avoidance from the start
    h.send(10);
    h.advance(ms(10));
    for _ in 0..3 {
        h.ack(1); // each ACK adds one to cwnd_cnt (Reno: +1 cwnd per cwnd ACKs)
    }
    assert_eq!(h.tp().cwnd_cnt, 3);
    h.ack_ece(1);
    assert_eq!(h.tp().ca_state, CaState::Cwr);
    assert_eq!(h.tp().cwnd_cnt, 0);
}

/// `tcp_fastretrans_alert`: CWR ends only when data above high_seq is acked
/// (`snd_una != high_seq`), so that the CWR flag reached the receiver.
#[test]
fn cwr_ends_above_high_seq_not_at_it() {
    let mut h = reno(ms(10));
    h.send(4);
    h.advance(ms(10));
    h.ack_ece(1); // CWR, high_seq = 4
    assert_eq!(h.tp().ca_state, CaState::Cwr);
    h.mark_app_limited();
    h.ack(h.on_path() as u32); // snd_una reaches high_seq exactly
    assert_eq!(h.sender().snd_una(), h.sender().snd_nxt());
    assert_eq!(h.tp().ca_state, CaState::Cwr, "snd_una == high_seq: still CWR");
    h.send(1);
    h.advance(ms(10));
    h.ack(1);
    assert_eq!(h.tp().ca_state, CaState::Open);
}

/// `tcp_write_xmit`: `tcp_cwnd_validate` runs only if something was sent or cwnd
/// stopped the sender.
#[test]
fn cwnd_validate_skips_transmits_that_sent_nothing() {
    let mut h = reno(ms(10));
    h.run_rounds(1);
    assert!(h.tp().is_cwnd_limited);
    let usage_before = h.tp().is_cwnd_limited;
    h.mark_app_limited(); // a transmit attempt that sends nothing, not cwnd-limited
    assert_eq!(h.tp().is_cwnd_limited, usage_before);
}

/// `tcp_update_skb_after_send`: the first 10 data segments are not paced.
#[test]
fn initial_window_leaves_unpaced() {
    let mut h = TimelineHarness::new(build("bbr1", &serde_json::Value::Null).unwrap(), 1448, 10).with_rtt(ms(50));
    assert_eq!(h.fill_window(), 10, "IW10 at once");
    assert!(h.tp().pacing_rate > 0);
}

/// `tcp_ack_update_rtt`: after a retransmission (no Karn-valid sample) an ACK that
/// advances snd_una gives an RTT sample from TSecr, in 1 ms ticks.
#[test]
fn tsecr_gives_an_rtt_sample_after_retransmission() {
    let mut h = reno(ms(30));
    h.send(1);
    h.rto(); // srtt 0: probe at 1 s, RTO at 2 s retransmits
    assert_eq!(h.tp().srtt, 0);
    h.advance(ms(30));
    h.ack(1);
    assert_eq!(h.tp().srtt, ms(30), "RTT from the echoed timestamp of the retransmission");
}

/// `tcp_init_transfer` after the three-way handshake (`tcp::handshake`): the SYN-ACK's
/// RTT sample has set srtt, min_rtt and the RTO (`tcp_ack_update_rtt`), so the first
/// loss probe is 2·srtt-based, not TCP_TIMEOUT_INIT; after more than one SYN resend
/// the transfer starts at cwnd 1.
#[test]
fn a_handshake_seeds_srtt_and_may_start_at_one_segment() {
    use crate::sim::{stream, rng::Component};
    use crate::tcp::sender::{Sender, SenderParams};
    for (cwnd_one, sent) in [(false, 10), (true, 1)] {
        let params = SenderParams {
            mss: 1448,
            initial_cwnd: 10,
            rwnd_segs: 1000,
            pacing: false,
            ecn: false,
            min_rto: ms(200),
            size_bytes: None,
            gso: crate::host::Gso::OFF,
            hz: 1000,
        };
        let mut s = Sender::new(params, build("reno", &serde_json::Value::Null).unwrap(), stream(0, Component::Cca, 0));
        s.open_from_handshake(ms(40), ms(40), cwnd_one);
        let mut out = Vec::new();
        s.start(ms(40), &mut out);
        assert_eq!(out.len(), sent);
        assert_eq!((s.srtt(), s.min_rtt()), (ms(40), Some(ms(40))));
        // PTO 2·40 + 2 ms with several out; 2·40 + 200 ms with one, capped at the RTO
        // of 40 + max(2·40, 200) = 240 ms.
        let pto = if sent > 1 { ms(82) } else { ms(240) };
        assert_eq!(s.next_wakeup().unwrap() - ms(40), pto);
    }
}
