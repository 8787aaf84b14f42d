//! git's history, read in process through the view (git/view.rs `Handle::objects`, with its
//! checks of a hostile repository): the files each commit changed, newest first, as
//! `git log --no-merges --no-renames --relative --name-only -n N HEAD` lists them. No `git`
//! process is spawned, so a FIFO in `.git` or a repository's configuration cannot hang it or
//! run anything.
//!
//! As git walks: commits by committer date, newest first (ties in the order they were met),
//! each once, following every parent; merges are walked through but not listed. A commit
//! lists the paths whose entry (mode or object) differs from its parent's tree, every file of
//! it for a root commit, beneath the root asked about and relative to it, in byte order.
//! A parent that cannot be read (a shallow clone's edge) ends that line of history, as the
//! `shallow` file does for git.

use crate::git::bounds::MAX_DEPTH;
use crate::git::objects::Objects;
use crate::git::view::Handle;
use gix::hash::ObjectId;
use gix::objs::tree::EntryKind;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The most bytes of paths read (git's output the subprocess read was capped alike).
pub const MAX_PATH_BYTES: usize = 64 << 20;
/// Trees kept while walking (a commit's trees are mostly its parent's); past it, forgotten.
const MAX_CACHED_TREES: usize = 20_000;

/// The commit checked out (hex) and the files of its last `max_commits` commits that are not
/// merges, newest first; None outside a repository, before the first commit, or when git's
/// objects cannot be read.
pub fn changed_files(handle: &Handle, max_commits: usize) -> Option<(String, Vec<Vec<String>>)> {
    handle.objects(
        || Box::new(DeltaBases::default()),
        |objs| {
            let head = objs.head()?;
            let mut walk = Walk::new(objs);
            Some((head.to_string(), walk.log(head, max_commits)))
        },
    )
}

/// One root's history followed: git's view of the root kept between reads, the history read
/// again only when HEAD moves.
#[derive(Default)]
pub struct Follow {
    view: Option<(PathBuf, Handle)>,
    head: String,
    read: bool,
}

impl Follow {
    /// When HEAD moved since the last call (or on the first): HEAD now ("" outside a
    /// repository or before the first commit) and the files of its last `max_commits` commits:
    /// `known(HEAD)` when it knows them (a read saved by an earlier process), else read
    /// (`changed_files`; none where git cannot tell). None while HEAD stays.
    pub fn moved(
        &mut self,
        root: &Path,
        max_commits: usize,
        known: impl FnOnce(&str) -> Option<Vec<Vec<String>>>,
    ) -> Option<(String, Vec<Vec<String>>)> {
        let view = self
            .view
            .take()
            .filter(|v| v.0 == root)
            .unwrap_or_else(|| (root.to_path_buf(), Handle::new(root)));
        let now = view.1.head().unwrap_or_default();
        let moved = (now != self.head || !self.read).then(|| {
            let commits = if now.is_empty() {
                Vec::new()
            } else if let Some(commits) = known(&now) {
                commits
            } else {
                changed_files(&view.1, max_commits)
                    .map(|(_, c)| c)
                    .unwrap_or_default()
            };
            (now.clone(), commits)
        });
        self.head = now;
        self.read = true;
        self.view = Some(view);
        moved
    }
}

/// The most bytes of decoded pack entries kept while walking.
const MAX_DELTA_BASE_BYTES: usize = 32 << 20;

/// Decoded pack entries by (pack, offset): the trees of consecutive commits are deltas of one
/// another, so without it each is decoded from the start of its chain again.
#[derive(Default)]
pub(super) struct DeltaBases {
    by_place: HashMap<(u32, u64), (gix::objs::Kind, Vec<u8>)>,
    bytes: usize,
}

impl gix::odb::pack::cache::DecodeEntry for DeltaBases {
    fn put(
        &mut self,
        pack_id: u32,
        offset: u64,
        data: &[u8],
        kind: gix::objs::Kind,
        _compressed_size: usize,
    ) {
        if data.len() > MAX_DELTA_BASE_BYTES / 4 {
            return;
        }
        if self.bytes + data.len() > MAX_DELTA_BASE_BYTES {
            self.by_place.clear();
            self.bytes = 0;
        }
        self.bytes += data.len();
        if let Some(old) = self
            .by_place
            .insert((pack_id, offset), (kind, data.to_vec()))
        {
            self.bytes -= old.1.len();
        }
    }

    fn get(
        &mut self,
        pack_id: u32,
        offset: u64,
        out: &mut Vec<u8>,
    ) -> Option<(gix::objs::Kind, usize)> {
        let (kind, data) = self.by_place.get(&(pack_id, offset))?;
        out.clear();
        out.extend_from_slice(data);
        Some((*kind, data.len()))
    }
}

pub(super) struct Commit {
    pub(super) tree: ObjectId,
    pub(super) parents: Vec<ObjectId>,
    time: i64,
}

/// A tree's entries: (name, is a tree, kind and object), sorted by name.
pub(super) type Tree = Arc<[(Box<[u8]>, bool, EntryKind, ObjectId)]>;

/// Trees by id.
pub(super) type Trees = HashMap<ObjectId, Tree>;

/// Commits and trees read through the view's objects, trees kept by id (also git/recent.rs's).
pub(super) struct Walk<'a, 'o> {
    objs: &'a Objects<'o>,
    trees: Trees,
    buf: Vec<u8>,
}

impl<'a, 'o> Walk<'a, 'o> {
    pub(super) fn new(objs: &'a Objects<'o>) -> Walk<'a, 'o> {
        Walk::with_trees(objs, Trees::new())
    }

    /// A walk that starts with the trees an earlier one read (`into_trees`).
    pub(super) fn with_trees(objs: &'a Objects<'o>, trees: Trees) -> Walk<'a, 'o> {
        Walk {
            objs,
            trees,
            buf: Vec::new(),
        }
    }

    pub(super) fn into_trees(self) -> Trees {
        self.trees
    }

    fn log(&mut self, head: ObjectId, max_commits: usize) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        let mut bytes = 0usize;
        let mut seen: HashSet<ObjectId> = HashSet::from([head]);
        let mut met = 0u64; // ties of date: the commit met first comes first
        let mut queue: BinaryHeap<(i64, Reverse<u64>, ObjectId)> = BinaryHeap::new();
        let mut parsed: HashMap<ObjectId, Commit> = HashMap::new();
        let Some(c) = self.commit(&head) else {
            return out;
        };
        queue.push((c.time, Reverse(met), head));
        parsed.insert(head, c);
        while let Some((_, _, id)) = queue.pop() {
            let Some(c) = parsed.remove(&id) else {
                continue;
            };
            let mut parents = Vec::new();
            for p in &c.parents {
                if seen.insert(*p) {
                    if let Some(pc) = self.commit(p) {
                        met += 1;
                        queue.push((pc.time, Reverse(met), *p));
                        parents.push(pc.tree);
                        parsed.insert(*p, pc);
                    }
                } else if let Some(pc) = parsed.get(p) {
                    parents.push(pc.tree);
                } else if let Some(pc) = self.commit(p) {
                    parents.push(pc.tree);
                }
            }
            if c.parents.len() > 1 {
                continue; // a merge: walked through, not listed
            }
            let Some(files) = self.changed(parents.first().copied(), c.tree) else {
                break;
            };
            bytes += files.iter().map(String::len).sum::<usize>();
            out.push(files);
            if out.len() >= max_commits || bytes >= MAX_PATH_BYTES {
                break;
            }
        }
        out
    }

    pub(super) fn commit(&mut self, id: &ObjectId) -> Option<Commit> {
        if self.objs.read(id, &mut self.buf)? != gix::objs::Kind::Commit {
            return None;
        }
        parse_commit(&self.buf)
    }

    pub(super) fn tree(&mut self, id: &ObjectId) -> Option<Tree> {
        if let Some(t) = self.trees.get(id) {
            return Some(t.clone());
        }
        if self.objs.read(id, &mut self.buf)? != gix::objs::Kind::Tree {
            return None;
        }
        let mut entries: Vec<(Box<[u8]>, bool, EntryKind, ObjectId)> = Vec::new();
        for e in gix::objs::TreeRefIter::from_bytes(&self.buf, gix::hash::Kind::Sha1) {
            let e = e.ok()?;
            let kind = e.mode.kind();
            let name: &[u8] = e.filename;
            entries.push((
                Box::from(name),
                kind == EntryKind::Tree,
                kind,
                e.oid.to_owned(),
            ));
        }
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        if self.trees.len() >= MAX_CACHED_TREES {
            self.trees.clear();
        }
        let tree: Tree = entries.into();
        self.trees.insert(*id, tree.clone());
        Some(tree)
    }

    /// The tree of the root asked about inside the commit's tree (None: not there).
    pub(super) fn at_prefix(&mut self, mut id: ObjectId) -> Option<Option<ObjectId>> {
        let prefix = self.objs.prefix().to_vec();
        for name in prefix.split(|&c| c == b'/').filter(|n| !n.is_empty()) {
            let t = self.tree(&id)?;
            match t.binary_search_by(|e| (*e.0).cmp(name)) {
                Ok(i) if t[i].1 => id = t[i].3,
                _ => return Some(None),
            }
        }
        Some(Some(id))
    }

    /// The paths (relative to the root asked about) whose entries differ between the trees of
    /// the parent (None: a root commit) and the commit; None when an object cannot be read.
    fn changed(&mut self, parent: Option<ObjectId>, tree: ObjectId) -> Option<Vec<String>> {
        let old = match parent {
            Some(p) => self.at_prefix(p)?,
            None => None,
        };
        let new = self.at_prefix(tree)?;
        let mut paths = Vec::new();
        self.diff(old, new, &mut Vec::new(), &mut paths, 0)?;
        let mut out: Vec<String> = paths
            .into_iter()
            .filter_map(|p| String::from_utf8(p).ok())
            .collect();
        out.sort_unstable();
        Some(out)
    }

    fn diff(
        &mut self,
        old: Option<ObjectId>,
        new: Option<ObjectId>,
        at: &mut Vec<u8>,
        out: &mut Vec<Vec<u8>>,
        depth: usize,
    ) -> Option<()> {
        if old == new || depth > MAX_DEPTH {
            return Some(());
        }
        let empty: Tree = Arc::from(Vec::new());
        let a = match old {
            Some(id) => self.tree(&id)?,
            None => empty.clone(),
        };
        let b = match new {
            Some(id) => self.tree(&id)?,
            None => empty,
        };
        let (mut i, mut j) = (0, 0);
        while i < a.len() || j < b.len() {
            let order = match (a.get(i), b.get(j)) {
                (Some(x), Some(y)) => x.0.cmp(&y.0),
                (Some(_), None) => std::cmp::Ordering::Less,
                _ => std::cmp::Ordering::Greater,
            };
            let (x, y) = match order {
                std::cmp::Ordering::Less => (a.get(i), None),
                std::cmp::Ordering::Greater => (None, b.get(j)),
                std::cmp::Ordering::Equal => (a.get(i), b.get(j)),
            };
            i += (order != std::cmp::Ordering::Greater) as usize;
            j += (order != std::cmp::Ordering::Less) as usize;
            let name = &x.or(y)?.0;
            let len = at.len();
            if !at.is_empty() {
                at.push(b'/');
            }
            at.extend_from_slice(name);
            // A tree on either side is walked (its files came or went); a file on either side
            // that is not the same entry on the other is listed.
            let tree_of =
                |e: Option<&(Box<[u8]>, bool, EntryKind, ObjectId)>| e.filter(|e| e.1).map(|e| e.3);
            let file_of = |e: Option<&(Box<[u8]>, bool, EntryKind, ObjectId)>| {
                e.filter(|e| !e.1).map(|e| (e.2, e.3))
            };
            self.diff(tree_of(x), tree_of(y), at, out, depth + 1)?;
            if file_of(x) != file_of(y) {
                out.push(at.clone());
            }
            at.truncate(len);
        }
        Some(())
    }
}

/// A commit's tree, parents and committer time (0 when it cannot be read, as git takes it).
fn parse_commit(data: &[u8]) -> Option<Commit> {
    let mut tree = None;
    let mut parents = Vec::new();
    let mut time = 0;
    for line in data.split(|&c| c == b'\n') {
        if line.is_empty() {
            break; // the message follows
        }
        if let Some(hex) = line.strip_prefix(b"tree ") {
            tree = ObjectId::from_hex(hex).ok();
        } else if let Some(hex) = line.strip_prefix(b"parent ") {
            parents.push(ObjectId::from_hex(hex).ok()?);
        } else if let Some(who) = line.strip_prefix(b"committer ") {
            let after = who
                .iter()
                .rposition(|&c| c == b'>')
                .map_or(&who[..0], |i| &who[i + 1..]);
            let secs = after
                .trim_ascii()
                .split(|&c| c == b' ')
                .next()
                .unwrap_or_default();
            time = std::str::from_utf8(secs)
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
        }
    }
    Some(Commit {
        tree: tree?,
        parents,
        time,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::testing::TempTree;
    use std::path::Path;
    use std::process::{Command, Stdio};

    /// What `git log` lists, read with git itself (the reader this module replaced).
    fn git_log(root: &Path, n: usize) -> Vec<Vec<String>> {
        let n = n.to_string();
        let out = Command::new("git")
            .arg("-C")
            .arg(root)
            .args([
                "log",
                "-z",
                "--no-merges",
                "--no-renames",
                "--relative",
                "--name-only",
                "--format=%x1e",
                "-n",
                &n,
                "HEAD",
            ])
            .stderr(Stdio::null())
            .output()
            .unwrap()
            .stdout;
        let mut commits: Vec<Vec<String>> = Vec::new();
        for rec in out.split(|&b| b == 0) {
            let rec = rec.strip_prefix(b"\n").unwrap_or(rec);
            if rec.first() == Some(&0x1e) {
                commits.push(Vec::new());
            } else if !rec.is_empty() {
                commits
                    .last_mut()
                    .unwrap()
                    .push(String::from_utf8(rec.to_vec()).unwrap());
            }
        }
        for c in &mut commits {
            c.sort();
        }
        commits
    }

    /// Run git in `root` as a fixed author, at `date` seconds after a fixed time (git/recent.rs's
    /// tests too).
    pub(crate) fn git(root: &Path, args: &[&str], date: u32) {
        let date = format!("{} +0000", 1_700_000_000 + date);
        let ok = Command::new("git")
            .arg("-C")
            .arg(root)
            .args(args)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .env("GIT_AUTHOR_DATE", &date)
            .env("GIT_COMMITTER_DATE", &date)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(ok.success(), "git {args:?}");
    }

    #[test]
    #[cfg_attr(windows, ignore = "runs git, which a wine prefix has no git.exe for")]
    fn lists_what_git_log_lists() {
        let t = TempTree::with(
            "githistory",
            &[
                ("a.py", "1\n"),
                ("sub/b.py", "1\n"),
                ("sub/deep/c.py", "1\n"),
            ],
        );
        let root = t.path();
        assert!(
            changed_files(&Handle::new(root), 10).is_none(),
            "not a repository"
        );
        git(root, &["init", "-q", "-b", "main"], 0);
        git(root, &["add", "."], 0);
        git(root, &["commit", "-q", "-m", "one"], 1);
        // A branch and a merge; equal dates; a rename; a file that becomes a directory; a mode change.
        git(root, &["checkout", "-q", "-b", "side"], 1);
        t.write("sub/b.py", "2\n");
        git(root, &["commit", "-qam", "side"], 5);
        git(root, &["checkout", "-q", "main"], 5);
        t.write("a.py", "2\n");
        git(root, &["commit", "-qam", "main"], 5);
        git(root, &["merge", "-q", "--no-edit", "side"], 6);
        git(root, &["mv", "sub/deep/c.py", "sub/deep/d.py"], 6);
        git(root, &["commit", "-qm", "rename"], 7);
        std::fs::remove_file(root.join("a.py")).unwrap();
        t.write("a.py/inner.py", "x\n");
        git(root, &["add", "-A"], 7);
        git(root, &["commit", "-qm", "file to dir"], 8);
        git(root, &["update-index", "--chmod=+x", "sub/b.py"], 8);
        git(root, &["commit", "-qm", "mode"], 3); // older than its parent: git's order by date
        let handle = Handle::new(root);
        for n in [1, 3, 100] {
            let (head, got) = changed_files(&handle, n).unwrap();
            assert_eq!(head.len(), 40);
            assert_eq!(got, git_log(root, n), "-n {n}");
        }
        assert_eq!(
            changed_files(&handle, 100).unwrap().1.len(),
            6,
            "five commits and the root, the merge left out"
        );
        // From a directory inside: its paths only, relative to it (git log --relative).
        let sub = Handle::new(&root.join("sub"));
        assert_eq!(
            changed_files(&sub, 100).unwrap().1,
            git_log(&root.join("sub"), 100)
        );
    }

    /// `REPOCTX_HISTORY_ROOT=/path/to/repo cargo test --release --lib git::history -- --ignored`:
    /// the same lists as git's on a real history (this repository's, ruff's).
    #[test]
    #[ignore]
    fn same_as_git_log_on_a_real_history() {
        let Ok(root) = std::env::var("REPOCTX_HISTORY_ROOT") else {
            return;
        };
        let root = Path::new(&root);
        let t = std::time::Instant::now();
        let (_, got) = changed_files(&Handle::new(root), 2000).unwrap();
        let ours = t.elapsed();
        let t = std::time::Instant::now();
        let want = git_log(root, 2000);
        eprintln!(
            "{} commits: in process {ours:?}, git log {:?}",
            got.len(),
            t.elapsed()
        );
        assert_eq!(got.len(), want.len());
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g, w, "commit {i}");
        }
    }
}
