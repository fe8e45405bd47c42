//! TCP endpoints: the sender (scoreboard, loss detection and recovery, RTO,
//! PRR, delivery-rate samples, pacing, the congestion state machine) and the
//! receiver (cumulative and selective ACKs, delayed ACKs with quick-ack, ECN echo),
//! and the three-way handshake that opens a connection (`handshake`).
//! Both are sans-IO state machines: they take `now` and packets, and return packets
//! to send and the time they next need to be woken.

pub mod delack;
pub mod handshake;
pub mod receiver;
pub mod rtt;
pub mod sender;

pub use receiver::Receiver;
pub use sender::{Sender, SenderCounters};
