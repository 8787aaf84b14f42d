//! For the OS watches that follow a whole tree by path (FSEvents, ReadDirectoryChangesW):
//! the directories added, by their path under the root, and each change the OS reports
//! turned into the per-directory events of the one watcher (tree/watch.rs).
//!
//! Both file systems ignore case by default (APFS, NTFS), and an OS may name a path in
//! another case than the one it was added in, so directories are found by their path in
//! lower case; two directories that differ only in case (a case-sensitive volume) both get
//! the event, which costs a re-read, never a missed change.

use crate::tree::watch::event::{AddError, Drained, Event, Interest, Wd};
use std::collections::{HashMap, VecDeque};
use std::ops::ControlFlow;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

/// One change as the OS reported it.
#[cfg_attr(test, derive(Debug, PartialEq))]
pub enum Change {
    /// The entry at `rel` (under the root, `/`-separated, empty for the root) changed.
    Entry {
        rel: Vec<u8>,
        /// It was removed or renamed (to or from this path: the OS may not say which).
        may_be_gone: bool,
        /// Whether it is a directory, when the OS said.
        is_dir: Option<bool>,
    },
    /// The root itself was removed or moved.
    #[cfg_attr(windows, allow(dead_code))] // only FSEvents says so; on Windows the read fails
    RootGone,
    /// Events were lost.
    Lost,
}

/// The directories watched under one root.
pub struct Dirs {
    root: PathBuf,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    next: i32,
    by_path: HashMap<String, Vec<Wd>>,
    paths: HashMap<Wd, String>,
}

fn fold(rel: &[u8]) -> String {
    String::from_utf8_lossy(rel).to_lowercase()
}

impl Dirs {
    pub fn new(root: &Path) -> Dirs {
        Dirs {
            root: root.to_path_buf(),
            inner: Mutex::default(),
        }
    }

    /// Take `dir` (under the root) into the watch, which already follows the whole tree.
    pub fn add(&self, dir: &Path, interest: Interest) -> Result<Wd, AddError> {
        if interest == Interest::Writes {
            return Err(AddError::Failed); // a write through a mapping may go unreported
        }
        let rel = relative(&self.root, dir).ok_or(AddError::Failed)?;
        match std::fs::symlink_metadata(dir) {
            Ok(m) if m.is_dir() => {}
            _ => return Err(AddError::Failed), // missing, a file, or a link (junctions too)
        }
        if let Err(e) = std::fs::read_dir(dir) {
            let denied = e.kind() == std::io::ErrorKind::PermissionDenied;
            return Err(if denied {
                AddError::Denied
            } else {
                AddError::Failed
            });
        }
        let mut inner = self.inner.lock().unwrap();
        inner.next += 1;
        let wd = Wd(inner.next);
        let key = fold(rel.as_bytes());
        inner.by_path.entry(key.clone()).or_default().push(wd);
        inner.paths.insert(wd, key);
        Ok(wd)
    }

    pub fn remove(&self, wd: Wd) {
        let mut inner = self.inner.lock().unwrap();
        if let Some(key) = inner.paths.remove(&wd) {
            if let Some(wds) = inner.by_path.get_mut(&key) {
                wds.retain(|&w| w != wd);
                if wds.is_empty() {
                    inner.by_path.remove(&key);
                }
            }
        }
    }

    /// Hand the events of `changes` to `each` in order; after a stop, the changes not yet
    /// begun stay in `changes`.
    pub fn deliver(
        &self,
        changes: &mut VecDeque<Change>,
        mut each: impl FnMut(Event) -> ControlFlow<()>,
    ) -> Drained {
        let inner = self.inner.lock().unwrap();
        let none = Vec::new();
        let watched = |rel: &[u8]| inner.by_path.get(&fold(rel)).unwrap_or(&none);
        while let Some(change) = changes.pop_front() {
            let (rel, may_be_gone, is_dir) = match change {
                Change::Lost => {
                    changes.clear();
                    return Drained::Lost;
                }
                Change::RootGone => (None, true, Some(true)),
                Change::Entry {
                    rel,
                    may_be_gone,
                    is_dir,
                } => (Some(rel), may_be_gone, is_dir),
            };
            let gone = |wd| Event {
                wd,
                name: None,
                is_dir: true,
                gone: true,
            };
            let mut events = Vec::new();
            match &rel {
                None => events.extend(watched(b"").iter().map(|&wd| gone(wd))),
                Some(rel) => {
                    let here = watched(rel);
                    let now = std::fs::symlink_metadata(
                        self.root.join(String::from_utf8_lossy(rel).as_ref()),
                    );
                    let is_dir_now = now.is_ok_and(|m| m.is_dir());
                    if may_be_gone && !is_dir_now {
                        events.extend(here.iter().map(|&wd| gone(wd)));
                    }
                    let is_dir = is_dir.unwrap_or(is_dir_now || !here.is_empty());
                    let (parent, name) = match rel.iter().rposition(|&b| b == b'/') {
                        Some(i) => (&rel[..i], &rel[i + 1..]),
                        None => (&b""[..], &rel[..]),
                    };
                    if !name.is_empty() {
                        events.extend(watched(parent).iter().map(|&wd| Event {
                            wd,
                            name: Some(name),
                            is_dir,
                            gone: false,
                        }));
                    }
                }
            }
            for event in events {
                if each(event).is_break() {
                    return Drained::Stopped;
                }
            }
        }
        Drained::Empty
    }
}

/// `dir` under `root`, `/`-separated and empty for the root itself; None when it is not
/// under the root or a name is not UTF-8.
fn relative(root: &Path, dir: &Path) -> Option<String> {
    let rest = dir.strip_prefix(root).ok()?;
    let mut rel = String::new();
    for part in rest.components() {
        let Component::Normal(name) = part else {
            return None;
        };
        if !rel.is_empty() {
            rel.push('/');
        }
        rel.push_str(name.to_str()?);
    }
    Some(rel)
}

/// `path` (as FSEvents reports it) under `root` (as FSEvents names it), as its bytes after
/// the root's; None when it is not under the root. The root compares in either ASCII case.
#[cfg_attr(windows, allow(dead_code))] // ReadDirectoryChangesW names paths under the root
pub fn under<'a>(root: &[u8], path: &'a [u8]) -> Option<&'a [u8]> {
    let (head, rest) = (path.get(..root.len())?, &path[root.len()..]);
    if !head.eq_ignore_ascii_case(root) {
        return None;
    }
    match rest {
        [] => Some(rest),
        [b'/', tail @ ..] => Some(tail),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TempTree;

    fn entry(rel: &str, may_be_gone: bool, is_dir: Option<bool>) -> Change {
        Change::Entry {
            rel: rel.as_bytes().to_vec(),
            may_be_gone,
            is_dir,
        }
    }

    fn deliver(dirs: &Dirs, changes: Vec<Change>) -> (Vec<(Wd, String, bool, bool)>, Drained) {
        let mut seen = Vec::new();
        let end = dirs.deliver(&mut changes.into(), |e| {
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
    fn paths_become_events_of_their_parent_in_any_case() {
        let t = TempTree::with("watch-tree", &[("Src/a.rs", "x")]);
        let dirs = Dirs::new(&t);
        let (root, src) = (
            dirs.add(&t, Interest::Listing).unwrap(),
            dirs.add(&t.join("Src"), Interest::Listing).unwrap(),
        );
        let changes = vec![
            entry("Src/a.rs", false, None),
            entry("src/b.rs", false, Some(false)),
            entry("Src", false, None),
            entry("node_modules/x.js", false, None),
        ];
        let got = deliver(&dirs, changes);
        let want = vec![
            (src, "a.rs".into(), false, false),
            (src, "b.rs".into(), false, false),
            (root, "Src".into(), true, false), // a directory, found by a stat
        ];
        assert_eq!(
            got,
            (want, Drained::Empty),
            "nothing of an unwatched directory"
        );
    }

    #[test]
    fn a_removed_watched_directory_is_gone_and_lost_events_drop_the_rest() {
        let t = TempTree::new("watch-tree-gone");
        t.mkdir("a");
        let dirs = Dirs::new(&t);
        let (root, a) = (
            dirs.add(&t, Interest::Listing).unwrap(),
            dirs.add(&t.join("a"), Interest::Listing).unwrap(),
        );
        std::fs::remove_dir(t.join("a")).unwrap();
        let got = deliver(&dirs, vec![entry("a", true, None)]);
        assert_eq!(
            got,
            (
                vec![
                    (a, String::new(), true, true),
                    (root, "a".into(), true, false)
                ],
                Drained::Empty
            )
        );
        assert_eq!(
            deliver(&dirs, vec![Change::RootGone]),
            (vec![(root, String::new(), true, true)], Drained::Empty)
        );
        let mut changes: VecDeque<Change> = vec![
            entry("b", false, None),
            Change::Lost,
            entry("c", false, None),
        ]
        .into();
        assert_eq!(
            dirs.deliver(&mut changes, |_| ControlFlow::Continue(())),
            Drained::Lost
        );
        assert!(changes.is_empty());
        dirs.remove(a);
        assert_eq!(
            deliver(&dirs, vec![entry("a/x", false, Some(false))]),
            (vec![], Drained::Empty),
            "a removed watch"
        );
        assert_eq!(
            dirs.add(&t, Interest::Writes),
            Err(AddError::Failed),
            "writes are inotify's only"
        );
        assert_eq!(
            dirs.add(&t.join("../elsewhere"), Interest::Listing),
            Err(AddError::Failed)
        );
    }

    #[test]
    fn a_stop_keeps_the_changes_not_begun() {
        let t = TempTree::new("watch-tree-stop");
        let dirs = Dirs::new(&t);
        dirs.add(&t, Interest::Listing).unwrap();
        let mut changes: VecDeque<Change> = vec![
            entry("x", false, Some(false)),
            entry("y", false, Some(false)),
        ]
        .into();
        assert_eq!(
            dirs.deliver(&mut changes, |_| ControlFlow::Break(())),
            Drained::Stopped
        );
        assert_eq!(changes.len(), 1);
    }

    #[test]
    fn a_path_is_under_the_root_only_past_a_separator() {
        assert_eq!(
            under(b"/Users/me/repo", b"/users/me/repo/a/b"),
            Some(&b"a/b"[..])
        );
        assert_eq!(under(b"/Users/me/repo", b"/Users/me/repo"), Some(&b""[..]));
        assert_eq!(under(b"/Users/me/repo", b"/Users/me/repo2/a"), None);
        assert_eq!(under(b"/Users/me/repo", b"/Users/me"), None);
    }
}
