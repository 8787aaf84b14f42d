//! The caches' freshness rule: a view read into memory stays true while the cache's own paths
//! keep their stat keys and nothing changed in its documents: a watch begun before the read saw
//! no event, or (where no watch can follow writes) every document file keeps its stat key.

use crate::caches::pool::io_pool;
use crate::tree::watch::{Drained, Interest, Watch};
use rayon::prelude::*;
use std::ops::ControlFlow;
use std::path::PathBuf;

/// A file is unchanged while its stat key holds (the one key of tree/os.rs).
pub use crate::tree::os::Key as StatKey;

/// A path with the stat key it had when it was read.
pub type Keyed = (PathBuf, StatKey);

/// Whether every path still has its stat key (checked in parallel on the I/O threads).
pub fn unchanged(keys: &[Keyed]) -> bool {
    io_pool().install(|| keys.par_iter().all(|(p, k)| StatKey::lstat(p) == Some(*k)))
}

/// Watches a cache's directories (tree/watch.rs) from before the cache is read, so a
/// view learns of any later change to its files without stat-ing each of them.
pub struct Watcher {
    watch: Watch,
    changed: std::sync::Mutex<bool>,
}

impl Watcher {
    /// None where watching is impossible (writes are followed only by inotify, and its
    /// limits may be reached); the caller then stats each file.
    pub fn new(dirs: &[PathBuf]) -> Option<Watcher> {
        let watch = Watch::new(dirs.first()?).ok()?;
        for dir in dirs {
            watch.add(dir, Interest::Writes).ok()?;
        }
        Some(Watcher {
            watch,
            changed: std::sync::Mutex::new(false),
        })
    }

    /// Whether any event (or a lost one) arrived since the watch began.
    pub fn changed(&self) -> bool {
        let mut changed = self.changed.lock().unwrap();
        if !*changed {
            *changed = self.watch.drain(|_| ControlFlow::Break(())) != Drained::Empty;
        }
        *changed
    }
}

/// What a view was read from, and how to tell that none of it changed since.
pub struct Freshness {
    /// The cache's own directories and files, with their stat keys from before the read.
    meta: Vec<Keyed>,
    /// Each document file, with the stat key it had when opened.
    docs: Vec<Keyed>,
    watcher: Option<Watcher>,
}

impl Freshness {
    pub fn new(meta: Vec<Keyed>, docs: Vec<Keyed>, watcher: Option<Watcher>) -> Freshness {
        Freshness {
            meta,
            docs,
            watcher,
        }
    }

    /// A view of documents held in memory only: no file to change.
    pub fn of_nothing() -> Freshness {
        Freshness::new(Vec::new(), Vec::new(), None)
    }

    /// Whether no file the view was read from has changed: the cache's own paths keep
    /// their stat keys, and the watch saw nothing (without a watch: every document
    /// file keeps its stat key).
    pub fn fresh(&self) -> bool {
        self.meta.iter().all(|(p, k)| StatKey::lstat(p) == Some(*k))
            && match &self.watcher {
                Some(w) => !w.changed(),
                None => unchanged(&self.docs),
            }
    }

    /// Whether a watch follows the documents (else `fresh` stats each of them).
    pub fn watching(&self) -> bool {
        self.watcher.is_some()
    }

    /// The newest ctime (ns) among the files read.
    pub fn newest_change_ns(&self) -> i64 {
        self.meta
            .iter()
            .chain(&self.docs)
            .map(|(_, k)| k.ctime)
            .max()
            .unwrap_or(i64::MIN)
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use crate::testing::TempTree;
    use std::fs;

    #[test]
    fn a_watch_sees_writes_in_its_directories_only() {
        let dir = TempTree::with(
            "cache-watch",
            &[("documents/a.json", "x"), ("elsewhere", "x")],
        );
        let w = Watcher::new(&[dir.join("documents")]).unwrap();
        let _ = fs::read(dir.join("documents/a.json")).unwrap(); // reading is not a change
        fs::write(dir.join("elsewhere"), "y").unwrap();
        assert!(!w.changed());
        fs::write(dir.join("documents/a.json"), "y").unwrap();
        assert!(w.changed() && w.changed()); // and it stays changed
    }
}
