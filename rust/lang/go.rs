//! Go: a file's package comment (else its header comment) and its exported (capitalised)
//! functions, methods (as `Type.Method`), types, constants and variables.

use super::scanner::Scanner;
use super::text::{collapse_ws, doc_above, header, ident, line_comment_header};

/// A Go file's package comment, else its header comment.
pub fn purpose(lines: &[&str]) -> Option<String> {
    let p = lines.iter().position(|l| l.starts_with("package "))?;
    doc_above(lines, p, "//", false).or_else(|| line_comment_header(&lines[..p], "//"))
}

pub fn scan(sc: &mut Scanner) {
    let lines = std::mem::take(&mut sc.lines);
    sc.out.purpose = purpose(&lines);
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
                        let sig = declared(kind, name, &t[name.len()..]);
                        (sig, doc_above(&lines, i, "//", false))
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
                        let ty = inner
                            .split_whitespace()
                            .last()
                            .unwrap_or("")
                            .trim_start_matches('*');
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
                    let sig = declared(kind, name, &rest[name.len()..]);
                    (sig, doc_above(&lines, i, "//", false))
                });
            }
        }
    }
    sc.lines = lines;
}

/// The signature of a `type`, `const` or `var` declaration of `name`, `after` the rest of its
/// line: a type with its underlying kind's first word (`type Server struct`), else the keyword
/// and the name.
fn declared(kind: &str, name: &str, after: &str) -> String {
    let what = after
        .split_whitespace()
        .next()
        .unwrap_or("")
        .split('{')
        .next()
        .unwrap_or("");
    let sig = if kind == "type" {
        format!("type {} {}", name, what)
    } else {
        format!("{} {}", kind, name)
    };
    sig.trim().to_string()
}

#[cfg(test)]
mod tests {
    use crate::lang::extract::tests::{scan, sigs};

    #[test]
    fn go_package_comment_exports_and_imports() {
        let s = scan(
            "x.go",
            "// Package store keeps rows.\npackage store\n\nimport (\n\t\"fmt\"\n\tx \"example.com/m/util\"\n)\n\n\
             // Open opens it.\nfunc Open(path string) (*DB, error) {\n}\nfunc (d *DB) Close() error {\n}\nfunc helper() {}\n\
             type DB struct {\n}\nconst (\n\tMax = 3\n\tmin = 1\n)\n",
        );
        assert_eq!(s.purpose.as_deref(), Some("Package store keeps rows."));
        assert_eq!(
            sigs(&s),
            vec![
                "Open(path string) (*DB, error)",
                "DB.Close() error",
                "type DB struct",
                "const Max"
            ]
        );
        assert_eq!(s.imports.len(), 2);
    }
}
