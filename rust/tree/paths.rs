//! A path under a root as answers and ignore rules name it: `/`-separated on every OS.

use std::borrow::Cow;

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
