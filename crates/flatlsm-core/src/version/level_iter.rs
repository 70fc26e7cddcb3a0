//! Concatenates the SSTables of one sorted, non-overlapping level into one cursor, opening
//! each table only when the cursor reaches it (moving forward or backward).

use super::FileMeta;
use crate::error::{Error, Result};
use crate::iter::{copy_error, InternalIterator};
use crate::sst::{TableCache, TableIterator};
use crate::types::compare_internal_keys;
use std::cmp::Ordering;
use std::sync::Arc;

/// Cursor over a sorted run of files.
pub struct LevelIterator {
    files: Vec<Arc<FileMeta>>,
    cache: Arc<TableCache>,
    index: usize,
    current: Option<TableIterator>,
    error: Option<Error>,
}

impl LevelIterator {
    /// `files` must be sorted by key and non-overlapping.
    pub fn new(files: Vec<Arc<FileMeta>>, cache: Arc<TableCache>) -> Self {
        let index = files.len();
        LevelIterator {
            files,
            cache,
            index,
            current: None,
            error: None,
        }
    }

    fn open(&mut self, index: usize) -> bool {
        self.index = index;
        self.current = None;
        let Some(f) = self.files.get(index) else {
            return false;
        };
        match self.cache.get(f.number, f.file_size, f.dir) {
            Ok(t) => {
                self.current = Some(t.iter());
                true
            }
            Err(e) => {
                self.error = Some(e);
                self.index = self.files.len();
                false
            }
        }
    }

    /// Moves forward over exhausted files until a valid entry or the end.
    fn skip_exhausted(&mut self) {
        while self.current.as_ref().is_some_and(|c| !c.valid()) {
            if let Some(Err(e)) = self.current.as_ref().map(|c| c.status()) {
                self.error = Some(e);
                self.current = None;
                return;
            }
            if !self.open(self.index + 1) {
                return;
            }
            if let Some(c) = self.current.as_mut() {
                c.seek_to_first();
            }
        }
    }

    /// Moves backward over exhausted files until a valid entry or the start.
    fn skip_exhausted_backward(&mut self) {
        while self.current.as_ref().is_some_and(|c| !c.valid()) {
            if let Some(Err(e)) = self.current.as_ref().map(|c| c.status()) {
                self.error = Some(e);
                self.current = None;
                return;
            }
            let Some(before) = self.index.checked_sub(1) else {
                self.current = None;
                return;
            };
            if !self.open(before) {
                return;
            }
            if let Some(c) = self.current.as_mut() {
                c.seek_to_last();
            }
        }
    }
}

impl InternalIterator for LevelIterator {
    fn valid(&self) -> bool {
        self.current.as_ref().is_some_and(|c| c.valid())
    }
    fn seek_to_first(&mut self) {
        if self.open(0) {
            if let Some(c) = self.current.as_mut() {
                c.seek_to_first();
            }
        }
        self.skip_exhausted();
    }
    fn seek(&mut self, target: &[u8]) {
        let i = self
            .files
            .partition_point(|f| compare_internal_keys(&f.largest, target) == Ordering::Less);
        if self.open(i) {
            if let Some(c) = self.current.as_mut() {
                c.seek(target);
            }
        }
        self.skip_exhausted();
    }
    fn next(&mut self) {
        if let Some(c) = self.current.as_mut() {
            c.next();
        }
        self.skip_exhausted();
    }
    fn seek_to_last(&mut self) {
        let Some(last) = self.files.len().checked_sub(1) else {
            self.current = None;
            return;
        };
        if self.open(last) {
            if let Some(c) = self.current.as_mut() {
                c.seek_to_last();
            }
        }
        self.skip_exhausted_backward();
    }
    fn prev(&mut self) {
        if let Some(c) = self.current.as_mut() {
            c.prev();
        }
        self.skip_exhausted_backward();
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        // The last file whose smallest key is <= target holds the answer, or the answer is
        // the last entry of an earlier file (reached by skipping backward).
        let after = self
            .files
            .partition_point(|f| compare_internal_keys(&f.smallest, target) != Ordering::Greater);
        let Some(i) = after.checked_sub(1) else {
            self.current = None;
            return;
        };
        if self.open(i) {
            if let Some(c) = self.current.as_mut() {
                c.seek_for_prev(target);
            }
        }
        self.skip_exhausted_backward();
    }
    fn key(&self) -> &[u8] {
        self.current.as_ref().expect("valid").key()
    }
    fn value(&self) -> &[u8] {
        self.current.as_ref().expect("valid").value()
    }
    fn status(&self) -> Result<()> {
        if let Some(e) = &self.error {
            return Err(copy_error(e));
        }
        match &self.current {
            Some(c) => c.status(),
            None => Ok(()),
        }
    }
}
