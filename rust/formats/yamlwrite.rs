//! `.context.yaml` text from the JSON that Python validated, and many such files
//! written at once.
//!
//! Keys keep their order in the JSON (the schema's order). Every string is
//! double-quoted, so no value reads back as another type, and the characters a
//! YAML reader refuses or folds (C1 controls, U+2028, BOM …) are escaped.
//! Many files are written as temporary files first, flushed with one `syncfs`,
//! then renamed into place in the order given: a crash leaves each file old or
//! new, never half-written, without paying an fsync per file.

use crate::tree::fs::Root;
use rayon::prelude::*;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

enum Value {
    Null,
    Bool(bool),
    Num(String),
    Str(String),
    Seq(Vec<Value>),
    Map(Vec<(String, Value)>),
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Num(v.to_string()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Num(v.to_string()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::Num(
            serde_json::Number::from_f64(v)
                .map(|n| float_text(&n.to_string()))
                .unwrap_or_else(|| ".nan".into()),
        ))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::Str(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::Str(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(v) = seq.next_element()? {
            items.push(v);
        }
        Ok(Value::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut entries = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, Value>()? {
            entries.push((k, v));
        }
        Ok(Value::Map(entries))
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
}

fn quote(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20
                || ('\u{7f}'..='\u{9f}').contains(&c)
                || matches!(
                    c,
                    '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
                ) =>
            {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn key(k: &str, out: &mut String) {
    let plain = k
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        out.push_str(k);
    } else {
        quote(k, out);
    }
}

fn scalar(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Num(n) => out.push_str(n),
        Value::Str(s) => quote(s, out),
        Value::Seq(_) => out.push_str("[]"),
        Value::Map(_) => out.push_str("{}"),
    }
}

fn is_block(v: &Value) -> bool {
    matches!(v, Value::Seq(s) if !s.is_empty()) || matches!(v, Value::Map(m) if !m.is_empty())
}

fn pad(n: usize, out: &mut String) {
    out.extend(std::iter::repeat_n(' ', n));
}

/// A block mapping at `indent`; with `inline_first`, the first key follows a `- ` already written.
fn emit_map(entries: &[(String, Value)], indent: usize, inline_first: bool, out: &mut String) {
    for (i, (k, v)) in entries.iter().enumerate() {
        if !(inline_first && i == 0) {
            pad(indent, out);
        }
        key(k, out);
        out.push(':');
        emit_after_key(v, indent, out);
    }
}

fn emit_after_key(v: &Value, indent: usize, out: &mut String) {
    match v {
        Value::Seq(items) if !items.is_empty() => {
            out.push('\n');
            emit_seq(items, indent + 2, out);
        }
        Value::Map(entries) if !entries.is_empty() => {
            out.push('\n');
            emit_map(entries, indent + 2, false, out);
        }
        _ => {
            out.push(' ');
            scalar(v, out);
            out.push('\n');
        }
    }
}

fn emit_seq(items: &[Value], indent: usize, out: &mut String) {
    for item in items {
        pad(indent, out);
        out.push('-');
        match item {
            Value::Map(entries) if !entries.is_empty() => {
                out.push(' ');
                emit_map(entries, indent + 2, true, out);
            }
            Value::Seq(inner) if !inner.is_empty() => {
                out.push('\n');
                emit_seq(inner, indent + 2, out);
            }
            _ => {
                out.push(' ');
                scalar(item, out);
                out.push('\n');
            }
        }
    }
}

/// YAML text for a JSON document (an object at the top, as every context file is).
pub fn to_yaml(json: &[u8]) -> io::Result<String> {
    let value: Value =
        serde_json::from_slice(json).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    let mut out = String::with_capacity(json.len() + json.len() / 4);
    match &value {
        Value::Map(entries) if !entries.is_empty() => emit_map(entries, 0, false, &mut out),
        v if is_block(v) => {
            if let Value::Seq(items) = v {
                emit_seq(items, 0, &mut out)
            }
        }
        v => {
            scalar(v, &mut out);
            out.push('\n');
        }
    }
    Ok(out)
}

/// A path under `root` as the layer takes it: relative to the root.
fn beneath<'a>(root: &Path, path: &'a Path) -> io::Result<&'a Path> {
    path.strip_prefix(root).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not under the root", path.display()),
        )
    })
}

/// Write each (path under `root`, JSON) as YAML (with `raw`, each (path, text) as it is) to
/// a new temporary file beside it, through the confined layer; returns the temporary paths
/// in order. On failure, the ones written are removed.
pub fn stage(
    layer: &Root,
    root: &Path,
    items: &[(PathBuf, Vec<u8>)],
    raw: bool,
) -> crate::tree::fs::Result<Vec<PathBuf>> {
    let results: Vec<crate::tree::fs::Result<PathBuf>> = items
        .par_iter()
        .map(|(path, data)| {
            let rel = beneath(root, path)?;
            let text = if raw {
                data.clone()
            } else {
                to_yaml(data)?.into_bytes()
            };
            let text = keep_line_endings(layer.read_head(rel, HEAD).ok().as_deref(), text);
            Ok(root.join(layer.write_temp(rel, &text)?))
        })
        .collect();
    if results.iter().any(|r| r.is_err()) {
        for tmp in results.iter().flatten() {
            let _ = beneath(root, tmp).map(|rel| layer.remove_file(rel));
        }
        return Err(results.into_iter().find_map(|r| r.err()).unwrap());
    }
    Ok(results.into_iter().flatten().collect())
}

/// How much of a file `keep_line_endings` reads to find its first line's end.
const HEAD: u64 = 4096;

/// A file keeps the line endings it has, so a checkout with CRLF (git's autocrlf on Windows)
/// never churns: when the file there (its first `HEAD` bytes) ends its first line with CRLF,
/// every line of `text` ends so too; a new file, or one ending its lines with LF, gets LF.
fn keep_line_endings(old_head: Option<&[u8]>, text: Vec<u8>) -> Vec<u8> {
    let crlf = old_head.and_then(|h| {
        h.iter()
            .position(|&b| b == b'\n')
            .map(|i| i > 0 && h[i - 1] == b'\r')
    });
    if crlf != Some(true) {
        return text;
    }
    let mut out = Vec::with_capacity(text.len() + text.len() / 16);
    for (i, line) in text.split(|&b| b == b'\n').enumerate() {
        if i > 0 {
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(line.strip_suffix(b"\r").unwrap_or(line));
    }
    out
}

/// Flush the staged (temporary, final) pairs to disk, rename each into place in order
/// (beneath the root), and flush the renames.
pub fn commit(
    layer: &Root,
    root: &Path,
    pairs: &[(PathBuf, PathBuf)],
) -> crate::tree::fs::Result<()> {
    layer.sync()?;
    for (tmp, path) in pairs {
        layer.rename(beneath(root, tmp)?, beneath(root, path)?, false)?;
    }
    layer.sync()
}

/// A float as YAML 1.1 and 1.2 readers both take it: JSON's `5e-324` or `1e300` is a string to
/// a YAML 1.1 reader (PyYAML), which wants a dot in the mantissa and a sign in the exponent.
fn float_text(json: &str) -> String {
    match json.split_once(['e', 'E']) {
        None => json.to_string(),
        Some((mantissa, exp)) => {
            let dot = if mantissa.contains('.') { "" } else { ".0" };
            let sign = if exp.starts_with(['-', '+']) { "" } else { "+" };
            format!("{mantissa}{dot}e{sign}{exp}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TempTree;
    use std::fs;

    #[test]
    fn keeps_order_quotes_strings_and_nests_blocks() {
        let json = br#"{"version":1,"scope":".","summary":"a \"b\"\nc","files":[{"name":"x.py","purpose":"p"}],"empty":[],"dependencies":{"internal":["src"]},"f":1.5,"t":true}"#;
        let text = to_yaml(json).unwrap();
        assert_eq!(
            text,
            "version: 1\nscope: \".\"\nsummary: \"a \\\"b\\\"\\nc\"\nfiles:\n  - name: \"x.py\"\n    purpose: \"p\"\nempty: []\n\
             dependencies:\n  internal:\n    - \"src\"\nf: 1.5\nt: true\n"
        );
    }

    #[test]
    fn a_file_keeps_the_line_endings_of_its_first_line() {
        let text = || b"a: 1\nb: \"x\"\r\n".to_vec();
        assert_eq!(
            keep_line_endings(None, text()),
            text(),
            "a new file: as written"
        );
        assert_eq!(
            keep_line_endings(Some(b"# c\na: 0\r\n"), text()),
            text(),
            "LF first: as written"
        );
        assert_eq!(keep_line_endings(Some(b"no line end"), text()), text());
        assert_eq!(
            keep_line_endings(Some(b"# c\r\na: 0\n"), text()),
            b"a: 1\r\nb: \"x\"\r\n"
        );
    }

    #[test]
    fn floats_read_back_as_floats_in_yaml_1_1_and_1_2() {
        let text = to_yaml(br#"{"a":5e-324,"b":1e300,"c":2.5e-10,"d":1.5}"#).unwrap();
        assert_eq!(text, "a: 5.0e-324\nb: 1.0e+300\nc: 2.5e-10\nd: 1.5\n");
    }

    #[test]
    fn escapes_what_yaml_readers_refuse_or_fold() {
        let json = "{\"s\":\"a\u{85}b\u{2028}c\u{7f}\u{feff}\"}";
        assert_eq!(
            to_yaml(json.as_bytes()).unwrap(),
            "s: \"a\\u0085b\\u2028c\\u007f\\ufeff\"\n"
        );
        let back: serde_json::Value = serde_json::from_str(
            &crate::formats::yamlread::to_json(to_yaml(json.as_bytes()).unwrap().as_bytes())
                .unwrap(),
        )
        .unwrap();
        assert_eq!(back["s"], "a\u{85}b\u{2028}c\u{7f}\u{feff}");
    }

    #[test]
    #[cfg_attr(
        windows,
        ignore = "wine 8 makes no link: CreateSymbolicLinkW is a stub that returns success, and a link made from the Linux side reads as its target"
    )]
    fn stage_and_commit_replace_files() {
        let dir = TempTree::with("yamlwrite", &[("root/a.yaml", "old"), ("outside", "keep")]);
        let root = dir.join("root");
        let layer = Root::open(&root).unwrap();
        let path = root.join("a.yaml");
        // A link planted where a predictable temporary name would go is never written through.
        crate::tree::os::symlink(
            dir.join("outside"),
            root.join(format!("a.yaml.repoctx-{}.tmp", std::process::id())),
        )
        .unwrap();
        let tmps = stage(
            &layer,
            &root,
            &[(path.clone(), br#"{"k":"v"}"#.to_vec())],
            false,
        )
        .unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "old");
        commit(&layer, &root, &[(tmps[0].clone(), path.clone())]).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "k: \"v\"\n");
        assert!(stage(
            &layer,
            &root,
            &[(path.clone(), b"not json".to_vec())],
            false
        )
        .is_err());
        assert_eq!(fs::read_dir(&root).unwrap().count(), 2); // a.yaml and the planted link
        assert_eq!(fs::read_to_string(dir.join("outside")).unwrap(), "keep");
    }
}
