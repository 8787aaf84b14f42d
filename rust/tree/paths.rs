//! A path under a root as answers and ignore rules name it: `/`-separated on every OS, each
//! name as text that still names that one entry.

use std::borrow::Cow;
use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};

/// `rel` with Windows' `\` separators as `/` (no name there may hold a `\`); elsewhere a
/// `\` is part of a name and stays.
pub fn slashed(rel: &[u8]) -> Cow<'_, [u8]> {
    if cfg!(windows) && rel.contains(&b'\\') {
        rel.iter()
            .map(|&c| if c == b'\\' { b'/' } else { c })
            .collect::<Vec<u8>>()
            .into()
    } else {
        rel.into()
    }
}

/// An absolute path without Windows' verbatim prefix (`\\?\C:\x` as `C:\x`, `\\?\UNC\s\x` as
/// `\\s\x`), which canonical paths carry and link targets mostly do not, so the two compare;
/// elsewhere the path itself.
pub fn unverbatim(path: &Path) -> PathBuf {
    #[cfg(windows)]
    {
        use std::path::Prefix;
        let mut parts = path.components();
        if let Some(Component::Prefix(p)) = parts.next() {
            let head = match p.kind() {
                Prefix::VerbatimDisk(d) => format!("{}:", d as char),
                Prefix::VerbatimUNC(server, share) => format!(
                    r"\\{}\{}",
                    server.to_string_lossy(),
                    share.to_string_lossy()
                ),
                _ => return path.to_path_buf(),
            };
            return PathBuf::from(head).join(parts.as_path());
        }
    }
    path.to_path_buf()
}

/// A name as text that still names that one entry: each byte that is not UTF-8 is
/// written `\xNN` (a lossy conversion would name a different path, or none).
pub fn escape_name(name: &OsStr) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let mut out = String::new();
        for chunk in name.as_bytes().utf8_chunks() {
            out.push_str(chunk.valid());
            for b in chunk.invalid() {
                out.push_str(&format!("\\x{b:02x}"));
            }
        }
        out
    }
    #[cfg(not(unix))]
    {
        name.to_string_lossy().into_owned()
    }
}

/// `path` with `.` and `..` taken lexically, no link followed: a caller opens the result beneath
/// a root's handle again (so a `..` after a link cannot take it anywhere the handle does not
/// allow) or only compares it with another path.
pub fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    #[test]
    fn escape_name_keeps_utf8_and_writes_other_bytes_as_hex() {
        assert_eq!(escape_name(OsStr::from_bytes(b"caf\xc3\xa9")), "café");
        assert_eq!(escape_name(OsStr::from_bytes(b"caf\xe9")), "caf\\xe9");
        assert_eq!(
            escape_name(OsStr::from_bytes(b"\xff\xfeok\x80")),
            "\\xff\\xfeok\\x80"
        );
    }
}
