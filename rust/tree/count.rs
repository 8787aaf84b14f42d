//! A walk's running count of the files it has listed, for a reader beside it that may go on
//! only once the tree is known to be large enough: the saved task index, whose size is capped
//! by the tree's (tasks/store.rs `saved_cap`), is read while the walk runs rather than after.

use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

#[derive(Default)]
pub struct FileCount {
    state: Mutex<State>,
    moved: Condvar,
}

#[derive(Default)]
struct State {
    files: u64,
    /// The count a reader waits for (none waits while it is 0).
    wanted: u64,
    /// The walk is over: `files` is its count, or None when it failed.
    end: Option<Option<u64>>,
}

impl FileCount {
    /// `n` more files listed.
    pub fn add(&self, n: u64) {
        let mut s = self.lock();
        s.files += n;
        if s.wanted > 0 && s.files >= s.wanted {
            self.moved.notify_all();
        }
    }

    /// The walk is over, and found `files` files (None: it failed). Its caller says so, not
    /// the walk: a table read once already (`read_once`) is counted by no walk, and a reader
    /// must never wait on a walk that ended without a word.
    pub fn close(&self, files: Option<u64>) {
        self.lock().end = Some(files);
        self.moved.notify_all();
    }

    /// Waits until at least `wanted` files are counted, or the walk is over; whether the tree
    /// has them (a walk that failed has none).
    pub fn reaches(&self, wanted: u64) -> bool {
        let mut s = self.lock();
        s.wanted = wanted; // (0 never waits: no add need wake it)
        loop {
            match s.end {
                Some(total) => return total.is_some_and(|n| n >= wanted),
                None if s.files >= wanted => return true,
                None => s = self.moved.wait(s).unwrap_or_else(PoisonError::into_inner),
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::thread;

    #[test]
    fn a_reader_goes_on_once_the_count_reaches_what_it_waits_for() {
        let count = Arc::new(FileCount::default());
        let reader = {
            let count = count.clone();
            thread::spawn(move || count.reaches(250))
        };
        for _ in 0..100 {
            count.add(3);
        }
        assert!(reader.join().unwrap());
        assert!(count.reaches(300));
    }

    #[test]
    fn the_walks_end_answers_a_reader_by_its_total_or_its_failure() {
        for (total, wanted, reached) in [
            (Some(10), 10, true),
            (Some(9), 10, false),
            (None, 10, false),
        ] {
            let count = Arc::new(FileCount::default());
            let reader = {
                let count = count.clone();
                thread::spawn(move || count.reaches(wanted))
            };
            count.add(5);
            count.close(total);
            assert_eq!(reader.join().unwrap(), reached, "{total:?} {wanted}");
        }
    }

    #[test]
    fn a_count_closed_before_the_reader_asks_answers_at_once() {
        let count = FileCount::default();
        count.close(Some(7));
        assert!(count.reaches(7) && !count.reaches(8));
    }
}
