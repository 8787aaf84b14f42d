//! Every difference between the operating systems the core runs on, behind `cfg` here (and in
//! `fs.rs` and `watch.rs`, which build on it): one stat record and the one stat key made from
//! it, the one racy-clock window, the one way to open a directory beneath another with no link
//! on the way (`PlainDir`) and to list it, files opened without blocking, and paths as bytes.
//! No module outside `tree/` names `libc`, `rustix` or `std::os` (tests/base/test_layering.py).

use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// A file changed this recently (ns) may change again without its stat changing, so what was
/// read from it is not kept. Two seconds: the coarsest mtime a desktop file system keeps (FAT),
/// and wider than git's racy-clean second and any clock tick of ext4, APFS or NTFS.
pub const RACY_NS: i64 = 2_000_000_000;

/// Now, in nanoseconds since the epoch, on the clock file times are written with (in a test,
/// the time `pin_clock` set on this thread, if any).
pub fn now_ns() -> i64 {
    #[cfg(test)]
    if let Some(at) = PINNED.with(|p| p.get()) {
        return at;
    }
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

#[cfg(test)]
thread_local! {
    static PINNED: std::cell::Cell<Option<i64>> = const { std::cell::Cell::new(None) };
}

/// For a test: `now_ns` on this thread says `at` (None: the real clock again), so what the
/// racy window decides does not depend on how long the machine took.
#[cfg(test)]
pub fn pin_clock(at: Option<i64>) {
    PINNED.with(|p| p.set(at));
}

/// What an entry is, its link not followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Dir,
    Link,
    Other,
}

impl Kind {
    /// What a directory entry's type says it is (its link not followed).
    pub fn of(t: &cap_std::fs::FileType) -> Kind {
        if t.is_symlink() {
            Kind::Link
        } else if t.is_dir() {
            Kind::Dir
        } else if t.is_file() {
            Kind::File
        } else {
            Kind::Other
        }
    }

    pub fn letter(self) -> &'static str {
        match self {
            Kind::File => "f",
            Kind::Dir => "d",
            Kind::Link => "l",
            Kind::Other => "o",
        }
    }
}

// POSIX's file-type bits, which every OS's mode is given in (Windows' made up from attributes).
const S_IFMT: u32 = 0o170000;
const S_IFDIR: u32 = 0o040000;
const S_IFREG: u32 = 0o100000;
const S_IFLNK: u32 = 0o120000;

/// One stat record. Times are (seconds, nanoseconds) since the epoch. On Windows `dev`, `ino`,
/// `uid` and `gid` are 0 (std has no stable way to ask), `ctime` is the creation time (as git
/// for Windows records it), and the mode is made from the attributes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stat {
    pub dev: u64,
    pub ino: u64,
    pub mode: u32,
    pub nlink: u64,
    pub uid: u32,
    pub gid: u32,
    pub size: u64,
    pub atime: (i64, i64),
    pub mtime: (i64, i64),
    pub ctime: (i64, i64),
}

fn ns((secs, nanos): (i64, i64)) -> i64 {
    secs.saturating_mul(1_000_000_000).saturating_add(nanos)
}

impl Stat {
    pub fn kind(&self) -> Kind {
        match self.mode & S_IFMT {
            S_IFREG => Kind::File,
            S_IFDIR => Kind::Dir,
            S_IFLNK => Kind::Link,
            _ => Kind::Other,
        }
    }

    pub fn is_dir(&self) -> bool {
        self.kind() == Kind::Dir
    }

    pub fn is_file(&self) -> bool {
        self.kind() == Kind::File
    }

    pub fn is_symlink(&self) -> bool {
        self.kind() == Kind::Link
    }

    /// A socket (fsmonitor's in `.git`): opening one fails at once, it never blocks.
    pub fn is_socket(&self) -> bool {
        self.mode & S_IFMT == 0o140000
    }

    pub fn is_executable(&self) -> bool {
        self.mode & 0o100 != 0
    }

    pub fn atime_ns(&self) -> i64 {
        ns(self.atime)
    }

    pub fn mtime_ns(&self) -> i64 {
        ns(self.mtime)
    }

    pub fn ctime_ns(&self) -> i64 {
        ns(self.ctime)
    }

    pub fn key(&self) -> Key {
        Key {
            dev: self.dev,
            ino: self.ino,
            size: self.size,
            mode: self.mode,
            mtime: self.mtime_ns(),
            ctime: self.ctime_ns(),
        }
    }
}

/// The one stat key: what was read from a path holds while its key does. The change time
/// catches an mtime put back after an edit, the inode a file replaced by a rename.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct Key {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mode: u32,
    pub mtime: i64,
    pub ctime: i64,
}

impl Key {
    pub fn of(m: &impl Meta) -> Key {
        m.stat().key()
    }

    /// The key of a path now (a final link itself, not its target); None when it cannot be read.
    pub fn lstat(path: &Path) -> Option<Key> {
        std::fs::symlink_metadata(path).ok().map(|m| Key::of(&m))
    }

    /// The key of what a path names now (links followed).
    pub fn stat(path: &Path) -> Option<Key> {
        std::fs::metadata(path).ok().map(|m| Key::of(&m))
    }

    /// Changed so recently (by `now`, ns) that it may change again without its key changing.
    pub fn racy(&self, now: i64) -> bool {
        self.mtime.max(self.ctime) >= now.saturating_sub(RACY_NS)
    }
}

/// Metadata the stat record is read from: std's and cap-std's.
pub trait Meta {
    fn stat(&self) -> Stat;
}

#[cfg(unix)]
macro_rules! unix_meta {
    ($t:ty, $ext:path) => {
        impl Meta for $t {
            fn stat(&self) -> Stat {
                use $ext as _;
                Stat {
                    dev: self.dev(),
                    ino: self.ino(),
                    mode: self.mode(),
                    nlink: self.nlink(),
                    uid: self.uid(),
                    gid: self.gid(),
                    size: self.size(),
                    atime: (self.atime(), self.atime_nsec()),
                    mtime: (self.mtime(), self.mtime_nsec()),
                    ctime: (self.ctime(), self.ctime_nsec()),
                }
            }
        }
    };
}

#[cfg(unix)]
unix_meta!(std::fs::Metadata, std::os::unix::fs::MetadataExt);
#[cfg(unix)]
unix_meta!(cap_std::fs::Metadata, cap_std::fs::MetadataExt);

#[cfg(windows)]
fn since_epoch(t: io::Result<SystemTime>) -> (i64, i64) {
    match t.ok().map(|t| t.duration_since(UNIX_EPOCH)) {
        Some(Ok(d)) => (d.as_secs() as i64, i64::from(d.subsec_nanos())),
        Some(Err(e)) => {
            let d = e.duration();
            (
                -(d.as_secs() as i64) - 1,
                1_000_000_000 - i64::from(d.subsec_nanos()),
            )
        }
        None => (0, 0),
    }
}

#[cfg(windows)]
fn windows_stat(
    (link, dir, file): (bool, bool, bool),
    readonly: bool,
    size: u64,
    times: [io::Result<SystemTime>; 3],
) -> Stat {
    // (std's and cap-std's is_symlink are true of every name-surrogate reparse point: junctions too)
    let mode = if link {
        S_IFLNK | 0o777
    } else if dir {
        S_IFDIR | 0o755
    } else if file {
        S_IFREG | if readonly { 0o444 } else { 0o644 }
    } else {
        0
    };
    let [atime, mtime, ctime] = times.map(since_epoch);
    Stat {
        mode,
        nlink: 1,
        size,
        atime,
        mtime,
        ctime,
        ..Stat::default()
    }
}

#[cfg(windows)]
impl Meta for std::fs::Metadata {
    fn stat(&self) -> Stat {
        let t = self.file_type();
        let kind = (t.is_symlink(), t.is_dir(), t.is_file());
        windows_stat(
            kind,
            self.permissions().readonly(),
            self.len(),
            [self.accessed(), self.modified(), self.created()],
        )
    }
}

#[cfg(windows)]
impl Meta for cap_std::fs::Metadata {
    fn stat(&self) -> Stat {
        let std = |t: io::Result<cap_std::time::SystemTime>| t.map(|t| t.into_std());
        let t = self.file_type();
        let kind = (t.is_symlink(), t.is_dir(), t.is_file());
        let times = [
            std(self.accessed()),
            std(self.modified()),
            std(self.created()),
        ];
        windows_stat(kind, self.permissions().readonly(), self.len(), times)
    }
}

// --- paths as bytes -------------------------------------------------------------------------

/// A name's bytes: the OS's own on Unix, UTF-8 (WTF-8 for unpaired surrogates) on Windows.
pub fn bytes_of(name: &OsStr) -> &[u8] {
    name.as_encoded_bytes()
}

/// The path named by bytes (as git and the index hold them). On Windows they are taken as
/// UTF-8, as git for Windows writes them; None when they are not.
pub fn path_of(bytes: &[u8]) -> Option<PathBuf> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Some(PathBuf::from(OsStr::from_bytes(bytes)))
    }
    #[cfg(not(unix))]
    {
        std::str::from_utf8(bytes).ok().map(PathBuf::from)
    }
}

// --- error numbers --------------------------------------------------------------------------

/// The error numbers the Python side is handed (its `errno` module has the same values).
pub mod errno {
    #[cfg(unix)]
    pub use libc::{EFBIG, EINVAL, EISDIR, ELOOP, ENOTDIR, EPERM};
    // The C runtime's values on Windows (errno.h of the UCRT and of mingw-w64).
    #[cfg(windows)]
    pub const EPERM: i32 = 1;
    #[cfg(windows)]
    pub const ENOTDIR: i32 = 20;
    #[cfg(windows)]
    pub const EISDIR: i32 = 21;
    #[cfg(windows)]
    pub const EINVAL: i32 = 22;
    #[cfg(windows)]
    pub const EFBIG: i32 = 27;
    #[cfg(windows)]
    pub const ELOOP: i32 = 114;
}

/// Whether an error says the path (or a directory on its way) does not exist.
pub fn is_missing(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::NotFound
        || e.raw_os_error() == Some(errno::ENOTDIR)
        || e.kind() == io::ErrorKind::NotADirectory
}

// --- files opened without blocking ------------------------------------------------------------

/// Open options that never wait on a FIFO nor take a terminal, for reading.
pub fn reading(opts: &mut cap_std::fs::OpenOptions) -> &mut cap_std::fs::OpenOptions {
    opts.read(true);
    #[cfg(unix)]
    {
        use cap_std::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC);
    }
    opts
}

/// A file opened for reading by its path, never blocking on a FIFO; with `follow` false a
/// final link is refused (ELOOP on Unix; a link or junction on Windows: InvalidInput).
pub fn open_path(path: &Path, follow: bool) -> io::Result<std::fs::File> {
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let nofollow = if follow { 0 } else { libc::O_NOFOLLOW };
        opts.custom_flags(nofollow | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC);
    }
    #[cfg(windows)]
    if !follow && std::fs::symlink_metadata(path)?.file_type().is_symlink() {
        return Err(io::Error::from_raw_os_error(errno::ELOOP));
    }
    opts.open(path)
}

/// `open_path` of a single name beneath a directory handle: never blocking on a FIFO, a final
/// link refused as `open_path` refuses it.
pub fn open_in(dir: &cap_std::fs::Dir, name: &str) -> io::Result<std::fs::File> {
    let mut opts = cap_std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use cap_std::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC);
    }
    #[cfg(windows)]
    if dir.symlink_metadata(name)?.file_type().is_symlink() {
        return Err(io::Error::from_raw_os_error(errno::ELOOP));
    }
    Ok(dir.open_with(name, &opts)?.into_std())
}

/// Whether an open failed because a final link was refused.
pub fn is_link_refused(e: &io::Error) -> bool {
    e.raw_os_error() == Some(errno::ELOOP)
}

// --- a directory beneath another, with no link on the way ----------------------------------

/// A directory opened beneath another with no symlink (on Windows, no reparse point) on the
/// way: what git's `has_symlink_leading_path` asks. Its entries are then looked at by name,
/// relative to it, never through a link.
pub struct PlainDir(imp::Handle);

impl PlainDir {
    /// A directory by its path (links on the way followed: the caller chose it).
    pub fn top(path: &Path) -> Option<PlainDir> {
        imp::top(path).map(PlainDir)
    }

    /// `rel` (`/`-separated, "" for this directory itself) beneath this one; None when it is
    /// missing, not a directory, or reached through a link.
    pub fn open(&self, rel: &[u8]) -> Option<PlainDir> {
        imp::open(&self.0, rel).map(PlainDir)
    }

    /// The stat of `name` in this directory (a link itself, not followed).
    pub fn stat(&self, name: &[u8]) -> Option<Stat> {
        imp::stat(&self.0, name)
    }

    /// The directory's own stat.
    pub fn own(&self) -> Option<Stat> {
        imp::own(&self.0)
    }

    /// File `name` of this directory opened for reading: never a link followed, never
    /// blocking on a FIFO.
    pub fn open_file(&self, name: &[u8]) -> Option<std::fs::File> {
        imp::open_file(&self.0, name)
    }

    /// The target of link `name` of this directory, as bytes.
    pub fn read_link(&self, name: &[u8]) -> Option<Vec<u8>> {
        imp::read_link(&self.0, name)
    }

    /// Each entry's name and kind as the directory says it (None: it does not say; `.` and
    /// `..` left out), from the start however often it was listed.
    pub fn entries(&self, mut f: impl FnMut(&[u8], Option<Kind>)) {
        imp::entries(&self.0, &mut f)
    }

    /// `entries`, each with a way to its stat (a link itself, not followed) that costs nothing
    /// until asked: the listing's own record where the OS lists with one (Windows' find data),
    /// else one stat relative to this directory (no walk down a path from the root).
    pub fn entries_stat(&self, mut f: impl FnMut(&[u8], Option<Kind>, EntryStat<'_>)) {
        imp::entries_stat(&self.0, &mut f)
    }
}

/// An entry's stat, asked for by `PlainDir::entries_stat`'s caller.
pub type EntryStat<'a> = &'a mut dyn FnMut() -> Option<Stat>;
/// What `PlainDir::entries_stat` hands each entry to.
type EachStat<'a> = &'a mut dyn FnMut(&[u8], Option<Kind>, EntryStat<'_>);

#[cfg(unix)]
mod imp {
    use super::{Kind, Stat};
    use rustix::fs::{AtFlags, FileType, Mode, OFlags};
    use std::os::fd::OwnedFd;
    use std::path::Path;

    pub type Handle = OwnedFd;

    const DIR: OFlags = OFlags::RDONLY
        .union(OFlags::DIRECTORY)
        .union(OFlags::NONBLOCK)
        .union(OFlags::CLOEXEC);

    pub fn top(path: &Path) -> Option<OwnedFd> {
        rustix::fs::open(path, DIR, Mode::empty()).ok()
    }

    pub fn open(top: &OwnedFd, rel: &[u8]) -> Option<OwnedFd> {
        if rel.is_empty() {
            return rustix::fs::openat(top, c".", DIR, Mode::empty()).ok();
        }
        #[cfg(target_os = "linux")]
        {
            use rustix::fs::ResolveFlags;
            use rustix::io::Errno;
            match rustix::fs::openat2(
                top,
                rel,
                DIR,
                Mode::empty(),
                ResolveFlags::NO_SYMLINKS | ResolveFlags::BENEATH,
            ) {
                Ok(fd) => return Some(fd),
                // Without openat2 (old kernels, some sandboxes): the walk below.
                Err(Errno::NOSYS | Errno::PERM | Errno::INVAL | Errno::TOOBIG) => {}
                Err(_) => return None, // missing, not a directory, or a link on the way
            }
        }
        // One component at a time, none of them followed if a link.
        let mut dir = open(top, b"")?;
        for name in rel.split(|&c| c == b'/') {
            if matches!(name, b"" | b"." | b"..") {
                return None;
            }
            dir = rustix::fs::openat(&dir, name, DIR | OFlags::NOFOLLOW, Mode::empty()).ok()?;
        }
        Some(dir)
    }

    #[allow(clippy::unnecessary_cast)] // the field types differ from target to target
    fn of(st: &rustix::fs::Stat) -> Stat {
        Stat {
            dev: st.st_dev as u64,
            ino: st.st_ino as u64,
            mode: st.st_mode as u32,
            nlink: st.st_nlink as u64,
            uid: st.st_uid as u32,
            gid: st.st_gid as u32,
            size: st.st_size as u64,
            atime: (st.st_atime as i64, st.st_atime_nsec as i64),
            mtime: (st.st_mtime as i64, st.st_mtime_nsec as i64),
            ctime: (st.st_ctime as i64, st.st_ctime_nsec as i64),
        }
    }

    pub fn stat(dir: &OwnedFd, name: &[u8]) -> Option<Stat> {
        rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
            .ok()
            .map(|s| of(&s))
    }

    pub fn own(dir: &OwnedFd) -> Option<Stat> {
        rustix::fs::fstat(dir).ok().map(|s| of(&s))
    }

    pub fn open_file(dir: &OwnedFd, name: &[u8]) -> Option<std::fs::File> {
        let flags =
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
        rustix::fs::openat(dir, name, flags, Mode::empty())
            .ok()
            .map(std::fs::File::from)
    }

    pub fn read_link(dir: &OwnedFd, name: &[u8]) -> Option<Vec<u8>> {
        rustix::fs::readlinkat(dir, name, Vec::new())
            .ok()
            .map(|c| c.into_bytes())
    }

    pub fn entries(dir: &OwnedFd, f: &mut dyn FnMut(&[u8], Option<Kind>)) {
        // (read_from opens the directory afresh, so every listing starts at its first entry)
        let Ok(list) = rustix::fs::Dir::read_from(dir) else {
            return;
        };
        for entry in list {
            let Ok(entry) = entry else { return };
            let name = entry.file_name().to_bytes();
            if matches!(name, b"." | b"..") {
                continue;
            }
            let kind = match entry.file_type() {
                FileType::RegularFile => Some(Kind::File),
                FileType::Directory => Some(Kind::Dir),
                FileType::Symlink => Some(Kind::Link),
                FileType::Unknown => None,
                _ => Some(Kind::Other),
            };
            f(name, kind);
        }
    }

    pub fn entries_stat(dir: &OwnedFd, f: super::EachStat<'_>) {
        entries(dir, &mut |name, kind| {
            f(name, kind, &mut || stat(dir, name))
        });
    }
}

#[cfg(windows)]
mod imp {
    use super::{Kind, Meta, Stat};
    use cap_std::ambient_authority;
    use cap_std::fs::Dir;
    use std::path::Path;

    pub type Handle = Dir;

    fn name_of(bytes: &[u8]) -> Option<&str> {
        std::str::from_utf8(bytes)
            .ok()
            .filter(|n| !matches!(*n, "" | "." | "..") && !n.contains(['/', '\\', ':']))
    }

    pub fn top(path: &Path) -> Option<Dir> {
        Dir::open_ambient_dir(path, ambient_authority()).ok()
    }

    /// One component at a time, each refused when it is a link or junction (cap-std keeps the
    /// open beneath the directory whatever changes between the look and the open).
    pub fn open(top: &Dir, rel: &[u8]) -> Option<Dir> {
        let mut dir = top.try_clone().ok()?;
        if rel.is_empty() {
            return Some(dir);
        }
        for name in rel.split(|&c| c == b'/') {
            let name = name_of(name)?;
            if !dir.symlink_metadata(name).ok()?.is_dir() {
                return None;
            }
            dir = dir.open_dir(name).ok()?;
        }
        Some(dir)
    }

    pub fn stat(dir: &Dir, name: &[u8]) -> Option<Stat> {
        dir.symlink_metadata(name_of(name)?).ok().map(|m| m.stat())
    }

    pub fn own(dir: &Dir) -> Option<Stat> {
        dir.dir_metadata().ok().map(|m| m.stat())
    }

    pub fn open_file(dir: &Dir, name: &[u8]) -> Option<std::fs::File> {
        let name = name_of(name)?;
        if !dir.symlink_metadata(name).ok()?.is_file() {
            return None;
        }
        dir.open(name).ok().map(|f| f.into_std())
    }

    pub fn read_link(dir: &Dir, name: &[u8]) -> Option<Vec<u8>> {
        let target = dir.read_link_contents(name_of(name)?).ok()?;
        Some(target.to_str()?.replace('\\', "/").into_bytes())
    }

    pub fn entries(dir: &Dir, f: &mut dyn FnMut(&[u8], Option<Kind>)) {
        entries_stat(dir, &mut |name, kind, _| f(name, kind));
    }

    /// The stat from the listing's find data (as std's `DirEntry::metadata`), not a handle
    /// opened on each file.
    pub fn entries_stat(dir: &Dir, f: super::EachStat<'_>) {
        let Ok(list) = dir.entries() else { return };
        for entry in list.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            let kind = entry.file_type().ok().map(|t| Kind::of(&t));
            f(name.as_bytes(), kind, &mut || {
                entry.metadata().ok().map(|m| m.stat())
            });
        }
    }
}

// --- for the tests: links and FIFOs ----------------------------------------------------------

/// A symbolic link at `at` to `target` (on Windows a directory link when the target, taken
/// from the link's directory, is a directory).
#[cfg(test)]
pub fn symlink(target: impl AsRef<Path>, at: impl AsRef<Path>) -> io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(target, at)
    }
    #[cfg(windows)]
    {
        let (target, at) = (target.as_ref(), at.as_ref());
        if at.parent().unwrap_or(Path::new("")).join(target).is_dir() {
            std::os::windows::fs::symlink_dir(target, at)
        } else {
            std::os::windows::fs::symlink_file(target, at)
        }
    }
}

/// Sets the modification time of a file or a directory. Windows opens a directory only with
/// FILE_FLAG_BACKUP_SEMANTICS, and sets a time only through a handle that may write attributes.
#[cfg(test)]
pub fn set_mtime(path: &Path, time: SystemTime) -> io::Result<()> {
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(windows)]
    {
        use std::os::windows::fs::OpenOptionsExt;
        const FILE_WRITE_ATTRIBUTES: u32 = 0x100;
        const FILE_FLAG_BACKUP_SEMANTICS: u32 = 0x0200_0000;
        opts.access_mode(FILE_WRITE_ATTRIBUTES)
            .custom_flags(FILE_FLAG_BACKUP_SEMANTICS);
    }
    opts.open(path)?.set_modified(time)
}

/// A FIFO at `path` (Unix only: Windows has none in its file system).
#[cfg(all(test, unix))]
pub fn make_fifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `c` is a NUL-terminated path that lives through the call.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o600) },
        0,
        "mkfifo {}",
        path.display()
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_was_read_is_kept_only_from_files_older_than_the_racy_window() {
        let key = |t| Key {
            dev: 0,
            ino: 0,
            size: 0,
            mode: 0,
            mtime: t,
            ctime: t,
        };
        let now = 10 * RACY_NS;
        assert!(key(now).racy(now));
        assert!(key(now - RACY_NS + 1).racy(now));
        assert!(!key(now - RACY_NS - 1).racy(now));
        // A back-dated mtime does not hide a recent change: the ctime counts too.
        assert!(Key {
            ctime: now,
            ..key(0)
        }
        .racy(now));
    }

    #[test]
    fn a_stat_and_its_key_hold_what_the_file_system_says() {
        let tree = crate::testing::TempTree::with("os-stat", &[("d/f", "abc")]);
        let f = std::fs::symlink_metadata(tree.join("d/f")).unwrap().stat();
        assert!(f.is_file() && !f.is_dir() && !f.is_symlink());
        assert_eq!(f.size, 3);
        let d = PlainDir::top(&tree).unwrap().open(b"d").unwrap();
        assert_eq!(d.stat(b"f").unwrap().key(), f.key());
        assert!(d.own().unwrap().is_dir());
        assert!(
            Key::lstat(&tree.join("d/f")).unwrap().racy(now_ns()),
            "just written"
        );
        assert!(!Key::lstat(&tree.join("d/f"))
            .unwrap()
            .racy(now_ns() + 2 * RACY_NS));
        std::fs::write(tree.join("d/f"), "abcd").unwrap();
        assert_ne!(d.stat(b"f").unwrap().key(), f.key(), "the size moved");
        let mut names = Vec::new();
        d.entries(|n, k| names.push((n.to_vec(), k)));
        assert_eq!(names, vec![(b"f".to_vec(), Some(Kind::File))]);
    }
}
