//! TypeScript and JavaScript: a file's header comment and its exports (`export …`,
//! `module.exports`, `exports.x`), with the JSDoc above each.

use super::scanner::Scanner;
use super::text::{block_comment_line, collapse_ws, header, ident, slash_header};

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

pub fn scan(sc: &mut Scanner) {
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
    if let Some(r) = rest
        .strip_prefix("async ")
        .unwrap_or(rest)
        .strip_prefix("function")
    {
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
            let at = head
                .find(&format!("{}(", name))
                .or_else(|| head.find(name))
                .unwrap_or(0);
            (collapse_ws(&head[at..]), doc())
        });
        return;
    }
    for kind in [
        "class",
        "interface",
        "type",
        "enum",
        "const enum",
        "namespace",
        "module",
    ] {
        if let Some(r) = rest.strip_prefix(kind).and_then(|r| r.strip_prefix(' ')) {
            let name = ident(r.trim_start());
            if !name.is_empty() {
                let kind = if kind == "const enum" {
                    "enum"
                } else if kind == "module" {
                    "namespace"
                } else {
                    kind
                };
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
                    (
                        collapse_ws(&format!("{}{}", name, params.unwrap_or_default())),
                        doc(),
                    )
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

#[cfg(test)]
mod tests {
    use crate::lang::extract::tests::{scan, sigs};
    use crate::lang::imports::Import;

    #[test]
    fn typescript_header_exports_and_imports() {
        let s = scan(
            "a.ts",
            "/**\n * @fileoverview Token helpers.\n */\nimport { a } from './util';\nimport x from \"react\";\nconst y = require('../lib/z');\n\n\
             /** Verify a token. */\nexport function verifyToken(token: string): User {\n}\nexport const make = (a: number) => a;\n\
             export class Store {}\nexport interface Opts {}\nexport { a as b, c };\n",
        );
        assert_eq!(s.purpose.as_deref(), Some("Token helpers."));
        assert_eq!(
            sigs(&s),
            vec![
                "verifyToken(token: string): User",
                "make(a: number)",
                "class Store",
                "interface Opts",
                "b",
                "c"
            ]
        );
        assert_eq!(s.exports[0].doc.as_deref(), Some("Verify a token."));
        let specs: Vec<&str> = s
            .imports
            .iter()
            .map(|i| {
                if let Import::Js(s) = i {
                    s.as_str()
                } else {
                    ""
                }
            })
            .collect();
        assert_eq!(specs, vec!["./util", "react", "../lib/z"]);
    }
}
