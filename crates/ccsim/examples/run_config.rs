//! Run resolved engine configurations (JSON, as `ccbench` hands them to the engine)
//! and print each run's statistics: the engine alone, without Python, for profilers
//! and instruction counters (`valgrind --tool=callgrind`, `perf`).
//!
//!     python benchmarks/dump_config.py benchmarks/specs/c.toml /tmp/c.json
//!     cargo build --release --example run_config
//!     valgrind --tool=callgrind target/release/examples/run_config /tmp/c.json

fn main() {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    if paths.is_empty() {
        eprintln!("usage: run_config CONFIG.json...");
        std::process::exit(2);
    }
    for path in paths {
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let out = ccsim::run_json(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
        println!("{path}: {:?}", out.stats);
    }
}
