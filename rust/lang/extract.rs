//! What one source file says, for its directory's context file: its purpose (module
//! docstring, doc comment or header comment), the exported signatures of Python, Rust,
//! TypeScript/JavaScript and Go, and its imports (read by the shared grammar).
//!
//! The scanners are line-oriented, not parsers: they read the shapes real code has at
//! column 0, which is what an export or an import looks like in these languages. Other
//! files get their header comment, or a label for their kind.

use super::imports;
pub use super::scanner::FileScan;
use super::scanner::Scanner;
use super::text::{
    clean, line_comment_header, markdown_header, rst_header, slash_header, split_lines,
};
use super::{go, is_code, js, kind_of, python, rust, FileKind, Lang};
use crate::tree::fs::Root;
use std::path::Path;

/// Code files larger than this are listed with a purpose but not scanned for exports.
pub const MAX_CODE_BYTES: u64 = 1 << 20;
/// How much of a non-code file is read for its header.
pub const MAX_TEXT_BYTES: u64 = 16 << 10;

/// The purpose of a code file, from the comments at its top.
fn code_purpose(lang: Lang, lines: &[&str]) -> Option<String> {
    match lang {
        Lang::Python => python::purpose(lines),
        Lang::Rust => rust::purpose(lines),
        Lang::Go => go::purpose(lines),
        _ => slash_header(lines),
    }
}

/// Imports (and, for Rust, whether there are tests) of a file whose exports are no longer wanted.
fn scan_imports_only(kind: &FileKind, text: &str, out: &mut FileScan) {
    let lang = kind.lang;
    if let Some(g) = kind.imports {
        out.imports = imports::of_lines(g, text, &split_lines(text));
    }
    if lang == Lang::Rust {
        let bytes = text.as_bytes();
        out.tests = memchr::memmem::find(bytes, b"#[test]").is_some()
            || memchr::memmem::find(bytes, b"#[cfg(test)]").is_some();
    }
}

/// What a file says: its purpose, exports (at most `budget` signatures; every name with
/// `want_names`) and imports. With `whole` (the file was read whole, within `MAX_CODE_BYTES`)
/// code is read as code and imports are read; else only a header.
pub fn scan_file(name: &str, text: &str, whole: bool, want_names: bool, budget: usize) -> FileScan {
    let kind = kind_of(name);
    let lang = kind.lang;
    let scan_code = whole && is_code(lang);
    if scan_code && budget == 0 && !want_names {
        // The scope has all the signatures it keeps: only the purpose and the imports matter,
        // unless there is no purpose, when the first exports name the file.
        let mut top = text.len().min(4 << 10);
        while !text.is_char_boundary(top) {
            top -= 1;
        }
        let purpose = code_purpose(lang, &split_lines(&text[..top]));
        if purpose.is_some() {
            let mut out = FileScan {
                purpose,
                ..FileScan::default()
            };
            scan_imports_only(kind, text, &mut out);
            return out;
        }
    }
    let mut sc = Scanner::new(text, want_names, budget);
    match lang {
        Lang::Python if scan_code => python::scan(&mut sc),
        Lang::Rust if scan_code => rust::scan(&mut sc),
        Lang::Go if scan_code => go::scan(&mut sc),
        Lang::TypeScript | Lang::JavaScript if scan_code => js::scan(&mut sc),
        Lang::Python
        | Lang::Ruby
        | Lang::Elixir
        | Lang::Perl
        | Lang::R
        | Lang::Julia
        | Lang::Nix
        | Lang::Coffee
        | Lang::GdScript
        | Lang::Shell
        | Lang::PowerShell
        | Lang::Hash => sc.out.purpose = line_comment_header(&sc.lines, "#"),
        Lang::Rust
        | Lang::Go
        | Lang::TypeScript
        | Lang::JavaScript
        | Lang::Java
        | Lang::CSharp
        | Lang::C
        | Lang::Dart
        | Lang::Kotlin
        | Lang::Swift
        | Lang::Php
        | Lang::Scala
        | Lang::Zig
        | Lang::Pascal
        | Lang::Verilog
        | Lang::Slash => sc.out.purpose = slash_header(&sc.lines),
        Lang::Lua | Lang::Haskell | Lang::Lean | Lang::Ada | Lang::Vhdl | Lang::Dash => {
            sc.out.purpose = line_comment_header(&sc.lines, "--")
        }
        Lang::Lisp => sc.out.purpose = line_comment_header(&sc.lines, ";"),
        Lang::Fortran => sc.out.purpose = line_comment_header(&sc.lines, "!"),
        Lang::Basic => sc.out.purpose = line_comment_header(&sc.lines, "'"),
        Lang::Vim => sc.out.purpose = line_comment_header(&sc.lines, "\""),
        Lang::Erlang => sc.out.purpose = line_comment_header(&sc.lines, "%"),
        Lang::Markdown => sc.out.purpose = markdown_header(&sc.lines),
        Lang::Rst => sc.out.purpose = rst_header(&sc.lines),
        Lang::Text => sc.out.purpose = sc.lines.iter().find_map(|l| clean(l)),
        Lang::Json if name == "package.json" => {
            sc.out.purpose = serde_json::from_str::<serde_json::Value>(text)
                .ok()
                .and_then(|v| {
                    v.get("description")
                        .and_then(|d| d.as_str())
                        .and_then(clean)
                });
        }
        Lang::Json | Lang::Markup | Lang::Component | Lang::Ml | Lang::Other => {}
    }
    if let Some(g) = kind.imports.filter(|_| whole) {
        sc.out.imports = imports::of_lines(g, text, &sc.lines);
    }
    sc.out
}

/// Read and scan one file (`rel`, beneath `root`, through the confined layer: a link that
/// leads out of the root is not followed, and what is not a regular file is not read),
/// wanting at most `budget` signatures.
pub fn scan_one(root: &Root, rel: &Path, want_names: bool, budget: usize) -> FileScan {
    let name = rel
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let kind = kind_of(&name);
    let as_code = is_code(kind.lang) || kind.imports.is_some();
    let cap = if as_code || name == "package.json" {
        MAX_CODE_BYTES + 1
    } else {
        MAX_TEXT_BYTES
    };
    let text = read_head_text(root, rel, cap).unwrap_or_default();
    let whole = as_code && (text.len() as u64) <= MAX_CODE_BYTES;
    scan_file(&name, &text, whole, want_names, budget)
}

/// At most `cap` bytes of a file beneath `root` as text (bytes that are not UTF-8 replaced);
/// None when it cannot be read through the confined layer.
pub fn read_head_text(root: &Root, rel: &Path, cap: u64) -> Option<String> {
    let buf = root.read_head(rel, cap).ok()?;
    Some(match String::from_utf8(buf) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use crate::lang::imports::Import;
    use crate::lang::text::MAX_TEXT;

    pub fn scan(name: &str, text: &str) -> FileScan {
        scan_file(name, text, true, true, usize::MAX)
    }

    pub fn sigs(s: &FileScan) -> Vec<&str> {
        s.exports.iter().map(|e| e.sig.as_str()).collect()
    }

    #[test]
    fn a_wrapped_first_sentence_is_read_whole() {
        let purpose = |name: &str, text: &str| scan(name, text).purpose;
        let whole =
            Some("The formats: a manifest and an index, and the results of the tools.".to_string());
        assert_eq!(purpose("m.py", "\"\"\"The formats: a manifest and an index,\nand the results of the tools.\n\nMore.\"\"\"\n"), whole);
        assert_eq!(
            purpose(
                "m.py",
                "\"\"\"The manifest and the index,\nand the results of the tools.\n\nMore.\"\"\"\n"
            )
            .as_deref(),
            Some("The manifest and the index, and the results of the tools.")
        );
        assert_eq!(
            purpose(
                "m.py",
                "\"\"\"\nA docstring that starts\non its second line.\n\"\"\"\n"
            )
            .as_deref(),
            Some("A docstring that starts on its second line.")
        );
        assert_eq!(purpose("lib.rs", "//! The formats: a manifest and an index, and the results\n//! of the tools.\n//!\n//! More.\n"), whole);
        assert_eq!(
            purpose(
                "run.sh",
                "#!/bin/sh\n# Runs the thing\n# every night.\necho\n"
            )
            .as_deref(),
            Some("Runs the thing every night.")
        );
        assert_eq!(
            purpose(
                "a.ts",
                "/**\n * Token helpers for the\n * API.\n * @module x\n */\n"
            )
            .as_deref(),
            Some("Token helpers for the API.")
        );
        assert_eq!(purpose("README.md", "# Tool\n").as_deref(), Some("Tool"));
        assert_eq!(
            purpose("NOTES.md", "Notes on a\nlong topic.\n\nNext.\n").as_deref(),
            Some("Notes on a long topic.")
        );
        assert_eq!(purpose("m.py", "\"\"\"Concurrency: several processes at\nonce. Afterwards nothing is lost,\nnothing half written.\"\"\"\n").as_deref(),
                   Some("Concurrency: several processes at once."));
        // A paragraph that ends without a full stop stops at the blank line.
        assert_eq!(
            purpose("m.py", "\"\"\"Helpers\n\nMore.\"\"\"\n").as_deref(),
            Some("Helpers")
        );
        // One sentence over MAX_TEXT is cut after a word.
        let long = format!("\"\"\"{}.\"\"\"\n", "word ".repeat(100).trim_end());
        let cut = purpose("l.py", &long).unwrap();
        assert!(
            cut.ends_with("word…") && cut.chars().count() <= MAX_TEXT,
            "{cut}"
        );
    }

    #[test]
    fn headers_of_other_files() {
        assert_eq!(
            scan("README.md", "---\nx: 1\n---\n\n# My Tool\n")
                .purpose
                .as_deref(),
            Some("My Tool")
        );
        assert_eq!(
            scan("run.sh", "#!/bin/sh\n# Runs the thing.\necho\n")
                .purpose
                .as_deref(),
            Some("Runs the thing.")
        );
        assert_eq!(scan("a.yaml", "key: 1\n").purpose, None);
        let long = format!("\"\"\"{}\"\"\"\n", "x".repeat(500));
        assert_eq!(
            scan("l.py", &long).purpose.unwrap().chars().count(),
            MAX_TEXT
        );
    }

    #[test]
    fn the_imports_only_pass_finds_what_the_full_scan_finds() {
        fn imports(s: &FileScan) -> Vec<String> {
            s.imports
                .iter()
                .map(|i| match i {
                    Import::Python(l, m) => format!("py {} {}", l, m),
                    Import::Js(x) => format!("js {}", x),
                    Import::Rust(p) => format!("rs {}", p.join("::")),
                    Import::Go(x) => format!("go {}", x),
                })
                .collect()
        }
        let samples = [
            ("m.py", "\"\"\"Doc.\"\"\"\nimport os, a.b\nfrom .x import y, z\n\ndef f():\n    import late\n"),
            ("lib.rs", "//! Doc.\nuse crate::a::b;\npub use serde::{X};\nextern crate z;\nfn f() {}\n#[cfg(test)]\nmod t {}\n"),
            ("x.go", "// Package x does it.\npackage x\n\nimport (\n\t\"fmt\"\n\tq \"example.com/m/q\"\n)\nimport \"os\"\n"),
            ("a.ts", "// Doc.\nimport { a } from './a';\nimport 'side';\nconst b = require(\"../b\");\nexport * from \"./c\";\n"),
        ];
        for (name, text) in samples {
            let full = scan_file(name, text, true, false, usize::MAX);
            let quick = scan_file(name, text, true, false, 0);
            assert_eq!(imports(&quick), imports(&full), "{}", name);
            assert_eq!(
                (quick.purpose, quick.tests),
                (full.purpose, full.tests),
                "{}",
                name
            );
        }
    }
}
