//! dotcontext's scopes: what `.context.yaml` derives from the sources of a tree (`sources`,
//! behind `ScopeSources`). The table of scopes itself is the tree's walk (tree/walk.rs).

pub mod sources;
