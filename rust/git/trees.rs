//! Trees as the view keeps them: each tree's entries sorted by name, shared by object id, and
//! the tree each commit asked about resolves to.

use crate::git::kind::Kind;
use gix::hash::ObjectId;
use std::collections::HashMap;
use std::sync::Arc;

#[derive(Debug)]
pub(super) struct TreeEntry {
    pub(super) name: Box<[u8]>,
    /// None: a tree (a directory).
    pub(super) kind: Option<Kind>,
    pub(super) id: ObjectId,
}

pub(super) type Tree = Arc<[TreeEntry]>;

#[derive(Default)]
pub(super) struct Trees {
    pub(super) by_id: HashMap<ObjectId, Tree>,
    /// The tree each commit (or tag, or tree) asked about resolves to.
    pub(super) roots: HashMap<ObjectId, ObjectId>,
    pub(super) entries: usize,
}
