//! Cursors over a persistent skiplist in internal-key order: [`PmSkiplistCursor`] borrows the
//! list (flushes), [`PmSkiplistIter`] owns a handle to it (database iterators). Keys and values
//! are borrowed from the region, never copied.

use super::node::Node;
use super::{PmSkiplist, HEAD, MAX_HEIGHT};
use crate::error::Result;
use crate::iter::InternalIterator;
use crate::types::compare_internal_keys;
use std::cmp::Ordering as KeyOrder;
use std::sync::Arc;

impl PmSkiplist {
    fn last_before(&self, bound: Option<&[u8]>) -> u64 {
        let mut x = HEAD;
        for level in (0..MAX_HEIGHT).rev() {
            loop {
                let next = Node::at(&**self.region(), x).next(level);
                let before = |n: u64| match bound {
                    None => true,
                    Some(b) => {
                        compare_internal_keys(Node::at(&**self.region(), n).key(), b)
                            == KeyOrder::Less
                    }
                };
                if next == 0 || !before(next) {
                    break;
                }
                x = next;
            }
        }
        if x == HEAD {
            0
        } else {
            x
        }
    }
}

/// A position in a list: a node offset, 0 = invalid.
struct Position(u64);

impl Position {
    fn seek_to_first(&mut self, l: &PmSkiplist) {
        self.0 = Node::at(&**l.region(), HEAD).next(0);
    }
    fn seek(&mut self, l: &PmSkiplist, target: &[u8]) {
        self.0 = l.seek_node(target);
    }
    fn next(&mut self, l: &PmSkiplist) {
        self.0 = Node::at(&**l.region(), self.0).next(0);
    }
    fn seek_to_last(&mut self, l: &PmSkiplist) {
        self.0 = l.last_before(None);
    }
    fn prev(&mut self, l: &PmSkiplist) {
        let key = Node::at(&**l.region(), self.0).key();
        self.0 = l.last_before(Some(key));
    }
}

/// A cursor borrowing the list.
pub struct PmSkiplistCursor<'a> {
    list: &'a PmSkiplist,
    pos: Position,
}

impl<'a> PmSkiplistCursor<'a> {
    /// An unpositioned cursor.
    pub fn new(list: &'a PmSkiplist) -> Self {
        PmSkiplistCursor {
            list,
            pos: Position(0),
        }
    }
}

/// A cursor owning a handle to the list.
pub struct PmSkiplistIter {
    list: Arc<PmSkiplist>,
    pos: Position,
}

impl PmSkiplistIter {
    /// An unpositioned iterator.
    pub fn new(list: Arc<PmSkiplist>) -> Self {
        PmSkiplistIter {
            list,
            pos: Position(0),
        }
    }
}

macro_rules! cursor_impl {
    ($t:ty, $list:ident) => {
        impl InternalIterator for $t {
            fn valid(&self) -> bool {
                self.pos.0 != 0
            }
            fn seek_to_first(&mut self) {
                self.pos.seek_to_first(&self.$list)
            }
            fn seek(&mut self, target: &[u8]) {
                self.pos.seek(&self.$list, target)
            }
            fn next(&mut self) {
                self.pos.next(&self.$list)
            }
            fn seek_to_last(&mut self) {
                self.pos.seek_to_last(&self.$list)
            }
            fn prev(&mut self) {
                self.pos.prev(&self.$list)
            }
            fn key(&self) -> &[u8] {
                Node::at(&**self.$list.region(), self.pos.0).key()
            }
            fn value(&self) -> &[u8] {
                Node::at(&**self.$list.region(), self.pos.0).value()
            }
            fn status(&self) -> Result<()> {
                Ok(())
            }
        }
    };
}

cursor_impl!(PmSkiplistCursor<'_>, list);
cursor_impl!(PmSkiplistIter, list);
