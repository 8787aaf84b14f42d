//! Definition spans: the lines each definition of a lexed file covers, nested ones included
//! (Python by indentation; Ruby, Scala, Elixir, Lua, Haskell, Julia, OCaml and F#, Erlang, the
//! Lisps, Pascal, Ada, VHDL, Verilog, Fortran, Visual Basic, Vim script, Lean and CoffeeScript
//! by indentation to their `end`, their `}` or their last equation; Rust, Go,
//! TypeScript, JavaScript, Java, C#, C and C++, Dart, Kotlin, Swift, PHP, Zig, Perl, R, the
//! shells and PowerShell by braces), and the definition a line belongs to. Annotations take
//! their symbol from them (artifacts/annotate.rs) and task context cuts files into regions
//! along them (tasks/regions.rs).

use super::defs::{
    after_any_case, any_case, go_def, holds_members, indented_def, js_def, keyword_def, perl_def,
    powershell_def, r_def, rust_def, shell_def, tokens, typed_def, zig_def,
};
use super::lexer::Line;
use super::{has_definitions, Lang};

/// The definitions of a lexed file, nested ones included, in no particular order (Python and
/// the languages of `indent_spans` by indentation; the others with definitions by braces; none
/// for other languages). Task context
/// (tasks/regions.rs) cuts files into regions along them.
pub fn spans(lines: &[Line], lang: Lang) -> Vec<Span> {
    match lang {
        Lang::Python | Lang::GdScript => python_spans(lines, lang),
        Lang::Ruby
        | Lang::Scala
        | Lang::Elixir
        | Lang::Lua
        | Lang::Haskell
        | Lang::Julia
        | Lang::Ml
        | Lang::Erlang
        | Lang::Lisp
        | Lang::Pascal
        | Lang::Ada
        | Lang::Vhdl
        | Lang::Verilog
        | Lang::Fortran
        | Lang::Basic
        | Lang::Vim
        | Lang::Lean
        | Lang::Coffee => indent_spans(lines, lang),
        l if has_definitions(l) => brace_spans(lines, l),
        _ => Vec::new(),
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

impl Span {
    /// A definition of `kind` and `name` starting at line `n`, as long as that line until its
    /// end is found.
    fn at(n: usize, (kind, name): (&'static str, String)) -> Span {
        Span {
            start: n,
            end: n,
            kind,
            name,
        }
    }
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
    // A definition waiting for its body's `{`, with the brace depth it started at. `brackets`
    // counts the parentheses and brackets open since it started: inside them a `{` opens its
    // body only after `)` or `=>` (`useCallback((x) => {`, `wrap(function () {`), not in a
    // parameter (`options = {}`, `opts: {…}`, Go's `interface{}`). Counted from the
    // definition's line, so a bracket misread earlier in the file costs no later one its body.
    let mut pending: Option<(Span, usize)> = None;
    let mut depth = 0usize;
    let mut brackets = 0usize;
    // Inside a Zig error set (`error{OutOfMemory}!T`, `const E = error{ … }`): its braces open
    // and close no body.
    let mut error_set = false;
    let mut last = b' '; // the last code byte that is not blank
    for (n, line) in lines.iter().enumerate() {
        let around = frames.last().map(|f| &f.span);
        // The shells' names hold `-` and `:`, so their grammars read the code, not its tokens.
        let def = match lang {
            Lang::Shell => shell_def(&line.code),
            Lang::PowerShell => {
                powershell_def(&line.code, around.is_some_and(|s| s.kind == "class"))
            }
            _ => brace_def(lang, &tokens(&line.code), line, around),
        };
        if let Some(def) = def {
            if let Some((p, _)) = pending.take() {
                spans.push(p);
            }
            pending = Some((Span::at(n, def), depth));
            brackets = 0;
        }
        for (k, &b) in line.code.iter().enumerate() {
            match b {
                b'{' if lang == Lang::Zig
                    && line.code[..k].trim_ascii_end().ends_with(b"error") =>
                {
                    error_set = true;
                }
                b'}' if error_set => error_set = false,
                b'(' | b'[' => brackets += 1,
                b')' | b']' => brackets = brackets.saturating_sub(1),
                b'{' => {
                    // A Vue component's options open in a call: `defineComponent({`.
                    let options = lang == Lang::Component
                        && pending.as_ref().is_some_and(|(s, _)| s.name == "default");
                    if pending.is_some()
                        && (brackets == 0 || matches!(last, b')' | b'>') || options)
                    {
                        let (span, d) = pending.take().expect("checked");
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
                b';' if pending
                    .as_ref()
                    .is_some_and(|p| p.1 == depth && brackets == 0) =>
                {
                    spans.push(pending.take().expect("checked").0);
                }
                _ => {}
            }
            if !b.is_ascii_whitespace() {
                last = b;
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

/// The definition a line of a brace language other than the shells starts, from its tokens `t`,
/// inside `around` (the innermost open definition, if any).
fn brace_def(
    lang: Lang,
    t: &[&str],
    line: &Line,
    around: Option<&Span>,
) -> Option<(&'static str, String)> {
    let kind = around.map(|s| s.kind);
    match lang {
        Lang::Rust => rust_def(t),
        Lang::Go => go_def(t),
        Lang::Java | Lang::CSharp | Lang::C | Lang::Dart => {
            let bare = match lang {
                // A Dart constructor names its class (`Foo(`, `Foo.named(`); another
                // capitalised name is a call (`Text(`) in a body not read as one.
                Lang::Dart => around.is_some_and(|s| {
                    matches!(s.kind, "class" | "enum") && t.contains(&s.name.as_str())
                }),
                _ => line.indent == 0 || matches!(kind, Some("class" | "struct")),
            };
            typed_def(t, holds_members(lang, kind), bare, lang)
        }
        Lang::Kotlin | Lang::Swift | Lang::Php => keyword_def(t),
        Lang::Zig => zig_def(t),
        Lang::Perl => perl_def(t),
        Lang::R => r_def(t),
        // A Vue component's options (`export default {`, `export default defineComponent({`)
        // hold its methods as a class does.
        Lang::Component
            if matches!(
                t,
                ["export", "default", "{"] | ["export", "default", "defineComponent", "(", "{"]
            ) =>
        {
            Some(("class", "default".to_string()))
        }
        _ => js_def(t, kind == Some("class")),
    }
}

/// Python and GDScript definitions, each spanning the lines indented deeper than its `def`, `func`
/// or `class`.
fn python_spans(lines: &[Line], lang: Lang) -> Vec<Span> {
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
            if let Some(def) = indented_def(lang, &tokens(&line.code), &line.code) {
                open.push((Span::at(n, def), indent));
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

/// How a line at an open definition's own indent bears on it.
enum AtIndent {
    /// It is the definition's last line: Ruby's, Elixir's and Lua's `end`, Scala's closing `}`.
    Ends,
    /// It is inside: Ruby's `rescue`, Scala's `} else {`, a Haskell function's next equation.
    Stays,
    /// The definition ended on the line before.
    After,
}

/// `def` is the definition the line reads as, wherever it stands.
fn at_indent(lang: Lang, t: &[&str], def: Option<&(&str, String)>, open: &Span) -> AtIndent {
    match (lang, t.first().copied()) {
        // An OCaml module's `struct` or `sig` on a line of its own, and a signature's `end =`
        // before its structure, stay inside it.
        (Lang::Ml, Some("struct" | "sig" | "object")) => AtIndent::Stays,
        (Lang::Ml, Some("end")) if t.last() == Some(&"=") => AtIndent::Stays,
        (Lang::Ruby | Lang::Elixir | Lang::Lua | Lang::Julia | Lang::Ml, Some("end")) => {
            AtIndent::Ends
        }
        (Lang::Ruby, Some("rescue" | "ensure" | "else")) => AtIndent::Stays,
        (Lang::Elixir, Some("rescue" | "catch" | "else" | "after")) => AtIndent::Stays,
        // A Haskell function's next equation, or its equations after its signature; an Erlang
        // function's next clause.
        (Lang::Haskell | Lang::Erlang, _)
            if open.kind == "function"
                && def.is_some_and(|(k, name)| *k == "function" && *name == open.name) =>
        {
            AtIndent::Stays
        }
        // A closer that opens again (`} else {`, `): Unit = {`, `) extends Foo(`) stays inside.
        (Lang::Scala, Some("}" | ")")) => match t.last().copied() {
            Some("{" | "(" | "=" | ">" | ",") => AtIndent::Stays,
            _ => AtIndent::Ends,
        },
        (Lang::Scala, Some("end")) => AtIndent::Ends, // Scala 3's `end name`
        // A Pascal routine's sections and body, a class's visibility sections; an Ada
        // subprogram's `is`, body and handlers, a package's private part, a VHDL architecture's
        // body.
        (Lang::Pascal, w) if any_case(w, PASCAL_SECTIONS) => AtIndent::Stays,
        (Lang::Ada | Lang::Vhdl, w) if any_case(w, &["begin", "is", "exception", "private"]) => {
            AtIndent::Stays
        }
        // A Fortran unit ends at its `end` only (`end subroutine`, `end`), its body often not
        // indented; another unit at its indent or less is one it contains. Another block's end
        // (`end do`, `endif`, `end interface`) goes on it.
        (Lang::Fortran, Some(w)) => {
            let ended = match after_any_case(w, "end") {
                Some("") => t.get(1).copied(),
                Some(u) => Some(u),
                None => return AtIndent::Stays,
            };
            // What it ends, if it is the open unit's end: `end subroutine`, or a bare `end`.
            let kind = match ended {
                None => open.kind,
                u if any_case(u, &["subroutine", "function"]) => "function",
                u if any_case(u, &["module", "submodule", "program"]) => "module",
                u if any_case(u, &["type"]) => "type",
                Some(_) => "",
            };
            if kind == open.kind {
                AtIndent::Ends
            } else {
                AtIndent::Stays
            }
        }
        // A module's port list's closing `);`, a preprocessor's line, a block's `begin`/`end`.
        (Lang::Verilog, Some("begin" | "end" | ")" | "`")) => AtIndent::Stays,
        // `endmodule`, `endfunction`, …; not a name (`endpoint u_ep (`).
        (
            Lang::Verilog,
            Some(
                "endmodule" | "endfunction" | "endtask" | "endclass" | "endpackage"
                | "endinterface" | "endprogram",
            ),
        ) => AtIndent::Ends,
        // `end Total;`, `End Sub`; not a name (`EndDate`).
        (Lang::Pascal | Lang::Ada | Lang::Vhdl | Lang::Basic, w) if any_case(w, &["end"]) => {
            AtIndent::Ends
        }
        (Lang::Vim, Some(w)) if w.starts_with("endf") || w == "enddef" => AtIndent::Ends,
        _ => AtIndent::After,
    }
}

/// Pascal's words at a routine's or a class's indent that go on it.
const PASCAL_SECTIONS: &[&str] = &[
    "var",
    "const",
    "type",
    "label",
    "begin",
    "resourcestring",
    "private",
    "protected",
    "public",
    "published",
    "strict",
    "automated",
];

/// Ruby, Scala, Elixir, Lua, Haskell, Julia, OCaml and F#, Erlang and Lisp definitions, each
/// spanning the lines indented deeper than it and the lines at its indent that end it or stay
/// inside (`at_indent`). By indentation, not by counting `end`s or braces: a Ruby modifier `if`
/// opens no block, a Scala body is often one indented expression with no brace, and a Haskell
/// function is the equations of its name. Only lines of code end or extend one: a string's
/// lines (a heredoc's, at any indent) and a comment's are inside one only when its code goes on
/// below them (a doc comment between two definitions leads into the second).
fn indent_spans(lines: &[Line], lang: Lang) -> Vec<Span> {
    let mut spans = Vec::new();
    // (span, indent, whether a line at its indent may end it: not one whole on its line)
    let mut open: Vec<(Span, usize, bool)> = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        if line.code_blank() {
            continue;
        }
        if !line.starts_in_code {
            // Code after a multi-line string's last line: inside whatever is open.
            for (s, ..) in &mut open {
                s.end = n;
            }
            continue;
        }
        let t = tokens(&line.code);
        let def = indented_def(lang, &t, &line.code);
        let mut continues = false;
        while let Some((s, i, ends)) = open.last() {
            if *i < line.indent {
                break;
            }
            // A Fortran unit ends at its `end` only, at any indent (a `#include` at column 0).
            let here = if *i > line.indent && lang != Lang::Fortran {
                AtIndent::After
            } else {
                match at_indent(lang, &t, def.as_ref(), s) {
                    AtIndent::Ends if !ends => AtIndent::After,
                    here => here,
                }
            };
            if matches!(here, AtIndent::Stays) {
                // A line that goes on a definition opens none of its own name (a Haskell
                // function's next equation), though it may open another (a Fortran unit's).
                continues = def
                    .as_ref()
                    .is_some_and(|(k, name)| *k == s.kind && *name == s.name);
                break;
            }
            let (mut s, ..) = open.pop().expect("checked");
            if matches!(here, AtIndent::Ends) {
                // The line ends this one only: a Fortran module at the same indent goes on.
                s.end = n;
                spans.push(s);
                break;
            }
            spans.push(s);
        }
        for (s, ..) in &mut open {
            s.end = n;
        }
        // Erlang's functions are at the top level. Haskell's, OCaml's and F#'s declarations are
        // there or in a class's or an instance's body (not a function's `where` or local `let`),
        // or OCaml's and F#'s module's or type's.
        let placed = match lang {
            Lang::Erlang => line.indent == 0,
            Lang::Haskell | Lang::Ml => {
                line.indent == 0
                    || open.last().is_some_and(|(s, ..)| match s.kind {
                        "class" | "impl" => true,
                        "module" | "type" => lang == Lang::Ml,
                        _ => false,
                    })
            }
            _ => true,
        };
        if let Some(def) = def.filter(|_| placed && !continues) {
            // Whole on its line: `def f; end`, `struct Empty end`, Julia's `f(x) = x` (whose
            // module's `end` is at its indent, as Julia indents no module).
            let ends = t.last() != Some(&"end")
                && (lang != Lang::Julia
                    || t.iter()
                        .any(|w| matches!(*w, "function" | "macro" | "struct")));
            open.push((Span::at(n, def), line.indent, ends));
        }
    }
    spans.extend(open.into_iter().map(|(s, ..)| s));
    spans
}

/// Whether a line of code decorates the definition below it: a decorator or annotation
/// (`@cache`, `@Override`), a Rust attribute (`#[test]`) or a C# one (`[Fact]`).
pub fn is_decoration(code: &str) -> bool {
    let code = code.trim();
    code.starts_with('@')
        || code.starts_with("#[")
        || (code.starts_with('[') && code.ends_with(']'))
}

/// The definition line `at` (0-based) belongs to: the one that starts right below the comment
/// block it is in (decorators and attributes may sit between), else the innermost around it.
pub fn enclosing<'a>(lines: &[Line], spans: &'a [Span], at: usize) -> Option<&'a Span> {
    if lines[at].code_blank() {
        for (k, line) in lines.iter().enumerate().skip(at + 1) {
            if line.code_blank() {
                if line.comment_blank() {
                    break;
                }
                continue;
            }
            if is_decoration(&String::from_utf8_lossy(&line.code)) {
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
