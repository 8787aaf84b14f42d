//! How much of a repository git's view reads at most: past a bound it cannot tell, or empties
//! a cache and fills it again as questions come.

/// The largest index read (a million files make about 100 MiB).
pub const MAX_INDEX_BYTES: u64 = 1 << 30;
/// A file larger than this is not hashed: it reads as changed.
pub const MAX_HASH_BYTES: u64 = 64 << 20;
/// The largest tree, commit or tag object read.
pub const MAX_OBJECT_BYTES: u64 = 64 << 20;
/// The largest of the git directory's own files (HEAD, config, packed-refs …) let through.
pub const MAX_GIT_FILE_BYTES: u64 = 256 << 20;
/// The deepest directory followed, in trees and in the worktree (git's core.maxTreeDepth).
pub const MAX_DEPTH: usize = 4096;
/// Cache bounds: past them the cache is emptied and filled again as questions come.
pub(super) const MAX_CACHED_TREE_ENTRIES: usize = 8_000_000;
pub(super) const MAX_CACHED_HASHES: usize = 2_000_000;
