//! The names of the files dotcontext gives a meaning to, wherever a walk meets them.

/// A directory's context file: never counted among the files it describes.
pub const CONTEXT_FILE: &str = ".context.yaml";
/// The root's configuration (its `ignore` patterns join the walk's rules).
pub const CONFIG_FILE: &str = ".context.config.yaml";
