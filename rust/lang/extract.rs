//! What a `.context.yaml` derives from code, read from many files in parallel:
//! each file's purpose (module docstring, doc comment or header comment), the
//! exported signatures of Python, Rust, TypeScript/JavaScript and Go, and their
//! imports resolved either to directories of the same repository or to external
//! package names.
//!
//! The scanners are line-oriented, not parsers: they read the shapes real code
//! has at column 0, which is what an export or an import looks like in these
//! languages. Other files get their header comment, or a label for their kind.
//! Results come back per directory, never per file object.

use crate::tree::ignore::{self, Budget, RootRules};
use crate::lang::imports::{self, Grammar, Import};
use crate::tree::walk::is_source_file;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Code files larger than this are listed with a purpose but not scanned for exports.
const MAX_CODE_BYTES: u64 = 1 << 20;
/// How much of a non-code file is read for its header.
const MAX_TEXT_BYTES: u64 = 16 << 10;
const MAX_EXPORTS: usize = 50;
const MAX_INTERFACES: usize = 25;
/// Longest purpose or doc kept: a first sentence longer than this is cut at a word, marked `…`.
const MAX_TEXT: usize = 300;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Lang {
    Python,
    Rust,
    TypeScript,
    JavaScript,
    Go,
    Hash,
    Slash,
    Dash,
    Markdown,
    Rst,
    Text,
    Json,
    Other,
}

/// (extension or file name, label, scanner, language name for the project's language).
const KINDS: &[(&str, &str, Lang, &str)] = &[
    ("py", "Python module", Lang::Python, "python"),
    ("pyi", "Python type stubs", Lang::Python, "python"),
    ("rs", "Rust module", Lang::Rust, "rust"),
    ("ts", "TypeScript module", Lang::TypeScript, "typescript"),
    ("tsx", "TypeScript React component", Lang::TypeScript, "typescript"),
    ("mts", "TypeScript module", Lang::TypeScript, "typescript"),
    ("cts", "TypeScript module", Lang::TypeScript, "typescript"),
    ("js", "JavaScript module", Lang::JavaScript, "javascript"),
    ("jsx", "JavaScript React component", Lang::JavaScript, "javascript"),
    ("mjs", "JavaScript module", Lang::JavaScript, "javascript"),
    ("cjs", "JavaScript module", Lang::JavaScript, "javascript"),
    ("go", "Go source", Lang::Go, "go"),
    ("java", "Java source", Lang::Slash, "java"),
    ("kt", "Kotlin source", Lang::Slash, "kotlin"),
    ("kts", "Kotlin script", Lang::Slash, "kotlin"),
    ("c", "C source", Lang::Slash, "c"),
    ("h", "C header", Lang::Slash, "c"),
    ("cpp", "C++ source", Lang::Slash, "c++"),
    ("cc", "C++ source", Lang::Slash, "c++"),
    ("hpp", "C++ header", Lang::Slash, "c++"),
    ("cs", "C# source", Lang::Slash, "c#"),
    ("swift", "Swift source", Lang::Slash, "swift"),
    ("scala", "Scala source", Lang::Slash, "scala"),
    ("php", "PHP source", Lang::Slash, "php"),
    ("rb", "Ruby source", Lang::Hash, "ruby"),
    ("ex", "Elixir source", Lang::Hash, "elixir"),
    ("exs", "Elixir script", Lang::Hash, "elixir"),
    ("hs", "Haskell source", Lang::Dash, "haskell"),
    ("lua", "Lua script", Lang::Dash, "lua"),
    ("r", "R script", Lang::Hash, "r"),
    ("sql", "SQL script", Lang::Dash, ""),
    ("sh", "Shell script", Lang::Hash, "shell"),
    ("bash", "Shell script", Lang::Hash, "shell"),
    ("zsh", "Shell script", Lang::Hash, "shell"),
    ("yaml", "YAML configuration", Lang::Hash, ""),
    ("yml", "YAML configuration", Lang::Hash, ""),
    ("toml", "TOML configuration", Lang::Hash, ""),
    ("json", "JSON data", Lang::Json, ""),
    ("xml", "XML document", Lang::Other, ""),
    ("html", "HTML page", Lang::Other, ""),
    ("css", "Stylesheet", Lang::Slash, ""),
    ("scss", "Stylesheet", Lang::Slash, ""),
    ("md", "Markdown document", Lang::Markdown, ""),
    ("mdx", "MDX document", Lang::Markdown, ""),
    ("rst", "reStructuredText document", Lang::Rst, ""),
    ("txt", "Text file", Lang::Text, ""),
    ("vue", "Vue component", Lang::Other, "javascript"),
    ("svelte", "Svelte component", Lang::Other, "javascript"),
    ("tf", "Terraform configuration", Lang::Hash, "hcl"),
    ("hcl", "HCL configuration", Lang::Hash, "hcl"),
    ("dockerfile", "Container build file", Lang::Hash, ""),
    ("graphql", "GraphQL schema", Lang::Hash, ""),
    ("gql", "GraphQL schema", Lang::Hash, ""),
    ("proto", "Protocol Buffers definitions", Lang::Slash, ""),
    ("Dockerfile", "Container build file", Lang::Hash, ""),
    ("Makefile", "Build rules (make)", Lang::Hash, ""),
    ("CMakeLists.txt", "CMake build rules", Lang::Hash, ""),
    ("Cargo.toml", "Rust crate manifest", Lang::Hash, ""),
    ("go.mod", "Go module definition", Lang::Other, ""),
    ("pyproject.toml", "Python project metadata", Lang::Hash, ""),
    ("package.json", "npm package manifest", Lang::Json, ""),
    ("Gemfile", "Ruby dependencies", Lang::Hash, ""),
    ("Rakefile", "Ruby build tasks", Lang::Hash, ""),
];

/// The label a file gets when nothing more specific can be said of it.
pub const FALLBACK_LABEL: &str = "Source file";

/// Every label, for telling a generic purpose from a written one.
pub fn labels() -> Vec<&'static str> {
    let mut all: Vec<&str> = KINDS.iter().map(|k| k.1).collect();
    all.push(FALLBACK_LABEL);
    all.sort();
    all.dedup();
    all
}

fn kind_of(name: &str) -> (&'static str, Lang, &'static str) {
    if let Some(k) = KINDS.iter().find(|k| k.0 == name) {
        return (k.1, k.2, k.3);
    }
    let ext = match name.rfind('.') {
        Some(i) => name[i + 1..].to_ascii_lowercase(),
        None => return (FALLBACK_LABEL, Lang::Other, ""),
    };
    match KINDS.iter().find(|k| k.0 == ext) {
        Some(k) => (k.1, k.2, k.3),
        None => (FALLBACK_LABEL, Lang::Other, ""),
    }
}

fn is_code(lang: Lang) -> bool {
    matches!(lang, Lang::Python | Lang::Rust | Lang::TypeScript | Lang::JavaScript | Lang::Go)
}

// --- text helpers ------------------------------------------------------------

/// A trimmed text of at most MAX_TEXT characters (a longer one cut after a word, marked `…`),
/// or None when empty.
fn clean(s: &str) -> Option<String> {
    let t = s.trim();
    if t.is_empty() {
        return None;
    }
    if t.chars().count() <= MAX_TEXT {
        return Some(t.to_string());
    }
    let cut: String = t.chars().take(MAX_TEXT - 1).collect();
    let cut = match cut.rfind(' ') {
        Some(space) if space > cut.len() / 2 => &cut[..space],
        _ => &cut[..],
    };
    Some(format!("{}…", cut.trim_end_matches(|c: char| c.is_whitespace() || ",;:".contains(c))))
}

/// The first line of a paragraph (its lines given without comment markers), joined with the
/// lines after it until the sentence it began ends (`.`, `!` or `?` and a space; at a line's
/// end `:` too, and a closing bracket or quote after one) or the paragraph does: comments and
/// docstrings wrap their first sentence.
fn paragraph<'a>(lines: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let mut text = String::new();
    for line in lines {
        let t = line.trim();
        if t.is_empty() {
            break;
        }
        let joined = text.len();
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(t);
        if joined > 0 {
            // The sentence the first line began ends within this line: up to there.
            let rest = &text[joined..];
            if let Some(end) = rest.char_indices().find_map(|(i, c)| {
                (matches!(c, '.' | '!' | '?') && rest[i + 1..].starts_with(' ')).then_some(i + 1)
            }) {
                text.truncate(joined + end);
                break;
            }
        }
        let end = text.trim_end_matches(|c| matches!(c, ')' | ']' | '"' | '\'' | '`' | '*'));
        if end.ends_with(['.', '!', '?', ':']) || text.chars().count() > MAX_TEXT {
            break;
        }
    }
    clean(&text)
}

/// Comment text that says nothing about the file: licences, tool directives, rulers.
fn is_boilerplate(s: &str) -> bool {
    let t = s.trim();
    if !t.chars().any(|c| c.is_alphanumeric()) {
        return true;
    }
    let l = t.to_ascii_lowercase();
    const NOISE: &[&str] = &[
        "copyright", "license", "licence", "spdx-", "all rights reserved", "-*-", "eslint-", "@ts-",
        "prettier-ignore", "noqa", "type: ignore", "pylint:", "mypy:", "ruff:", "go:build", "+build",
        "vim:", "@flow", "jshint", "istanbul ignore", "biome-ignore", "clippy::", "rustfmt::",
    ];
    NOISE.iter().any(|n| l.contains(n)) || l.starts_with("!/") || l.starts_with("#!")
}

/// Whitespace runs as one space, none inside brackets or before commas: `f( a ,b )` -> `f(a, b)`.
fn collapse_ws(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    for c in s.chars() {
        if c.is_whitespace() {
            space = !out.is_empty();
            continue;
        }
        if space && !matches!(c, ')' | ']' | ',') && !out.ends_with(['(', '[']) {
            out.push(' ');
        }
        space = false;
        if c == ')' && out.ends_with(',') {
            out.pop();
        }
        out.push(c);
    }
    out
}

fn ident(s: &str) -> &str {
    let b = s.as_bytes();
    let ascii = b.iter().position(|&c| !(c.is_ascii_alphanumeric() || c == b'_' || c == b'$')).unwrap_or(b.len());
    if ascii == b.len() || b[ascii] < 0x80 {
        return &s[..ascii];
    }
    let end = s
        .char_indices()
        .find(|&(_, c)| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    &s[..end]
}

fn cap_sig(s: String) -> String {
    clean(&s).unwrap_or_default()
}

/// Lines from `start` joined until a `stops` character at paren depth 0: the header
/// of a declaration that may wrap. Returns the text before the stop and its line.
fn header_at(lines: &[&str], start: usize, stops: &[char]) -> (String, usize) {
    let mut out = String::new();
    let mut depth = 0i32;
    for (j, line) in lines.iter().enumerate().skip(start).take(12) {
        for (k, ch) in line.char_indices() {
            match ch {
                '(' | '[' => depth += 1,
                ')' | ']' => depth -= 1,
                c if depth <= 0 && stops.contains(&c) => {
                    out.push_str(&line[..k]);
                    return (out, j);
                }
                _ => {}
            }
        }
        out.push_str(line);
        out.push(' ');
    }
    (out, start)
}

fn header(lines: &[&str], start: usize, stops: &[char]) -> String {
    header_at(lines, start, stops).0
}

// --- per-file scan -------------------------------------------------------------

struct Export {
    sig: String,
    doc: Option<String>,
}

#[derive(Default)]
struct FileScan {
    purpose: Option<String>,
    /// Signatures, as many as the scope still wants.
    exports: Vec<Export>,
    /// How many exports there are, and the first few names (for a purpose when there is no other).
    count: usize,
    first: Vec<String>,
    /// Every exported name, kept only when a caller checks names.
    names: Vec<String>,
    imports: Vec<Import>,
    tests: bool,
}

/// `str::lines`, found with memchr: the scan of every line is the hot loop.
fn split_lines(text: &str) -> Vec<&str> {
    let mut out = Vec::with_capacity(text.len() / 32 + 1);
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', text.as_bytes()) {
        let line = &text[start..end];
        out.push(line.strip_suffix('\r').unwrap_or(line));
        start = end + 1;
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

struct Scanner<'a> {
    lines: Vec<&'a str>,
    out: FileScan,
    want_names: bool,
    budget: usize,
}

impl<'a> Scanner<'a> {
    fn new(text: &'a str, want_names: bool, budget: usize) -> Self {
        Scanner { lines: split_lines(text), out: FileScan::default(), want_names, budget }
    }

    /// Record an export. `make` gives its (signature, doc) and runs only while
    /// signatures are still wanted: most exports of a big scope are only counted.
    fn export(&mut self, names: &[&str], make: impl FnOnce() -> (String, Option<String>)) {
        self.out.count += 1;
        if self.out.first.len() < 3 && !self.out.first.iter().any(|f| f == names[0]) {
            self.out.first.push(names[0].to_string());
        }
        if self.want_names {
            self.out.names.extend(names.iter().map(|n| n.to_string()));
        }
        if self.out.exports.len() < self.budget {
            let (sig, doc) = make();
            self.out.exports.push(Export { sig: cap_sig(sig), doc });
        }
    }
}

/// The first sentence of a doc comment gathered above line `i` by `prefix` (e.g. "///").
fn doc_above(lines: &[&str], i: usize, prefix: &str, skip_attrs: bool) -> Option<String> {
    let mut j = i;
    let mut doc = Vec::new(); // bottom up
    while j > 0 {
        let t = lines[j - 1].trim_start();
        if let Some(rest) = t.strip_prefix(prefix) {
            if !rest.starts_with('/') {
                doc.push(rest);
            }
        } else if !(skip_attrs && (t.starts_with("#[") || t.starts_with('@'))) {
            break;
        }
        j -= 1;
    }
    let first = *doc.last()?;
    if is_boilerplate(first) {
        return None;
    }
    paragraph(doc.into_iter().rev())
}

/// The comment lines from line `i` on that start with `mark`, without it (and without more
/// of its first character, as in `##` or `///`): the rest of a comment paragraph.
fn comment_lines<'a>(lines: &'a [&'a str], i: usize, mark: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    let more = mark.chars().next().unwrap_or('#');
    lines[i..].iter().map_while(move |l| l.trim().strip_prefix(mark).map(|r| r.trim_start_matches(more)))
}

/// The first meaningful line of a `/** … */` block ending just above line `i`.
fn jsdoc_above(lines: &[&str], i: usize) -> Option<String> {
    let mut j = i;
    while j > 0 && lines[j - 1].trim().is_empty() {
        j -= 1;
    }
    if j == 0 || !lines[j - 1].trim_end().ends_with("*/") {
        return None;
    }
    let end = j - 1;
    let mut start = end;
    while start > 0 && !lines[start].contains("/*") && end - start < 40 {
        start -= 1;
    }
    if !lines[start].contains("/**") {
        return None;
    }
    block_comment_line(&lines[start..=end])
}

/// The first sentence of a `/* … */` block (given with its delimiters).
fn block_comment_line(block: &[&str]) -> Option<String> {
    let text = |line: &str| {
        let t = line.trim().trim_start_matches("/**").trim_start_matches("/*!").trim_start_matches("/*");
        t.trim_end_matches("*/").trim_start_matches('*').trim().to_string()
    };
    for (k, line) in block.iter().enumerate() {
        let mut t = text(line);
        for tag in ["@fileoverview", "@file", "@overview", "@description", "@summary"] {
            if let Some(rest) = t.strip_prefix(tag) {
                t = rest.trim().to_string();
            }
        }
        if t.starts_with('@') || t.is_empty() || is_boilerplate(&t) {
            continue;
        }
        let rest: Vec<String> = block[k + 1..].iter().map(|l| text(l)).take_while(|r| !r.starts_with('@')).collect();
        return paragraph(std::iter::once(t.as_str()).chain(rest.iter().map(String::as_str)));
    }
    None
}

/// The header comment of a file in a language whose comments start with `mark`.
fn line_comment_header(lines: &[&str], mark: &str) -> Option<String> {
    for (i, line) in lines.iter().enumerate().take(60) {
        let t = line.trim();
        if t.is_empty() || t.starts_with("#!") || t == "---" {
            continue;
        }
        match t.strip_prefix(mark) {
            Some(rest) => {
                let rest = rest.trim_start_matches(mark.chars().next().unwrap_or('#'));
                if !is_boilerplate(rest) {
                    return paragraph(comment_lines(lines, i, mark));
                }
            }
            None => return None,
        }
    }
    None
}

/// The header comment of a C-like file: `//` lines or a `/* */` block before any code.
fn slash_header(lines: &[&str]) -> Option<String> {
    let mut i = 0;
    while i < lines.len() && i < 80 {
        let t = lines[i].trim();
        if t.is_empty() || t.starts_with("#!") || t.starts_with("'use ") || t.starts_with("\"use ") {
            i += 1;
            continue;
        }
        if t.starts_with("/*") {
            let start = i;
            while i < lines.len() && !lines[i].contains("*/") {
                i += 1;
            }
            let end = i.min(lines.len() - 1);
            if let Some(s) = block_comment_line(&lines[start..=end]) {
                return Some(s);
            }
            i += 1;
            continue;
        }
        if let Some(rest) = t.strip_prefix("//") {
            let rest = rest.trim_start_matches(['/', '!']);
            if !is_boilerplate(rest) {
                return paragraph(comment_lines(lines, i, "//").map(|r| r.trim_start_matches('!')));
            }
            i += 1;
            continue;
        }
        return None;
    }
    None
}

fn markdown_header(lines: &[&str]) -> Option<String> {
    let mut i = 0;
    if lines.first().map(|l| l.trim()) == Some("---") {
        i = 1;
        while i < lines.len() && lines[i].trim() != "---" {
            i += 1;
        }
        i += 1;
    }
    let mut fence = false;
    for (n, line) in lines.iter().skip(i).take(200).enumerate() {
        let t = line.trim();
        if t.starts_with("```") {
            fence = !fence;
            continue;
        }
        if fence || t.is_empty() || t.starts_with('<') || t.starts_with("[!") || t.starts_with("![") || t.starts_with("[![") {
            continue;
        }
        if t.starts_with('#') {
            let t = t.trim_start_matches('#').trim().trim_end_matches('#').trim();
            if !t.is_empty() && !is_boilerplate(t) {
                return clean(t); // a heading is whole on its line
            }
        } else if !is_boilerplate(t) {
            return paragraph(lines[i + n..].iter().copied());
        }
    }
    None
}

fn rst_header(lines: &[&str]) -> Option<String> {
    lines
        .iter()
        .take(100)
        .map(|l| l.trim())
        .find(|t| t.chars().any(|c| c.is_alphanumeric()) && !t.starts_with(".."))
        .and_then(clean)
}

// --- Python --------------------------------------------------------------------

fn py_string_start(t: &str) -> Option<(usize, &'static str)> {
    let b = t.as_bytes();
    let mut i = 0;
    while i < 2 && i < b.len() && b"rRuUbBfF".contains(&b[i]) {
        i += 1;
    }
    let rest = &t[i..];
    for d in ["\"\"\"", "'''", "\"", "'"] {
        if rest.starts_with(d) {
            return Some((i + d.len(), d));
        }
    }
    None
}

/// The first sentence of the string literal starting at column `col` of line `i`: its first
/// non-empty line, and the lines after it while the sentence goes on.
fn py_string_line(lines: &[&str], i: usize, col: usize, delim: &str) -> Option<String> {
    let first = &lines[i][col..];
    if let Some(end) = first.find(delim) {
        return clean(&first[..end]);
    }
    if delim.len() == 1 {
        return clean(first);
    }
    let mut parts = Vec::new();
    for line in std::iter::once(first).chain(lines.iter().skip(i + 1).take(40).copied()) {
        let (part, closed) = match line.find(delim) {
            Some(e) => (&line[..e], true),
            None => (line, false),
        };
        if !part.trim().is_empty() {
            parts.push(part);
        } else if !parts.is_empty() {
            break;
        }
        if closed {
            break;
        }
    }
    paragraph(parts)
}

fn py_docstring_after(lines: &[&str], i: usize) -> Option<String> {
    let j = (i..lines.len().min(i + 5)).find(|&j| !lines[j].trim().is_empty())?;
    let t = lines[j].trim_start();
    let (off, d) = py_string_start(t)?;
    py_string_line(lines, j, lines[j].len() - t.len() + off, d)
}

/// A Python module's docstring, else its header comment.
fn python_purpose(lines: &[&str]) -> Option<String> {
    let mut header_comment = None;
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if let Some(c) = t.strip_prefix('#') {
            if header_comment.is_none() && !t.starts_with("#!") && !is_boilerplate(c) {
                header_comment = clean(c.trim_start_matches('#'));
            }
            continue;
        }
        if let Some((off, d)) = py_string_start(t) {
            if let Some(doc) = py_string_line(lines, i, line.len() - line.trim_start().len() + off, d) {
                return Some(doc);
            }
        }
        break;
    }
    header_comment
}

fn is_dotted(s: &str) -> bool {
    !s.is_empty() && s.split('.').all(|p| !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || c == '_'))
}

fn scan_python(sc: &mut Scanner) {
    let lines = std::mem::take(&mut sc.lines);
    sc.out.purpose = python_purpose(&lines);

    let mut in_string: Option<&str> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if let Some(d) = in_string {
            if line.contains(d) {
                in_string = None;
            }
            i += 1;
            continue;
        }
        if line.starts_with("def ") || line.starts_with("async def ") || line.starts_with("class ") {
            let rest = line.strip_prefix("async ").unwrap_or(line);
            let rest = rest.strip_prefix("def ").or_else(|| rest.strip_prefix("class ")).unwrap_or(rest);
            let name = ident(rest);
            if !name.is_empty() && !name.starts_with('_') {
                sc.export(&[name], || {
                    let (head, end) = header_at(&lines, i, &[':']);
                    let head = head.strip_prefix("async ").unwrap_or(&head);
                    (collapse_ws(head.strip_prefix("def ").unwrap_or(head)), py_docstring_after(&lines, end + 1))
                });
            }
        }
        if has_quote(line) {
            for d in ["\"\"\"", "'''"] {
                if line.matches(d).count() % 2 == 1 {
                    in_string = Some(d);
                    break;
                }
            }
        }
        i += 1;
    }
    sc.lines = lines;
}

// --- Rust ----------------------------------------------------------------------

/// A Rust module's `//!` doc, else its header comment.
fn rust_purpose(lines: &[&str]) -> Option<String> {
    let mut header_comment = None;
    let mut i = 0;
    while i < lines.len() {
        let t = lines[i].trim();
        if t.is_empty() || t.starts_with("#![") {
            i += 1;
            continue;
        }
        if let Some(rest) = t.strip_prefix("//!") {
            if !is_boilerplate(rest) {
                return paragraph(comment_lines(lines, i, "//!"));
            }
        } else if t.starts_with("/*!") {
            let start = i;
            while i < lines.len() && !lines[i].contains("*/") {
                i += 1;
            }
            if let Some(p) = block_comment_line(&lines[start..=i.min(lines.len() - 1)]) {
                return Some(p);
            }
        } else if let Some(rest) = t.strip_prefix("//") {
            if header_comment.is_none() && !rest.starts_with('/') && !is_boilerplate(rest) {
                header_comment = paragraph(comment_lines(lines, i, "//"));
            }
        } else {
            break;
        }
        i += 1;
    }
    header_comment
}

fn scan_rust(sc: &mut Scanner) {
    let lines = std::mem::take(&mut sc.lines);
    sc.out.purpose = rust_purpose(&lines);

    let mut owner: Option<String> = None;
    for i in 0..lines.len() {
        let line = lines[i];
        if line.starts_with("impl") && matches!(line.as_bytes().get(4), Some(b' ') | Some(b'<')) {
            owner = rust_impl_type(line);
            continue;
        }
        if line.starts_with('}') {
            owner = None;
        }
        let t = line.trim_start();
        if t.starts_with("use ") || t.starts_with("pub use ") || t.starts_with("pub(crate) use ") || t.starts_with("extern crate ") {
            continue;
        }
        if t.starts_with("#[test]") || t.starts_with("#[tokio::test") || t.starts_with("#[cfg(test)]") {
            sc.out.tests = true;
        }
        let (rest, method_of) = if let Some(r) = line.strip_prefix("pub ") {
            (r, None)
        } else if let (Some(r), Some(o)) = (line.strip_prefix("    pub "), owner.as_deref()) {
            (r, Some(o.to_string()))
        } else {
            continue;
        };
        let mut rest = rest;
        for q in ["async ", "unsafe ", "extern \"C\" ", "default "] {
            if let Some(r) = rest.strip_prefix(q) {
                rest = r;
            }
        }
        if rest.starts_with("const fn ") {
            rest = &rest[6..];
        }
        let Some(sp) = rest.find(' ') else { continue };
        let (kind, after) = (&rest[..sp], rest[sp + 1..].trim_start());
        let name = ident(after);
        if name.is_empty() {
            continue;
        }
        if method_of.is_some() && kind != "fn" {
            continue;
        }
        let doc = || doc_above(&lines, i, "///", true);
        match kind {
            "fn" => {
                let sig = || {
                    let head = header(&lines, i, &['{', ';']);
                    let head = head.split(" where ").next().unwrap_or("");
                    collapse_ws(head.split_once("fn ").map(|x| x.1).unwrap_or(""))
                };
                match &method_of {
                    Some(o) => {
                        let full = format!("{}::{}", o, name);
                        sc.export(&[name, &full], || (format!("{}::{}", o, sig()), doc()));
                    }
                    None => sc.export(&[name], || (sig(), doc())),
                }
            }
            "struct" | "enum" | "trait" | "union" => sc.export(&[name], || {
                let generics = after[name.len()..].strip_prefix('<').map(|g| {
                    let mut depth = 1;
                    let end = g
                        .char_indices()
                        .find(|&(_, c)| {
                            if c == '<' {
                                depth += 1;
                            } else if c == '>' {
                                depth -= 1;
                            }
                            depth == 0
                        })
                        .map(|(k, _)| k)
                        .unwrap_or(g.len());
                    format!("<{}>", &g[..end])
                });
                (format!("{} {}{}", kind, name, generics.unwrap_or_default()), doc())
            }),
            "type" | "const" | "static" => sc.export(&[name], || {
                let head = header(&lines, i, &[';', '=']);
                let text = head.split_once(&format!("{} ", kind)).map(|x| x.1).unwrap_or(name).to_string();
                (format!("{} {}", kind, collapse_ws(&text)), doc())
            }),
            "mod" if name != "tests" => sc.export(&[name], || (format!("mod {}", name), doc())),
            _ => {}
        }
    }
    sc.lines = lines;
}

fn rust_impl_type(line: &str) -> Option<String> {
    let mut rest = &line[4..];
    if rest.starts_with('<') {
        let mut depth = 0;
        for (k, c) in rest.char_indices() {
            match c {
                '<' => depth += 1,
                '>' => {
                    depth -= 1;
                    if depth == 0 {
                        rest = &rest[k + 1..];
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    let rest = rest.split('{').next().unwrap_or("").split(" where ").next().unwrap_or("");
    let ty = match rest.split_once(" for ") {
        Some((_, t)) => t,
        None => rest,
    };
    let name = ident(ty.trim().trim_start_matches('&'));
    if name.is_empty() { None } else { Some(name.to_string()) }
}

// --- Go ------------------------------------------------------------------------

/// A Go file's package comment, else its header comment.
fn go_purpose(lines: &[&str]) -> Option<String> {
    let p = lines.iter().position(|l| l.starts_with("package "))?;
    doc_above(lines, p, "//", false).or_else(|| line_comment_header(&lines[..p], "//"))
}

/// The purpose of a code file, from the comments at its top.
fn code_purpose(lang: Lang, lines: &[&str]) -> Option<String> {
    match lang {
        Lang::Python => python_purpose(lines),
        Lang::Rust => rust_purpose(lines),
        Lang::Go => go_purpose(lines),
        _ => slash_header(lines),
    }
}

/// The import grammar of a language, if it has one.
fn grammar(lang: Lang) -> Option<Grammar> {
    match lang {
        Lang::Python => Some(Grammar::Python),
        Lang::Rust => Some(Grammar::Rust),
        Lang::Go => Some(Grammar::Go),
        Lang::TypeScript | Lang::JavaScript => Some(Grammar::Js),
        _ => None,
    }
}

/// Imports (and, for Rust, whether there are tests) of a file whose exports are no longer wanted.
fn scan_imports_only(lang: Lang, text: &str, out: &mut FileScan) {
    if let Some(g) = grammar(lang) {
        out.imports = imports::of_lines(g, text, &split_lines(text));
    }
    if lang == Lang::Rust {
        let bytes = text.as_bytes();
        out.tests = memchr::memmem::find(bytes, b"#[test]").is_some() || memchr::memmem::find(bytes, b"#[cfg(test)]").is_some();
    }
}

fn scan_go(sc: &mut Scanner) {
    let lines = std::mem::take(&mut sc.lines);
    sc.out.purpose = go_purpose(&lines);
    let mut block: Option<&str> = None; // inside `const (`, `var (`, `type (` or `import (`
    for i in 0..lines.len() {
        let line = lines[i];
        if let Some(kind) = block {
            if line.starts_with(')') {
                block = None;
                continue;
            }
            let t = line.trim();
            // Import blocks are read by the import grammar; their lines are no exports.
            if kind != "import" && line.starts_with('\t') && !line.starts_with("\t\t") {
                let name = ident(t);
                if name.starts_with(|c: char| c.is_uppercase()) {
                    sc.export(&[name], || {
                        let rest = t[name.len()..].split_whitespace().next().unwrap_or("").split('{').next().unwrap_or("");
                        let kw = if kind == "type" { format!("type {} {}", name, rest) } else { format!("{} {}", kind, name) };
                        (kw.trim().to_string(), doc_above(&lines, i, "//", false))
                    });
                }
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix("import ") {
            if rest.trim_start().starts_with('(') {
                block = Some("import");
            }
        } else if let Some(rest) = line.strip_prefix("func ") {
            let (recv, after) = if rest.starts_with('(') {
                match rest.find(')') {
                    Some(k) => {
                        let inner = &rest[1..k];
                        let ty = inner.split_whitespace().last().unwrap_or("").trim_start_matches('*');
                        let ty = ty.split('[').next().unwrap_or("");
                        (Some(ty.to_string()), rest[k + 1..].trim_start())
                    }
                    None => continue,
                }
            } else {
                (None, rest)
            };
            let name = ident(after);
            if !name.starts_with(|c: char| c.is_uppercase()) {
                continue;
            }
            let sig = || {
                let head = header(&lines, i, &['{']);
                let tail = head.find(name).map(|k| &head[k..]).unwrap_or(name);
                (collapse_ws(tail), doc_above(&lines, i, "//", false))
            };
            match recv {
                Some(r) => {
                    let full = format!("{}.{}", r, name);
                    sc.export(&[name, &full], || {
                        let (s, d) = sig();
                        (format!("{}.{}", r, s), d)
                    })
                }
                None => sc.export(&[name], sig),
            }
        } else if let Some((kind, rest)) = [("type", "type "), ("const", "const "), ("var", "var ")]
            .into_iter()
            .find_map(|(k, p)| line.strip_prefix(p).map(|r| (k, r.trim_start())))
        {
            if rest.starts_with('(') {
                block = Some(kind);
                continue;
            }
            let name = ident(rest);
            if name.starts_with(|c: char| c.is_uppercase()) {
                sc.export(&[name], || {
                    let what = rest[name.len()..].split_whitespace().next().unwrap_or("").split('{').next().unwrap_or("");
                    let sig = if kind == "type" { format!("type {} {}", name, what) } else { format!("{} {}", kind, name) };
                    (sig.trim().to_string(), doc_above(&lines, i, "//", false))
                });
            }
        }
    }
    sc.lines = lines;
}

fn quoted(s: &str) -> Option<String> {
    let start = s.find(['"', '\'', '`'])?;
    let q = s[start..].chars().next()?;
    let rest = &s[start + 1..];
    let end = rest.find(q)?;
    let v = &rest[..end];
    if v.is_empty() { None } else { Some(v.to_string()) }
}

// --- TypeScript / JavaScript -------------------------------------------------

fn scan_js(sc: &mut Scanner) {
    let lines = std::mem::take(&mut sc.lines);
    sc.out.purpose = slash_header(&lines);
    for i in 0..lines.len() {
        let line = lines[i];
        if line.len() > 2000 {
            continue; // minified
        }
        if let Some(rest) = line.strip_prefix("export ") {
            js_export(sc, &lines, i, rest);
        } else if let Some(rest) = line.strip_prefix("module.exports") {
            let rest = rest.trim_start();
            if let Some(r) = rest.strip_prefix('.') {
                let name = ident(r);
                if !name.is_empty() {
                    sc.export(&[name], || (name.to_string(), None));
                }
            } else if let Some(r) = rest.strip_prefix('=') {
                let r = r.trim();
                if let Some(inner) = r.strip_prefix('{') {
                    for part in inner.split('}').next().unwrap_or("").split(',') {
                        let name = ident(part.trim());
                        if !name.is_empty() {
                            sc.export(&[name], || (name.to_string(), None));
                        }
                    }
                }
            }
        } else if let Some(r) = line.strip_prefix("exports.") {
            let name = ident(r);
            if !name.is_empty() {
                sc.export(&[name], || (name.to_string(), None));
            }
        }
    }
    sc.lines = lines;
}

fn js_export(sc: &mut Scanner, lines: &[&str], i: usize, rest: &str) {
    let mut rest = rest.trim_start();
    let mut is_default = false;
    for q in ["default ", "declare ", "abstract "] {
        if let Some(r) = rest.strip_prefix(q) {
            is_default |= q == "default ";
            rest = r.trim_start();
        }
    }
    let doc = || jsdoc_above(lines, i);
    if let Some(r) = rest.strip_prefix("async ").unwrap_or(rest).strip_prefix("function") {
        let r = r.trim_start_matches('*').trim_start();
        let name = ident(r);
        if name.is_empty() {
            if is_default {
                sc.export(&["default"], || ("default function".to_string(), doc()));
            }
            return;
        }
        sc.export(&[name], || {
            let head = header(lines, i, &['{', ';']);
            let at = head.find(&format!("{}(", name)).or_else(|| head.find(name)).unwrap_or(0);
            (collapse_ws(&head[at..]), doc())
        });
        return;
    }
    for kind in ["class", "interface", "type", "enum", "const enum", "namespace", "module"] {
        if let Some(r) = rest.strip_prefix(kind).and_then(|r| r.strip_prefix(' ')) {
            let name = ident(r.trim_start());
            if !name.is_empty() {
                let kind = if kind == "const enum" { "enum" } else if kind == "module" { "namespace" } else { kind };
                sc.export(&[name], || (format!("{} {}", kind, name), doc()));
            }
            return;
        }
    }
    for kind in ["const ", "let ", "var "] {
        if let Some(r) = rest.strip_prefix(kind) {
            let name = ident(r.trim_start());
            if name.is_empty() {
                return;
            }
            let value = r.split_once('=').map(|x| x.1.trim_start()).unwrap_or("");
            let value = value.strip_prefix("async ").unwrap_or(value);
            if value.starts_with('(') || value.starts_with("function") {
                sc.export(&[name], || {
                let head = header(lines, i, &['{', ';']);
                let params = head.find('(').map(|k| {
                    let inner = &head[k..];
                    let mut depth = 0;
                    let end = inner
                        .char_indices()
                        .find(|&(_, c)| {
                            if c == '(' {
                                depth += 1;
                            } else if c == ')' {
                                depth -= 1;
                            }
                            depth == 0
                        })
                        .map(|(e, _)| e + 1)
                        .unwrap_or(inner.len());
                    inner[..end].to_string()
                });
                (collapse_ws(&format!("{}{}", name, params.unwrap_or_default())), doc())
                });
            } else {
                sc.export(&[name], || (format!("const {}", name), doc()));
            }
            return;
        }
    }
    if let Some(r) = rest.strip_prefix('{') {
        let inner = r.split('}').next().unwrap_or("");
        for part in inner.split(',') {
            let part = part.trim().trim_start_matches("type ");
            let name = match part.split_once(" as ") {
                Some((_, alias)) => ident(alias.trim()),
                None => ident(part),
            };
            if !name.is_empty() && name != "default" {
                sc.export(&[name], || (name.to_string(), None));
            }
        }
    }
}

/// Whether a line has a quote character: the cheap test before looking for strings in it.
fn has_quote(line: &str) -> bool {
    memchr::memchr3(b'"', b'\'', b'`', line.as_bytes()).is_some()
}

// --- the index ----------------------------------------------------------------

/// What is known of the whole tree before any scope is read: which directories exist,
/// and where the Python packages, npm packages, crates and Go modules of the repository are.
pub struct Index {
    root: PathBuf,
    dirs: HashSet<String>,
    py_modules: HashMap<String, Vec<String>>,
    js_packages: HashMap<String, String>,
    crates: HashMap<String, String>,
    cargo_dirs: HashSet<String>,
    go_modules: Vec<(String, String)>,
    rules: Rules,
    /// Files per language over every directory of the table, most first.
    pub languages: Vec<(String, u64)>,
}

/// The ignore rules the walk prunes directories by, applied here to files: a file
/// git or `.contextignore` ignores is never described in a context file.
struct Rules {
    /// `.contextignore` and the config's patterns: they win over everything.
    priority: Option<Arc<ignore::Rules>>,
    /// `.gitignore` by directory; the deepest one that says something decides.
    nested: HashMap<String, Arc<ignore::Rules>>,
    /// `.git/info/exclude`: consulted last.
    exclude: Option<Arc<ignore::Rules>>,
}

impl Rules {
    fn ignores(&self, scope: &str, path: &Path) -> bool {
        let verdict = |g: &Arc<ignore::Rules>| g.matched(path, false);
        if let Some(v) = self.priority.as_ref().and_then(verdict) {
            return v;
        }
        let mut cur = Some(scope.to_string());
        while let Some(d) = cur {
            if let Some(v) = self.nested.get(&d).and_then(verdict) {
                return v;
            }
            cur = parent(&d);
        }
        self.exclude.as_ref().and_then(verdict).unwrap_or(false)
    }
}

struct DirInfo {
    dir: String,
    py_files: bool,
    py_project: bool,
    package_name: Option<String>,
    crate_name: Option<String>,
    go_module: Option<String>,
    gitignore: Option<Arc<ignore::Rules>>,
    languages: HashMap<&'static str, u64>,
}

fn join(dir: &str, rel: &str) -> String {
    if dir == "." { rel.to_string() } else { format!("{}/{}", dir, rel) }
}

fn parent(dir: &str) -> Option<String> {
    if dir == "." {
        return None;
    }
    Some(match dir.rfind('/') {
        Some(k) => dir[..k].to_string(),
        None => ".".to_string(),
    })
}

fn read_capped(path: &Path, cap: u64) -> Option<String> {
    let file = fs::File::open(path).ok()?;
    // Sized from the file, so the read takes one call rather than a growing series.
    let len = file.metadata().map(|m| m.len().min(cap)).unwrap_or(0);
    let mut buf = Vec::with_capacity(len as usize + 1);
    file.take(cap).read_to_end(&mut buf).ok()?;
    Some(match String::from_utf8(buf) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

fn cargo_package_name(text: &str) -> Option<String> {
    let mut in_package = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            in_package = t == "[package]";
        } else if in_package {
            if let Some(v) = t.strip_prefix("name") {
                let v = v.trim_start();
                if let Some(v) = v.strip_prefix('=') {
                    return quoted(v);
                }
            }
        }
    }
    None
}

fn dir_info(root: &Path, dir: &str, budget: &Budget) -> DirInfo {
    let mut info = DirInfo {
        dir: dir.to_string(),
        py_files: false,
        py_project: false,
        package_name: None,
        crate_name: None,
        go_module: None,
        gitignore: None,
        languages: HashMap::new(),
    };
    let abs = root.join(dir);
    let Ok(reader) = fs::read_dir(&abs) else { return info };
    for entry in reader.flatten() {
        if !entry.file_type().map(|t| t.is_file()).unwrap_or(false) {
            continue;
        }
        let name = entry.file_name();
        let name = name.to_string_lossy();
        match name.as_ref() {
            "pyproject.toml" | "setup.py" | "setup.cfg" => info.py_project = true,
            ".gitignore" => info.gitignore = ignore::from_file(&abs, &abs.join(".gitignore"), budget),
            "package.json" => {
                info.package_name = read_capped(&abs.join("package.json"), MAX_CODE_BYTES)
                    .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
                    .and_then(|v| v.get("name").and_then(|n| n.as_str()).map(|s| s.to_string()));
            }
            "Cargo.toml" => {
                info.crate_name = Some(
                    read_capped(&abs.join("Cargo.toml"), MAX_TEXT_BYTES * 4)
                        .and_then(|t| cargo_package_name(&t))
                        .unwrap_or_default(),
                );
            }
            "go.mod" => {
                info.go_module = read_capped(&abs.join("go.mod"), MAX_TEXT_BYTES).and_then(|t| {
                    t.lines().find_map(|l| l.trim().strip_prefix("module ").map(|m| m.trim().trim_matches('"').to_string()))
                });
            }
            _ => {}
        }
        if name.starts_with('.') || !is_source_file(&name) {
            continue;
        }
        let (_, lang, language) = kind_of(&name);
        if lang == Lang::Python {
            info.py_files = true;
        }
        if !language.is_empty() {
            *info.languages.entry(language).or_default() += 1;
        }
    }
    info
}

impl Index {
    pub fn build(root: &Path, dirs: Vec<String>, extra_ignore: &[String]) -> Index {
        let budget = Budget::new();
        let RootRules { priority, exclude } = ignore::root_rules(root, extra_ignore, &budget);
        let mut infos: Vec<DirInfo> = dirs.par_iter().map(|d| dir_info(root, d, &budget)).collect();
        let nested = infos.iter_mut().filter_map(|i| i.gitignore.take().map(|g| (i.dir.clone(), g))).collect();
        let rules = Rules { priority, nested, exclude };
        let dir_set: HashSet<String> = dirs.into_iter().collect();
        let mut languages: HashMap<&str, u64> = HashMap::new();
        let mut py_roots: HashSet<String> = HashSet::from([".".to_string()]);
        let mut js_packages = HashMap::new();
        let mut crates = HashMap::new();
        let mut cargo_dirs = HashSet::new();
        let mut go_modules = Vec::new();
        for info in &infos {
            for (l, n) in &info.languages {
                *languages.entry(l).or_default() += n;
            }
            if info.py_project || info.dir == "." {
                py_roots.insert(info.dir.clone());
                for sub in ["src", "python", "lib"] {
                    let d = join(&info.dir, sub);
                    if dir_set.contains(&d) {
                        py_roots.insert(d);
                    }
                }
            }
            if let Some(n) = &info.package_name {
                js_packages.insert(n.clone(), info.dir.clone());
            }
            if let Some(n) = &info.crate_name {
                cargo_dirs.insert(info.dir.clone());
                if !n.is_empty() {
                    crates.insert(n.replace('-', "_"), info.dir.clone());
                }
            }
            if let Some(m) = &info.go_module {
                go_modules.push((m.clone(), info.dir.clone()));
            }
        }
        go_modules.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
        // Dotted module names of directories holding Python files, from each source root above them.
        let mut py_modules: HashMap<String, Vec<String>> = HashMap::new();
        for info in infos.iter().filter(|i| i.py_files && i.dir != ".") {
            let mut anc = parent(&info.dir);
            while let Some(a) = anc {
                if py_roots.contains(&a) {
                    let rel = if a == "." { info.dir.as_str() } else { &info.dir[a.len() + 1..] };
                    let dotted = rel.replace('/', ".");
                    if is_dotted(&dotted) {
                        py_modules.entry(dotted).or_default().push(info.dir.clone());
                    }
                }
                anc = parent(&a);
            }
        }
        let mut languages: Vec<(String, u64)> = languages.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        languages.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        Index { root: root.to_path_buf(), dirs: dir_set, py_modules, js_packages, crates, cargo_dirs, go_modules, rules, languages }
    }

    fn longest_dir(&self, base: &str, segs: &[&str]) -> String {
        for n in (1..=segs.len()).rev() {
            let cand = join(base, &segs[..n].join("/"));
            if self.dirs.contains(&cand) {
                return cand;
            }
        }
        base.to_string()
    }

    fn nearest_with(&self, dir: &str, set: &HashSet<String>) -> Option<String> {
        let mut cur = Some(dir.to_string());
        while let Some(d) = cur {
            if set.contains(&d) {
                return Some(d);
            }
            cur = parent(&d);
        }
        None
    }

    /// An import seen in `file` of `dir`: Some(Ok(internal dir)) or Some(Err((ecosystem, package))).
    fn resolve(&self, dir: &str, file: &str, import: &Import) -> Option<Result<String, (&'static str, String)>> {
        match import {
            Import::Python(level, module) => {
                let segs: Vec<&str> = if module.is_empty() { vec![] } else { module.split('.').collect() };
                if *level > 0 {
                    let mut base = dir.to_string();
                    for _ in 1..*level {
                        base = parent(&base)?;
                    }
                    return Some(Ok(self.longest_dir(&base, &segs)));
                }
                for n in (1..=segs.len()).rev() {
                    if let Some(cands) = self.py_modules.get(&segs[..n].join(".")) {
                        return Some(Ok(nearest(cands, dir)));
                    }
                }
                segs.first().map(|s| Err(("python", s.to_string())))
            }
            Import::Js(spec) => {
                if spec.starts_with("./") || spec.starts_with("../") || spec == "." || spec == ".." {
                    let target = normalize(dir, spec)?;
                    if self.dirs.contains(&target) {
                        return Some(Ok(target));
                    }
                    return parent(&target).map(Ok);
                }
                if spec.starts_with('/') || spec.contains(':') || spec.starts_with('#') || spec.starts_with('~') {
                    return None;
                }
                let mut parts = spec.splitn(3, '/');
                let first = parts.next()?;
                let name = if first.starts_with('@') {
                    format!("{}/{}", first, parts.next().unwrap_or(""))
                } else {
                    first.to_string()
                };
                match self.js_packages.get(&name) {
                    Some(d) => Some(Ok(d.clone())),
                    None if name.starts_with("@/") => None,
                    None => Some(Err(("js", name))),
                }
            }
            Import::Rust(segs) => {
                let first = segs[0].as_str();
                let rest: Vec<&str> = segs[1..].iter().map(|s| s.as_str()).collect();
                let at_root = matches!(file, "mod.rs" | "lib.rs" | "main.rs");
                match first {
                    "crate" => {
                        let krate = self.nearest_with(dir, &self.cargo_dirs)?;
                        let src = join(&krate, "src");
                        let base = if self.dirs.contains(&src) { src } else { krate };
                        Some(Ok(self.longest_dir(&base, &rest)))
                    }
                    "self" => Some(Ok(self.longest_dir(dir, &rest))),
                    "super" => {
                        let mut base = if at_root { parent(dir)? } else { dir.to_string() };
                        let mut rest = rest.as_slice();
                        while rest.first() == Some(&"super") {
                            base = parent(&base)?;
                            rest = &rest[1..];
                        }
                        Some(Ok(self.longest_dir(&base, rest)))
                    }
                    name if imports::RUST_BUILTIN.contains(&name) => None,
                    name => match self.crates.get(name) {
                        Some(d) => Some(Ok(d.clone())),
                        None => Some(Err(("rust", name.to_string()))),
                    },
                }
            }
            Import::Go(path) => {
                for (module, mdir) in &self.go_modules {
                    if path == module {
                        return Some(Ok(mdir.clone()));
                    }
                    if let Some(rest) = path.strip_prefix(module.as_str()).and_then(|r| r.strip_prefix('/')) {
                        let segs: Vec<&str> = rest.split('/').collect();
                        return Some(Ok(self.longest_dir(mdir, &segs)));
                    }
                }
                if path.split('/').next().is_some_and(|s| s.contains('.')) {
                    Some(Err(("go", path.clone())))
                } else {
                    None
                }
            }
        }
    }

    /// Facts of every scope, as one JSON array (one object per scope, in order).
    pub fn extract(&self, scopes: &[String]) -> String {
        let facts: Vec<ScopeFacts> = scopes.par_iter().map(|s| self.scope_facts(s)).collect();
        serde_json::to_string(&facts).unwrap_or_else(|_| "[]".to_string())
    }

    /// For each (scope, names): the names no file of the scope exports any more.
    pub fn missing_exports(&self, items: &[(String, Vec<String>)]) -> Vec<Vec<String>> {
        items
            .par_iter()
            .map(|(scope, names)| {
                let abs = self.root.join(scope);
                let all = self.list_files(scope);
                let found: HashSet<String> =
                    self.sources(scope, &all).flat_map(|n| Self::scan_one(&abs, n, true, 0).names).collect();
                names.iter().filter(|n| !found.contains(*n)).cloned().collect()
            })
            .collect()
    }

    fn list_files(&self, dir: &str) -> Vec<String> {
        let mut names: Vec<String> = match fs::read_dir(self.root.join(dir)) {
            Ok(r) => r
                .flatten()
                .filter(|e| e.file_type().map(|t| t.is_file()).unwrap_or(false))
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect(),
            Err(_) => Vec::new(),
        };
        names.sort();
        names
    }

    /// The files of a scope's listing that a context file describes: not hidden, counted
    /// as source by the walk, not ignored.
    fn sources<'b>(&'b self, scope: &'b str, all: &'b [String]) -> impl Iterator<Item = &'b String> {
        let abs = self.root.join(scope);
        all.iter().filter(move |n| !n.starts_with('.') && is_source_file(n) && !self.rules.ignores(scope, &abs.join(n)))
    }

    /// For each scope, the names of the files its context file lists.
    pub fn source_files(&self, scopes: &[String]) -> Vec<Vec<String>> {
        scopes
            .par_iter()
            .map(|s| {
                let all = self.list_files(s);
                self.sources(s, &all).cloned().collect()
            })
            .collect()
    }

    /// Read and scan one file of directory `abs`, wanting at most `budget` signatures.
    fn scan_one(abs: &Path, name: &str, want_names: bool, budget: usize) -> FileScan {
        let (_, lang, _) = kind_of(name);
        let cap = if is_code(lang) || name == "package.json" { MAX_CODE_BYTES + 1 } else { MAX_TEXT_BYTES };
        let text = read_capped(&abs.join(name), cap).unwrap_or_default();
        let scan_code = is_code(lang) && (text.len() as u64) <= MAX_CODE_BYTES;
        scan_file(name, lang, &text, scan_code, want_names, budget)
    }

    fn scope_facts(&self, scope: &str) -> ScopeFacts {
        let all = self.list_files(scope);
        let abs = self.root.join(scope);
        let present: HashSet<&str> = all.iter().map(|s| s.as_str()).collect();
        let test_dirs: Vec<(&str, Vec<String>)> = ["tests", "test", "__tests__"]
            .into_iter()
            .filter(|d| self.dirs.contains(&join(scope, d)))
            .map(|d| (d, self.list_files(&join(scope, d))))
            .collect();
        let mut facts = ScopeFacts::default();
        facts.manifests = all.iter().filter(|n| MANIFESTS.contains(&n.as_str())).cloned().collect();
        let mut internal = BTreeSet::new();
        let mut external = BTreeSet::new();
        let mut tests = BTreeSet::new();
        let mut seen = HashSet::new();
        for name in self.sources(scope, &all) {
            let scan = Self::scan_one(&abs, name, false, MAX_EXPORTS - facts.exports.len());
            let (label, lang, _) = kind_of(name);
            for import in &scan.imports {
                match self.resolve(scope, name, import) {
                    Some(Ok(d)) if d != scope => {
                        internal.insert(d);
                    }
                    Some(Err((eco, pkg))) => {
                        external.insert((eco, pkg));
                    }
                    _ => {}
                }
            }
            if scan.tests || is_test_name(name, lang) {
                tests.insert(match lang {
                    Lang::Python => "python",
                    Lang::Rust => "rust",
                    Lang::Go => "go",
                    Lang::TypeScript | Lang::JavaScript => "js",
                    _ => continue,
                });
            }
            let generic = scan.purpose.is_none();
            let purpose = scan.purpose.unwrap_or_else(|| {
                if scan.first.is_empty() {
                    label.to_string()
                } else {
                    let more = if scan.count > scan.first.len() { ", …" } else { "" };
                    format!("{} defining {}{}", label, scan.first.join(", "), more)
                }
            });
            if generic {
                facts.generic.push(name.clone());
            }
            let test_file = if is_code(lang) && !is_test_name(name, lang) { find_test(name, lang, &present, &test_dirs) } else { None };
            // A test file's functions are not the directory's interface.
            for e in scan.exports.into_iter().filter(|_| !is_test_name(name, lang)) {
                if !seen.insert(e.sig.clone()) {
                    continue;
                }
                if let Some(d) = e.doc {
                    if facts.interfaces.len() < MAX_INTERFACES {
                        facts.interfaces.push(InterfaceOut { name: e.sig.clone(), description: d });
                    }
                }
                facts.exports.push(e.sig);
            }
            facts.files.push(FileOut { name: name.clone(), purpose, test_file });
        }
        facts.internal = internal.into_iter().collect();
        facts.external = external.into_iter().map(|(e, p)| (e.to_string(), p)).collect();
        facts.tests = tests.into_iter().map(|s| s.to_string()).collect();
        facts
    }
}

/// Files that say how a directory is built and tested.
const MANIFESTS: &[&str] = &[
    "pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "pytest.ini", "tox.ini", "Cargo.toml",
    "package.json", "go.mod", "Makefile",
];

fn nearest(cands: &[String], dir: &str) -> String {
    let shared = |c: &String| c.split('/').zip(dir.split('/')).take_while(|(a, b)| a == b).count();
    cands.iter().max_by(|a, b| shared(a).cmp(&shared(b)).then(b.cmp(a))).cloned().unwrap_or_default()
}

fn normalize(dir: &str, spec: &str) -> Option<String> {
    let mut parts: Vec<&str> = if dir == "." { vec![] } else { dir.split('/').collect() };
    for seg in spec.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(if parts.is_empty() { ".".to_string() } else { parts.join("/") })
}

fn is_test_name(name: &str, lang: Lang) -> bool {
    match lang {
        Lang::Python => name.starts_with("test_") || name.ends_with("_test.py") || name == "conftest.py",
        Lang::Go => name.ends_with("_test.go"),
        Lang::TypeScript | Lang::JavaScript => name.contains(".test.") || name.contains(".spec."),
        _ => false,
    }
}

fn find_test(name: &str, lang: Lang, present: &HashSet<&str>, test_dirs: &[(&str, Vec<String>)]) -> Option<String> {
    let (stem, ext) = name.rsplit_once('.')?;
    let candidates: Vec<String> = match lang {
        Lang::Python => vec![format!("test_{}.py", stem), format!("{}_test.py", stem)],
        Lang::Go => vec![format!("{}_test.go", stem)],
        Lang::TypeScript | Lang::JavaScript => vec![format!("{}.test.{}", stem, ext), format!("{}.spec.{}", stem, ext)],
        _ => return None,
    };
    for c in &candidates {
        if present.contains(c.as_str()) {
            return Some(c.clone());
        }
    }
    for (d, files) in test_dirs {
        for c in &candidates {
            if files.iter().any(|f| f == c) {
                return Some(format!("{}/{}", d, c));
            }
        }
    }
    None
}

fn scan_file(name: &str, lang: Lang, text: &str, scan_code: bool, want_names: bool, budget: usize) -> FileScan {
    if scan_code && budget == 0 && !want_names {
        // The scope has all the signatures it keeps: only the purpose and the imports matter,
        // unless there is no purpose, when the first exports name the file.
        let mut top = text.len().min(4 << 10);
        while !text.is_char_boundary(top) {
            top -= 1;
        }
        let purpose = code_purpose(lang, &split_lines(&text[..top]));
        if purpose.is_some() {
            let mut out = FileScan { purpose, ..FileScan::default() };
            scan_imports_only(lang, text, &mut out);
            return out;
        }
    }
    let mut sc = Scanner::new(text, want_names, budget);
    match lang {
        Lang::Python if scan_code => scan_python(&mut sc),
        Lang::Rust if scan_code => scan_rust(&mut sc),
        Lang::Go if scan_code => scan_go(&mut sc),
        Lang::TypeScript | Lang::JavaScript if scan_code => scan_js(&mut sc),
        Lang::Python | Lang::Hash => sc.out.purpose = line_comment_header(&sc.lines, "#"),
        Lang::Rust | Lang::Go | Lang::TypeScript | Lang::JavaScript | Lang::Slash => sc.out.purpose = slash_header(&sc.lines),
        Lang::Dash => sc.out.purpose = line_comment_header(&sc.lines, "--"),
        Lang::Markdown => sc.out.purpose = markdown_header(&sc.lines),
        Lang::Rst => sc.out.purpose = rst_header(&sc.lines),
        Lang::Text => sc.out.purpose = sc.lines.iter().find_map(|l| clean(l)),
        Lang::Json if name == "package.json" => {
            sc.out.purpose = serde_json::from_str::<serde_json::Value>(text)
                .ok()
                .and_then(|v| v.get("description").and_then(|d| d.as_str()).and_then(clean));
        }
        Lang::Json | Lang::Other => {}
    }
    if let Some(g) = grammar(lang).filter(|_| scan_code) {
        sc.out.imports = imports::of_lines(g, text, &sc.lines);
    }
    sc.out
}

#[derive(Serialize)]
struct FileOut {
    name: String,
    purpose: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    test_file: Option<String>,
}

#[derive(Serialize)]
struct InterfaceOut {
    name: String,
    description: String,
}

/// What one directory's files say, in the shape Python decodes (`generate.ScopeFacts`).
#[derive(Serialize, Default)]
struct ScopeFacts {
    files: Vec<FileOut>,
    /// Names of files whose purpose is only a label for their kind.
    generic: Vec<String>,
    exports: Vec<String>,
    interfaces: Vec<InterfaceOut>,
    internal: Vec<String>,
    external: Vec<(String, String)>,
    manifests: Vec<String>,
    /// Languages with tests here: "python", "rust", "go", "js".
    tests: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(name: &str, text: &str) -> FileScan {
        let (_, lang, _) = kind_of(name);
        scan_file(name, lang, text, true, true, MAX_EXPORTS)
    }

    fn sigs(s: &FileScan) -> Vec<&str> {
        s.exports.iter().map(|e| e.sig.as_str()).collect()
    }

    #[test]
    fn python_docstring_exports_and_imports() {
        let s = scan(
            "m.py",
            "#!/usr/bin/env python\n# Copyright 2020 X\n\"\"\"Engine that runs jobs.\n\nMore.\"\"\"\nimport os, a.b as c\nfrom ..pkg import mod, other\n\
             from . import sibling\n\ndef run(job,\n        retries=3) -> int:\n    \"\"\"Run one job.\"\"\"\n    return 1\n\n\
             def _private():\n    pass\n\nclass Engine(Base):\n    def method(self):\n        pass\n\nx = \"\"\"\ndef fake():\n\"\"\"\n",
        );
        assert_eq!(s.purpose.as_deref(), Some("Engine that runs jobs."));
        assert_eq!(sigs(&s), vec!["run(job, retries=3) -> int", "class Engine(Base)"]);
        assert_eq!(s.exports[0].doc.as_deref(), Some("Run one job."));
        let imports: Vec<(usize, &str)> = s
            .imports
            .iter()
            .map(|i| match i {
                Import::Python(l, m) => (*l, m.as_str()),
                _ => panic!(),
            })
            .collect();
        assert_eq!(imports, vec![(0, "os"), (0, "a.b"), (2, "pkg.mod"), (2, "pkg.other"), (1, "sibling")]);
    }

    #[test]
    fn rust_docs_items_and_methods() {
        let s = scan(
            "lib.rs",
            "// SPDX-License-Identifier: MIT\n//! Parsing of things.\nuse crate::walk::Table;\nuse serde::{Serialize};\n\n\
             /// Parse it.\n#[inline]\npub fn parse<'a>(s: &'a str) -> Result<T, E>\nwhere T: X {\n}\npub(crate) fn hidden() {}\n\
             pub struct Table<T> { x: T }\nimpl<T> Table<T> {\n    /// Make one.\n    pub fn new() -> Self { }\n    fn private() {}\n}\n\
             pub const MAX: usize = 3;\n#[cfg(test)]\nmod tests {}\n",
        );
        assert_eq!(s.purpose.as_deref(), Some("Parsing of things."));
        assert_eq!(sigs(&s), vec!["parse<'a>(s: &'a str) -> Result<T, E>", "struct Table<T>", "Table::new() -> Self", "const MAX: usize"]);
        assert_eq!(s.exports[0].doc.as_deref(), Some("Parse it."));
        assert_eq!(s.exports[2].doc.as_deref(), Some("Make one."));
        assert!(s.tests);
        assert!(s.names.contains(&"Table::new".to_string()));
    }

    #[test]
    fn go_package_comment_exports_and_imports() {
        let s = scan(
            "x.go",
            "// Package store keeps rows.\npackage store\n\nimport (\n\t\"fmt\"\n\tx \"example.com/m/util\"\n)\n\n\
             // Open opens it.\nfunc Open(path string) (*DB, error) {\n}\nfunc (d *DB) Close() error {\n}\nfunc helper() {}\n\
             type DB struct {\n}\nconst (\n\tMax = 3\n\tmin = 1\n)\n",
        );
        assert_eq!(s.purpose.as_deref(), Some("Package store keeps rows."));
        assert_eq!(sigs(&s), vec!["Open(path string) (*DB, error)", "DB.Close() error", "type DB struct", "const Max"]);
        assert_eq!(s.imports.len(), 2);
    }

    #[test]
    fn typescript_header_exports_and_imports() {
        let s = scan(
            "a.ts",
            "/**\n * @fileoverview Token helpers.\n */\nimport { a } from './util';\nimport x from \"react\";\nconst y = require('../lib/z');\n\n\
             /** Verify a token. */\nexport function verifyToken(token: string): User {\n}\nexport const make = (a: number) => a;\n\
             export class Store {}\nexport interface Opts {}\nexport { a as b, c };\n",
        );
        assert_eq!(s.purpose.as_deref(), Some("Token helpers."));
        assert_eq!(sigs(&s), vec!["verifyToken(token: string): User", "make(a: number)", "class Store", "interface Opts", "b", "c"]);
        assert_eq!(s.exports[0].doc.as_deref(), Some("Verify a token."));
        let specs: Vec<&str> = s.imports.iter().map(|i| if let Import::Js(s) = i { s.as_str() } else { "" }).collect();
        assert_eq!(specs, vec!["./util", "react", "../lib/z"]);
    }

    #[test]
    fn a_wrapped_first_sentence_is_read_whole() {
        let purpose = |name: &str, text: &str| scan(name, text).purpose;
        let whole = Some("The formats: a manifest and an index, and the results of the tools.".to_string());
        assert_eq!(purpose("m.py", "\"\"\"The formats: a manifest and an index,\nand the results of the tools.\n\nMore.\"\"\"\n"), whole);
        assert_eq!(purpose("m.py", "\"\"\"The manifest and the index,\nand the results of the tools.\n\nMore.\"\"\"\n").as_deref(),
                   Some("The manifest and the index, and the results of the tools."));
        assert_eq!(purpose("m.py", "\"\"\"\nA docstring that starts\non its second line.\n\"\"\"\n").as_deref(),
                   Some("A docstring that starts on its second line."));
        assert_eq!(purpose("lib.rs", "//! The formats: a manifest and an index, and the results\n//! of the tools.\n//!\n//! More.\n"), whole);
        assert_eq!(purpose("run.sh", "#!/bin/sh\n# Runs the thing\n# every night.\necho\n").as_deref(), Some("Runs the thing every night."));
        assert_eq!(purpose("a.ts", "/**\n * Token helpers for the\n * API.\n * @module x\n */\n").as_deref(), Some("Token helpers for the API."));
        assert_eq!(purpose("README.md", "# Tool\n").as_deref(), Some("Tool"));
        assert_eq!(purpose("NOTES.md", "Notes on a\nlong topic.\n\nNext.\n").as_deref(), Some("Notes on a long topic."));
        assert_eq!(purpose("m.py", "\"\"\"Concurrency: several processes at\nonce. Afterwards nothing is lost,\nnothing half written.\"\"\"\n").as_deref(),
                   Some("Concurrency: several processes at once."));
        // A paragraph that ends without a full stop stops at the blank line.
        assert_eq!(purpose("m.py", "\"\"\"Helpers\n\nMore.\"\"\"\n").as_deref(), Some("Helpers"));
        // One sentence over MAX_TEXT is cut after a word.
        let long = format!("\"\"\"{}.\"\"\"\n", "word ".repeat(100).trim_end());
        let cut = purpose("l.py", &long).unwrap();
        assert!(cut.ends_with("word…") && cut.chars().count() <= MAX_TEXT, "{cut}");
    }

    #[test]
    fn headers_of_other_files() {
        assert_eq!(scan("README.md", "---\nx: 1\n---\n\n# My Tool\n").purpose.as_deref(), Some("My Tool"));
        assert_eq!(scan("run.sh", "#!/bin/sh\n# Runs the thing.\necho\n").purpose.as_deref(), Some("Runs the thing."));
        assert_eq!(scan("a.yaml", "key: 1\n").purpose, None);
        let long = format!("\"\"\"{}\"\"\"\n", "x".repeat(500));
        assert_eq!(scan("l.py", &long).purpose.unwrap().chars().count(), MAX_TEXT);
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
            let (_, lang, _) = kind_of(name);
            let full = scan_file(name, lang, text, true, false, MAX_EXPORTS);
            let quick = scan_file(name, lang, text, true, false, 0);
            assert_eq!(imports(&quick), imports(&full), "{}", name);
            assert_eq!((quick.purpose, quick.tests), (full.purpose, full.tests), "{}", name);
        }
    }

    #[test]
    fn ignored_files_are_not_described() {
        let root = std::env::temp_dir().join(format!("repoctx-extract-ignore-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        fs::create_dir_all(root.join("src/sub")).unwrap();
        fs::create_dir_all(root.join(".git/info")).unwrap();
        fs::write(root.join(".gitignore"), "*.local.py\nkeep.*\n").unwrap();
        fs::write(root.join("src/sub/.gitignore"), "!keep.py\n").unwrap();
        fs::write(root.join(".git/info/exclude"), "excluded.py\n").unwrap();
        fs::write(root.join(".contextignore"), "noise.md\n").unwrap();
        for f in ["a.py", "b.local.py", "keep.py", "excluded.py", "noise.md", "extra.py"] {
            fs::write(root.join("src/sub").join(f), "x = 1\n").unwrap();
        }
        let dirs = vec![".".to_string(), "src".to_string(), "src/sub".to_string()];
        let index = Index::build(&root, dirs, &["extra.py".to_string()]);
        assert_eq!(index.source_files(&["src/sub".to_string()]), vec![vec!["a.py".to_string(), "keep.py".to_string()]]);
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn relative_paths_normalise_inside_the_root_only() {
        assert_eq!(normalize("src/a", "../b/c").as_deref(), Some("src/b/c"));
        assert_eq!(normalize(".", "./x").as_deref(), Some("x"));
        assert_eq!(normalize("a", "../.."), None);
    }
}
