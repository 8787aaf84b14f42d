//! The temporary trees of the unit tests: one directory of its own per tree, removed with
//! everything in it when the tree is dropped (a failing test leaves nothing behind either).

use std::fs;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

pub struct TempTree {
    path: PathBuf,
}

impl TempTree {
    /// An empty directory named after `name`, this process and a sequence number, so tests
    /// running in parallel (and test binaries running at once) never share one.
    pub fn new(name: &str) -> TempTree {
        static SEQ: AtomicUsize = AtomicUsize::new(0);
        let seq = SEQ.fetch_add(1, Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("repoctx-{name}-{}-{seq}", std::process::id()));
        let _ = fs::remove_dir_all(&path);
        fs::create_dir_all(&path).unwrap();
        TempTree { path }
    }

    /// A tree holding each (path, text), with the directories above them.
    pub fn with(name: &str, files: &[(&str, &str)]) -> TempTree {
        let tree = TempTree::new(name);
        for (rel, text) in files {
            tree.write(rel, text);
        }
        tree
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Write `data` at `rel`, making the directories above it; returns its path.
    pub fn write(&self, rel: impl AsRef<Path>, data: impl AsRef<[u8]>) -> PathBuf {
        let path = self.path.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, data).unwrap();
        path
    }

    /// Make a FIFO at `rel`; returns its path.
    #[cfg(unix)]
    pub fn fifo(&self, rel: impl AsRef<Path>) -> PathBuf {
        let path = self.path.join(rel);
        crate::tree::os::make_fifo(&path);
        path
    }

    /// Make the directory `rel` and those above it; returns its path.
    pub fn mkdir(&self, rel: impl AsRef<Path>) -> PathBuf {
        let path = self.path.join(rel);
        fs::create_dir_all(&path).unwrap();
        path
    }
}

/// A tree is its path: `tree.join("a")`, `&tree` where a `&Path` is wanted.
impl Deref for TempTree {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempTree {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
    }
}

/// Numbers below `n` from a seeded linear congruential generator, for the tests that walk a
/// table through random steps: the same seed gives the same steps.
pub fn numbers(mut seed: u64) -> impl FnMut(u64) -> u64 {
    move |n| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) % n
    }
}

/// Whether tables made one after another hash the same key apart (`hash`: a fresh table's hash
/// of it): seeded, not fixed, so a repository cannot choose keys that collide in every process.
pub fn seeded(hash: impl Fn() -> u64) -> bool {
    let hashes: std::collections::HashSet<u64> = (0..8).map(|_| hash()).collect();
    hashes.len() > 1
}
