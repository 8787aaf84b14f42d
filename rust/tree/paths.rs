//! A path under a root as answers and ignore rules name it: `/`-separated on every OS.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

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
        use std::path::{Component, Prefix};
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
