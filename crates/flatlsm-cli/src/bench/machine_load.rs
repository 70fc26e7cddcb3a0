//! How much CPU other processes took while a design ran: the machine may be shared (another
//! engineer compiling), and a row measured then is not comparable with one measured idle. The
//! comparison prints it per design and the paper report shows it beside each row.

use super::cpu::process_cpu_seconds;

/// Jiffies per second of /proc/stat (USER_HZ, 100 on Linux).
const USER_HZ: f64 = 100.0;

/// CPU seconds all processes have used since boot (user, nice, system, irq and softirq of
/// /proc/stat's first line; idle, iowait and steal left out). `None` off Linux.
fn machine_busy_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let fields = stat.lines().next()?.strip_prefix("cpu ")?;
    let v: Vec<u64> = fields
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    let busy = [0, 1, 2, 5, 6]
        .iter()
        .map(|&i| v.get(i).copied())
        .sum::<Option<u64>>()?;
    Some(busy as f64 / USER_HZ)
}

/// The machine's and this process's CPU when a run started.
pub struct OthersSince {
    machine: f64,
    own: f64,
}

impl OthersSince {
    /// Starts counting (`None` where /proc/stat or getrusage is unavailable).
    pub fn now() -> Option<OthersSince> {
        Some(OthersSince {
            machine: machine_busy_seconds()?,
            own: process_cpu_seconds()?,
        })
    }

    /// CPU seconds other processes used since [`OthersSince::now`] (never below 0: the two
    /// clocks tick at different granularities).
    pub fn seconds(&self) -> Option<f64> {
        let machine = machine_busy_seconds()? - self.machine;
        let own = process_cpu_seconds()? - self.own;
        Some((machine - own).max(0.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_processes_cpu_is_counted_from_proc_stat_and_never_negative() {
        let Some(since) = OthersSince::now() else {
            return; // not Linux
        };
        let spin = std::time::Instant::now();
        while spin.elapsed().as_millis() < 50 {}
        assert!(since.seconds().unwrap() >= 0.0);
    }
}
