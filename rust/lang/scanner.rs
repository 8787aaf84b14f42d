//! The scanner the per-language readers (`python`, `rust`, `go`, `js`) fill for one file: its
//! lines, and what has been found in them so far (`FileScan`, what `extract` returns).

use super::imports::Import;
use super::text::{clean, split_lines};

fn cap_sig(s: String) -> String {
    clean(&s).unwrap_or_default()
}

/// An exported signature, and the first sentence of its doc.
pub struct Export {
    pub sig: String,
    pub doc: Option<String>,
}

/// What one file says.
#[derive(Default)]
pub struct FileScan {
    pub purpose: Option<String>,
    /// Signatures, as many as the scope still wants.
    pub exports: Vec<Export>,
    /// How many exports there are, and the first few names (for a purpose when there is no other).
    pub count: usize,
    pub first: Vec<String>,
    /// Every exported name, kept only when a caller checks names.
    pub names: Vec<String>,
    pub imports: Vec<Import>,
    pub tests: bool,
}

/// One file's lines being scanned, and what has been found in them.
pub struct Scanner<'a> {
    pub lines: Vec<&'a str>,
    pub out: FileScan,
    want_names: bool,
    budget: usize,
}

impl<'a> Scanner<'a> {
    pub(super) fn new(text: &'a str, want_names: bool, budget: usize) -> Self {
        Scanner {
            lines: split_lines(text),
            out: FileScan::default(),
            want_names,
            budget,
        }
    }

    /// Record an export. `make` gives its (signature, doc) and runs only while
    /// signatures are still wanted: most exports of a big scope are only counted.
    pub fn export(&mut self, names: &[&str], make: impl FnOnce() -> (String, Option<String>)) {
        self.out.count += 1;
        if self.out.first.len() < 3 && !self.out.first.iter().any(|f| f == names[0]) {
            self.out.first.push(names[0].to_string());
        }
        if self.want_names {
            self.out.names.extend(names.iter().map(|n| n.to_string()));
        }
        if self.out.exports.len() < self.budget {
            let (sig, doc) = make();
            self.out.exports.push(Export {
                sig: cap_sig(sig),
                doc,
            });
        }
    }
}
