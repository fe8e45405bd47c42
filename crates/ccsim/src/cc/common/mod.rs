//! Building blocks shared by several CCAs, written and tested once.

pub mod classic;
pub mod clock;
pub mod hystart;
pub mod round;
pub mod vegas_rtt;
pub mod windowed_filter;

pub use round::RoundCounter;
pub use windowed_filter::{MaxFilter, MinFilter};
