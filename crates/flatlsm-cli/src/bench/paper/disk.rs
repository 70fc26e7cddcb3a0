//! The disk the report's figures ran on, measured rather than assumed: a sequential write of
//! [`PROBE_BYTES`] into the directory beside the databases, then `fdatasync` (as `dd
//! conv=fdatasync` measures it), at the start of the run. The report states it in its header
//! and its caveats compare it with the paper's SATA SSD; earlier reports assumed the disk of
//! the machine they were written on, which a later machine contradicted (2 GB/s, then 0.3).

use std::io::Write as _;
use std::path::Path;
use std::time::Instant;

/// What the probe writes at `--scale 1`: enough that the page cache cannot hide the device.
pub const PROBE_BYTES: u64 = 1 << 30;

/// The paper's SATA SSD's sequential writes, about 0.5 GB/s (its section 5.1 names a SATA
/// SSD; such drives write 0.45–0.55 GB/s).
pub const PAPER_SSD_BYTES_PER_SECOND: f64 = 0.5e9;

/// A measured sequential write speed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DiskSpeed {
    /// Bytes written and synced per second.
    pub bytes_per_second: f64,
    /// How many bytes the probe wrote.
    pub probe_bytes: u64,
}

impl DiskSpeed {
    /// Writes `bytes` into a scratch file in `dir` in 1 MiB blocks, syncs it, removes it.
    pub fn measure(dir: &Path, bytes: u64) -> Result<DiskSpeed, String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        let path = dir.join(format!("disk-probe-{}", std::process::id()));
        let timed = write_synced(&path, bytes);
        let _ = std::fs::remove_file(&path);
        let seconds = timed.map_err(|e| format!("disk probe {}: {e}", path.display()))?;
        Ok(DiskSpeed {
            bytes_per_second: bytes as f64 / seconds.max(1e-6),
            probe_bytes: bytes,
        })
    }

    /// "1.23 GB/s (1024 MiB written then synced)", for the report's header.
    pub fn describe(&self) -> String {
        format!(
            "{:.2} GB/s sequential writes ({} MiB written then synced in the databases' \
             directory at the start)",
            self.bytes_per_second / 1e9,
            self.probe_bytes >> 20
        )
    }

    /// How this disk compares with the paper's SATA SSD, in words.
    pub fn beside_paper(&self) -> String {
        let times = self.bytes_per_second / PAPER_SSD_BYTES_PER_SECOND;
        let relation = match times {
            t if t >= 1.25 => format!("{t:.1}× as fast as"),
            t if t > 0.8 => "about as fast as".to_string(),
            t => format!("{:.1}× slower than", 1.0 / t),
        };
        format!(
            "this disk wrote {:.2} GB/s, {relation} the paper's SATA SSD (about 0.5 GB/s)",
            self.bytes_per_second / 1e9
        )
    }
}

/// Seconds to write `bytes` to a new file at `path` and sync it.
fn write_synced(path: &Path, bytes: u64) -> std::io::Result<f64> {
    let block = vec![0x5au8; 1 << 20];
    let mut file = std::fs::File::create(path)?;
    let started = Instant::now();
    let mut left = bytes;
    while left > 0 {
        let n = left.min(block.len() as u64) as usize;
        file.write_all(&block[..n])?;
        left -= n as u64;
    }
    file.sync_data()?;
    Ok(started.elapsed().as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_measures_a_speed_and_leaves_no_file() {
        let d = tempfile::tempdir().unwrap();
        let speed = DiskSpeed::measure(d.path(), 4 << 20).unwrap();
        assert!(speed.bytes_per_second > 0.0, "{speed:?}");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
        assert!(speed.describe().contains("4 MiB written then synced"));
    }

    #[test]
    fn the_paper_comparison_names_the_direction() {
        let at = |gb: f64| DiskSpeed {
            bytes_per_second: gb * 1e9,
            probe_bytes: 1 << 30,
        };
        assert!(at(2.0).beside_paper().contains("4.0× as fast as"));
        assert!(at(0.45).beside_paper().contains("about as fast as"));
        assert!(at(0.25).beside_paper().contains("2.0× slower than"));
    }
}
