//! inotify (Linux): a watch on each directory, an instance made non-blocking and
//! close-on-exec, and its queue drained without ever blocking. The kernel queues an event
//! during the change itself, so a drain sees every change made before it.

use crate::tree::watch::event::{AddError, Drained, Event, Interest, Wd};
use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};
use rustix::io::Errno;
use std::mem::MaybeUninit;
use std::ops::ControlFlow;
use std::os::fd::OwnedFd;
use std::path::Path;

/// An inotify instance; dropping it drops all its watches.
pub struct Watch {
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

impl Watch {
    /// Err where inotify cannot be had (no support, or the instance limit reached); each
    /// directory gets its own watch, so the root is only where they lie.
    pub fn new(_root: &Path) -> Result<Watch, String> {
        match inotify::init(CreateFlags::NONBLOCK | CreateFlags::CLOEXEC) {
            Ok(fd) => Ok(Watch { fd }),
            Err(Errno::MFILE) => {
                Err("inotify's instance limit is reached (fs.inotify.max_user_instances)".into())
            }
            Err(e) => Err(format!("inotify could not start: {e}")),
        }
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
                name: event.file_name().map(|n| n.to_bytes()),
                is_dir: flags.contains(ReadFlags::ISDIR),
                gone: flags
                    .intersects(ReadFlags::IGNORED | ReadFlags::DELETE_SELF | ReadFlags::MOVE_SELF),
            };
            if each(event).is_break() {
                return Drained::Stopped;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TempTree;
    use std::fs;
    use std::io::Write;

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
        let i = Watch::new(&t).unwrap();
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
