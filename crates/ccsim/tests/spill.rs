//! Streaming the growing tables in chunks ([`ccsim::trace::spill`]) changes where rows
//! are held, never what they are: the chunks followed by the output's remainder are the
//! unstreamed run's table, value for value, and the engine never holds much more than a
//! chunk of any of them.

mod common;

use ccsim::trace::spill::{Spill, STREAMED_TABLES};
use ccsim::trace::{Column, Table};
use ccsim::units::{ms, secs};
use ccsim::{Control, RunOutput};
use common::*;

/// Every value of a column as text: bit patterns for numbers (NaN equals NaN), the
/// string itself for dictionary columns (whose codes are per chunk).
fn cells(c: &Column) -> Vec<String> {
    match c {
        Column::U64(v) => v.iter().map(|x| format!("u{x}")).collect(),
        Column::I64(v) => v.iter().map(|x| format!("i{x}")).collect(),
        Column::F64(v) => v.iter().map(|x| format!("f{:x}", x.to_bits())).collect(),
        Column::Bool(v) => v.iter().map(|x| format!("b{x}")).collect(),
        Column::Dict { codes, values } => codes.iter().map(|&i| values[i as usize].clone()).collect(),
    }
}

/// A table as (column name, values), the rows of `parts` one after the other.
fn concat(parts: &[&Table]) -> Vec<(&'static str, Vec<String>)> {
    let mut out: Vec<(&'static str, Vec<String>)> = parts[0].columns.iter().map(|(n, _)| (*n, Vec::new())).collect();
    for t in parts {
        for ((name, col), (out_name, values)) in t.columns.iter().zip(out.iter_mut()) {
            assert_eq!(name, out_name, "every chunk has the table's columns in order");
            values.extend(cells(col));
        }
    }
    out
}

/// The output's table `name` (one of the streamed ones).
fn streamed_table<'a>(out: &'a RunOutput, name: &str) -> &'a Table {
    match name {
        "flow_ts" => &out.flow_ts,
        "queue_ts" => &out.queue_ts,
        "sojourn" => &out.sojourn,
        "events" => &out.events,
        _ => unreachable!("{name} is not streamed"),
    }
}

#[test]
fn streamed_chunks_and_the_remainder_are_the_unstreamed_tables() {
    let mut cfg = dumbbell(50, &[20, 40], 0.25);
    cfg.duration_ns = secs(6);
    cfg.warmup_ns = secs(1);
    cfg.sample_interval_ns = ms(5);
    cfg.packet_events = true; // drop rows: `events` grows between samples too
    for i in 0..6 {
        cfg.flows.push(flow(i % 2, if i % 3 == 0 { "cubic" } else { "reno" }, ms(10 * i as u64)));
    }
    let whole = ccsim::run(&cfg).unwrap();

    let chunk_rows = 200;
    let mut chunks: Vec<(&'static str, Table)> = Vec::new();
    let mut sink = |name: &'static str, t: Table| chunks.push((name, t));
    let spill = Spill { chunk_rows, sink: &mut sink };
    let streamed = ccsim::run_streaming(&cfg, &mut |_| Control::Continue, None, Some(spill)).unwrap();

    for name in STREAMED_TABLES {
        let mut parts: Vec<&Table> = chunks.iter().filter(|(n, _)| *n == name).map(|(_, t)| t).collect();
        parts.push(streamed_table(&streamed, name));
        assert_eq!(concat(&parts), concat(&[streamed_table(&whole, name)]), "{name}: chunks + remainder = the whole table");
    }
    // flow_ts grows by one row per flow per sample, so a chunk is cut at most one
    // sample's rows past the threshold and the engine holds at most that much.
    let flow_chunks: Vec<usize> = chunks.iter().filter(|(n, _)| *n == "flow_ts").map(|(_, t)| t.num_rows()).collect();
    assert!(flow_chunks.len() >= 5, "6 flows x 1200 samples in chunks of {chunk_rows}: {flow_chunks:?}");
    assert!(flow_chunks.iter().all(|&r| (chunk_rows..chunk_rows + cfg.flows.len()).contains(&r)), "{flow_chunks:?}");
    assert!(streamed.flow_ts.num_rows() < chunk_rows);
    let counts: Vec<(&str, usize)> =
        STREAMED_TABLES.iter().map(|t| (*t, chunks.iter().filter(|(n, _)| n == t).count())).collect();
    assert!(counts.iter().all(|(_, c)| *c > 0), "every growing table was streamed: {counts:?}");
    // The other tables and the statistics do not depend on streaming.
    assert!(streamed.flows.bit_identical(&whole.flows));
    assert!(streamed.links.bit_identical(&whole.links));
    assert_eq!(streamed.stats.entries(), whole.stats.entries());
}
