//! Bytes this process read from storage devices, from /proc/self/io's `read_bytes`: what a
//! benchmark's reads cost beyond the page cache. Two designs reading the same keys at
//! different speeds often differ only there (one's data was in memory, the other's partly on
//! the disk), so each benchmark reports it beside its latencies.
//!
//! `read_bytes` counts every thread of the process (a compaction's reads too) and only reads
//! that reached a block device: page-cache hits and files in tmpfs (emulated PM) are not in it.

/// Bytes read from storage devices by this process so far; `None` off Linux or where the
/// kernel does not account I/O per process.
pub fn process_read_bytes() -> Option<u64> {
    let io = std::fs::read_to_string("/proc/self/io").ok()?;
    read_bytes_of(&io)
}

/// The `read_bytes:` field of a /proc/PID/io text.
fn read_bytes_of(io: &str) -> Option<u64> {
    io.lines()
        .find_map(|l| l.strip_prefix("read_bytes:"))
        .and_then(|v| v.trim().parse().ok())
}

/// Counts the device reads of one benchmark.
pub struct DeviceReadsSince(Option<u64>);

impl DeviceReadsSince {
    /// Starts counting now.
    pub fn now() -> Self {
        DeviceReadsSince(process_read_bytes())
    }

    /// Bytes read from devices since [`DeviceReadsSince::now`]; `None` where not accounted.
    pub fn bytes(&self) -> Option<u64> {
        let (before, now) = (self.0?, process_read_bytes()?);
        Some(now.saturating_sub(before))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_read_bytes_field_is_found_among_the_others() {
        let io = "rchar: 100\nwchar: 5\nread_bytes: 4096\nwrite_bytes: 0\n";
        assert_eq!(read_bytes_of(io), Some(4096));
        assert_eq!(read_bytes_of("rchar: 1\n"), None);
    }

    #[test]
    fn a_count_since_now_never_goes_below_zero() {
        let since = DeviceReadsSince::now();
        if let Some(b) = since.bytes() {
            assert!(b < u64::MAX / 2);
        }
    }
}
