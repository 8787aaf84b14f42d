//! Annotations in source comments, with the function or class around them.
//!
//! The grammar is `<prefix><kind> <ID>[.<anchor>|/<test-name>]`, e.g. `@spec SPEC-012`,
//! `@spec SPEC-012.token-refresh`, `@decision DEC-003`, `@norm NORM-001`,
//! `@test SPEC-001/login-success`. Only text inside comments counts (Python's
//! triple-quoted strings count as comments, other strings never do). A file is
//! lexed only when a multi-pattern search finds `<prefix><kind>` in its bytes, so
//! a tree without annotations costs a read per file and nothing more.
//!
//! Enclosing symbols are found for Python (indentation) and Rust, Go, TypeScript
//! and JavaScript (braces). An annotation in the comment block right above a
//! definition (decorators and attributes may sit between) belongs to that
//! definition; otherwise to the innermost definition around its line.

use aho_corasick::AhoCorasick;

pub const KINDS: [&str; 4] = ["spec", "decision", "norm", "test"];
const ID_PREFIXES: [&[u8]; 4] = [b"SPEC", b"DEC", b"NORM", b"TASK"];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Annotation {
    /// 1-based line number.
    pub line: u32,
    pub kind: &'static str,
    /// The id with its optional `.anchor` or `/test-name`, as written.
    pub target: String,
    /// "function", "class", "struct", "enum", "trait", "impl", "interface", "module" or "".
    pub symbol_kind: &'static str,
    pub symbol: String,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Lang {
    Python,
    Rust,
    Go,
    Js,
    Java,
    CLike,
    Hash,
    Dash,
    Markup,
}

/// The comment syntax a file name implies; None for files that are never scanned.
pub fn lang_of(path: &str) -> Option<Lang> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let (_, ext) = name.rsplit_once('.')?;
    Some(match ext.to_ascii_lowercase().as_str() {
        "py" | "pyi" => Lang::Python,
        "rs" => Lang::Rust,
        "go" => Lang::Go,
        "js" | "jsx" | "mjs" | "cjs" | "ts" | "tsx" | "mts" | "cts" => Lang::Js,
        "java" => Lang::Java,
        "c" | "h" | "cc" | "cpp" | "cxx" | "hpp" | "hh" | "kt" | "kts" | "cs" | "swift"
        | "scala" | "php" | "dart" | "proto" => Lang::CLike,
        "sh" | "bash" | "zsh" | "rb" | "yaml" | "yml" | "toml" | "r" | "pl" => Lang::Hash,
        "sql" | "lua" | "hs" => Lang::Dash,
        "html" | "htm" | "xml" | "vue" | "svelte" | "md" => Lang::Markup,
        _ => return None,
    })
}

/// The needles that make a file worth lexing: `<prefix><kind>` for every kind.
pub fn finder(prefix: &str) -> AhoCorasick {
    AhoCorasick::new(KINDS.iter().map(|k| format!("{prefix}{k}"))).expect("literal patterns")
}

/// Every annotation in `text`, in line order.
pub fn scan(text: &[u8], lang: Lang, prefix: &str, finder: &AhoCorasick) -> Vec<Annotation> {
    if prefix.is_empty() || finder.find(text).is_none() {
        return Vec::new();
    }
    let lines = lex(text, lang);
    let mut found: Vec<Annotation> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        for (kind, target) in annotations_in(&line.comment, prefix.as_bytes()) {
            found.push(Annotation {
                line: i as u32 + 1,
                kind,
                target,
                symbol_kind: "",
                symbol: String::new(),
            });
        }
    }
    if found.is_empty() {
        return found;
    }
    let spans = spans(&lines, lang);
    for a in &mut found {
        if let Some(s) = enclosing(&lines, &spans, a.line as usize - 1) {
            a.symbol_kind = s.kind;
            a.symbol = s.name.clone();
        }
    }
    found
}

// --- lexing ----------------------------------------------------------------

/// One source line split in two masks of the same length: code bytes (strings
/// and comments blanked) and comment bytes (everything else blanked).
pub struct Line {
    pub code: Vec<u8>,
    pub comment: Vec<u8>,
    /// The line starts in code (not inside a block comment or a multi-line string).
    pub starts_in_code: bool,
    /// Leading spaces and tabs of the raw line.
    pub indent: usize,
}

impl Line {
    fn code_blank(&self) -> bool {
        self.code.iter().all(|b| b.is_ascii_whitespace())
    }
    fn comment_blank(&self) -> bool {
        self.comment.iter().all(|b| b.is_ascii_whitespace())
    }
}

struct Syntax {
    line: &'static [&'static [u8]],
    block: Option<(&'static [u8], &'static [u8])>,
    quotes: &'static [u8],
    /// Strings that may span lines, closed by the same delimiter: (delimiter, backslash escapes).
    long: &'static [(&'static [u8], bool)],
    long_is_comment: bool,
    rust: bool,
}

fn syntax(lang: Lang) -> Syntax {
    const C_BLOCK: Option<(&[u8], &[u8])> = Some((b"/*", b"*/"));
    match lang {
        Lang::Python => Syntax {
            line: &[b"#"],
            block: None,
            quotes: b"\"'",
            long: &[(b"\"\"\"", true), (b"'''", true)],
            long_is_comment: true,
            rust: false,
        },
        Lang::Rust => Syntax {
            line: &[b"//"],
            block: C_BLOCK,
            quotes: b"",
            long: &[(b"\"", true)],
            long_is_comment: false,
            rust: true,
        },
        Lang::Go => Syntax {
            line: &[b"//"],
            block: C_BLOCK,
            quotes: b"\"'",
            long: &[(b"`", false)],
            long_is_comment: false,
            rust: false,
        },
        Lang::Js => Syntax {
            line: &[b"//"],
            block: C_BLOCK,
            quotes: b"\"'",
            long: &[(b"`", true)],
            long_is_comment: false,
            rust: false,
        },
        Lang::Java => Syntax {
            line: &[b"//"],
            block: C_BLOCK,
            quotes: b"\"'",
            long: &[(b"\"\"\"", true)],
            long_is_comment: false,
            rust: false,
        },
        Lang::CLike => Syntax {
            line: &[b"//"],
            block: C_BLOCK,
            quotes: b"\"'",
            long: &[],
            long_is_comment: false,
            rust: false,
        },
        Lang::Hash => Syntax {
            line: &[b"#"],
            block: None,
            quotes: b"\"'",
            long: &[],
            long_is_comment: false,
            rust: false,
        },
        Lang::Dash => Syntax {
            line: &[b"--"],
            block: C_BLOCK,
            quotes: b"\"'",
            long: &[],
            long_is_comment: false,
            rust: false,
        },
        Lang::Markup => Syntax {
            line: &[],
            block: Some((b"<!--", b"-->")),
            quotes: b"",
            long: &[],
            long_is_comment: false,
            rust: false,
        },
    }
}

enum State {
    Code,
    Block,
    Str {
        end: Vec<u8>,
        escapes: bool,
        multiline: bool,
        comment: bool,
    },
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

/// Length of a Rust char literal starting at `i` (a `'`), or None for a lifetime.
fn rust_char_len(s: &[u8], i: usize) -> Option<usize> {
    let rest = &s[i + 1..];
    if rest.first() == Some(&b'\\') {
        let close = rest.get(2..)?.iter().take(10).position(|&b| b == b'\'')?;
        return Some(close + 4);
    }
    let ch = std::str::from_utf8(&rest[..rest.len().min(4)])
        .or_else(|e| std::str::from_utf8(&rest[..e.valid_up_to()]))
        .ok()?
        .chars()
        .next()?;
    let n = ch.len_utf8();
    (rest.get(n) == Some(&b'\'')).then_some(n + 2)
}

/// Rust raw string opener at `i` (`r"`, `r#"`, …): (opener length, closing delimiter).
fn rust_raw(s: &[u8], i: usize) -> Option<(usize, Vec<u8>)> {
    if s[i] != b'r' || (i > 0 && is_ident(s[i - 1]) && s[i - 1] != b'b') {
        return None;
    }
    let hashes = s[i + 1..].iter().take_while(|&&b| b == b'#').count();
    if s.get(i + 1 + hashes) != Some(&b'"') {
        return None;
    }
    let mut end = vec![b'"'];
    end.extend(std::iter::repeat_n(b'#', hashes));
    Some((hashes + 2, end))
}

pub fn lex(text: &[u8], lang: Lang) -> Vec<Line> {
    let sx = syntax(lang);
    let mut state = State::Code;
    let mut out = Vec::new();
    for raw in text.split(|&b| b == b'\n') {
        let s = raw.strip_suffix(b"\r").unwrap_or(raw);
        let mut code = vec![b' '; s.len()];
        let mut comment = vec![b' '; s.len()];
        let starts_in_code = matches!(state, State::Code);
        let mut i = 0;
        while i < s.len() {
            match &state {
                State::Code => {
                    let rest = &s[i..];
                    if sx.line.iter().any(|t| rest.starts_with(t)) {
                        comment[i..].copy_from_slice(rest);
                        break;
                    }
                    if let Some((open, _)) = sx.block.filter(|(open, _)| rest.starts_with(open)) {
                        state = State::Block;
                        i += open.len();
                        continue;
                    }
                    if sx.rust {
                        if s[i] == b'\'' {
                            match rust_char_len(s, i) {
                                Some(n) => i += n,
                                None => {
                                    code[i] = b'\'';
                                    i += 1;
                                }
                            }
                            continue;
                        }
                        if let Some((n, end)) = rust_raw(s, i) {
                            state = State::Str {
                                end,
                                escapes: false,
                                multiline: true,
                                comment: false,
                            };
                            i += n;
                            continue;
                        }
                    }
                    if let Some((d, esc)) = sx.long.iter().find(|(d, _)| rest.starts_with(d)) {
                        state = State::Str {
                            end: d.to_vec(),
                            escapes: *esc,
                            multiline: true,
                            comment: sx.long_is_comment,
                        };
                        i += d.len();
                        continue;
                    }
                    if sx.quotes.contains(&s[i]) {
                        state = State::Str {
                            end: vec![s[i]],
                            escapes: true,
                            multiline: false,
                            comment: false,
                        };
                        i += 1;
                        continue;
                    }
                    code[i] = s[i];
                    i += 1;
                }
                State::Block => {
                    let (_, close) = sx.block.expect("block state implies block syntax");
                    if s[i..].starts_with(close) {
                        state = State::Code;
                        i += close.len();
                    } else {
                        comment[i] = s[i];
                        i += 1;
                    }
                }
                State::Str {
                    end,
                    escapes,
                    comment: as_comment,
                    ..
                } => {
                    if *escapes && s[i] == b'\\' {
                        i += 2;
                    } else if s[i..].starts_with(end) {
                        i += end.len();
                        state = State::Code;
                    } else {
                        if *as_comment {
                            comment[i] = s[i];
                        }
                        i += 1;
                    }
                }
            }
        }
        if matches!(
            state,
            State::Str {
                multiline: false,
                ..
            }
        ) {
            state = State::Code;
        }
        let indent = s.iter().take_while(|&&b| b == b' ' || b == b'\t').count();
        out.push(Line {
            code,
            comment,
            starts_in_code,
            indent,
        });
    }
    out
}

// --- annotations -----------------------------------------------------------

/// (kind, target) of each annotation in one line's comment mask.
fn annotations_in(comment: &[u8], prefix: &[u8]) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    for pos in memchr::memmem::find_iter(comment, prefix) {
        if pos > 0 && is_ident(comment[pos - 1]) {
            continue;
        }
        let after = &comment[pos + prefix.len()..];
        let Some(kind) = KINDS.iter().find(|k| after.starts_with(k.as_bytes())) else {
            continue;
        };
        let rest = &after[kind.len()..];
        let gap = rest
            .iter()
            .take_while(|&&b| b == b' ' || b == b'\t')
            .count();
        if gap == 0 {
            continue;
        }
        if let Some(target) = parse_target(&rest[gap..]) {
            out.push((*kind, target));
        }
    }
    out
}

/// `ID[.anchor|/name]` at the start of `s`, followed by a word boundary.
fn parse_target(s: &[u8]) -> Option<String> {
    let head = s.iter().take_while(|b| b.is_ascii_uppercase()).count();
    if !ID_PREFIXES.contains(&&s[..head]) || s.get(head) != Some(&b'-') {
        return None;
    }
    let mut end = head
        + 1
        + s[head + 1..]
            .iter()
            .take_while(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || **b == b'-')
            .count();
    while s[end - 1] == b'-' {
        end -= 1;
    }
    if end == head {
        return None;
    }
    if matches!(s.get(end), Some(b'.') | Some(b'/')) {
        let tail = s[end + 1..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_' || **b == b'-')
            .count();
        if tail > 0 {
            end += 1 + tail;
        }
    }
    if s.get(end)
        .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
    {
        return None;
    }
    Some(String::from_utf8_lossy(&s[..end]).into_owned())
}

// --- symbols ---------------------------------------------------------------

/// The definitions of a lexed file, nested ones included, in no particular order (Python by
/// indentation; Rust, Go, TypeScript and JavaScript by braces; none for other languages).
/// Task context (tasks/regions.rs) cuts files into regions along them.
pub fn spans(lines: &[Line], lang: Lang) -> Vec<Span> {
    match lang {
        Lang::Python => python_spans(lines),
        Lang::Rust | Lang::Go | Lang::Js | Lang::Java => brace_spans(lines, lang),
        _ => Vec::new(),
    }
}

/// Words a definition line can start with, in any of the languages with spans.
const DEF_STARTS: &[&str] = &[
    "def",
    "class",
    "async",
    "fn",
    "pub",
    "struct",
    "enum",
    "trait",
    "mod",
    "impl",
    "union",
    "const",
    "unsafe",
    "extern",
    "default",
    "func",
    "type",
    "function",
    "export",
    "declare",
    "abstract",
    "let",
    "var",
    "interface",
];

/// The definition one raw line starts, if it starts one (without the lexer: a line inside a
/// string or a comment that reads like a definition counts too). For the names a file
/// defines, where spans are not wanted (tasks/files.rs); `indented` JavaScript lines are
/// read as class members.
pub fn line_def(lang: Lang, line: &[u8]) -> Option<(&'static str, String)> {
    let start = line.iter().position(|b| !b.is_ascii_whitespace())?;
    let rest = &line[start..];
    let word = rest
        .iter()
        .position(|b| !is_ident(*b))
        .map_or(rest, |e| &rest[..e]);
    let member = lang == Lang::Js && start > 0 && rest.trim_ascii_end().ends_with(b"{");
    if lang != Lang::Java && !member && !DEF_STARTS.iter().any(|d| d.as_bytes() == word) {
        return None;
    }
    let t = tokens(rest);
    match lang {
        Lang::Python => python_def(&t),
        Lang::Rust => rust_def(&t),
        Lang::Go => go_def(&t),
        Lang::Js => js_def(&t, member),
        Lang::Java => java_def(&t, start > 0),
        _ => None,
    }
}

#[derive(Debug, Clone)]
pub struct Span {
    /// 0-based first and last line, inclusive.
    pub start: usize,
    pub end: usize,
    pub kind: &'static str,
    pub name: String,
}

/// Identifiers and single punctuation bytes of a code mask.
fn tokens(code: &[u8]) -> Vec<&str> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < code.len() {
        let b = code[i];
        if b.is_ascii_whitespace() {
            i += 1;
        } else if is_ident(b) || b >= 0x80 {
            let start = i;
            while i < code.len() && (is_ident(code[i]) || code[i] >= 0x80) {
                i += 1;
            }
            out.push(std::str::from_utf8(&code[start..i]).unwrap_or("?"));
        } else {
            out.push(std::str::from_utf8(&code[i..i + 1]).unwrap_or("?"));
            i += 1;
        }
    }
    out
}

fn is_name(t: &str) -> bool {
    t.bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_' || b == b'$' || b >= 0x80)
}

fn python_def(t: &[&str]) -> Option<(&'static str, String)> {
    let t = if t.first() == Some(&"async") {
        &t[1..]
    } else {
        t
    };
    match (t.first(), t.get(1)) {
        (Some(&"def"), Some(n)) if is_name(n) => Some(("function", n.to_string())),
        (Some(&"class"), Some(n)) if is_name(n) => Some(("class", n.to_string())),
        _ => None,
    }
}

fn rust_def(t: &[&str]) -> Option<(&'static str, String)> {
    let mut i = 0;
    while i < t.len() {
        match t[i] {
            "pub" if t.get(i + 1) == Some(&"(") => {
                i += t[i..].iter().position(|x| *x == ")")? + 1;
            }
            "pub" | "async" | "const" | "unsafe" | "extern" | "default" => i += 1,
            _ => break,
        }
    }
    let name = t.get(i + 1).filter(|n| is_name(n)).map(|n| n.to_string());
    match t.get(i).copied()? {
        "fn" => Some(("function", name?)),
        "struct" | "union" => Some(("struct", name?)),
        "enum" => Some(("enum", name?)),
        "trait" => Some(("trait", name?)),
        "mod" => Some(("module", name?)),
        "impl" => {
            let rest = &t[i + 1..];
            let rest = match rest.iter().position(|x| *x == "for") {
                Some(f) => &rest[f + 1..],
                None => skip_generics(rest),
            };
            let mut last = None;
            for x in rest {
                match *x {
                    "<" | "{" | "where" => break,
                    "dyn" | "mut" => {}
                    x if is_name(x) => last = Some(x.to_string()),
                    _ => {}
                }
            }
            Some(("impl", last?))
        }
        _ => None,
    }
}

fn skip_generics<'a>(t: &'a [&'a str]) -> &'a [&'a str] {
    if t.first() != Some(&"<") {
        return t;
    }
    let mut depth = 0;
    for (i, x) in t.iter().enumerate() {
        match *x {
            "<" => depth += 1,
            ">" => {
                depth -= 1;
                if depth == 0 {
                    return &t[i + 1..];
                }
            }
            _ => {}
        }
    }
    &[]
}

fn go_def(t: &[&str]) -> Option<(&'static str, String)> {
    match t.first().copied()? {
        "func" => {
            let mut i = 1;
            if t.get(1) == Some(&"(") {
                i = t.iter().position(|x| *x == ")")? + 1;
            }
            t.get(i)
                .filter(|n| is_name(n))
                .map(|n| ("function", n.to_string()))
        }
        "type" => {
            let name = t.get(1).filter(|n| is_name(n))?;
            match t.get(2).copied() {
                Some("struct") => Some(("struct", name.to_string())),
                Some("interface") => Some(("interface", name.to_string())),
                _ => None,
            }
        }
        _ => None,
    }
}

const JS_KEYWORDS: &[&str] = &[
    "if", "for", "while", "switch", "catch", "return", "function", "with", "else", "do", "try",
    "new", "await", "typeof", "delete", "throw", "case", "super", "this",
];

fn js_def(t: &[&str], in_class: bool) -> Option<(&'static str, String)> {
    let mut i = 0;
    while matches!(
        t.get(i).copied(),
        Some("export" | "default" | "declare" | "abstract" | "async")
    ) {
        i += 1;
    }
    let name_at = |j: usize| {
        t.get(j)
            .filter(|n| is_name(n) && !JS_KEYWORDS.contains(n))
            .map(|n| n.to_string())
    };
    match t.get(i).copied()? {
        "function" => {
            let j = if t.get(i + 1) == Some(&"*") {
                i + 2
            } else {
                i + 1
            };
            return Some(("function", name_at(j)?));
        }
        "class" => return Some(("class", name_at(i + 1)?)),
        "interface" => return Some(("interface", name_at(i + 1)?)),
        "const" | "let" | "var" => {
            let name = name_at(i + 1)?;
            let eq = t.iter().position(|x| *x == "=")?;
            let value = &t[eq + 1..];
            let arrow = value.windows(2).any(|w| w == ["=", ">"]);
            let func = value.iter().take(2).any(|x| *x == "function");
            return (arrow || func).then_some(("function", name));
        }
        _ => {}
    }
    if !in_class {
        return None;
    }
    while matches!(
        t.get(i).copied(),
        Some(
            "public"
                | "private"
                | "protected"
                | "static"
                | "readonly"
                | "async"
                | "get"
                | "set"
                | "override"
                | "*"
        )
    ) && t.get(i + 1).is_some_and(|n| *n != "(")
    {
        i += 1;
    }
    let name = name_at(i)?;
    match t.get(i + 1).copied() {
        Some("(") | Some("<") if t.last() == Some(&"{") => Some(("function", name)),
        Some("=") if t.windows(2).any(|w| w == ["=", ">"]) => Some(("function", name)),
        _ => None,
    }
}

const JAVA_MODIFIERS: &[&str] = &[
    "public",
    "private",
    "protected",
    "static",
    "final",
    "abstract",
    "sealed",
    "non",
    "-",
    "strictfp",
    "synchronized",
    "native",
    "default",
    "transient",
    "volatile",
];
const JAVA_KEYWORDS: &[&str] = &[
    "if",
    "for",
    "while",
    "switch",
    "catch",
    "return",
    "new",
    "throw",
    "else",
    "do",
    "try",
    "case",
    "super",
    "this",
    "assert",
    "yield",
    "instanceof",
];

/// A Java type (class, record, interface, annotation type, enum) or, `in_type`, a method or
/// constructor: modifiers and annotations, then `[<T>] [Type] name(` with the line ending
/// its signature (`{`, `;` after `)`) or leaving it open; not a field set by a call, not an
/// enum constant.
fn java_def(t: &[&str], in_type: bool) -> Option<(&'static str, String)> {
    let mut i = 0;
    loop {
        match t.get(i).copied()? {
            "@" if t.get(i + 1) != Some(&"interface") => {
                i += 2;
                if t.get(i) == Some(&"(") {
                    i += t[i..].iter().position(|x| *x == ")")? + 1;
                }
            }
            m if JAVA_MODIFIERS.contains(&m) => i += 1,
            _ => break,
        }
    }
    let name_at = |j: usize| {
        t.get(j)
            .filter(|n| is_name(n) && !JAVA_KEYWORDS.contains(n))
            .map(|n| n.to_string())
    };
    match t.get(i).copied()? {
        "class" | "record" => return Some(("class", name_at(i + 1)?)),
        "interface" => return Some(("interface", name_at(i + 1)?)),
        "@" => return Some(("interface", name_at(i + 2)?)),
        "enum" => return Some(("enum", name_at(i + 1)?)),
        _ => {}
    }
    let paren = t.iter().position(|x| *x == "(")?;
    if !in_type || paren <= i || JAVA_KEYWORDS.contains(&t[i]) || t[i..paren].contains(&"=") {
        return None;
    }
    let name = name_at(paren - 1)?;
    // A method has a type before its name; a constructor is named as its class, capitalised
    // (a call statement is neither).
    let typed = paren - 1 > i;
    if typed
        && !t
            .get(paren - 2)
            .is_some_and(|p| is_name(p) || *p == ">" || *p == "]")
    {
        return None;
    }
    if !typed && !name.starts_with(|c: char| c.is_ascii_uppercase()) {
        return None;
    }
    let open = !t[paren..].contains(&")");
    let ends = match t.last().copied() {
        Some("{") => true,
        Some(";") => typed && t.len() >= 2 && t[t.len() - 2] == ")",
        _ => false,
    };
    (open || ends).then_some(("function", name))
}

/// Definitions of a brace language, each spanning its body's braces (or one line
/// for a body-less definition such as `const f = (x) => x;`).
fn brace_spans(lines: &[Line], lang: Lang) -> Vec<Span> {
    struct Frame {
        span: Span,
        depth: usize,
    }
    let mut spans = Vec::new();
    let mut frames: Vec<Frame> = Vec::new();
    let mut pending: Option<(Span, usize)> = None;
    let mut depth = 0usize;
    for (n, line) in lines.iter().enumerate() {
        let t = tokens(&line.code);
        let in_class = frames
            .last()
            .is_some_and(|f| matches!(f.span.kind, "class"));
        let def = match lang {
            Lang::Rust => rust_def(&t),
            Lang::Go => go_def(&t),
            Lang::Java => java_def(
                &t,
                frames
                    .last()
                    .is_some_and(|f| matches!(f.span.kind, "class" | "interface" | "enum")),
            ),
            _ => js_def(&t, in_class),
        };
        if let Some((kind, name)) = def {
            if let Some((p, _)) = pending.take() {
                spans.push(p);
            }
            pending = Some((
                Span {
                    start: n,
                    end: n,
                    kind,
                    name,
                },
                depth,
            ));
        }
        for &b in &line.code {
            match b {
                b'{' => {
                    if let Some((span, d)) = pending.take() {
                        frames.push(Frame { span, depth: d });
                    }
                    depth += 1;
                }
                b'}' => {
                    depth = depth.saturating_sub(1);
                    while frames.last().is_some_and(|f| f.depth >= depth) {
                        let mut f = frames.pop().expect("checked");
                        f.span.end = n;
                        spans.push(f.span);
                    }
                }
                b';' if pending.as_ref().is_some_and(|(_, d)| *d == depth) => {
                    spans.push(pending.take().expect("checked").0);
                }
                _ => {}
            }
        }
    }
    if let Some((p, _)) = pending {
        spans.push(p);
    }
    let last = lines.len().saturating_sub(1);
    spans.extend(frames.into_iter().map(|mut f| {
        f.span.end = last;
        f.span
    }));
    spans
}

/// Python definitions, each spanning the lines indented deeper than its `def`/`class`.
fn python_spans(lines: &[Line]) -> Vec<Span> {
    let mut spans = Vec::new();
    let mut open: Vec<(Span, usize)> = Vec::new(); // (span, indent)
    let mut parens = 0i32;
    for (n, line) in lines.iter().enumerate() {
        let logical_start = line.starts_in_code && parens <= 0;
        if logical_start && !line.code_blank() {
            let indent = line.indent;
            while open.last().is_some_and(|(_, i)| *i >= indent) {
                spans.push(open.pop().expect("checked").0);
            }
            for (s, _) in &mut open {
                s.end = n;
            }
            if let Some((kind, name)) = python_def(&tokens(&line.code)) {
                open.push((
                    Span {
                        start: n,
                        end: n,
                        kind,
                        name,
                    },
                    indent,
                ));
            }
        } else if !line.code_blank() || !line.comment_blank() {
            // A continuation line or a comment: inside every definition indented less.
            let indent = line.indent;
            for (s, i) in &mut open {
                if indent > *i || !logical_start {
                    s.end = n;
                }
            }
        }
        for &b in &line.code {
            match b {
                b'(' | b'[' | b'{' => parens += 1,
                b')' | b']' | b'}' => parens -= 1,
                _ => {}
            }
        }
    }
    spans.extend(open.into_iter().map(|(s, _)| s));
    spans
}

/// The definition an annotation on line `at` (0-based) belongs to.
fn enclosing<'a>(lines: &[Line], spans: &'a [Span], at: usize) -> Option<&'a Span> {
    if lines[at].code_blank() {
        for (k, line) in lines.iter().enumerate().skip(at + 1) {
            if line.code_blank() {
                if line.comment_blank() {
                    break;
                }
                continue;
            }
            let code = String::from_utf8_lossy(&line.code);
            let code = code.trim_start();
            if code.starts_with('@') || code.starts_with("#[") {
                continue;
            }
            if let Some(s) = spans.iter().find(|s| s.start == k) {
                return Some(s);
            }
            break;
        }
    }
    spans
        .iter()
        .filter(|s| s.start <= at && at <= s.end)
        .max_by_key(|s| (s.start, std::cmp::Reverse(s.end)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(src: &str, lang: Lang) -> Vec<(u32, String, String, String)> {
        scan(src.as_bytes(), lang, "@", &finder("@"))
            .into_iter()
            .map(|a| {
                (
                    a.line,
                    format!("{} {}", a.kind, a.target),
                    a.symbol_kind.to_string(),
                    a.symbol,
                )
            })
            .collect()
    }

    fn row(line: u32, ann: &str, kind: &str, sym: &str) -> (u32, String, String, String) {
        (line, ann.to_string(), kind.to_string(), sym.to_string())
    }

    #[test]
    fn python_functions_classes_and_leading_comments() {
        let src = r##"
import os

# @spec SPEC-012
def authenticate_user(user):
    """Log in. @decision DEC-003"""
    s = "# @spec SPEC-999 is a string, not a comment"
    return s  # @norm NORM-001

class Session:
    # @spec SPEC-012.token-refresh
    @property
    def refresh_token(self):
        x = (1,
    2)
        # @test SPEC-001/login-success
        return x

# @spec SPEC-020
x = 1
"##;
        assert_eq!(
            found(src, Lang::Python),
            vec![
                row(4, "spec SPEC-012", "function", "authenticate_user"),
                row(6, "decision DEC-003", "function", "authenticate_user"),
                row(8, "norm NORM-001", "function", "authenticate_user"),
                row(
                    11,
                    "spec SPEC-012.token-refresh",
                    "function",
                    "refresh_token"
                ),
                row(
                    16,
                    "test SPEC-001/login-success",
                    "function",
                    "refresh_token"
                ),
                row(19, "spec SPEC-020", "", ""),
            ]
        );
    }

    #[test]
    fn rust_items_lifetimes_and_raw_strings() {
        let src = r##"
/// @spec SPEC-001
#[derive(Debug)]
pub struct Token<'a> {
    raw: &'a str, // @decision DEC-002
}

impl<'a> Display for Token<'a> {
    fn fmt(&self) -> String {
        let s = r#"{ "@spec SPEC-404" }"#;
        let c = '{';
        // @norm NORM-003
        s.to_string()
    }
}

pub(crate) async fn refresh() {} // @spec SPEC-001.refresh
"##;
        assert_eq!(
            found(src, Lang::Rust),
            vec![
                row(2, "spec SPEC-001", "struct", "Token"),
                row(5, "decision DEC-002", "struct", "Token"),
                row(12, "norm NORM-003", "function", "fmt"),
                row(17, "spec SPEC-001.refresh", "function", "refresh"),
            ]
        );
    }

    #[test]
    fn go_funcs_methods_and_types() {
        let src = "package auth\n\n// @spec SPEC-007\nfunc Login(u string) error {\n\ts := `raw @spec SPEC-404\n{`\n\t/* @decision DEC-001 */\n\treturn nil\n}\n\nfunc (s *Store) Get(k string) string {\n\t// @test SPEC-007/get\n\treturn k\n}\n\ntype Store struct {\n\tm map[string]string // @norm NORM-002\n}\n";
        assert_eq!(
            found(src, Lang::Go),
            vec![
                row(3, "spec SPEC-007", "function", "Login"),
                row(7, "decision DEC-001", "function", "Login"),
                row(12, "test SPEC-007/get", "function", "Get"),
                row(17, "norm NORM-002", "struct", "Store"),
            ]
        );
    }

    #[test]
    fn typescript_functions_arrows_classes_and_methods() {
        let src = r#"
/** @spec SPEC-010 */
export async function login(user: User): Promise<void> {
  const url = "http://x/@spec SPEC-404";
}

export const logout = async (id: string) => {
  // @decision DEC-010
};

export class AuthService {
  private tokens = new Map<string, string>();

  // @spec SPEC-010.rotate
  @Memo()
  async rotate(token: string): Promise<string> {
    return `${token} @spec SPEC-405`;
  }
}

describe("auth", () => {
  it("logs in", () => {
    // @test SPEC-010/login-success
  });
});
"#;
        assert_eq!(
            found(src, Lang::Js),
            vec![
                row(2, "spec SPEC-010", "function", "login"),
                row(8, "decision DEC-010", "function", "logout"),
                row(14, "spec SPEC-010.rotate", "function", "rotate"),
                row(23, "test SPEC-010/login-success", "", ""),
            ]
        );
    }

    #[test]
    fn grammar_boundaries() {
        let f = |s: &str| {
            found(s, Lang::Hash)
                .into_iter()
                .map(|r| r.1)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            f("# @spec SPEC-1, @norm NORM-A-2. @test TASK-3/x-y_z"),
            ["spec SPEC-1", "norm NORM-A-2", "test TASK-3/x-y_z"]
        );
        assert!(f(
            "# @specs SPEC-1 @spec: SPEC-1 @spec spec-1 @spec FOO-1 @spec SPEC-1x a@spec SPEC-2"
        )
        .is_empty());
        assert_eq!(f("# @spec  SPEC-12-  trailing"), ["spec SPEC-12"]);
        assert_eq!(f("# @spec SPEC-1. end"), ["spec SPEC-1"]);
        assert!(f("x = '@spec SPEC-1'").is_empty());
        let custom = scan(
            b"// contextia:spec SPEC-9 @spec SPEC-1",
            Lang::CLike,
            "contextia:",
            &finder("contextia:"),
        );
        assert_eq!(custom.len(), 1);
        assert_eq!(custom[0].target, "SPEC-9");
    }

    #[test]
    fn markup_only_in_comments() {
        let src = "# Title\n\n@spec SPEC-1 in prose\n<!-- @spec SPEC-2\n@norm NORM-1 -->\n";
        let got: Vec<_> = found(src, Lang::Markup)
            .into_iter()
            .map(|r| (r.0, r.1))
            .collect();
        assert_eq!(
            got,
            vec![
                (4, "spec SPEC-2".to_string()),
                (5, "norm NORM-1".to_string())
            ]
        );
    }

    #[test]
    fn language_by_extension() {
        assert_eq!(lang_of("src/a.PY"), Some(Lang::Python));
        assert_eq!(lang_of("web/app.tsx"), Some(Lang::Js));
        assert_eq!(lang_of("Makefile"), None);
        assert_eq!(lang_of("a.bin"), None);
    }
}
