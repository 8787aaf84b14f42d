//! Bytes a process writes once and then reads in place (the task index's saved lists,
//! tasks/arena.rs): spooled to a file no other process can reach and mapped read-only, so their
//! pages are the kernel's to drop and read back from disk, resident only while questions read
//! them, rather than anonymous memory held for the process's life. The repository's own files
//! (the saved index) are never mapped: another process may shrink one under the mapping, and a
//! read of a page gone is a SIGBUS. No other process can open, shrink or write this one:
//! - Linux: `O_TMPFILE | O_EXCL`, a file with no name that can never be given one;
//! - other Unix: made 0600 under a fresh name with `O_EXCL` and unlinked at once;
//! - Windows: deleted on close, and shared with no other opener for writing or deleting.
//!
//! The file lives in the directory given (the one the saved index was read from, so on the
//! disk that holds it: a tmpfs would only move the bytes to shared memory).

use super::fs::fresh_file;
use cap_std::fs::{Dir, OpenOptions};
use std::io::{self, Write};
use std::ops::Deref;

/// Written out a piece this large at a time.
const PIECE: usize = 1 << 20;

/// A private file being written, to be mapped once complete.
pub struct Spool {
    file: std::fs::File,
    buf: Vec<u8>,
    len: u64,
    /// The first write that failed: `map` reports it.
    failed: Option<io::Error>,
}

impl Spool {
    /// A new private file in `dir`.
    pub fn create(dir: &Dir) -> io::Result<Spool> {
        Ok(Spool {
            file: private_file(dir)?,
            buf: Vec::with_capacity(PIECE),
            len: 0,
            failed: None,
        })
    }

    /// Bytes pushed so far: where the next push starts.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// `b` appended (an error is kept for `map`).
    pub fn push(&mut self, b: &[u8]) {
        self.len += b.len() as u64;
        self.buf.extend_from_slice(b);
        if self.buf.len() >= PIECE {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if self.failed.is_none() {
            if let Err(e) = self.file.write_all(&self.buf) {
                self.failed = Some(e);
            }
        }
        self.buf.clear();
    }

    /// Everything pushed, mapped read-only.
    pub fn map(mut self) -> io::Result<Mapped> {
        self.flush();
        if let Some(e) = self.failed {
            return Err(e);
        }
        if self.len == 0 {
            return Ok(Mapped::default()); // nothing to map (an empty mapping is refused)
        }
        // Safety: no other process can reach the file (see the module's doc), and this one
        // gives up its only handle to write it here.
        let map = unsafe { memmap2::Mmap::map(&self.file)? };
        if map.len() as u64 != self.len {
            return Err(io::Error::other("the private file is not what was written"));
        }
        Ok(Mapped(Some(map)))
    }
}

/// Bytes mapped read-only from a private file (none by default).
#[derive(Default)]
pub struct Mapped(Option<memmap2::Mmap>);

impl Deref for Mapped {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.0.as_deref().unwrap_or(&[])
    }
}

#[cfg(target_os = "linux")]
fn private_file(dir: &Dir) -> io::Result<std::fs::File> {
    use rustix::fs::{Mode, OFlags};
    use std::os::fd::AsFd;
    let flags = OFlags::TMPFILE | OFlags::RDWR | OFlags::EXCL | OFlags::CLOEXEC;
    match rustix::fs::openat(dir.as_fd(), c".", flags, Mode::RUSR | Mode::WUSR) {
        Ok(fd) => Ok(fd.into()),
        // A file system without O_TMPFILE: made and unlinked, as elsewhere.
        Err(rustix::io::Errno::OPNOTSUPP | rustix::io::Errno::ISDIR) => unlinked_file(dir),
        Err(e) => Err(e.into()),
    }
}

#[cfg(all(unix, not(target_os = "linux")))]
fn private_file(dir: &Dir) -> io::Result<std::fs::File> {
    unlinked_file(dir)
}

#[cfg(unix)]
fn unlinked_file(dir: &Dir) -> io::Result<std::fs::File> {
    use cap_std::fs::OpenOptionsExt;
    let mut opts = OpenOptions::new();
    opts.read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_CLOEXEC | libc::O_NOFOLLOW);
    let (name, file) = fresh_file(dir, &opts)?;
    dir.remove_file(&name)?;
    Ok(file.into_std())
}

#[cfg(windows)]
fn private_file(dir: &Dir) -> io::Result<std::fs::File> {
    use cap_std::fs::OpenOptionsExt;
    use windows_sys::Win32::Foundation::{GENERIC_READ, GENERIC_WRITE};
    use windows_sys::Win32::Storage::FileSystem::{
        DELETE, FILE_ATTRIBUTE_TEMPORARY, FILE_FLAG_DELETE_ON_CLOSE, FILE_SHARE_READ,
    };
    let mut opts = OpenOptions::new();
    opts.read(true)
        .write(true)
        .create_new(true)
        .access_mode(GENERIC_READ | GENERIC_WRITE | DELETE)
        .share_mode(FILE_SHARE_READ)
        .custom_flags(FILE_FLAG_DELETE_ON_CLOSE)
        .attributes(FILE_ATTRIBUTE_TEMPORARY);
    Ok(fresh_file(dir, &opts)?.1.into_std())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TempTree;

    /// What was pushed reads back from the mapping, and the file leaves no name behind.
    #[test]
    fn pushed_bytes_read_back_mapped_and_no_name_is_left() {
        let t = TempTree::new("scratch");
        let d = Dir::open_ambient_dir(t.path(), cap_std::ambient_authority()).unwrap();
        let mut spool = Spool::create(&d).unwrap();
        let mut want = Vec::new();
        for i in 0..3 * PIECE / 1000 {
            let b: Vec<u8> = (0..1000).map(|k| (i * 7 + k) as u8).collect();
            spool.push(&b);
            want.extend_from_slice(&b);
        }
        assert_eq!(spool.len(), want.len() as u64);
        let mapped = spool.map().unwrap();
        assert!(mapped[..] == want[..]);
        // No name while mapped on Unix; Windows keeps it until the last handle is closed.
        let names = || std::fs::read_dir(t.path()).unwrap().count();
        #[cfg(unix)]
        assert_eq!(names(), 0);
        drop(mapped);
        assert_eq!(names(), 0);
        assert!(Spool::create(&d).unwrap().map().unwrap().is_empty());
    }
}
