//! What a task index is built with, beside the tree itself: the index (tasks/index.rs) keeps
//! it, and a saved index (tasks/store.rs) is used only by a build with the same.

use std::path::PathBuf;

#[derive(Clone)]
pub struct Options {
    /// The config's ignore patterns (`.context.config.yaml`), as the walk takes them.
    pub extra_ignore: Vec<String>,
    /// The annotation prefix of `.contextia/config.yaml` ("@").
    pub prefix: String,
    /// The `.contextia/` directory serving the root, if there is one.
    pub contextia: Option<PathBuf>,
}
