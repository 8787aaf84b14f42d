//! The one watcher of the core, for the live index (tree/live.rs) and the caches' views
//! (caches/cache.rs), over each OS's own events: inotify on Linux, FSEvents on macOS,
//! ReadDirectoryChangesW on Windows (one file per OS beside this one).
//!
//! The contract, the same on every OS: a caller places a directory's watch before it reads
//! the directory, so no change slips between the read and the watch; before answering, it
//! drains what the OS has queued, and any change made before the question is in that
//! drain. A lost event (a queue overflowed, or could not be read) is reported as such: the
//! caller then reads the files again. Where watching is impossible (another OS, limits
//! reached) `Watch::new` says why, or `add` fails, and the caller reads the files instead:
//! an answer is never staler than the files.
//!
//! Why the OS APIs and not the `notify` crate: notify hands events over from a thread of
//! its own, so a drain cannot know that a change made just before it has arrived. Each API
//! here gives that barrier: inotify queues in the kernel during the change itself; FSEvents
//! has `FSEventStreamFlushSync`; ReadDirectoryChangesW completes its pending read during
//! the change, and buffers in the kernel until the next read.
//!
//! inotify watches each directory; FSEvents and ReadDirectoryChangesW follow a whole tree
//! (`tree.rs` turns their paths into the same per-directory events).

use std::ops::ControlFlow;
use std::path::Path;

mod event;
pub use event::{AddError, Drained, Event, Interest, Wd};

#[cfg(target_os = "linux")]
mod inotify;
#[cfg(target_os = "linux")]
use inotify as os;

#[cfg(target_os = "macos")]
mod fsevents;
#[cfg(target_os = "macos")]
use fsevents as os;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
use self::windows as os;

#[cfg(any(target_os = "macos", windows, test))]
mod tree;

/// The OS events behind a `Watch`, as `ctxt_self_report` names them.
pub const KIND: &str = if cfg!(target_os = "linux") {
    "inotify"
} else if cfg!(target_os = "macos") {
    "fsevents"
} else if cfg!(windows) {
    "windows"
} else {
    "polling"
};

/// The watches of one tree: dropping it drops them all.
pub struct Watch(os::Watch);

impl Watch {
    /// Begin watching under `root` (every directory later added lies in it); Err says why
    /// watching is impossible here.
    pub fn new(root: &Path) -> Result<Watch, String> {
        os::Watch::new(root).map(Watch)
    }

    /// Watch one directory (never through a final symlink).
    pub fn add(&self, dir: &Path, interest: Interest) -> Result<Wd, AddError> {
        self.0.add(dir, interest)
    }

    /// Stop watching; a watch already gone with its directory is no error.
    pub fn remove(&self, wd: Wd) {
        self.0.remove(wd)
    }

    /// Hand every event queued so far to `each`, in order, without blocking for new ones.
    pub fn drain(&self, each: impl FnMut(Event) -> ControlFlow<()>) -> Drained {
        self.0.drain(each)
    }
}

/// Another OS: no events, so `new` always fails and no value of this type exists.
#[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
mod os {
    use super::*;

    pub enum Watch {}

    impl Watch {
        pub fn new(_root: &Path) -> Result<Watch, String> {
            Err("this OS gives the core no file-system events".into())
        }
        pub fn add(&self, _dir: &Path, _interest: Interest) -> Result<Wd, AddError> {
            match *self {}
        }
        pub fn remove(&self, _wd: Wd) {
            match *self {}
        }
        pub fn drain(&self, _each: impl FnMut(Event) -> ControlFlow<()>) -> Drained {
            match *self {}
        }
    }
}

/// The contract on the host OS: under wine these run against ReadDirectoryChangesW.
#[cfg(all(test, any(target_os = "linux", target_os = "macos", windows)))]
mod tests {
    use super::*;
    use crate::testing::TempTree;
    use std::fs;

    /// (wd, name, is_dir, gone) of every queued event, and how the drain ended.
    fn events(w: &Watch) -> (Vec<(Wd, String, bool, bool)>, Drained) {
        let mut seen = Vec::new();
        let end = w.drain(|e| {
            let name = e
                .name
                .map(|n| String::from_utf8_lossy(n).into_owned())
                .unwrap_or_default();
            seen.push((e.wd, name, e.is_dir, e.gone));
            ControlFlow::Continue(())
        });
        (seen, end)
    }

    #[test]
    fn events_name_the_entry_and_whether_it_is_a_directory() {
        let t = TempTree::new("watch-events");
        let w = Watch::new(&t).unwrap();
        let wd = w.add(&t, Interest::Listing).unwrap();
        assert_eq!(events(&w), (vec![], Drained::Empty), "nothing happened yet");
        fs::write(t.join("f.py"), "x").unwrap();
        fs::create_dir(t.join("sub")).unwrap();
        let (seen, end) = events(&w);
        assert_eq!(end, Drained::Empty);
        assert!(
            seen.contains(&(wd, "f.py".into(), false, false)),
            "{seen:?}"
        );
        assert!(seen.contains(&(wd, "sub".into(), true, false)), "{seen:?}");
        assert_eq!(
            events(&w),
            (vec![], Drained::Empty),
            "a drain empties the queue"
        );
    }

    #[test]
    fn a_change_below_names_its_own_directory_only() {
        let t = TempTree::new("watch-below");
        t.mkdir("a/b");
        let w = Watch::new(&t).unwrap();
        let (root, a, b) = (
            w.add(&t, Interest::Listing).unwrap(),
            w.add(&t.join("a"), Interest::Listing).unwrap(),
            w.add(&t.join("a/b"), Interest::Listing).unwrap(),
        );
        fs::write(t.join("a/b/x.rs"), "x").unwrap();
        let (seen, end) = events(&w);
        assert_eq!(end, Drained::Empty);
        assert!(seen.contains(&(b, "x.rs".into(), false, false)), "{seen:?}");
        assert!(
            !seen.iter().any(|e| e.0 == root || (e.0 == a && e.1 != "b")),
            "{seen:?}"
        );
    }

    #[test]
    fn a_removed_directory_reports_itself_gone_and_a_stop_keeps_the_rest_queued() {
        let t = TempTree::new("watch-gone");
        t.mkdir("a");
        let w = Watch::new(&t).unwrap();
        let a = w.add(&t.join("a"), Interest::Listing).unwrap();
        fs::write(t.join("a/x"), "x").unwrap();
        assert_eq!(w.drain(|_| ControlFlow::Break(())), Drained::Stopped);
        fs::remove_dir_all(t.join("a")).unwrap();
        let (seen, end) = events(&w);
        assert_eq!(end, Drained::Empty);
        assert!(
            seen.iter().any(|(wd, name, _, _)| *wd == a && name == "x"),
            "{seen:?}"
        );
        assert!(
            seen.iter().any(|&(wd, _, _, gone)| wd == a && gone),
            "{seen:?}"
        );
    }

    #[test]
    fn a_watch_cannot_be_placed_where_no_directory_is() {
        let t = TempTree::new("watch-add");
        t.write("file", "x");
        let w = Watch::new(&t).unwrap();
        assert_eq!(
            w.add(&t.join("missing"), Interest::Listing),
            Err(AddError::Failed)
        );
        assert_eq!(
            w.add(&t.join("file"), Interest::Listing),
            Err(AddError::Failed)
        );
    }

    #[cfg(unix)]
    #[test]
    fn no_final_symlink_is_followed_and_an_unreadable_directory_is_denied() {
        use std::os::unix::fs::PermissionsExt;
        let t = TempTree::new("watch-link");
        let w = Watch::new(&t).unwrap();
        std::os::unix::fs::symlink(t.path(), t.join("link")).unwrap();
        assert_eq!(
            w.add(&t.join("link"), Interest::Listing),
            Err(AddError::Failed)
        );
        let closed = t.mkdir("closed");
        fs::set_permissions(&closed, fs::Permissions::from_mode(0o000)).unwrap();
        // SAFETY: geteuid takes nothing and cannot fail (root may read any directory).
        if unsafe { libc::geteuid() } != 0 {
            assert_eq!(w.add(&closed, Interest::Listing), Err(AddError::Denied));
        }
        fs::set_permissions(&closed, fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// Only inotify reports every close after writing; elsewhere a cache stats its files.
    #[test]
    fn only_a_writes_watch_sees_a_close_after_writing_that_changed_nothing() {
        let t = TempTree::new("watch-close");
        t.write("a.json", "{}");
        let w = Watch::new(&t).unwrap();
        let listing = w.add(&t, Interest::Listing).unwrap();
        let other = Watch::new(&t).unwrap();
        let Ok(writes) = other.add(&t, Interest::Writes) else {
            assert_ne!(KIND, "inotify", "inotify serves Writes");
            return;
        };
        drop(
            fs::OpenOptions::new()
                .write(true)
                .open(t.join("a.json"))
                .unwrap(),
        );
        assert_eq!(events(&w), (vec![], Drained::Empty), "listing {listing:?}");
        assert_eq!(
            events(&other),
            (
                vec![(writes, "a.json".into(), false, false)],
                Drained::Empty
            )
        );
    }
}
