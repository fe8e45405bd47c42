//! The discrete-event core: an event queue ordered by (time, sequence number) and
//! seeded random-number streams. There is no global simulator: the `World` in
//! `experiment` owns an `EventQueue` and passes `now` explicitly.

pub mod event;
mod min_heap;
pub mod rng;
mod sift;
mod timers;

pub use event::EventQueue;
pub use rng::{stream, SimRng};
