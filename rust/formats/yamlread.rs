//! The one YAML reader: every YAML file repoctx reads is parsed here and handed back
//! as JSON text, which Python validates with msgspec at C speed (many small files at
//! once in parallel, or one at a time through `to_json`).
//!
//! Parsing is bounded so that no input can crash or exhaust the process: nesting deeper
//! than MAX_DEPTH, and aliases that would copy more than MAX_ALIAS_BYTES of the document,
//! are refused with the line and the reason. saphyr-parser streams events in linear time
//! (libyaml, behind serde_yaml and PyYAML, is quadratic in flow nesting: 43 s for 200 KB
//! of `[`), so a refusal stops the parse early. Scalars resolve by the YAML 1.2 core
//! schema (`yes`, `off` and dates stay text), keys keep their order, and a key given twice in
//! one mapping is refused at its second place (YAML forbids it; a silent last-wins would hide
//! an edit).

use rayon::prelude::*;
use saphyr_parser::{Event, Parser, ScalarStyle, ScanError, Tag};
use std::collections::{HashMap, HashSet};

/// Deeper than any file we read needs; serde_json and serde_yaml stop at the same depth.
pub const MAX_DEPTH: usize = 128;
/// What aliases may copy in all: far above any real reuse, far below what hurts.
pub const MAX_ALIAS_BYTES: usize = 1 << 20;

/// Why a document is refused, the line and column (from 1; the column in characters) where
/// it was seen, and whether it breaks the YAML syntax (rather than a bound or a form this
/// reader does not take).
#[derive(Debug)]
pub struct Refusal {
    pub line: usize,
    pub column: usize,
    pub reason: String,
    pub syntax: bool,
}

pub enum Parsed {
    Json(String),
    Missing,
    TooLarge,
    Invalid(String), // not read: a link out, a directory, a FIFO, an I/O error
    Refused(Refusal),
}

fn read_one(root: &crate::tree::fs::Root, rel: &str, max_bytes: u64) -> Parsed {
    use crate::tree::fs::Error;
    let buf = match root.read(std::path::Path::new(rel), max_bytes) {
        Ok(buf) => buf,
        Err(Error::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => return Parsed::Missing,
        Err(Error::Io(e)) => return Parsed::Invalid(e.kind().to_string()),
        Err(Error::TooLarge(..)) => return Parsed::TooLarge,
        Err(Error::NotRegular(_, true)) => {
            return Parsed::Invalid(std::io::ErrorKind::IsADirectory.to_string())
        }
        Err(e) => return Parsed::Invalid(e.to_string()), // a link out (named), a FIFO or a device
    };
    match to_json(&buf) {
        Ok(json) => Parsed::Json(json),
        Err(r) => Parsed::Refused(r),
    }
}

/// Read and parse files beneath `root` (through the confined layer), in parallel.
pub fn read_many(
    root: &std::path::Path,
    rels: &[String],
    max_bytes: u64,
) -> std::io::Result<Vec<Parsed>> {
    let root = crate::tree::fs::Root::open(root)?;
    Ok(rels
        .par_iter()
        .map(|p| read_one(&root, p, max_bytes))
        .collect())
}

/// One YAML document as JSON text (`null` when the file holds none), or why it is refused.
pub fn to_json(bytes: &[u8]) -> Result<String, Refusal> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let valid = &bytes[..e.valid_up_to()];
        let line_start = valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let column = 1 + std::str::from_utf8(&valid[line_start..]).map_or(0, |s| s.chars().count());
        Refusal {
            line: 1 + valid.iter().filter(|&&b| b == b'\n').count(),
            column,
            reason: "not UTF-8 text".into(),
            syntax: true,
        }
    })?;
    let mut json = Json::default();
    let mut documents = 0;
    for next in Parser::new_from_str(text) {
        let (event, span) = next.map_err(scan_refusal)?;
        let refuse = |reason| Refusal {
            line: span.start.line(),
            column: span.start.col() + 1,
            reason,
            syntax: false,
        };
        match event {
            Event::DocumentStart(_) => {
                documents += 1;
                if documents > 1 {
                    return Err(refuse("more than one document in the file".into()));
                }
            }
            Event::StreamEnd => break,
            event => json.event(event).map_err(refuse)?,
        }
    }
    if json.out.is_empty() {
        json.out.extend_from_slice(b"null");
    }
    Ok(String::from_utf8(json.out).expect("JSON written from UTF-8 text"))
}

fn scan_refusal(e: ScanError) -> Refusal {
    // The scanner stops flow nesting at 255 levels, reading ahead of our own count.
    let (reason, syntax) = match e.info() {
        "recursion limit exceeded" => (format!("nested deeper than {MAX_DEPTH} levels"), false),
        info => (info.to_string(), true),
    };
    Refusal {
        line: e.marker().line(),
        column: e.marker().col() + 1,
        reason,
        syntax,
    }
}

/// An open sequence or mapping.
struct Frame {
    map: bool,
    at_key: bool, // a mapping whose next scalar is a key
    empty: bool,
    anchor: usize,
    start: usize,          // where its JSON begins in `out`
    height: usize,         // nesting below it so far
    keys: HashSet<String>, // a mapping's keys so far (allocated from its first key)
}

/// The JSON text being written, event by event.
#[derive(Default)]
struct Json {
    out: Vec<u8>,
    stack: Vec<Frame>,
    anchors: HashMap<usize, (std::ops::Range<usize>, usize)>, // id -> (its JSON in `out`, height)
    copied: usize,
}

impl Json {
    fn event(&mut self, event: Event) -> Result<(), String> {
        let at_key = matches!(self.stack.last(), Some(f) if f.map && f.at_key);
        let map = matches!(event, Event::MappingStart(..));
        match event {
            Event::Scalar(value, _, anchor, _) if at_key => {
                let f = self.stack.last_mut().expect("at a key");
                if f.keys.contains(value.as_ref()) {
                    return Err(format!(
                        "duplicate key {}",
                        serde_json::to_string(value.as_ref()).expect("a string")
                    ));
                }
                f.keys.insert(value.to_string());
                if !f.empty {
                    self.out.push(b',');
                }
                (f.empty, f.at_key) = (false, false);
                let start = self.out.len();
                write_str(&mut self.out, &value);
                if anchor != 0 {
                    self.anchors.insert(anchor, (start..self.out.len(), 0));
                }
                self.out.push(b':');
            }
            Event::Scalar(value, style, anchor, tag) => {
                let start = self.value_start();
                scalar(&mut self.out, &value, style, tag.as_deref())?;
                self.value_end(anchor, start, 0);
            }
            Event::SequenceStart(anchor, tag) | Event::MappingStart(anchor, tag) => {
                if at_key {
                    return Err("a mapping key must be a scalar, not a sequence or mapping".into());
                }
                if let Some(t) = tag.as_deref() {
                    let core =
                        t.is_yaml_core_schema() && t.suffix == if map { "map" } else { "seq" };
                    if !(core || (t.handle == "!" && t.suffix.is_empty())) {
                        return Err(format!("unsupported tag {}", name(t)));
                    }
                }
                if self.stack.len() >= MAX_DEPTH {
                    return Err(format!("nested deeper than {MAX_DEPTH} levels"));
                }
                let start = self.value_start();
                self.out.push(if map { b'{' } else { b'[' });
                self.stack.push(Frame {
                    map,
                    at_key: map,
                    empty: true,
                    anchor,
                    start,
                    height: 0,
                    keys: HashSet::new(),
                });
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let f = self.stack.pop().expect("the parser balances collections");
                self.out.push(if f.map { b'}' } else { b']' });
                self.value_end(f.anchor, f.start, f.height + 1);
            }
            Event::Alias(id) => {
                if at_key {
                    return Err("an alias cannot be a mapping key".into());
                }
                // An anchor is known once its node is complete: one missing is an ancestor.
                let Some((range, height)) = self.anchors.get(&id).cloned() else {
                    return Err("an alias refers to a node that contains it".into());
                };
                if self.stack.len() + height > MAX_DEPTH {
                    return Err(format!("nested deeper than {MAX_DEPTH} levels"));
                }
                self.copied += range.len();
                if self.copied > MAX_ALIAS_BYTES {
                    return Err(format!(
                        "aliases expand to more than {MAX_ALIAS_BYTES} bytes"
                    ));
                }
                let start = self.value_start();
                self.out.extend_from_within(range);
                self.value_end(0, start, height);
            }
            _ => {} // stream start, document end
        }
        Ok(())
    }

    /// Where a value's JSON begins, after the comma that separates it from the one before.
    fn value_start(&mut self) -> usize {
        if let Some(f) = self.stack.last_mut() {
            if !f.map && !f.empty {
                self.out.push(b',');
            }
            f.empty = false;
        }
        self.out.len()
    }

    fn value_end(&mut self, anchor: usize, start: usize, height: usize) {
        if anchor != 0 {
            self.anchors.insert(anchor, (start..self.out.len(), height));
        }
        if let Some(f) = self.stack.last_mut() {
            f.height = f.height.max(height);
            f.at_key = f.map;
        }
    }
}

fn write_str(out: &mut Vec<u8>, s: &str) {
    serde_json::to_writer(out, s).expect("writing to memory");
}

/// A scalar as JSON: quoted ones are text; plain ones by the YAML 1.2 core schema;
/// the core tags (`!!str 12`, `!!int "5"`) as they say; any other tag is refused.
fn scalar(
    out: &mut Vec<u8>,
    value: &str,
    style: ScalarStyle,
    tag: Option<&Tag>,
) -> Result<(), String> {
    let resolved = match tag {
        None if style == ScalarStyle::Plain => plain(value),
        None => Plain::Str,
        Some(t) if t.handle == "!" && t.suffix.is_empty() => Plain::Str, // the non-specific `!`
        Some(t) if t.is_yaml_core_schema() && t.suffix == "str" => Plain::Str,
        Some(t) if t.is_yaml_core_schema() => match (t.suffix.as_str(), plain(value)) {
            ("null", p @ Plain::Null)
            | ("bool", p @ Plain::Bool(_))
            | ("int", p @ Plain::Int(_)) => p,
            ("float", p @ (Plain::Float(_) | Plain::Int(_))) => p,
            ("null" | "bool" | "int" | "float", _) => {
                return Err(format!("{value:?} is not a valid {}", name(t)))
            }
            _ => return Err(format!("unsupported tag {}", name(t))),
        },
        Some(t) => return Err(format!("unsupported tag {}", name(t))),
    };
    match resolved {
        Plain::Null => out.extend_from_slice(b"null"),
        Plain::Bool(b) => out.extend_from_slice(if b { b"true" } else { b"false" }),
        Plain::Int(digits) => out.extend_from_slice(digits.as_bytes()),
        // JSON has no infinity or NaN: `.inf` and `.nan` read as null.
        Plain::Float(f) => match serde_json::Number::from_f64(f) {
            Some(n) => out.extend_from_slice(n.to_string().as_bytes()),
            None => out.extend_from_slice(b"null"),
        },
        Plain::Str => write_str(out, value),
    }
    Ok(())
}

/// A tag as written: `!!int`, `!local`.
fn name(t: &Tag) -> String {
    if t.is_yaml_core_schema() {
        format!("!!{}", t.suffix)
    } else {
        t.to_string()
    }
}

enum Plain {
    Null,
    Bool(bool),
    Int(String), // as JSON writes it
    Float(f64),
    Str,
}

fn plain(s: &str) -> Plain {
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return Plain::Null,
        "true" | "True" | "TRUE" => return Plain::Bool(true),
        "false" | "False" | "FALSE" => return Plain::Bool(false),
        ".nan" | ".NaN" | ".NAN" => return Plain::Float(f64::NAN),
        _ => {}
    }
    let (negative, unsigned) = match s.as_bytes()[0] {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    if matches!(unsigned, ".inf" | ".Inf" | ".INF") {
        return Plain::Float(if negative {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        });
    }
    let digits = |t: &str, radix| !t.is_empty() && t.chars().all(|c| c.is_digit(radix));
    if digits(unsigned, 10) {
        // Leading zeros stay text (`007`), as serde_yaml read them: never an octal surprise.
        if unsigned.len() > 1 && unsigned.starts_with('0') {
            return Plain::Str;
        }
        return Plain::Int(if negative {
            format!("-{unsigned}")
        } else {
            unsigned.to_string()
        });
    }
    for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
        if let Some(rest) = s.strip_prefix(prefix).filter(|r| digits(r, radix)) {
            return u64::from_str_radix(rest, radix)
                .map_or(Plain::Str, |n| Plain::Int(n.to_string()));
        }
    }
    if is_float(unsigned) {
        if let Ok(f) = s.parse::<f64>() {
            if f.is_finite() {
                return Plain::Float(f);
            }
        }
    }
    Plain::Str
}

/// `(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`, the core schema's float without its sign.
fn is_float(s: &str) -> bool {
    let (mantissa, exponent) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all_digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok =
        all_digits(whole) && all_digits(fraction) && !(whole.is_empty() && fraction.is_empty());
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['-', '+']).unwrap_or(e);
        !e.is_empty() && all_digits(e)
    });
    mantissa_ok && exponent_ok
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TempTree;

    #[test]
    #[cfg_attr(
        windows,
        ignore = "wine 8 makes no link: CreateSymbolicLinkW is a stub that returns success, and a link made from the Linux side reads as its target"
    )]
    fn yaml_becomes_json_and_errors_are_reported() {
        let dir = TempTree::with(
            "yaml",
            &[
                (
                    "good.yaml",
                    "version: 1\nlast_updated: 2026-02-13T10:00:00Z\nlist: [a, b]\n",
                ),
                ("bad.yaml", "key: [unclosed\n"),
            ],
        );
        crate::tree::os::symlink("/etc/passwd", dir.join("out.yaml")).unwrap();
        let paths: Vec<String> = ["good.yaml", "bad.yaml", "none.yaml", "out.yaml"]
            .map(String::from)
            .into();
        let out = read_many(&dir, &paths, 1 << 20).unwrap();
        match &out[0] {
            Parsed::Json(s) => assert_eq!(
                s,
                r#"{"version":1,"last_updated":"2026-02-13T10:00:00Z","list":["a","b"]}"#
            ),
            _ => panic!("expected json"),
        }
        assert!(matches!(&out[1], Parsed::Refused(r) if (r.line, r.column) == (2, 1)));
        assert!(matches!(out[2], Parsed::Missing));
        assert!(
            matches!(&out[3], Parsed::Invalid(e) if e.contains("'out.yaml' is a link that leads outside"))
        );
        assert!(matches!(
            read_many(&dir, &paths[..1], 4).unwrap()[0],
            Parsed::TooLarge
        ));
    }

    fn json(text: &str) -> String {
        to_json(text.as_bytes()).unwrap()
    }

    fn refused(text: &str) -> (usize, String) {
        let r = to_json(text.as_bytes()).unwrap_err();
        (r.line, r.reason)
    }

    #[test]
    fn scalars_follow_the_core_schema_and_keys_keep_their_order() {
        assert_eq!(json(""), "null");
        assert_eq!(json("# only a comment\n"), "null");
        assert_eq!(
            json("z: yes\na: off\nd: 2026-02-13\nn: ~\nb: True\ni: -12\no: 0o17\nx: 0x1F\nf: 1e3\nv: .5\nz0: 007\nq: '1'\ninf: .inf\nbig: 123456789012345678901234\n"),
            r#"{"z":"yes","a":"off","d":"2026-02-13","n":null,"b":true,"i":-12,"o":15,"x":31,"f":1000.0,"v":0.5,"z0":"007","q":"1","inf":null,"big":123456789012345678901234}"#
        );
        assert_eq!(json("1: a\n~: b\n"), r#"{"1":"a","~":"b"}"#);
        assert_eq!(
            json("a: !!str 12\nb: !!int \"5\"\nc: |\n  x\n  y\n"),
            r#"{"a":"12","b":5,"c":"x\ny\n"}"#
        );
        assert_eq!(
            json("---\n[a, {b: [], c: {}}]\n...\n"),
            r#"["a",{"b":[],"c":{}}]"#
        );
        assert_eq!(
            json("\u{feff}s: \"\\u00e9\\t\"\n"),
            r#"{"s":"\u00e9\t"}"#.replace("\\u00e9", "\u{e9}")
        );
    }

    #[test]
    fn aliases_are_copied_within_the_budget() {
        assert_eq!(
            json("a: &x [1, {k: v}]\nb: *x\nc: &s text\nd: *s\n"),
            r#"{"a":[1,{"k":"v"}],"b":[1,{"k":"v"}],"c":"text","d":"text"}"#
        );
        let laughs: String = (0..9)
            .map(|i| {
                format!(
                    "l{}: &l{} [{}]\n",
                    i + 1,
                    i + 1,
                    vec![format!("*l{i}"); 9].join(",")
                )
            })
            .collect();
        let (line, reason) = refused(&format!("l0: &l0 lol\n{laughs}"));
        assert_eq!(reason, "aliases expand to more than 1048576 bytes");
        assert!(line > 1);
        assert_eq!(
            refused("a: &a [*a]\n").1,
            "an alias refers to a node that contains it"
        );
    }

    #[test]
    fn depth_is_bounded_in_every_style_and_through_aliases() {
        let n = MAX_DEPTH;
        assert!(to_json(format!("{}{}", "[".repeat(n), "]".repeat(n)).as_bytes()).is_ok());
        for deep in [
            format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)),
            format!("a: {}1{}", "{a: ".repeat(100_000), "}".repeat(100_000)),
            format!("{}x\n", "- ".repeat(100_000)),
        ] {
            let start = std::time::Instant::now();
            assert_eq!(
                refused(&deep),
                (1, format!("nested deeper than {n} levels"))
            );
            assert!(start.elapsed().as_secs() < 1);
        }
        let half = format!("{}{}", "[".repeat(n / 2 + 1), "]".repeat(n / 2 + 1));
        let (_, reason) = refused(&format!(
            "a: &x {half}\nb: {}*x{}",
            "[".repeat(n / 2),
            "]".repeat(n / 2)
        ));
        assert_eq!(reason, format!("nested deeper than {n} levels"));
    }

    #[test]
    fn refusals_name_the_column() {
        let at = |text: &str| {
            let r = to_json(text.as_bytes()).unwrap_err();
            (r.line, r.column)
        };
        assert_eq!(at("a: 1\nb: !foo x\n"), (2, 4));
        assert_eq!(at("a: 1\n---\nb: 2\n"), (2, 1));
        assert_eq!(at("é: 1\nb: [unclosed\n").0, 3);
        let r = to_json(b"a: 1\nbc: \xc3\xa9\xff\n").unwrap_err();
        assert_eq!((r.line, r.column), (2, 6)); // `bc: é` is five characters; the bad byte is the sixth
    }

    #[test]
    fn refusals_name_the_line() {
        assert_eq!(refused("a: 1\nb: [unclosed\n").0, 3);
        assert_eq!(
            refused("a: 1\n---\nb: 2\n"),
            (2, "more than one document in the file".into())
        );
        assert_eq!(
            refused("a: 1\nb: !foo x\n"),
            (2, "unsupported tag !foo".into())
        );
        assert_eq!(
            refused("x: 1\n? [a]\n: c\n").1,
            "a mapping key must be a scalar, not a sequence or mapping"
        );
        assert_eq!(refused("a: !!int x\n").1, r#""x" is not a valid !!int"#);
        assert_eq!(
            refused("a: 1\nb:\n  c: 2\n  c: 3\n"),
            (4, r#"duplicate key "c""#.into())
        );
        assert_eq!(
            refused("{a: 1, a: 2}\n"),
            (1, r#"duplicate key "a""#.into())
        );
        assert_eq!(
            json("a: {k: 1}\nb: {k: 2}\n"),
            r#"{"a":{"k":1},"b":{"k":2}}"#
        ); // the same key in two mappings
        assert_eq!(to_json(b"a: 1\nb: \xff\n").unwrap_err().line, 2);
    }
}
