//! Handing recorded rows over while a run goes, so that a run's memory depends on its
//! flows and sample interval, not on how long it simulates.
//!
//! The tables that grow with simulated time (`flow_ts`, `queue_ts`, `sojourn`,
//! `events`) are offered to a [`Spill`] after every sample: a table holding at least
//! [`Spill::chunk_rows`] rows is finished and handed to the sink (the binding writes it
//! to Parquet as one row group) and its builder starts empty. What is left at the end
//! comes back in the run's output as before, so the rows of a table are its chunks in
//! order followed by that remainder. Each chunk is a complete [`Table`]: its dictionary
//! columns carry their own values. Where the chunks are cut depends only on the
//! simulation (rows recorded at sample instants), so the same config gives the same
//! chunks.

use super::network::SojournBuilder;
use super::recorder::{EventsBuilder, FlowTsBuilder, QueueTsBuilder};
use super::Table;

/// Where a run's recorded rows go while it runs.
pub struct Spill<'s> {
    /// A table is handed over once it holds at least this many rows (at least 1).
    pub chunk_rows: usize,
    /// Receives `(table name, rows)`: the name is one of [`STREAMED_TABLES`].
    pub sink: &'s mut dyn FnMut(&'static str, Table),
}

/// The tables a [`Spill`] receives, in the order they are offered.
pub const STREAMED_TABLES: [&str; 4] = ["flow_ts", "queue_ts", "sojourn", "events"];

/// A recorder's builder that can be cut into chunks.
pub trait Chunked: Default {
    fn rows(&self) -> usize;
    fn finish(self) -> Table;
    /// Make room for `rows` more rows in every column.
    fn reserve(&mut self, rows: usize);
}

macro_rules! chunked {
    ($($t:ty),*) => {$(
        impl Chunked for $t {
            fn rows(&self) -> usize {
                self.len()
            }
            fn finish(self) -> Table {
                <$t>::finish(self)
            }
            fn reserve(&mut self, rows: usize) {
                <$t>::reserve(self, rows)
            }
        }
    )*};
}
chunked!(FlowTsBuilder, QueueTsBuilder, EventsBuilder, SojournBuilder);

impl Spill<'_> {
    /// Hand `builder`'s rows to the sink as table `name` if there are at least
    /// `chunk_rows` of them, leaving it empty.
    ///
    /// The emptied builder gets room for a whole chunk at once (plus an eighth, as a
    /// sample may take it past `chunk_rows`): a table that filled one chunk will fill
    /// the next, and one allocation of the same size per column lets the allocator
    /// reuse the memory of chunks already written, which are freed on the binding's
    /// writer thread while the next chunk grows. Grown by doubling instead, the columns
    /// fragmented glibc's heap and the peak of a streamed run rose with its length
    /// (`tests/test_streaming.py`).
    pub fn offer<B: Chunked>(&mut self, name: &'static str, builder: &mut B) {
        let chunk_rows = self.chunk_rows.max(1);
        if builder.rows() >= chunk_rows {
            (self.sink)(name, std::mem::take(builder).finish());
            builder.reserve(chunk_rows + chunk_rows / 8);
        }
    }

    /// Offer every streamed table (after a sample, when they have all grown).
    pub fn offer_all(
        &mut self,
        flow_ts: &mut FlowTsBuilder,
        queue_ts: &mut QueueTsBuilder,
        sojourn: &mut SojournBuilder,
        events: &mut EventsBuilder,
    ) {
        self.offer(STREAMED_TABLES[0], flow_ts);
        self.offer(STREAMED_TABLES[1], queue_ts);
        self.offer(STREAMED_TABLES[2], sojourn);
        self.offer(STREAMED_TABLES[3], events);
    }
}
