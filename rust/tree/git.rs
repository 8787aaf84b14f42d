//! git's view of a tree, in process: which directories hold a file that is not what it was
//! at a commit. The answers are those `git diff --name-only --no-renames <commit>` and `git
//! ls-files --others --exclude-standard` give (gitstate.py ran them before), read from the
//! index and the object database with gix, without a subprocess.
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

use crate::tree::ignore::{self as ignorerules, Rules};
use crate::tree::os::{self, now_ns, Key, Meta, PlainDir as Dir, Stat as St};
use gix::hash::ObjectId;
use gix::objs::{Find, FindHeader};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::ffi::OsStr;
use std::fs::{self, Metadata};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

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
const MAX_CACHED_TREE_ENTRIES: usize = 8_000_000;
const MAX_CACHED_HASHES: usize = 2_000_000;
const CONTEXT_FILE: &[u8] = b".context.yaml";

/// What a tree or index entry is, as `git diff` compares it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    File,
    Exec,
    Link,
    Gitlink,
}

/// Why a question has no answer: git could not tell either, or we refuse to look.
#[derive(Debug)]
pub struct CannotTell;

type Answer<T> = Result<T, CannotTell>;

fn cannot<T>(_: T) -> CannotTell {
    CannotTell
}

// --- the index --------------------------------------------------------------------

const ASSUMED: u8 = 1; // assume-unchanged or skip-worktree: git takes the index's word for it
const UNMERGED: u8 = 2; // only conflict stages: git compares the file itself

#[derive(Debug)]
struct IndexEntry {
    name: Box<[u8]>,
    kind: Kind,
    id: ObjectId,
    stat: gix::index::entry::Stat,
    flags: u8,
}

/// The index filed by directory (worktree-relative, "" for the top), each directory's entries
/// sorted by name.
#[derive(Default)]
struct IndexView {
    key: Option<Key>,
    /// The index file's mtime (seconds, nanoseconds): entries not older are racily clean.
    stamp: (u32, u32),
    dirs: HashMap<Box<[u8]>, Vec<IndexEntry>>,
    /// Every directory with an entry at any depth below it (git recurses into these).
    tracked_dirs: HashSet<Box<[u8]>>,
}

impl IndexView {
    fn load(path: &Path) -> Answer<IndexView> {
        let md = match fs::metadata(path) {
            Ok(md) => md,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(IndexView::default()),
            Err(_) => return Err(CannotTell),
        };
        if !md.is_file() || md.len() > MAX_INDEX_BYTES {
            return Err(CannotTell);
        }
        let options = gix::index::decode::Options {
            thread_limit: Some(1),
            alloc_limit_bytes: Some(MAX_INDEX_BYTES as usize),
            ..Default::default()
        };
        let file =
            gix::index::File::at(path, gix::hash::Kind::Sha1, false, options).map_err(cannot)?;
        if file.is_sparse() {
            return Err(CannotTell); // directories for entries: not what the worktree is compared with
        }
        let st = md.stat();
        let stamp = (st.mtime.0 as u32, st.mtime.1 as u32);
        let mut view = IndexView {
            key: Some(Key::of(&md)),
            stamp,
            ..Default::default()
        };
        for e in file.entries() {
            let path: &[u8] = e.path(&file);
            if !clean_path(path) {
                return Err(CannotTell);
            }
            let kind = index_kind(e.mode).ok_or(CannotTell)?;
            let mut flags = 0;
            if e.flags.intersects(
                gix::index::entry::Flags::ASSUME_VALID | gix::index::entry::Flags::SKIP_WORKTREE,
            ) {
                flags |= ASSUMED;
            }
            if e.flags.stage_raw() != 0 {
                flags |= UNMERGED;
            }
            let (dir, name) = split(path);
            let list = view.dirs.entry(dir.into()).or_default();
            match list.last_mut() {
                // Stages of one path: one entry, compared by content; the stage git calls ours
                // (2) gives the kind when there is one.
                Some(last) if *last.name == *name => {
                    if e.flags.stage_raw() == 2 || last.flags & UNMERGED == 0 {
                        last.kind = kind;
                    }
                    last.flags |= flags | UNMERGED;
                }
                _ => list.push(IndexEntry {
                    name: name.into(),
                    kind,
                    id: e.id,
                    stat: e.stat,
                    flags,
                }),
            }
            let mut d = dir;
            while !d.is_empty() && view.tracked_dirs.insert(d.into()) {
                d = split(d).0;
            }
        }
        for list in view.dirs.values_mut() {
            if !list.is_sorted_by(|a, b| a.name < b.name) {
                return Err(CannotTell); // git refuses an unordered index too
            }
        }
        Ok(view)
    }

    fn entries(&self, dir: &[u8]) -> &[IndexEntry] {
        self.dirs.get(dir).map_or(&[], Vec::as_slice)
    }

    fn entry(&self, path: &[u8]) -> Option<&IndexEntry> {
        let (dir, name) = split(path);
        let list = self.entries(dir);
        list.binary_search_by(|e| (*e.name).cmp(name))
            .ok()
            .map(|i| &list[i])
    }

    fn is_gitlink(&self, path: &[u8]) -> bool {
        self.entry(path).is_some_and(|e| e.kind == Kind::Gitlink)
    }

    /// Whether the entry's blob is the file's without reading it (git's stat cache): the stat
    /// it recorded still holds, it is not racily clean, and git did not smudge it (size 0 for
    /// a file that is not empty, git's mark for "racily clean, content changed").
    fn vouches(&self, e: &IndexEntry, md: &St) -> bool {
        stat_matches(&e.stat, md)
            && !self.racy(&e.stat)
            && (e.stat.size != 0 || e.id.as_bytes() == EMPTY_BLOB)
    }

    /// Racily clean: written no earlier than the second the index was (git without USE_NSEC),
    /// so the file may have changed after its stat was taken, within that second.
    fn racy(&self, stat: &gix::index::entry::Stat) -> bool {
        self.stamp.0 != 0 && self.stamp.0 <= stat.mtime.secs
    }
}

fn index_kind(mode: gix::index::entry::Mode) -> Option<Kind> {
    use gix::index::entry::Mode;
    Some(match mode {
        Mode::FILE => Kind::File,
        Mode::FILE_EXECUTABLE => Kind::Exec,
        Mode::SYMLINK => Kind::Link,
        Mode::COMMIT => Kind::Gitlink,
        _ => return None,
    })
}

/// Whether the stat an index entry recorded still holds for the file, as git's
/// `ce_match_stat_basic` tells it (nanoseconds too where the index has them: more files are
/// hashed than git hashes, never fewer). The type and executable bit are checked apart.
fn stat_matches(s: &gix::index::entry::Stat, m: &St) -> bool {
    let nanos = s.mtime.nsecs != 0 || s.ctime.nsecs != 0;
    s.mtime.secs == m.mtime.0 as u32
        && s.ctime.secs == m.ctime.0 as u32
        && (!nanos || (s.mtime.nsecs == m.mtime.1 as u32 && s.ctime.nsecs == m.ctime.1 as u32))
        && s.ino == m.ino as u32
        && s.uid == m.uid
        && s.gid == m.gid
        && s.size == m.size as u32
}

const EMPTY_BLOB: [u8; 20] = [
    0xe6, 0x9d, 0xe2, 0x9b, 0xb2, 0xd1, 0xd6, 0x43, 0x4b, 0x8b, 0x29, 0xae, 0x77, 0x5a, 0xd8, 0xc2,
    0xe4, 0x8c, 0x53, 0x91,
];

// --- paths --------------------------------------------------------------------------

/// (directory, name) of a worktree-relative path; ("", path) at the top.
fn split(path: &[u8]) -> (&[u8], &[u8]) {
    match path.iter().rposition(|&c| c == b'/') {
        Some(i) => (&path[..i], &path[i + 1..]),
        None => (&[], path),
    }
}

fn join(dir: &[u8], name: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(dir.len() + 1 + name.len());
    out.extend_from_slice(dir);
    if !dir.is_empty() {
        out.push(b'/');
    }
    out.extend_from_slice(name);
    out
}

/// A relative path git could hold: no empty, `.`, `..` or `.git` component, no leading `/`.
fn clean_path(path: &[u8]) -> bool {
    !path.is_empty() && path.split(|&c| c == b'/').all(clean_name)
}

fn clean_name(name: &[u8]) -> bool {
    !matches!(name, b"" | b"." | b".." | b".git") && !name.contains(&0)
}

/// Whether `path` is `dir` or lies below it ("" holds everything).
fn under(path: &[u8], dir: &[u8]) -> bool {
    dir.is_empty()
        || (path.starts_with(dir) && (path.len() == dir.len() || path[dir.len()] == b'/'))
}

// --- reading files the repository holds -----------------------------------------------

/// A regular file's bytes (a link followed, as git follows it), at most `max` of them; never
/// blocks on a FIFO nor reads a device.
fn read_regular(path: &Path, max: u64) -> std::io::Result<(Vec<u8>, Metadata)> {
    let mut file = os::open_path(path, true)?;
    let md = file.metadata()?;
    if !md.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    if md.len() > max {
        return Err(std::io::Error::other("too large"));
    }
    let mut data = Vec::with_capacity(md.len() as usize);
    (&mut file).take(max).read_to_end(&mut data)?;
    Ok((data, md))
}

/// The blob id of file `name` in directory `dir`, or None when it cannot be hashed (gone, too
/// large, not regular any more, changed while read): the caller then takes it as changed.
fn hash_file(dir: &Dir, name: &[u8], seen: &St) -> Option<ObjectId> {
    if seen.size > MAX_HASH_BYTES {
        return None;
    }
    let mut file = dir.open_file(name)?;
    let md = file.metadata().ok()?;
    let st = md.stat();
    if !md.is_file() || st.ino != seen.ino || st.dev != seen.dev || md.len() != seen.size {
        return None;
    }
    // Its size in bytes, as git reads it (a file shorter by then: None; one that grew since has
    // a new stat, so it is hashed again next time).
    let mut hasher = gix::hash::hasher(gix::hash::Kind::Sha1);
    hasher.update(format!("blob {}\0", md.len()).as_bytes());
    let mut buf = vec![0u8; (md.len() as usize).clamp(1, 64 << 10)];
    let mut left = md.len();
    while left > 0 {
        let want = buf.len().min(left as usize);
        let n = file.read(&mut buf[..want]).ok()?;
        if n == 0 {
            return None;
        }
        left -= n as u64;
        hasher.update(&buf[..n]);
    }
    hasher.try_finalize().ok()
}

fn hash_link(dir: &Dir, name: &[u8]) -> Option<ObjectId> {
    let target = dir.read_link(name)?;
    let bytes = &target[..];
    let mut hasher = gix::hash::hasher(gix::hash::Kind::Sha1);
    hasher.update(format!("blob {}\0", bytes.len()).as_bytes());
    hasher.update(bytes);
    hasher.try_finalize().ok()
}

/// The entries of a worktree directory but `.git`: (name, is a directory, is a file or symlink).
fn list(dir: &Dir) -> Vec<(Vec<u8>, bool, bool)> {
    let mut out = Vec::new();
    dir.entries(|name, kind| {
        if name == b".git" {
            return;
        }
        let kind = match kind {
            Some(k) => k,
            None => match dir.stat(name) {
                Some(st) => st.kind(),
                None => return,
            },
        };
        let (is_dir, is_file) = match kind {
            os::Kind::Dir => (true, false),
            os::Kind::File | os::Kind::Link => (false, true),
            os::Kind::Other => (false, false),
        };
        out.push((name.to_vec(), is_dir, is_file));
    });
    out
}

// --- where git metadata may be read (docs/security.md, "git's own files") ----------------------

/// The git directory and the common directory (canonical paths) of the worktree whose top is
/// `top` (canonical), when git's view may read them:
/// - `top/.git` a directory (not a link) with no `commondir`: itself, for both;
/// - `top/.git` a file naming a git directory git made for this worktree: a linked worktree's
///   `<common>/worktrees/<id>`, whose `gitdir` names `top/.git` back and whose `commondir`
///   names `<common>`; or a submodule's `<super>/.git/modules/<name>` of a superproject
///   `<super>` whose worktree holds `top`.
///
/// Anything else (a `.git` link, a gitdir file naming another place, a `commondir` of a
/// repository's own): None, and git's view cannot tell.
fn git_dirs(top: &Path) -> Option<(PathBuf, PathBuf)> {
    let dot_git = top.join(".git");
    let md = fs::symlink_metadata(&dot_git).ok()?;
    if md.is_dir() {
        return fs::symlink_metadata(dot_git.join("commondir"))
            .is_err()
            .then(|| (dot_git.clone(), dot_git));
    }
    if !md.is_file() {
        return None;
    }
    let named = |base: &Path, file: &Path| -> Option<PathBuf> {
        let (text, _) = read_regular(file, 64 << 10).ok()?;
        let text = text.strip_prefix(b"gitdir:").unwrap_or(&text).trim_ascii();
        fs::canonicalize(base.join(os_path(text))).ok()
    };
    let git_dir = named(top, &dot_git)?;
    let parent = git_dir.parent()?;
    if parent.file_name() == Some(OsStr::new("worktrees")) {
        let common = parent.parent()?;
        let back = named(&git_dir, &git_dir.join("gitdir"))?;
        let shared = named(&git_dir, &git_dir.join("commondir"))?;
        return (back == dot_git && shared == common)
            .then(|| (git_dir.clone(), common.to_path_buf()));
    }
    let modules = git_dir
        .ancestors()
        .find(|a| a.file_name() == Some(OsStr::new("modules")))?;
    let superproject = modules
        .parent()
        .filter(|p| p.file_name() == Some(OsStr::new(".git")))?
        .parent()?;
    let own = fs::symlink_metadata(git_dir.join("commondir")).is_err();
    (top.starts_with(superproject) && own).then(|| (git_dir.clone(), git_dir))
}

/// Whether a git directory's files can be read by gix without leaving it or hanging: every
/// entry of it and of the directories read when a repository is opened and HEAD resolved
/// (`info`, `objects`, `objects/info`, `objects/pack`, `refs`, `refs/heads`) is a regular file
/// of bounded size, a directory, or a socket (fsmonitor's, never opened): never a link, a
/// FIFO or a device. No `objects/info/alternates` (they name object stores elsewhere). HEAD's
/// branch, reached with no link on the way, is a regular file or absent.
fn git_dir_is_sound(dir: &Path) -> bool {
    let Some(top) = Dir::top(dir) else {
        return false;
    };
    let sound =
        |st: &St| (st.is_file() && st.size <= MAX_GIT_FILE_BYTES) || st.is_dir() || st.is_socket();
    for sub in [
        &b""[..],
        b"info",
        b"objects",
        b"objects/info",
        b"objects/pack",
        b"refs",
        b"refs/heads",
    ] {
        // (each directory's parent was listed first: it is a directory or absent, never a link)
        let Some(d) = top.open(sub) else { continue };
        let mut ok = true;
        d.entries(|name, _| {
            let hooks = sub.is_empty() && name == b"hooks"; // never read; a link to shared hooks is common
            ok &= hooks || d.stat(name).is_none_or(|st| sound(&st));
        });
        if !ok {
            return false;
        }
    }
    if top.stat(b"objects/info/alternates").is_some()
        || top
            .open(b"objects/info")
            .is_some_and(|d| d.stat(b"alternates").is_some())
    {
        return false;
    }
    // HEAD names a branch whose loose file is read next.
    if let Some(head) = top.open_file(b"HEAD").and_then(|f| read_open(f, 4096)) {
        if let Some(name) = head.strip_prefix(b"ref:") {
            let name = name.trim_ascii();
            if !clean_path(name) {
                return false;
            }
            let (parent, file) = split(name);
            if let Some(st) = top.open(parent).and_then(|d| d.stat(file)) {
                return st.is_file() && st.size <= MAX_GIT_FILE_BYTES;
            }
        }
    }
    true
}

/// At most `max` bytes of an opened regular file.
fn read_open(file: fs::File, max: u64) -> Option<Vec<u8>> {
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut data = Vec::new();
    file.take(max).read_to_end(&mut data).ok()?;
    Some(data)
}

/// Whether `dir` is a repository of its own, as git's `is_nonbare_repository_dir` sees it: its
/// `.git` a directory with a valid HEAD, objects and refs, or a file naming one.
/// Nothing outside `within` (the worktree's top) is read: a `.git` file naming a place outside
/// it (a submodule's git directory in the superproject, or anywhere) counts as a repository
/// unread, as git would take a valid one.
fn holds_repository(dir: &Path, within: &Path) -> bool {
    let dot_git = dir.join(".git");
    match fs::symlink_metadata(&dot_git) {
        Ok(md) if md.is_dir() => is_git_dir(&dot_git, within),
        Ok(md) if md.is_file() => match read_regular(&dot_git, 64 << 10) {
            Ok((text, _)) => text.strip_prefix(b"gitdir:").is_some_and(|p| {
                let p = lexical(&dir.join(os_path(p.trim_ascii())));
                !p.starts_with(within) || is_git_dir(&p, within)
            }),
            Err(_) => false,
        },
        _ => false,
    }
}

/// `path` with `.` and `..` taken lexically.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

fn is_git_dir(dir: &Path, within: &Path) -> bool {
    // (a link on the way out of the worktree: not read, and not a repository)
    if !fs::canonicalize(dir).is_ok_and(|d| d.starts_with(within)) {
        return false;
    }
    let Ok((head, _)) = read_regular(&dir.join("HEAD"), 4096) else {
        return false;
    };
    let head = head.trim_ascii();
    let valid_head = head
        .strip_prefix(b"ref:")
        .is_some_and(|r| r.trim_ascii().starts_with(b"refs/"))
        || (head.len() >= 40 && head.iter().all(u8::is_ascii_hexdigit));
    if !valid_head {
        return false;
    }
    let common = match read_regular(&dir.join("commondir"), 4096) {
        Ok((text, _)) => lexical(&dir.join(os_path(text.trim_ascii()))),
        Err(_) => dir.to_path_buf(),
    };
    common.starts_with(within) && common.join("objects").is_dir() && common.join("refs").is_dir()
}

// --- trees ----------------------------------------------------------------------------

#[derive(Debug)]
struct TreeEntry {
    name: Box<[u8]>,
    /// None: a tree (a directory).
    kind: Option<Kind>,
    id: ObjectId,
}

type Tree = Arc<[TreeEntry]>;

#[derive(Default)]
struct Trees {
    by_id: HashMap<ObjectId, Tree>,
    /// The tree each commit (or tag, or tree) asked about resolves to.
    roots: HashMap<ObjectId, ObjectId>,
    entries: usize,
}

// --- ignore rules -----------------------------------------------------------------------

/// The rules of one ignore file and the stat key they were read under (None: absent).
#[derive(Clone)]
struct Held {
    key: Option<Key>,
    rules: Option<Arc<Rules>>,
    /// Read while the file was racy: read again next question.
    trusted: bool,
}

#[derive(Default)]
struct Ignores {
    per_dir: HashMap<Box<[u8]>, Held>,
    info: Option<Held>,
    global: Option<Held>,
}

// --- the repository -----------------------------------------------------------------------

/// Counts of the work done, for tests and benchmarks.
#[derive(Clone, Copy, Default, Debug)]
pub struct Stats {
    pub opens: u64,
    pub index_reads: u64,
    pub trees_read: u64,
    pub files_hashed: u64,
    pub hashes_reused: u64,
    pub ignore_files_read: u64,
}

struct Repo {
    repo: gix::Repository,
    /// The worktree's top, and the root asked about relative to it ("" or "a/b").
    workdir: PathBuf,
    top: Dir,
    prefix: Vec<u8>,
    /// What must keep its stat for this handle to stay right: `<top>/.git`, the configuration
    /// files, and that no directory from the root up to the top grew a `.git` of its own.
    watched: Vec<(PathBuf, Option<Key>)>,
    file_mode: bool,
    excludes_file: Option<PathBuf>,
    /// The common git directory (canonical), whose `info/exclude` is read beneath it.
    common_dir: PathBuf,
    index_path: PathBuf,
    index: Arc<IndexView>,
    index_trusted: bool,
    trees: Trees,
    hashes: HashMap<Box<[u8]>, (Key, ObjectId)>,
    /// Directories found to hold only tracked files, with their stat key and the index's then:
    /// while both hold, no entry came or went and none is untracked (git's untracked cache).
    all_tracked: HashMap<Box<[u8]>, (Key, Key)>,
    ignores: Ignores,
}

/// What a `.git` is: a directory by its identity alone (git writes inside it all the time,
/// moving its times), a file or link by its whole stat.
fn dot_git_key(p: &Path) -> Option<Key> {
    let md = fs::symlink_metadata(p).ok()?;
    let key = Key::of(&md);
    Some(if md.is_dir() {
        Key {
            size: 0,
            mtime: 0,
            ctime: 0,
            ..key
        }
    } else {
        key
    })
}

fn stat_key(p: &Path) -> Option<Key> {
    Key::stat(p)
}

impl Repo {
    /// The repository holding `root` (git's discovery: upwards from it, a `.git` directory or
    /// file, a linked worktree), or None when there is none or it is not sound.
    fn open(root: &Path) -> Answer<Repo> {
        // git -C root: from the directory's physical path.
        let real_root = fs::canonicalize(root).map_err(cannot)?;
        // Before gix reads anything of a git directory on the way up, it must be one git's view
        // may read (git_dirs) and sound.
        let mut checked = None;
        for dir in real_root.ancestors() {
            if fs::symlink_metadata(dir.join(".git")).is_ok() {
                let (git_dir, common) = git_dirs(dir).ok_or(CannotTell)?;
                if !git_dir_is_sound(&git_dir) || (common != git_dir && !git_dir_is_sound(&common))
                {
                    return Err(CannotTell);
                }
                checked = Some(git_dir);
                break;
            }
            // A directory that may itself be a (bare) git directory has its HEAD read.
            match fs::symlink_metadata(dir.join("HEAD")) {
                Ok(md) if !md.is_file() || md.len() > MAX_GIT_FILE_BYTES => return Err(CannotTell),
                _ => {}
            }
        }
        let checked = checked.ok_or(CannotTell)?;
        let options = gix::discover::upwards::Options::default().apply_environment();
        let (path, trust) = gix::discover::upwards_opts(&real_root, options).map_err(cannot)?;
        let (git_dir, workdir) = path.into_repository_and_work_tree_directories();
        let workdir = workdir.ok_or(CannotTell)?; // bare: no worktree to compare
        if fs::canonicalize(&git_dir).ok() != Some(checked) {
            return Err(CannotTell); // (GIT_DIR in the environment, or a change since the check)
        }
        let mut perms = gix::open::Permissions::default();
        perms.config.git_binary = false; // never run git to find its installation's config
        perms.config.includes = false; // no config file the repository names (it could be anything)
        perms.env.git_prefix = gix::sec::Permission::Deny; // GIT_WORK_TREE, GIT_INDEX_FILE: gitstate.py never let git see them
        let opts = gix::open::Options::default()
            .permissions(perms)
            .bail_if_untrusted(true)
            .with(trust);
        let repo = gix::ThreadSafeRepository::open_opts(git_dir, opts)
            .map_err(cannot)?
            .to_thread_local();
        let workdir = fs::canonicalize(&workdir).map_err(cannot)?;
        let prefix = real_root
            .strip_prefix(&workdir)
            .map_err(cannot)?
            .as_os_str();
        let prefix = crate::tree::paths::slashed(os::bytes_of(prefix)).into_owned();
        if !prefix.is_empty() && !clean_path(&prefix) {
            return Err(CannotTell);
        }
        let (file_mode, excludes_file) = {
            let snapshot = repo.config_snapshot();
            let excludes_file = match snapshot.trusted_path("core.excludesFile") {
                Ok(Some(p)) => Some(p),
                Ok(None) => default_excludes_file(),
                Err(_) => return Err(CannotTell),
            };
            (
                snapshot.boolean("core.fileMode").unwrap_or(true),
                excludes_file,
            )
        };
        // git reads config.worktree only with extensions.worktreeConfig (set in a config watched here).
        let worktree_config = repo
            .config_snapshot()
            .boolean("extensions.worktreeConfig")
            .unwrap_or(false);
        let mut watched = vec![(workdir.join(".git"), dot_git_key(&workdir.join(".git")))];
        let mut configs = vec![
            repo.git_dir().join("config"),
            repo.common_dir().join("config"),
        ];
        if worktree_config {
            configs.push(repo.git_dir().join("config.worktree"));
        }
        for config in configs {
            if !watched.iter().any(|(p, _)| *p == config) {
                let key = stat_key(&config);
                watched.push((config, key));
            }
        }
        for dir in real_root.ancestors().take_while(|d| *d != workdir) {
            watched.push((dir.join(".git"), None));
        }
        Ok(Repo {
            top: Dir::top(&workdir).ok_or(CannotTell)?,
            common_dir: fs::canonicalize(repo.common_dir()).map_err(cannot)?,
            index_path: repo.index_path(),
            repo,
            workdir,
            prefix,
            watched,
            file_mode,
            excludes_file,
            index: Arc::new(IndexView::default()),
            index_trusted: false,
            trees: Trees::default(),
            hashes: HashMap::new(),
            all_tracked: HashMap::new(),
            ignores: Ignores::default(),
        })
    }

    /// Whether what the handle was opened on still holds.
    fn still_holds(&self) -> bool {
        self.watched.iter().all(|(p, k)| {
            if p.file_name() == Some(OsStr::new(".git")) {
                dot_git_key(p) == *k
            } else {
                stat_key(p) == *k
            }
        })
    }

    /// The index as it is now: read again when its stat changed (or was racy when read).
    fn refresh_index(&mut self, stats: &mut Stats) -> Answer<()> {
        let key = stat_key(&self.index_path);
        if self.index_trusted && key == self.index.key {
            return Ok(());
        }
        stats.index_reads += 1;
        let view = IndexView::load(&self.index_path)?;
        self.index_trusted =
            view.key.is_some_and(|k| !k.racy(now_ns())) || view.key.is_none() && key.is_none();
        self.index = Arc::new(view);
        Ok(())
    }

    fn head(&self) -> Answer<String> {
        let id = self.repo.head_id().map_err(cannot)?.detach();
        let tree = self.peel(id, gix::objs::Kind::Commit)?;
        Ok(tree.to_string())
    }

    /// `id` peeled through tags to an object of kind `want` (a commit), or for `want` Tree,
    /// the tree of the commit (or the tree itself, as `git diff <tree>` takes it).
    fn peel(&self, mut id: ObjectId, want: gix::objs::Kind) -> Answer<ObjectId> {
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
    fn object(&self, id: &ObjectId, buf: &mut Vec<u8>) -> Answer<gix::objs::Kind> {
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
        if header.size > MAX_OBJECT_BYTES || header.kind == gix::objs::Kind::Blob {
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

    fn tree(&mut self, id: &ObjectId, stats: &mut Stats) -> Answer<Tree> {
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
    fn root_tree(&mut self, commit: &str) -> Answer<ObjectId> {
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
    fn tree_dir(&mut self, root: &ObjectId, dir: &[u8], stats: &mut Stats) -> Answer<Tree> {
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

/// A path git holds as bytes (on Windows, never UTF-8: a name no file has).
fn os_path(bytes: &[u8]) -> PathBuf {
    os::path_of(bytes).unwrap_or_else(|| PathBuf::from("\u{fffd}"))
}

fn default_excludes_file() -> Option<PathBuf> {
    let base = match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        Some(x) => PathBuf::from(x),
        None => PathBuf::from(std::env::var_os("HOME").filter(|v| !v.is_empty())?).join(".config"),
    };
    Some(base.join("git").join("ignore"))
}

// --- one question ---------------------------------------------------------------------

/// Whether git's walk of untracked files reaches a directory's files.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Reach {
    Yes,
    No,
    /// An untracked directory holding a repository of its own: listed itself.
    ItsOwnRepository,
}

/// What one question learns as it goes: which ignore files were checked, which directories
/// are excluded or reached.
struct Ask<'a> {
    repo: &'a mut Repo,
    stats: &'a mut Stats,
    index: Arc<IndexView>,
    tree: ObjectId,
    now: i64,
    budget: ignorerules::Budget,
    checked: HashSet<Box<[u8]>>,
    excluded_dirs: HashMap<Box<[u8]>, bool>,
    reach: HashMap<Box<[u8]>, Reach>,
    plain: HashMap<Box<[u8]>, bool>,
}

impl<'a> Ask<'a> {
    fn new(repo: &'a mut Repo, stats: &'a mut Stats, commit: &str) -> Answer<Ask<'a>> {
        repo.refresh_index(stats)?;
        let tree = repo.root_tree(commit)?;
        Ok(Ask {
            index: repo.index.clone(),
            repo,
            stats,
            tree,
            now: now_ns(),
            budget: ignorerules::Budget::new(),
            checked: HashSet::new(),
            excluded_dirs: HashMap::new(),
            reach: HashMap::new(),
            plain: HashMap::new(),
        })
    }

    fn abs(&self, rel: &[u8]) -> PathBuf {
        if rel.is_empty() {
            self.repo.workdir.clone()
        } else {
            self.repo.workdir.join(os_path(rel))
        }
    }

    // --- the diff side: the commit's tree against the index and the worktree ---

    /// Whether a file of directory `dir` differs from the commit (deleted, added, another
    /// kind or content), `.context.yaml` aside.
    fn dir_differs(&mut self, dir: &[u8], fd: Option<&Dir>) -> Answer<bool> {
        let tree = self.repo.tree_dir(&self.tree.clone(), dir, self.stats)?;
        let index = self.index.clone();
        let entries = index.entries(dir);
        let (mut t, mut i) = (
            tree.iter().filter(|e| e.kind.is_some()).peekable(),
            entries.iter().peekable(),
        );
        loop {
            let (te, ie) = match (t.peek(), i.peek()) {
                (None, None) => return Ok(false),
                (Some(te), Some(ie)) => match te.name.cmp(&ie.name) {
                    std::cmp::Ordering::Less => (t.next(), None),
                    std::cmp::Ordering::Greater => (None, i.next()),
                    std::cmp::Ordering::Equal => (t.next(), i.next()),
                },
                (Some(_), None) => (t.next(), None),
                (None, Some(_)) => (None, i.next()),
            };
            let name = te.map_or_else(|| &ie.unwrap().name, |e| &e.name);
            if **name == *CONTEXT_FILE {
                continue;
            }
            let differs = match (te, ie) {
                (Some(_), None) => true,                                         // deleted
                (None, Some(ie)) => self.worktree(dir, fd, ie, None)?.is_some(), // added, unless gone
                (Some(te), Some(ie)) => match self.worktree(dir, fd, ie, te.kind)? {
                    None => true,
                    Some((kind, id)) => Some(kind) != te.kind || id != Some(te.id),
                },
                (None, None) => unreachable!(),
            };
            if differs {
                return Ok(true);
            }
        }
    }

    /// The worktree's side of an index entry, as `git diff` takes it: None when the file is
    /// gone; else its kind and blob id (None when unknown: it differs). The blob is looked for
    /// only when the kind is `want`, the commit's (otherwise it differs anyway).
    #[allow(clippy::type_complexity)]
    fn worktree(
        &mut self,
        dir: &[u8],
        fd: Option<&Dir>,
        e: &IndexEntry,
        want: Option<Kind>,
    ) -> Answer<Option<(Kind, Option<ObjectId>)>> {
        if e.flags & ASSUMED != 0 {
            return Ok(Some((e.kind, Some(e.id))));
        }
        // No handle: the directory is gone, or a symlink lies on the way (git: removed).
        let Some(fd) = fd else { return Ok(None) };
        let Some(md) = fd.stat(&e.name) else {
            return Ok(None);
        };
        if md.is_dir() {
            return Ok(match e.kind {
                Kind::Gitlink => Some((Kind::Gitlink, Some(e.id))),
                // A directory in a file's place: removed, unless it is a repository (a type change).
                _ if holds_repository(&self.abs(&join(dir, &e.name)), &self.repo.workdir) => {
                    Some((Kind::Gitlink, None))
                }
                _ => None,
            });
        }
        let kind = if md.is_symlink() {
            Kind::Link
        } else if md.is_file() {
            match (self.repo.file_mode, e.kind) {
                (true, _) => {
                    if md.is_executable() {
                        Kind::Exec
                    } else {
                        Kind::File
                    }
                }
                (false, k @ (Kind::File | Kind::Exec)) => k,
                (false, _) => Kind::File,
            }
        } else {
            return Ok(Some((Kind::File, None))); // a FIFO, socket or device: never read
        };
        if e.kind == Kind::Gitlink || want != Some(kind) {
            return Ok(Some((kind, None)));
        }
        if kind == e.kind && e.flags & UNMERGED == 0 && self.index.vouches(e, &md) {
            return Ok(Some((kind, Some(e.id))));
        }
        Ok(Some((kind, self.hash(dir, fd, &e.name, &md, kind))))
    }

    fn hash(&mut self, dir: &[u8], fd: &Dir, name: &[u8], md: &St, kind: Kind) -> Option<ObjectId> {
        let key = md.key();
        let rel = join(dir, name);
        if let Some((k, id)) = self.repo.hashes.get(&*rel) {
            if *k == key {
                self.stats.hashes_reused += 1;
                return Some(*id);
            }
        }
        self.stats.files_hashed += 1;
        let id = if kind == Kind::Link {
            hash_link(fd, name)
        } else {
            hash_file(fd, name, md)
        }?;
        if !key.racy(self.now) {
            if self.repo.hashes.len() >= MAX_CACHED_HASHES {
                self.repo.hashes.clear();
            }
            self.repo.hashes.insert(rel.into(), (key, id));
        }
        Some(id)
    }

    /// Directory `dir` opened with no symlink on the way (also noted for `reach`), or None.
    fn open_dir(&mut self, dir: &[u8]) -> Option<Dir> {
        let fd = self.repo.top.open(dir);
        if fd.is_some() {
            let mut d = dir;
            while !d.is_empty() && self.plain.insert(d.into(), true).is_none() {
                d = split(d).0;
            }
        } else {
            self.plain.insert(dir.into(), false);
        }
        fd
    }

    /// No component of `dir` is a symlink or other non-directory (git's has_symlink_leading_path).
    fn leading_path_is_plain(&mut self, dir: &[u8]) -> bool {
        if dir.is_empty() {
            return true;
        }
        match self.plain.get(dir) {
            Some(plain) => *plain,
            None => self.open_dir(dir).is_some(),
        }
    }

    // --- the untracked side ---

    /// The rules of `dir/.gitignore`, as they are now.
    fn rules_of(&mut self, dir: &[u8]) -> Option<Arc<Rules>> {
        if !self.checked.contains(dir) {
            self.checked.insert(dir.into());
            let path = self.abs(dir).join(".gitignore");
            // git (2.32 on) reads no .gitignore that is a symlink.
            let key = fs::symlink_metadata(&path)
                .ok()
                .filter(|m| m.is_file())
                .map(|m| Key::of(&m));
            let held = self.repo.ignores.per_dir.get(dir);
            if !held.is_some_and(|h| h.trusted && h.key == key) {
                let rules = match key {
                    Some(_) => {
                        self.stats.ignore_files_read += 1;
                        ignorerules::read(&path, &self.budget).and_then(|text| {
                            Rules::parse(&self.abs(dir), &[(&path.display().to_string(), &text)])
                        })
                    }
                    None => None,
                };
                let trusted = key.is_none_or(|k| !k.racy(self.now));
                self.repo.ignores.per_dir.insert(
                    dir.into(),
                    Held {
                        key,
                        rules,
                        trusted,
                    },
                );
            }
        }
        self.repo
            .ignores
            .per_dir
            .get(dir)
            .and_then(|h| h.rules.clone())
    }

    /// info/exclude (read beneath the common directory: a link out of it is not followed) and
    /// core.excludesFile (wherever the configuration names it, links followed, as git does),
    /// as they are now.
    fn outer_rules(&mut self) -> [Option<Arc<Rules>>; 2] {
        if !self.checked.contains(&b"\0outer"[..]) {
            self.checked.insert(b"\0outer"[..].into());
            let sources = [
                Some(self.repo.common_dir.join("info").join("exclude")),
                self.repo.excludes_file.clone(),
            ];
            for (i, path) in sources.into_iter().enumerate() {
                let key = path.as_deref().and_then(stat_key);
                let held = if i == 0 {
                    &self.repo.ignores.info
                } else {
                    &self.repo.ignores.global
                };
                if held.as_ref().is_some_and(|h| h.trusted && h.key == key) {
                    continue;
                }
                let rules = match (&path, key) {
                    (Some(p), Some(_)) => {
                        self.stats.ignore_files_read += 1;
                        let data = if i == 0 {
                            let common = crate::tree::fs::Root::open(&self.repo.common_dir).ok();
                            common.and_then(|c| {
                                c.read(Path::new("info/exclude"), ignorerules::MAX_SCAN_BYTES)
                                    .ok()
                            })
                        } else {
                            read_regular(p, ignorerules::MAX_SCAN_BYTES)
                                .ok()
                                .map(|(data, _)| data)
                        };
                        data.and_then(|data| {
                            let text = String::from_utf8_lossy(&data);
                            Rules::parse(&self.repo.workdir, &[(&p.display().to_string(), &text)])
                        })
                    }
                    _ => None,
                };
                let held = Some(Held {
                    key,
                    rules,
                    trusted: key.is_none_or(|k| !k.racy(self.now)),
                });
                if i == 0 {
                    self.repo.ignores.info = held;
                } else {
                    self.repo.ignores.global = held;
                }
            }
        }
        let rules = |h: &Option<Held>| h.as_ref().and_then(|h| h.rules.clone());
        [
            rules(&self.repo.ignores.info),
            rules(&self.repo.ignores.global),
        ]
    }

    /// Whether git ignores `rel` (a file, or a directory with `is_dir`), its directories above
    /// aside: the deepest .gitignore that speaks of it decides, then info/exclude, then
    /// core.excludesFile.
    fn ignored(&mut self, rel: &[u8], is_dir: bool) -> bool {
        let abs = self.abs(rel);
        let mut dir = split(rel).0;
        loop {
            if let Some(verdict) = self.rules_of(dir).and_then(|r| r.matched(&abs, is_dir)) {
                return verdict;
            }
            if dir.is_empty() {
                break;
            }
            dir = split(dir).0;
        }
        self.outer_rules()
            .iter()
            .flatten()
            .find_map(|r| r.matched(&abs, is_dir))
            .unwrap_or(false)
    }

    fn dir_ignored(&mut self, dir: &[u8]) -> bool {
        if let Some(v) = self.excluded_dirs.get(dir) {
            return *v;
        }
        let v = self.ignored(dir, true);
        self.excluded_dirs.insert(dir.into(), v);
        v
    }

    /// Whether git's walk for untracked files lists the files of `dir`: no directory on the way
    /// (from the worktree's top) is ignored, a symlink, a submodule, or an untracked repository.
    fn reach(&mut self, dir: &[u8]) -> Reach {
        if dir.is_empty() {
            return Reach::Yes;
        }
        if let Some(r) = self.reach.get(dir) {
            return *r;
        }
        let (parent, name) = split(dir);
        let r = if self.reach(parent) != Reach::Yes
            || name == b".git"
            || !self.leading_path_is_plain(dir)
            || self.index.is_gitlink(dir)
            || self.dir_ignored(dir)
        {
            Reach::No
        } else if !self.index.tracked_dirs.contains(dir)
            && holds_repository(&self.abs(dir), &self.repo.workdir)
        {
            Reach::ItsOwnRepository
        } else {
            Reach::Yes
        };
        self.reach.insert(dir.into(), r);
        r
    }

    /// Whether `dir` (reached) holds a file or symlink git neither tracks nor ignores.
    fn has_untracked(&mut self, dir: &[u8], listing: &[(Vec<u8>, bool, bool)]) -> bool {
        let candidates = self.not_tracked(dir, listing);
        candidates
            .into_iter()
            .any(|path| !self.ignored(&path, false))
    }

    /// The files and symlinks of a listing that the index does not hold (`.context.yaml` aside).
    fn not_tracked(&self, dir: &[u8], listing: &[(Vec<u8>, bool, bool)]) -> Vec<Vec<u8>> {
        listing
            .iter()
            .filter(|(name, _, file)| *file && **name != *CONTEXT_FILE)
            .map(|(name, _, _)| join(dir, name))
            .filter(|path| self.index.entry(path).is_none())
            .collect()
    }

    /// Whether the files directly in `dir` are as at the commit, git's way.
    fn dir_changed(&mut self, dir: &[u8]) -> Answer<bool> {
        let fd = self.open_dir(dir);
        if self.dir_differs(dir, fd.as_ref())? {
            return Ok(true);
        }
        // Most directories hold only tracked files: then no ignore rule needs asking, and while
        // neither the directory nor the index changes, no listing either. Without a handle (gone,
        // or reached through a link) git lists nothing there.
        let index_key = self.index.key.filter(|_| self.repo.index_trusted);
        let dir_key = fd.as_ref().and_then(Dir::own).map(|s| s.key());
        if let (Some(d), Some(i)) = (dir_key, index_key) {
            if self.repo.all_tracked.get(dir) == Some(&(d, i)) {
                return Ok(false);
            }
        }
        let listing = fd.map(|fd| list(&fd)).unwrap_or_default();
        if self.index.tracked_dirs.contains(dir) && self.not_tracked(dir, &listing).is_empty() {
            if let (Some(d), Some(i)) = (dir_key.filter(|k| !k.racy(self.now)), index_key) {
                if self.repo.all_tracked.len() >= MAX_CACHED_HASHES {
                    self.repo.all_tracked.clear();
                }
                self.repo.all_tracked.insert(dir.into(), (d, i));
            }
            return Ok(false);
        }
        Ok(match self.reach(dir) {
            Reach::No => false,
            Reach::ItsOwnRepository => true,
            Reach::Yes => self.has_untracked(dir, &listing),
        })
    }

    /// Every directory at or below `top` holding a changed file (or listed itself as an
    /// untracked repository), into `out`.
    fn changed_below(&mut self, top: &[u8], out: &mut BTreeSet<Vec<u8>>) -> Answer<()> {
        // The diff side: every directory of the commit's tree and of the index below `top`.
        let mut dirs: BTreeSet<Vec<u8>> = self
            .index
            .dirs
            .keys()
            .filter(|d| under(d, top))
            .map(|d| d.to_vec())
            .collect();
        let start = self.repo.tree_dir(&self.tree.clone(), top, self.stats)?;
        let mut stack = vec![(top.to_vec(), start, 0usize)];
        while let Some((dir, tree, depth)) = stack.pop() {
            if depth > MAX_DEPTH {
                return Err(CannotTell);
            }
            if tree.iter().any(|e| e.kind.is_some()) {
                dirs.insert(dir.clone());
            }
            for e in tree.iter().filter(|e| e.kind.is_none()) {
                let sub = self.repo.tree(&e.id, self.stats)?;
                stack.push((join(&dir, &e.name), sub, depth + 1));
            }
        }
        for dir in dirs {
            if !out.contains(&dir) {
                let fd = self.open_dir(&dir);
                if self.dir_differs(&dir, fd.as_ref())? {
                    out.insert(dir);
                }
            }
        }
        // The untracked side: git's walk from `top`.
        match self.reach(top) {
            Reach::No => return Ok(()),
            Reach::ItsOwnRepository => {
                out.insert(top.to_vec());
                return Ok(());
            }
            Reach::Yes => {}
        }
        let mut stack = vec![(top.to_vec(), 0usize)];
        while let Some((dir, depth)) = stack.pop() {
            if depth > MAX_DEPTH {
                return Err(CannotTell);
            }
            let listing = self.open_dir(&dir).map(|fd| list(&fd)).unwrap_or_default();
            if !out.contains(&dir) && self.has_untracked(&dir, &listing) {
                out.insert(dir.clone());
            }
            for (name, is_dir, _) in &listing {
                if !is_dir {
                    continue;
                }
                let sub = join(&dir, name);
                if self.index.is_gitlink(&sub) || self.dir_ignored(&sub) {
                    continue;
                }
                if !self.index.tracked_dirs.contains(&*sub)
                    && holds_repository(&self.abs(&sub), &self.repo.workdir)
                {
                    out.insert(sub);
                    continue;
                }
                stack.push((sub, depth + 1));
            }
        }
        Ok(())
    }
}

// --- objects for other readers -----------------------------------------------------------

/// The objects of an opened repository, read with the view's checks (bounded size, loose
/// objects regular files, never a blob).
pub struct Objects<'a> {
    repo: &'a Repo,
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

    /// The root asked about, relative to the worktree's top ("" or "a/b").
    pub fn prefix(&self) -> &[u8] {
        &self.repo.prefix
    }
}

// --- the handle -------------------------------------------------------------------------

/// git's view of one root, kept between questions.
pub struct Handle {
    root: PathBuf,
    state: Mutex<(Option<Repo>, Stats)>,
}

/// A scope ("." or "a/b", relative to the root) as a worktree-relative directory.
fn scope_dir(prefix: &[u8], scope: &str) -> Option<Vec<u8>> {
    let scope = scope.as_bytes();
    if scope == b"." {
        return Some(prefix.to_vec());
    }
    clean_path(scope).then(|| join(prefix, scope))
}

/// A worktree-relative directory as the root-relative name callers use ("." for the root).
fn scope_name(prefix: &[u8], dir: &[u8]) -> Option<Vec<u8>> {
    if dir == prefix {
        return Some(b".".to_vec());
    }
    if prefix.is_empty() {
        return Some(dir.to_vec());
    }
    dir.strip_prefix(prefix)
        .and_then(|r| r.strip_prefix(b"/"))
        .map(<[u8]>::to_vec)
}

impl Handle {
    pub fn new(root: &Path) -> Handle {
        Handle {
            root: root.to_path_buf(),
            state: Mutex::new((None, Stats::default())),
        }
    }

    /// Run `f` on the repository (opened, or opened again when it changed); any error or
    /// panic: None, and the repository is forgotten.
    fn with<T>(&self, f: impl FnOnce(&mut Repo, &mut Stats) -> Answer<T>) -> Option<T> {
        let mut guard = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let (slot, stats) = &mut *guard;
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            if !slot.as_ref().is_some_and(Repo::still_holds) {
                *slot = None;
                stats.opens += 1;
                *slot = Some(Repo::open(&self.root)?);
            }
            f(slot.as_mut().unwrap(), stats)
        }));
        match result {
            Ok(Ok(v)) => Some(v),
            Ok(Err(CannotTell)) => None,
            Err(_) => {
                *slot = None;
                None
            }
        }
    }

    /// The commit checked out, as full hex; None outside a repository or before the first commit.
    pub fn head(&self) -> Option<String> {
        self.with(|repo, _| repo.head())
    }

    /// The directories among or under `scopes` (relative to the root, "." for it) holding a
    /// file that differs from `commit` or that git neither tracks nor ignores; None when git
    /// cannot tell.
    pub fn changed_dirs(&self, commit: &str, scopes: &[String]) -> Option<Vec<PathBuf>> {
        self.with(|repo, stats| {
            let prefix = repo.prefix.clone();
            let mut tops: Vec<Vec<u8>> = scopes
                .iter()
                .map(|s| scope_dir(&prefix, s))
                .collect::<Option<_>>()
                .ok_or(CannotTell)?;
            tops.sort();
            tops.dedup_by(|b, a| under(b, a)); // a scope inside another is covered by it
            let mut ask = Ask::new(repo, stats, commit)?;
            let mut out = BTreeSet::new();
            for top in &tops {
                ask.changed_below(top, &mut out)?;
            }
            Ok(out
                .iter()
                .filter_map(|d| scope_name(&prefix, d))
                .map(|d| os_path(&d))
                .collect())
        })
    }

    /// The scopes among `scopes` whose own files (those directly in them) are as at `commit`:
    /// `changed_dirs` asked only about the scopes themselves; None when git cannot tell.
    pub fn unchanged(&self, commit: &str, scopes: &[String]) -> Option<Vec<String>> {
        self.with(|repo, stats| {
            let prefix = repo.prefix.clone();
            let mut ask = Ask::new(repo, stats, commit)?;
            let mut out = Vec::new();
            for scope in scopes {
                // A scope that cannot be one (`..`, absolute) is never unchanged.
                if let Some(dir) = scope_dir(&prefix, scope) {
                    if !ask.dir_changed(&dir)? {
                        out.push(scope.clone());
                    }
                }
            }
            Ok(out)
        })
    }

    /// Run `f` on the repository's objects (another reader of git: tree/githistory.rs), with
    /// `pack_cache` keeping decoded delta bases while it runs (dropped after); None when there
    /// is no sound repository, `f` answers None, or it panics.
    pub fn objects<T>(
        &self,
        pack_cache: impl Fn() -> Box<gix::odb::cache::PackCache> + Send + Sync + 'static,
        f: impl FnOnce(&Objects) -> Option<T>,
    ) -> Option<T> {
        self.with(|repo, _| {
            repo.repo.objects.set_pack_cache(pack_cache);
            let out = f(&Objects { repo });
            repo.repo.objects.unset_pack_cache();
            out.ok_or(CannotTell)
        })
    }

    /// What the handle has done so far.
    pub fn stats(&self) -> Stats {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TempTree;
    use gix::index::entry::stat::Time;
    use gix::index::entry::Stat;

    fn meta_of(path: &Path) -> St {
        fs::symlink_metadata(path).unwrap().stat()
    }

    fn stat_of(m: &St) -> Stat {
        Stat {
            mtime: Time {
                secs: m.mtime.0 as u32,
                nsecs: m.mtime.1 as u32,
            },
            ctime: Time {
                secs: m.ctime.0 as u32,
                nsecs: m.ctime.1 as u32,
            },
            dev: m.dev as u32,
            ino: m.ino as u32,
            uid: m.uid,
            gid: m.gid,
            size: m.size as u32,
        }
    }

    #[test]
    fn a_recorded_stat_matches_its_file_until_any_field_moves() {
        let tree = TempTree::new("git-stat");
        let dir = tree.path().to_path_buf();
        let file = dir.join("f");
        fs::write(&file, "abc").unwrap();
        let m = meta_of(&file);
        let s = stat_of(&m);
        assert!(stat_matches(&s, &m));
        for change in [
            |s: &mut Stat| s.size += 1,
            |s: &mut Stat| s.mtime.secs += 1,
            |s: &mut Stat| s.mtime.nsecs ^= 1,
            |s: &mut Stat| s.ctime.secs += 1,
            |s: &mut Stat| s.ino += 1,
            |s: &mut Stat| s.uid += 1,
        ] {
            let mut other = s;
            change(&mut other);
            assert!(!stat_matches(&other, &m), "{other:?}");
        }
        // An index written without nanoseconds compares seconds, as git without USE_NSEC.
        let mut whole = s;
        whole.mtime.nsecs = 0;
        whole.ctime.nsecs = 0;
        assert!(stat_matches(&whole, &m));
        // A touch moves the mtime: the entry no longer vouches for the file.
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
        fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(later)
            .unwrap();
        assert!(!stat_matches(&s, &meta_of(&file)));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn entries_not_older_than_the_index_are_racily_clean() {
        let at = |secs| Stat {
            mtime: Time { secs, nsecs: 5 },
            ..Default::default()
        };
        let view = IndexView {
            stamp: (100, 500),
            ..Default::default()
        };
        assert!(!view.racy(&at(99)));
        assert!(
            view.racy(&at(100)),
            "the same second as the index: racy whatever the nanoseconds"
        );
        assert!(view.racy(&at(101)));
        let unknown = IndexView {
            stamp: (0, 0),
            ..Default::default()
        };
        assert!(
            !unknown.racy(&at(100)),
            "git: an index without a timestamp has no racy entries"
        );
    }

    #[test]
    fn an_entry_vouches_for_its_file_only_when_its_stat_holds_and_it_is_not_racy() {
        let tree = TempTree::new("git-vouch");
        let dir = tree.path().to_path_buf();
        let file = dir.join("f");
        fs::write(&file, "same size, other content").unwrap();
        let m = meta_of(&file);
        // The entry names a blob that is not the file's: only the stat cache could say otherwise.
        let other = ObjectId::from_hex(b"ce013625030ba8dba906f756967f9e9ca394464a").unwrap();
        let entry = |stat| IndexEntry {
            name: b"f"[..].into(),
            kind: Kind::File,
            id: other,
            stat,
            flags: 0,
        };
        let written_after = IndexView {
            stamp: (m.mtime.0 as u32 + 1, 0),
            ..Default::default()
        };
        let written_with = IndexView {
            stamp: (m.mtime.0 as u32, 999_999_999),
            ..Default::default()
        };
        // The index was written a second after the file: the entry's stat vouches for it.
        assert!(written_after.vouches(&entry(stat_of(&m)), &m));
        // Written in the same second as the file: racily clean, the file must be read.
        assert!(!written_with.vouches(&entry(stat_of(&m)), &m));
        // Any stat field moved: read.
        let mut moved = stat_of(&m);
        moved.mtime.nsecs ^= 1;
        assert!(!written_after.vouches(&entry(moved), &m));
        // Smudged by git (size 0 recorded for a file that is not empty): read.
        let empty = dir.join("e");
        fs::write(&empty, "").unwrap();
        let em = meta_of(&empty);
        let mut smudged = entry(stat_of(&em));
        smudged.stat.size = 0;
        let after_empty = IndexView {
            stamp: (em.mtime.0 as u32 + 1, 0),
            ..Default::default()
        };
        assert!(
            !after_empty.vouches(&smudged, &em),
            "size 0 and not the empty blob"
        );
        smudged.id = ObjectId::from_bytes_or_panic(&EMPTY_BLOB);
        assert!(
            after_empty.vouches(&smudged, &em),
            "an empty file recorded as empty"
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn blob_ids_are_gits() {
        let tree = TempTree::new("git-hash");
        let dir = tree.path().to_path_buf();
        fs::write(dir.join("hello"), "hello\n").unwrap();
        fs::write(dir.join("empty"), "").unwrap();
        let handle = Dir::top(&dir).unwrap();
        let id = |p: &str| {
            hash_file(&handle, p.as_bytes(), &meta_of(&dir.join(p)))
                .unwrap()
                .to_string()
        };
        assert_eq!(id("hello"), "ce013625030ba8dba906f756967f9e9ca394464a");
        assert_eq!(id("empty"), "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
        assert_eq!(
            ObjectId::from_bytes_or_panic(&EMPTY_BLOB).to_string(),
            id("empty")
        );
        // A file that grew since its stat was taken is not hashed.
        let before = meta_of(&dir.join("hello"));
        fs::write(dir.join("hello"), "hello, world\n").unwrap();
        assert!(hash_file(&handle, b"hello", &before).is_none());
    }

    #[test]
    #[cfg_attr(
        windows,
        ignore = "wine 8's CreateSymbolicLinkW is a stub: it returns success and makes no link"
    )]
    fn a_links_blob_id_is_its_targets() {
        let tree = TempTree::new("git-hash-link");
        let dir = tree.path().to_path_buf();
        crate::tree::os::symlink("target/file", dir.join("link")).unwrap();
        let handle = Dir::top(&dir).unwrap();
        // `printf target/file | git hash-object --stdin`
        assert_eq!(
            hash_link(&handle, b"link").unwrap().to_string(),
            "c29deff6f4a0e273a803f77d7605e317e3552ee8"
        );
    }

    #[test]
    #[cfg(unix)] // FIFOs and /dev/zero
    fn a_fifo_or_device_in_the_git_directory_is_not_sound() {
        let tree = TempTree::new("git-sound");
        let dir = tree.path().to_path_buf();
        let git = dir.join(".git");
        fs::create_dir_all(git.join("objects/pack")).unwrap();
        fs::create_dir_all(git.join("refs/heads")).unwrap();
        fs::write(git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        assert!(git_dir_is_sound(&git));
        os::symlink("/dev/zero", git.join("config")).unwrap();
        assert!(!git_dir_is_sound(&git));
        fs::remove_file(git.join("config")).unwrap();
        os::make_fifo(&git.join("refs/heads/main"));
        assert!(!git_dir_is_sound(&git), "HEAD's branch is a FIFO");
        fs::remove_file(git.join("refs/heads/main")).unwrap();
        // A FIFO or a link anywhere gix reads from when it opens the repository.
        for place in [
            "sharedindex.0123",
            "packed-refs",
            "info/exclude",
            "objects/info/commit-graph",
            "objects/pack/x.idx",
        ] {
            fs::create_dir_all(git.join(place).parent().unwrap()).unwrap();
            os::make_fifo(&git.join(place));
            assert!(!git_dir_is_sound(&git), "a FIFO at {place}");
            fs::remove_file(git.join(place)).unwrap();
            os::symlink(dir.join("HEAD"), git.join(place)).unwrap();
            assert!(!git_dir_is_sound(&git), "a link at {place}");
            fs::remove_file(git.join(place)).unwrap();
        }
        fs::remove_dir_all(git.join("info")).unwrap();
        os::symlink(&dir, git.join("info")).unwrap();
        assert!(!git_dir_is_sound(&git), "info linked out");
        fs::remove_file(git.join("info")).unwrap();
        fs::write(git.join("objects/info/alternates"), "/elsewhere/objects\n").unwrap();
        assert!(
            !git_dir_is_sound(&git),
            "alternates name another object store"
        );
        fs::remove_file(git.join("objects/info/alternates")).unwrap();
        os::symlink("/shared/hooks", git.join("hooks")).unwrap();
        assert!(git_dir_is_sound(&git), "hooks are never read");
    }

    #[test]
    fn git_metadata_is_read_only_where_git_itself_puts_it_for_this_worktree() {
        let tree = TempTree::new("git-dirs-rule");
        let base = fs::canonicalize(tree.path()).unwrap();
        let repo = |at: &Path| {
            fs::create_dir_all(at.join("objects")).unwrap();
            fs::create_dir_all(at.join("refs")).unwrap();
            fs::write(at.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        };
        // A worktree of its own.
        repo(&base.join("main/.git"));
        assert_eq!(
            git_dirs(&base.join("main")),
            Some((base.join("main/.git"), base.join("main/.git")))
        );
        // A linked worktree: its gitdir names this `.git` back, its commondir the main one.
        let wt = base.join("main/.git/worktrees/feature");
        fs::create_dir_all(&wt).unwrap();
        fs::create_dir_all(base.join("feature")).unwrap();
        fs::write(
            base.join("feature/.git"),
            format!("gitdir: {}\n", wt.display()),
        )
        .unwrap();
        fs::write(
            wt.join("gitdir"),
            format!("{}\n", base.join("feature/.git").display()),
        )
        .unwrap();
        fs::write(wt.join("commondir"), "../..\n").unwrap();
        assert_eq!(
            git_dirs(&base.join("feature")),
            Some((wt.clone(), base.join("main/.git")))
        );
        // Another checkout pointing at that worktree's git directory is not the one it names back.
        fs::create_dir_all(base.join("hostile")).unwrap();
        fs::write(
            base.join("hostile/.git"),
            format!("gitdir: {}\n", wt.display()),
        )
        .unwrap();
        assert_eq!(git_dirs(&base.join("hostile")), None);
        // A submodule: its git directory in the superproject that holds it; another repository's: no.
        let module = base.join("main/.git/modules/lib");
        repo(&module);
        fs::create_dir_all(base.join("main/lib")).unwrap();
        fs::write(base.join("main/lib/.git"), "gitdir: ../.git/modules/lib\n").unwrap();
        assert_eq!(
            git_dirs(&base.join("main/lib")),
            Some((module.clone(), module.clone()))
        );
        fs::write(
            base.join("hostile/.git"),
            format!("gitdir: {}\n", module.display()),
        )
        .unwrap();
        assert_eq!(git_dirs(&base.join("hostile")), None);
        // Any other place, a commondir of a repository's own, a `.git` link: no.
        repo(&base.join("elsewhere"));
        fs::write(
            base.join("hostile/.git"),
            format!("gitdir: {}\n", base.join("elsewhere").display()),
        )
        .unwrap();
        assert_eq!(git_dirs(&base.join("hostile")), None);
        fs::write(base.join("main/.git/commondir"), "../../elsewhere\n").unwrap();
        assert_eq!(git_dirs(&base.join("main")), None);
        fs::remove_file(base.join("hostile/.git")).unwrap();
        os::symlink(base.join("elsewhere"), base.join("hostile/.git")).unwrap();
        assert_eq!(git_dirs(&base.join("hostile")), None);
    }

    #[test]
    fn a_directory_is_opened_only_with_no_symlink_on_the_way() {
        let tree = TempTree::new("git-dirs");
        let dir = tree.path().to_path_buf();
        fs::create_dir_all(dir.join("a/b")).unwrap();
        fs::write(dir.join("a/b/f"), "x").unwrap();
        crate::tree::os::symlink("a", dir.join("link")).ok();
        let top = Dir::top(&dir).unwrap();
        let b = top.open(b"a/b").unwrap();
        assert!(b.stat(b"f").is_some_and(|s| s.is_file()));
        assert!(top.open(b"link/b").is_none(), "through a symlink");
        assert!(top.open(b"a/b/f").is_none(), "not a directory");
        assert!(top.open(b"a/missing").is_none());
        // A handle lists again from the start, however often it was listed.
        let names = |d: &Dir| list(d).into_iter().map(|(n, _, _)| n).collect::<Vec<_>>();
        assert_eq!(names(&b), vec![b"f".to_vec()]);
        assert_eq!(names(&b), vec![b"f".to_vec()]);
        drop((b, top)); // (Windows removes no directory a handle holds open)
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn paths_and_scopes() {
        assert_eq!(split(b"a/b/c"), (&b"a/b"[..], &b"c"[..]));
        assert_eq!(split(b"c"), (&b""[..], &b"c"[..]));
        assert!(under(b"a/b", b"a") && under(b"a", b"a") && under(b"x", b""));
        assert!(!under(b"ab", b"a"));
        assert!(
            clean_path(b"a/b")
                && !clean_path(b"a/../b")
                && !clean_path(b"/a")
                && !clean_path(b"a/.git/x")
        );
        assert_eq!(scope_dir(b"sub", "."), Some(b"sub".to_vec()));
        assert_eq!(scope_dir(b"sub", "a"), Some(b"sub/a".to_vec()));
        assert_eq!(scope_dir(b"", "../x"), None);
        assert_eq!(scope_name(b"sub", b"sub"), Some(b".".to_vec()));
        assert_eq!(scope_name(b"sub", b"sub/a"), Some(b"a".to_vec()));
        assert_eq!(scope_name(b"sub", b"subway"), None);
    }
}
