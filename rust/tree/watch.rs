//! The one inotify set-up of the core, for the live index (tree/live.rs) and the caches'
//! views (caches/cache.rs): an instance made non-blocking and close-on-exec, watches on
//! directories, and the queue drained without ever blocking.
//!
//! A caller places a directory's watch before it reads the directory, so no change slips
//! between the read and the watch; before answering, it drains what the kernel queued (any
//! change made before the question is in that queue). A lost event (the queue overflowed,
//! or it could not be read) is reported as such: the caller then reads the files again.
//! Where watching is impossible (other platforms, no inotify, its limits reached) `new` is
//! None or `add` fails, and the caller reads the files instead: an answer is never staler
//! than the files.

use std::ffi::CStr;
use std::ops::ControlFlow;
use std::path::Path;

/// A watch descriptor: which watched directory an event is about.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Wd(i32);

/// What a watch reports of a directory.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Interest {
    /// Its entries made, removed, moved, written or given a new mode, and the directory
    /// itself removed or moved; not the events of files already unlinked (the live index:
    /// a directory's listing and the stats of its files).
    Listing,
    /// All of that and every close after writing, of unlinked files too (a cache's files:
    /// any write at all, even one through a mapping, which reports no modification).
    Writes,
}

/// Why a watch could not be placed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[cfg_attr(not(target_os = "linux"), allow(dead_code))] // made only where inotify is
pub enum AddError {
    /// We may not read the directory (a walk leaves it out too).
    Denied,
    /// Anything else: the watch limit, no such directory, not a directory.
    Failed,
}

/// One event, as far as the callers need it.
#[derive(Debug)]
pub struct Event<'a> {
    pub wd: Wd,
    /// The entry of the watched directory it is about; None when it is about the directory.
    pub name: Option<&'a CStr>,
    /// The entry is a directory.
    pub is_dir: bool,
    /// The watched directory itself was removed or moved, or its watch ended.
    pub gone: bool,
}

/// How a drain ended.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[cfg_attr(not(target_os = "linux"), allow(dead_code))] // made only where inotify is
pub enum Drained {
    /// Every queued event was handed over.
    Empty,
    /// The callback asked to stop; the events after it stay queued.
    Stopped,
    /// Events were lost (the queue overflowed, or it could not be read).
    Lost,
}

#[cfg(target_os = "linux")]
mod imp {
    use super::*;
    use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};
    use rustix::io::Errno;
    use std::mem::MaybeUninit;
    use std::os::fd::OwnedFd;

    /// An inotify instance; dropping it drops all its watches.
    pub struct Inotify {
        fd: OwnedFd,
    }

    fn flags(interest: Interest) -> WatchFlags {
        let listing = WatchFlags::MODIFY
            | WatchFlags::ATTRIB
            | WatchFlags::CREATE
            | WatchFlags::DELETE
            | WatchFlags::MOVED_FROM
            | WatchFlags::MOVED_TO
            | WatchFlags::DELETE_SELF
            | WatchFlags::MOVE_SELF
            | WatchFlags::ONLYDIR
            | WatchFlags::DONT_FOLLOW;
        match interest {
            Interest::Listing => listing | WatchFlags::EXCL_UNLINK,
            Interest::Writes => listing | WatchFlags::CLOSE_WRITE,
        }
    }

    impl Inotify {
        /// None where inotify cannot be had (no support, or the instance limit reached).
        pub fn new() -> Option<Inotify> {
            let fd = inotify::init(CreateFlags::NONBLOCK | CreateFlags::CLOEXEC).ok()?;
            Some(Inotify { fd })
        }

        /// Watch one directory (never through a final symlink).
        pub fn add(&self, dir: &Path, interest: Interest) -> Result<Wd, AddError> {
            match inotify::add_watch(&self.fd, dir, flags(interest)) {
                Ok(wd) => Ok(Wd(wd)),
                Err(Errno::ACCESS) => Err(AddError::Denied),
                Err(_) => Err(AddError::Failed),
            }
        }

        /// Stop watching; a watch already gone with its directory is no error.
        pub fn remove(&self, wd: Wd) {
            let _ = inotify::remove_watch(&self.fd, wd.0);
        }

        /// Hand every queued event to `each`, in order, without blocking.
        pub fn drain(&self, mut each: impl FnMut(Event) -> ControlFlow<()>) -> Drained {
            let mut buf = [MaybeUninit::uninit(); 16384];
            let mut reader = inotify::Reader::new(&self.fd, &mut buf);
            loop {
                let event = match reader.next() {
                    Ok(e) => e,
                    Err(Errno::WOULDBLOCK) => return Drained::Empty,
                    Err(Errno::INTR) => continue,
                    Err(_) => return Drained::Lost,
                };
                let flags = event.events();
                if flags.contains(ReadFlags::QUEUE_OVERFLOW) {
                    return Drained::Lost;
                }
                let event = Event {
                    wd: Wd(event.wd()),
                    name: event.file_name(),
                    is_dir: flags.contains(ReadFlags::ISDIR),
                    gone: flags.intersects(ReadFlags::IGNORED | ReadFlags::DELETE_SELF | ReadFlags::MOVE_SELF),
                };
                if each(event).is_break() {
                    return Drained::Stopped;
                }
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::*;

    enum Never {}

    /// No inotify here: `new` is always None, so no value of this type exists.
    pub struct Inotify {
        never: Never,
    }

    impl Inotify {
        pub fn new() -> Option<Inotify> {
            None
        }
        pub fn add(&self, _dir: &Path, _interest: Interest) -> Result<Wd, AddError> {
            match self.never {}
        }
        pub fn remove(&self, _wd: Wd) {
            match self.never {}
        }
        pub fn drain(&self, _each: impl FnMut(Event) -> ControlFlow<()>) -> Drained {
            match self.never {}
        }
    }
}

pub use imp::Inotify;

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use crate::testing::TempTree;
    use std::fs;
    use std::io::Write;

    /// (wd, name, is_dir, gone) of every queued event, and how the drain ended.
    fn events(i: &Inotify) -> (Vec<(Wd, String, bool, bool)>, Drained) {
        let mut seen = Vec::new();
        let end = i.drain(|e| {
            let name = e.name.map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            seen.push((e.wd, name, e.is_dir, e.gone));
            ControlFlow::Continue(())
        });
        (seen, end)
    }

    #[test]
    fn events_name_the_entry_and_whether_it_is_a_directory() {
        let t = TempTree::new("watch-events");
        let i = Inotify::new().unwrap();
        let wd = i.add(&t, Interest::Listing).unwrap();
        assert_eq!(events(&i), (vec![], Drained::Empty), "nothing happened yet");
        fs::write(t.join("f.py"), "x").unwrap();
        fs::create_dir(t.join("sub")).unwrap();
        let (seen, end) = events(&i);
        assert_eq!(end, Drained::Empty);
        assert!(seen.contains(&(wd, "f.py".into(), false, false)), "{seen:?}");
        assert!(seen.contains(&(wd, "sub".into(), true, false)), "{seen:?}");
        assert_eq!(events(&i), (vec![], Drained::Empty), "a drain empties the queue");
    }

    #[test]
    fn a_removed_directory_reports_itself_gone_and_a_stop_keeps_the_rest_queued() {
        let t = TempTree::new("watch-gone");
        t.mkdir("a");
        let i = Inotify::new().unwrap();
        let a = i.add(&t.join("a"), Interest::Listing).unwrap();
        fs::write(t.join("a/x"), "x").unwrap();
        assert_eq!(i.drain(|_| ControlFlow::Break(())), Drained::Stopped);
        fs::remove_dir_all(t.join("a")).unwrap();
        let (seen, end) = events(&i);
        assert_eq!(end, Drained::Empty);
        assert!(seen.iter().any(|(wd, name, _, _)| *wd == a && name == "x"), "{seen:?}");
        assert!(seen.iter().any(|&(wd, _, _, gone)| wd == a && gone), "{seen:?}");
    }

    #[test]
    fn only_a_writes_watch_sees_a_close_after_writing_that_changed_nothing() {
        let t = TempTree::new("watch-close");
        t.write("a.json", "{}");
        let i = Inotify::new().unwrap();
        let listing = i.add(&t, Interest::Listing).unwrap();
        let other = Inotify::new().unwrap();
        let writes = other.add(&t, Interest::Writes).unwrap();
        drop(fs::OpenOptions::new().write(true).open(t.join("a.json")).unwrap());
        assert_eq!(events(&i), (vec![], Drained::Empty), "listing {listing:?}");
        assert_eq!(events(&other), (vec![(writes, "a.json".into(), false, false)], Drained::Empty));
    }

    #[test]
    fn a_watch_cannot_be_placed_where_no_directory_is() {
        let t = TempTree::new("watch-add");
        t.write("file", "x");
        let i = Inotify::new().unwrap();
        assert_eq!(i.add(&t.join("missing"), Interest::Listing), Err(AddError::Failed));
        assert_eq!(i.add(&t.join("file"), Interest::Writes), Err(AddError::Failed));
        std::os::unix::fs::symlink(t.path(), t.join("link")).unwrap();
        assert_eq!(i.add(&t.join("link"), Interest::Listing), Err(AddError::Failed), "no final symlink followed");
        // A directory we may not read (root may read any).
        use std::os::unix::fs::PermissionsExt;
        let closed = t.mkdir("closed");
        fs::set_permissions(&closed, fs::Permissions::from_mode(0o000)).unwrap();
        // SAFETY: geteuid takes nothing and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            assert_eq!(i.add(&closed, Interest::Listing), Err(AddError::Denied));
        }
        fs::set_permissions(&closed, fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn an_overflowed_queue_is_reported_lost() {
        let limit: usize = fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(usize::MAX);
        if limit > 1 << 18 {
            return; // a queue this deep takes too long to fill in a unit test
        }
        let t = TempTree::new("watch-overflow");
        let i = Inotify::new().unwrap();
        i.add(&t, Interest::Listing).unwrap();
        let mut a = fs::File::create(t.join("a")).unwrap();
        let mut b = fs::File::create(t.join("b")).unwrap();
        // Alternating files: the kernel folds an event into an identical one just before it.
        for _ in 0..=limit / 2 {
            a.write_all(b"x").unwrap();
            b.write_all(b"x").unwrap();
        }
        assert_eq!(i.drain(|_| ControlFlow::Continue(())), Drained::Lost);
    }
}
