//! The one way into git: every read of a repository's metadata, index, objects and history is
//! made here, in process with gix, never by a `git` subprocess. OS calls go through `tree/`.
//!
//! Two readers: git's view of a tree (`view`, the `Handle` callers hold, over `status`, `repo`,
//! `discover`, `index`, `objects`, `trees`, `files`, `ignores`, `paths`) and its history
//! (`history`: the files each commit changed, read through the view's objects; `recent`: the
//! texts a file had before its last changes).
//!
//! The view tells which directories hold a file that is not what it was at a commit. The
//! answers are those `git diff --name-only --no-renames <commit>` and `git ls-files --others
//! --exclude-standard` give (gitstate.py ran them before), read from the index and the object
//! database.
//!
//! A serving process keeps one `Handle` per root, and in it:
//! - the repository (gix: configuration, references, loose and packed objects), opened again
//!   when `.git` or the configuration changes;
//! - the index, read again only when its stat changes, filed by directory;
//! - trees by object id (a commit's trees are mostly its parent's);
//! - the blob id of each file it hashed, by the file's stat key;
//! - each directory's `.gitignore` rules, by the file's stat key;
//!
//! so a second question costs stats (the files of the directories asked about, a listing of
//! each, the ignore files above them), not reads.
//!
//! What decides, for each path of a directory, as git decides it:
//! - in the commit and not in the index: deleted, changed;
//! - in the index and not in the commit: added, changed, unless it is gone from the worktree;
//! - in both: the worktree's kind and blob against the commit's. The worktree's are the index
//!   entry's when the entry's stat matches the file and it is not racily clean (git's stat
//!   cache: an entry whose mtime is not older than the index file, or one git smudged to size
//!   0, is checked by content); otherwise the file is hashed as a blob (a symlink: the text of
//!   its target). With `core.fileMode` false the executable bit is not looked at. An entry
//!   marked assume-unchanged or skip-worktree is the index's, as git takes it. A gitlink
//!   (submodule) is unchanged unless its directory is gone or is not a directory.
//! - a file or symlink that the index does not hold and that git does not ignore (nested
//!   `.gitignore`, `info/exclude`, `core.excludesFile`) is untracked, so changed; an untracked
//!   directory holding a repository of its own is listed itself, as `ls-files` lists it.
//!
//! `.context.yaml` files never count. Where git would convert a file before hashing it (a
//! clean filter, eol conversion, `ident`, a working-tree encoding) the raw bytes are hashed,
//! so a file that equals the blob only after conversion reads changed: stale, which is safe,
//! never falsely fresh. Nothing is written: git refreshed the index's stat cache as it went.
//!
//! The repository may be hostile. git metadata is read only where git itself puts it for
//! this worktree (`git_dirs`, docs/security.md "git's own files"), and before gix opens it the
//! entries it reads first (HEAD, config, packed-refs, the index, `info/`, `objects/`, `refs/`
//! …) must be regular files of bounded size or directories, never a link, a FIFO or a
//! device, with no `alternates`; the index is read by gix with its
//! checksum verified and an allocation limit; trees, commits and tags over `MAX_OBJECT_BYTES`
//! are refused, loose objects must be regular files; a file over `MAX_HASH_BYTES` reads as
//! changed without being read; depth is bounded; and any error or panic below answers "git
//! cannot tell" (None) for that question.

pub mod answer;
pub mod bounds;
pub mod discover;
pub mod files;
pub mod history;
pub mod ignores;
pub mod index;
pub mod kind;
pub mod objects;
pub mod paths;
pub mod recent;
pub mod repo;
pub mod status;
pub mod trees;
pub mod view;
