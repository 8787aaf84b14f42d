//! The texts files had before their last changes, read in process through the view's objects
//! (as git/history.rs reads commits): along HEAD's first parents, newest first, a file's
//! version changes where its blob differs from the parent's. tasks/recent.rs diffs them with
//! the file now to tell which of its lines changed lately.

use crate::git::history::{DeltaBases, Trees, Walk};
use crate::git::objects::Objects;
use crate::git::view::Handle;
use gix::hash::ObjectId;
use gix::objs::tree::EntryKind;

/// The largest earlier text read (the task index leaves larger files out).
pub const MAX_TEXT_BYTES: u64 = 1 << 20;
/// Trees kept between walks; past it, forgotten (on ruff, the 200 commits' trees along the
/// paths of 250 of its files are 1,271).
const MAX_KEPT_TREES: usize = 4096;

/// What walks for earlier texts read, kept for the next walk while HEAD stays: every new
/// top file is looked for in the same commits' trees (the root's, `crates/`'s), which a walk
/// of its own would read and decode again.
#[derive(Default)]
pub struct Kept {
    head: Option<ObjectId>,
    /// HEAD and its first parents as far as read, newest first: each one's tree and first
    /// parent (None: a root commit).
    line: Vec<(ObjectId, Option<ObjectId>)>,
    trees: Trees,
}

impl Kept {
    /// The tree of the `k`-th commit along HEAD's first parents (0: HEAD), read when not yet
    /// kept; None past a root commit or a parent that cannot be read (a shallow clone's edge,
    /// tried again by the next walk).
    fn tree(&mut self, walk: &mut Walk, head: ObjectId, k: usize) -> Option<ObjectId> {
        while self.line.len() <= k {
            let id = match self.line.last() {
                None => head,
                Some((_, parent)) => (*parent)?,
            };
            let c = walk.commit(&id)?;
            self.line.push((c.tree, c.parents.first().copied()));
        }
        Some(self.line[k].0)
    }
}

/// For each of `paths` (relative to the root asked about), the texts it had before each of its
/// last `versions` changes, newest first, looking back at most `max_commits` commits along
/// HEAD's first parents. A file the walk sees come into being ends with an empty text; a file
/// not in HEAD's tree, or one whose earlier blob cannot be read, has what was found before it.
/// None outside a repository or when HEAD cannot be read. `kept` holds what the walk read
/// for the next one (forgotten when HEAD moves).
pub fn earlier_texts(
    handle: &Handle,
    paths: &[&str],
    versions: usize,
    max_commits: usize,
    kept: &mut Kept,
) -> Option<Vec<Vec<Vec<u8>>>> {
    handle.objects(
        || Box::new(DeltaBases::default()),
        |objs| {
            let head = objs.head()?;
            if kept.head != Some(head) {
                *kept = Kept {
                    head: Some(head),
                    ..Kept::default()
                };
            }
            let mut walk = Walk::with_trees(objs, std::mem::take(&mut kept.trees));
            let out = walk_back(objs, &mut walk, kept, head, paths, versions, max_commits);
            kept.trees = walk.into_trees();
            if kept.trees.len() > MAX_KEPT_TREES {
                kept.trees.clear();
            }
            out
        },
    )
}

fn walk_back(
    objs: &Objects,
    walk: &mut Walk,
    kept: &mut Kept,
    head: ObjectId,
    paths: &[&str],
    versions: usize,
    max_commits: usize,
) -> Option<Vec<Vec<Vec<u8>>>> {
    let tree = kept.tree(walk, head, 0)?;
    let mut blobs: Vec<Option<ObjectId>> = paths.iter().map(|p| blob_at(walk, tree, p)).collect();
    let mut out: Vec<Vec<Vec<u8>>> = vec![Vec::new(); paths.len()];
    // A path is followed while it has a blob and wants more versions.
    let mut open: Vec<bool> = blobs.iter().map(Option::is_some).collect();
    let mut buf = Vec::new();
    for k in 0..max_commits {
        if !open.contains(&true) {
            break;
        }
        let Some(parent) = kept.tree(walk, head, k + 1) else {
            // A root commit (or a shallow edge): what it holds came into being there.
            for (i, _) in paths.iter().enumerate().filter(|(i, _)| open[*i]) {
                out[i].push(Vec::new());
            }
            break;
        };
        for (i, path) in paths.iter().enumerate() {
            if !open[i] {
                continue;
            }
            let before = blob_at(walk, parent, path);
            if before == blobs[i] {
                continue;
            }
            match before {
                None => {
                    out[i].push(Vec::new());
                    open[i] = false;
                }
                Some(id) => {
                    if objs.blob(&id, &mut buf, MAX_TEXT_BYTES).is_none() {
                        open[i] = false;
                        continue;
                    }
                    out[i].push(std::mem::take(&mut buf));
                    open[i] = out[i].len() < versions;
                }
            }
            blobs[i] = before;
        }
    }
    Some(out)
}

/// The blob of `path` in the tree of a commit (None: not there, or not a file).
fn blob_at(walk: &mut Walk, tree: ObjectId, path: &str) -> Option<ObjectId> {
    let mut id = walk.at_prefix(tree)??;
    let mut names = path.split('/').peekable();
    while let Some(name) = names.next() {
        let t = walk.tree(&id)?;
        let i = t.binary_search_by(|e| (*e.0).cmp(name.as_bytes())).ok()?;
        let (_, is_tree, kind, oid) = &t[i];
        match (names.peek().is_some(), is_tree) {
            (true, true) => id = *oid,
            (false, false) if matches!(kind, EntryKind::Blob | EntryKind::BlobExecutable) => {
                return Some(*oid)
            }
            _ => return None,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::history::tests::git;
    use crate::testing::TempTree;

    #[test]
    #[cfg_attr(windows, ignore = "runs git, which a wine prefix has no git.exe for")]
    fn the_texts_before_each_change_newest_first() {
        let t = TempTree::with("gitrecent", &[("src/a.py", "v1\n"), ("b.py", "b\n")]);
        let root = t.path();
        let mut kept = Kept::default(); // shared by every walk below, as a server's questions share it
        let no_repo = earlier_texts(&Handle::new(root), &["src/a.py"], 3, 10, &mut kept);
        assert!(no_repo.is_none());
        git(root, &["init", "-q", "-b", "main"], 0);
        git(root, &["add", "."], 0);
        git(root, &["commit", "-qm", "one"], 1);
        for (i, v) in ["v2\n", "v3\n"].into_iter().enumerate() {
            let date = 2 * i as u32 + 2;
            t.write("src/a.py", v);
            git(root, &["commit", "-qam", v], date);
            t.write("b.py", v); // a commit that leaves a.py as it was
            git(root, &["commit", "-qam", "b"], date + 1);
        }
        let h = Handle::new(root);
        let all = ["src/a.py", "b.py", "gone.py", "src"];
        let got = earlier_texts(&h, &all, 5, 100, &mut kept).unwrap();
        assert_eq!(got[0], [b"v2\n".to_vec(), b"v1\n".to_vec(), Vec::new()]);
        assert_eq!(got[1], [b"v2\n".to_vec(), b"b\n".to_vec(), Vec::new()]);
        assert!(got[2].is_empty() && got[3].is_empty(), "not a file at HEAD");
        let two = earlier_texts(&h, &["src/a.py"], 2, 100, &mut kept).unwrap();
        assert_eq!(two[0], [b"v2\n".to_vec(), b"v1\n".to_vec()]);
        let near = earlier_texts(&h, &["src/a.py"], 5, 2, &mut kept).unwrap();
        assert_eq!(near[0], [b"v2\n".to_vec()], "two commits back at most");
        let fresh = earlier_texts(&h, &all, 5, 100, &mut Kept::default()).unwrap();
        assert_eq!(earlier_texts(&h, &all, 5, 100, &mut kept).unwrap(), fresh);
        // HEAD moves: what was kept for the old HEAD is not the line walked now.
        t.write("src/a.py", "v4\n");
        git(root, &["commit", "-qam", "v4"], 9);
        let moved = earlier_texts(&h, &["src/a.py"], 2, 100, &mut kept).unwrap();
        assert_eq!(moved[0], [b"v3\n".to_vec(), b"v2\n".to_vec()]);
    }
}
