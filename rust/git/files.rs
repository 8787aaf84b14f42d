//! Reading the files a repository holds: bounded, never blocking on a FIFO nor reading a device;
//! a worktree file hashed as a blob, a worktree directory listed.

use crate::git::bounds::MAX_HASH_BYTES;
use crate::tree::os::{self, Meta, PlainDir as Dir, Stat as St};
use gix::hash::ObjectId;
use std::fs::{self, Metadata};
use std::io::Read;
use std::path::Path;

/// A regular file's bytes (a link followed, as git follows it), at most `max` of them; never
/// blocks on a FIFO nor reads a device.
pub(super) fn read_regular(path: &Path, max: u64) -> std::io::Result<(Vec<u8>, Metadata)> {
    let mut file = os::open_path(path, true)?;
    let md = file.metadata()?;
    if !md.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    if md.len() > max {
        return Err(std::io::Error::other("too large"));
    }
    let mut data = Vec::with_capacity(md.len() as usize);
    (&mut file).take(max).read_to_end(&mut data)?;
    Ok((data, md))
}

/// The blob id of file `name` in directory `dir`, or None when it cannot be hashed (gone, too
/// large, not regular any more, changed while read): the caller then takes it as changed.
pub(super) fn hash_file(dir: &Dir, name: &[u8], seen: &St) -> Option<ObjectId> {
    if seen.size > MAX_HASH_BYTES {
        return None;
    }
    let mut file = dir.open_file(name)?;
    let md = file.metadata().ok()?;
    let st = md.stat();
    if !md.is_file() || st.ino != seen.ino || st.dev != seen.dev || md.len() != seen.size {
        return None;
    }
    // Its size in bytes, as git reads it (a file shorter by then: None; one that grew since has
    // a new stat, so it is hashed again next time).
    let mut hasher = gix::hash::hasher(gix::hash::Kind::Sha1);
    hasher.update(format!("blob {}\0", md.len()).as_bytes());
    let mut buf = vec![0u8; (md.len() as usize).clamp(1, 64 << 10)];
    let mut left = md.len();
    while left > 0 {
        let want = buf.len().min(left as usize);
        let n = file.read(&mut buf[..want]).ok()?;
        if n == 0 {
            return None;
        }
        left -= n as u64;
        hasher.update(&buf[..n]);
    }
    hasher.try_finalize().ok()
}

pub(super) fn hash_link(dir: &Dir, name: &[u8]) -> Option<ObjectId> {
    let target = dir.read_link(name)?;
    let bytes = &target[..];
    let mut hasher = gix::hash::hasher(gix::hash::Kind::Sha1);
    hasher.update(format!("blob {}\0", bytes.len()).as_bytes());
    hasher.update(bytes);
    hasher.try_finalize().ok()
}

/// The entries of a worktree directory but `.git`: (name, is a directory, is a file or symlink).
pub(super) fn list(dir: &Dir) -> Vec<(Vec<u8>, bool, bool)> {
    let mut out = Vec::new();
    dir.entries(|name, kind| {
        if name == b".git" {
            return;
        }
        let kind = match kind {
            Some(k) => k,
            None => match dir.stat(name) {
                Some(st) => st.kind(),
                None => return,
            },
        };
        let (is_dir, is_file) = match kind {
            os::Kind::Dir => (true, false),
            os::Kind::File | os::Kind::Link => (false, true),
            os::Kind::Other => (false, false),
        };
        out.push((name.to_vec(), is_dir, is_file));
    });
    out
}

/// At most `max` bytes of an opened regular file.
pub(super) fn read_open(file: fs::File, max: u64) -> Option<Vec<u8>> {
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut data = Vec::new();
    file.take(max).read_to_end(&mut data).ok()?;
    Some(data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::index::EMPTY_BLOB;

    use crate::testing::TempTree;
    #[test]
    fn blob_ids_are_gits() {
        let tree = TempTree::new("git-hash");
        let dir = tree.path().to_path_buf();
        fs::write(dir.join("hello"), "hello\n").unwrap();
        fs::write(dir.join("empty"), "").unwrap();
        let handle = Dir::top(&dir).unwrap();
        let id = |p: &str| {
            hash_file(
                &handle,
                p.as_bytes(),
                &fs::symlink_metadata(dir.join(p)).unwrap().stat(),
            )
            .unwrap()
            .to_string()
        };
        assert_eq!(id("hello"), "ce013625030ba8dba906f756967f9e9ca394464a");
        assert_eq!(id("empty"), "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
        assert_eq!(
            ObjectId::from_bytes_or_panic(&EMPTY_BLOB).to_string(),
            id("empty")
        );
        // A file that grew since its stat was taken is not hashed.
        let before = fs::symlink_metadata(dir.join("hello")).unwrap().stat();
        fs::write(dir.join("hello"), "hello, world\n").unwrap();
        assert!(hash_file(&handle, b"hello", &before).is_none());
    }

    #[test]
    #[cfg_attr(
        windows,
        ignore = "wine 8's CreateSymbolicLinkW is a stub: it returns success and makes no link"
    )]
    fn a_links_blob_id_is_its_targets() {
        let tree = TempTree::new("git-hash-link");
        let dir = tree.path().to_path_buf();
        os::symlink("target/file", dir.join("link")).unwrap();
        let handle = Dir::top(&dir).unwrap();
        // `printf target/file | git hash-object --stdin`
        assert_eq!(
            hash_link(&handle, b"link").unwrap().to_string(),
            "c29deff6f4a0e273a803f77d7605e317e3552ee8"
        );
    }

    #[test]
    fn a_directory_is_opened_only_with_no_symlink_on_the_way() {
        let tree = TempTree::new("git-dirs");
        let dir = tree.path().to_path_buf();
        fs::create_dir_all(dir.join("a/b")).unwrap();
        fs::write(dir.join("a/b/f"), "x").unwrap();
        os::symlink("a", dir.join("link")).ok();
        let top = Dir::top(&dir).unwrap();
        let b = top.open(b"a/b").unwrap();
        assert!(b.stat(b"f").is_some_and(|s| s.is_file()));
        assert!(top.open(b"link/b").is_none(), "through a symlink");
        assert!(top.open(b"a/b/f").is_none(), "not a directory");
        assert!(top.open(b"a/missing").is_none());
        // A handle lists again from the start, however often it was listed.
        let names = |d: &Dir| list(d).into_iter().map(|(n, _, _)| n).collect::<Vec<_>>();
        assert_eq!(names(&b), vec![b"f".to_vec()]);
        assert_eq!(names(&b), vec![b"f".to_vec()]);
        drop((b, top)); // (Windows removes no directory a handle holds open)
        fs::remove_dir_all(&dir).unwrap();
    }
}
