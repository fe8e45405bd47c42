//! Run resolved engine configurations (JSON, as `ccbench` hands them to the engine)
//! and print each run's statistics: the engine alone, without Python, for profilers
//! and instruction counters (`valgrind --tool=callgrind`, `perf`).
//!
//!     python benchmarks/dump_config.py benchmarks/specs/c.toml /tmp/c.json
//!     cargo build --release --example run_config
//!     valgrind --tool=callgrind target/release/examples/run_config /tmp/c.json
//!
//! With `--digest`, also print a digest of every result table (every value's bit
//! pattern), so two builds can be checked bit-identical without Python:
//! `diff <(OLD/run_config --digest c.json) <(NEW/run_config --digest c.json)`.

use std::hash::{DefaultHasher, Hash, Hasher};

use ccsim::trace::{schema::named_tables, Column, Table};

fn digest(table: &Table) -> u64 {
    // DefaultHasher::new() uses fixed keys: the same bits give the same digest in every build.
    let mut h = DefaultHasher::new();
    for (name, column) in &table.columns {
        name.hash(&mut h);
        match column {
            Column::U64(v) => v.hash(&mut h),
            Column::I64(v) => v.hash(&mut h),
            Column::F64(v) => v.iter().for_each(|x| x.to_bits().hash(&mut h)),
            Column::Bool(v) => v.hash(&mut h),
            Column::Dict { codes, values } => (codes, values).hash(&mut h),
        }
    }
    h.finish()
}

fn main() {
    let mut paths: Vec<String> = std::env::args().skip(1).collect();
    let with_digest = paths.first().is_some_and(|a| a == "--digest");
    if with_digest {
        paths.remove(0);
    }
    if paths.is_empty() {
        eprintln!("usage: run_config [--digest] CONFIG.json...");
        std::process::exit(2);
    }
    for path in paths {
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let out = ccsim::run_json(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
        println!("{path}: {:?}", out.stats);
        if with_digest {
            let tables = named_tables(out.flows, out.flow_ts, out.queue_ts, out.events, out.links, out.sojourn);
            for (name, table) in &tables {
                println!("  {name}: {} rows, digest {:016x}", table.num_rows(), digest(table));
            }
        }
    }
}
