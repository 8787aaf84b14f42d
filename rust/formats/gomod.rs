//! The one go.mod and go.work parser (issue 21): `project scan` and the scopes' generator read
//! a go.mod's module, `go` version and requirements and a go.work's `use` directories here
//! (through python/repoctx/base/manifests.py), and the scopes' index resolves Go imports by the
//! same module path (scopes/sources.rs).
//!
//! The syntax is Go's (golang.org/x/mod/modfile): a directive per line, or `verb (` opening a
//! block whose lines are that verb's arguments until `)`; `//` to the end of the line is a
//! comment; an argument is a run of characters other than white space and parentheses, a
//! double-quoted string (its escapes those of Go that JSON shares; any other escape, a raw
//! control character or a lone surrogate leaves the string as written) or a back-quoted one.
//! Lenient where Go refuses the file: what does not parse is skipped line by line. A leading
//! byte-order mark is dropped. A directive given twice: the last one holds.
//!
//! White space is Python's `str.isspace` (Unicode's White_Space and the separators
//! U+001C–U+001F), so this reads exactly as the Python parser it replaced (the property tests
//! of tests/base/test_manifests.py hold it to a plain oracle).

/// One directive: `verb` and its arguments (a block's verb for each line of the block), and
/// the text after `//` on its line.
#[derive(Debug, Clone, PartialEq)]
pub struct Directive {
    pub verb: String,
    pub args: Vec<String>,
    pub comment: Option<String>,
}

/// A `require` of a go.mod.
#[derive(Debug, Clone, PartialEq)]
pub struct Require {
    pub path: String,
    pub version: String,
    /// `// indirect` (or `// indirect; why`) on its line, as Go reads it.
    pub indirect: bool,
}

/// What a go.mod or go.work declares.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GoFile {
    /// The last `module` directive's path; "" without one (a go.mod without it is not one).
    pub module: String,
    /// The last `go` directive's version.
    pub go: Option<String>,
    /// Every `require` with a path and a version, in order.
    pub requires: Vec<Require>,
    /// The directories of every `use` (go.work), as written, in order.
    pub uses: Vec<String>,
}

/// Python's `str.isspace`.
fn is_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// The directives of a go.mod or go.work, in order.
pub fn directives(text: &str) -> Vec<Directive> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut out = Vec::new();
    let mut block: Option<String> = None;
    for line in text.split('\n') {
        let (mut tokens, comment) = tokens(line);
        if tokens.is_empty() {
            continue;
        }
        let comment = comment.map(str::to_string);
        match &block {
            Some(_) if tokens[0] == ")" => block = None,
            Some(verb) => out.push(Directive {
                verb: verb.clone(),
                args: tokens,
                comment,
            }),
            None if tokens.get(1).is_some_and(|t| t == "(") => {
                // `require ()` is an empty block
                if tokens.get(2).is_none_or(|t| t != ")") {
                    block = Some(tokens.swap_remove(0));
                }
            }
            None => {
                let verb = tokens.remove(0);
                out.push(Directive {
                    verb,
                    args: tokens,
                    comment,
                });
            }
        }
    }
    out
}

/// The tokens of one line and its comment (the text after `//`), if any.
fn tokens(line: &str) -> (Vec<String>, Option<&str>) {
    let bytes = line.as_bytes();
    let n = line.len();
    let mut out = Vec::new();
    let mut i = 0;
    while i < n {
        let c = line[i..].chars().next().unwrap_or_default();
        if is_space(c) {
            i += c.len_utf8();
        } else if line[i..].starts_with("//") {
            return (out, Some(&line[i + 2..]));
        } else if c == '(' || c == ')' {
            out.push(c.to_string());
            i += 1;
        } else if c == '"' {
            // To the closing quote, a backslash taking the character after it (the bytes of a
            // character are never a quote or a backslash, so stepping them one by one is the same).
            let mut j = i + 1;
            while j < n && bytes[j] != b'"' {
                j += if bytes[j] == b'\\' { 2 } else { 1 };
            }
            out.push(unquote(&line[i + 1..j.min(n)]));
            i = j + 1;
        } else if c == '`' {
            let j = line[i + 1..].find('`').map_or(n, |k| i + 1 + k);
            out.push(line[i + 1..j].to_string());
            i = j + 1;
        } else {
            let mut j = i;
            while j < n {
                let d = line[j..].chars().next().unwrap_or_default();
                if is_space(d) || d == '(' || d == ')' || line[j..].starts_with("//") {
                    break;
                }
                j += d.len_utf8();
            }
            out.push(line[i..j].to_string());
            i = j;
        }
    }
    (out, None)
}

/// A double-quoted string's value: its escapes read as Go's (those JSON shares), else as written.
fn unquote(inner: &str) -> String {
    if !inner.contains('\\') {
        return inner.to_string();
    }
    json_string(inner).unwrap_or_else(|| inner.to_string())
}

/// The body of a JSON string read as a strict JSON parser reads it; None where one refuses it
/// (an unknown escape, a raw control character, a bad `\u`) or where it would be a lone surrogate.
fn json_string(s: &str) -> Option<String> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push(match chars.next()? {
                '"' => '"',
                '\\' => '\\',
                '/' => '/',
                'b' => '\u{8}',
                'f' => '\u{c}',
                'n' => '\n',
                'r' => '\r',
                't' => '\t',
                'u' => {
                    let hi = hex4(&mut chars)?;
                    if (0xD800..0xDC00).contains(&hi) {
                        if chars.next()? != '\\' || chars.next()? != 'u' {
                            return None;
                        }
                        let lo = hex4(&mut chars)?;
                        if !(0xDC00..0xE000).contains(&lo) {
                            return None;
                        }
                        char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))?
                    } else {
                        char::from_u32(hi)? // a low surrogate alone is no character: None
                    }
                }
                _ => return None,
            }),
            c if (c as u32) < 0x20 => return None,
            c => out.push(c),
        }
    }
    Some(out)
}

fn hex4(chars: &mut std::str::Chars) -> Option<u32> {
    let mut v = 0;
    for _ in 0..4 {
        v = v * 16 + chars.next()?.to_digit(16)?;
    }
    Some(v)
}

/// Go's reading of a requirement's comment: `// indirect`, or `// indirect; why`.
fn is_indirect(comment: Option<&str>) -> bool {
    let mut words = comment
        .unwrap_or("")
        .split(is_space)
        .filter(|w| !w.is_empty());
    matches!(
        (words.next(), words.next()),
        (Some("indirect"), None) | (Some("indirect;"), Some(_))
    )
}

/// What a go.mod or go.work declares (a file's text; the caller reads it within its cap).
pub fn parse(text: &str) -> GoFile {
    let mut out = GoFile::default();
    for d in directives(text) {
        match (d.verb.as_str(), d.args.as_slice()) {
            ("module", [path, ..]) => out.module = path.clone(),
            ("go", [version, ..]) => out.go = Some(version.clone()),
            ("require", [path, version, ..]) => out.requires.push(Require {
                path: path.clone(),
                version: version.clone(),
                indirect: is_indirect(d.comment.as_deref()),
            }),
            ("use", [dir, ..]) => out.uses.push(dir.clone()),
            _ => {}
        }
    }
    out
}

/// The module path of a go.mod; None without one.
pub fn module_path(text: &str) -> Option<String> {
    Some(parse(text).module).filter(|m| !m.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (module, go, [(path, version, indirect)]), None without a module path: as the Python
    /// tests read a go.mod.
    type Read = Option<(String, Option<String>, Vec<(String, String, bool)>)>;

    fn parsed(text: &str) -> Read {
        let g = parse(text);
        let reqs = g
            .requires
            .into_iter()
            .map(|r| (r.path, r.version, r.indirect))
            .collect();
        (!g.module.is_empty()).then_some((g.module, g.go, reqs))
    }

    fn module(m: &str) -> Read {
        Some((m.to_string(), None, vec![]))
    }

    fn req(p: &str, v: &str, i: bool) -> (String, String, bool) {
        (p.to_string(), v.to_string(), i)
    }

    #[test]
    fn module_forms() {
        assert_eq!(parsed("module ex.com/m\n"), module("ex.com/m"));
        assert_eq!(parsed("module\tex.com/m // comment\n"), module("ex.com/m"));
        assert_eq!(parsed("module ex.com/m// glued\n"), module("ex.com/m"));
        assert_eq!(parsed("  module   ex.com/m  \r\n"), module("ex.com/m"));
        assert_eq!(
            parsed("module\u{a0}ex.com/m\n"),
            module("ex.com/m"),
            "a no-break space is white space"
        );
        assert_eq!(
            parsed("module\u{1f}ex.com/m\n"),
            module("ex.com/m"),
            "as Python's isspace"
        );
        assert_eq!(
            parsed("module (\n\tex.com/block\n)\n"),
            module("ex.com/block")
        );
        assert_eq!(
            parsed("module(\n\tex.com/block // the module\n)\n"),
            module("ex.com/block")
        );
        assert_eq!(
            parsed("module ex.com/first\nmodule ex.com/last\n"),
            module("ex.com/last"),
            "the last one holds"
        );
        assert_eq!(parsed("\u{feff}module ex.com/bom\n"), module("ex.com/bom"));
        assert_eq!(
            parsed("module ex.com/no-newline"),
            module("ex.com/no-newline")
        );
        assert_eq!(parsed("// module ex.com/commented\n"), None);
        assert_eq!(parsed("modulex ex.com/m\n"), None);
        assert_eq!(parsed("module\n"), None);
        assert_eq!(parsed("module ()\n"), None, "an empty block");
        assert_eq!(
            parsed("module a\nmodule \"\"\n"),
            None,
            "the last one holds, even empty"
        );
    }

    #[test]
    fn quoted_and_backquoted_paths() {
        assert_eq!(
            parsed("module \"ex.com/a//b\" // the module\n"),
            module("ex.com/a//b")
        );
        assert_eq!(parsed("module \"ex.com/\\u0061\"\n"), module("ex.com/a"));
        assert_eq!(
            parsed("module \"ex.com/\\\"q\\\"\"\n"),
            module("ex.com/\"q\"")
        );
        assert_eq!(parsed("module \"a\\/b\\\\c\\td\"\n"), module("a/b\\c\td"));
        assert_eq!(
            parsed("module \"\\ud83d\\ude00\"\n"),
            module("\u{1f600}"),
            "a surrogate pair"
        );
        assert_eq!(parsed("module `ex.com/raw`\n"), module("ex.com/raw"));
        assert_eq!(
            parsed("module `ex.com/raw\\n // x`\n"),
            module("ex.com/raw\\n // x")
        );
        assert_eq!(
            parsed("module `ex.com/open\n"),
            module("ex.com/open"),
            "to the end of the line"
        );
        assert_eq!(parsed("module \"ex.com/open\n"), module("ex.com/open"));
        assert_eq!(parsed("module \"ex.com (x)\"\n"), module("ex.com (x)"));
        assert_eq!(parsed("module \"é\"\n"), module("é"));
        assert_eq!(
            parsed("module \"\\é\"\n"),
            module("\\é"),
            "not a JSON escape: as written"
        );
        // Escapes JSON does not share, and what a strict JSON reader refuses, stay as written.
        assert_eq!(parsed("module \"a\\x41\"\n"), module("a\\x41"));
        assert_eq!(parsed("module \"a\\u00\"\n"), module("a\\u00"));
        assert_eq!(
            parsed("module \"a\\ud800\"\n"),
            module("a\\ud800"),
            "a lone surrogate"
        );
        assert_eq!(
            parsed("module \"a\\udc00\\ud800\"\n"),
            module("a\\udc00\\ud800")
        );
        assert_eq!(
            parsed("module \"a\\ud800\\u0041\"\n"),
            module("a\\ud800\\u0041")
        );
        assert_eq!(
            parsed("module \"a\\n\tb\"\n"),
            module("a\\n\tb"),
            "a raw tab beside an escape"
        );
        assert_eq!(
            parsed("module \"a\tb\"\n"),
            module("a\tb"),
            "no escape: as written"
        );
        assert_eq!(
            parsed("module \"a\\\"\n"),
            module("a\""),
            "an escaped quote, then the end of the line"
        );
        assert_eq!(
            parsed("module a\"b\n"),
            module("a\"b"),
            "a quote inside a word is the word's"
        );
        assert_eq!(parsed("module \"\"\n"), None);
    }

    #[test]
    fn requirements_and_indirect() {
        let text = "module a\nrequire b\nrequire (\n\tc\n\td v1 extra\n)\n";
        assert_eq!(
            parsed(text),
            Some(("a".into(), None, vec![req("d", "v1", false)]))
        );
        let text = "module ex.com/m\n\ngo 1.21\ngo 1.22.3\nrequire (\n\tex.com/a v1.0.0 // indirect\n\tex.com/b v1.0.0 //indirect\n\
            \tex.com/c v1.0.0 // indirect; for tests\n\tex.com/d v1.0.0 // indirectly\n\tex.com/e v1.0.0 // indirect extra\n\
            \tex.com/f v1.0.0 //\tindirect\n\tex.com/g v1.0.0 /// indirect\n\tex.com/h v1.0.0 // indirect;\n)\n\
            require ex.com/i v2.0.0 // indirect\nrequire \"ex.com/j\" `v3.0.0`\n";
        let g = parsed(text).unwrap();
        assert_eq!(g.1.as_deref(), Some("1.22.3"));
        assert_eq!(
            g.2,
            vec![
                req("ex.com/a", "v1.0.0", true),
                req("ex.com/b", "v1.0.0", true),
                req("ex.com/c", "v1.0.0", true),
                req("ex.com/d", "v1.0.0", false),
                req("ex.com/e", "v1.0.0", false),
                req("ex.com/f", "v1.0.0", true),
                req("ex.com/g", "v1.0.0", false),
                req("ex.com/h", "v1.0.0", false),
                req("ex.com/i", "v2.0.0", true),
                req("ex.com/j", "v3.0.0", false),
            ]
        );
    }

    #[test]
    fn blocks() {
        // `require ()` is empty; a block closes at a line starting `)`; other verbs' blocks are theirs.
        let text = "module m\nrequire ()\nrequire x v1\nreplace (\n\trequire v9.9.9 => ./x\n\tmodule => ./y\n)\n\
            exclude (\n\tbad v1.0.0\n)\nrequire(\n\tp v1 // indirect\n) trailing\nrequire q v2\n";
        assert_eq!(
            parsed(text),
            Some((
                "m".into(),
                None,
                vec![
                    req("x", "v1", false),
                    req("p", "v1", true),
                    req("q", "v2", false)
                ]
            ))
        );
        // A block never closed runs to the end; `require (  // deps` opens one.
        let text = "module m\nrequire\t(  // deps\n\ta v1\n\tb v2\n";
        assert_eq!(
            parsed(text),
            Some((
                "m".into(),
                None,
                vec![req("a", "v1", false), req("b", "v2", false)]
            ))
        );
        let d = directives("retract (\n\tv1.0.0 // oops\n)\n");
        assert_eq!(
            d,
            vec![Directive {
                verb: "retract".into(),
                args: vec!["v1.0.0".into()],
                comment: Some(" oops".into())
            }]
        );
        // `(` where a verb would be, and `)` out of a block, are tokens like others.
        assert_eq!(directives(") x\n")[0].args, vec!["x"]);
        let opened = directives("x(y)\nmodule m\n");
        assert_eq!(
            opened,
            vec![Directive {
                verb: "x".into(),
                args: vec!["module".into(), "m".into()],
                comment: None
            }]
        );
    }

    #[test]
    fn go_work_uses() {
        let g = parse("go 1.22\nuse (\n\t./a // one\n\t\"./b c\"\n)\nuse ./d\nuse\n");
        assert_eq!(g.uses, vec!["./a", "./b c", "./d"]);
        assert_eq!(g.go.as_deref(), Some("1.22"));
        assert_eq!(g.module, "");
    }

    #[test]
    fn crlf_and_a_missing_module() {
        assert_eq!(
            parsed("module m\r\nrequire a v1 // indirect\r\n"),
            Some(("m".into(), None, vec![req("a", "v1", true)]))
        );
        assert_eq!(parsed("go 1.22\nrequire a v1\n"), None);
        assert_eq!(parsed(""), None);
        assert_eq!(
            module_path("module ex.com/m\n").as_deref(),
            Some("ex.com/m")
        );
        assert_eq!(module_path("go 1.22\n"), None);
    }

    #[test]
    fn any_text_parses() {
        for text in [
            "\"",
            "`",
            "\\",
            "\"\\",
            "(",
            ")",
            "((",
            "))",
            "( (\n)",
            "\u{feff}",
            "\u{feff}\u{feff}module m",
            "\0module m",
        ] {
            let _ = parse(text);
        }
        assert_eq!(
            parsed("\u{feff}\u{feff}module m\n"),
            None,
            "one mark is dropped, the second is a word"
        );
    }
}
