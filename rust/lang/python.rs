//! Python: a module's docstring (else its header comment) and its public top-level
//! definitions (`def`, `async def`, `class` not starting with `_`), with their docstrings.

use super::scanner::Scanner;
use super::text::{clean, collapse_ws, has_quote, header_at, ident, is_boilerplate, paragraph};

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
pub fn purpose(lines: &[&str]) -> Option<String> {
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
            if let Some(doc) =
                py_string_line(lines, i, line.len() - line.trim_start().len() + off, d)
            {
                return Some(doc);
            }
        }
        break;
    }
    header_comment
}

pub fn scan(sc: &mut Scanner) {
    let lines = std::mem::take(&mut sc.lines);
    sc.out.purpose = purpose(&lines);

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
        if line.starts_with("def ") || line.starts_with("async def ") || line.starts_with("class ")
        {
            let rest = line.strip_prefix("async ").unwrap_or(line);
            let rest = rest
                .strip_prefix("def ")
                .or_else(|| rest.strip_prefix("class "))
                .unwrap_or(rest);
            let name = ident(rest);
            if !name.is_empty() && !name.starts_with('_') {
                sc.export(&[name], || {
                    let (head, end) = header_at(&lines, i, &[':']);
                    let head = head.strip_prefix("async ").unwrap_or(&head);
                    (
                        collapse_ws(head.strip_prefix("def ").unwrap_or(head)),
                        py_docstring_after(&lines, end + 1),
                    )
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

#[cfg(test)]
mod tests {
    use crate::lang::extract::tests::{scan, sigs};
    use crate::lang::imports::Import;

    #[test]
    fn python_docstring_exports_and_imports() {
        let s = scan(
            "m.py",
            "#!/usr/bin/env python\n# Copyright 2020 X\n\"\"\"Engine that runs jobs.\n\nMore.\"\"\"\nimport os, a.b as c\nfrom ..pkg import mod, other\n\
             from . import sibling\n\ndef run(job,\n        retries=3) -> int:\n    \"\"\"Run one job.\"\"\"\n    return 1\n\n\
             def _private():\n    pass\n\nclass Engine(Base):\n    def method(self):\n        pass\n\nx = \"\"\"\ndef fake():\n\"\"\"\n",
        );
        assert_eq!(s.purpose.as_deref(), Some("Engine that runs jobs."));
        assert_eq!(
            sigs(&s),
            vec!["run(job, retries=3) -> int", "class Engine(Base)"]
        );
        assert_eq!(s.exports[0].doc.as_deref(), Some("Run one job."));
        let imports: Vec<(usize, &str)> = s
            .imports
            .iter()
            .map(|i| match i {
                Import::Python(l, m) => (*l, m.as_str()),
                _ => panic!(),
            })
            .collect();
        assert_eq!(
            imports,
            vec![
                (0, "os"),
                (0, "a.b"),
                (2, "pkg.mod"),
                (2, "pkg.other"),
                (1, "sibling")
            ]
        );
    }
}
