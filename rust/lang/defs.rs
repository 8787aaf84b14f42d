//! Definition lines: the kind and name of the function, class, struct, … a line of code
//! starts, by a line-oriented grammar per language (Python, Rust, Go, TypeScript/JavaScript
//! and Java), not a parser.

use super::lexer::is_ident;
use super::Lang;

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
    let member = matches!(lang, Lang::TypeScript | Lang::JavaScript)
        && start > 0
        && rest.trim_ascii_end().ends_with(b"{");
    if lang != Lang::Java && !member && !DEF_STARTS.iter().any(|d| d.as_bytes() == word) {
        return None;
    }
    // A Java comment's line (`* Returns the name(s)`, `// see get(i)`) names no definition: a
    // Java definition has no keyword to start with, so prose ending in `)` would read as one.
    if lang == Lang::Java && matches!(rest.first(), Some(b'*' | b'/')) {
        return None;
    }
    let t = tokens(rest);
    match lang {
        Lang::Python => python_def(&t),
        Lang::Rust => rust_def(&t),
        Lang::Go => go_def(&t),
        Lang::TypeScript | Lang::JavaScript => js_def(&t, member),
        Lang::Java => java_def(&t, start > 0),
        _ => None,
    }
}

/// Identifiers and single punctuation bytes of a code mask.
pub(super) fn tokens(code: &[u8]) -> Vec<&str> {
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

pub(super) fn python_def(t: &[&str]) -> Option<(&'static str, String)> {
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

pub(super) fn rust_def(t: &[&str]) -> Option<(&'static str, String)> {
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

pub(super) fn go_def(t: &[&str]) -> Option<(&'static str, String)> {
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

pub(super) fn js_def(t: &[&str], in_class: bool) -> Option<(&'static str, String)> {
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
    // `app.use = function use(fn) {`, `exports.parse = (s) => {`,
    // `Foo.prototype.bar = function () {`: a function given to a property, named by it.
    if let Some(eq) = t.iter().position(|x| *x == "=") {
        let path = &t[i..eq];
        let dotted = path.len() >= 3
            && path.iter().skip(1).step_by(2).all(|x| *x == ".")
            && path.iter().step_by(2).all(|x| is_name(x));
        if dotted && path.len() % 2 == 1 && is_function_value(&t[eq + 1..]) {
            return Some(("function", path[path.len() - 1].to_string()));
        }
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
                | "#"
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

/// Whether the tokens after a `=` start a function: `function …`, `async …`, `x => …`, or
/// `(…) =>` (a call taking a callback, `f(x => x)`, is not one).
fn is_function_value(v: &[&str]) -> bool {
    let v = if v.first() == Some(&"async") {
        &v[1..]
    } else {
        v
    };
    match v.first().copied() {
        Some("function") => true,
        Some("(") => {
            let mut depth = 0usize;
            let close = v.iter().position(|x| {
                match *x {
                    "(" => depth += 1,
                    ")" => depth -= 1,
                    _ => {}
                }
                depth == 0
            });
            close.is_some_and(|k| {
                let rest = &v[k + 1..];
                rest.starts_with(&["=", ">"])
                    || (rest.first() == Some(&":") && rest.windows(2).any(|w| w == ["=", ">"]))
            })
        }
        Some(n) => is_name(n) && v[1..].starts_with(&["=", ">"]),
        None => false,
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
/// constructor: modifiers and annotations, then `[<T>] [Type] name(` with the line leaving its
/// parameters open or ending them (below); not a field set by a call, not an enum constant.
pub(super) fn java_def(t: &[&str], in_type: bool) -> Option<(&'static str, String)> {
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
    // The parameters' closing `)` (an annotation in them has its own parentheses).
    let mut depth = 0usize;
    let close = t[paren..].iter().position(|x| {
        match *x {
            "(" => depth += 1,
            ")" => depth -= 1,
            _ => {}
        }
        depth == 0
    });
    let Some(close) = close else {
        return Some(("function", name)); // the parameters go on below
    };
    // What follows them: a body opened here, even closed here (`int size() { return n; }`),
    // a `throws` clause, or nothing when the body opens on a later line (jackson-core writes
    // every method so); then only after a type or a modifier, as an enum constant `FAST("f")`
    // has neither. A body-less method ends with `;`.
    let ends = match t.get(paren + close + 1).copied() {
        None => typed || i > 0,
        Some("{" | "throws") => true,
        Some(";") => typed,
        _ => t.last() == Some(&"{"),
    };
    ends.then_some(("function", name))
}
