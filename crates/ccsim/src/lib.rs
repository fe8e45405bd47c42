//! # ccsim — the ccbench engine
//!
//! A deterministic packet-level discrete-event simulator of TCP congestion control.
//! No Python inside: the `ccsim-py` crate binds it.
//!
//! Layers, each depending only on those above it:
//!
//! ```text
//! units      Time (u64 ns), Bytes, Bps and the conversions between them
//! sim        event queue ordered by (time, seq); seeded RNG streams
//! net        packets, links (qdisc + transmitter + propagation line), routes
//! qdisc      queue disciplines behind one trait, accounting in a wrapper
//! cc         the CCA trait, shared building blocks, one file per algorithm
//! tcp        sender (scoreboard, RACK-TLP, RTO, PRR, rate samples, pacing), receiver
//! trace      columnar recorders for flow/queue samples and events
//! topology  builders (dumbbell, parking lot, general graph) -> links + route table + each flow's routes
//! traffic    arrival processes, empirical distributions, workload draws (workload seed)
//! experiment config -> world (network from topology) -> run -> tables
//! ```
//!
//! Contracts: same config + seed + version ⇒ bit-identical output; time never goes
//! backwards; the event queue holds O(components) entries.

pub mod cc;
pub mod config;
pub mod sim;
pub mod trace;
pub mod units;
pub mod net;
pub mod qdisc;
pub mod tcp;
pub mod topology;
pub mod experiment;
pub mod host;
pub mod traffic;

pub use config::ExperimentConfig;
pub use experiment::{
    run, run_json, run_json_streaming, run_json_with, run_json_with_ccas, run_streaming, run_with, run_with_ccas, Control,
    Progress, RunOutput, RunStats};

/// Engine version, recorded in every manifest.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
