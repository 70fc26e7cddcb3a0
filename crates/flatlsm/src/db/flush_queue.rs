//! Flush jobs in flight: which immutable write buffers each has claimed, and the order in which
//! they install.
//!
//! A design may run two flush threads (SLM-DB: one writes a flush's SST while the other puts
//! the previous flush's keys into the B+-tree and installs it). Invariants: a job claims every
//! immutable buffer no other job has claimed, so claims follow the buffers' age; jobs install
//! (index, manifest edit, version swap) strictly in claim order — a ticket each, served one
//! after the other — so an older flush never lands after a newer one, in the index or in the
//! manifest. A claim dropped without installing (a failed job) still takes its turn, so the
//! jobs after it are not left waiting.

use crate::buffer::BufferRef;
use parking_lot::{Condvar, Mutex};
use std::collections::HashSet;

/// A write buffer, known by its number.
pub(crate) trait Numbered {
    fn number(&self) -> u64;
}

impl Numbered for BufferRef {
    fn number(&self) -> u64 {
        crate::buffer::WriteBuffer::number(&**self)
    }
}

#[derive(Default)]
struct QueueState {
    claimed: HashSet<u64>,
    next_ticket: u64,
    serving: u64,
}

/// The flush jobs in flight (see the module documentation).
#[derive(Default)]
pub(crate) struct FlushQueue {
    state: Mutex<QueueState>,
    cv: Condvar,
}

/// One job's claim on its buffers and its place in the install order.
pub(crate) struct Claim<'q> {
    queue: &'q FlushQueue,
    ticket: u64,
    numbers: Vec<u64>,
    /// Older jobs were in flight when this one claimed its buffers.
    pub behind_others: bool,
}

impl FlushQueue {
    /// Claims the buffers of `imms` (newest first) no job has claimed; `None` if there are none.
    pub fn claim<T: Numbered>(&self, imms: impl Fn() -> Vec<T>) -> Option<(Claim<'_>, Vec<T>)> {
        let mut s = self.state.lock();
        let mut tables = imms();
        tables.retain(|t| !s.claimed.contains(&t.number()));
        if tables.is_empty() {
            return None;
        }
        let numbers: Vec<u64> = tables.iter().map(|t| t.number()).collect();
        s.claimed.extend(numbers.iter().copied());
        let ticket = s.next_ticket;
        s.next_ticket += 1;
        let claim = Claim {
            queue: self,
            ticket,
            numbers,
            behind_others: ticket != s.serving,
        };
        Some((claim, tables))
    }

    /// Unclaimed buffers among `imms`.
    pub fn unclaimed<T: Numbered>(&self, imms: &[T]) -> usize {
        let s = self.state.lock();
        imms.iter()
            .filter(|t| !s.claimed.contains(&t.number()))
            .count()
    }

    /// Waits until no job is in flight.
    pub fn wait_idle(&self) {
        let mut s = self.state.lock();
        while !s.claimed.is_empty() {
            self.cv.wait(&mut s);
        }
    }
}

impl Claim<'_> {
    /// Waits until every older job has installed (or given up): this one may install now.
    pub fn wait_turn(&self) {
        let mut s = self.queue.state.lock();
        while s.serving != self.ticket {
            self.queue.cv.wait(&mut s);
        }
    }
}

/// Ends the job: after its turn, the next ticket is served and its buffers are unclaimed
/// (installed, or left for a later job after a failure).
impl Drop for Claim<'_> {
    fn drop(&mut self) {
        self.wait_turn();
        let mut s = self.queue.state.lock();
        s.serving += 1;
        for n in &self.numbers {
            s.claimed.remove(n);
        }
        self.queue.cv.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    impl Numbered for u64 {
        fn number(&self) -> u64 {
            *self
        }
    }

    /// A second job claims only the buffers the first left, knows it is behind, and installs
    /// after the first even when it is ready first.
    #[test]
    fn jobs_claim_unclaimed_buffers_and_install_in_claim_order() {
        let queue = Arc::new(FlushQueue::default());
        let (first, tables) = queue.claim(|| vec![1u64]).unwrap();
        assert_eq!((tables, first.behind_others), (vec![1], false));
        assert_eq!(queue.unclaimed(&[1u64, 2]), 1);
        let order = Arc::new(Mutex::new(Vec::new()));
        let second = {
            let (queue, order) = (queue.clone(), order.clone());
            std::thread::spawn(move || {
                let (claim, tables) = queue.claim(|| vec![2u64, 1]).unwrap();
                assert_eq!((tables, claim.behind_others), (vec![2], true));
                claim.wait_turn();
                order.lock().push(2);
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(50));
        order.lock().push(1);
        drop(first);
        second.join().unwrap();
        assert_eq!(*order.lock(), vec![1, 2]);
        queue.wait_idle();
        assert!(queue.claim(Vec::<u64>::new).is_none());
    }

    /// A claim dropped without installing (a failed job) passes its turn on.
    #[test]
    fn a_dropped_claim_passes_its_turn_on() {
        let queue = FlushQueue::default();
        let (first, _) = queue.claim(|| vec![1u64]).unwrap();
        let (second, _) = queue.claim(|| vec![1u64, 2]).unwrap();
        drop(first);
        second.wait_turn();
        drop(second);
        assert_eq!(queue.unclaimed(&[1u64, 2]), 2);
    }
}
