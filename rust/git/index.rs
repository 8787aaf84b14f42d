//! The index, filed by directory, and git's stat cache: when an entry vouches for its file
//! without the file being read.

use crate::git::answer::{cannot, Answer, CannotTell};
use crate::git::bounds::MAX_INDEX_BYTES;
use crate::git::kind::Kind;
use crate::git::paths::{clean_path, split};
use crate::tree::os::{Key, Meta, Stat as St};
use gix::hash::ObjectId;
use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::Path;

pub(super) const ASSUMED: u8 = 1; // assume-unchanged or skip-worktree: git takes the index's word for it
pub(super) const UNMERGED: u8 = 2; // only conflict stages: git compares the file itself

#[derive(Debug)]
pub(super) struct IndexEntry {
    pub(super) name: Box<[u8]>,
    pub(super) kind: Kind,
    pub(super) id: ObjectId,
    pub(super) stat: gix::index::entry::Stat,
    pub(super) flags: u8,
}

/// The index filed by directory (worktree-relative, "" for the top), each directory's entries
/// sorted by name.
#[derive(Default)]
pub(super) struct IndexView {
    pub(super) key: Option<Key>,
    /// The index file's mtime (seconds, nanoseconds): entries not older are racily clean.
    pub(super) stamp: (u32, u32),
    pub(super) dirs: HashMap<Box<[u8]>, Vec<IndexEntry>>,
    /// Every directory with an entry at any depth below it (git recurses into these).
    pub(super) tracked_dirs: HashSet<Box<[u8]>>,
}

impl IndexView {
    pub(super) fn load(path: &Path) -> Answer<IndexView> {
        let md = match fs::metadata(path) {
            Ok(md) => md,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(IndexView::default()),
            Err(_) => return Err(CannotTell),
        };
        if !md.is_file() || md.len() > MAX_INDEX_BYTES {
            return Err(CannotTell);
        }
        let options = gix::index::decode::Options {
            thread_limit: Some(1),
            alloc_limit_bytes: Some(MAX_INDEX_BYTES as usize),
            ..Default::default()
        };
        let file =
            gix::index::File::at(path, gix::hash::Kind::Sha1, false, options).map_err(cannot)?;
        if file.is_sparse() {
            return Err(CannotTell); // directories for entries: not what the worktree is compared with
        }
        let st = md.stat();
        let stamp = (st.mtime.0 as u32, st.mtime.1 as u32);
        let mut view = IndexView {
            key: Some(Key::of(&md)),
            stamp,
            ..Default::default()
        };
        for e in file.entries() {
            let path: &[u8] = e.path(&file);
            if !clean_path(path) {
                return Err(CannotTell);
            }
            let kind = index_kind(e.mode).ok_or(CannotTell)?;
            let mut flags = 0;
            if e.flags.intersects(
                gix::index::entry::Flags::ASSUME_VALID | gix::index::entry::Flags::SKIP_WORKTREE,
            ) {
                flags |= ASSUMED;
            }
            if e.flags.stage_raw() != 0 {
                flags |= UNMERGED;
            }
            let (dir, name) = split(path);
            let list = view.dirs.entry(dir.into()).or_default();
            match list.last_mut() {
                // Stages of one path: one entry, compared by content; the stage git calls ours
                // (2) gives the kind when there is one.
                Some(last) if *last.name == *name => {
                    if e.flags.stage_raw() == 2 || last.flags & UNMERGED == 0 {
                        last.kind = kind;
                    }
                    last.flags |= flags | UNMERGED;
                }
                _ => list.push(IndexEntry {
                    name: name.into(),
                    kind,
                    id: e.id,
                    stat: e.stat,
                    flags,
                }),
            }
            let mut d = dir;
            while !d.is_empty() && view.tracked_dirs.insert(d.into()) {
                d = split(d).0;
            }
        }
        for list in view.dirs.values_mut() {
            if !list.is_sorted_by(|a, b| a.name < b.name) {
                return Err(CannotTell); // git refuses an unordered index too
            }
        }
        Ok(view)
    }

    pub(super) fn entries(&self, dir: &[u8]) -> &[IndexEntry] {
        self.dirs.get(dir).map_or(&[], Vec::as_slice)
    }

    pub(super) fn entry(&self, path: &[u8]) -> Option<&IndexEntry> {
        let (dir, name) = split(path);
        let list = self.entries(dir);
        list.binary_search_by(|e| (*e.name).cmp(name))
            .ok()
            .map(|i| &list[i])
    }

    pub(super) fn is_gitlink(&self, path: &[u8]) -> bool {
        self.entry(path).is_some_and(|e| e.kind == Kind::Gitlink)
    }

    /// Whether the entry's blob is the file's without reading it (git's stat cache): the stat
    /// it recorded still holds, it is not racily clean, and git did not smudge it (size 0 for
    /// a file that is not empty, git's mark for "racily clean, content changed").
    pub(super) fn vouches(&self, e: &IndexEntry, md: &St) -> bool {
        stat_matches(&e.stat, md)
            && !self.racy(&e.stat)
            && (e.stat.size != 0 || e.id.as_bytes() == EMPTY_BLOB)
    }

    /// Racily clean: written no earlier than the second the index was (git without USE_NSEC),
    /// so the file may have changed after its stat was taken, within that second.
    pub(super) fn racy(&self, stat: &gix::index::entry::Stat) -> bool {
        self.stamp.0 != 0 && self.stamp.0 <= stat.mtime.secs
    }
}

pub(super) fn index_kind(mode: gix::index::entry::Mode) -> Option<Kind> {
    use gix::index::entry::Mode;
    Some(match mode {
        Mode::FILE => Kind::File,
        Mode::FILE_EXECUTABLE => Kind::Exec,
        Mode::SYMLINK => Kind::Link,
        Mode::COMMIT => Kind::Gitlink,
        _ => return None,
    })
}

/// Whether the stat an index entry recorded still holds for the file, as git's
/// `ce_match_stat_basic` tells it (nanoseconds too where the index has them: more files are
/// hashed than git hashes, never fewer). The type and executable bit are checked apart.
pub(super) fn stat_matches(s: &gix::index::entry::Stat, m: &St) -> bool {
    let nanos = s.mtime.nsecs != 0 || s.ctime.nsecs != 0;
    s.mtime.secs == m.mtime.0 as u32
        && s.ctime.secs == m.ctime.0 as u32
        && (!nanos || (s.mtime.nsecs == m.mtime.1 as u32 && s.ctime.nsecs == m.ctime.1 as u32))
        && s.ino == m.ino as u32
        && s.uid == m.uid
        && s.gid == m.gid
        && s.size == m.size as u32
}

pub(super) const EMPTY_BLOB: [u8; 20] = [
    0xe6, 0x9d, 0xe2, 0x9b, 0xb2, 0xd1, 0xd6, 0x43, 0x4b, 0x8b, 0x29, 0xae, 0x77, 0x5a, 0xd8, 0xc2,
    0xe4, 0x8c, 0x53, 0x91,
];

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testing::TempTree;
    use gix::index::entry::stat::Time;
    use gix::index::entry::Stat;
    fn meta_of(path: &Path) -> St {
        fs::symlink_metadata(path).unwrap().stat()
    }

    fn stat_of(m: &St) -> Stat {
        Stat {
            mtime: Time {
                secs: m.mtime.0 as u32,
                nsecs: m.mtime.1 as u32,
            },
            ctime: Time {
                secs: m.ctime.0 as u32,
                nsecs: m.ctime.1 as u32,
            },
            dev: m.dev as u32,
            ino: m.ino as u32,
            uid: m.uid,
            gid: m.gid,
            size: m.size as u32,
        }
    }

    #[test]
    fn a_recorded_stat_matches_its_file_until_any_field_moves() {
        let tree = TempTree::new("git-stat");
        let dir = tree.path().to_path_buf();
        let file = dir.join("f");
        fs::write(&file, "abc").unwrap();
        let m = meta_of(&file);
        let s = stat_of(&m);
        assert!(stat_matches(&s, &m));
        for change in [
            |s: &mut Stat| s.size += 1,
            |s: &mut Stat| s.mtime.secs += 1,
            |s: &mut Stat| s.mtime.nsecs ^= 1,
            |s: &mut Stat| s.ctime.secs += 1,
            |s: &mut Stat| s.ino += 1,
            |s: &mut Stat| s.uid += 1,
        ] {
            let mut other = s;
            change(&mut other);
            assert!(!stat_matches(&other, &m), "{other:?}");
        }
        // An index written without nanoseconds compares seconds, as git without USE_NSEC.
        let mut whole = s;
        whole.mtime.nsecs = 0;
        whole.ctime.nsecs = 0;
        assert!(stat_matches(&whole, &m));
        // A touch moves the mtime: the entry no longer vouches for the file.
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
        fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(later)
            .unwrap();
        assert!(!stat_matches(&s, &meta_of(&file)));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn entries_not_older_than_the_index_are_racily_clean() {
        let at = |secs| Stat {
            mtime: Time { secs, nsecs: 5 },
            ..Default::default()
        };
        let view = IndexView {
            stamp: (100, 500),
            ..Default::default()
        };
        assert!(!view.racy(&at(99)));
        assert!(
            view.racy(&at(100)),
            "the same second as the index: racy whatever the nanoseconds"
        );
        assert!(view.racy(&at(101)));
        let unknown = IndexView {
            stamp: (0, 0),
            ..Default::default()
        };
        assert!(
            !unknown.racy(&at(100)),
            "git: an index without a timestamp has no racy entries"
        );
    }

    #[test]
    fn an_entry_vouches_for_its_file_only_when_its_stat_holds_and_it_is_not_racy() {
        let tree = TempTree::new("git-vouch");
        let dir = tree.path().to_path_buf();
        let file = dir.join("f");
        fs::write(&file, "same size, other content").unwrap();
        let m = meta_of(&file);
        // The entry names a blob that is not the file's: only the stat cache could say otherwise.
        let other = ObjectId::from_hex(b"ce013625030ba8dba906f756967f9e9ca394464a").unwrap();
        let entry = |stat| IndexEntry {
            name: b"f"[..].into(),
            kind: Kind::File,
            id: other,
            stat,
            flags: 0,
        };
        let written_after = IndexView {
            stamp: (m.mtime.0 as u32 + 1, 0),
            ..Default::default()
        };
        let written_with = IndexView {
            stamp: (m.mtime.0 as u32, 999_999_999),
            ..Default::default()
        };
        // The index was written a second after the file: the entry's stat vouches for it.
        assert!(written_after.vouches(&entry(stat_of(&m)), &m));
        // Written in the same second as the file: racily clean, the file must be read.
        assert!(!written_with.vouches(&entry(stat_of(&m)), &m));
        // Any stat field moved: read.
        let mut moved = stat_of(&m);
        moved.mtime.nsecs ^= 1;
        assert!(!written_after.vouches(&entry(moved), &m));
        // Smudged by git (size 0 recorded for a file that is not empty): read.
        let empty = dir.join("e");
        fs::write(&empty, "").unwrap();
        let em = meta_of(&empty);
        let mut smudged = entry(stat_of(&em));
        smudged.stat.size = 0;
        let after_empty = IndexView {
            stamp: (em.mtime.0 as u32 + 1, 0),
            ..Default::default()
        };
        assert!(
            !after_empty.vouches(&smudged, &em),
            "size 0 and not the empty blob"
        );
        smudged.id = ObjectId::from_bytes_or_panic(&EMPTY_BLOB);
        assert!(
            after_empty.vouches(&smudged, &em),
            "an empty file recorded as empty"
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
