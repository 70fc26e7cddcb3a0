//! `--memory_limit BYTES`: the benchmark runs inside a Linux memory cgroup of that size, so
//! every engine of the run gets the same, smaller memory, as on a machine with that much free
//! memory. The limit covers everything the process charges: its heap, the page cache of the
//! files it reads and writes, and the tmpfs pages it allocates (emulated PM, RocksDB's WAL
//! there), so the PM an engine uses comes out of the same budget (against FlatLSM, whose PM
//! Logs live there; RocksDB keeps only a WAL on PM).
//!
//! The process moves into a new child of its own memory cgroup (cgroup v1's `memory`
//! hierarchy, or cgroup v2) and back out when the run ends, and the child is removed. Needs
//! permission to create cgroups (root, or a delegated subtree); otherwise the run is refused
//! with the reason, never run unlimited.

use std::path::{Path, PathBuf};

/// The cgroup a run is confined to; leaving it (drop) moves the process back and removes it.
pub struct MemoryCgroup {
    dir: PathBuf,
    parent: PathBuf,
}

/// The two cgroup layouts: the file holding the limit differs.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Version {
    V1,
    V2,
}

impl MemoryCgroup {
    /// Moves this process into a new memory cgroup limited to `limit` bytes.
    pub fn enter(limit: u64) -> Result<MemoryCgroup, String> {
        let cgroup = std::fs::read_to_string("/proc/self/cgroup")
            .map_err(|e| format!("--memory_limit: reading /proc/self/cgroup: {e}"))?;
        let (version, parent) = own_memory_cgroup(&cgroup).ok_or(
            "--memory_limit: this system has no memory cgroup (neither cgroup v1's memory \
             hierarchy under /sys/fs/cgroup/memory nor cgroup v2)",
        )?;
        let dir = parent.join(format!("flatlsm-bench-{}", std::process::id()));
        let fail = |what: &str, path: &Path, e: std::io::Error| {
            format!(
                "--memory_limit: {what} {}: {e} (needs permission to create cgroups)",
                path.display()
            )
        };
        std::fs::create_dir(&dir).map_err(|e| fail("creating", &dir, e))?;
        let group = MemoryCgroup { dir, parent };
        let limit_file = group.dir.join(match version {
            Version::V1 => "memory.limit_in_bytes",
            Version::V2 => "memory.max",
        });
        std::fs::write(&limit_file, limit.to_string())
            .map_err(|e| fail("writing", &limit_file, e))?;
        let procs = group.dir.join("cgroup.procs");
        let pid = std::process::id().to_string();
        std::fs::write(&procs, &pid).map_err(|e| fail("joining", &procs, e))?;
        Ok(group)
    }

    /// The cgroup's directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }
}

impl Drop for MemoryCgroup {
    fn drop(&mut self) {
        let pid = std::process::id().to_string();
        let _ = std::fs::write(self.parent.join("cgroup.procs"), pid);
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// This process's memory cgroup directory, from `/proc/self/cgroup`'s text: cgroup v1's
/// `N:memory:/path` under /sys/fs/cgroup/memory, else cgroup v2's `0::/path` under
/// /sys/fs/cgroup when that is a cgroup v2 mount.
fn own_memory_cgroup(text: &str) -> Option<(Version, PathBuf)> {
    let v1_root = Path::new("/sys/fs/cgroup/memory");
    let v2_root = Path::new("/sys/fs/cgroup");
    let path_of = |line: &str| line.splitn(3, ':').nth(2).map(str::to_string);
    for line in text.lines() {
        let controllers = line.split(':').nth(1).unwrap_or_default();
        if controllers.split(',').any(|c| c == "memory") && v1_root.is_dir() {
            return Some((Version::V1, under(v1_root, &path_of(line)?)));
        }
    }
    let v2 = text.lines().find(|l| l.starts_with("0::"))?;
    let is_v2 = v2_root.join("cgroup.controllers").exists();
    is_v2.then(|| {
        (
            Version::V2,
            under(v2_root, &path_of(v2).unwrap_or_default()),
        )
    })
}

/// `root` joined with the cgroup path `/a/b` (relative).
fn under(root: &Path, cgroup_path: &str) -> PathBuf {
    root.join(cgroup_path.trim_start_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cgroup_path_lands_under_its_hierarchys_mount() {
        let root = Path::new("/sys/fs/cgroup/memory");
        assert_eq!(under(root, "/a/b"), root.join("a/b"));
        assert_eq!(under(root, "/"), root.to_path_buf());
    }

    /// Only the memory controller's line names the v1 cgroup (when that hierarchy is
    /// mounted here); a v2-only text needs a v2 mount.
    #[test]
    fn the_memory_controllers_line_is_the_one_read() {
        let text = "9:name=systemd:/\n4:memory:/jobs/x\n1:cpu:/other\n0::/\n";
        if Path::new("/sys/fs/cgroup/memory").is_dir() {
            let (v, dir) = own_memory_cgroup(text).unwrap();
            assert_eq!(
                (v, dir),
                (Version::V1, "/sys/fs/cgroup/memory/jobs/x".into())
            );
        }
        let v2_only = "0::/user.slice\n";
        let has_v2 = Path::new("/sys/fs/cgroup/cgroup.controllers").exists();
        assert_eq!(own_memory_cgroup(v2_only).is_some(), has_v2);
    }
}
