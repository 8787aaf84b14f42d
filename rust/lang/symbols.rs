//! The names code refers to, language by language: every identifier of the code the lexer
//! leaves (comments and strings masked), less the language's keywords and the names too
//! short to tell one definition from another. With the definitions of the same grammar
//! (`lang/spans.rs`), they link a region that calls a function to the region
//! that defines it.

use super::lexer::Line;
use super::Lang;
use crate::tasks::terms::words;
use std::borrow::Cow;

/// Names shorter than this are not kept: `i`, `x`, `ok` link nothing.
pub const MIN_NAME: usize = 3;

const RUST: &[&str] = &[
    "Self", "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum",
    "extern", "false", "for", "impl", "let", "loop", "match", "mod", "move", "mut", "pub", "ref",
    "return", "self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use",
    "where", "while",
];
const PYTHON: &[&str] = &[
    "None", "True", "False", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "lambda", "nonlocal", "not", "pass", "raise", "return", "self", "try", "while", "with",
    "yield",
];
const GDSCRIPT: &[&str] = &[
    "and",
    "await",
    "break",
    "class",
    "class_name",
    "const",
    "continue",
    "elif",
    "else",
    "enum",
    "extends",
    "false",
    "for",
    "func",
    "match",
    "not",
    "null",
    "pass",
    "return",
    "self",
    "signal",
    "static",
    "super",
    "true",
    "var",
    "void",
    "while",
];
const GO: &[&str] = &[
    "break",
    "case",
    "chan",
    "const",
    "continue",
    "default",
    "defer",
    "else",
    "fallthrough",
    "for",
    "func",
    "go",
    "goto",
    "import",
    "interface",
    "map",
    "nil",
    "package",
    "range",
    "return",
    "select",
    "struct",
    "switch",
    "type",
    "var",
];
const JS: &[&str] = &[
    "async",
    "await",
    "break",
    "case",
    "catch",
    "class",
    "const",
    "continue",
    "default",
    "delete",
    "else",
    "enum",
    "export",
    "extends",
    "false",
    "finally",
    "for",
    "from",
    "function",
    "import",
    "instanceof",
    "interface",
    "let",
    "new",
    "null",
    "return",
    "static",
    "super",
    "switch",
    "this",
    "throw",
    "true",
    "try",
    "type",
    "typeof",
    "undefined",
    "var",
    "void",
    "while",
    "yield",
];
const JAVA: &[&str] = &[
    "abstract",
    "boolean",
    "break",
    "case",
    "catch",
    "char",
    "class",
    "continue",
    "default",
    "double",
    "else",
    "enum",
    "extends",
    "false",
    "final",
    "finally",
    "float",
    "for",
    "implements",
    "import",
    "instanceof",
    "int",
    "interface",
    "long",
    "new",
    "null",
    "package",
    "private",
    "protected",
    "public",
    "return",
    "static",
    "super",
    "switch",
    "this",
    "throw",
    "throws",
    "true",
    "try",
    "void",
    "while",
];

const RUBY: &[&str] = &[
    "alias", "and", "begin", "break", "case", "class", "def", "defined", "else", "elsif", "end",
    "ensure", "false", "for", "module", "next", "nil", "not", "redo", "rescue", "retry", "return",
    "self", "super", "then", "true", "undef", "unless", "until", "when", "while", "yield",
];

const SCALA: &[&str] = &[
    "abstract",
    "case",
    "catch",
    "class",
    "def",
    "else",
    "extends",
    "false",
    "final",
    "finally",
    "for",
    "implicit",
    "import",
    "lazy",
    "match",
    "new",
    "null",
    "object",
    "override",
    "package",
    "private",
    "protected",
    "return",
    "sealed",
    "super",
    "this",
    "throw",
    "trait",
    "true",
    "try",
    "type",
    "val",
    "var",
    "while",
    "with",
    "yield",
];

const ELIXIR: &[&str] = &[
    "after",
    "alias",
    "and",
    "case",
    "catch",
    "cond",
    "def",
    "defmacro",
    "defmacrop",
    "defmodule",
    "defp",
    "defstruct",
    "else",
    "end",
    "false",
    "import",
    "nil",
    "not",
    "quote",
    "raise",
    "receive",
    "require",
    "rescue",
    "true",
    "try",
    "unless",
    "unquote",
    "use",
    "when",
    "with",
];

const LUA: &[&str] = &[
    "and", "break", "else", "elseif", "end", "false", "for", "function", "goto", "local", "nil",
    "not", "repeat", "return", "self", "then", "true", "until", "while",
];

const HASKELL: &[&str] = &[
    "case",
    "class",
    "data",
    "default",
    "deriving",
    "else",
    "family",
    "forall",
    "foreign",
    "hiding",
    "import",
    "infix",
    "infixl",
    "infixr",
    "instance",
    "let",
    "module",
    "newtype",
    "qualified",
    "then",
    "type",
    "where",
];

const ZIG: &[&str] = &[
    "and",
    "anytype",
    "break",
    "catch",
    "comptime",
    "const",
    "continue",
    "defer",
    "else",
    "enum",
    "errdefer",
    "error",
    "false",
    "for",
    "inline",
    "null",
    "orelse",
    "pub",
    "return",
    "struct",
    "switch",
    "true",
    "try",
    "undefined",
    "union",
    "unreachable",
    "var",
    "void",
    "while",
];

const PERL: &[&str] = &[
    "die", "else", "elsif", "foreach", "for", "last", "local", "next", "our", "package", "return",
    "shift", "sub", "undef", "unless", "until", "use", "while",
];

const R: &[&str] = &[
    "break", "else", "FALSE", "for", "function", "Inf", "NA", "NaN", "next", "NULL", "repeat",
    "return", "TRUE", "while",
];

const JULIA: &[&str] = &[
    "abstract", "begin", "break", "catch", "const", "continue", "else", "elseif", "end", "export",
    "false", "finally", "for", "function", "global", "import", "let", "local", "macro", "module",
    "mutable", "nothing", "quote", "return", "struct", "true", "try", "using", "where", "while",
];

const ML: &[&str] = &[
    "and", "begin", "else", "end", "false", "fun", "function", "let", "match", "member", "module",
    "mutable", "new", "not", "open", "override", "rec", "sig", "struct", "then", "this", "true",
    "type", "val", "when", "with",
];

const ERLANG: &[&str] = &[
    "after", "andalso", "begin", "case", "catch", "end", "false", "fun", "not", "orelse",
    "receive", "true", "try", "when",
];

const LISP: &[&str] = &[
    "and", "cond", "def", "define", "defmacro", "defn", "defun", "false", "lambda", "let", "nil",
    "not", "progn", "setq", "true", "unless", "when",
];

// Pascal, Ada, VHDL, Fortran and Visual Basic tell no case apart: their words as mostly written.
const PASCAL: &[&str] = &[
    "Exit",
    "False",
    "Result",
    "Self",
    "True",
    "and",
    "array",
    "as",
    "begin",
    "case",
    "const",
    "div",
    "do",
    "downto",
    "else",
    "end",
    "except",
    "finally",
    "for",
    "function",
    "if",
    "in",
    "inherited",
    "is",
    "mod",
    "nil",
    "not",
    "of",
    "or",
    "procedure",
    "raise",
    "repeat",
    "then",
    "to",
    "try",
    "type",
    "until",
    "var",
    "while",
    "with",
];

const ADA: &[&str] = &[
    "all",
    "and",
    "begin",
    "body",
    "case",
    "declare",
    "else",
    "elsif",
    "end",
    "exception",
    "for",
    "function",
    "if",
    "in",
    "is",
    "loop",
    "new",
    "not",
    "null",
    "of",
    "or",
    "others",
    "out",
    "package",
    "procedure",
    "raise",
    "record",
    "return",
    "then",
    "type",
    "use",
    "when",
    "while",
    "with",
];

const VHDL: &[&str] = &[
    "and",
    "architecture",
    "begin",
    "case",
    "constant",
    "downto",
    "else",
    "elsif",
    "end",
    "entity",
    "for",
    "generic",
    "if",
    "in",
    "is",
    "loop",
    "map",
    "not",
    "of",
    "or",
    "others",
    "out",
    "port",
    "process",
    "signal",
    "then",
    "to",
    "type",
    "variable",
    "when",
];

const VERILOG: &[&str] = &[
    "always",
    "always_comb",
    "always_ff",
    "assign",
    "begin",
    "bit",
    "case",
    "else",
    "end",
    "endcase",
    "endfunction",
    "endmodule",
    "for",
    "function",
    "if",
    "input",
    "inout",
    "int",
    "localparam",
    "logic",
    "module",
    "negedge",
    "output",
    "parameter",
    "posedge",
    "reg",
    "return",
    "wire",
];

const FORTRAN: &[&str] = &[
    "allocatable",
    "call",
    "character",
    "contains",
    "do",
    "else",
    "end",
    "function",
    "if",
    "implicit",
    "in",
    "inout",
    "integer",
    "intent",
    "logical",
    "module",
    "none",
    "only",
    "out",
    "pure",
    "real",
    "result",
    "return",
    "subroutine",
    "then",
    "type",
    "use",
];

const BASIC: &[&str] = &[
    "And", "As", "Boolean", "ByRef", "ByVal", "Dim", "Each", "Else", "ElseIf", "End", "False",
    "For", "Friend", "Function", "If", "In", "Integer", "Me", "New", "Next", "Not", "Nothing",
    "Of", "Or", "Private", "Public", "Return", "Shared", "String", "Sub", "Then", "True",
];

const VIM: &[&str] = &[
    "abort",
    "call",
    "catch",
    "echo",
    "else",
    "elseif",
    "endfor",
    "endfunction",
    "endif",
    "endtry",
    "endwhile",
    "execute",
    "finally",
    "for",
    "function",
    "if",
    "let",
    "return",
    "silent",
    "try",
    "while",
];

const LEAN: &[&str] = &[
    "Prop",
    "Type",
    "by",
    "class",
    "def",
    "do",
    "else",
    "end",
    "exact",
    "fun",
    "have",
    "if",
    "instance",
    "intro",
    "let",
    "match",
    "namespace",
    "open",
    "rfl",
    "show",
    "simp",
    "structure",
    "then",
    "theorem",
    "where",
    "with",
];

const SHELL: &[&str] = &[
    "case", "declare", "done", "echo", "elif", "else", "esac", "eval", "exit", "export", "false",
    "local", "readonly", "return", "set", "shift", "test", "then", "true", "typeset", "unset",
    "until", "while",
];
// Read in any case by PowerShell, but written mostly in lower case (and `$true`).
const POWERSHELL: &[&str] = &[
    "begin", "break", "catch", "class", "continue", "else", "elseif", "end", "enum", "false",
    "filter", "finally", "foreach", "function", "hidden", "null", "param", "process", "return",
    "static", "switch", "throw", "true", "until", "while",
];
const COFFEE: &[&str] = &[
    "and",
    "catch",
    "class",
    "else",
    "extends",
    "false",
    "finally",
    "for",
    "if",
    "in",
    "is",
    "isnt",
    "new",
    "no",
    "not",
    "null",
    "of",
    "or",
    "return",
    "super",
    "switch",
    "then",
    "this",
    "throw",
    "true",
    "try",
    "undefined",
    "unless",
    "until",
    "when",
    "while",
    "yes",
];

fn keywords(lang: Lang) -> &'static [&'static str] {
    match lang {
        Lang::Rust => RUST,
        Lang::Python => PYTHON,
        Lang::GdScript => GDSCRIPT,
        Lang::Go => GO,
        Lang::TypeScript | Lang::JavaScript | Lang::Component => JS,
        // Their keywords are mostly Java's (`if`, `return`, `new`, `this`, `static`, `void`, …).
        Lang::Java
        | Lang::CSharp
        | Lang::C
        | Lang::Dart
        | Lang::Kotlin
        | Lang::Swift
        | Lang::Php => JAVA,
        Lang::Ruby => RUBY,
        Lang::Scala => SCALA,
        Lang::Elixir => ELIXIR,
        Lang::Lua => LUA,
        Lang::Haskell => HASKELL,
        Lang::Zig => ZIG,
        Lang::Perl => PERL,
        Lang::R => R,
        Lang::Julia => JULIA,
        Lang::Ml => ML,
        Lang::Erlang => ERLANG,
        Lang::Lisp => LISP,
        Lang::Pascal => PASCAL,
        Lang::Ada => ADA,
        Lang::Vhdl => VHDL,
        Lang::Verilog => VERILOG,
        Lang::Fortran => FORTRAN,
        Lang::Basic => BASIC,
        Lang::Vim => VIM,
        Lang::Lean => LEAN,
        Lang::Coffee => COFFEE,
        Lang::Shell => SHELL,
        Lang::PowerShell => POWERSHELL,
        _ => &[],
    }
}

/// The distinct names lines `from..=to` (0-based) of a lexed file refer to, sorted.
pub fn references(lines: &[Line], lang: Lang, from: usize, to: usize) -> Vec<Box<str>> {
    let kw = keywords(lang);
    let named = |w: &(usize, &str)| w.1.len() >= MIN_NAME && !w.1.as_bytes()[0].is_ascii_digit();
    // Borrowed from the lines (a line that is not UTF-8 is read lossily, and owned): only the
    // distinct names are allocated, and only they are tried against the keywords.
    let mut out: Vec<Cow<str>> = Vec::new();
    for line in lines.iter().take(to + 1).skip(from) {
        match String::from_utf8_lossy(&line.code) {
            Cow::Borrowed(code) => out.extend(words(code).filter(named).map(|w| w.1.into())),
            Cow::Owned(code) => {
                out.extend(words(&code).filter(named).map(|w| w.1.to_string().into()))
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out.into_iter()
        .filter(|w| !kw.contains(&&**w))
        .map(|w| w.into())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::lexer::lex;

    fn refs(src: &str, lang: Lang) -> Vec<String> {
        let lines = lex(src.as_bytes(), lang);
        references(&lines, lang, 0, lines.len() - 1)
            .into_iter()
            .map(String::from)
            .collect()
    }

    #[test]
    fn names_of_code_not_of_comments_strings_or_keywords() {
        assert_eq!(
            refs(
                "fn total(order: &Order) -> u32 {\n    // apply_coupon is not called here\n    let s = \"discount\";\n    order.lines.iter().map(line_total).sum()\n}\n",
                Lang::Rust
            ),
            ["Order", "iter", "line_total", "lines", "map", "order", "sum", "total", "u32"]
        );
        assert_eq!(
            refs(
                "def load(self, path):\n    \"\"\"Reads parse_config.\"\"\"\n    return parse(path)  # not_me\n",
                Lang::Python
            ),
            ["load", "parse", "path"]
        );
        assert_eq!(
            refs(
                "func (s *Server) Run() error { return s.serve(nil) }\n",
                Lang::Go
            ),
            ["Run", "Server", "error", "serve"]
        );
        assert_eq!(
            refs(
                "function total(cart) # sum_all\n    return sum(item.price for item in cart)\nend\n",
                Lang::Julia
            ),
            ["cart", "item", "price", "sum", "total"],
            "Julia's keywords are no names"
        );
    }
}
