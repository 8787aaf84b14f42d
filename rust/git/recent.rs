//! The texts files had before their last changes, read in process through the view's objects
//! (as git/history.rs reads commits): along HEAD's first parents, newest first, a file's
//! version changes where its blob differs from the parent's. tasks/recent.rs diffs them with
//! the file now to tell which of its lines changed lately.

use crate::git::history::{DeltaBases, Walk};
use crate::git::view::Handle;
use gix::hash::ObjectId;
use gix::objs::tree::EntryKind;

/// The largest earlier text read (the task index leaves larger files out).
pub const MAX_TEXT_BYTES: u64 = 1 << 20;

/// For each of `paths` (relative to the root asked about), the texts it had before each of its
/// last `versions` changes, newest first, looking back at most `max_commits` commits along
/// HEAD's first parents. A file the walk sees come into being ends with an empty text; a file
/// not in HEAD's tree, or one whose earlier blob cannot be read, has what was found before it.
/// None outside a repository or when HEAD cannot be read.
pub fn earlier_texts(
    handle: &Handle,
    paths: &[&str],
    versions: usize,
    max_commits: usize,
) -> Option<Vec<Vec<Vec<u8>>>> {
    handle.objects(
        || Box::new(DeltaBases::default()),
        |objs| {
            let mut walk = Walk::new(objs);
            let mut c = walk.commit(&objs.head()?)?;
            let mut blobs: Vec<Option<ObjectId>> = paths
                .iter()
                .map(|p| blob_at(&mut walk, c.tree, p))
                .collect();
            let mut out: Vec<Vec<Vec<u8>>> = vec![Vec::new(); paths.len()];
            // A path is followed while it has a blob and wants more versions.
            let mut open: Vec<bool> = blobs.iter().map(Option::is_some).collect();
            let mut buf = Vec::new();
            for _ in 0..max_commits {
                if !open.contains(&true) {
                    break;
                }
                let Some(parent) = c.parents.first().and_then(|p| walk.commit(p)) else {
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
                    let before = blob_at(&mut walk, parent.tree, path);
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
                c = parent;
            }
            Some(out)
        },
    )
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
        assert!(earlier_texts(&Handle::new(root), &["src/a.py"], 3, 10).is_none());
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
        let got = earlier_texts(&h, &["src/a.py", "b.py", "gone.py", "src"], 5, 100).unwrap();
        assert_eq!(got[0], [b"v2\n".to_vec(), b"v1\n".to_vec(), Vec::new()]);
        assert_eq!(got[1], [b"v2\n".to_vec(), b"b\n".to_vec(), Vec::new()]);
        assert!(got[2].is_empty() && got[3].is_empty(), "not a file at HEAD");
        let two = earlier_texts(&h, &["src/a.py"], 2, 100).unwrap();
        assert_eq!(two[0], [b"v2\n".to_vec(), b"v1\n".to_vec()]);
        let near = earlier_texts(&h, &["src/a.py"], 5, 2).unwrap();
        assert_eq!(near[0], [b"v2\n".to_vec()], "two commits back at most");
    }
}
