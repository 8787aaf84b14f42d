//! What a watch says, on every OS: which directory (`Wd`), what it reports (`Interest`), one
//! event, how a drain ended, why a watch could not be placed. The watch (`watch.rs`) and each
//! OS's backend beside this file speak it; it names nothing else of the crate.

/// A watch descriptor: which watched directory an event is about.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Wd(pub(super) i32);

/// What a watch reports of a directory.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Interest {
    /// Its entries made, removed, moved, written or given a new mode, and the directory
    /// itself removed or moved; not the events of files already unlinked (the live index:
    /// a directory's listing and the stats of its files).
    Listing,
    /// All of that and every close after writing, of unlinked files too (a cache's files:
    /// any write at all, even one through a mapping, which reports no modification). Only
    /// inotify promises that; elsewhere `add` fails and the caller stats the files.
    Writes,
}

/// Why a watch could not be placed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum AddError {
    /// We may not read the directory (a walk leaves it out too).
    Denied,
    /// Anything else: the watch limit, no such directory, not a directory, outside the
    /// watched tree, or an interest this OS cannot serve.
    Failed,
}

/// One event, as far as the callers need it.
#[derive(Debug)]
pub struct Event<'a> {
    pub wd: Wd,
    /// The entry of the watched directory it is about (its bytes as the OS names it; from
    /// Windows, UTF-8, or not UTF-8 at all when the name is not valid UTF-16); None when it
    /// is about the directory.
    pub name: Option<&'a [u8]>,
    /// The entry is a directory.
    pub is_dir: bool,
    /// The watched directory itself was removed or moved, or its watch ended.
    pub gone: bool,
}

/// How a drain ended.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Drained {
    /// Every queued event was handed over.
    Empty,
    /// The callback asked to stop; the events after it stay queued.
    Stopped,
    /// Events were lost (a queue overflowed, or it could not be read).
    Lost,
}
