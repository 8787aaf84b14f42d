//! FSEvents (macOS): one stream over the whole root, with file-level events, delivered on
//! a dispatch queue of its own into a queue that `drain` empties. Before it does,
//! `FSEventStreamFlushSync` returns only once every event that had occurred was handed to
//! the callback, which is the barrier the watcher's contract needs. Dropped events
//! (MustScanSubDirs, UserDropped, KernelDropped), wrapped ids and mounts count as lost.

use crate::tree::watch::event::{AddError, Drained, Event, Interest, Wd};
use crate::tree::watch::tree::{under, Change, Dirs};
use std::collections::VecDeque;
use std::ffi::{c_char, c_void, CStr};
use std::ops::ControlFlow;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::{Arc, Mutex};

type CFIndex = isize;

#[repr(C)]
struct CFArrayCallBacks {
    version: CFIndex,
    retain: *const c_void,
    release: *const c_void,
    copy_description: *const c_void,
    equal: *const c_void,
}

#[repr(C)]
struct StreamContext {
    version: CFIndex,
    info: *mut c_void,
    retain: Option<unsafe extern "C" fn(*const c_void) -> *const c_void>,
    release: Option<unsafe extern "C" fn(*const c_void)>,
    copy_description: *const c_void,
}

type StreamCallback = unsafe extern "C" fn(
    stream: *mut c_void,
    info: *mut c_void,
    count: usize,
    paths: *mut c_void,
    flags: *const u32,
    ids: *const u64,
);

#[link(name = "CoreFoundation", kind = "framework")]
extern "C" {
    static kCFTypeArrayCallBacks: CFArrayCallBacks;
    fn CFStringCreateWithBytes(
        alloc: *const c_void,
        bytes: *const u8,
        len: CFIndex,
        encoding: u32,
        external: u8,
    ) -> *const c_void;
    fn CFArrayCreate(
        alloc: *const c_void,
        values: *const *const c_void,
        count: CFIndex,
        callbacks: *const CFArrayCallBacks,
    ) -> *const c_void;
    fn CFRelease(cf: *const c_void);
}

#[link(name = "CoreServices", kind = "framework")]
extern "C" {
    fn FSEventStreamCreate(
        alloc: *const c_void,
        callback: StreamCallback,
        context: *const StreamContext,
        paths: *const c_void,
        since: u64,
        latency: f64,
        flags: u32,
    ) -> *mut c_void;
    fn FSEventStreamSetDispatchQueue(stream: *mut c_void, queue: *mut c_void);
    fn FSEventStreamStart(stream: *mut c_void) -> u8;
    fn FSEventStreamFlushSync(stream: *mut c_void);
    fn FSEventStreamStop(stream: *mut c_void);
    fn FSEventStreamInvalidate(stream: *mut c_void);
    fn FSEventStreamRelease(stream: *mut c_void);
}

// libdispatch is part of libSystem.
extern "C" {
    fn dispatch_queue_create(label: *const c_char, attr: *mut c_void) -> *mut c_void;
    fn dispatch_release(object: *mut c_void);
}

const UTF8: u32 = 0x0800_0100; // kCFStringEncodingUTF8
const SINCE_NOW: u64 = u64::MAX; // kFSEventStreamEventIdSinceNow
const NO_DEFER: u32 = 0x02;
const WATCH_ROOT: u32 = 0x04;
const FILE_EVENTS: u32 = 0x10;
// Event flags.
const LOST: u32 = 0x01 | 0x02 | 0x04 | 0x08 | 0x40 | 0x80; // must scan, dropped (user, kernel), ids wrapped, (un)mount
const ROOT_CHANGED: u32 = 0x20;
const REMOVED: u32 = 0x200;
const RENAMED: u32 = 0x800;
const IS_FILE: u32 = 0x1_0000;
const IS_DIR: u32 = 0x2_0000;
const IS_SYMLINK: u32 = 0x4_0000;

/// What the stream's callback shares with `drain`.
struct Shared {
    /// The root as FSEvents names it (every link resolved).
    root: Vec<u8>,
    queue: Mutex<VecDeque<Change>>,
}

impl Shared {
    fn change(&self, path: &[u8], flags: u32) -> Option<Change> {
        if flags & LOST != 0 {
            return Some(Change::Lost);
        }
        if flags & ROOT_CHANGED != 0 {
            return Some(Change::RootGone);
        }
        let rel = under(&self.root, path)?.to_vec();
        let is_dir = (flags & (IS_FILE | IS_DIR | IS_SYMLINK) != 0).then_some(flags & IS_DIR != 0);
        Some(Change::Entry {
            rel,
            may_be_gone: flags & (REMOVED | RENAMED) != 0,
            is_dir,
        })
    }
}

unsafe extern "C" fn retain(info: *const c_void) -> *const c_void {
    // SAFETY: `info` came from Arc::as_ptr of a live Arc<Shared>.
    unsafe { Arc::increment_strong_count(info as *const Shared) };
    info
}

unsafe extern "C" fn release(info: *const c_void) {
    // SAFETY: balances a `retain` above.
    unsafe { Arc::decrement_strong_count(info as *const Shared) };
}

unsafe extern "C" fn on_events(
    _stream: *mut c_void,
    info: *mut c_void,
    count: usize,
    paths: *mut c_void,
    flags: *const u32,
    _ids: *const u64,
) {
    // SAFETY: the stream holds a reference to `info` (retain above) while it calls back, and
    // hands `count` C strings and flags (no kFSEventStreamCreateFlagUseCFTypes).
    let (shared, paths, flags) = unsafe {
        (
            &*(info as *const Shared),
            std::slice::from_raw_parts(paths as *const *const c_char, count),
            std::slice::from_raw_parts(flags, count),
        )
    };
    let mut queue = shared.queue.lock().unwrap_or_else(|e| e.into_inner());
    for (&path, &flag) in paths.iter().zip(flags) {
        // SAFETY: each path is a NUL-terminated string that lives through the call.
        let path = unsafe { CStr::from_ptr(path) }.to_bytes();
        queue.extend(shared.change(path, flag));
    }
}

/// An FSEvents stream and the directories taken into the watch.
pub struct Watch {
    stream: *mut c_void,
    queue: *mut c_void,
    shared: Arc<Shared>,
    dirs: Dirs,
}

// SAFETY: the stream and the dispatch queue are used only through FSEvents and libdispatch
// calls, which may come from any thread; the shared state is behind a Mutex.
unsafe impl Send for Watch {}
unsafe impl Sync for Watch {}

impl Watch {
    pub fn new(root: &Path) -> Result<Watch, String> {
        let real = std::fs::canonicalize(root)
            .map_err(|e| format!("FSEvents: the root cannot be resolved: {e}"))?;
        let shared = Arc::new(Shared {
            root: real.as_os_str().as_bytes().to_vec(),
            queue: Mutex::default(),
        });
        let context = StreamContext {
            version: 0,
            info: Arc::as_ptr(&shared) as *mut c_void,
            retain: Some(retain),
            release: Some(release),
            copy_description: std::ptr::null(),
        };
        // SAFETY: every pointer passed is valid for the call; the stream copies the paths and
        // retains `info`; the array and string are released once the stream holds its copy.
        unsafe {
            let path = CFStringCreateWithBytes(
                std::ptr::null(),
                shared.root.as_ptr(),
                shared.root.len() as CFIndex,
                UTF8,
                0,
            );
            if path.is_null() {
                return Err("FSEvents: the root's path is not UTF-8".into());
            }
            let paths = CFArrayCreate(std::ptr::null(), &path, 1, &kCFTypeArrayCallBacks);
            CFRelease(path);
            let flags = NO_DEFER | WATCH_ROOT | FILE_EVENTS;
            let stream = FSEventStreamCreate(
                std::ptr::null(),
                on_events,
                &context,
                paths,
                SINCE_NOW,
                0.0,
                flags,
            );
            CFRelease(paths);
            if stream.is_null() {
                return Err("FSEvents could not create a stream".into());
            }
            let queue = dispatch_queue_create(c"repoctx.watch".as_ptr(), std::ptr::null_mut());
            FSEventStreamSetDispatchQueue(stream, queue);
            let watch = Watch {
                stream,
                queue,
                shared,
                dirs: Dirs::new(root),
            };
            if FSEventStreamStart(stream) == 0 {
                return Err("FSEvents could not start a stream".into()); // dropping it frees it
            }
            Ok(watch)
        }
    }

    pub fn add(&self, dir: &Path, interest: Interest) -> Result<Wd, AddError> {
        self.dirs.add(dir, interest)
    }

    pub fn remove(&self, wd: Wd) {
        self.dirs.remove(wd)
    }

    pub fn drain(&self, each: impl FnMut(Event) -> ControlFlow<()>) -> Drained {
        // SAFETY: the stream is started and valid until drop.
        unsafe { FSEventStreamFlushSync(self.stream) };
        let mut queue = self.shared.queue.lock().unwrap_or_else(|e| e.into_inner());
        self.dirs.deliver(&mut queue, each)
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        // SAFETY: stop (a no-op when never started), invalidate and release once; after
        // invalidation no callback runs, and the stream's release drops its `info`.
        unsafe {
            FSEventStreamStop(self.stream);
            FSEventStreamInvalidate(self.stream);
            FSEventStreamRelease(self.stream);
            dispatch_release(self.queue);
        }
    }
}
