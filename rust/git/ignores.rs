//! The ignore files git reads for untracked files, held by their stat keys between questions.

use crate::tree::ignore::Rules;
use crate::tree::os::Key;
use std::collections::HashMap;
use std::sync::Arc;

/// The rules of one ignore file and the stat key they were read under (None: absent).
#[derive(Clone)]
pub(super) struct Held {
    pub(super) key: Option<Key>,
    pub(super) rules: Option<Arc<Rules>>,
    /// Read while the file was racy: read again next question.
    pub(super) trusted: bool,
}

#[derive(Default)]
pub(super) struct Ignores {
    pub(super) per_dir: HashMap<Box<[u8]>, Held>,
    pub(super) info: Option<Held>,
    pub(super) global: Option<Held>,
}
