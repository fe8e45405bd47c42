//! Building blocks shared by several CCAs, written and tested once.

pub mod classic;
pub mod hystart;
pub mod round;
pub mod windowed_filter;

pub use round::RoundCounter;
pub use windowed_filter::{MaxFilter, MinFilter};
