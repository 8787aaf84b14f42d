//! A repository's objects read with the view's checks (bounded size, loose objects regular
//! files, a blob only when asked for one by its bound): commits peeled to trees, trees kept by id, and `Objects` for other
//! readers (git/history.rs).

use crate::git::answer::{cannot, Answer, CannotTell};
use crate::git::bounds::{MAX_CACHED_TREE_ENTRIES, MAX_OBJECT_BYTES};
use crate::git::kind::Kind;
use crate::git::paths::clean_name;
use crate::git::repo::{Repo, Stats};
use crate::git::trees::{Tree, TreeEntry, Trees};
use gix::hash::ObjectId;
use gix::objs::{Find, FindHeader};
use std::fs;
use std::sync::Arc;

impl Repo {
    /// `id` peeled through tags to an object of kind `want` (a commit), or for `want` Tree,
    /// the tree of the commit (or the tree itself, as `git diff <tree>` takes it).
    pub(super) fn peel(&self, mut id: ObjectId, want: gix::objs::Kind) -> Answer<ObjectId> {
        let mut buf = Vec::new();
        for _ in 0..16 {
            let kind = self.object(&id, &mut buf)?;
            match (kind, want) {
                (k, w) if k == w => return Ok(id),
                (gix::objs::Kind::Tag, _) => {
                    id = gix::objs::TagRefIter::from_bytes(&buf, gix::hash::Kind::Sha1)
                        .target_id()
                        .map_err(cannot)?;
                }
                (gix::objs::Kind::Commit, gix::objs::Kind::Tree) => {
                    id = gix::objs::CommitRefIter::from_bytes(&buf, gix::hash::Kind::Sha1)
                        .tree_id()
                        .map_err(cannot)?;
                }
                _ => return Err(CannotTell),
            }
        }
        Err(CannotTell)
    }

    /// Read one object into `buf` (a tree, commit or tag of bounded size, from a regular
    /// loose file or a pack), returning its kind.
    pub(super) fn object(&self, id: &ObjectId, buf: &mut Vec<u8>) -> Answer<gix::objs::Kind> {
        self.object_if(id, buf, |kind, size| {
            size <= MAX_OBJECT_BYTES && kind != gix::objs::Kind::Blob
        })
    }

    /// Read one object into `buf` when its header's kind and size pass `accept`.
    fn object_if(
        &self,
        id: &ObjectId,
        buf: &mut Vec<u8>,
        accept: impl Fn(gix::objs::Kind, u64) -> bool,
    ) -> Answer<gix::objs::Kind> {
        let hex = id.to_string();
        let loose = self
            .repo
            .objects
            .store_ref()
            .path()
            .join(&hex[..2])
            .join(&hex[2..]);
        if let Ok(md) = fs::symlink_metadata(&loose) {
            if !md.is_file() {
                return Err(CannotTell);
            }
        }
        let header = self
            .repo
            .objects
            .try_header(id)
            .map_err(cannot)?
            .ok_or(CannotTell)?;
        if !accept(header.kind, header.size) {
            return Err(CannotTell);
        }
        let data = self
            .repo
            .objects
            .try_find(id, buf)
            .map_err(cannot)?
            .ok_or(CannotTell)?;
        Ok(data.kind)
    }

    pub(super) fn tree(&mut self, id: &ObjectId, stats: &mut Stats) -> Answer<Tree> {
        if let Some(t) = self.trees.by_id.get(id) {
            return Ok(t.clone());
        }
        let mut buf = Vec::new();
        if self.object(id, &mut buf)? != gix::objs::Kind::Tree {
            return Err(CannotTell);
        }
        stats.trees_read += 1;
        let mut entries = Vec::new();
        for e in gix::objs::TreeRefIter::from_bytes(&buf, gix::hash::Kind::Sha1) {
            let e = e.map_err(cannot)?;
            let name: &[u8] = e.filename;
            if !clean_name(name) || name.contains(&b'/') {
                return Err(CannotTell);
            }
            use gix::objs::tree::EntryKind;
            let kind = match e.mode.kind() {
                EntryKind::Tree => None,
                EntryKind::Blob => Some(Kind::File),
                EntryKind::BlobExecutable => Some(Kind::Exec),
                EntryKind::Link => Some(Kind::Link),
                EntryKind::Commit => Some(Kind::Gitlink),
            };
            entries.push(TreeEntry {
                name: name.into(),
                kind,
                id: e.oid.to_owned(),
            });
        }
        // git's tree order puts `a/` after `a.b`; by plain bytes for lookups here. Two entries
        // of one name (a crafted tree) cannot be told apart: refused.
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        if entries.windows(2).any(|w| w[0].name == w[1].name) {
            return Err(CannotTell);
        }
        if self.trees.entries + entries.len() > MAX_CACHED_TREE_ENTRIES {
            self.trees = Trees::default();
        }
        self.trees.entries += entries.len();
        let tree: Tree = entries.into();
        self.trees.by_id.insert(*id, tree.clone());
        Ok(tree)
    }

    /// The tree of what `commit` names (a full hex object id: a commit, a tag of one, a tree).
    pub(super) fn root_tree(&mut self, commit: &str) -> Answer<ObjectId> {
        if commit.len() != 40 {
            return Err(CannotTell);
        }
        let id = ObjectId::from_hex(commit.as_bytes()).map_err(cannot)?;
        if let Some(t) = self.trees.roots.get(&id) {
            return Ok(*t);
        }
        let tree = self.peel(id, gix::objs::Kind::Tree)?;
        self.trees.roots.insert(id, tree);
        Ok(tree)
    }

    /// The entries of directory `dir` in the tree `root` (empty when it is not a directory there).
    pub(super) fn tree_dir(
        &mut self,
        root: &ObjectId,
        dir: &[u8],
        stats: &mut Stats,
    ) -> Answer<Tree> {
        let mut tree = self.tree(root, stats)?;
        if dir.is_empty() {
            return Ok(tree);
        }
        for name in dir.split(|&c| c == b'/') {
            let next = match tree.binary_search_by(|e| (*e.name).cmp(name)) {
                Ok(i) if tree[i].kind.is_none() => tree[i].id,
                _ => return Ok(Arc::from(Vec::new())),
            };
            tree = self.tree(&next, stats)?;
        }
        Ok(tree)
    }
}

/// The objects of an opened repository, read with the view's checks (bounded size, loose
/// objects regular files, blobs only through `blob`).
pub struct Objects<'a> {
    pub(super) repo: &'a Repo,
}

impl Objects<'_> {
    /// The commit checked out.
    pub fn head(&self) -> Option<ObjectId> {
        let id = self.repo.repo.head_id().ok()?.detach();
        self.repo.peel(id, gix::objs::Kind::Commit).ok()
    }

    /// Read a commit, tree or tag into `buf`; its kind, or None when it cannot be read.
    pub fn read(&self, id: &ObjectId, buf: &mut Vec<u8>) -> Option<gix::objs::Kind> {
        self.repo.object(id, buf).ok()
    }

    /// Read a blob of at most `max` bytes into `buf` (a file's text at a commit, for
    /// git/recent.rs); None when it is not a blob, is larger, or cannot be read.
    pub fn blob(&self, id: &ObjectId, buf: &mut Vec<u8>, max: u64) -> Option<()> {
        let blob = gix::objs::Kind::Blob;
        (self
            .repo
            .object_if(id, buf, |k, size| k == blob && size <= max)
            .ok()?
            == blob)
            .then_some(())
    }

    /// The root asked about, relative to the worktree's top ("" or "a/b").
    pub fn prefix(&self) -> &[u8] {
        &self.repo.prefix
    }
}
