//! The shape of a run's results, described from the code that records them, so the
//! Python side (the `_core.result_schema()` binding) never keeps its own copy: each
//! table's columns in order with their types, the manifest's engine statistics and
//! the header sizes that turn payload bytes into packet bytes.
//!
//! The column lists are read off empty tables built by the recorder's own builders,
//! so they cannot drift from what a run writes.

use super::flows::{flows_table, FlowNames};
use super::network::{links_table, SojournBuilder};
use super::recorder::{EventsBuilder, FlowTsBuilder, QueueTsBuilder};
use super::{Column, Table};
use crate::experiment::RunStats;

/// The result tables by name, in the order they are written: the one place their
/// names are given (the binding hands a run's tables to Python through it).
pub fn named_tables(
    flows: Table,
    flow_ts: Table,
    queue_ts: Table,
    events: Table,
    links: Table,
    sojourn: Table,
) -> [(&'static str, Table); 6] {
    [
        ("flows", flows),
        ("flow_ts", flow_ts),
        ("queue_ts", queue_ts),
        ("events", events),
        ("links", links),
        ("sojourn", sojourn),
    ]
}

impl Column {
    /// The column's value type as Arrow and NumPy name it (`string`: dictionary-encoded text).
    pub fn type_name(&self) -> &'static str {
        match self {
            Column::U64(_) => "uint64",
            Column::I64(_) => "int64",
            Column::F64(_) => "float64",
            Column::Bool(_) => "bool",
            Column::Dict { .. } => "string",
        }
    }
}

/// One column of a table's schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct ColumnSchema {
    pub name: &'static str,
    /// `uint64`, `int64`, `float64`, `bool` or `string` (dictionary-encoded).
    #[serde(rename = "type")]
    pub type_name: &'static str,
}

/// Every result table with its columns, in the order a run writes them.
pub fn table_schemas() -> Vec<(&'static str, Vec<ColumnSchema>)> {
    let no_names = FlowNames {
        senders: &[],
        groups: Vec::new(),
        ccas: Vec::new(),
    };
    named_tables(
        flows_table(&[], &no_names, 0),
        FlowTsBuilder::default().finish(),
        QueueTsBuilder::default().finish(),
        EventsBuilder::default().finish(),
        links_table(&[]),
        SojournBuilder::default().finish(),
    )
    .into_iter()
    .map(|(name, t)| {
        let cols = t
            .columns
            .iter()
            .map(|(c, col)| ColumnSchema {
                name: c,
                type_name: col.type_name(),
            })
            .collect();
        (name, cols)
    })
    .collect()
}

/// The keys of the engine's run statistics (the manifest's `stats`), in order.
pub fn stats_keys() -> Vec<&'static str> {
    RunStats::default()
        .entries()
        .iter()
        .map(|(k, _)| *k)
        .collect()
}

/// The whole description as JSON: `{"tables": [{name, columns: [{name, type}]}],
/// "stats": [key], "header_bytes": n, "udp_header_bytes": n, "syn_wire_bytes": n}`
/// (tables in write order).
pub fn result_schema_json() -> serde_json::Value {
    let tables: Vec<serde_json::Value> = table_schemas()
        .into_iter()
        .map(|(name, columns)| serde_json::json!({"name": name, "columns": columns}))
        .collect();
    serde_json::json!({
        "tables": tables,
        "stats": stats_keys(),
        "header_bytes": crate::net::HEADER_BYTES,
        "udp_header_bytes": crate::net::UDP_HEADER_BYTES,
        "syn_wire_bytes": crate::net::SYN_WIRE_BYTES,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_has_distinct_columns_and_flows_start_with_the_id() {
        let schemas = table_schemas();
        assert_eq!(schemas.len(), 6);
        for (name, cols) in &schemas {
            let mut names: Vec<_> = cols.iter().map(|c| c.name).collect();
            names.sort_unstable();
            names.dedup();
            assert_eq!(names.len(), cols.len(), "{name} repeats a column");
        }
        assert_eq!(
            schemas[0].1[0],
            ColumnSchema {
                name: "flow_id",
                type_name: "uint64"
            }
        );
        assert_eq!(stats_keys().len(), 18);
        assert!(stats_keys().contains(&"data_pkts_in_network"));
    }
}
