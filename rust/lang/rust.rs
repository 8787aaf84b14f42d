//! Rust: a module's `//!` doc (else its header comment) and its `pub` items at column 0,
//! with the `pub fn`s of `impl` blocks as `Type::method`; whether the file has tests.

use super::scanner::Scanner;
use super::text::{
    block_comment_line, collapse_ws, comment_lines, doc_above, header, ident, is_boilerplate,
    paragraph,
};

/// A Rust module's `//!` doc, else its header comment.
pub fn purpose(lines: &[&str]) -> Option<String> {
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

pub fn scan(sc: &mut Scanner) {
    let lines = std::mem::take(&mut sc.lines);
    sc.out.purpose = purpose(&lines);

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
        if t.starts_with("use ")
            || t.starts_with("pub use ")
            || t.starts_with("pub(crate) use ")
            || t.starts_with("extern crate ")
        {
            continue;
        }
        if t.starts_with("#[test]")
            || t.starts_with("#[tokio::test")
            || t.starts_with("#[cfg(test)]")
        {
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
                (
                    format!("{} {}{}", kind, name, generics.unwrap_or_default()),
                    doc(),
                )
            }),
            "type" | "const" | "static" => sc.export(&[name], || {
                let head = header(&lines, i, &[';', '=']);
                let text = head
                    .split_once(&format!("{} ", kind))
                    .map(|x| x.1)
                    .unwrap_or(name)
                    .to_string();
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
    let rest = rest
        .split('{')
        .next()
        .unwrap_or("")
        .split(" where ")
        .next()
        .unwrap_or("");
    let ty = match rest.split_once(" for ") {
        Some((_, t)) => t,
        None => rest,
    };
    let name = ident(ty.trim().trim_start_matches('&'));
    if name.is_empty() {
        None
    } else {
        Some(name.to_string())
    }
}

#[cfg(test)]
mod tests {
    use crate::lang::extract::tests::{scan, sigs};

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
        assert_eq!(
            sigs(&s),
            vec![
                "parse<'a>(s: &'a str) -> Result<T, E>",
                "struct Table<T>",
                "Table::new() -> Self",
                "const MAX: usize"
            ]
        );
        assert_eq!(s.exports[0].doc.as_deref(), Some("Parse it."));
        assert_eq!(s.exports[2].doc.as_deref(), Some("Make one."));
        assert!(s.tests);
        assert!(s.names.contains(&"Table::new".to_string()));
    }
}
