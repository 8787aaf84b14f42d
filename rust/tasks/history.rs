//! What git's history says about files: which files change together (commits of at most
//! `MAX_COMMIT_FILES` files, the last `MAX_COMMITS` that are not merges) and how recently each
//! file changed, scored from the commits git/history.rs reads in process (again only when HEAD
//! moves, or taken from a read an earlier process saved for that HEAD: tasks/history_store.rs);
//! without git (or outside a repository) there is no history.

use super::history_store::{self, Read};
use crate::git::history::Follow;
use std::collections::HashMap;
use std::path::Path;

pub const MAX_COMMITS: usize = 2000;
/// Commits touching more files than this are sweeping changes (renames, formatting):
/// they say nothing about which files belong together.
pub const MAX_COMMIT_FILES: usize = 30;

/// The commits back at which `recency` is half.
const RECENCY_HALF: f32 = 50.0;
/// The commits (of those read) at which a file's `churn` is full: it grows with the logarithm
/// of its commits up to this.
const CHURN_FULL: f32 = 100.0;

/// The commits since a file last changed (0: HEAD's commit), from its `recency`; None when no
/// commit read changed it.
pub fn commits_since(recency: f32) -> Option<u32> {
    (recency > 0.0).then(|| (RECENCY_HALF / recency - RECENCY_HALF).round().max(0.0) as u32)
}

#[derive(Default)]
pub struct History {
    /// The commit the history was read at ("" when there is none).
    pub head: String,
    /// git's history of the root it was read from, followed between questions.
    log: Follow,
    ids: HashMap<Box<str>, u32>,
    /// By file: the newest commit (0 = HEAD's) that changed it, and how many did.
    last: Vec<u32>,
    changes: Vec<u32>,
    /// By file: (other file, commits that changed both), most first.
    with: Vec<Vec<(u32, u16)>>,
    names: Vec<Box<str>>,
    /// A read an earlier process saved, offered for the next refresh (used if HEAD is its).
    saved: Option<Read>,
    /// The commits of the last read from git, until they are saved.
    unsaved: Option<Vec<Vec<String>>>,
}

impl History {
    /// The history of the commit checked out at `root` (read again only when HEAD moved).
    pub fn refresh(&mut self, root: &Path) {
        let saved = self.saved.take();
        let mut read_from_git = true;
        let known = |now: &str| {
            let commits = saved.filter(|s| s.0 == now).map(|s| s.1);
            read_from_git = commits.is_none();
            commits
        };
        if let Some((head, commits)) = self.log.moved(root, MAX_COMMITS, known) {
            let log = std::mem::take(&mut self.log);
            *self = History::from_commits(&commits);
            self.log = log;
            self.unsaved = (read_from_git && !head.is_empty()).then_some(commits);
            self.head = head;
        }
    }

    /// Offer the bytes of a saved read (untrusted; history_store.rs checks them): the next
    /// refresh takes its commits instead of walking git when HEAD is the one it was read at.
    pub fn offer(&mut self, root: &Path, bytes: &[u8]) -> Result<(), String> {
        self.saved = Some(history_store::decode(bytes, root, MAX_COMMITS)?);
        Ok(())
    }

    /// Whether the last read came from git and is not saved yet.
    pub fn unsaved(&self) -> bool {
        self.unsaved.is_some()
    }

    /// The last read from git as bytes to save (history_store.rs), once; None when there is none.
    pub fn save(&mut self, root: &Path) -> Option<Vec<u8>> {
        let commits = self.unsaved.take()?;
        Some(history_store::encode(
            root,
            MAX_COMMITS,
            &self.head,
            &commits,
        ))
    }

    pub fn from_commits(commits: &[Vec<String>]) -> History {
        let mut h = History::default();
        // Each pair of files a commit changed, as (smaller id) << 32 | larger, counted by
        // sorting: hundreds of thousands of them in 2,000 commits, where a map of pairs
        // hashed each (a process starting from the saved history does this on its first question).
        let mut pairs: Vec<u64> = Vec::new();
        for (age, files) in commits.iter().enumerate() {
            let ids: Vec<u32> = files.iter().map(|f| h.intern(f, age as u32)).collect();
            if ids.len() > MAX_COMMIT_FILES {
                continue;
            }
            for (i, &a) in ids.iter().enumerate() {
                for &b in &ids[i + 1..] {
                    if a != b {
                        pairs.push(u64::from(a.min(b)) << 32 | u64::from(a.max(b)));
                    }
                }
            }
        }
        pairs.sort_unstable();
        h.with = vec![Vec::new(); h.names.len()];
        for run in pairs.chunk_by(|x, y| x == y) {
            let (a, b) = ((run[0] >> 32) as u32, run[0] as u32);
            let n = u16::try_from(run.len()).unwrap_or(u16::MAX);
            h.with[a as usize].push((b, n));
            h.with[b as usize].push((a, n));
        }
        for w in &mut h.with {
            w.sort_by_key(|&(f, n)| (std::cmp::Reverse(n), f));
        }
        h
    }

    fn intern(&mut self, path: &str, age: u32) -> u32 {
        if let Some(&id) = self.ids.get(path) {
            self.changes[id as usize] += 1;
            return id;
        }
        let id = self.names.len() as u32;
        self.ids.insert(path.into(), id);
        self.names.push(path.into());
        self.last.push(age);
        self.changes.push(1);
        id
    }

    /// How recently `path` changed: 1 for HEAD's commit, falling towards 0 with age
    /// (half at the `RECENCY_HALF`th commit back); 0 when no commit read changed it.
    pub fn recency(&self, path: &str) -> f32 {
        self.ids.get(path).map_or(0.0, |&id| {
            RECENCY_HALF / (RECENCY_HALF + self.last[id as usize] as f32)
        })
    }

    /// How often `path` changed, 0 to 1: ln(1 + the commits read that changed it) over
    /// ln(1 + `CHURN_FULL`).
    pub fn churn(&self, path: &str) -> f32 {
        let n = self.changes(path) as f32;
        ((1.0 + n).ln() / (1.0 + CHURN_FULL).ln()).min(1.0)
    }

    /// How many commits read changed `path`.
    pub fn changes(&self, path: &str) -> u32 {
        self.ids
            .get(path)
            .map_or(0, |&id| self.changes[id as usize])
    }

    /// The files that changed together with `path`: (path, commits that changed both).
    pub fn changed_with(&self, path: &str) -> Vec<(&str, u16)> {
        let Some(&id) = self.ids.get(path) else {
            return Vec::new();
        };
        self.with[id as usize]
            .iter()
            .map(|&(f, n)| (&*self.names[f as usize], n))
            .collect()
    }

    pub fn heap_bytes(&self) -> usize {
        self.names.iter().map(|n| n.len() * 2 + 48).sum::<usize>()
            + self
                .with
                .iter()
                .map(|w| w.capacity() * 8 + 24)
                .sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TempTree;
    use std::process::{Command, Stdio};

    #[test]
    fn co_change_and_recency() {
        let c = |files: &[&str]| files.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let mut big: Vec<String> = (0..40).map(|i| format!("f{i}.py")).collect();
        big.push("a.py".into());
        let h = History::from_commits(&[
            c(&["a.py", "b.py"]),
            c(&["a.py", "b.py", "c.py"]),
            big,
            c(&["c.py"]),
        ]);
        assert_eq!(
            h.changed_with("a.py"),
            [("b.py", 2), ("c.py", 1)],
            "the sweeping commit counts for recency, not pairs"
        );
        assert_eq!(h.changes("a.py"), 3);
        assert_eq!(h.recency("a.py"), 1.0);
        assert!(h.recency("c.py") > h.recency("f1.py") && h.recency("f1.py") > 0.0);
        assert_eq!(h.recency("nowhere.py"), 0.0);
    }

    #[test]
    #[cfg_attr(windows, ignore = "runs git, which a wine prefix has no git.exe for")]
    fn reads_a_repository_and_follows_head() {
        let t = TempTree::with("task-history", &[("a.py", "1\n"), ("b.py", "1\n")]);
        let run = |args: &[&str]| {
            let ok = Command::new("git")
                .arg("-C")
                .arg(t.path())
                .args(args)
                .env("GIT_AUTHOR_NAME", "t")
                .env("GIT_AUTHOR_EMAIL", "t@t")
                .env("GIT_COMMITTER_NAME", "t")
                .env("GIT_COMMITTER_EMAIL", "t@t")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .map(|s| s.success())
                .unwrap_or(false);
            assert!(ok, "git {args:?}");
        };
        let mut h = History::default();
        h.refresh(t.path());
        assert_eq!(h.head, "", "not a repository yet");
        run(&["init", "-q"]);
        run(&["add", "."]);
        run(&["commit", "-q", "-m", "one"]);
        h.refresh(t.path());
        assert_eq!(h.changed_with("a.py"), [("b.py", 1)]);
        std::fs::write(t.path().join("c.py"), "x").unwrap();
        run(&["add", "c.py"]);
        run(&["commit", "-q", "-m", "two"]);
        h.refresh(t.path());
        assert_eq!(h.recency("c.py"), 1.0);
        assert!(h.recency("a.py") < 1.0);

        // The read saved for this HEAD is taken instead of git's (here a different one, to
        // tell them apart); one saved for another HEAD is not.
        let saved = h.save(t.path()).expect("read from git, not saved yet");
        assert!(h.save(t.path()).is_none(), "saved once");
        let mut again = History::default();
        again.offer(t.path(), &saved).unwrap();
        again.refresh(t.path());
        assert_eq!(again.changed_with("a.py"), [("b.py", 1)]);
        assert!(
            !again.unsaved(),
            "taken from the saved read: nothing to save"
        );
        let other = |head: &str| {
            let commits = [vec!["x.py".to_string(), "y.py".to_string()]];
            history_store::encode(t.path(), MAX_COMMITS, head, &commits)
        };
        let mut fake = History::default();
        fake.offer(t.path(), &other(&h.head)).unwrap();
        fake.refresh(t.path());
        assert_eq!(
            fake.changed_with("x.py"),
            [("y.py", 1)],
            "HEAD's saved read used"
        );
        let mut moved = History::default();
        moved.offer(t.path(), &other(&"0".repeat(40))).unwrap();
        moved.refresh(t.path());
        assert_eq!(
            moved.changed_with("a.py"),
            [("b.py", 1)],
            "another HEAD's: git read"
        );
        assert!(moved.unsaved());
    }
}
