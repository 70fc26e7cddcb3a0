//! Why rows of the report do not agree with the paper: the causes this project measured, one
//! text per cause, named by what it explains. Each figure picks them per row ([`Why`]); a row
//! whose cause no profile has shown yet says [`NOT_ANALYSED`]. The analyses behind the texts
//! are in docs/design-decisions.md ("The paper's evaluation at equal budgets").

use super::verdict::Why;

/// A row no analysis explains yet.
pub const NOT_ANALYSED: &str = "not analysed yet";

/// Write rows against the leveled designs (RocksDB's and Titan's roles).
/// The disk's own speed is in the report's header and caveats: it differs machine to machine.
pub const SHALLOW_TREES: &str = "the data is 1/20–1/40 of the paper's: the leveled designs' \
     trees stay shallow (their write amplification is in the last column) where the paper's \
     80 GB deepened them, so compaction, the source of the paper's gaps, costs them less here";

/// Write rows against the designs that keep data in PM (NoveLSM, MatrixKV).
pub const PM_AT_DRAM_SPEED: &str = "PM is emulated in DRAM without added latency, so NoveLSM's \
     PM skiplists and MatrixKV's container write faster than on Optane";

/// Memtable rows (Figs. 18 and 19): nothing reaches the SSD.
pub const MEMTABLES_AT_DRAM_SPEED: &str = "PM is emulated in DRAM without added latency: the \
     PM write-ahead log and the PM skiplist write at DRAM speed, where Optane's writes cost \
     several times more";

/// Fig. 16's Mem latency against Titan at large values: both are a copy into DRAM here.
pub const PM_LOG_AT_DRAM_SPEED: &str = "PM is emulated in DRAM without added latency: \
     FlatLSM's PM Log append and Titan's DRAM memtable insert are both a copy of the value \
     into DRAM, and from 16 KB up that copy is most of the Mem latency (in session 18's run, \
     16 → 64 KB added 12.2 µs to FlatLSM's and 14.3 µs to Titan's: DRAM's speed in both), \
     where on Optane FlatLSM's copy runs at PM's write bandwidth, a fraction of DRAM's";

/// Fig. 22's stall share: the flush and the writer share two cores.
pub const FLUSH_SHARES_TWO_CORES: &str = "two cores: the flush (the values' crc, their copy \
     into the page cache) shares them with the writer, so from 1 KB up the writer outruns the \
     flush and the slowdown paces it (Fig. 9a's 1 KB run used 1.8 of the 2 cores)";

/// YCSB rows (Fig. 11): the updates' write path against the baselines'.
pub const YCSB_SMALL_DATA: &str = "the load writes 4 GB, which the page cache holds, where \
     the paper's data (its size unstated; its micro-benchmarks write 80 GB) went to a SATA \
     SSD: the baselines' compactions and reads cost them far less here";

/// Fig. 9b at 256 B and 1 KB.
pub const PERSIST_PER_WRITE: &str = "sequential keys spare every design its compactions, which \
     leaves the per-write cost: FlatLSM persists each entry of 256 B or more as it writes it \
     (non-temporal stores drained at the next locked instruction: 40% of a 256 B fillseq's \
     samples), where the others' logs are not synced per write";

/// Fig. 10b at 256 B.
pub const SCAN_OF_PMTABLES: &str = "half of the 256 B data still sits in twelve PMTables \
     after the load: a scan steps their skiplists (a cache miss per node and per PM Log entry) \
     and merges about 15 sources, where the others read sorted blocks of fewer runs";

/// Table 1's P99.9 against NoveLSM: FlatLSM's tail is the pacing of a writer twice as fast.
pub const TAIL_OF_PACING: &str = "FlatLSM writes flat out at about twice NoveLSM's rate here \
     (Figs. 20–21's running times), faster than its flush drains PMTables to this disk, so the \
     slowdown paces it (Fig. 22's stall share) and the pacer's waits are its slowest writes; \
     at NoveLSM's pace its tail is the lower: with both capped at 46,000 writes/s \
     (`--rate_limit_ops 46000`, one run) FlatLSM's P99.9 was 58 µs, NoveLSM's 255 µs \
     (flat out in the same session: 279 and 252 µs)";

/// Fig. 15's random reads from the disk above the separation threshold, FlatLSM level with
/// Titan and reading as many bytes from the disk.
pub const SEPARATED_VALUES_READ_ALIKE: &str = "both designs read as many bytes from the disk \
     (within 5 %; MiB in the last column) through the same value-log code, one value read per \
     get, so they are level and the disk decides the sign (within 10 %: five runs of the 64 KB \
     row on one build gave 0.91–1.06×); FlatLSM's edge in the paper is the reads its PMTables \
     serve, and after the load and the flushes due only the PMTables not yet due hold data (at \
     most two of six here, about 8 % of the 4 GiB)";

/// Fig. 15's random reads below the separation threshold, FlatLSM level with Titan.
pub const INLINE_VALUES_READ_ALIKE: &str = "below the separation threshold both designs keep \
     values in their SSTs and read as many bytes from the disk (within 5 %; MiB in the last \
     column) through the same table and block-cache code, so they are level and the disk \
     decides the sign (within 10 %, the spread of reads from this disk run to run)";

/// A read row FlatLSM loses while its reads went to the disk and the other design's did not
/// (chosen by [`waited_for_disk`] from the run's own device reads).
pub const WAITED_FOR_DISK: &str = "FlatLSM read far more from the disk during this workload \
     than the best other design (MiB read from the disk, below the table): the page cache held \
     less of its data as the load and the earlier workloads left it, and each such read waits \
     about 100 µs where one from memory takes a few";

/// More than this many bytes read from the disk, and [`DISK_SHARE`] times the other's, make
/// FlatLSM's reads wait for the disk: 64 MiB of 4 KB reads is 16,384 device reads, 1.6 s at
/// 100 µs each, a fifth of a YCSB workload's run here.
pub const DISK_BYTES: u64 = 64 << 20;
/// See [`DISK_BYTES`].
pub const DISK_SHARE: f64 = 1.5;

/// Within this share of the larger, two runs read as many bytes from the disk.
pub const ALIKE_SHARE: f64 = 0.05;

/// True when two runs read within [`ALIKE_SHARE`] as many bytes from the disk (`None`s: not
/// measured, false): a gap between them is then not in what they read.
pub fn read_alike_from_disk(flatlsm: Option<u64>, other: Option<u64>) -> bool {
    match (flatlsm, other) {
        (Some(ours), Some(theirs)) => {
            ours.abs_diff(theirs) as f64 <= ALIKE_SHARE * ours.max(theirs) as f64
        }
        _ => false,
    }
}

/// True when FlatLSM's run read from the disk enough more than the other's to explain a loss
/// (`None`s: not measured, false).
pub fn waited_for_disk(flatlsm: Option<u64>, other: Option<u64>) -> bool {
    match (flatlsm, other) {
        (Some(ours), Some(theirs)) => {
            ours > DISK_BYTES + theirs && ours as f64 > DISK_SHARE * theirs as f64
        }
        _ => false,
    }
}

/// Fig. 12: a count whose distance from the claim's band is within the spread this run
/// measured (the smallest count ran twice, first and last).
pub const WITHIN_RUN_SPREAD: &str = "the distance from the claim's band is within the spread \
     this run measured between its two runs of the smallest capacity (first and last, in the \
     last column): at 4 KB every count writes at the disk's speed, which varies that much from \
     one minute to the next here, so this row cannot tell a slight loss from none";

/// Fig. 12: a larger count beyond the claim's band whose flush speed moved from the
/// reference's the same way as its throughput, by most of the distance (`fig12::FLUSH_SHARE`).
pub const FLUSH_SPEED_MOVED: &str = "the flush cannot keep up with 4 KB writes on two cores and \
     this disk, so it paces the writer through most of every count's run (the seconds paced, \
     last column), and this count's flush itself wrote faster or slower than the smallest's \
     (MB/s, last column), the same way and by most of the row's distance: the disk's speed, \
     which drifts between runs, not the tables' count (every flush takes the same two tables \
     at every count); one run per count cannot separate the two";

/// Fig. 17: a median ratio short of the claim that one of the capacity's rounds reached.
pub const WITHIN_ROUNDS: &str = "the claim's ratio lies within the range of this capacity's own \
     rounds (the column before the paper's): the median's distance from it is the rounds' \
     noise, not a slower copy-free recovery";

/// Rows no analysis explains yet, either way.
pub const UNEXPLAINED: Why = Why {
    smaller_gap: NOT_ANALYSED,
    contradicts: NOT_ANALYSED,
};

/// [`UNEXPLAINED`] for any row: the `why` of figures that name no cause yet.
pub fn unexplained(_peer: &str, _size: usize) -> Why {
    UNEXPLAINED
}

/// A P99.9 row of Table 1 against `peer`: [`write_row`]'s causes for a smaller gap, the
/// pacing's tail for a contradiction.
pub fn tail_row(peer: &str) -> Why {
    Why {
        contradicts: TAIL_OF_PACING,
        ..write_row(peer)
    }
}

/// A write row against `peer` (its `--compare profiles` label): the hardware's causes for a
/// smaller gap, no analysis yet for a contradiction.
pub fn write_row(peer: &str) -> Why {
    let smaller_gap = match peer {
        "novelsm" | "matrixkv" => PM_AT_DRAM_SPEED,
        _ => SHALLOW_TREES,
    };
    Why {
        smaller_gap,
        contradicts: NOT_ANALYSED,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::paper::verdict::Verdict;

    #[test]
    fn a_write_row_names_the_hardware_for_a_smaller_gap_and_no_cause_it_lacks() {
        assert_eq!(
            write_row("leveled").of(Verdict::SmallerGap),
            Some(SHALLOW_TREES)
        );
        assert_eq!(
            write_row("matrixkv").of(Verdict::SmallerGap),
            Some(PM_AT_DRAM_SPEED)
        );
        assert_eq!(
            write_row("novelsm").of(Verdict::Contradicts),
            Some(NOT_ANALYSED)
        );
        assert_eq!(write_row("leveled").of(Verdict::Agrees), None);
    }

    #[test]
    fn reads_wait_for_the_disk_only_when_flatlsm_read_much_more_from_it() {
        let mib = |n: u64| Some(n << 20);
        assert!(waited_for_disk(mib(300), mib(10)));
        assert!(
            !waited_for_disk(mib(300), mib(250)),
            "both read from the disk"
        );
        assert!(!waited_for_disk(mib(50), Some(0)), "too little to matter");
        assert!(!waited_for_disk(None, Some(0)), "not measured");
    }

    #[test]
    fn runs_read_alike_within_five_percent_of_the_larger_and_only_when_measured() {
        let mib = |n: u64| Some(n << 20);
        assert!(read_alike_from_disk(mib(3254), mib(3236)));
        assert!(read_alike_from_disk(mib(95), mib(100)));
        assert!(!read_alike_from_disk(mib(94), mib(100)));
        assert!(!read_alike_from_disk(mib(100), None), "not measured");
    }
}
