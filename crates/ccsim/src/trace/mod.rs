//! Columnar recording. The engine appends rows into typed column buffers; the
//! binding hands each column to Python as one NumPy array (strings as dictionary
//! codes plus their values), so no per-row Python objects are ever created.
//!
//! The tables and their columns are documented in `docs/results-format.md`. The tables
//! that grow with simulated time can be handed over in chunks while the run goes
//! ([`spill`]).

/// `reserve_exact(rows)` on each named column (a `Vec` field) of a builder.
macro_rules! reserve_columns {
    ($builder:expr, $rows:expr; $($column:ident),+) => {
        $($builder.$column.reserve_exact($rows);)+
    };
}

pub mod flows;
pub mod network;
pub mod recorder;
pub mod schema;
pub mod spill;

/// One column of a table.
#[derive(Debug, Clone, PartialEq)]
pub enum Column {
    U64(Vec<u64>),
    I64(Vec<i64>),
    F64(Vec<f64>),
    Bool(Vec<bool>),
    /// Dictionary-encoded strings: `codes[i]` indexes `values`.
    Dict { codes: Vec<u32>, values: Vec<String> },
}

impl Column {
    pub fn len(&self) -> usize {
        match self {
            Column::U64(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::F64(v) => v.len(),
            Column::Bool(v) => v.len(),
            Column::Dict { codes, .. } => codes.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A named table: columns of equal length, in a fixed order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Table {
    pub columns: Vec<(&'static str, Column)>,
}

impl Table {
    /// Equality of every value's bit pattern (so NaN equals NaN), for determinism checks.
    pub fn bit_identical(&self, other: &Table) -> bool {
        self.columns.len() == other.columns.len()
            && self.columns.iter().zip(&other.columns).all(|((n1, c1), (n2, c2))| {
                n1 == n2
                    && match (c1, c2) {
                        (Column::F64(a), Column::F64(b)) => {
                            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
                        }
                        _ => c1 == c2,
                    }
            })
    }

    pub fn num_rows(&self) -> usize {
        self.columns.first().map(|(_, c)| c.len()).unwrap_or(0)
    }
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|(n, _)| *n == name).map(|(_, c)| c)
    }
    pub fn u64s(&self, name: &str) -> &[u64] {
        match self.column(name) {
            Some(Column::U64(v)) => v,
            _ => panic!("no u64 column {name}"),
        }
    }
    pub fn i64s(&self, name: &str) -> &[i64] {
        match self.column(name) {
            Some(Column::I64(v)) => v,
            _ => panic!("no i64 column {name}"),
        }
    }
    pub fn f64s(&self, name: &str) -> &[f64] {
        match self.column(name) {
            Some(Column::F64(v)) => v,
            _ => panic!("no f64 column {name}"),
        }
    }
}

/// Interns strings for a dictionary column; codes are assigned in first-seen order,
/// which is deterministic because the simulation is.
#[derive(Debug, Clone, Default)]
pub struct Interner {
    values: Vec<String>,
}

impl Interner {
    pub fn code(&mut self, s: &str) -> u32 {
        if let Some(i) = self.values.iter().position(|v| v == s) {
            return i as u32;
        }
        self.values.push(s.to_string());
        (self.values.len() - 1) as u32
    }
    pub fn into_values(self) -> Vec<String> {
        self.values
    }
}
