//! Per-directory stat fingerprints, byte-for-byte as dotcontext computes them:
//! over the regular files directly in a directory (not `.context.yaml`, not
//! symlinks), the strings `name:floor(mtime ms):size`, sorted as JavaScript
//! sorts strings (UTF-16 code units), joined with `\n`, SHA-256, 8 hex chars.

use crate::tree::names::CONTEXT_FILE;
use sha2::{Digest, Sha256};
use std::fs::Metadata;
use std::io;
use std::path::Path;

/// Milliseconds since the epoch, floored, computed in f64 as Node's
/// `Math.floor(stat.mtimeMs)` does (so rounding at the last nanoseconds agrees).
pub fn mtime_ms(meta: &Metadata) -> i64 {
    let (secs, nanos) = crate::tree::os::Meta::stat(meta).mtime;
    (secs as f64 * 1000.0 + nanos as f64 / 1_000_000.0).floor() as i64
}

/// One directory's `name:mtime:size` lines written one after another, each ending where `ends` says: a walk's
/// million files are not a million lines allocated each.
#[derive(Default)]
pub struct Lines {
    text: String,
    ends: Vec<usize>,
}

impl Lines {
    pub fn push(&mut self, name: &str, meta: &Metadata) {
        use std::fmt::Write;
        let _ = write!(self.text, "{}:{}:{}", name, mtime_ms(meta), meta.len());
        self.ends.push(self.text.len());
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn digest(&self) -> String {
        let mut start = 0;
        let lines = self.ends.iter().map(|&end| {
            let line = &self.text[start..end];
            start = end;
            line
        });
        digest(lines.collect())
    }
}

/// Hash already-built `name:mtime:size` lines into the 8-hex fingerprint.
fn digest(mut lines: Vec<&str>) -> String {
    lines.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
    let mut hasher = Sha256::new();
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            hasher.update(b"\n");
        }
        hasher.update(line.as_bytes());
    }
    let out = hasher.finalize();
    out[..4].iter().map(|b| format!("{:02x}", b)).collect()
}

/// Fingerprint of one directory, read on its own (for a single-scope question).
pub fn fingerprint_dir(dir: &Path) -> io::Result<String> {
    let mut lines = Lines::default();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let ft = entry.file_type()?;
        if !ft.is_file() {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == CONTEXT_FILE {
            continue;
        }
        // A file removed between readdir and stat is skipped, as a racing writer would leave it.
        if let Ok(meta) = entry.metadata() {
            lines.push(&name, &meta);
        }
    }
    Ok(lines.digest())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_directory_hashes_the_empty_string() {
        // sha256("") = e3b0c442...
        assert_eq!(digest(vec![]), "e3b0c442");
    }

    /// Node's `Math.floor(stat.mtimeMs)` of the same times on every OS (Windows keeps 100 ns
    /// steps, and splits a time before 1970 toward zero where Unix splits it down).
    #[test]
    fn mtime_ms_floors_as_node_does_before_1970_too() {
        use std::time::{Duration, UNIX_EPOCH};
        let t = crate::testing::TempTree::new("fp-mtime");
        let path = t.write("f", "x");
        let file = std::fs::File::options().write(true).open(&path).unwrap();
        let times = [
            (UNIX_EPOCH + Duration::from_nanos(1_234_567_800), 1234),
            (UNIX_EPOCH - Duration::from_millis(1500), -1500),
            (UNIX_EPOCH - Duration::from_micros(100), -1),
        ];
        for (time, ms) in times {
            file.set_modified(time).unwrap();
            assert_eq!(mtime_ms(&std::fs::metadata(&path).unwrap()), ms, "{time:?}");
        }
    }

    #[test]
    fn order_of_lines_does_not_matter() {
        let a = digest(vec!["b.py:1:2", "a.py:3:4"]);
        let b = digest(vec!["a.py:3:4", "b.py:1:2"]);
        assert_eq!(a, b);
    }

    #[test]
    fn sorts_by_utf16_units_like_javascript() {
        // U+FF5E is above the surrogate range in UTF-16 but below U+1F600 in UTF-8;
        // JavaScript puts the astral character (surrogates 0xD83D…) first.
        let astral = "\u{1F600}:1:1".to_string();
        let bmp = "\u{FF5E}:1:1".to_string();
        let mut lines = vec![bmp.clone(), astral.clone()];
        lines.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
        assert_eq!(lines, vec![astral, bmp]);
    }
}
