//! git's history as read for one HEAD (tasks/history.rs), saved for the next process in
//! `.repoctx/task-history.bin`: walking ruff's last 2,000 commits costs a process a third of a
//! second of CPU, a prompt hook more than the rest of its answer. A process whose HEAD is the
//! one saved takes the files of its commits from the file instead of walking git again.
//!
//! The bytes are untrusted (a repository can hold any file there): `decode` checks the magic,
//! the version, the core's build identity, the root, the number of commits read, the checksum,
//! every count against what follows (nothing is allocated ahead of the bytes that fill it), the
//! paths (UTF-8, relative, at most `MAX_PATH_BYTES` in all) and that nothing follows the last
//! commit. Whatever it accepts is only what git's own objects could say: a history is used for
//! the HEAD it names, which no file of that commit can know (its hash covers the file).
//!
//! Layout: magic, version (u32 LE), then fields each ended by a NUL (paths hold none): the build
//! identity, the root, MAX_COMMITS, HEAD, the number of commits, and per commit the number of its
//! files and their paths; counts in decimal; then the checksum of all that (8 bytes).

use super::store::{seal, unseal, BUILD_ID};
use crate::git::history::MAX_PATH_BYTES;
use std::path::Path;

pub const MAGIC: &[u8; 8] = b"RCTXHIST";
/// Raised whenever the layout changes.
pub const VERSION: u32 = 1;

/// A history read at `head`, its commits newest first, each the files it changed.
pub type Read = (String, Vec<Vec<String>>);

/// `max_commits`: how many commits a read takes (tasks/history.rs `MAX_COMMITS`).
pub fn encode(root: &Path, max_commits: usize, head: &str, commits: &[Vec<String>]) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&VERSION.to_le_bytes());
    let mut field = |b: &[u8]| {
        out.extend_from_slice(b);
        out.push(0);
    };
    field(BUILD_ID.as_bytes());
    field(root.as_os_str().as_encoded_bytes());
    field(max_commits.to_string().as_bytes());
    field(head.as_bytes());
    field(commits.len().to_string().as_bytes());
    for files in commits {
        field(files.len().to_string().as_bytes());
        for f in files {
            field(f.as_bytes());
        }
    }
    seal(&mut out);
    out
}

/// The history saved in `bytes` for `root` and reads of `max_commits` commits, checked; Err
/// says why it cannot be used.
pub fn decode(bytes: &[u8], root: &Path, max_commits: usize) -> Result<Read, String> {
    let body = unseal(bytes, MAGIC, "saved history")?;
    let rest = body.strip_prefix(MAGIC).ok_or("not a saved history")?;
    let (version, rest) = rest.split_at_checked(4).ok_or("cut short")?;
    if version != VERSION.to_le_bytes() {
        return Err("another format version".into());
    }
    if rest.last() != Some(&0) {
        return Err("cut short".into());
    }
    let mut fields = rest[..rest.len() - 1].split(|&b| b == 0);
    let mut next = || fields.next().ok_or_else(|| "cut short".to_string());
    if next()? != BUILD_ID.as_bytes() {
        return Err("saved by another build of the core".into());
    }
    if next()? != root.as_os_str().as_encoded_bytes() {
        return Err("saved for another root".into());
    }
    if number(next()?)? != max_commits {
        return Err("another number of commits".into());
    }
    let head = next()?;
    if !matches!(head.len(), 40 | 64) || !head.iter().all(|b| b.is_ascii_hexdigit()) {
        return Err("HEAD is not a commit id".into());
    }
    let head = String::from_utf8(head.to_vec()).map_err(|_| "HEAD is not a commit id")?;
    let n = number(next()?)?;
    if n > max_commits {
        return Err(format!("{n} commits, more than {max_commits}"));
    }
    let mut commits = Vec::with_capacity(n);
    let mut path_bytes = 0usize;
    for _ in 0..n {
        let k = number(next()?)?;
        let mut files = Vec::new(); // grown by the paths that follow, never ahead of them
        for _ in 0..k {
            let p = std::str::from_utf8(next()?).map_err(|_| "a path is not UTF-8")?;
            if p.is_empty() || p.starts_with('/') {
                return Err(format!("{p:?} is not a path relative to the root"));
            }
            path_bytes += p.len();
            if path_bytes > MAX_PATH_BYTES {
                return Err("more paths than a read holds".into());
            }
            files.push(p.to_string());
        }
        commits.push(files);
    }
    if next().is_ok() {
        return Err("bytes after the last commit".into());
    }
    Ok((head, commits))
}

fn number(field: &[u8]) -> Result<usize, String> {
    std::str::from_utf8(field)
        .ok()
        .filter(|s| !s.is_empty() && s.len() <= 10 && s.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| "a count is not a number".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX_COMMITS: usize = 2000;

    fn commits() -> Vec<Vec<String>> {
        vec![
            vec!["a.py".into(), "src/b.rs".into()],
            vec![],
            vec!["c/d é.md".into()],
        ]
    }

    const HEAD: &str = "0123456789abcdef0123456789abcdef01234567";

    #[test]
    fn round_trip() {
        let root = Path::new("/r");
        let bytes = encode(root, MAX_COMMITS, HEAD, &commits());
        assert_eq!(
            decode(&bytes, root, MAX_COMMITS),
            Ok((HEAD.to_string(), commits()))
        );
        assert_eq!(
            decode(&bytes, Path::new("/other"), MAX_COMMITS),
            Err("saved for another root".into())
        );
    }

    /// Bytes of the format with a valid checksum over `body`.
    fn sealed(body: &[u8]) -> Vec<u8> {
        let mut v = body.to_vec();
        seal(&mut v);
        v
    }

    fn body(tail: &str) -> Vec<u8> {
        let mut v = MAGIC.to_vec();
        v.extend_from_slice(&VERSION.to_le_bytes());
        v.extend_from_slice(format!("{BUILD_ID}\0/r\0{MAX_COMMITS}\0{HEAD}\0").as_bytes());
        v.extend_from_slice(tail.as_bytes());
        v
    }

    #[test]
    fn refuses_what_is_not_a_read() {
        let root = Path::new("/r");
        assert!(decode(&sealed(&body("1\x001\x00a.py\x00")), root, MAX_COMMITS).is_ok());
        for (tail, why) in [
            ("1\x002\x00a.py\x00", "cut short"),
            ("1\x001\x00a.py\x00x\x00", "bytes after the last commit"),
            (
                "1\x001\x00/etc/passwd\x00",
                "is not a path relative to the root",
            ),
            ("1\x001\x00\x00", "is not a path relative to the root"),
            ("1\x0099999999999\x00a\x00", "a count is not a number"),
            ("1\x004294967295\x00a\x00", "cut short"),
            ("-1\x00", "a count is not a number"),
            ("2001\x00", "more than 2000"),
            ("1\x001\x00a.py", "cut short"),
        ] {
            let got = decode(&sealed(&body(tail)), root, MAX_COMMITS).unwrap_err();
            assert!(got.contains(why), "{tail:?}: {got}");
        }
        let mut flipped = encode(root, MAX_COMMITS, HEAD, &commits());
        flipped[20] ^= 1;
        assert!(decode(&flipped, root, MAX_COMMITS)
            .unwrap_err()
            .contains("checksum"));
        assert_eq!(
            decode(b"", root, MAX_COMMITS),
            Err("not a saved history".into()),
            "empty"
        );
        let mut bad = body("0\x00");
        let at = MAGIC.len() + 4 + BUILD_ID.len() + 4 + MAX_COMMITS.to_string().len() + 1;
        bad[at] = b'g'; // HEAD no longer hex
        assert_eq!(
            decode(&sealed(&bad), root, MAX_COMMITS),
            Err("HEAD is not a commit id".into())
        );
    }
}
