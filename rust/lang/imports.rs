//! The import grammar of each language, shared by `init` (lang/extract.rs reads them,
//! scopes/sources.rs resolves them to directories and packages) and `project scan`
//! (project/modscan.rs, which maps them to modules), so both see the same imports in the
//! same code.
//!
//! Line-oriented, not a parser. Where the two readers used to differ, the stricter or more
//! precise reading won:
//! - Python: `from a import b` is `a.b` (b may be a subpackage; callers keep the longest
//!   prefix that exists), `from . import x` is `./x`, and a `from` line is an import only
//!   when `import` follows the module (prose in a docstring is not); lines inside
//!   triple-quoted strings are skipped.
//! - Rust: the whole path is kept (`crate::a::b`), one-line use trees are expanded
//!   (`use a::{b, c::d}` is `a::b` and `a::c::d`), any `pub(…)` visibility is accepted.
//!   `mod x;` is the crate's own structure, not an import.
//! - TypeScript/JavaScript: `from`/`import` take a quoted specifier, `require(`/`import(`
//!   also a template literal; comment lines and minified lines (over 2,000 bytes) are skipped.
//! - Go: `import` is a keyword (not `importer := "x"`), blocks and single imports, raw
//!   (backquoted) paths, comment lines inside blocks skipped.

/// One import as written, before any caller resolves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Import {
    /// (leading dots, dotted module; empty for `from . import *`)
    Python(usize, String),
    Js(String),
    /// Path segments, `crate`/`self`/`super` included.
    Rust(Vec<String>),
    Go(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grammar {
    Python,
    Js,
    Rust,
    Go,
}

impl Grammar {
    /// Words every import line holds: a text without any needs no line reading.
    fn keywords(self) -> &'static [&'static str] {
        match self {
            Grammar::Python => &["import"],
            Grammar::Js => &["import", "require(", "from "],
            Grammar::Rust => &["use ", "extern crate "],
            Grammar::Go => &["import"],
        }
    }
}

/// Crates of the toolchain: never a dependency of the repository.
pub const RUST_BUILTIN: &[&str] = &["std", "core", "alloc", "proc_macro", "test"];

/// The imports of a file's lines, in order of appearance.
pub fn of_lines(g: Grammar, text: &str, lines: &[&str]) -> Vec<Import> {
    let mut out = Vec::new();
    if !g
        .keywords()
        .iter()
        .any(|k| memchr::memmem::find(text.as_bytes(), k.as_bytes()).is_some())
    {
        return out;
    }
    match g {
        Grammar::Python => python(lines, &mut out),
        Grammar::Js => lines.iter().for_each(|l| js_line(l, &mut out)),
        Grammar::Rust => lines.iter().for_each(|l| rust_line(l, &mut out)),
        Grammar::Go => go(lines, &mut out),
    }
    out
}

// --- Python ----------------------------------------------------------------------

fn python(lines: &[&str], out: &mut Vec<Import>) {
    let mut in_string: Option<&str> = None;
    for line in lines {
        if let Some(d) = in_string {
            if line.contains(d) {
                in_string = None;
            }
            continue;
        }
        let t = line.trim_start();
        if t.starts_with("import ") || t.starts_with("from ") {
            python_line(t, out);
        } else if line.contains("\"\"\"") || line.contains("'''") {
            for d in ["\"\"\"", "'''"] {
                if line.matches(d).count() % 2 == 1 {
                    in_string = Some(d);
                    break;
                }
            }
        }
    }
}

/// Whether `name` is a dotted Python module name (`a.b_c`, no part starting with a digit).
pub fn is_dotted(name: &str) -> bool {
    !name.is_empty()
        && name.split('.').all(|p| {
            let mut cs = p.chars();
            matches!(cs.next(), Some(c) if c == '_' || c.is_alphabetic())
                && cs.all(|c| c == '_' || c.is_alphanumeric())
        })
}

fn python_line(t: &str, out: &mut Vec<Import>) {
    let t = t.split('#').next().unwrap_or("");
    if let Some(rest) = t.strip_prefix("import ") {
        for part in rest.split(',') {
            if let Some(m) = part.split_whitespace().next() {
                if is_dotted(m) {
                    out.push(Import::Python(0, m.to_string()));
                }
            }
        }
    } else if let Some(rest) = t.strip_prefix("from ") {
        let mut words = rest.split_whitespace();
        let (Some(module), Some("import")) = (words.next(), words.next()) else {
            return;
        };
        let level = module.len() - module.trim_start_matches('.').len();
        let module = &module[level..];
        if !module.is_empty() && !is_dotted(module) {
            return;
        }
        let joined = words.collect::<Vec<_>>().join(" ");
        let names: Vec<&str> = joined
            .split(',')
            .filter_map(|n| {
                n.trim_matches(|c: char| c == '(' || c == ')' || c.is_whitespace())
                    .split_whitespace()
                    .next()
            })
            .filter(|n| is_dotted(n))
            .take(20)
            .collect();
        if names.is_empty() {
            out.push(Import::Python(level, module.to_string()));
        }
        for n in names {
            let full = if module.is_empty() {
                n.to_string()
            } else {
                format!("{module}.{n}")
            };
            out.push(Import::Python(level, full));
        }
    }
}

// --- TypeScript / JavaScript ----------------------------------------------------------

fn quoted(s: &str, quotes: &[char]) -> Option<String> {
    let q = s.chars().next().filter(|c| quotes.contains(c))?;
    let body = &s[1..];
    let v = &body[..body.find(q)?];
    if v.is_empty() {
        None
    } else {
        Some(v.to_string())
    }
}

fn js_line(line: &str, out: &mut Vec<Import>) {
    if line.len() > 2000 || memchr::memchr3(b'"', b'\'', b'`', line.as_bytes()).is_none() {
        return; // minified, or no specifier
    }
    let t = line.trim_start();
    if t.starts_with("//") || t.starts_with('*') || t.starts_with("/*") {
        return;
    }
    for marker in ["from ", "import ", "require(", "import("] {
        let quotes: &[char] = if marker.ends_with('(') {
            &['\'', '"', '`']
        } else {
            &['\'', '"']
        };
        let mut search = line;
        while let Some(k) = search.find(marker) {
            // `from` and `import` are words, not the end of another identifier or a property.
            let before_ok = k == 0
                || !search[..k]
                    .ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '.' || c == '$');
            let after = search[k + marker.len()..].trim_start();
            if before_ok {
                if let Some(spec) = quoted(after, quotes) {
                    out.push(Import::Js(spec));
                }
            }
            search = &search[k + marker.len()..];
        }
    }
}

// --- Rust -------------------------------------------------------------------------

fn is_ident(s: &str) -> bool {
    let mut cs = s.chars();
    matches!(cs.next(), Some(c) if c == '_' || c.is_alphabetic())
        && cs.all(|c| c == '_' || c.is_alphanumeric())
}

fn rust_line(line: &str, out: &mut Vec<Import>) {
    let mut t = line.trim_start();
    if let Some(r) = t.strip_prefix("pub(") {
        t = r.split_once(')').map(|x| x.1.trim_start()).unwrap_or("");
    } else if let Some(r) = t.strip_prefix("pub ") {
        t = r.trim_start();
    }
    let Some(rest) = t
        .strip_prefix("use ")
        .or_else(|| t.strip_prefix("extern crate "))
    else {
        return;
    };
    let tree = rest
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .trim_start_matches("::");
    use_tree(&[], tree, out);
}

/// `a::{b, c::{d, e as f}}` → `a::b`, `a::c::d`, `a::c::e`; an unclosed brace keeps the prefix.
fn use_tree(prefix: &[String], tree: &str, out: &mut Vec<Import>) {
    let (path, group) = match tree.find('{') {
        Some(k) => (&tree[..k], Some(&tree[k + 1..])),
        None => (tree, None),
    };
    let path = path.split(" as ").next().unwrap_or("").trim();
    let mut segs = prefix.to_vec();
    for s in path.split("::").map(str::trim).filter(|s| !s.is_empty()) {
        if s == "*" || (s == "self" && !segs.is_empty()) {
            continue;
        }
        if !is_ident(s) {
            return;
        }
        segs.push(s.to_string());
    }
    let items = group.and_then(|g| g.rfind('}').map(|end| &g[..end]));
    let Some(items) = items else {
        if !segs.is_empty() {
            out.push(Import::Rust(segs));
        }
        return;
    };
    // Split at the commas outside nested braces.
    let (mut depth, mut start) = (0, 0);
    for (i, c) in items.char_indices().chain([(items.len(), ',')]) {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                let item = items[start..i].trim();
                if !item.is_empty() {
                    use_tree(&segs, item, out);
                }
                start = i + 1;
            }
            _ => {}
        }
    }
}

// --- Go ---------------------------------------------------------------------------

fn go(lines: &[&str], out: &mut Vec<Import>) {
    let mut in_block = false;
    for line in lines {
        let t = line.trim();
        if in_block {
            if t.starts_with(')') {
                in_block = false;
            } else if !t.starts_with("//") {
                go_spec(t, out);
            }
            continue;
        }
        let Some(rest) = t.strip_prefix("import") else {
            continue;
        };
        if !rest.starts_with([' ', '\t', '(', '"', '`']) {
            continue; // `importer := …`
        }
        let rest = rest.trim_start();
        if rest.starts_with('(') {
            in_block = true;
        } else {
            go_spec(rest, out);
        }
    }
}

/// `"path"`, `alias "path"`, `_ "path"` or a raw `` `path` ``.
fn go_spec(t: &str, out: &mut Vec<Import>) {
    if let Some(k) = t.find(['"', '`']) {
        if let Some(p) = quoted(&t[k..], &['"', '`']) {
            out.push(Import::Go(p));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(g: Grammar, text: &str) -> Vec<Import> {
        of_lines(g, text, &text.lines().collect::<Vec<_>>())
    }

    fn py(level: usize, m: &str) -> Import {
        Import::Python(level, m.to_string())
    }

    #[test]
    fn python() {
        let text = "\"\"\"Doc.\nfrom the start it was plain.\nimport nothing\n\"\"\"\nimport os, a.b as c  # note\n\
                    from ..pkg import mod, other\nfrom . import sibling\nfrom .models import (M,\nfrom x import *\n\
                    from . import *\n    import late\nfrom 1bad import y\nimportlib = 1\n";
        assert_eq!(
            of(Grammar::Python, text),
            [
                py(0, "os"),
                py(0, "a.b"),
                py(2, "pkg.mod"),
                py(2, "pkg.other"),
                py(1, "sibling"),
                py(1, "models.M"),
                py(0, "x"),
                py(1, ""),
                py(0, "late")
            ]
        );
    }

    #[test]
    fn typescript_and_javascript() {
        let js = |s: &str| Import::Js(s.to_string());
        let text = "import a from '@acme/ui';\nimport type { T } from './types';\nimport './side.css'\nexport { b } from \"../lib/b\";\n\
                    export * from './all';\nconst c = require('lodash');\nconst d = await import(`./d`);\n} from 'react';\n\
                    // import x from 'nope'\n/* import y from 'nope' */\nconst reimport = 'x';\nx.from 'no';\nimport e from `not-static`;\n";
        assert_eq!(
            of(Grammar::Js, text),
            [
                js("@acme/ui"),
                js("./types"),
                js("./side.css"),
                js("../lib/b"),
                js("./all"),
                js("lodash"),
                js("./d"),
                js("react")
            ]
        );
        // A file that only re-exports has no `import` word.
        assert_eq!(of(Grammar::Js, "export * from './all';\n"), [js("./all")]);
        let minified = format!("import a from 'x';{}\n", " ".repeat(2000));
        assert_eq!(of(Grammar::Js, &minified), []);
    }

    #[test]
    fn rust() {
        let rs = |p: &str| Import::Rust(p.split("::").map(String::from).collect());
        let text = "use std::fs;\npub use core_types::Thing;\npub(crate) use crate::x::y;\npub(super) use super::z;\n\
                    extern crate serde;\nextern crate foo as bar;\nuse ::log;\nuse a::{b, c::{d, e as f}, self};\nuse g::*;\n\
                    use h::{\n    i,\n};\nmod inner;\n// use commented;\n";
        assert_eq!(
            of(Grammar::Rust, text),
            [
                rs("std::fs"),
                rs("core_types::Thing"),
                rs("crate::x::y"),
                rs("super::z"),
                rs("serde"),
                rs("foo"),
                rs("log"),
                rs("a::b"),
                rs("a::c::d"),
                rs("a::c::e"),
                rs("a"),
                rs("g"),
                rs("h")
            ]
        );
    }

    #[test]
    fn go() {
        let go = |s: &str| Import::Go(s.to_string());
        let text = "package main\nimport \"fmt\"\nimport(\n\t\"example.com/m/a\"\n\tdb \"example.com/m/db\"\n\t// \"commented\"\n\t_ `embed`\n)\n\
                    importer := \"x\"\nimport . \"example.com/dot\"\n";
        assert_eq!(
            of(Grammar::Go, text),
            [
                go("fmt"),
                go("example.com/m/a"),
                go("example.com/m/db"),
                go("embed"),
                go("example.com/dot")
            ]
        );
    }
}
