//! The live index: the walk table kept in memory and kept true by the OS's file-system
//! events (tree/watch.rs: inotify, FSEvents or ReadDirectoryChangesW).
//!
//! Each scanned (not ignored) directory gets a watch before it is read, so no
//! change slips between the read and the watch. Before answering, `refresh`
//! drains the events the OS has queued — any change made before the
//! question is in that drain — and re-reads only the directories they name. A
//! directory made, removed, moved, or given a new mode, or a changed nested
//! `.gitignore`, re-scans only that subtree. Changes to the root's ignore rules,
//! lost events, or no watching at all (an OS without events, limits,
//! `--no-watch`) mean a full rescan; `watching_by` and `watch_reason` say which.

use crate::tree::walk::{self, DirRow, Options};
use crate::tree::watch::{self, AddError, Drained, Interest, Watch, Wd};
use std::collections::{BTreeSet, HashMap};
use std::ops::ControlFlow::{Break, Continue};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

pub struct LiveIndex {
    root: PathBuf,
    opts: Options,
    rows: Vec<DirRow>,
    /// Row positions by scope; they hold until rows are added or removed.
    positions: HashMap<String, usize>,
    /// The generation at which each row last changed, and the last one at which rows were
    /// added or removed, so a caller holding an older table can take only the rows that
    /// moved since (`changes_since`).
    changed_at: Vec<u64>,
    reshaped_at: u64,
    skipped: usize,
    unreadable: Vec<walk::LeftOut>,
    /// Bumped whenever the table changes, so callers can reuse what they built from it.
    pub generation: u64,
    pub rescans: u64,
    watcher: Option<Watcher>,
    want_watch: bool,
    /// Why no watcher is in force, when none is.
    unwatched: String,
}

impl LiveIndex {
    pub fn new(root: &Path, opts: Options, want_watch: bool) -> std::io::Result<Self> {
        let mut index = LiveIndex {
            root: root.to_path_buf(),
            opts,
            rows: Vec::new(),
            positions: HashMap::new(),
            changed_at: Vec::new(),
            reshaped_at: 0,
            skipped: 0,
            unreadable: Vec::new(),
            generation: 0,
            rescans: 0,
            watcher: None,
            want_watch,
            unwatched: String::new(),
        };
        index.rescan()?;
        Ok(index)
    }

    pub fn watching(&self) -> bool {
        self.watcher.is_some()
    }

    /// Which watching is in force: the OS's events (`watch::KIND`), "polling" (the files
    /// are read again for each question, as the OS gives no events here) or "none" (turned
    /// off).
    pub fn watching_by(&self) -> &'static str {
        match (&self.watcher, self.want_watch) {
            (Some(_), _) => watch::KIND,
            (None, true) => "polling",
            (None, false) => "none",
        }
    }

    /// Why that watching is in force.
    pub fn watch_reason(&self) -> String {
        match (&self.watcher, self.want_watch) {
            (Some(_), _) => format!("{} events keep the scan in memory true", watch::KIND),
            (None, true) => format!("{}: every question reads the tree again", self.unwatched),
            (None, false) => {
                "watching is turned off (serve --no-watch): every question reads the tree again"
                    .into()
            }
        }
    }

    pub fn table(&self) -> (&[DirRow], usize, &[walk::LeftOut]) {
        (&self.rows, self.skipped, &self.unreadable)
    }

    /// The generation at which each row (by position) last changed.
    pub fn changed_at(&self) -> &[u64] {
        &self.changed_at
    }

    /// The rows that changed after generation `since`, with their positions in the table;
    /// None when rows were added or removed after it (positions moved: take the whole table).
    pub fn changes_since(&self, since: u64) -> Option<Vec<(usize, &DirRow)>> {
        if self.reshaped_at > since {
            return None;
        }
        let moved = self
            .changed_at
            .iter()
            .enumerate()
            .filter(|(_, &at)| at > since);
        Some(moved.map(|(i, _)| (i, &self.rows[i])).collect())
    }

    fn rescan(&mut self) -> std::io::Result<()> {
        self.watcher = None; // dropping the old instance drops all its watches
        self.unwatched.clear();
        let watcher = if self.want_watch {
            Watcher::new(&self.root)
                .map_err(|why| self.unwatched = why)
                .ok()
        } else {
            None
        };
        let hook = |abs: &Path, scope: &str| {
            if let Some(w) = &watcher {
                w.add(abs, scope);
            }
        };
        let table = walk::walk(&self.root, &self.opts, Some(&hook))?;
        self.watcher = watcher.filter(|w| !w.failed());
        if self.want_watch && self.watcher.is_none() && self.unwatched.is_empty() {
            self.unwatched = ADD_FAILED.into();
        }
        self.rows = table.rows;
        release_freed_memory();
        self.skipped = table.skipped;
        self.unreadable = table.unreadable;
        self.generation += 1;
        self.changed_at = vec![self.generation; self.rows.len()];
        self.reposition(self.generation);
        self.rescans += 1;
        Ok(())
    }

    /// After rows were added or removed at `generation`: their positions anew.
    fn reposition(&mut self, generation: u64) {
        self.positions = self
            .rows
            .iter()
            .enumerate()
            .map(|(i, r)| (r.scope.clone(), i))
            .collect();
        self.reshaped_at = generation;
    }

    /// Scan anew the subtrees at `scopes` (each made, removed, moved or re-ruled): their old
    /// rows, left-outs and watches go, and what `walk` would now find there comes in, changed
    /// at `generation`; the other rows keep theirs.
    fn reshape(&mut self, scopes: &BTreeSet<String>, generation: u64) {
        let watcher = self.watcher.as_ref().expect("reshaping needs watching");
        // The outermost only: a subtree scan covers whatever lies under it.
        let all: BTreeSet<&str> = scopes.iter().map(String::as_str).collect();
        let tops: BTreeSet<&str> = all
            .iter()
            .copied()
            .filter(|s| !has_ancestor_in(&all, s))
            .collect();
        let inside = |scope: &str| tops.contains(scope) || has_ancestor_in(&tops, scope);
        let mut rows: Vec<(DirRow, u64)> = std::mem::take(&mut self.rows)
            .into_iter()
            .zip(self.changed_at.iter().copied())
            .filter(|(r, _)| !inside(&r.scope))
            .collect();
        self.unreadable.retain(|(path, _)| !inside(path));
        watcher.forget(&inside);
        let hook = |abs: &Path, scope: &str| watcher.add(abs, scope);
        for top in &tops {
            if self.positions.contains_key(walk::parent_scope(top)) {
                let (found, left_out) =
                    walk::walk_subtree(&self.root, &self.opts, top, Some(&hook));
                rows.extend(found.into_iter().map(|r| (r, generation)));
                self.unreadable.extend(left_out);
            }
        }
        rows.sort_unstable_by(|a, b| a.0.order_key().cmp(&b.0.order_key()));
        (self.rows, self.changed_at) = rows.into_iter().unzip();
        self.unreadable.sort();
        self.reposition(generation);
    }

    /// Bring the table up to date with the files as they are now.
    pub fn refresh(&mut self) -> std::io::Result<()> {
        let Some(watcher) = self.watcher.as_mut() else {
            return self.rescan();
        };
        let (dirty, reshaped) = match watcher.drain() {
            Changes::Rescan => return self.rescan(),
            Changes::Dirs { dirty, reshaped } => (dirty, reshaped),
        };
        if dirty.is_empty() && reshaped.is_empty() {
            return Ok(());
        }
        let generation = self.generation + 1;
        if !reshaped.is_empty() {
            self.reshape(&reshaped, generation);
            if self.watcher.as_ref().is_some_and(|w| w.failed()) {
                return self.rescan(); // a watch could not be placed: no watching from here on
            }
        }
        let mut updates = Vec::new();
        for scope in &dirty {
            let Some(&i) = self.positions.get(scope.as_str()) else {
                continue;
            };
            let abs = if scope == "." {
                self.root.clone()
            } else {
                self.root.join(scope)
            };
            match walk::read_row(&abs, scope) {
                Ok(row) => updates.push((i, row)),
                Err(_) => return self.rescan(),
            }
        }
        // The rules may change flags of rows nobody touched (a parent's eligibility).
        let flags: Vec<(bool, bool)> = self.rows.iter().map(|r| (r.included, r.eligible)).collect();
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

/// Whether a proper ancestor of `scope` is in `set`.
fn has_ancestor_in(set: &BTreeSet<&str>, scope: &str) -> bool {
    scope
        .match_indices('/')
        .any(|(i, _)| set.contains(&scope[..i]))
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

/// Why watching stopped when a directory's watch could not be placed.
const ADD_FAILED: &str =
    "a directory could not be watched (on Linux most often the limit fs.inotify.max_user_watches)";

/// Marks the watch on `.git/info`, whose `exclude` file holds ignore rules.
const GIT_INFO: &str = "\0git-info";

enum Changes {
    /// Directories to re-read, and subtrees to scan anew.
    Dirs {
        dirty: BTreeSet<String>,
        reshaped: BTreeSet<String>,
    },
    Rescan,
}

/// The watches of one scan: the directory (scope) each watch is on.
struct Watcher {
    watch: Watch,
    scopes: Mutex<HashMap<Wd, String>>,
    failed: AtomicBool,
}

impl Watcher {
    /// Err (why) where watching is impossible.
    fn new(root: &Path) -> Result<Watcher, String> {
        let w = Watcher {
            watch: Watch::new(root)?,
            scopes: Mutex::new(HashMap::new()),
            failed: AtomicBool::new(false),
        };
        let info = root.join(".git").join("info");
        if info.is_dir() {
            w.add(&info, GIT_INFO);
        }
        Ok(w)
    }

    /// Watch one directory; a failure (e.g. the watch limit) turns watching off. A
    /// directory we may not read is left out by the walk, and a change of its mode is
    /// an event in its parent, so it needs no watch of its own.
    fn add(&self, abs: &Path, scope: &str) {
        match self.watch.add(abs, Interest::Listing) {
            Ok(wd) => {
                self.scopes.lock().unwrap().insert(wd, scope.to_string());
            }
            Err(AddError::Denied) => {}
            Err(AddError::Failed) => self.failed.store(true, Ordering::Relaxed),
        }
    }

    /// Stop watching every directory whose scope `inside` accepts.
    fn forget(&self, inside: &dyn Fn(&str) -> bool) {
        self.scopes.lock().unwrap().retain(|&wd, scope| {
            let keep = scope == GIT_INFO || !inside(scope);
            if !keep {
                // Already gone when the directory was removed; its IN_IGNORED is skipped.
                self.watch.remove(wd);
            }
            keep
        });
    }

    fn failed(&self) -> bool {
        self.failed.load(Ordering::Relaxed)
    }

    /// Every event queued so far, as the directories to re-read (or a rescan).
    fn drain(&mut self) -> Changes {
        let scopes = self.scopes.lock().unwrap();
        let (mut dirty, mut reshaped) = (BTreeSet::new(), BTreeSet::new());
        let drained = self.watch.drain(|event| {
            // A watch we removed (its directory went) still reports IN_IGNORED: skipped.
            let Some(scope) = scopes.get(&event.wd) else {
                return Continue(());
            };
            if scope == GIT_INFO {
                return Break(());
            }
            if event.gone {
                if scope == "." {
                    return Break(());
                }
                reshaped.insert(scope.clone());
                return Continue(());
            }
            // Of events on the watched directory itself, its parent has its own.
            let Some(raw) = event.name else {
                return Continue(());
            };
            if event.is_dir {
                // One not named in UTF-8 is left out by the walk, under an escaped name.
                let Ok(name) = std::str::from_utf8(raw) else {
                    return Break(());
                };
                // A directory's own mtime never matters; being made, removed, moved or
                // given a new mode (it may become readable) changes its subtree.
                if !walk::is_unwalked_dir(name) {
                    reshaped.insert(walk::child_scope(scope, name));
                }
                return Continue(());
            }
            let name = raw;
            if scope == "." && (name == b".gitignore" || name == b".contextignore") {
                return Break(());
            }
            if name == b".gitignore" {
                reshaped.insert(scope.clone()); // its rules hold under this directory only
                return Continue(());
            }
            dirty.insert(scope.clone());
            Continue(())
        });
        match drained {
            Drained::Empty => Changes::Dirs { dirty, reshaped },
            // Stopped: an event asked for a rescan. Lost: events are missing.
            Drained::Stopped | Drained::Lost => Changes::Rescan,
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use crate::testing::TempTree;
    use std::fs;

    fn opts() -> Options {
        Options {
            extra_ignore: vec![],
            max_depth: 10,
            min_tokens: 0,
        }
    }

    #[test]
    fn a_touched_file_re_reads_only_its_directory() {
        let t = TempTree::with("live", &[("a/x.py", "x"), ("b/y.py", "y")]);
        let root = t.path();
        let mut index = LiveIndex::new(root, opts(), true).unwrap();
        assert!(index.watching());
        let before: Vec<DirRow> = index.table().0.to_vec();
        fs::write(root.join("a/x.py"), "changed").unwrap();
        index.refresh().unwrap();
        assert_eq!(index.rescans, 1, "a file change must not rescan");
        let after = index.table().0;
        let cold = walk::walk(root, &opts(), None).unwrap();
        assert_eq!(after, &cold.rows[..]);
        assert_ne!(before[1].fingerprint, after[1].fingerprint); // a
        assert_eq!(before[2], after[2]); // b untouched
        let moved: Vec<usize> = index
            .changes_since(1)
            .unwrap()
            .iter()
            .map(|(i, _)| *i)
            .collect();
        assert_eq!(moved, vec![1], "only a's row changed after the first scan");
        assert!(index.changes_since(index.generation).unwrap().is_empty());

        fs::create_dir_all(root.join("c")).unwrap();
        fs::write(root.join("c/z.py"), "z").unwrap();
        index.refresh().unwrap();
        assert!(
            index.changes_since(2).is_none(),
            "a row came in: positions moved"
        );
        let kept: Vec<(&str, u64)> = index
            .table()
            .0
            .iter()
            .zip(index.changed_at())
            .map(|(r, &at)| (r.scope.as_str(), at))
            .collect();
        assert_eq!(
            kept,
            vec![(".", 1), ("a", 2), ("b", 1), ("c", 3)],
            "only c is new"
        );
        assert_eq!(
            index.table().0,
            &walk::walk(root, &opts(), None).unwrap().rows[..]
        );
    }

    #[test]
    fn directories_made_moved_removed_or_re_ruled_re_scan_only_their_subtree() {
        // The repository is `root/`; `out/` beside it is outside.
        let t = TempTree::with("live-shape", &[("root/a/deep/er/x.py", "x")]);
        t.mkdir("root/b");
        let (root, out) = (t.join("root"), t.join("out"));
        let mut index = LiveIndex::new(&root, opts(), true).unwrap();
        type Step<'a> = (&'a str, Box<dyn Fn() + 'a>);
        let steps: Vec<Step> = vec![
            (
                "a new tree",
                Box::new(|| {
                    fs::create_dir_all(root.join("b/new/sub")).unwrap();
                    fs::write(root.join("b/new/sub/y.rs"), "y").unwrap();
                }),
            ),
            (
                "a move within the tree",
                Box::new(|| fs::rename(root.join("a/deep"), root.join("b/deep")).unwrap()),
            ),
            (
                "a file in the moved tree",
                Box::new(|| fs::write(root.join("b/deep/er/z.py"), "z").unwrap()),
            ),
            (
                "a nested .gitignore",
                Box::new(|| fs::write(root.join("b/.gitignore"), "deep/\n").unwrap()),
            ),
            (
                "the rule lifted",
                Box::new(|| fs::write(root.join("b/.gitignore"), "# none\n").unwrap()),
            ),
            (
                "a removal",
                Box::new(|| fs::remove_dir_all(root.join("b/new")).unwrap()),
            ),
            (
                "a move out of the tree",
                Box::new(|| fs::rename(root.join("b/deep"), &out).unwrap()),
            ),
        ];
        for (what, step) in steps {
            step();
            index.refresh().unwrap();
            assert_eq!(
                index.table().0,
                &walk::walk(&root, &opts(), None).unwrap().rows[..],
                "after {what}"
            );
            assert_eq!(index.rescans, 1, "{what} must not rescan");
        }
        // The moved-out tree is no longer followed.
        fs::write(out.join("er/w.py"), "w").unwrap();
        let generation = index.generation;
        index.refresh().unwrap();
        assert_eq!(
            index.generation, generation,
            "a change outside the tree is no change"
        );
    }
}
