//! ReadDirectoryChangesW (Windows): one overlapped read over the whole root, kept pending.
//! A change completes the pending read while the change is made (the file system reports
//! it in the changing call), and between reads the kernel keeps buffering for the handle,
//! so `drain` polls the read's result without waiting, re-arms it, and polls again until
//! nothing is left: every change made before the drain is in it. A full kernel buffer
//! (zero bytes, or ERROR_NOTIFY_ENUM_DIR) or a failed read counts as lost.

use crate::tree::watch::event::{AddError, Drained, Event, Interest, Wd};
use crate::tree::watch::tree::{Change, Dirs};
use std::collections::VecDeque;
use std::ops::ControlFlow;
use std::os::windows::ffi::OsStrExt;
use std::path::Path;
use std::sync::Mutex;
use windows_sys::Win32::Foundation::{
    CloseHandle, GetLastError, ERROR_IO_INCOMPLETE, HANDLE, INVALID_HANDLE_VALUE,
};
use windows_sys::Win32::Storage::FileSystem::{
    CreateFileW, ReadDirectoryChangesW, FILE_ACTION_REMOVED, FILE_ACTION_RENAMED_OLD_NAME,
    FILE_FLAG_BACKUP_SEMANTICS, FILE_FLAG_OVERLAPPED, FILE_LIST_DIRECTORY,
    FILE_NOTIFY_CHANGE_ATTRIBUTES, FILE_NOTIFY_CHANGE_CREATION, FILE_NOTIFY_CHANGE_DIR_NAME,
    FILE_NOTIFY_CHANGE_FILE_NAME, FILE_NOTIFY_CHANGE_LAST_WRITE, FILE_NOTIFY_CHANGE_SECURITY,
    FILE_NOTIFY_CHANGE_SIZE, FILE_SHARE_DELETE, FILE_SHARE_READ, FILE_SHARE_WRITE, OPEN_EXISTING,
};
use windows_sys::Win32::System::IO::{CancelIoEx, GetOverlappedResult, OVERLAPPED};

/// The kernel buffers as much as the first read asked for: 256 KiB of records.
const WORDS: usize = 1 << 16;

const FILTER: u32 = FILE_NOTIFY_CHANGE_FILE_NAME
    | FILE_NOTIFY_CHANGE_DIR_NAME
    | FILE_NOTIFY_CHANGE_ATTRIBUTES
    | FILE_NOTIFY_CHANGE_SIZE
    | FILE_NOTIFY_CHANGE_LAST_WRITE
    | FILE_NOTIFY_CHANGE_CREATION
    | FILE_NOTIFY_CHANGE_SECURITY;

/// The handle of the root and its pending read. The OVERLAPPED and the buffer are boxed:
/// the kernel writes to them while a read is pending, so they never move.
struct Pending {
    handle: HANDLE,
    overlapped: Box<OVERLAPPED>,
    buf: Box<[u32]>, // DWORD-aligned, as the records are
    /// The read is pending (false once a read could not be placed: every drain is lost).
    armed: bool,
    /// Changes taken from the kernel and not yet handed over.
    backlog: VecDeque<Change>,
}

// SAFETY: the handle is used only through kernel calls, behind the Watch's Mutex.
unsafe impl Send for Pending {}

impl Pending {
    fn arm(&mut self) -> bool {
        *self.overlapped = OVERLAPPED::default();
        // SAFETY: the handle is open; the buffer and OVERLAPPED live (boxed, unmoved) until
        // the read completes or is cancelled in drop.
        self.armed = unsafe {
            ReadDirectoryChangesW(
                self.handle,
                self.buf.as_mut_ptr().cast(),
                (self.buf.len() * 4) as u32,
                1,
                FILTER,
                std::ptr::null_mut(),
                &mut *self.overlapped,
                None,
            ) != 0
        };
        self.armed
    }

    /// Move every completed record into the backlog, without waiting (and Lost when events
    /// were lost).
    fn take(&mut self) {
        loop {
            if !self.armed {
                return self.backlog.push_back(Change::Lost);
            }
            let mut bytes = 0u32;
            // SAFETY: the OVERLAPPED is the one of the pending read; bWait is false.
            if unsafe { GetOverlappedResult(self.handle, &*self.overlapped, &mut bytes, 0) } == 0 {
                // SAFETY: reads the calling thread's last error.
                if unsafe { GetLastError() } == ERROR_IO_INCOMPLETE {
                    return; // nothing more has happened
                }
                self.backlog.push_back(Change::Lost); // ERROR_NOTIFY_ENUM_DIR (overflow), or the read failed
            } else if bytes == 0 {
                self.backlog.push_back(Change::Lost); // the kernel's buffer overflowed
            } else {
                records(&self.buf, bytes as usize, &mut self.backlog);
            }
            if !self.arm() {
                return self.backlog.push_back(Change::Lost);
            }
        }
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        let mut bytes = 0u32;
        // SAFETY: cancel the pending read and wait until the kernel lets go of the buffer.
        unsafe {
            if self.armed {
                CancelIoEx(self.handle, &*self.overlapped);
                GetOverlappedResult(self.handle, &*self.overlapped, &mut bytes, 1);
            }
            CloseHandle(self.handle);
        }
    }
}

/// The FILE_NOTIFY_INFORMATION records in the first `len` bytes of `buf`, as changes with
/// `/`-separated paths under the root. Windows places each record on a DWORD boundary;
/// wine does not (a record may follow one of 18 bytes), so any offset is read.
fn records(buf: &[u32], len: usize, out: &mut VecDeque<Change>) {
    let byte = |i: usize| (buf[i / 4] >> (8 * (i % 4))) as u8; // little-endian
    let word = |i: usize| u32::from_le_bytes([byte(i), byte(i + 1), byte(i + 2), byte(i + 3)]);
    let mut at = 0; // in bytes
    while at + 12 <= len {
        let (next, action, name_len) = (word(at) as usize, word(at + 4), word(at + 8) as usize);
        if at + 12 + name_len > len || name_len % 2 != 0 {
            return out.push_back(Change::Lost); // a record the kernel would never write
        }
        let name: Vec<u16> = (at + 12..at + 12 + name_len)
            .step_by(2)
            .map(|i| u16::from_le_bytes([byte(i), byte(i + 1)]))
            .collect();
        // A name that is not valid UTF-16 gets bytes that are not UTF-8, so callers treat it
        // as a walk does such a name.
        let rel = match String::from_utf16(&name) {
            Ok(s) => s.replace('\\', "/").into_bytes(),
            Err(_) => vec![0xff],
        };
        let may_be_gone = action == FILE_ACTION_REMOVED || action == FILE_ACTION_RENAMED_OLD_NAME;
        out.push_back(Change::Entry {
            rel,
            may_be_gone,
            is_dir: None,
        });
        if next == 0 {
            break;
        }
        at += next;
    }
}

/// The root's handle with its pending read, and the directories taken into the watch.
pub struct Watch {
    pending: Mutex<Pending>,
    dirs: Dirs,
}

impl Watch {
    pub fn new(root: &Path) -> Result<Watch, String> {
        let wide: Vec<u16> = root.as_os_str().encode_wide().chain([0]).collect();
        // SAFETY: a NUL-terminated path; no security attributes or template.
        let handle = unsafe {
            CreateFileW(
                wide.as_ptr(),
                FILE_LIST_DIRECTORY,
                FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                std::ptr::null(),
                OPEN_EXISTING,
                FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OVERLAPPED,
                std::ptr::null_mut(),
            )
        };
        if handle == INVALID_HANDLE_VALUE {
            return Err(format!(
                "ReadDirectoryChangesW: the root cannot be opened: {}",
                std::io::Error::last_os_error()
            ));
        }
        let mut pending = Pending {
            handle,
            overlapped: Box::default(),
            buf: vec![0u32; WORDS].into_boxed_slice(),
            armed: false,
            backlog: VecDeque::new(),
        };
        if !pending.arm() {
            return Err(format!(
                "ReadDirectoryChangesW failed: {}",
                std::io::Error::last_os_error()
            ));
        }
        Ok(Watch {
            pending: Mutex::new(pending),
            dirs: Dirs::new(root),
        })
    }

    pub fn add(&self, dir: &Path, interest: Interest) -> Result<Wd, AddError> {
        self.dirs.add(dir, interest)
    }

    pub fn remove(&self, wd: Wd) {
        self.dirs.remove(wd)
    }

    pub fn drain(&self, each: impl FnMut(Event) -> ControlFlow<()>) -> Drained {
        let mut pending = self.pending.lock().unwrap();
        pending.take();
        self.dirs.deliver(&mut pending.backlog, each)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// FILE_NOTIFY_INFORMATION records packed with no padding (as wine writes them), in
    /// DWORDs as the kernel's buffer holds them, and their length in bytes.
    fn packed(records: &[(u32, &str)]) -> (Vec<u32>, usize) {
        let mut bytes = Vec::new();
        for (i, (action, name)) in records.iter().enumerate() {
            let name: Vec<u8> = name.encode_utf16().flat_map(u16::to_le_bytes).collect();
            let next = if i + 1 == records.len() {
                0
            } else {
                12 + name.len()
            };
            bytes.extend((next as u32).to_le_bytes());
            bytes.extend(action.to_le_bytes());
            bytes.extend((name.len() as u32).to_le_bytes());
            bytes.extend(name);
        }
        let len = bytes.len();
        bytes.resize(len.next_multiple_of(4), 0);
        let words = bytes
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()));
        (words.collect(), len)
    }

    fn changes(buf: &[u32], len: usize) -> Vec<Change> {
        let mut out = VecDeque::new();
        records(buf, len, &mut out);
        out.into()
    }

    #[test]
    fn records_at_any_offset_are_read_and_a_cut_record_is_lost() {
        // "a\x" is 6 bytes of name: the second record begins at byte 18, off a DWORD.
        let (buf, len) = packed(&[(1, "a\\x"), (FILE_ACTION_REMOVED, "a")]);
        let entry = |rel: &str, may_be_gone| Change::Entry {
            rel: rel.into(),
            may_be_gone,
            is_dir: None,
        };
        assert_eq!(
            changes(&buf, len),
            vec![entry("a/x", false), entry("a", true)]
        );
        assert_eq!(
            changes(&buf, len - 1),
            vec![entry("a/x", false), Change::Lost]
        );
    }
}
