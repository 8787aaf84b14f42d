//! The one confined way to touch a repository's files.
//!
//! Every path is relative to the root and is opened beneath a directory handle of it
//! (`cap-std`: `openat2` with `RESOLVE_BENEATH` where the kernel has it, else component by
//! component with `O_NOFOLLOW`). A link inside the root that stays inside is followed; one
//! that leads out is never followed, for reading or writing, and the error names it. Nothing
//! is re-resolved by name after a check: writes make their temporary file and rename it
//! inside the same handle of the parent directory.

use crate::tree::os::{self, errno};
use crate::tree::paths::{escape_name, lexical};
use cap_std::ambient_authority;
use cap_std::fs::{Dir, File, Metadata, OpenOptions};
use std::ffi::OsString;
use std::fmt;
use std::io::{self, Read, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

#[derive(Debug)]
pub enum Error {
    /// A link on the way (this path, relative to the root) leads outside the root.
    Outside(String),
    /// Not a regular file (a directory, FIFO, device or socket), so it is not read.
    NotRegular(String, bool),
    /// Larger than the cap the caller gave.
    TooLarge(String, u64),
    /// A write would replace what it must not (a directory, FIFO, device or socket, or a file
    /// whose owner it cannot keep): the path, why, and the errno it crosses to Python as.
    NotReplaced(String, &'static str, i32),
    Io(io::Error),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Error::Outside(p) => write!(
                f,
                "'{p}' is a link that leads outside the repository; not followed"
            ),
            Error::NotRegular(p, _) => write!(f, "'{p}' is not a regular file; not read"),
            Error::TooLarge(p, cap) => write!(f, "'{p}' is larger than {cap} bytes; not read"),
            Error::NotReplaced(p, why, _) => write!(f, "'{p}' {why}; not replaced"),
            Error::Io(e) => e.fmt(f),
        }
    }
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Self {
        Error::Io(e)
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// cap-std's refusal of a path that would leave the directory handle (it maps the kernel's
/// EXDEV of `RESOLVE_BENEATH` and its own component walk to this one error).
fn is_escape(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::PermissionDenied && e.raw_os_error().is_none()
}

fn shown(rel: &Path) -> String {
    escape_name(rel.as_os_str())
}

/// A directory handle of a root; every operation below stays beneath it.
pub struct Root {
    dir: Dir,
    path: PathBuf,
    real: OnceLock<Option<PathBuf>>, // the root's canonical path, found when a link needs it
}

/// How many links `within` follows by their target before it gives up (as the kernel's ELOOP).
const MAX_HOPS: usize = 40;

/// Why `within` did not run an operation.
enum Miss {
    Out,
    Io(io::Error),
}

/// What `list` says of an entry, from the directory itself (no stat, links not followed).
pub use crate::tree::os::Kind;

static TEMP_SEQ: AtomicU64 = AtomicU64::new(0);

impl Root {
    /// The root itself is the caller's choice: its own path is followed.
    pub fn open(root: &Path) -> io::Result<Root> {
        let dir = Dir::open_ambient_dir(root, ambient_authority())?;
        Ok(Root {
            dir,
            path: root.to_path_buf(),
            real: OnceLock::new(),
        })
    }

    /// Run `op` on `rel` beneath the root. The kernel refuses every absolute link and every
    /// `..` that crosses the root, even one whose target lies inside the root after all (a
    /// link to `/abs/root/docs`): such a link is read and `op` runs again on the path inside
    /// the root that it names, beneath the root again. A link whose target is outside: Out.
    fn within<T>(
        &self,
        rel: &Path,
        op: &dyn Fn(&Path) -> io::Result<T>,
    ) -> std::result::Result<T, Miss> {
        let mut cur = rel.to_path_buf();
        for _ in 0..MAX_HOPS {
            match op(&cur) {
                Ok(v) => return Ok(v),
                Err(e) if is_escape(&e) => match self.retarget(&cur) {
                    Some(Ok(next)) => cur = next,
                    _ => return Err(Miss::Out),
                },
                Err(e) => return Err(Miss::Io(e)),
            }
        }
        Err(Miss::Io(io::Error::from_raw_os_error(errno::ELOOP)))
    }

    /// `within`, with a way out named by the link that leads there.
    fn run<T>(&self, rel: &Path, op: &dyn Fn(&Path) -> io::Result<T>) -> Result<T> {
        self.within(rel, op).map_err(|m| self.named(rel, m))
    }

    fn named(&self, rel: &Path, m: Miss) -> Error {
        match m {
            Miss::Out => Error::Outside(shown(&self.link_out(rel))),
            Miss::Io(e) => Error::Io(e),
        }
    }

    /// The first link on the way to `rel` that the kernel will not follow beneath the root:
    /// Ok(`rel` with that link replaced by the path inside the root it names), Err(the link)
    /// when it names a place outside. None when there is no such link (`..` out of `rel`).
    fn retarget(&self, rel: &Path) -> Option<std::result::Result<PathBuf, PathBuf>> {
        let parts: Vec<Component> = rel.components().collect();
        let mut prefix = PathBuf::new();
        for (i, c) in parts.iter().enumerate() {
            prefix.push(c);
            if !self
                .dir
                .symlink_metadata(&prefix)
                .is_ok_and(|m| m.is_symlink())
                || !self.dir.metadata(&prefix).is_err_and(|e| is_escape(&e))
            {
                continue;
            }
            let target = self.dir.read_link_contents(&prefix).ok()?;
            let real = self
                .real
                .get_or_init(|| std::fs::canonicalize(&self.path).ok())
                .as_ref()?;
            let from = prefix.parent().unwrap_or(Path::new(""));
            // (the rest joined only when there is one: joining an empty path would end the path
            // with a separator, and a link to a file would then be opened as a directory)
            let rest: PathBuf = parts[i + 1..].iter().collect();
            return Some(match link_inside(real, from, &target) {
                Some(inside) if rest.as_os_str().is_empty() => Ok(inside),
                Some(inside) => Ok(inside.join(rest)),
                None => Err(prefix),
            });
        }
        None
    }

    /// The link on the way to `rel` that leads out, following links that stay inside (only to
    /// word a refusal: the answer is never used to open anything). `rel` itself when none is
    /// found (`..` out).
    fn link_out(&self, rel: &Path) -> PathBuf {
        let mut cur = rel.to_path_buf();
        for _ in 0..MAX_HOPS {
            match self.retarget(&cur) {
                Some(Ok(next)) => cur = next,
                Some(Err(link)) => return link,
                None => break,
            }
        }
        cur
    }

    /// The parent directory of `rel` (opened beneath the root) and its last component.
    fn parent(&self, rel: &Path) -> Result<(Dir, OsString)> {
        let name = match rel.components().next_back() {
            Some(Component::Normal(n)) => n.to_os_string(),
            _ => {
                return Err(Error::Io(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("'{}' names no file", shown(rel)),
                )))
            }
        };
        let parent = rel.parent().unwrap_or(Path::new(""));
        let dir = if parent.as_os_str().is_empty() {
            self.dir.try_clone()?
        } else {
            self.run(parent, &|p| self.dir.open_dir(p))?
        };
        Ok((dir, name))
    }

    /// A directory beneath the root, for operations relative to it.
    pub fn open_dir(&self, rel: &Path) -> Result<Dir> {
        if rel.as_os_str().is_empty() || rel == Path::new(".") {
            return Ok(self.dir.try_clone()?);
        }
        self.run(rel, &|p| self.dir.open_dir(p))
    }

    /// A regular file's bytes, at most `cap` of them (else TooLarge). FIFOs and devices are
    /// not opened for a blocking read: the open does not wait and they are refused by type.
    pub fn read(&self, rel: &Path, cap: u64) -> Result<Vec<u8>> {
        let buf = read_regular(self.open_file(rel)?, rel, cap + 1)?;
        if buf.len() as u64 > cap {
            return Err(Error::TooLarge(shown(rel), cap));
        }
        Ok(buf)
    }

    /// A regular file to read a piece at a time, and how many bytes it holds now (at most
    /// `cap`, else TooLarge). A reader must not trust the length: another process can shrink
    /// or grow the file meanwhile.
    pub fn open_read(&self, rel: &Path, cap: u64) -> Result<(File, u64)> {
        let file = self.open_file(rel)?;
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(Error::NotRegular(shown(rel), meta.is_dir()));
        }
        if meta.len() > cap {
            return Err(Error::TooLarge(shown(rel), cap));
        }
        Ok((file, meta.len()))
    }

    /// The first `n` bytes of a regular file (all of it when shorter).
    pub fn read_head(&self, rel: &Path, n: u64) -> Result<Vec<u8>> {
        read_regular(self.open_file(rel)?, rel, n)
    }

    fn open_file(&self, rel: &Path) -> Result<File> {
        let mut opts = OpenOptions::new();
        os::reading(&mut opts);
        match self.run(rel, &|p| self.dir.open_with(p, &opts)) {
            // (Windows refuses to open a directory as a file: the same answer as elsewhere)
            Err(Error::Io(e)) if cfg!(windows) && e.kind() == io::ErrorKind::PermissionDenied => {
                match self.stat(rel, true) {
                    Ok(Some(m)) if m.is_dir() => Err(Error::NotRegular(shown(rel), true)),
                    _ => Err(Error::Io(e)),
                }
            }
            other => other,
        }
    }

    /// Replace `rel` with `data`: a temporary file made beside it and renamed over it, both
    /// inside one handle of the parent. A reader or a crash sees the old or the new file.
    /// A link in its place is replaced, not followed; one leading out is refused instead.
    pub fn write_atomic(&self, rel: &Path, data: &[u8]) -> Result<()> {
        self.write_atomic_with(rel, |w| w.write_all(data))
    }

    /// `write_atomic` of the bytes `fill` writes, as it writes them (buffered), so they are
    /// never all held at once: the temporary file is renamed over `rel` only once `fill` and
    /// the sync succeeded; on any error (`fill`'s own included) or a panic it is removed and
    /// `rel` is as it was.
    pub fn write_atomic_with(
        &self,
        rel: &Path,
        fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    ) -> Result<()> {
        let (dir, name) = self.parent(rel)?;
        // (resolved from the root's handle: the parent's would take `..` inside the root for a way out)
        if dir.symlink_metadata(&name).is_ok_and(|m| m.is_symlink())
            && matches!(self.within(rel, &|p| self.dir.metadata(p)), Err(Miss::Out))
        {
            return Err(Error::Outside(shown(&self.link_out(rel))));
        }
        let (tmp, file) = temp_file(&dir)?;
        let mut tmp = Temp {
            dir: &dir,
            name: tmp,
            kept: false,
        };
        keep_mode(&dir, &name, &file).map_err(|e| replace_refused(e, rel))?;
        let mut out = io::BufWriter::with_capacity(1 << 20, file);
        fill(&mut out)?;
        let file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
        file.sync_all()?;
        dir.rename(&tmp.name, &dir, &name)?;
        tmp.kept = true;
        sync_dir(&dir)?;
        Ok(())
    }

    /// Make `rel` and its missing parents (an existing link inside the root is followed).
    pub fn create_dir_all(&self, rel: &Path) -> Result<()> {
        if rel.as_os_str().is_empty() || rel == Path::new(".") {
            return Ok(());
        }
        match self.within(rel, &|p| self.dir.create_dir_all(p)) {
            Err(Miss::Io(e)) => match self.within(rel, &|p| self.dir.open_dir(p)) {
                // An entry already in the way (a link out among them) is told apart by opening it.
                Ok(_) => Ok(()),
                Err(Miss::Out) => Err(self.named(rel, Miss::Out)),
                Err(_) => Err(Error::Io(e)),
            },
            other => other.map_err(|m| self.named(rel, m)),
        }
    }

    /// The entries of a directory: (name, kind), unsorted, kinds as the directory says.
    pub fn list(&self, rel: &Path) -> Result<Vec<(OsString, Kind)>> {
        let dir = self.open_dir(rel)?;
        let mut out = Vec::new();
        for entry in dir.entries()? {
            let entry = entry?;
            out.push((entry.file_name(), Kind::of(&entry.file_type()?)));
        }
        Ok(out)
    }

    /// The metadata of `rel` (a final link followed when `follow`, and then only inside the
    /// root); None when it does not exist.
    pub fn stat(&self, rel: &Path, follow: bool) -> Result<Option<Metadata>> {
        let got = if rel.as_os_str().is_empty() || rel == Path::new(".") {
            self.dir.dir_metadata().map_err(|e| (rel, Miss::Io(e)))
        } else if follow {
            self.within(rel, &|p| self.dir.metadata(p))
                .map_err(|m| (rel, m))
        } else {
            self.within(rel, &|p| self.dir.symlink_metadata(p))
                .map_err(|m| (rel, m))
        };
        match got {
            Ok(m) => Ok(Some(m)),
            Err((_, Miss::Io(e))) if os::is_missing(&e) => Ok(None),
            Err((rel, m)) => Err(self.named(rel, m)),
        }
    }

    /// Remove a file or a link (never what it points to).
    pub fn remove_file(&self, rel: &Path) -> Result<()> {
        let (dir, name) = self.parent(rel)?;
        Ok(dir.remove_file(&name)?)
    }

    /// Remove a directory and everything in it (links inside are removed, not followed).
    pub fn remove_tree(&self, rel: &Path) -> Result<()> {
        let (dir, name) = self.parent(rel)?;
        Ok(dir.remove_dir_all(&name)?)
    }

    /// Rename within the root (a link at either end is moved or replaced, not followed),
    /// then, with `sync`, sync the directory it went to.
    pub fn rename(&self, from: &Path, to: &Path, sync: bool) -> Result<()> {
        let (a, a_name) = self.parent(from)?;
        let (b, b_name) = self.parent(to)?;
        a.rename(&a_name, &b, &b_name)?;
        if sync {
            sync_dir(&b)?;
        }
        Ok(())
    }

    /// Write `data` to a new file beside `rel` (a fresh name, made with O_EXCL, so never an
    /// existing file or a link planted there); returns its path. The caller renames it into
    /// place or removes it, and makes it durable (`sync`).
    pub fn write_temp(&self, rel: &Path, data: &[u8]) -> Result<PathBuf> {
        let (dir, target) = self.parent(rel)?;
        let (name, mut file) = temp_file(&dir)?;
        let written = keep_mode(&dir, &target, &file)
            .map_err(|e| replace_refused(e, rel))
            .and_then(|_| Ok(file.write_all(data)?));
        #[cfg(not(target_os = "linux"))]
        let written = written.and_then(|_| Ok(file.sync_all()?));
        if let Err(e) = written {
            let _ = dir.remove_file(&name);
            return Err(e);
        }
        Ok(rel.parent().unwrap_or(Path::new("")).join(name))
    }

    /// Make what was written beneath the root durable (one syncfs on Linux).
    pub fn sync(&self) -> Result<()> {
        Ok(sync_filesystem(&self.dir)?)
    }

    /// Swap two entries atomically (renameat2 RENAME_EXCHANGE), then sync; Unsupported where
    /// the platform cannot.
    pub fn exchange(&self, a: &Path, b: &Path) -> Result<()> {
        let (da, na) = self.parent(a)?;
        let (db, nb) = self.parent(b)?;
        exchange(&da, &na, &db, &nb)?;
        Ok(sync_dir(&db)?)
    }
}

/// `dir` itself opened for reading: cap-std's handles may be `O_PATH`, which cannot be
/// synced, listed or locked.
#[cfg(unix)]
fn readable(dir: &Dir) -> io::Result<File> {
    use cap_std::fs::OpenOptionsExt;
    let mut opts = OpenOptions::new();
    opts.read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_CLOEXEC);
    dir.open_with(".", &opts)
}

#[cfg(unix)]
fn sync_dir(dir: &Dir) -> io::Result<()> {
    readable(dir)?.sync_all()
}

/// Windows makes a rename durable with the file system's own journal: a directory cannot be
/// flushed.
#[cfg(windows)]
fn sync_dir(_: &Dir) -> io::Result<()> {
    Ok(())
}

/// Make what was written under `dir` durable with one syncfs instead of an fsync per file.
#[cfg(target_os = "linux")]
pub fn sync_filesystem(dir: &Dir) -> io::Result<()> {
    rustix::fs::syncfs(readable(dir)?).map_err(io::Error::from)
}

#[cfg(not(target_os = "linux"))]
pub fn sync_filesystem(dir: &Dir) -> io::Result<()> {
    sync_dir(dir)
}

#[cfg(target_os = "linux")]
fn exchange(da: &Dir, a: &std::ffi::OsStr, db: &Dir, b: &std::ffi::OsStr) -> io::Result<()> {
    use rustix::fs::{renameat_with, RenameFlags};
    renameat_with(da, a, db, b, RenameFlags::EXCHANGE).map_err(io::Error::from)
}

#[cfg(not(target_os = "linux"))]
fn exchange(_: &Dir, _: &std::ffi::OsStr, _: &Dir, _: &std::ffi::OsStr) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "no atomic directory exchange",
    ))
}

/// Why `keep_mode` will not let a file be put in a place.
enum Keep {
    Kind(&'static str, i32),
    #[cfg_attr(windows, allow(dead_code))] // Windows has no owner to keep
    Owner,
    Io(io::Error),
}

fn replace_refused(k: Keep, rel: &Path) -> Error {
    match k {
        Keep::Kind(what, errno) => Error::NotReplaced(shown(rel), what, errno),
        Keep::Owner => Error::NotReplaced(
            shown(rel),
            "belongs to another user or group, which a new file would not keep",
            errno::EPERM,
        ),
        Keep::Io(e) => Error::Io(e),
    }
}

/// What stands at `name` may be replaced only when it is a regular file (or a link, which is
/// replaced, never followed): never a directory, FIFO, device or socket, whatever path led a
/// writer there. A file replaced keeps its permission bits (a script stays executable, a
/// private file private) and its owner and group, or is not replaced; a new one keeps the
/// mode it was made with, 0666 less the umask, as any file a person makes: never the 0600 of
/// a temporary file. (Windows: no owner or mode bits to keep; a new file's attributes.)
fn keep_mode(dir: &Dir, name: &std::ffi::OsStr, file: &File) -> std::result::Result<(), Keep> {
    let m = match dir.symlink_metadata(name) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Keep::Io(e)),
    };
    let t = m.file_type();
    if t.is_symlink() {
        return Ok(());
    }
    if t.is_dir() {
        return Err(Keep::Kind("is a directory", errno::EISDIR));
    }
    if !t.is_file() {
        return Err(Keep::Kind(
            "is a FIFO, device or socket, not a regular file",
            errno::EINVAL,
        ));
    }
    keep_owner_and_mode(&m, file)
}

#[cfg(unix)]
fn keep_owner_and_mode(m: &Metadata, file: &File) -> std::result::Result<(), Keep> {
    use cap_std::fs::MetadataExt;
    let mine = file.metadata().map_err(Keep::Io)?;
    if (mine.uid(), mine.gid()) != (m.uid(), m.gid()) {
        let (uid, gid) = (
            rustix::fs::Uid::from_raw(m.uid()),
            rustix::fs::Gid::from_raw(m.gid()),
        );
        rustix::fs::fchown(file, Some(uid), Some(gid)).map_err(|_| Keep::Owner)?;
    }
    // (after the owner: a change of owner clears the set-id bits)
    #[allow(clippy::unnecessary_cast)] // u16 on macOS
    let mode = (m.mode() & 0o777) as rustix::fs::RawMode;
    rustix::fs::fchmod(file, rustix::fs::Mode::from_raw_mode(mode)).map_err(|e| Keep::Io(e.into()))
}

#[cfg(windows)]
fn keep_owner_and_mode(_: &Metadata, _: &File) -> std::result::Result<(), Keep> {
    Ok(())
}

/// A new temporary file in `dir`, named so no other writer picks the same name.
fn temp_file(dir: &Dir) -> io::Result<(String, File)> {
    let mut opts = OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use cap_std::fs::OpenOptionsExt;
        opts.mode(0o666).custom_flags(libc::O_CLOEXEC);
    }
    fresh_file(dir, &opts)
}

/// The temporary file of `write_atomic_with` (in `dir`), removed when dropped unless it was
/// `kept` (renamed into place).
struct Temp<'d> {
    dir: &'d Dir,
    name: String,
    kept: bool,
}

impl Drop for Temp<'_> {
    fn drop(&mut self) {
        if !self.kept {
            let _ = self.dir.remove_file(&self.name);
        }
    }
}

/// A new file in `dir` opened with `opts` (which must say `create_new`), named after this
/// process, a sequence and the clock, and named again when the name is taken.
pub fn fresh_file(dir: &Dir, opts: &OpenOptions) -> io::Result<(String, File)> {
    loop {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let name = format!(
            ".repoctx-{}-{}-{nanos:x}.tmp",
            std::process::id(),
            TEMP_SEQ.fetch_add(1, Ordering::Relaxed)
        );
        match dir.open_with(&name, opts) {
            Ok(f) => return Ok((name, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Where a link in directory `from` (relative to the root, whose canonical path is `real`)
/// to `target` leads, relative to the root; None when that is outside it. On Windows the
/// canonical root is a verbatim path (`\\?\C:\…`) and a target mostly is not: both are
/// compared without that prefix.
fn link_inside(real: &Path, from: &Path, target: &Path) -> Option<PathBuf> {
    let real = crate::tree::paths::unverbatim(real);
    let to = crate::tree::paths::unverbatim(&lexical(&real.join(from).join(target)));
    to.strip_prefix(&real).ok().map(Path::to_path_buf)
}

/// At most `n` bytes of an opened file, which must be a regular file.
fn read_regular(file: File, rel: &Path, n: u64) -> Result<Vec<u8>> {
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(Error::NotRegular(shown(rel), meta.is_dir()));
    }
    let mut buf = Vec::with_capacity(meta.len().min(n) as usize);
    file.take(n).read_to_end(&mut buf)?;
    Ok(buf)
}

/// A handle of a directory the caller holds: by its descriptor where the OS has them (duplicated:
/// the caller keeps and closes its own), so a swap after the caller's check is never followed;
/// on Windows, which has none, by its path, which the caller checked through this layer.
pub fn dir_held(fd: Option<i32>, path: &Path) -> io::Result<Dir> {
    #[cfg(unix)]
    if let Some(fd) = fd {
        // SAFETY: the caller's descriptor stays open for this call, which only duplicates it.
        let owned = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) }.try_clone_to_owned()?;
        return Ok(Dir::from_std_file(std::fs::File::from(owned)));
    }
    #[cfg(not(unix))]
    let _ = fd;
    Dir::open_ambient_dir(path, ambient_authority())
}

/// A directory's descriptor, opened for reading (so it can be listed, synced and locked);
/// the caller closes it.
#[cfg(unix)]
pub fn dir_into_fd(dir: Dir) -> io::Result<i32> {
    use std::os::fd::IntoRawFd;
    Ok(readable(&dir)?.into_std().into_raw_fd())
}

/// Windows has no descriptor of a directory to hand to Python (its lock is taken otherwise).
#[cfg(windows)]
pub fn dir_into_fd(_: Dir) -> io::Result<i32> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "no directory descriptors on Windows",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TempTree;
    use crate::tree::os::symlink;
    use std::fs as stdfs;

    /// A repository (`root/`, with `in/a.txt`) beside a directory it must never reach (`out/`).
    struct Tree {
        base: TempTree,
    }

    impl Tree {
        fn new(name: &str) -> Tree {
            Tree {
                base: TempTree::with(
                    &format!("fs-{name}"),
                    &[("root/in/a.txt", "inside"), ("out/secret", "SECRET")],
                ),
            }
        }
        fn root(&self) -> Root {
            Root::open(&self.base.join("root")).unwrap()
        }
        fn outside(&self) -> Vec<(PathBuf, Vec<u8>)> {
            let mut out: Vec<_> = stdfs::read_dir(self.base.join("out"))
                .unwrap()
                .map(|e| {
                    let p = e.unwrap().path();
                    let bytes = stdfs::read(&p).unwrap_or_default();
                    (p, bytes)
                })
                .collect();
            out.sort();
            out
        }
    }

    fn outside_named(r: Result<impl fmt::Debug>, link: &str) {
        match r {
            Err(Error::Outside(p)) => assert_eq!(p, link),
            other => panic!("expected Outside({link}), got {other:?}"),
        }
    }

    #[test]
    #[cfg_attr(
        windows,
        ignore = "wine 8 makes no link: CreateSymbolicLinkW is a stub that returns success, and a link made from the Linux side reads as its target"
    )]
    fn links_inside_are_followed_and_links_out_refused_by_name() {
        let t = Tree::new("links");
        let root = t.root();
        symlink("in", t.base.join("root/alias")).unwrap();
        symlink(t.base.join("out"), t.base.join("root/abs")).unwrap();
        symlink("../out", t.base.join("root/rel")).unwrap();
        symlink("../../out/secret", t.base.join("root/in/file")).unwrap();
        symlink("/nonexistent/dir", t.base.join("root/dangling")).unwrap();
        symlink(t.base.join("root/in"), t.base.join("root/abs_in")).unwrap();
        symlink("../root/in", t.base.join("root/back_in")).unwrap();
        symlink("in/file", t.base.join("root/chain")).unwrap();
        assert_eq!(
            root.read(Path::new("abs_in/a.txt"), 100).unwrap(),
            b"inside"
        );
        assert_eq!(
            root.read(Path::new("back_in/a.txt"), 100).unwrap(),
            b"inside"
        );
        // A link to a file inside, by an absolute path or one climbing out and back, is read.
        symlink(t.base.join("root/in/a.txt"), t.base.join("root/abs_file")).unwrap();
        symlink("../root/in/a.txt", t.base.join("root/back_file")).unwrap();
        assert_eq!(root.read(Path::new("abs_file"), 100).unwrap(), b"inside");
        assert_eq!(
            root.read_head(Path::new("back_file"), 100).unwrap(),
            b"inside"
        );
        assert!(root
            .stat(Path::new("abs_file"), true)
            .unwrap()
            .unwrap()
            .is_file());
        root.write_atomic(Path::new("abs_in/b.txt"), b"b").unwrap();
        root.create_dir_all(Path::new("abs_in/made/deep")).unwrap();
        assert!(root
            .stat(Path::new("abs_in/made/deep"), true)
            .unwrap()
            .unwrap()
            .is_dir());
        outside_named(root.read(Path::new("chain"), 100), "in/file");
        assert_eq!(root.read(Path::new("alias/a.txt"), 100).unwrap(), b"inside");
        outside_named(root.read(Path::new("abs/secret"), 100), "abs");
        outside_named(root.read(Path::new("rel/secret"), 100), "rel");
        outside_named(root.read(Path::new("in/file"), 100), "in/file");
        outside_named(root.read(Path::new("../out/secret"), 100), "../out/secret");
        outside_named(root.write_atomic(Path::new("abs/new"), b"x"), "abs");
        outside_named(root.write_atomic(Path::new("in/file"), b"x"), "in/file");
        outside_named(root.create_dir_all(Path::new("dangling/made")), "dangling");
        outside_named(root.create_dir_all(Path::new("abs")), "abs");
        outside_named(root.list(Path::new("rel")), "rel");
        assert!(root
            .stat(Path::new("in/file"), false)
            .unwrap()
            .unwrap()
            .is_symlink());
        outside_named(root.stat(Path::new("in/file"), true), "in/file");
        assert!(!Path::new("/nonexistent/dir").exists());
        assert_eq!(
            t.outside(),
            vec![(t.base.join("out/secret"), b"SECRET".to_vec())]
        );
    }

    #[test]
    fn a_link_leads_inside_when_its_target_is_beneath_the_canonical_root() {
        let inside = |real: &str, from: &str, target: &str| {
            link_inside(Path::new(real), Path::new(from), Path::new(target))
        };
        #[cfg(windows)]
        let (real, abs_in, abs_out) = (r"\\?\C:\repo", r"C:\repo\in", r"C:\out");
        #[cfg(unix)]
        let (real, abs_in, abs_out) = ("/repo", "/repo/in", "/out");
        assert_eq!(inside(real, "", abs_in), Some(PathBuf::from("in")));
        assert_eq!(
            inside(real, "in", "../in/a"),
            Some(Path::new("in").join("a"))
        );
        assert_eq!(inside(real, "", abs_out), None);
        assert_eq!(inside(real, "in", "../../out"), None);
        #[cfg(windows)]
        {
            assert_eq!(
                inside(real, "", r"\\?\C:\repo\in"),
                Some(PathBuf::from("in"))
            );
            assert_eq!(
                inside(r"\\?\UNC\srv\share\repo", "", r"\\srv\share\repo\in"),
                Some(PathBuf::from("in"))
            );
            assert_eq!(inside(r"\\?\C:\repo", "", r"C:\repository"), None);
        }
    }

    #[test]
    fn writes_are_atomic_and_leave_no_temporary_file() {
        let t = Tree::new("write");
        let root = t.root();
        root.create_dir_all(Path::new("x/y")).unwrap();
        root.write_atomic(Path::new("x/y/f"), b"one").unwrap();
        root.write_atomic(Path::new("x/y/f"), b"two").unwrap();
        assert_eq!(root.read(Path::new("x/y/f"), 3).unwrap(), b"two");
        let names: Vec<_> = root
            .list(Path::new("x/y"))
            .unwrap()
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(names, vec![OsString::from("f")]);
        // A link inside the root in the file's place is replaced, never written through.
        symlink("../../in/a.txt", t.base.join("root/x/y/g")).unwrap();
        root.write_atomic(Path::new("x/y/g"), b"new").unwrap();
        assert_eq!(
            stdfs::read(t.base.join("root/in/a.txt")).unwrap(),
            b"inside"
        );
        root.rename(Path::new("x/y/g"), Path::new("x/h"), true)
            .unwrap();
        let tmp = root.write_temp(Path::new("x/y/f"), b"staged").unwrap();
        assert_eq!(tmp.parent(), Some(Path::new("x/y")));
        root.rename(&tmp, Path::new("x/y/f"), false).unwrap();
        assert_eq!(root.read(Path::new("x/y/f"), 6).unwrap(), b"staged");
        root.write_atomic(Path::new("x/y/f"), b"one").unwrap();
        if cfg!(target_os = "linux") {
            root.exchange(Path::new("x/h"), Path::new("x/y/f")).unwrap();
            assert_eq!(root.read(Path::new("x/h"), 3).unwrap(), b"one");
        } else {
            assert!(root.exchange(Path::new("x/h"), Path::new("x/y/f")).is_err());
        }
        root.remove_file(Path::new("x/h")).unwrap();
        root.remove_tree(Path::new("x")).unwrap();
        assert!(root.stat(Path::new("x"), false).unwrap().is_none());
    }

    #[test]
    fn a_streamed_write_that_fails_or_panics_halfway_leaves_the_file_as_it_was() {
        let t = Tree::new("stream");
        let root = t.root();
        let f = Path::new("in/s.bin");
        root.write_atomic(f, b"whole").unwrap();
        let big = vec![7u8; 3 << 20]; // past the write's buffer: some of it reaches the file
        let failed = root.write_atomic_with(f, |w| {
            w.write_all(&big)?;
            Err(io::Error::other("the encoder gave up"))
        });
        assert!(matches!(failed, Err(Error::Io(e)) if e.to_string() == "the encoder gave up"));
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            root.write_atomic_with(f, |w| {
                w.write_all(&big)?;
                panic!("a bug in the encoder")
            })
        }));
        assert!(panicked.is_err());
        assert_eq!(root.read(f, 5).unwrap(), b"whole");
        let mut names: Vec<_> = root
            .list(Path::new("in"))
            .unwrap()
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        names.sort();
        assert_eq!(
            names,
            vec![OsString::from("a.txt"), OsString::from("s.bin")]
        );
    }

    #[test]
    fn reads_are_capped_and_only_of_regular_files() {
        let t = Tree::new("read");
        let root = t.root();
        assert!(matches!(
            root.read(Path::new("in/a.txt"), 5),
            Err(Error::TooLarge(_, 5))
        ));
        assert_eq!(root.read(Path::new("in/a.txt"), 6).unwrap(), b"inside");
        assert_eq!(root.read_head(Path::new("in/a.txt"), 2).unwrap(), b"in");
        assert!(matches!(
            root.read(Path::new("in"), 5),
            Err(Error::NotRegular(_, true))
        ));
        #[cfg(unix)] // no FIFOs in Windows' file system
        {
            t.base.fifo("root/in/fifo");
            assert!(matches!(
                root.read(Path::new("in/fifo"), 5),
                Err(Error::NotRegular(_, false))
            ));
        }
        assert!(
            matches!(root.read(Path::new("missing"), 5), Err(Error::Io(e)) if e.kind() == io::ErrorKind::NotFound)
        );
    }
}
