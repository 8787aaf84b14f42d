//! Paths as git holds them: bytes, `/`-separated, relative to the worktree's top.

use crate::tree::os;
use std::path::PathBuf;

/// (directory, name) of a worktree-relative path; ("", path) at the top.
pub(super) fn split(path: &[u8]) -> (&[u8], &[u8]) {
    match path.iter().rposition(|&c| c == b'/') {
        Some(i) => (&path[..i], &path[i + 1..]),
        None => (&[], path),
    }
}

pub(super) fn join(dir: &[u8], name: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(dir.len() + 1 + name.len());
    out.extend_from_slice(dir);
    if !dir.is_empty() {
        out.push(b'/');
    }
    out.extend_from_slice(name);
    out
}

/// A relative path git could hold: no empty, `.`, `..` or `.git` component, no leading `/`.
pub(super) fn clean_path(path: &[u8]) -> bool {
    !path.is_empty() && path.split(|&c| c == b'/').all(clean_name)
}

pub(super) fn clean_name(name: &[u8]) -> bool {
    !matches!(name, b"" | b"." | b".." | b".git") && !name.contains(&0)
}

/// Whether `path` is `dir` or lies below it ("" holds everything).
pub(super) fn under(path: &[u8], dir: &[u8]) -> bool {
    dir.is_empty()
        || (path.starts_with(dir) && (path.len() == dir.len() || path[dir.len()] == b'/'))
}

/// A path git holds as bytes (on Windows, never UTF-8: a name no file has).
pub(super) fn os_path(bytes: &[u8]) -> PathBuf {
    os::path_of(bytes).unwrap_or_else(|| PathBuf::from("\u{fffd}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn paths() {
        assert_eq!(split(b"a/b/c"), (&b"a/b"[..], &b"c"[..]));
        assert_eq!(split(b"c"), (&b""[..], &b"c"[..]));
        assert!(under(b"a/b", b"a") && under(b"a", b"a") && under(b"x", b""));
        assert!(!under(b"ab", b"a"));
        assert!(
            clean_path(b"a/b")
                && !clean_path(b"a/../b")
                && !clean_path(b"/a")
                && !clean_path(b"a/.git/x")
        );
    }
}
