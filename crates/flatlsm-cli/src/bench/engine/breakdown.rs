//! [`WriteBreakdown`]: where a benchmark's foreground writes spent their time — waiting on the
//! write stall, appending to the write-ahead log, appending to the write buffer's data, and
//! inserting into its index (the paper's latency breakdowns, Figs. 16, 19 and 22).

/// Cumulative nanoseconds foreground writes spent in each part of the write path (FlatLSM's
/// `Stats::write_*_nanos`; the last three only under `Options::write_breakdown`, zeros where
/// an engine does not measure them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteBreakdown {
    /// Waiting on the write stall (slowdown delays and stops).
    pub stall_nanos: u64,
    /// Appending to the write-ahead log (0 for designs without one).
    pub wal_nanos: u64,
    /// Appending the data to the write buffer (PM Log, DRAM log, PM skiplist nodes).
    pub mem_data_nanos: u64,
    /// Inserting into the write buffer's index (the PM skiplist: its links).
    pub mem_index_nanos: u64,
}

impl WriteBreakdown {
    /// The engine's counters of `stats`.
    pub fn of(stats: &flatlsm::Stats) -> WriteBreakdown {
        WriteBreakdown {
            stall_nanos: stats.write_stall_nanos,
            wal_nanos: stats.write_wal_nanos,
            mem_data_nanos: stats.write_mem_data_nanos,
            mem_index_nanos: stats.write_mem_index_nanos,
        }
    }

    /// The time spent since the counters were `before`.
    pub fn since(&self, before: &WriteBreakdown) -> WriteBreakdown {
        WriteBreakdown {
            stall_nanos: self.stall_nanos.saturating_sub(before.stall_nanos),
            wal_nanos: self.wal_nanos.saturating_sub(before.wal_nanos),
            mem_data_nanos: self.mem_data_nanos.saturating_sub(before.mem_data_nanos),
            mem_index_nanos: self.mem_index_nanos.saturating_sub(before.mem_index_nanos),
        }
    }

    /// The four parts, in nanoseconds: stall, WAL, memtable data, memtable index.
    pub fn parts(&self) -> [u64; 4] {
        [
            self.stall_nanos,
            self.wal_nanos,
            self.mem_data_nanos,
            self.mem_index_nanos,
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_benchmarks_breakdown_is_what_it_added_to_the_counters() {
        let before = WriteBreakdown {
            stall_nanos: 5,
            wal_nanos: 1,
            mem_data_nanos: 2,
            mem_index_nanos: 3,
        };
        let after = WriteBreakdown {
            stall_nanos: 15,
            wal_nanos: 11,
            mem_data_nanos: 22,
            mem_index_nanos: 33,
        };
        assert_eq!(after.since(&before).parts(), [10, 10, 20, 30]);
    }
}
