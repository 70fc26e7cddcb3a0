//! Flush jobs in flight: which immutable write buffers each has claimed, and the order in which
//! they install.
//!
//! A design may run two flush threads (SLM-DB: one writes a flush's SST while the other puts
//! the previous flush's keys into the B+-tree and installs it). Invariants: a job claims every
//! immutable buffer no other job has claimed, or the oldest of them up to the design's batch
//! limit (`Design::flush_batch_limit`), so claims follow the buffers' age; jobs install
//! (index, manifest edit, version swap) strictly in claim order — a ticket each, served one
//! after the other — so an older flush never lands after a newer one, in the index or in the
//! manifest.
//!
//! A claim dropped without installing (its job failed, panicked or gave up at shutdown) refuses
//! the queue: the refusal is recorded under the queue's lock before the next ticket is served,
//! and every later turn — of a job already waiting and of any job claiming afterwards — is
//! refused with it, so no newer flush ever installs in place of an older one. A refusal is
//! permanent: a failure is the background error, which lasts until the database is reopened
//! (recovery then flushes the tables in order from their PM Logs or WALs), and a shutdown
//! never ends. Locking: the queue's lock is a leaf lock (`state.rs`).

use super::waits::StopWaiting;
use crate::buffer::BufferRef;
use crate::error::Error;
use parking_lot::{Condvar, Mutex};
use std::collections::HashSet;
use std::sync::Arc;

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
    /// Why every job's turn is refused from now on (module documentation).
    refused: Option<StopWaiting>,
    /// Live [`Hold`]s: while any lives, nothing is claimed.
    holds: usize,
}

/// The flush jobs in flight (see the module documentation).
#[derive(Default)]
pub(crate) struct FlushQueue {
    state: Mutex<QueueState>,
    cv: Condvar,
}

/// Drops the newest of `tables` (newest first) beyond `limit`.
fn keep_oldest<T>(tables: &mut Vec<T>, limit: Option<usize>) {
    if let Some(extra) = limit.and_then(|l| tables.len().checked_sub(l)) {
        tables.drain(..extra);
    }
}

/// One job's claim on its buffers and its place in the install order.
pub(crate) struct Claim<'q> {
    queue: &'q FlushQueue,
    ticket: u64,
    numbers: Vec<u64>,
    /// Older jobs were in flight when this one claimed its buffers.
    pub behind_others: bool,
    /// What dropping the claim records: `None` once the job installed; until the job says
    /// otherwise ([`Claim::end`]), a failure, so a job that ends by an early return or a
    /// panic refuses the queue too.
    refusal: Option<StopWaiting>,
}

impl FlushQueue {
    /// Claims the buffers of `imms` (newest first) no job has claimed, at most the oldest
    /// `limit` of them if a limit is given; `None` if there are none.
    pub fn claim<T: Numbered>(
        &self,
        imms: impl Fn() -> Vec<T>,
        limit: Option<usize>,
    ) -> Option<(Claim<'_>, Vec<T>)> {
        let mut s = self.state.lock();
        if s.holds > 0 {
            return None;
        }
        let mut tables = imms();
        tables.retain(|t| !s.claimed.contains(&t.number()));
        keep_oldest(&mut tables, limit);
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
            refusal: Some(ended_without_installing(ticket)),
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

    /// Stops new claims, then waits until no job is in flight: until the [`Hold`] drops, no
    /// flush changes the tree or a design's store (a checkpoint copies them meanwhile). Waiting
    /// for idle alone is not enough: a flush thread woken for a buffer sealed just before may
    /// claim it right after the wait returned. The holder wakes the flush threads afterwards.
    pub fn hold(&self) -> Hold<'_> {
        self.state.lock().holds += 1; // no claim succeeds from here on
        self.wait_idle();
        Hold { queue: self }
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
    /// Waits until every older job has installed: this one may install now. `Err` if the
    /// queue was refused (a job failed, panicked or gave up at shutdown): this job must not
    /// install.
    pub fn wait_turn(&self) -> Result<(), StopWaiting> {
        let mut s = self.queue.state.lock();
        loop {
            if let Some(why) = &s.refused {
                return Err(why.clone());
            }
            if s.serving == self.ticket {
                return Ok(());
            }
            self.queue.cv.wait(&mut s);
        }
    }

    /// Records how the job ended, for when the claim is dropped: `None` if it installed, else
    /// why every later job is refused.
    pub fn end(&mut self, refusal: Option<StopWaiting>) {
        self.refusal = refusal;
    }
}

/// The refusal of a claim dropped before its job said how it ended.
fn ended_without_installing(ticket: u64) -> StopWaiting {
    let how = match std::thread::panicking() {
        true => "panicked",
        false => "ended",
    };
    let e = format!(
        "flush job {ticket} {how} without installing; later flushes must not install before it"
    );
    StopWaiting::Failed(Arc::new(Error::InvalidState(e)))
}

/// Ends the job: after its turn (or at once when the queue is refused: nothing installs any
/// more, so the order no longer matters), its refusal is recorded, then the next ticket is
/// served and its buffers are unclaimed (installed, or left for recovery after a refusal).
impl Drop for Claim<'_> {
    fn drop(&mut self) {
        let mut s = self.queue.state.lock();
        while s.refused.is_none() && s.serving != self.ticket {
            self.queue.cv.wait(&mut s);
        }
        if let Some(why) = self.refusal.take() {
            // A job that panicked after saying how it ended did not end that way.
            let panicked = std::thread::panicking().then(|| ended_without_installing(self.ticket));
            s.refused.get_or_insert(panicked.unwrap_or(why));
        }
        s.pass_turn(self.ticket, &self.numbers);
        self.queue.cv.notify_all();
    }
}

/// New claims stopped, no job in flight: made by [`FlushQueue::hold`].
pub(crate) struct Hold<'q> {
    queue: &'q FlushQueue,
}

impl Drop for Hold<'_> {
    fn drop(&mut self) {
        self.queue.state.lock().holds -= 1;
        self.queue.cv.notify_all();
    }
}

impl QueueState {
    /// Serves the ticket after `ticket` if it was being served, and unclaims `numbers`.
    fn pass_turn(&mut self, ticket: u64, numbers: &[u64]) {
        if self.serving == ticket {
            self.serving += 1;
        }
        for n in numbers {
            self.claimed.remove(n);
        }
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

    /// With a batch limit a job takes the oldest unclaimed buffers and leaves the newer ones
    /// to the next job, which installs after it.
    #[test]
    fn a_limited_claim_takes_the_oldest_buffers_and_leaves_the_newest_to_the_next_job() {
        let queue = FlushQueue::default();
        let imms = || vec![5u64, 4, 3, 2];
        let (mut first, tables) = queue.claim(imms, Some(2)).unwrap();
        assert_eq!((tables, first.behind_others), (vec![3, 2], false));
        let (mut second, tables) = queue.claim(imms, Some(2)).unwrap();
        assert_eq!((tables, second.behind_others), (vec![5, 4], true));
        assert!(queue.claim(imms, Some(2)).is_none());
        // Both install, in claim order (a claim's drop waits for its turn).
        first.end(None);
        drop(first);
        second.end(None);
        drop(second);
    }

    /// A second job claims only the buffers the first left, knows it is behind, and installs
    /// after the first even when it is ready first.
    #[test]
    fn jobs_claim_unclaimed_buffers_and_install_in_claim_order() {
        let queue = Arc::new(FlushQueue::default());
        let (mut first, tables) = queue.claim(|| vec![1u64], None).unwrap();
        assert_eq!((tables, first.behind_others), (vec![1], false));
        assert_eq!(queue.unclaimed(&[1u64, 2]), 1);
        let order = Arc::new(Mutex::new(Vec::new()));
        let second = {
            let (queue, order) = (queue.clone(), order.clone());
            std::thread::spawn(move || {
                let (mut claim, tables) = queue.claim(|| vec![2u64, 1], None).unwrap();
                assert_eq!((tables, claim.behind_others), (vec![2], true));
                claim.wait_turn().unwrap();
                order.lock().push(2);
                claim.end(None);
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(50));
        order.lock().push(1);
        first.end(None);
        drop(first);
        second.join().unwrap();
        assert_eq!(*order.lock(), vec![1, 2]);
        queue.wait_idle();
        assert!(queue.claim(Vec::<u64>::new, None).is_none());
    }

    /// A job that failed refuses the turn of the job waiting behind it and of every job that
    /// claims later, with its own failure; its buffers are unclaimed.
    #[test]
    fn a_failed_claim_refuses_every_later_turn() {
        let queue = FlushQueue::default();
        let (mut first, _) = queue.claim(|| vec![1u64], None).unwrap();
        let (second, _) = queue.claim(|| vec![1u64, 2], None).unwrap();
        let disk = Error::InvalidState("disk gone".into());
        first.end(Some(StopWaiting::failed(&disk)));
        drop(first);
        let refused = second.wait_turn().unwrap_err().into_error();
        assert!(refused.to_string().contains("disk gone"), "{refused}");
        drop(second);
        assert_eq!(queue.unclaimed(&[1u64, 2]), 2);
        let (third, _) = queue.claim(|| vec![3u64], None).unwrap();
        assert!(matches!(third.wait_turn(), Err(StopWaiting::Failed(_))));
    }

    /// Regression (a checkpoint's copy of SLM-DB's B+-tree was torn, CI at c9b4af3): while a
    /// hold lives nothing is claimed, even with buffers waiting; the hold waits for the job in
    /// flight; after it drops the buffers are claimed again.
    #[test]
    fn a_hold_waits_for_the_job_in_flight_and_stops_new_claims_until_dropped() {
        let queue = Arc::new(FlushQueue::default());
        let (mut first, _) = queue.claim(|| vec![1u64], None).unwrap();
        let holder = {
            let queue = queue.clone();
            std::thread::spawn(move || {
                let hold = queue.hold();
                let claimed = queue.claim(|| vec![2u64], None).is_some();
                drop(hold);
                claimed
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(!holder.is_finished(), "the hold did not wait for job 1");
        first.end(None);
        drop(first);
        assert!(!holder.join().unwrap(), "a buffer was claimed under a hold");
        assert!(queue.claim(|| vec![2u64], None).is_some());
    }

    /// A claim dropped before its job said how it ended (an early return, a panic) refuses
    /// the queue as a failure.
    #[test]
    fn a_claim_dropped_without_an_outcome_refuses_the_queue() {
        let queue = FlushQueue::default();
        let (first, _) = queue.claim(|| vec![1u64], None).unwrap();
        let (second, _) = queue.claim(|| vec![1u64, 2], None).unwrap();
        drop(first);
        let refused = second.wait_turn().unwrap_err().into_error();
        assert!(
            refused.to_string().contains("without installing"),
            "{refused}"
        );
    }
}
