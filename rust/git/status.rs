//! One question of git's view: which directories hold a file that differs from a commit (the
//! diff side: the commit's tree against the index and the worktree) or that git neither tracks
//! nor ignores (the untracked side: git's walk, with its ignore rules).

use crate::git::answer::{Answer, CannotTell};
use crate::git::bounds::{MAX_CACHED_HASHES, MAX_DEPTH};
use crate::git::discover::holds_repository;
use crate::git::files::{hash_file, hash_link, list, read_regular};
use crate::git::ignores::Held;
use crate::git::index::{IndexEntry, IndexView, ASSUMED, UNMERGED};
use crate::git::kind::Kind;
use crate::git::paths::{join, os_path, split, under};
use crate::git::repo::{stat_key, Repo, Stats};
use crate::tree::ignore::{self as ignorerules, Rules};
use crate::tree::os::{now_ns, Key, PlainDir as Dir, Stat as St};
use gix::hash::ObjectId;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const CONTEXT_FILE: &[u8] = crate::tree::names::CONTEXT_FILE.as_bytes();

/// Whether git's walk of untracked files reaches a directory's files.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Reach {
    Yes,
    No,
    /// An untracked directory holding a repository of its own: listed itself.
    ItsOwnRepository,
}

/// What one question learns as it goes: which ignore files were checked, which directories
/// are excluded or reached.
pub(super) struct Ask<'a> {
    pub(super) repo: &'a mut Repo,
    pub(super) stats: &'a mut Stats,
    pub(super) index: Arc<IndexView>,
    pub(super) tree: ObjectId,
    pub(super) now: i64,
    pub(super) budget: ignorerules::Budget,
    pub(super) checked: HashSet<Box<[u8]>>,
    pub(super) excluded_dirs: HashMap<Box<[u8]>, bool>,
    pub(super) reach: HashMap<Box<[u8]>, Reach>,
    pub(super) plain: HashMap<Box<[u8]>, bool>,
}

impl<'a> Ask<'a> {
    pub(super) fn new(repo: &'a mut Repo, stats: &'a mut Stats, commit: &str) -> Answer<Ask<'a>> {
        repo.refresh_index(stats)?;
        let tree = repo.root_tree(commit)?;
        Ok(Ask {
            index: repo.index.clone(),
            repo,
            stats,
            tree,
            now: now_ns(),
            budget: ignorerules::Budget::new(),
            checked: HashSet::new(),
            excluded_dirs: HashMap::new(),
            reach: HashMap::new(),
            plain: HashMap::new(),
        })
    }

    pub(super) fn abs(&self, rel: &[u8]) -> PathBuf {
        if rel.is_empty() {
            self.repo.workdir.clone()
        } else {
            self.repo.workdir.join(os_path(rel))
        }
    }

    // --- the diff side: the commit's tree against the index and the worktree ---

    /// Whether a file of directory `dir` differs from the commit (deleted, added, another
    /// kind or content), `.context.yaml` aside.
    pub(super) fn dir_differs(&mut self, dir: &[u8], fd: Option<&Dir>) -> Answer<bool> {
        let tree = self.repo.tree_dir(&self.tree.clone(), dir, self.stats)?;
        let index = self.index.clone();
        let entries = index.entries(dir);
        let (mut t, mut i) = (
            tree.iter().filter(|e| e.kind.is_some()).peekable(),
            entries.iter().peekable(),
        );
        loop {
            let (te, ie) = match (t.peek(), i.peek()) {
                (None, None) => return Ok(false),
                (Some(te), Some(ie)) => match te.name.cmp(&ie.name) {
                    std::cmp::Ordering::Less => (t.next(), None),
                    std::cmp::Ordering::Greater => (None, i.next()),
                    std::cmp::Ordering::Equal => (t.next(), i.next()),
                },
                (Some(_), None) => (t.next(), None),
                (None, Some(_)) => (None, i.next()),
            };
            let name = te.map_or_else(|| &ie.unwrap().name, |e| &e.name);
            if **name == *CONTEXT_FILE {
                continue;
            }
            let differs = match (te, ie) {
                (Some(_), None) => true,                                         // deleted
                (None, Some(ie)) => self.worktree(dir, fd, ie, None)?.is_some(), // added, unless gone
                (Some(te), Some(ie)) => match self.worktree(dir, fd, ie, te.kind)? {
                    None => true,
                    Some((kind, id)) => Some(kind) != te.kind || id != Some(te.id),
                },
                (None, None) => unreachable!(),
            };
            if differs {
                return Ok(true);
            }
        }
    }

    /// The worktree's side of an index entry, as `git diff` takes it: None when the file is
    /// gone; else its kind and blob id (None when unknown: it differs). The blob is looked for
    /// only when the kind is `want`, the commit's (otherwise it differs anyway).
    #[allow(clippy::type_complexity)]
    pub(super) fn worktree(
        &mut self,
        dir: &[u8],
        fd: Option<&Dir>,
        e: &IndexEntry,
        want: Option<Kind>,
    ) -> Answer<Option<(Kind, Option<ObjectId>)>> {
        if e.flags & ASSUMED != 0 {
            return Ok(Some((e.kind, Some(e.id))));
        }
        // No handle: the directory is gone, or a symlink lies on the way (git: removed).
        let Some(fd) = fd else { return Ok(None) };
        let Some(md) = fd.stat(&e.name) else {
            return Ok(None);
        };
        if md.is_dir() {
            return Ok(match e.kind {
                Kind::Gitlink => Some((Kind::Gitlink, Some(e.id))),
                // A directory in a file's place: removed, unless it is a repository (a type change).
                _ if holds_repository(&self.abs(&join(dir, &e.name)), &self.repo.workdir) => {
                    Some((Kind::Gitlink, None))
                }
                _ => None,
            });
        }
        let kind = if md.is_symlink() {
            Kind::Link
        } else if md.is_file() {
            match (self.repo.file_mode, e.kind) {
                (true, _) => {
                    if md.is_executable() {
                        Kind::Exec
                    } else {
                        Kind::File
                    }
                }
                (false, k @ (Kind::File | Kind::Exec)) => k,
                (false, _) => Kind::File,
            }
        } else {
            return Ok(Some((Kind::File, None))); // a FIFO, socket or device: never read
        };
        if e.kind == Kind::Gitlink || want != Some(kind) {
            return Ok(Some((kind, None)));
        }
        if kind == e.kind && e.flags & UNMERGED == 0 && self.index.vouches(e, &md) {
            return Ok(Some((kind, Some(e.id))));
        }
        Ok(Some((kind, self.hash(dir, fd, &e.name, &md, kind))))
    }

    pub(super) fn hash(
        &mut self,
        dir: &[u8],
        fd: &Dir,
        name: &[u8],
        md: &St,
        kind: Kind,
    ) -> Option<ObjectId> {
        let key = md.key();
        let rel = join(dir, name);
        if let Some((k, id)) = self.repo.hashes.get(&*rel) {
            if *k == key {
                self.stats.hashes_reused += 1;
                return Some(*id);
            }
        }
        self.stats.files_hashed += 1;
        let id = if kind == Kind::Link {
            hash_link(fd, name)
        } else {
            hash_file(fd, name, md)
        }?;
        if !key.racy(self.now) {
            if self.repo.hashes.len() >= MAX_CACHED_HASHES {
                self.repo.hashes.clear();
            }
            self.repo.hashes.insert(rel.into(), (key, id));
        }
        Some(id)
    }

    /// Directory `dir` opened with no symlink on the way (also noted for `reach`), or None.
    pub(super) fn open_dir(&mut self, dir: &[u8]) -> Option<Dir> {
        let fd = self.repo.top.open(dir);
        if fd.is_some() {
            let mut d = dir;
            while !d.is_empty() && self.plain.insert(d.into(), true).is_none() {
                d = split(d).0;
            }
        } else {
            self.plain.insert(dir.into(), false);
        }
        fd
    }

    /// No component of `dir` is a symlink or other non-directory (git's has_symlink_leading_path).
    pub(super) fn leading_path_is_plain(&mut self, dir: &[u8]) -> bool {
        if dir.is_empty() {
            return true;
        }
        match self.plain.get(dir) {
            Some(plain) => *plain,
            None => self.open_dir(dir).is_some(),
        }
    }

    // --- the untracked side ---

    /// The rules of `dir/.gitignore`, as they are now.
    pub(super) fn rules_of(&mut self, dir: &[u8]) -> Option<Arc<Rules>> {
        if !self.checked.contains(dir) {
            self.checked.insert(dir.into());
            let path = self.abs(dir).join(".gitignore");
            // git (2.32 on) reads no .gitignore that is a symlink.
            let key = fs::symlink_metadata(&path)
                .ok()
                .filter(|m| m.is_file())
                .map(|m| Key::of(&m));
            let held = self.repo.ignores.per_dir.get(dir);
            if !held.is_some_and(|h| h.trusted && h.key == key) {
                let rules = match key {
                    Some(_) => {
                        self.stats.ignore_files_read += 1;
                        ignorerules::read(&path, &self.budget).and_then(|text| {
                            Rules::parse(&self.abs(dir), &[(&path.display().to_string(), &text)])
                        })
                    }
                    None => None,
                };
                let trusted = key.is_none_or(|k| !k.racy(self.now));
                self.repo.ignores.per_dir.insert(
                    dir.into(),
                    Held {
                        key,
                        rules,
                        trusted,
                    },
                );
            }
        }
        self.repo
            .ignores
            .per_dir
            .get(dir)
            .and_then(|h| h.rules.clone())
    }

    /// info/exclude (read beneath the common directory: a link out of it is not followed) and
    /// core.excludesFile (wherever the configuration names it, links followed, as git does),
    /// as they are now.
    pub(super) fn outer_rules(&mut self) -> [Option<Arc<Rules>>; 2] {
        if !self.checked.contains(&b"\0outer"[..]) {
            self.checked.insert(b"\0outer"[..].into());
            let sources = [
                Some(self.repo.common_dir.join("info").join("exclude")),
                self.repo.excludes_file.clone(),
            ];
            for (i, path) in sources.into_iter().enumerate() {
                let key = path.as_deref().and_then(stat_key);
                let held = if i == 0 {
                    &self.repo.ignores.info
                } else {
                    &self.repo.ignores.global
                };
                if held.as_ref().is_some_and(|h| h.trusted && h.key == key) {
                    continue;
                }
                let rules = match (&path, key) {
                    (Some(p), Some(_)) => {
                        self.stats.ignore_files_read += 1;
                        let data = if i == 0 {
                            let common = crate::tree::fs::Root::open(&self.repo.common_dir).ok();
                            common.and_then(|c| {
                                c.read(Path::new("info/exclude"), ignorerules::MAX_SCAN_BYTES)
                                    .ok()
                            })
                        } else {
                            read_regular(p, ignorerules::MAX_SCAN_BYTES)
                                .ok()
                                .map(|(data, _)| data)
                        };
                        data.and_then(|data| {
                            let text = String::from_utf8_lossy(&data);
                            Rules::parse(&self.repo.workdir, &[(&p.display().to_string(), &text)])
                        })
                    }
                    _ => None,
                };
                let held = Some(Held {
                    key,
                    rules,
                    trusted: key.is_none_or(|k| !k.racy(self.now)),
                });
                if i == 0 {
                    self.repo.ignores.info = held;
                } else {
                    self.repo.ignores.global = held;
                }
            }
        }
        let rules = |h: &Option<Held>| h.as_ref().and_then(|h| h.rules.clone());
        [
            rules(&self.repo.ignores.info),
            rules(&self.repo.ignores.global),
        ]
    }

    /// Whether git ignores `rel` (a file, or a directory with `is_dir`), its directories above
    /// aside: the deepest .gitignore that speaks of it decides, then info/exclude, then
    /// core.excludesFile.
    pub(super) fn ignored(&mut self, rel: &[u8], is_dir: bool) -> bool {
        let abs = self.abs(rel);
        let mut dir = split(rel).0;
        loop {
            if let Some(verdict) = self.rules_of(dir).and_then(|r| r.matched(&abs, is_dir)) {
                return verdict;
            }
            if dir.is_empty() {
                break;
            }
            dir = split(dir).0;
        }
        self.outer_rules()
            .iter()
            .flatten()
            .find_map(|r| r.matched(&abs, is_dir))
            .unwrap_or(false)
    }

    pub(super) fn dir_ignored(&mut self, dir: &[u8]) -> bool {
        if let Some(v) = self.excluded_dirs.get(dir) {
            return *v;
        }
        let v = self.ignored(dir, true);
        self.excluded_dirs.insert(dir.into(), v);
        v
    }

    /// Whether git's walk for untracked files lists the files of `dir`: no directory on the way
    /// (from the worktree's top) is ignored, a symlink, a submodule, or an untracked repository.
    pub(super) fn reach(&mut self, dir: &[u8]) -> Reach {
        if dir.is_empty() {
            return Reach::Yes;
        }
        if let Some(r) = self.reach.get(dir) {
            return *r;
        }
        let (parent, name) = split(dir);
        let r = if self.reach(parent) != Reach::Yes
            || name == b".git"
            || !self.leading_path_is_plain(dir)
            || self.index.is_gitlink(dir)
            || self.dir_ignored(dir)
        {
            Reach::No
        } else if !self.index.tracked_dirs.contains(dir)
            && holds_repository(&self.abs(dir), &self.repo.workdir)
        {
            Reach::ItsOwnRepository
        } else {
            Reach::Yes
        };
        self.reach.insert(dir.into(), r);
        r
    }

    /// Whether `dir` (reached) holds a file or symlink git neither tracks nor ignores.
    pub(super) fn has_untracked(&mut self, dir: &[u8], listing: &[(Vec<u8>, bool, bool)]) -> bool {
        let candidates = self.not_tracked(dir, listing);
        candidates
            .into_iter()
            .any(|path| !self.ignored(&path, false))
    }

    /// The files and symlinks of a listing that the index does not hold (`.context.yaml` aside).
    pub(super) fn not_tracked(
        &self,
        dir: &[u8],
        listing: &[(Vec<u8>, bool, bool)],
    ) -> Vec<Vec<u8>> {
        listing
            .iter()
            .filter(|(name, _, file)| *file && **name != *CONTEXT_FILE)
            .map(|(name, _, _)| join(dir, name))
            .filter(|path| self.index.entry(path).is_none())
            .collect()
    }

    /// Whether the files directly in `dir` are as at the commit, git's way.
    pub(super) fn dir_changed(&mut self, dir: &[u8]) -> Answer<bool> {
        let fd = self.open_dir(dir);
        if self.dir_differs(dir, fd.as_ref())? {
            return Ok(true);
        }
        // Most directories hold only tracked files: then no ignore rule needs asking, and while
        // neither the directory nor the index changes, no listing either. Without a handle (gone,
        // or reached through a link) git lists nothing there.
        let index_key = self.index.key.filter(|_| self.repo.index_trusted);
        let dir_key = fd.as_ref().and_then(Dir::own).map(|s| s.key());
        if let (Some(d), Some(i)) = (dir_key, index_key) {
            if self.repo.all_tracked.get(dir) == Some(&(d, i)) {
                return Ok(false);
            }
        }
        let listing = fd.map(|fd| list(&fd)).unwrap_or_default();
        if self.index.tracked_dirs.contains(dir) && self.not_tracked(dir, &listing).is_empty() {
            if let (Some(d), Some(i)) = (dir_key.filter(|k| !k.racy(self.now)), index_key) {
                if self.repo.all_tracked.len() >= MAX_CACHED_HASHES {
                    self.repo.all_tracked.clear();
                }
                self.repo.all_tracked.insert(dir.into(), (d, i));
            }
            return Ok(false);
        }
        Ok(match self.reach(dir) {
            Reach::No => false,
            Reach::ItsOwnRepository => true,
            Reach::Yes => self.has_untracked(dir, &listing),
        })
    }

    /// Every directory at or below `top` holding a changed file (or listed itself as an
    /// untracked repository), into `out`.
    pub(super) fn changed_below(&mut self, top: &[u8], out: &mut BTreeSet<Vec<u8>>) -> Answer<()> {
        // The diff side: every directory of the commit's tree and of the index below `top`.
        let mut dirs: BTreeSet<Vec<u8>> = self
            .index
            .dirs
            .keys()
            .filter(|d| under(d, top))
            .map(|d| d.to_vec())
            .collect();
        let start = self.repo.tree_dir(&self.tree.clone(), top, self.stats)?;
        let mut stack = vec![(top.to_vec(), start, 0usize)];
        while let Some((dir, tree, depth)) = stack.pop() {
            if depth > MAX_DEPTH {
                return Err(CannotTell);
            }
            if tree.iter().any(|e| e.kind.is_some()) {
                dirs.insert(dir.clone());
            }
            for e in tree.iter().filter(|e| e.kind.is_none()) {
                let sub = self.repo.tree(&e.id, self.stats)?;
                stack.push((join(&dir, &e.name), sub, depth + 1));
            }
        }
        for dir in dirs {
            if !out.contains(&dir) {
                let fd = self.open_dir(&dir);
                if self.dir_differs(&dir, fd.as_ref())? {
                    out.insert(dir);
                }
            }
        }
        // The untracked side: git's walk from `top`.
        match self.reach(top) {
            Reach::No => return Ok(()),
            Reach::ItsOwnRepository => {
                out.insert(top.to_vec());
                return Ok(());
            }
            Reach::Yes => {}
        }
        let mut stack = vec![(top.to_vec(), 0usize)];
        while let Some((dir, depth)) = stack.pop() {
            if depth > MAX_DEPTH {
                return Err(CannotTell);
            }
            let listing = self.open_dir(&dir).map(|fd| list(&fd)).unwrap_or_default();
            if !out.contains(&dir) && self.has_untracked(&dir, &listing) {
                out.insert(dir.clone());
            }
            for (name, is_dir, _) in &listing {
                if !is_dir {
                    continue;
                }
                let sub = join(&dir, name);
                if self.index.is_gitlink(&sub) || self.dir_ignored(&sub) {
                    continue;
                }
                if !self.index.tracked_dirs.contains(&*sub)
                    && holds_repository(&self.abs(&sub), &self.repo.workdir)
                {
                    out.insert(sub);
                    continue;
                }
                stack.push((sub, depth + 1));
            }
        }
        Ok(())
    }
}
