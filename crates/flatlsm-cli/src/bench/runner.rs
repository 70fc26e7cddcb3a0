//! Runs one benchmark's operations on `--threads` worker threads while a monitor thread samples
//! throughput per interval and drives the progress display.
//!
//! Each worker keeps its own latency histograms (no sharing on the hot path except one relaxed
//! counter the monitor reads); they are merged when the workers finish.

use super::cpu;
use super::histogram::Latencies;
use super::intervals::Interval;
use super::keys::ValueSource;
use super::progress::Progress;
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Kinds of operations with separate histograms ("Microseconds per read:").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum OpKind {
    /// Point read.
    Read,
    /// Insert or update.
    Write,
    /// Seek plus nexts, or one step of a scan.
    Seek,
    /// Read-modify-write.
    ReadModifyWrite,
}

impl OpKind {
    /// The word db_bench prints after "Microseconds per".
    pub fn label(self) -> &'static str {
        match self {
            OpKind::Read => "read",
            OpKind::Write => "write",
            OpKind::Seek => "seek",
            OpKind::ReadModifyWrite => "rmw",
        }
    }
}

/// How long the workers run.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Operations each thread performs (ignored when `duration` is set).
    pub ops_per_thread: u64,
    /// Run for this long instead of counting operations.
    pub duration: Option<Duration>,
    /// Worker threads.
    pub threads: usize,
    /// Interval length for throughput samples.
    pub interval: Duration,
    /// Base seed; thread i uses seed + i.
    pub seed: u64,
    /// Value size of the thread's value source.
    pub value_size: usize,
    /// Operations per second across all threads, when the request rate is fixed (YCSB's
    /// target throughput): each worker waits for its next slot before an operation.
    pub rate_limit: Option<f64>,
}

/// Per-worker state handed to a benchmark body.
pub struct ThreadCtx<'a> {
    /// Worker index.
    pub thread: usize,
    /// The worker's random numbers.
    pub rng: StdRng,
    /// Values to write.
    pub values: ValueSource,
    /// Scratch buffer for keys.
    pub key: Vec<u8>,
    /// Bytes read or written (for MB/s).
    pub bytes: u64,
    /// Reads that found their key.
    pub found: u64,
    /// Operations done by this worker.
    pub ops: u64,
    hists: BTreeMap<OpKind, Latencies>,
    counter: &'a AtomicU64,
    plan: Plan,
    deadline: Option<Instant>,
    /// When the worker started (its rate-limit slots count from here).
    began: Instant,
}

impl ThreadCtx<'_> {
    /// True while the worker should start another operation; under a rate limit, returns
    /// once the next operation's slot has come.
    pub fn keep_going(&self) -> bool {
        let more = match self.deadline {
            Some(d) => Instant::now() < d,
            None => self.ops < self.plan.ops_per_thread,
        };
        if let (true, Some(rate)) = (more, self.plan.rate_limit) {
            let per_thread = rate / self.plan.threads.max(1) as f64;
            let slot = self.began + Duration::from_secs_f64(self.ops as f64 / per_thread);
            std::thread::sleep(slot.saturating_duration_since(Instant::now()));
        }
        more
    }

    /// Records an operation of `kind` that began at `start`.
    pub fn record(&mut self, kind: OpKind, start: Instant) {
        self.record_batch(kind, start, 1);
    }

    /// Records `n` operations done together since `start`, each taking an equal share.
    pub fn record_batch(&mut self, kind: OpKind, start: Instant, n: u64) {
        let ns = start.elapsed().as_nanos() as u64 / n.max(1);
        let hist = self.hists.entry(kind).or_default();
        (0..n).for_each(|_| hist.record_ns(ns));
        self.ops += n;
        self.counter.fetch_add(n, Ordering::Relaxed);
    }
}

/// What the workers of one benchmark measured.
#[derive(Clone, Default)]
pub struct Measured {
    /// Operations across threads.
    pub ops: u64,
    /// Bytes across threads.
    pub bytes: u64,
    /// Reads that found their key.
    pub found: u64,
    /// Wall time.
    pub wall_seconds: f64,
    /// Sum of the workers' busy times.
    pub thread_seconds: f64,
    /// Merged histograms per operation kind.
    pub hists: BTreeMap<OpKind, Latencies>,
    /// Throughput per interval.
    pub intervals: Vec<Interval>,
    /// CPU seconds (user + system) the whole process used while the workers ran, background
    /// threads included; db_bench: its process's. `None` where not measured.
    pub cpu_seconds: Option<f64>,
}

impl Measured {
    /// All operation kinds merged.
    pub fn all_latencies(&self) -> Latencies {
        let mut all = Latencies::default();
        for h in self.hists.values() {
            all.merge(h);
        }
        all
    }
}

/// A worker's result: its counters and histograms, and how long it ran.
type WorkerResult = (u64, u64, u64, f64, BTreeMap<OpKind, Latencies>);

/// Runs `body` on `plan.threads` workers; `name` labels the progress display.
pub fn run_workers<F>(name: &str, plan: Plan, body: F) -> Result<Measured, String>
where
    F: Fn(&mut ThreadCtx<'_>) -> Result<(), String> + Sync,
{
    let counter = AtomicU64::new(0);
    let finished: OnceLock<Instant> = OnceLock::new();
    let total = plan
        .duration
        .is_none()
        .then_some(plan.ops_per_thread * plan.threads as u64);
    // Value buffers are built before the clock starts: they are setup, not work.
    let mut sources: Vec<ValueSource> = (0..plan.threads)
        .map(|t| ValueSource::new(plan.value_size, plan.seed.wrapping_add(t as u64)))
        .collect();
    let cpu_start = cpu::process_cpu_seconds();
    let start = Instant::now();
    let deadline = plan.duration.map(|d| start + d);
    let (results, intervals, end, cpu_end) = std::thread::scope(|s| {
        let monitor = s.spawn(|| monitor(name, total, plan, &counter, &finished, start));
        let workers: Vec<_> = sources
            .drain(..)
            .enumerate()
            .map(|(t, values)| {
                let (body, counter) = (&body, &counter);
                s.spawn(move || run_one(t, values, plan, deadline, counter, body))
            })
            .collect();
        let results: Vec<Result<WorkerResult, String>> = workers
            .into_iter()
            .map(|w| {
                w.join()
                    .unwrap_or_else(|_| Err("a benchmark worker panicked".into()))
            })
            .collect();
        let cpu_end = cpu::process_cpu_seconds();
        let end = *finished.get_or_init(Instant::now);
        let intervals = monitor.join().unwrap_or_default();
        (results, intervals, end, cpu_end)
    });
    let wall_seconds = (end - start).as_secs_f64();
    let mut m = Measured {
        wall_seconds,
        intervals,
        cpu_seconds: cpu_start.zip(cpu_end).map(|(a, b)| b - a),
        ..Measured::default()
    };
    for r in results {
        let (ops, bytes, found, secs, hists) = r?;
        m.ops += ops;
        m.bytes += bytes;
        m.found += found;
        m.thread_seconds += secs;
        for (k, h) in hists {
            m.hists.entry(k).or_default().merge(&h);
        }
    }
    Ok(m)
}

fn run_one<F>(
    thread: usize,
    values: ValueSource,
    plan: Plan,
    deadline: Option<Instant>,
    counter: &AtomicU64,
    body: &F,
) -> Result<WorkerResult, String>
where
    F: Fn(&mut ThreadCtx<'_>) -> Result<(), String> + Sync,
{
    let seed = plan.seed.wrapping_add(thread as u64);
    let mut ctx = ThreadCtx {
        thread,
        rng: StdRng::seed_from_u64(seed),
        values,
        key: Vec::new(),
        bytes: 0,
        found: 0,
        ops: 0,
        hists: BTreeMap::new(),
        counter,
        plan,
        deadline,
        began: Instant::now(),
    };
    let start = Instant::now();
    body(&mut ctx)?;
    let secs = start.elapsed().as_secs_f64();
    Ok((ctx.ops, ctx.bytes, ctx.found, secs, ctx.hists))
}

/// How often the monitor wakes to refresh the progress display.
const TICK: Duration = Duration::from_millis(100);

/// Samples the operation counter at each interval boundary until the workers finish.
fn monitor(
    name: &str,
    total: Option<u64>,
    plan: Plan,
    counter: &AtomicU64,
    finished: &OnceLock<Instant>,
    start: Instant,
) -> Vec<Interval> {
    let mut progress = Progress::new(name, total);
    let mut intervals = Vec::new();
    let mut last_ops = 0u64;
    let mut last_t = 0.0f64;
    let mut next_boundary = start + plan.interval;
    while finished.get().is_none() {
        let now = Instant::now();
        if now >= next_boundary {
            let done = counter.load(Ordering::Relaxed);
            let t = (next_boundary - start).as_secs_f64();
            intervals.push(Interval::new(t, t - last_t, done - last_ops));
            (last_ops, last_t) = (done, t);
            next_boundary += plan.interval;
        }
        progress.update(counter.load(Ordering::Relaxed), start.elapsed());
        let wake = (now + TICK).min(next_boundary);
        std::thread::sleep(wake.saturating_duration_since(Instant::now()));
    }
    // The last, partial interval counts only if it covers at least half an interval; a
    // shorter one would show a spurious dip in the timeline.
    let end = finished.get().copied().unwrap_or_else(Instant::now);
    let t = (end - start).as_secs_f64();
    let done = counter.load(Ordering::Relaxed);
    if t - last_t >= plan.interval.as_secs_f64() / 2.0 {
        intervals.push(Interval::new(t, t - last_t, done - last_ops));
    }
    progress.finish(done, end - start);
    intervals
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Under a fixed request rate the workers wait for their slots: 200 operations at 2,000
    /// per second across two threads cannot finish in less than a tenth of a second (less
    /// one slot per thread, the first being due at once).
    #[test]
    fn a_rate_limit_spaces_the_operations() {
        let plan = Plan {
            ops_per_thread: 100,
            duration: None,
            threads: 2,
            interval: Duration::from_secs(1),
            seed: 1,
            value_size: 8,
            rate_limit: Some(2000.0),
        };
        let m = run_workers("limited", plan, |ctx| {
            while ctx.keep_going() {
                ctx.record(OpKind::Write, Instant::now());
            }
            Ok(())
        })
        .unwrap();
        assert_eq!(m.ops, 200);
        assert!(m.wall_seconds >= 0.099 - 1.0 / 1000.0, "{}", m.wall_seconds);
    }
}
