//! The live index: the walk table kept in memory and kept true by inotify.
//!
//! Each scanned (not ignored) directory gets a watch before it is read, so no
//! change slips between the read and the watch. Before answering, `refresh`
//! drains the events the kernel has queued — any change made before the
//! question is in that queue — and re-reads only the directories they name.
//! Changes to the tree's shape or its ignore rules, a queue overflow, or no
//! watching at all (other platforms, limits, `--no-watch`) mean a full rescan.

use crate::walk::{self, DirRow, Options};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

pub struct LiveIndex {
    root: PathBuf,
    opts: Options,
    rows: Vec<DirRow>,
    /// Row positions by scope; positions hold until the next rescan (refresh edits in place).
    positions: HashMap<String, usize>,
    /// The generation at which each row last changed, and that of the last rescan, so a caller
    /// holding an older table can take only the rows that moved since (`changes_since`).
    changed_at: Vec<u64>,
    rescanned_at: u64,
    skipped: usize,
    unreadable: Vec<walk::LeftOut>,
    /// Bumped whenever the table changes, so callers can reuse what they built from it.
    pub generation: u64,
    pub rescans: u64,
    watcher: Option<watch::Watcher>,
    want_watch: bool,
}

impl LiveIndex {
    pub fn new(root: &Path, opts: Options, want_watch: bool) -> std::io::Result<Self> {
        let mut index = LiveIndex {
            root: root.to_path_buf(),
            opts,
            rows: Vec::new(),
            positions: HashMap::new(),
            changed_at: Vec::new(),
            rescanned_at: 0,
            skipped: 0,
            unreadable: Vec::new(),
            generation: 0,
            rescans: 0,
            watcher: None,
            want_watch,
        };
        index.rescan()?;
        Ok(index)
    }

    pub fn watching(&self) -> bool {
        self.watcher.is_some()
    }

    pub fn table(&self) -> (&[DirRow], usize, &[walk::LeftOut]) {
        (&self.rows, self.skipped, &self.unreadable)
    }

    /// The rows that changed after generation `since`, with their positions in the table;
    /// None when a rescan came after it (positions moved: take the whole table).
    pub fn changes_since(&self, since: u64) -> Option<Vec<(usize, &DirRow)>> {
        if self.rescanned_at > since {
            return None;
        }
        let moved = self.changed_at.iter().enumerate().filter(|(_, &at)| at > since);
        Some(moved.map(|(i, _)| (i, &self.rows[i])).collect())
    }

    fn rescan(&mut self) -> std::io::Result<()> {
        self.watcher = None; // dropping the old instance drops all its watches
        let watcher = if self.want_watch { watch::Watcher::new(&self.root) } else { None };
        let hook = |abs: &Path, scope: &str| {
            if let Some(w) = &watcher {
                w.add(abs, scope);
            }
        };
        let table = walk::walk(&self.root, &self.opts, Some(&hook))?;
        self.watcher = watcher.filter(|w| !w.failed());
        self.rows = table.rows;
        self.positions = self.rows.iter().enumerate().map(|(i, r)| (r.scope.clone(), i)).collect();
        release_freed_memory();
        self.skipped = table.skipped;
        self.unreadable = table.unreadable;
        self.generation += 1;
        self.changed_at = vec![self.generation; self.rows.len()];
        self.rescanned_at = self.generation;
        self.rescans += 1;
        Ok(())
    }

    /// Bring the table up to date with the files as they are now.
    pub fn refresh(&mut self) -> std::io::Result<()> {
        let Some(watcher) = self.watcher.as_mut() else {
            return self.rescan();
        };
        let changes = watcher.drain();
        let dirty = match changes {
            watch::Changes::Rescan => return self.rescan(),
            watch::Changes::Dirs(d) => d,
        };
        if dirty.is_empty() {
            return Ok(());
        }
        let mut updates = Vec::new();
        for scope in &dirty {
            let Some(&i) = self.positions.get(scope.as_str()) else { continue };
            let abs = if scope == "." { self.root.clone() } else { self.root.join(scope) };
            match walk::read_row(&abs, scope) {
                Ok(row) => updates.push((i, row)),
                Err(_) => return self.rescan(),
            }
        }
        // The rules may change flags of rows nobody touched (a parent's eligibility).
        let flags: Vec<(bool, bool)> = self.rows.iter().map(|r| (r.included, r.eligible)).collect();
        let generation = self.generation + 1;
        // A re-read row counts as changed even when equal: an event (a chmod that makes a
        // context file readable again) asks for the answer to be made again.
        for (i, row) in updates {
            self.rows[i] = row;
            self.changed_at[i] = generation;
        }
        self.skipped = walk::apply_rules(&mut self.rows, self.opts.min_tokens);
        for (i, r) in self.rows.iter().enumerate() {
            if flags[i] != (r.included, r.eligible) {
                self.changed_at[i] = generation;
            }
        }
        self.generation = generation;
        Ok(())
    }
}

/// A walk leaves its scratch memory (per-directory ignore matchers, read buffers) free in
/// the heaps of the threads that ran it; glibc keeps such memory mapped until asked, and a
/// serving process would carry it for its whole life.
fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages to the kernel; it takes no pointers.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(target_os = "linux")]
mod watch {
    use super::*;
    use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};
    use rustix::io::Errno;
    use std::mem::MaybeUninit;
    use std::os::fd::OwnedFd;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Mutex;

    /// Marks the watch on `.git/info`, whose `exclude` file holds ignore rules.
    const GIT_INFO: &str = "\0git-info";

    pub enum Changes {
        Dirs(BTreeSet<String>),
        Rescan,
    }

    pub struct Watcher {
        fd: OwnedFd,
        scopes: Mutex<HashMap<i32, String>>,
        failed: AtomicBool,
    }

    fn flags() -> WatchFlags {
        WatchFlags::MODIFY
            | WatchFlags::ATTRIB
            | WatchFlags::CREATE
            | WatchFlags::DELETE
            | WatchFlags::MOVED_FROM
            | WatchFlags::MOVED_TO
            | WatchFlags::DELETE_SELF
            | WatchFlags::MOVE_SELF
            | WatchFlags::ONLYDIR
            | WatchFlags::DONT_FOLLOW
            | WatchFlags::EXCL_UNLINK
    }

    impl Watcher {
        pub fn new(root: &Path) -> Option<Watcher> {
            let fd = inotify::init(CreateFlags::NONBLOCK | CreateFlags::CLOEXEC).ok()?;
            let w = Watcher { fd, scopes: Mutex::new(HashMap::new()), failed: AtomicBool::new(false) };
            let info = root.join(".git").join("info");
            if info.is_dir() {
                w.add(&info, GIT_INFO);
            }
            Some(w)
        }

        /// Watch one directory; a failure (e.g. the watch limit) turns watching off.
        pub fn add(&self, abs: &Path, scope: &str) {
            match inotify::add_watch(&self.fd, abs, flags()) {
                Ok(wd) => {
                    self.scopes.lock().unwrap().insert(wd, scope.to_string());
                }
                Err(_) => self.failed.store(true, Ordering::Relaxed),
            }
        }

        pub fn failed(&self) -> bool {
            self.failed.load(Ordering::Relaxed)
        }

        /// Every event queued so far, as the directories to re-read (or a rescan).
        pub fn drain(&mut self) -> Changes {
            let scopes = self.scopes.lock().unwrap();
            let mut dirty = BTreeSet::new();
            let mut buf = [MaybeUninit::uninit(); 16384];
            let mut reader = inotify::Reader::new(&self.fd, &mut buf);
            loop {
                let event = match reader.next() {
                    Ok(e) => e,
                    Err(Errno::WOULDBLOCK) => break,
                    Err(Errno::INTR) => continue,
                    Err(_) => return Changes::Rescan,
                };
                let flags = event.events();
                if flags.intersects(ReadFlags::QUEUE_OVERFLOW | ReadFlags::IGNORED | ReadFlags::DELETE_SELF | ReadFlags::MOVE_SELF) {
                    return Changes::Rescan;
                }
                let Some(scope) = scopes.get(&event.wd()) else { continue };
                if scope == GIT_INFO {
                    return Changes::Rescan;
                }
                let name = event.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                if flags.contains(ReadFlags::ISDIR) {
                    // Directories change the tree's shape; their own mtimes never matter.
                    if flags.intersects(ReadFlags::CREATE | ReadFlags::DELETE | ReadFlags::MOVED_FROM | ReadFlags::MOVED_TO)
                        && !walk::is_skipped_dir(&name)
                    {
                        return Changes::Rescan;
                    }
                    continue;
                }
                if name == ".gitignore" || (scope == "." && name == ".contextignore") {
                    return Changes::Rescan;
                }
                dirty.insert(scope.clone());
            }
            Changes::Dirs(dirty)
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod watch {
    use super::*;

    pub enum Changes {
        Dirs(BTreeSet<String>),
        Rescan,
    }

    /// No watching here: every question rescans.
    pub struct Watcher;

    impl Watcher {
        pub fn new(_root: &Path) -> Option<Watcher> {
            None
        }
        pub fn add(&self, _abs: &Path, _scope: &str) {}
        pub fn failed(&self) -> bool {
            true
        }
        pub fn drain(&mut self) -> Changes {
            Changes::Rescan
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::fs;

    fn opts() -> Options {
        Options { extra_ignore: vec![], max_depth: 10, min_tokens: 0 }
    }

    #[test]
    fn a_touched_file_re_reads_only_its_directory() {
        let root = std::env::temp_dir().join(format!("repoctx-live-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        fs::create_dir_all(root.join("a")).unwrap();
        fs::create_dir_all(root.join("b")).unwrap();
        fs::write(root.join("a/x.py"), "x").unwrap();
        fs::write(root.join("b/y.py"), "y").unwrap();
        let mut index = LiveIndex::new(&root, opts(), true).unwrap();
        assert!(index.watching());
        let before: Vec<DirRow> = index.table().0.to_vec();
        fs::write(root.join("a/x.py"), "changed").unwrap();
        index.refresh().unwrap();
        assert_eq!(index.rescans, 1, "a file change must not rescan");
        let after = index.table().0;
        let cold = walk::walk(&root, &opts(), None).unwrap();
        assert_eq!(after, &cold.rows[..]);
        assert_ne!(before[1].fingerprint, after[1].fingerprint); // a
        assert_eq!(before[2], after[2]); // b untouched
        let moved: Vec<usize> = index.changes_since(1).unwrap().iter().map(|(i, _)| *i).collect();
        assert_eq!(moved, vec![1], "only a's row changed after the first scan");
        assert!(index.changes_since(index.generation).unwrap().is_empty());

        fs::create_dir_all(root.join("c")).unwrap();
        fs::write(root.join("c/z.py"), "z").unwrap();
        index.refresh().unwrap();
        assert_eq!(index.rescans, 2, "a new directory rescans");
        assert!(index.changes_since(2).is_none(), "after a rescan positions moved");
        assert_eq!(index.table().0, &walk::walk(&root, &opts(), None).unwrap().rows[..]);
        fs::remove_dir_all(&root).unwrap();
    }
}
