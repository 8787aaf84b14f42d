//! Definition lines: the kind and name of the function, class, struct, … a line of code
//! starts, by a line-oriented grammar per language (Python, Rust, Go, TypeScript/JavaScript,
//! Java, C#, C and C++, Dart, Kotlin, Swift, PHP, Ruby, Scala, Elixir, Lua, Haskell, Zig, Perl,
//! R, Julia, OCaml and F#, Erlang, the Lisps, Pascal, Ada, VHDL, Verilog, Fortran, Visual Basic,
//! Vim script, Lean, CoffeeScript, the shells and PowerShell), not a parser.

use super::lexer::{holds_any_case, is_ident};
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
    let member = matches!(lang, Lang::TypeScript | Lang::JavaScript | Lang::Component)
        && start > 0
        && rest.trim_ascii_end().ends_with(b"{");
    // Java's, C#'s, C's, Dart's, Kotlin's, Swift's and PHP's lines are told by `may_start`
    // below; every other language's definition starts with a word of its own.
    let keyworded = !matches!(
        lang,
        Lang::Java | Lang::CSharp | Lang::C | Lang::Dart | Lang::Kotlin | Lang::Swift | Lang::Php
    );
    let is = |list: &[&str]| list.iter().any(|d| d.as_bytes() == word);
    let is_any_case = |list: &[&str]| any_case(std::str::from_utf8(word).ok(), list);
    let holds = |s: &[u8]| holds_any_case(rest, s);
    let starts = match lang {
        Lang::Ruby => is(&["def", "class"]) || is(RUBY_MODIFIERS),
        // or an annotation
        Lang::Scala => word.is_empty() || is(SCALA_STARTS) || is(SCALA_MODIFIERS),
        Lang::Elixir => word.starts_with(b"def"),
        Lang::Lua => memchr::memmem::find(rest, b"function").is_some(),
        // A declaration at the top level, not prose at column 0 in a `{- -}` comment.
        Lang::Haskell => {
            start == 0
                && (is(&["data", "newtype", "type", "class", "instance"])
                    || memchr::memchr(b'=', rest).is_some()
                    || memchr::memmem::find(rest, b"::").is_some())
        }
        Lang::Zig => is(&["pub", "fn", "const", "var", "export", "extern", "inline"]),
        Lang::Perl => word == b"sub",
        Lang::R => {
            memchr::memmem::find(rest, b"function").is_some()
                || memchr::memmem::find(rest, b"\\(").is_some()
        }
        // or an `@` macro before a struct, or a one-line function
        Lang::Julia => {
            word.is_empty()
                || is(&["function", "macro", "struct", "mutable", "abstract"])
                || (memchr::memchr(b'(', rest).is_some() && memchr::memchr(b'=', rest).is_some())
        }
        // A member at any indent; the rest at the top level, not a function's local `let`.
        Lang::Ml => {
            is(&["member", "override", "static", "new", "abstract", "default"])
                || (start == 0 && is(&["let", "and", "val", "external", "type", "module", "class"]))
        }
        Lang::Erlang => start == 0 && memchr::memchr(b'(', rest).is_some(),
        Lang::Lisp => rest.starts_with(b"(def") || rest.starts_with(b"(cl-def"),
        // or a type (`TCart = class`)
        Lang::Pascal => {
            is_any_case(PASCAL_ROUTINES)
                || is_any_case(&["class"])
                || memchr::memchr(b'=', rest).is_some()
        }
        Lang::Ada => is_any_case(&[
            "procedure",
            "function",
            "entry",
            "package",
            "task",
            "protected",
            "type",
            "overriding",
            "not",
        ]),
        // or a named process (`tx : process`)
        Lang::Vhdl => {
            is_any_case(&[
                "entity",
                "architecture",
                "package",
                "function",
                "procedure",
                "pure",
                "impure",
                "type",
            ]) || memchr::memchr(b':', rest).is_some()
        }
        Lang::Verilog => {
            is(VERILOG_MODIFIERS)
                || is(&[
                    "module",
                    "macromodule",
                    "program",
                    "interface",
                    "package",
                    "class",
                    "function",
                    "task",
                ])
        }
        Lang::Fortran => {
            is_any_case(&["module", "program", "submodule", "type"])
                || holds(b"function")
                || holds(b"subroutine")
        }
        Lang::Basic => {
            is_any_case(BASIC_MODIFIERS)
                || is_any_case(&[
                    "sub",
                    "function",
                    "property",
                    "operator",
                    "class",
                    "module",
                    "structure",
                    "interface",
                    "enum",
                ])
        }
        Lang::Vim => word.starts_with(b"fu") || is(&["def", "export"]),
        Lang::Lean => {
            rest.starts_with(b"@[")
                || is(LEAN_MODIFIERS)
                || is(&[
                    "def",
                    "theorem",
                    "lemma",
                    "abbrev",
                    "opaque",
                    "instance",
                    "structure",
                    "class",
                    "inductive",
                ])
        }
        Lang::Coffee => is(&["class", "export"]) || holds(b"->") || holds(b"=>"),
        // or an annotation (`@rpc`)
        Lang::GdScript => word.is_empty() || is(&["func", "static", "class", "enum"]),
        Lang::Shell => word == b"function" || memchr::memchr(b'(', rest).is_some(),
        Lang::PowerShell => is_any_case(&[
            "function",
            "filter",
            "workflow",
            "configuration",
            "class",
            "enum",
        ]),
        _ => is(DEF_STARTS),
    };
    if keyworded && !member && !starts {
        return None;
    }
    // The other languages' definitions start with a name, an annotation, an attribute or Java's
    // type parameters, never with a statement's keyword (`return f(x);`): a comment's line (`*
    // Returns the name(s)`) names none, though prose ending in `)` would read as one. Told
    // before the line is cut into tokens, as most lines are no definition.
    if !keyworded {
        let named = |b: u8| b.is_ascii_alphabetic() || b == b'_' || b >= 0x80;
        if !rest
            .first()
            .is_some_and(|&b| named(b) || matches!(b, b'@' | b'[' | b'<'))
            || !may_start(lang, word, rest)
        {
            return None;
        }
    }
    let t = tokens(rest);
    match lang {
        Lang::Rust => rust_def(&t),
        Lang::Go => go_def(&t),
        Lang::TypeScript | Lang::JavaScript | Lang::Component => js_def(&t, member),
        Lang::Java | Lang::CSharp => typed_def(&t, start > 0, false, lang),
        Lang::C => typed_def(&t, true, start == 0, lang),
        // Not a constructor: a line cannot tell one from a call (`Text(`) in a body.
        Lang::Dart => typed_def(&t, true, false, lang),
        Lang::Kotlin | Lang::Swift | Lang::Php => keyword_def(&t),
        Lang::Zig => zig_def(&t),
        Lang::Perl => perl_def(&t),
        Lang::R => r_def(&t),
        Lang::Shell => shell_def(rest),
        Lang::PowerShell => powershell_def(rest, false),
        _ => indented_def(lang, &t, rest),
    }
}

/// The definition a line of a language whose spans go by indentation starts (`spans.rs`,
/// `python_spans` and `indent_spans`), from its tokens `t` or, for the Lisps, whose names hold
/// `-` and `?`, its code.
pub(super) fn indented_def(lang: Lang, t: &[&str], code: &[u8]) -> Option<(&'static str, String)> {
    match lang {
        Lang::Python => python_def(t),
        Lang::GdScript => gdscript_def(t),
        Lang::Ruby => ruby_def(t),
        Lang::Scala => scala_def(t),
        Lang::Elixir => elixir_def(t),
        Lang::Lua => lua_def(t),
        Lang::Haskell => haskell_def(t),
        Lang::Julia => julia_def(t),
        Lang::Ml => ml_def(t),
        Lang::Erlang => erlang_def(t),
        Lang::Lisp => lisp_def(code),
        Lang::Pascal => pascal_def(t),
        Lang::Ada => ada_def(t),
        Lang::Vhdl => vhdl_def(t),
        Lang::Verilog => verilog_def(t),
        Lang::Fortran => fortran_def(t),
        Lang::Basic => basic_def(t),
        Lang::Vim => vim_def(t),
        Lang::Lean => lean_def(t),
        Lang::Coffee => coffee_def(t),
        _ => None,
    }
}

/// Whether `line`, whose first word is `word`, may start a definition of `lang`: one of Kotlin,
/// Swift or PHP starts with its keyword or a modifier, or with no word (an annotation); one of
/// Java, C#, C or Dart not with a statement's keyword, and it holds a `(`, a type's keyword or
/// (Dart) a getter's `get`.
fn may_start(lang: Lang, word: &[u8], line: &[u8]) -> bool {
    let is = |list: &[&str]| list.iter().any(|w| w.as_bytes() == word);
    match lang {
        Lang::Kotlin | Lang::Swift | Lang::Php => {
            word.is_empty() || is(KEYWORD_STARTS) || is(KEYWORD_MODIFIERS)
        }
        _ => {
            let d = typed(lang);
            (!(is(STATEMENTS) || is(d.keywords)) || is(d.modifiers))
                && (memchr::memchr(b'(', line).is_some()
                    || d.types
                        .iter()
                        .any(|(w, _)| memchr::memmem::find(line, w.as_bytes()).is_some())
                    || (lang == Lang::Dart && memchr::memmem::find(line, b" get ").is_some()))
        }
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

/// A GDScript function (`func name(`, `static func`), inner class (`class Name:`, `class Name
/// extends Base:`) or enum (`enum Name {`), after annotations (`@rpc("any_peer")`). A file's
/// `class_name` and a `signal` are none.
pub(super) fn gdscript_def(t: &[&str]) -> Option<(&'static str, String)> {
    let mut i = 0;
    while t.get(i) == Some(&"@") {
        i += 2;
        if t.get(i) == Some(&"(") {
            i += t[i..].iter().position(|x| *x == ")")? + 1;
        }
    }
    if t.get(i) == Some(&"static") {
        i += 1;
    }
    let name = t.get(i + 1).filter(|n| is_name(n)).map(|n| n.to_string());
    match t.get(i).copied()? {
        "func" => Some(("function", name?)),
        "class" => Some(("class", name?)),
        "enum" => Some(("enum", name?)),
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
    past_close(t, 0).map_or(&[], |k| &t[k..])
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
        Some("(") => past_close(v, 0).is_some_and(|k| {
            let rest = &v[k..];
            rest.starts_with(&["=", ">"])
                || (rest.first() == Some(&":") && rest.windows(2).any(|w| w == ["=", ">"]))
        }),
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
/// Words that start a statement, never a definition, in Java, C#, C and Dart (each adds its own).
const STATEMENTS: &[&str] = &[
    "if", "for", "while", "switch", "catch", "return", "new", "throw", "else", "do", "try", "case",
    "this",
];
const JAVA_KEYWORDS: &[&str] = &["super", "assert", "yield", "instanceof"];
const CSHARP_MODIFIERS: &[&str] = &[
    "public",
    "private",
    "protected",
    "internal",
    "static",
    "readonly",
    "sealed",
    "abstract",
    "virtual",
    "override",
    "async",
    "extern",
    "unsafe",
    "partial",
    "new",
    "const",
    "volatile",
    "required",
    "file",
];
const CSHARP_KEYWORDS: &[&str] = &[
    "foreach",
    "base",
    "using",
    "lock",
    "fixed",
    "checked",
    "unchecked",
    "nameof",
    "typeof",
    "sizeof",
    "await",
    "yield",
    "is",
    "as",
    "var",
    "when",
    "get",
    "set",
    "init",
];
const C_MODIFIERS: &[&str] = &[
    "static",
    "inline",
    "extern",
    "const",
    "constexpr",
    "consteval",
    "constinit",
    "virtual",
    "explicit",
    "friend",
    "volatile",
    "register",
    "typedef",
    "mutable",
    "thread_local",
    "__inline",
    "__forceinline",
    "public",
    "private",
    "protected",
];
const C_KEYWORDS: &[&str] = &[
    "delete",
    "sizeof",
    "alignof",
    "decltype",
    "typeid",
    "static_assert",
    "defined",
    "goto",
    "co_return",
    "co_await",
    "co_yield",
    "operator",
];

const DART_MODIFIERS: &[&str] = &[
    "static",
    "final",
    "const",
    "late",
    "external",
    "abstract",
    "factory",
    "covariant",
    "sealed",
    "base",
    "interface",
];
const DART_KEYWORDS: &[&str] = &[
    "await", "yield", "assert", "var", "is", "as", "in", "on", "super", "rethrow", "Function",
];

/// The modifiers, the keywords besides `STATEMENTS` and the type keywords (with the kind each
/// starts) of a language whose methods put their type before their name and start with no
/// keyword.
struct Typed {
    modifiers: &'static [&'static str],
    keywords: &'static [&'static str],
    types: &'static [(&'static str, &'static str)],
}

impl Typed {
    fn keyword(&self, w: &str) -> bool {
        STATEMENTS.contains(&w) || self.keywords.contains(&w)
    }
}

fn typed(lang: Lang) -> Typed {
    match lang {
        Lang::CSharp => Typed {
            modifiers: CSHARP_MODIFIERS,
            keywords: CSHARP_KEYWORDS,
            types: &[
                ("class", "class"),
                ("record", "class"),
                ("struct", "struct"),
                ("interface", "interface"),
                ("enum", "enum"),
            ],
        },
        Lang::C => Typed {
            modifiers: C_MODIFIERS,
            keywords: C_KEYWORDS,
            types: &[
                ("class", "class"),
                ("struct", "struct"),
                ("union", "struct"),
                ("enum", "enum"),
            ],
        },
        Lang::Dart => Typed {
            modifiers: DART_MODIFIERS,
            keywords: DART_KEYWORDS,
            types: &[
                ("class", "class"),
                ("mixin", "class"),
                ("extension", "impl"),
                ("enum", "enum"),
            ],
        },
        _ => Typed {
            modifiers: JAVA_MODIFIERS,
            keywords: JAVA_KEYWORDS,
            types: &[
                ("class", "class"),
                ("record", "class"),
                ("interface", "interface"),
                ("enum", "enum"),
            ],
        },
    }
}

/// Whether the kind of the definition around a line makes that line's definitions its
/// members (for C and C++ and Dart, a line outside any definition too).
pub(super) fn holds_members(lang: Lang, around: Option<&str>) -> bool {
    match around {
        None => matches!(lang, Lang::C | Lang::Dart),
        Some(kind) => matches!(kind, "class" | "interface" | "enum" | "struct" | "impl"),
    }
}

/// A macro's name: capitals, digits and `_`, at least two bytes.
fn is_macro(t: &str) -> bool {
    t.len() > 1
        && t.bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        && t.bytes().any(|b| b.is_ascii_uppercase())
}

/// The index just past the bracket that closes the one at `open` (`(`, `[` or `<`), if on the line.
fn past_close(t: &[&str], open: usize) -> Option<usize> {
    let (o, c) = match t[open] {
        "(" => ("(", ")"),
        "[" => ("[", "]"),
        _ => ("<", ">"),
    };
    let mut depth = 0usize;
    for (k, x) in t.iter().enumerate().skip(open) {
        if *x == o {
            depth += 1;
        } else if *x == c {
            depth -= 1;
            if depth == 0 {
                return Some(k + 1);
            }
        }
    }
    None
}

/// A type (class, record, interface, struct, enum; a namespace is none, as a package is none)
/// or, `in_type`, a method or
/// constructor of Java, C# or C and C++ (for C, a function too): modifiers, annotations and
/// attributes, then `[<T>] [Type] name(` with the line leaving its parameters open or ending
/// them (below); not a field set by a call, not an enum constant. What C and C++ add: functions
/// outside any type, and, where `bare` (a class's constructor, or a function at the line's
/// start with its type on the line above), named with no type before them unless in capitals
/// (a macro's call); pointer and reference returns (`char
/// *name(`); qualified names (`Foo::bar(`); `template <…>`, `__attribute__((…))` and macros
/// before a definition; a type keyword only on a line with no parentheses. C#'s: type
/// parameters after the name (`Get<T>(`), attributes (`[Fact]`), bodies of one expression.
/// Dart's: functions outside any type, getters (`int get size =>`), nullable types (`int?
/// f(`), named constructors (`factory Foo.fromJson(`, only where `bare`: in a body `Text(` is
/// a call), bodies of one expression, `async` bodies and initialiser lists.
pub(super) fn typed_def(
    t: &[&str],
    in_type: bool,
    bare: bool,
    lang: Lang,
) -> Option<(&'static str, String)> {
    let d = typed(lang);
    let (c, cs, dart) = (lang == Lang::C, lang == Lang::CSharp, lang == Lang::Dart);
    if c && t.first() == Some(&"#") {
        return None; // the preprocessor's `#define F(x)`, `#if HAS(x)`
    }
    let mut i = 0;
    loop {
        match t.get(i).copied()? {
            "@" if t.get(i + 1) != Some(&"interface") => {
                i += 2;
                if t.get(i) == Some(&"(") {
                    i += t[i..].iter().position(|x| *x == ")")? + 1;
                }
            }
            "[" if cs || c => i = past_close(t, i)?, // `[Fact]`, `[[nodiscard]]`
            "template" if c && t.get(i + 1) == Some(&"<") => i = past_close(t, i + 1)?,
            "__attribute__" | "__declspec" | "alignas" if c && t.get(i + 1) == Some(&"(") => {
                i = past_close(t, i + 1)?
            }
            m if d.modifiers.contains(&m) => i += 1,
            "mixin" if dart && t.get(i + 1) == Some(&"class") => i += 1,
            m if c && is_macro(m) && t.get(i + 1).is_some_and(|n| is_name(n)) => i += 1,
            _ => break,
        }
    }
    let name_at = |j: usize| {
        t.get(j)
            .filter(|n| is_name(n) && !d.keyword(n))
            .map(|n| n.to_string())
    };
    if t.get(i) == Some(&"@") {
        return Some(("interface", name_at(i + 2)?));
    }
    if let Some(&(_, kind)) = d.types.iter().find(|(w, _)| t.get(i) == Some(w)) {
        if !c {
            let record_struct = t.get(i + 1) == Some(&"struct"); // C#'s `record struct P`
            return Some((kind, name_at(i + 1 + usize::from(record_struct))?));
        }
        if t.contains(&"(") {
            return None; // `struct stat *find(…)` is a function, `enum e x = f();` a variable
        }
        let mut j = i + 1; // `enum class Color`, `class FMT_API format_error`
        while t
            .get(j)
            .is_some_and(|x| matches!(*x, "class" | "struct") || is_macro(x))
        {
            j += 1;
        }
        let name = name_at(j)?;
        // A name after it makes a variable of that type (`struct point origin;`).
        let variable = t.get(j + 1).is_some_and(|n| is_name(n) && *n != "final");
        return (!variable).then_some((kind, name));
    }
    if dart && in_type {
        // A getter: `int get size => n;`, `Widget get child {`.
        let g = t
            .iter()
            .skip(i + 1)
            .position(|x| *x == "get")
            .map(|g| g + i + 1);
        if let Some(g) = g.filter(|&g| !t[i..g].iter().any(|x| matches!(*x, "(" | "="))) {
            if matches!(t.get(g + 2).copied(), Some("=" | "{")) {
                return name_at(g + 1).map(|n| ("function", n));
            }
        }
    }
    let paren = t.iter().position(|x| *x == "(")?;
    if !in_type || paren <= i || d.keyword(t[i]) || t[i..paren].contains(&"=") {
        return None;
    }
    let mut at = paren - 1;
    if (cs || dart) && t[at] == ">" {
        at = open_of(t, i, at)?.checked_sub(1)?;
    }
    let name = name_at(at)?;
    let mut first = at; // where a qualified name starts
    while c && first >= i + 3 && t[first - 1] == ":" && t[first - 2] == ":" && is_name(t[first - 3])
    {
        first -= 3;
    }
    if dart && first >= i + 2 && t[first - 1] == "." && is_name(t[first - 2]) {
        first -= 2; // a named constructor, `Foo.fromJson(`
    }
    // A method has a type before its name; a constructor is named as its class, capitalised
    // (a call statement is neither).
    let typed = first > i;
    if typed {
        let before = t[first - 1];
        let pointer = c && matches!(before, "*" | "&");
        let arrow = c && before == ">" && first >= 2 && t[first - 2] == "-"; // `p->f(`
        let nullable = dart && before == "?";
        if arrow || !(is_name(before) || before == ">" || before == "]" || pointer || nullable) {
            return None;
        }
    } else if dart {
        if !bare || !t[first].starts_with(|c: char| c.is_ascii_uppercase()) {
            return None;
        }
    } else if c {
        if is_macro(&name) || !bare {
            return None;
        }
    } else if !name.starts_with(|c: char| c.is_ascii_uppercase()) {
        return None;
    }
    let Some(close) = past_close(t, paren) else {
        return Some(("function", name)); // the parameters go on below
    };
    // What follows them: a body opened here, even closed here (`int size() { return n; }`),
    // a `throws` clause, or nothing when the body opens on a later line (jackson-core writes
    // every method so); then only after a type or a modifier, as an enum constant `FAST("f")`
    // has neither. A body-less method ends with `;`. C# adds bodies of one expression (`=>
    // x;`), a constructor's call of another and type constraints; C++ qualifiers (`const`,
    // `noexcept`, `-> T`), initialisers (`: a(x)`) and `= default;`.
    let ends = match t.get(close).copied() {
        None => typed || i > 0 || c,
        Some("{" | "throws") => true,
        Some(";") => typed || dart,
        Some("=") if cs || dart => t.get(close + 1) == Some(&">"),
        Some("async" | "sync" | ":") if dart => true,
        Some(":" | "where") if cs => true, // `Cart(int n) : base(n)`, `Get<T>() where T : new()`
        Some("=") if c => typed,
        _ => t.last() == Some(&"{") || (c && t.last() != Some(&";")),
    };
    ends.then_some(("function", name))
}

/// Where the type parameters closed at `close` (`>`) open, searching back to `from`.
fn open_of(t: &[&str], from: usize, close: usize) -> Option<usize> {
    let mut depth = 0usize;
    (from..=close).rev().find(|&k| {
        match t[k] {
            ">" => depth += 1,
            "<" => depth = depth.saturating_sub(1),
            _ => {}
        }
        depth == 0
    })
}

/// The words a Kotlin, Swift or PHP definition's keyword may be (`keyword_def`).
const KEYWORD_STARTS: &[&str] = &[
    "fun",
    "func",
    "function",
    "init",
    "deinit",
    "class",
    "object",
    "actor",
    "interface",
    "protocol",
    "struct",
    "enum",
    "trait",
    "extension",
];

/// Words before a Kotlin, Swift or PHP definition's keyword.
const KEYWORD_MODIFIERS: &[&str] = &[
    "public",
    "private",
    "protected",
    "internal",
    "open",
    "final",
    "abstract",
    "override",
    "suspend",
    "inline",
    "infix",
    "operator",
    "tailrec",
    "external",
    "data",
    "sealed",
    "inner",
    "value",
    "annotation",
    "lateinit",
    "const",
    "expect",
    "actual",
    "companion",
    "fileprivate",
    "static",
    "mutating",
    "nonmutating",
    "convenience",
    "required",
    "lazy",
    "dynamic",
    "nonisolated",
    "indirect",
    "prefix",
    "postfix",
    "readonly",
];

/// A definition of a language whose definitions start with a keyword (Kotlin, Swift, PHP):
/// `fun`, `func` or `function`, Swift's `init`, or a type (class, interface, object, struct,
/// enum, protocol, extension, trait, actor), after modifiers and annotations.
pub(super) fn keyword_def(t: &[&str]) -> Option<(&'static str, String)> {
    let mut i = 0;
    loop {
        match t.get(i).copied()? {
            "@" => {
                i += 2;
                if t.get(i) == Some(&"(") {
                    i = past_close(t, i)?;
                }
            }
            // Swift's `class func`, Kotlin's `enum class` and `fun interface`
            "class" | "enum" | "fun"
                if matches!(
                    t.get(i + 1).copied(),
                    Some("func" | "var" | "let" | "class" | "interface")
                ) =>
            {
                i += 1
            }
            m if KEYWORD_MODIFIERS.contains(&m) => i += 1,
            _ => break,
        }
    }
    let kind = match t.get(i).copied()? {
        "fun" | "func" | "function" => {
            // `fun <T> List<T>.second(`, `func max<T>(`, `function &refs(`
            let paren = t.iter().skip(i).position(|x| *x == "(")? + i;
            let mut at = paren.checked_sub(1)?;
            if t[at] == ">" {
                at = open_of(t, i, at)?.checked_sub(1)?;
            }
            return (at > i && is_name(t[at])).then(|| ("function", t[at].to_string()));
        }
        "init" | "deinit"
            if matches!(t.get(i + 1).copied(), Some("(" | "?" | "!" | "{") | None) =>
        {
            return Some(("function", t[i].to_string()));
        }
        "class" | "object" | "actor" => "class",
        "interface" | "protocol" => "interface",
        "struct" => "struct",
        "enum" => "enum",
        "trait" => "trait",
        "extension" => "impl",
        _ => return None,
    };
    t.get(i + 1)
        .filter(|n| is_name(n))
        .map(|n| (kind, n.to_string()))
}

/// A method named by an operator (Ruby's `<=>` and `[]=`, Scala's `++` and `+:`): the
/// punctuation tokens from `from` on, up to three, before any of `stops`.
fn operator_name(t: &[&str], from: usize, stops: &[&str]) -> Option<String> {
    let op: String = t[from..]
        .iter()
        .take_while(|w| w.len() == 1 && !is_name(w) && !stops.contains(w))
        .take(3)
        .copied()
        .collect();
    (!op.is_empty()).then_some(op)
}

/// What may stand before a Ruby `def` on its line (`private def reset`).
const RUBY_MODIFIERS: &[&str] = &[
    "private",
    "protected",
    "public",
    "private_class_method",
    "public_class_method",
    "module_function",
];

/// A Ruby definition: a method (`def name`, `def self.name`, `def name=(v)`, an operator such
/// as `def <=>(other)`), after modifiers, or a class (`class Foo::Bar < Base`, its last name),
/// not `class << self`. A module is none, as a Java package is none.
pub(super) fn ruby_def(t: &[&str]) -> Option<(&'static str, String)> {
    let i = t.iter().take_while(|w| RUBY_MODIFIERS.contains(w)).count();
    match t.get(i).copied()? {
        "def" => {
            let mut at = i + 1;
            if t.get(at + 1) == Some(&".") {
                at += 2; // `def self.name`, `def Foo.name`
            }
            let name = *t.get(at)?;
            if is_name(name) {
                // `valid?`, `save!` and `name=` are named by their word: calls of them read so.
                return Some(("function", name.to_string()));
            }
            operator_name(t, at, &["(", ";"]).map(|op| ("function", op))
        }
        "class" => {
            let at = path_end(t, i + 1, &[":", ":"]);
            t.get(at)
                .filter(|n| is_name(n) && t.get(i + 1).is_some_and(|f| is_name(f)))
                .map(|n| ("class", n.to_string()))
        }
        _ => None,
    }
}

/// The keywords a Scala definition starts with, after its modifiers.
const SCALA_STARTS: &[&str] = &["def", "class", "object", "trait", "enum"];

/// What may stand before a Scala definition's keyword (`final case class`, `private[cats]
/// def`, `package object`).
const SCALA_MODIFIERS: &[&str] = &[
    "private",
    "protected",
    "final",
    "sealed",
    "abstract",
    "override",
    "implicit",
    "lazy",
    "case",
    "inline",
    "transparent",
    "opaque",
    "open",
    "infix",
    "package",
];

/// A Scala definition: a method (`def name`, or an operator's `def ++[B]`), a class, case
/// class or object, a trait or an enum, after annotations and modifiers. A `val`, a `type` and
/// a `package` are none.
pub(super) fn scala_def(t: &[&str]) -> Option<(&'static str, String)> {
    let mut i = 0;
    loop {
        match t.get(i).copied()? {
            "@" => {
                i += 2;
                while t.get(i) == Some(&".") {
                    i += 2; // `@scala.annotation.tailrec`
                }
                if t.get(i) == Some(&"(") {
                    i = past_close(t, i)?;
                }
            }
            "private" | "protected" if t.get(i + 1) == Some(&"[") => i = past_close(t, i + 1)?,
            "package" if t.get(i + 1) != Some(&"object") => return None,
            m if SCALA_MODIFIERS.contains(&m) => i += 1,
            _ => break,
        }
    }
    let kind = match t.get(i).copied()? {
        "def" => {
            let name = *t.get(i + 1)?;
            if is_name(name) {
                return Some(("function", name.to_string()));
            }
            return operator_name(t, i + 1, &["(", "[", "="]).map(|op| ("function", op));
        }
        "class" | "object" => "class",
        "trait" => "trait",
        "enum" => "enum",
        _ => return None,
    };
    t.get(i + 1)
        .filter(|n| is_name(n))
        .map(|n| (kind, n.to_string()))
}

/// An Elixir definition: a function or macro (`def`, `defp`, `defmacro`, `defguard`,
/// `defdelegate`, Nx's `defn`, a name's `?` or `!` left off as Ruby's is), a module (its last
/// alias: `defmodule Shop.Cart do` is `Cart`), a protocol, or an implementation (named by its
/// `for:` type, else by its protocol).
pub(super) fn elixir_def(t: &[&str]) -> Option<(&'static str, String)> {
    let last_alias = |from: usize| {
        t.get(dotted_end(t, from))
            .filter(|n| capitalised(n))
            .map(|n| n.to_string())
    };
    match t.first().copied()? {
        // `defmacro unquote(verb)(…)` is named when it is compiled.
        "def" | "defp" | "defmacro" | "defmacrop" | "defguard" | "defguardp" | "defdelegate"
        | "defn" | "defnp" => t
            .get(1)
            .filter(|n| is_name(n) && **n != "unquote")
            .map(|n| ("function", n.to_string())),
        "defmodule" => last_alias(1).map(|n| ("class", n)),
        "defprotocol" => last_alias(1).map(|n| ("interface", n)),
        "defimpl" => {
            let target = t.windows(2).position(|w| w == ["for", ":"]);
            last_alias(target.map_or(1, |f| f + 2)).map(|n| ("impl", n))
        }
        _ => None,
    }
}

/// A type's, a module's or a constructor's name: it starts with a capital.
fn capitalised(n: &str) -> bool {
    n.starts_with(|c: char| c.is_ascii_uppercase())
}

/// The place of the last name of the dotted name at `at` (`Shop.Cart`, Haskell's `QC.Gen`).
fn dotted_end(t: &[&str], at: usize) -> usize {
    path_end(t, at, &["."])
}

/// The place of the last name of the path at `at` whose names `sep` joins (`.`, or Ruby's and
/// Perl's `::` as two tokens).
fn path_end(t: &[&str], mut at: usize, sep: &[&str]) -> usize {
    let step = sep.len() + 1;
    while t
        .get(at + 1..at + 1 + step)
        .is_some_and(|w| w[..sep.len()] == *sep && is_name(w[sep.len()]))
    {
        at += step;
    }
    at
}

/// A Lua function: `function name(`, `local function name(`, `function M.sub.name(` and
/// `function M:name(` (its last name), or a function bound by assignment (`M.name = function(`,
/// `local name = function(`, a table's `name = function(`).
pub(super) fn lua_def(t: &[&str]) -> Option<(&'static str, String)> {
    let t = t.strip_prefix(&["local"]).unwrap_or(t);
    let named = |end: usize| {
        (end > 0
            && is_name(t[end - 1])
            && t[..end - 1]
                .iter()
                .all(|w| is_name(w) || matches!(*w, "." | ":")))
        .then(|| ("function", t[end - 1].to_string()))
    };
    if t.first() == Some(&"function") {
        let paren = t.iter().position(|w| *w == "(")?;
        return named(paren).filter(|_| paren > 1);
    }
    let eq = t.iter().position(|w| *w == "=")?;
    (t.get(eq + 1) == Some(&"function"))
        .then(|| named(eq))
        .flatten()
}

/// Haskell's words that start a top-level line but no definition.
const HASKELL_NOT_DEFS: &[&str] = &[
    "module", "import", "infix", "infixl", "infixr", "deriving", "default", "foreign", "where",
    "let", "in", "if", "then", "else", "case", "of", "do",
];

/// A Haskell definition, read from a line of a declaration (at the top level, or in a class or
/// instance body): a type (`data`, `newtype`, `type`, `type family`), a class, an instance (by
/// its type: `instance Show a => Show (Tree a)` is `Tree`), or a function or value by its
/// signature or an equation (`name :: …`, `name x y = …`, `(<+>) :: …`, ``x `op` y = …``,
/// `x <+> y = …`). A line that goes on an equation of the name above is read as that name too
/// (the caller keeps them in one definition).
pub(super) fn haskell_def(t: &[&str]) -> Option<(&'static str, String)> {
    let first = *t.first()?;
    let kind = match first {
        "data" | "newtype" | "type" => "type",
        "class" => "class",
        "instance" => {
            let from = t.iter().position(|w| *w == "=").map_or(1, |e| e + 2);
            let rest = &t[from.min(t.len())..];
            // the class, dotted or not (`Monad.Monad`), then the type
            let class = dotted_end(rest, rest.iter().position(|n| capitalised(n))?);
            return rest[class + 1..]
                .iter()
                .find(|n| capitalised(n))
                .map(|n| ("impl", n.to_string()));
        }
        "(" => return operator_name(t, 1, &[")"]).map(|op| ("function", op)),
        w if HASKELL_NOT_DEFS.contains(&w)
            || !is_name(w)
            || w.starts_with('$')
            || capitalised(w) =>
        {
            return None;
        }
        // ``x `op` y = …``, `x <+> y = …`; else the name of a signature, an equation or a guard
        w => {
            let name = match t.get(1).copied() {
                Some("`") => t.get(2).filter(|n| is_name(n)).map(|n| n.to_string()),
                Some(p) if p.len() == 1 && "#%&*+./<>?\\^-".contains(p) => {
                    operator_name(t, 1, &["("])
                }
                _ => Some(w.to_string()),
            };
            return name.map(|n| ("function", n));
        }
    };
    // `class (Monad m) => MonadState s m`, `type family F a`, `data instance D Int`
    let from = t
        .iter()
        .position(|w| *w == "=")
        .filter(|_| kind == "class")
        .map_or(1, |e| e + 2);
    t[from.min(t.len())..]
        .iter()
        .find(|n| capitalised(n))
        .map(|n| (kind, n.to_string()))
}

/// A Zig definition: a function (`pub fn name(`, `export fn`, `inline fn`) or a type bound to a
/// name (`pub const Point = struct {`, `packed struct(u32)`, `enum(u8)`, `union(enum)`,
/// `opaque`). Another `const` is none.
pub(super) fn zig_def(t: &[&str]) -> Option<(&'static str, String)> {
    let i = t
        .iter()
        .take_while(|w| matches!(**w, "pub" | "export" | "extern" | "inline" | "noinline"))
        .count();
    let name = t.get(i + 1).filter(|n| is_name(n))?.to_string();
    match t.get(i).copied()? {
        "fn" => Some(("function", name)),
        "const" | "var" if t.get(i + 2) == Some(&"=") => {
            let ty = t[i + 3..]
                .iter()
                .find(|w| !matches!(**w, "extern" | "packed"))?;
            match *ty {
                "struct" | "union" | "opaque" => Some(("struct", name)),
                "enum" => Some(("enum", name)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// A Perl sub (`sub name {`, `sub Foo::name`, by its last name). A package is none, as a Ruby
/// module is none.
pub(super) fn perl_def(t: &[&str]) -> Option<(&'static str, String)> {
    if t.first() != Some(&"sub") {
        return None;
    }
    t.get(path_end(t, 1, &[":", ":"]))
        .filter(|n| is_name(n))
        .map(|n| ("function", n.to_string()))
}

/// A shell function: `name() {`, `name ()`, `function name {`, `function name() (`. Its name
/// may hold `-`, `.` and `:` (`nvm_ls-remote`, `_acme::run`), so it is read from the code.
pub(super) fn shell_def(code: &[u8]) -> Option<(&'static str, String)> {
    let rest = code.trim_ascii_start();
    let name = match rest.strip_prefix(b"function") {
        Some(after) if after.first().is_some_and(u8::is_ascii_whitespace) => {
            command_name(after.trim_ascii_start()).0
        }
        _ => {
            let (name, after) = command_name(rest);
            let parens = after.trim_ascii_start().strip_prefix(b"(")?;
            parens
                .trim_ascii_start()
                .starts_with(b")")
                .then_some(name)?
        }
    };
    Some(("function", name_of(name)?))
}

/// A PowerShell definition: a function (`function Verb-Noun {`, `function global:Name(`, a
/// `filter`, a `workflow` or a DSC `configuration`), a class or an enum, and in a class's body
/// (`members`) a method or constructor (`[string] Name(`, `static [void] Name(`, `Name(`).
/// Keywords are read in any case.
pub(super) fn powershell_def(code: &[u8], members: bool) -> Option<(&'static str, String)> {
    let rest = code.trim_ascii_start();
    let (word, after) = letters(rest);
    let kind = if any_case(word, &["function", "filter", "workflow", "configuration"]) {
        "function"
    } else if any_case(word, &["class"]) {
        "class"
    } else if any_case(word, &["enum"]) {
        "enum"
    } else if members {
        return powershell_method(rest);
    } else {
        return None;
    };
    if !after.first().is_some_and(u8::is_ascii_whitespace) {
        return None;
    }
    let (name, _) = command_name(after.trim_ascii_start());
    // a scope (`global:`, `script:`) is no part of the name
    let name = name.rsplit(|&b| b == b':').next().unwrap_or(name);
    Some((kind, name_of(name)?))
}

/// A PowerShell class member that is a method or a constructor: modifiers, a type in brackets,
/// then a name and `(`.
fn powershell_method(line: &[u8]) -> Option<(&'static str, String)> {
    let mut rest = line;
    loop {
        let (word, after) = letters(rest);
        if !any_case(word, &["static", "hidden"]) {
            break;
        }
        rest = after.trim_ascii_start();
    }
    if rest.first() == Some(&b'[') {
        let mut depth = 0usize;
        let close = rest.iter().position(|&b| {
            depth = match b {
                b'[' => depth + 1,
                b']' => depth - 1,
                _ => depth,
            };
            depth == 0
        })?;
        rest = rest[close + 1..].trim_ascii_start();
    }
    let n = rest
        .iter()
        .take_while(|&&b| is_ident(b) && b != b'$')
        .count();
    let (name, after) = rest.split_at(n);
    if !after.trim_ascii_start().starts_with(b"(") {
        return None;
    }
    Some(("method", name_of(name)?))
}

/// The letters `s` starts with, as a word, and what follows them.
fn letters(s: &[u8]) -> (Option<&str>, &[u8]) {
    let n = s
        .iter()
        .position(|b| !b.is_ascii_alphabetic())
        .unwrap_or(s.len());
    (std::str::from_utf8(&s[..n]).ok(), &s[n..])
}

/// `name` as a definition's name, if it starts as one.
fn name_of(name: &[u8]) -> Option<String> {
    name.first()
        .is_some_and(|&b| b.is_ascii_alphabetic() || b == b'_' || b >= 0x80)
        .then(|| String::from_utf8_lossy(name).into_owned())
}

/// A command's name at the start of `s` (letters, digits, `_`, `-`, `.`, `:`), and what follows.
fn command_name(s: &[u8]) -> (&[u8], &[u8]) {
    let n = s
        .iter()
        .take_while(|&&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b':'))
        .count();
    s.split_at(n)
}

/// An R function bound to a name: `name <- function(`, `name = function(` (an R6 class's
/// member too), `name <<- function(`, or R 4.1's `\(x)`. A dot is part of an R name
/// (`is.valid`, the S3 method `mutate.data.frame`).
pub(super) fn r_def(t: &[&str]) -> Option<(&'static str, String)> {
    let end = dotted_end(t, 0);
    let value = match t.get(end + 1..)? {
        ["<", "<", "-", v @ ..] | ["<", "-", v @ ..] | ["=", v @ ..] => v,
        _ => return None,
    };
    (is_name(t[0]) && matches!(value, ["function", "(", ..] | ["\\", "(", ..]))
        .then(|| ("function", t[..=end].concat()))
}

/// A Julia definition: a function or macro (`function name(`, `function Base.show(`, by its
/// last name; `function name end`), a one-line function (`area(c::Circle) = π * c.r^2`), a
/// struct (`mutable struct`, `Base.@kwdef struct`) or an abstract type. A module is none, as a
/// Ruby module is none.
pub(super) fn julia_def(t: &[&str]) -> Option<(&'static str, String)> {
    // `@kwdef struct`, `Base.@kwdef mutable struct`
    let mut i = 0;
    while let Some(at) = t
        .get(i..)?
        .iter()
        .position(|w| *w == "@")
        .filter(|&a| a <= 2)
    {
        i += at + 2;
    }
    let t = t.get(i..)?;
    let kind = match t.first().copied()? {
        "function" | "macro" => {
            let end = t
                .iter()
                .position(|w| matches!(*w, "(" | "{"))
                .unwrap_or(t.len());
            let name = dotted_end(t, 1);
            return (name < end && is_name(t[name])).then(|| ("function", t[name].to_string()));
        }
        "mutable" if t.get(1) == Some(&"struct") => return julia_type(&t[1..], "struct"),
        "struct" => "struct",
        "abstract" if t.get(1) == Some(&"type") => return julia_type(&t[1..], "type"),
        _ => {
            // `name(args) = …`, `name(args)::T = …`, `name(args) where T = …`; not `==`
            let name = dotted_end(t, 0);
            if !is_name(t[name]) || t.get(name + 1) != Some(&"(") {
                return None;
            }
            let close = past_close(t, name + 1)?;
            let eq = t[close..].iter().position(|w| *w == "=")? + close;
            let typed = t[close..eq]
                .first()
                .is_none_or(|w| matches!(*w, ":" | "where"));
            return (typed && t.get(eq + 1) != Some(&"=") && !t[close..eq].contains(&"("))
                .then(|| ("function", t[name].to_string()));
        }
    };
    julia_type(t, kind)
}

/// The type `struct Name{T} <: Super` or `type Name` names.
fn julia_type(t: &[&str], kind: &'static str) -> Option<(&'static str, String)> {
    t.get(1)
        .filter(|n| is_name(n))
        .map(|n| (kind, n.to_string()))
}

/// What may stand between an OCaml or F# `let` (or `member`) and its name.
const ML_MODIFIERS: &[&str] = &[
    "rec", "inline", "private", "internal", "public", "mutable", "static", "override", "default",
    "abstract",
];

/// An OCaml or F# definition: a function or value (`let name`, `let rec`, `and name`, an
/// operator's `let (+)`, a signature's `val name`, `external`), a type (`type 'a tree`, `type
/// Shape<'T> =`), a module (`module Name =`, `module Name : sig`; F#'s `module Name` heading a
/// file is none, as a namespace is none) or a class, and in a type an F# `member`, `override`
/// or `new`.
pub(super) fn ml_def(t: &[&str]) -> Option<(&'static str, String)> {
    let i = usize::from(t.first() == Some(&"static"));
    let kind = match t.get(i).copied()? {
        "let" | "and" | "val" | "external" | "member" | "override" | "default" | "abstract" => {
            "function"
        }
        "new" if t.get(i + 1) == Some(&"(") => return Some(("function", "new".to_string())),
        "type" => "type",
        "module" if t.iter().any(|w| matches!(*w, "=" | ":")) => "module",
        "class" => "class",
        _ => return None,
    };
    let mut at = i + 1;
    while t
        .get(at)
        .is_some_and(|w| ML_MODIFIERS.contains(w) || *w == "member")
    {
        at += 1;
    }
    // `member this.Area`, `member _.Area`: the name after the self's
    if kind == "function"
        && t.get(at + 1) == Some(&".")
        && t.get(at + 2).is_some_and(|n| is_name(n))
    {
        at += 2;
    }
    // a type's parameters: `'a`, `('a, 'b)`
    if kind == "type" {
        if t.get(at) == Some(&"(") {
            at = past_close(t, at)?;
        } else if t.get(at) == Some(&"'") {
            at += 2;
        }
    }
    match t.get(at).copied()? {
        "(" if kind == "function" => operator_name(t, at + 1, &[")"]).map(|op| (kind, op)),
        n if is_name(n) && n != "_" => Some((kind, n.to_string())),
        _ => None,
    }
}

/// An Erlang function, named by each of its clauses (`name(Args) ->`, at the top level); the
/// caller keeps a function's clauses in one definition, as a Haskell function's equations.
pub(super) fn erlang_def(t: &[&str]) -> Option<(&'static str, String)> {
    let name = t
        .first()
        .filter(|n| n.starts_with(|c: char| c.is_ascii_lowercase()))?;
    (t.get(1) == Some(&"(")).then(|| ("function", name.to_string()))
}

/// A Lisp definition, read from a line's code (its names hold `-`, `?`, `!`, `*`, `>`): a
/// function or macro (Clojure's `(defn name`, `(defmacro`, `(defmethod`; Emacs and Common
/// Lisp's `(defun`; Scheme's and Racket's `(define (name args)`), a type (`(defrecord`,
/// `(deftype`, `(defstruct`, `(defclass`) or a protocol. A value's `(def x` is none, as a `val`
/// is none.
pub(super) fn lisp_def(code: &[u8]) -> Option<(&'static str, String)> {
    let symbol = |s: &[u8]| -> usize {
        s.iter()
            .position(|b| {
                b.is_ascii_whitespace()
                    || matches!(b, b'(' | b')' | b'[' | b']' | b'{' | b'}' | b'"')
            })
            .unwrap_or(s.len())
    };
    let rest = code.trim_ascii_start().strip_prefix(b"(")?;
    let head = &rest[..symbol(rest)];
    let kind = match head.strip_prefix(b"cl-").unwrap_or(head) {
        b"defn" | b"defn-" | b"defmacro" | b"defmulti" | b"defmethod" | b"defun" | b"defsubst"
        | b"defgeneric" | b"define" | b"define-syntax" | b"define-macro" => "function",
        b"defrecord" | b"deftype" | b"defstruct" | b"defclass" | b"define-record-type" => "struct",
        b"defprotocol" | b"definterface" => "interface",
        _ => return None,
    };
    let mut name = rest[head.len()..].trim_ascii_start();
    while name.first() == Some(&b'^') {
        name = name[symbol(name)..].trim_ascii_start(); // Clojure's `^:private`, `^String`
    }
    if kind == "function" && head.starts_with(b"define") {
        name = name.strip_prefix(b"(").unwrap_or(name); // `(define (name args)`
    }
    let name = &name[..symbol(name)];
    let text = std::str::from_utf8(name).ok()?;
    (!text.is_empty()
        && !text.starts_with(|c: char| c.is_ascii_digit() || matches!(c, ':' | '\'' | '^' | '#')))
    .then(|| (kind, text.to_string()))
}

/// Whether `w` is one of `words` (lower case), in any case: Pascal, Ada, VHDL, Fortran and
/// Visual Basic tell no case apart in their keywords.
pub(super) fn any_case<S: AsRef<str>>(w: Option<S>, words: &[&str]) -> bool {
    w.is_some_and(|w| words.iter().any(|k| w.as_ref().eq_ignore_ascii_case(k)))
}

/// What follows `prefix` (lower case) at the start of `w`, in any case: `End` of `EndDate`.
pub(super) fn after_any_case<'a>(w: &'a str, prefix: &str) -> Option<&'a str> {
    w.get(..prefix.len())
        .filter(|p| p.eq_ignore_ascii_case(prefix))
        .map(|_| &w[prefix.len()..])
}

/// The name the words from `at` start, if they start one: a path's last name (`TForm.Show`,
/// `Ada.Text_IO`).
fn last_name(t: &[&str], at: usize) -> Option<String> {
    t.get(at)
        .filter(|n| is_name(n))
        .map(|_| t[dotted_end(t, at)].to_string())
}

/// The words a Pascal routine starts with (after `class`).
const PASCAL_ROUTINES: &[&str] = &[
    "procedure",
    "function",
    "constructor",
    "destructor",
    "operator",
];

/// A Pascal or Delphi definition: a routine (`procedure`, `function`, `constructor`,
/// `destructor`, `operator`, after `class`; `TForm1.Button1Click` is `Button1Click`), or a type
/// with members (`TCart = class(TObject)`, `= record`, `= packed record`, `= interface`); a
/// forward declaration (`TCart = class;`) and a class reference (`= class of`) are none.
pub(super) fn pascal_def(t: &[&str]) -> Option<(&'static str, String)> {
    let at = usize::from(any_case(t.first(), &["class"]));
    if any_case(t.get(at), PASCAL_ROUTINES) {
        return last_name(t, at + 1).map(|n| ("function", n));
    }
    let name = t.first().filter(|n| is_name(n))?;
    // `TList<T> = class`
    let after = if t.get(1) == Some(&"<") {
        past_close(t, 1)?
    } else {
        1
    };
    let rest = match &t[after..] {
        ["=", "packed", r @ ..] | ["=", r @ ..] => r,
        _ => return None,
    };
    let kind = match rest.first() {
        w if any_case(w, &["class", "object"]) => "class",
        w if any_case(w, &["record"]) => "struct",
        w if any_case(w, &["interface", "dispinterface"]) => "interface",
        _ => return None,
    };
    // `TCart = class;`, `TCart = class(TBase);`, not `TPoint = record x: Integer; end;`
    let whole = rest.last() == Some(&";") && !any_case(rest.iter().rev().nth(1), &["end"]);
    (!whole && !any_case(rest.get(1), &["of"])).then(|| (kind, name.to_string()))
}

/// An Ada definition: a subprogram (`procedure`, `function`, after `overriding`), a package
/// (`package Name is`, `package body Name is`; `Ada.Text_IO` is `Text_IO`), a task or protected
/// type or body, or a record type (`type Cart is record`, `is tagged record`); a package
/// renaming or instance (`package IO is new …`) is none.
pub(super) fn ada_def(t: &[&str]) -> Option<(&'static str, String)> {
    let mut at = 0;
    while any_case(t.get(at), &["overriding", "not"]) {
        at += 1;
    }
    let body = |i: usize| i + usize::from(any_case(t.get(i), &["body", "type"]));
    match t.get(at) {
        w if any_case(w, &["procedure", "function", "entry"]) => {
            last_name(t, at + 1).map(|n| ("function", n))
        }
        w if any_case(w, &["package", "task", "protected"]) => {
            let name = body(at + 1);
            let end = dotted_end(t, name);
            (!any_case(t.get(end + 2), &["new"]))
                .then(|| last_name(t, name))
                .flatten()
                .map(|n| ("module", n))
        }
        w if any_case(w, &["type"]) => {
            let is = t.iter().position(|w| w.eq_ignore_ascii_case("is"))?;
            t[is..]
                .iter()
                .any(|w| w.eq_ignore_ascii_case("record"))
                .then(|| last_name(t, at + 1).map(|n| ("struct", n)))
                .flatten()
        }
        _ => None,
    }
}

/// A VHDL design unit or subprogram: an entity, a package (body), an architecture (named by its
/// entity, as an impl by its type: `architecture rtl of uart is` is `uart`), a function or
/// procedure (`pure`, `impure`), a record type, or a named process (`tx : process (clk)`).
pub(super) fn vhdl_def(t: &[&str]) -> Option<(&'static str, String)> {
    let at = usize::from(any_case(t.first(), &["pure", "impure"]));
    match t.get(at) {
        w if any_case(w, &["entity"]) => last_name(t, 1).map(|n| ("module", n)),
        w if any_case(w, &["package"]) => {
            last_name(t, 1 + usize::from(any_case(t.get(1), &["body"]))).map(|n| ("module", n))
        }
        w if any_case(w, &["architecture"]) => any_case(t.get(2), &["of"])
            .then(|| last_name(t, 3).map(|n| ("impl", n)))
            .flatten(),
        w if any_case(w, &["function", "procedure"]) => {
            last_name(t, at + 1).map(|n| ("function", n))
        }
        w if any_case(w, &["type"]) => (any_case(t.get(2), &["is"])
            && any_case(t.get(3), &["record"]))
        .then(|| last_name(t, 1).map(|n| ("struct", n)))
        .flatten(),
        _ => (t.get(1) == Some(&":") && any_case(t.get(2), &["process"]) && is_name(t[0]))
            .then(|| ("function", t[0].to_string())),
    }
}

/// SystemVerilog's modifiers before a class member.
const VERILOG_MODIFIERS: &[&str] = &["virtual", "static", "protected", "local"];

/// A Verilog or SystemVerilog definition: a module (`module`, `macromodule`), an interface,
/// a package, a program, a class (`virtual class`), or a function or task by the name before its
/// `(` or `;` (`function automatic logic [31:0] crc(`); an `extern` or `pure virtual`
/// prototype is none.
pub(super) fn verilog_def(t: &[&str]) -> Option<(&'static str, String)> {
    let mut at = 0;
    while t.get(at).is_some_and(|w| VERILOG_MODIFIERS.contains(w)) {
        at += 1;
    }
    if matches!(t.first(), Some(&("extern" | "pure" | "import" | "export"))) {
        return None;
    }
    let named = |kind| last_name(t, at + 1).map(|n| (kind, n));
    match t.get(at).copied()? {
        "module" | "macromodule" | "program" => named("module"),
        "interface" if t.get(at + 1) != Some(&"class") => named("interface"),
        "package" => named("module"),
        "class" => named("class"),
        "function" | "task" => {
            let end = t[at..]
                .iter()
                .position(|w| matches!(*w, "(" | ";"))
                .map_or(t.len(), |p| at + p);
            let name = t[..end].last().filter(|n| is_name(n) && end > at + 1)?;
            Some(("function", name.to_string()))
        }
        _ => None,
    }
}

/// A Fortran definition: a subroutine or function (after its prefixes and type: `pure
/// elemental`, `integer(kind=8) function`, `module subroutine`), a module, submodule or program,
/// or a derived type (`type :: cart`, `type, extends(base) :: cart`, `type cart`; not a
/// variable's `type(cart) :: c`); `end` and `module procedure` lines are none.
pub(super) fn fortran_def(t: &[&str]) -> Option<(&'static str, String)> {
    let first = t.first()?;
    if after_any_case(first, "end").is_some() {
        return None;
    }
    if any_case(Some(first), &["module", "program", "submodule"])
        && !any_case(t.get(1), &["procedure", "subroutine", "function"])
    {
        // `submodule (parent) name`
        let at = if t.get(1) == Some(&"(") {
            t.iter().position(|w| *w == ")")? + 1
        } else {
            1
        };
        return last_name(t, at).map(|n| ("module", n));
    }
    if any_case(Some(first), &["type"]) {
        return match t.get(1) {
            Some(&("," | ":")) => {
                let colons = t.windows(2).position(|w| w == [":", ":"])?;
                last_name(t, colons + 2).map(|n| ("type", n))
            }
            Some(n) if is_name(n) && t.len() == 2 => Some(("type", n.to_string())),
            _ => None,
        };
    }
    // Not a declaration's name (`procedure(f), pointer :: function_ptr`).
    let at = t
        .iter()
        .position(|w| any_case(Some(w), &["subroutine", "function"]))?;
    (!t[..at].contains(&":"))
        .then(|| last_name(t, at + 1).map(|n| ("function", n)))
        .flatten()
}

/// Visual Basic's modifiers before a definition.
const BASIC_MODIFIERS: &[&str] = &[
    "public",
    "private",
    "friend",
    "protected",
    "shared",
    "overrides",
    "overridable",
    "mustoverride",
    "notoverridable",
    "overloads",
    "shadows",
    "partial",
    "static",
    "async",
    "iterator",
    "readonly",
    "writeonly",
    "default",
    "widening",
    "narrowing",
    "mustinherit",
    "notinheritable",
    "global",
];

/// A Visual Basic definition: a `Sub`, `Function`, `Property` or `Operator`, a `Class`,
/// `Module`, `Structure` or `Interface`, or an `Enum`, after its modifiers; a `Declare`d
/// external routine is none, as is a line's `Exit Sub` or `End Sub`.
pub(super) fn basic_def(t: &[&str]) -> Option<(&'static str, String)> {
    let at = t.iter().position(|w| !any_case(Some(w), BASIC_MODIFIERS))?;
    let kind = [
        ("sub", "function"),
        ("function", "function"),
        ("property", "function"),
        ("operator", "function"),
        ("class", "class"),
        ("module", "class"),
        ("structure", "class"),
        ("interface", "interface"),
        ("enum", "enum"),
    ]
    .iter()
    .find(|(word, _)| t[at].eq_ignore_ascii_case(word))?
    .1;
    // Visual Basic 6's `Property Get Name`
    let at =
        at + usize::from(kind == "function" && any_case(t.get(at + 1), &["get", "let", "set"]));
    t.get(at + 1)
        .filter(|n| is_name(n))
        .map(|n| (kind, n.to_string()))
}

/// A Vim script function: `function! s:name(`, `fu name(`, `function fugitive#Name(` (the name
/// after its scope or autoload path), or Vim9's `def Name(` (`export def`).
pub(super) fn vim_def(t: &[&str]) -> Option<(&'static str, String)> {
    let t = t.strip_prefix(&["export"]).unwrap_or(t);
    let head = *t.first()?;
    if !(head == "def" || (head.len() >= 2 && "function".starts_with(head))) {
        return None;
    }
    let paren = t.iter().position(|w| *w == "(")?;
    t[..paren]
        .last()
        .filter(|n| paren > 1 && is_name(n))
        .map(|n| ("function", n.to_string()))
}

/// Lean's modifiers before a declaration.
const LEAN_MODIFIERS: &[&str] = &[
    "private",
    "protected",
    "noncomputable",
    "partial",
    "unsafe",
    "nonrec",
    "scoped",
    "local",
];

/// A Lean declaration, after its attributes (`@[simp]`) and modifiers: a `def`, `theorem`,
/// `lemma`, `abbrev`, `opaque` or named `instance` (a function, by its last name:
/// `List.sum_cons` is `sum_cons`), or a `structure`, `class` or `inductive`.
pub(super) fn lean_def(t: &[&str]) -> Option<(&'static str, String)> {
    let mut at = 0;
    if t.first() == Some(&"@") {
        at = t.iter().position(|w| *w == "]")? + 1;
    }
    while t.get(at).is_some_and(|w| LEAN_MODIFIERS.contains(w)) {
        at += 1;
    }
    let kind = match *t.get(at)? {
        "def" | "theorem" | "lemma" | "abbrev" | "opaque" | "instance" => "function",
        "structure" | "class" => "class",
        "inductive" => "type",
        _ => return None,
    };
    let at = at + usize::from(t.get(at + 1) == Some(&"inductive")); // `class inductive`
    last_name(t, at + 1).map(|n| (kind, n))
}

/// A CoffeeScript definition: a class (`class Cart extends Base`, `export class`), or a
/// function bound to a name (`total = (items) ->`, a class's `total: ->`, `@total = =>`,
/// `exports.total = ->`; the last name).
pub(super) fn coffee_def(t: &[&str]) -> Option<(&'static str, String)> {
    let t = t.strip_prefix(&["export"]).unwrap_or(t);
    if t.first() == Some(&"class") {
        let at = 1 + usize::from(t.get(1) == Some(&"@"));
        return last_name(t, at).map(|n| ("class", n));
    }
    let at = usize::from(t.first() == Some(&"@"));
    let end = dotted_end(t, at);
    if !is_name(t.get(at)?) || !matches!(t.get(end + 1), Some(&("=" | ":"))) {
        return None;
    }
    let mut value = &t[end + 2..];
    if value.first() == Some(&"(") {
        value = &value[past_close(value, 0)?..];
    }
    matches!(value, ["-" | "=", ">", ..]).then(|| ("function", t[end].to_string()))
}
