//! A file's outline: its definitions and their members (methods under their class or impl),
//! each with its kind, name, line range and signature line; definitions inside members (a
//! function local to a method) are not the file's shape and are left out. Built on the same spans as annotations and
//! task regions (`spans`), so an outline names the regions task context cuts a file into.

use super::lang_of;
use super::lexer::lex;
use super::spans::{spans, Span};
use serde::Serialize;

/// The longest signature kept, in characters; a longer one is cut and ends with `…`.
pub const MAX_SIGNATURE: usize = 200;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Entry {
    /// "function", "class", "struct", "enum", "trait", "impl", "interface", "module", …
    pub kind: &'static str,
    pub name: String,
    /// First and last line, 1-based, inclusive.
    pub start: u32,
    pub end: u32,
    /// The definition's first line, trimmed (cut at `MAX_SIGNATURE` characters).
    pub signature: String,
    /// The definitions directly inside this one, in line order (none inside a member).
    pub members: Vec<Entry>,
}

/// The outline as JSON (a list of `Entry`; the answer Python decodes).
pub fn outline_json(path: &str, text: &str) -> String {
    serde_json::to_string(&outline(path, text)).expect("plain data serializes")
}

/// The outline of `text`, the content of `path` (with `/`): empty for a language without
/// definitions (spans are found for the languages `lang::has_definitions` names).
pub fn outline(path: &str, text: &str) -> Vec<Entry> {
    let Some(lang) = lang_of(path) else {
        return Vec::new();
    };
    let raw: Vec<&str> = text.split('\n').collect();
    let n = if text.ends_with('\n') {
        raw.len() - 1
    } else {
        raw.len()
    };
    let lines = lex(text.as_bytes(), lang);
    let mut found: Vec<Span> = spans(&lines, lang)
        .into_iter()
        .filter(|s| s.start < n)
        .map(|mut s| {
            s.end = s.end.min(n - 1);
            s
        })
        .collect();
    found.sort_by_key(|s| (s.start, std::cmp::Reverse(s.end)));
    let mut at = 0;
    nest(&found, &mut at, usize::MAX, &raw, 0)
}

/// How deep definitions are listed: top-level ones and their members.
const DEPTH: usize = 2;

/// The entries from `spans[*at]` on that start by line `until`, each with the ones inside it
/// (consumed at every depth, kept down to `DEPTH`).
fn nest(spans: &[Span], at: &mut usize, until: usize, raw: &[&str], depth: usize) -> Vec<Entry> {
    let mut out = Vec::new();
    while let Some(s) = spans.get(*at) {
        if s.start > until {
            break;
        }
        *at += 1;
        let end = s.end.min(until);
        let mut members = nest(spans, at, end, raw, depth + 1);
        if depth + 1 >= DEPTH {
            members.clear();
        }
        if depth >= DEPTH {
            continue;
        }
        out.push(Entry {
            kind: s.kind,
            name: s.name.clone(),
            start: s.start as u32 + 1,
            end: end as u32 + 1,
            signature: signature(raw[s.start]),
            members,
        });
    }
    out
}

fn signature(line: &str) -> String {
    let line = line.trim();
    match line.char_indices().nth(MAX_SIGNATURE) {
        Some((cut, _)) => format!("{}…", line[..cut].trim_end()),
        None => line.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(entries: &[Entry]) -> Vec<String> {
        let mut out = Vec::new();
        fn walk(e: &[Entry], depth: usize, out: &mut Vec<String>) {
            for x in e {
                out.push(format!(
                    "{}{} {} {}-{}: {}",
                    "  ".repeat(depth),
                    x.kind,
                    x.name,
                    x.start,
                    x.end,
                    x.signature
                ));
                walk(&x.members, depth + 1, out);
            }
        }
        walk(entries, 0, &mut out);
        out
    }

    #[test]
    fn members_nest_under_their_definition_and_ranges_are_one_based() {
        let src = "struct A;\n\nimpl A {\n    fn one(&self) -> u8 {\n        1\n    }\n}\n";
        assert_eq!(
            shape(&outline("src/a.rs", src)),
            [
                "struct A 1-1: struct A;",
                "impl A 3-7: impl A {",
                "  function one 4-6: fn one(&self) -> u8 {",
            ]
        );
    }

    #[test]
    fn definitions_inside_members_are_left_out() {
        let src = "class A:\n    def m(self):\n        def local():\n            pass\n        return local\n\ndef f():\n    pass\n";
        assert_eq!(
            shape(&outline("a.py", src)),
            [
                "class A 1-5: class A:",
                "  function m 2-5: def m(self):",
                "function f 7-8: def f():",
            ]
        );
    }

    #[test]
    fn braces_inside_parameters_open_no_body() {
        let ts = "class Ky {\n  constructor(input: string, options: Options = {}) {\n    this.a = 1;\n  }\n\n  async #retry(error: unknown) {\n    return 1;\n  }\n}\n";
        assert_eq!(
            shape(&outline("a.ts", ts)),
            [
                "class Ky 1-9: class Ky {",
                "  function constructor 2-4: constructor(input: string, options: Options = {}) {",
                "  function retry 6-8: async #retry(error: unknown) {",
            ]
        );
        let go = "package a\n\nfunc Set(key string, value interface{}) {\n\tx := 1\n\t_ = x\n}\n";
        assert_eq!(
            shape(&outline("a.go", go)),
            ["function Set 3-6: func Set(key string, value interface{}) {"]
        );
        let tsx = "const onClick = useCallback((e: Event) => {\n  go(e);\n}, []);\n";
        assert_eq!(
            shape(&outline("a.tsx", tsx)),
            ["function onClick 1-3: const onClick = useCallback((e: Event) => {"],
            "a callback's body inside the call is the definition's"
        );
        let rust = "fn first(x: [u8; 4]) -> u8 {\n    x[0]\n}\n";
        assert_eq!(
            shape(&outline("a.rs", rust)),
            ["function first 1-3: fn first(x: [u8; 4]) -> u8 {"],
            "nor does a `;` inside them end a definition without a body"
        );
    }

    #[test]
    fn a_function_given_to_a_property_is_named_by_it() {
        let js = "app.use = function use(fn) {\n  return this;\n};\n\nres.json = (obj) => {\n  send(obj);\n};\n\nFoo.prototype.bar = async function () {\n  await x;\n};\n\napp.handlers = list.map(h => {\n  return h;\n});\n";
        assert_eq!(
            shape(&outline("lib/app.js", js)),
            [
                "function use 1-3: app.use = function use(fn) {",
                "function json 5-7: res.json = (obj) => {",
                "function bar 9-11: Foo.prototype.bar = async function () {",
            ],
            "a call taking a callback defines nothing"
        );
    }

    #[test]
    fn files_without_definitions_have_an_empty_outline() {
        assert!(outline("README.md", "# Title\n\ntext\n").is_empty());
        assert!(outline("a.py", "").is_empty());
    }

    #[test]
    fn a_long_signature_is_cut() {
        let src = format!("def f({}):\n    pass\n", "a, ".repeat(100));
        let e = outline("a.py", &src);
        assert_eq!(e[0].signature.chars().count(), MAX_SIGNATURE + 1);
        assert!(e[0].signature.ends_with('…'));
    }
}
