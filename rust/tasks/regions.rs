//! A file cut into regions, the line ranges a task's bundle is made of: its top-level
//! definitions (functions, classes, structs, impls, … found by the same spans as the
//! annotation scan, rust/lang/spans.rs), a definition longer than `SPLIT_OVER`
//! lines cut along its members (an `impl` into its methods, a class into its methods,
//! with the lines between them kept under the definition's name) or, without members, in
//! windows of at most `WINDOW` lines under its name, the comments and
//! decorators right above a definition kept with it, and everything else (imports,
//! module-level code, files of languages without definitions, markdown) in windows of at
//! most `WINDOW` lines, ended at a blank line where one is near.

use crate::lang::lexer::{lex, Line};
use crate::lang::spans::{is_decoration, spans, Span};
use crate::lang::symbols;
use crate::lang::{has_definitions, lang_of, Lang};

/// The longest window of lines outside definitions.
pub const WINDOW: usize = 40;
/// A definition longer than this is cut along its members.
pub const SPLIT_OVER: usize = 80;

#[derive(Debug, Clone, PartialEq)]
pub struct Region {
    /// First and last line, 1-based, inclusive.
    pub start: u32,
    pub end: u32,
    /// The definition's name ("" for a window).
    pub symbol: String,
    /// "function", "class", "struct", "enum", "trait", "impl", "interface", "module", or
    /// "lines" for a window.
    pub kind: &'static str,
    /// A later window of a definition too long to offer whole (its first holds the
    /// signature): it is the definition's, but does not define its name again.
    pub more: bool,
}

/// The language whose definitions are found, if any.
pub fn code_lang(path: &str) -> Option<Lang> {
    lang_of(path).filter(|l| has_definitions(*l))
}

/// The number of lines of `text` (a final newline ends the last line, it starts none).
pub fn line_count(text: &str) -> usize {
    if text.is_empty() {
        return 0;
    }
    let n = memchr::memchr_iter(b'\n', text.as_bytes()).count();
    if text.ends_with('\n') {
        n
    } else {
        n + 1
    }
}

/// The regions of a file, in line order, covering every line once, and for each the names
/// its code refers to (lang/symbols.rs; none outside the languages whose definitions are
/// found).
pub fn regions_and_references(path: &str, text: &str) -> (Vec<Region>, Vec<Vec<Box<str>>>) {
    let n = line_count(text);
    if n == 0 {
        return (Vec::new(), Vec::new());
    }
    let text_lines: Vec<&str> = text.split('\n').collect();
    let Some(lang) = code_lang(path) else {
        let out = windows(&text_lines, 0, n - 1, "", "lines");
        let none = vec![Vec::new(); out.len()];
        return (out, none);
    };
    let lines = lex(text.as_bytes(), lang);
    let mut spans: Vec<Span> = spans(&lines, lang)
        .into_iter()
        .filter(|s| s.start < n)
        .collect();
    for s in &mut spans {
        s.end = s.end.min(n - 1);
    }
    spans.sort_by_key(|s| (s.start, std::cmp::Reverse(s.end)));
    let mut out = Vec::new();
    cut(&text_lines, &lines, &spans, 0, n - 1, None, &mut out, 0);
    let refs = out
        .iter()
        .map(|r| symbols::references(&lines, lang, r.start as usize - 1, r.end as usize - 1))
        .collect();
    (out, refs)
}

/// The spans directly inside [from, to] (not inside another of them), sorted.
fn outermost(spans: &[Span], from: usize, to: usize, skip: Option<&Span>) -> Vec<Span> {
    let mut out: Vec<Span> = Vec::new();
    for s in spans {
        if s.start < from
            || s.end > to
            || skip.is_some_and(|k| k.start == s.start && k.end == s.end)
        {
            continue;
        }
        if out.last().is_some_and(|o| s.start <= o.end) {
            continue; // inside (or overlapping) the one before
        }
        out.push(s.clone());
    }
    out
}

/// Whether line `i` belongs with the definition below it (a comment or a decorator; a blank
/// line only inside a comment or a docstring, as in Julia's `"""` above a function).
fn leads_in(lines: &[Line], text_lines: &[&str], i: usize) -> bool {
    let raw = text_lines.get(i).map_or("", |l| l.trim());
    if raw.is_empty() {
        return !lines[i].starts_in_code;
    }
    let code = String::from_utf8_lossy(&lines[i].code);
    code.trim().is_empty() || is_decoration(&code)
}

/// Cut lines [from, to] into regions: the definitions there, and the lines between them
/// (named after `owner` when inside a definition that was split, else in windows).
#[allow(clippy::too_many_arguments)]
fn cut(
    text_lines: &[&str],
    lines: &[Line],
    spans: &[Span],
    from: usize,
    to: usize,
    owner: Option<&Span>,
    out: &mut Vec<Region>,
    depth: usize,
) {
    let gap = |a: usize, b: usize, out: &mut Vec<Region>| match owner {
        Some(o) => {
            let mut w = windows(text_lines, a, b, &o.name, o.kind);
            for r in &mut w[usize::from(a == from)..] {
                r.more = true;
            }
            out.extend(w)
        }
        None => out.extend(windows(text_lines, a, b, "", "lines")),
    };
    let mut at = from;
    for d in &outermost(spans, from, to, owner) {
        // Comments and decorators right above the definition go with it.
        let mut start = d.start.max(at);
        while start > at && leads_in(lines, text_lines, start - 1) {
            start -= 1;
        }
        if start > at {
            gap(at, start - 1, out);
        }
        let long = d.end - d.start + 1 > SPLIT_OVER;
        if long && depth < 2 && !outermost(spans, d.start + 1, d.end, Some(d)).is_empty() {
            // The head (leading comments, signature, fields) keeps the name; then its members.
            cut(
                text_lines,
                lines,
                spans,
                start,
                d.end,
                Some(d),
                out,
                depth + 1,
            );
        } else {
            // A long definition without members (a function of one large `match`) in
            // windows, so the bundle can show the lines of it a task is about.
            let mut w = if long {
                windows(text_lines, start, d.end, &d.name, d.kind)
            } else {
                vec![Region {
                    start: start as u32 + 1,
                    end: d.end as u32 + 1,
                    symbol: d.name.clone(),
                    kind: d.kind,
                    more: false,
                }]
            };
            for r in w.iter_mut().skip(1) {
                r.more = true;
            }
            out.extend(w);
        }
        at = d.end + 1;
    }
    if at <= to {
        gap(at, to, out);
    }
}

/// Lines [from, to] (0-based, inclusive) in windows of at most WINDOW lines, each ended at
/// the last blank line of its second half where there is one.
fn windows(
    lines: &[&str],
    from: usize,
    to: usize,
    symbol: &str,
    kind: &'static str,
) -> Vec<Region> {
    let mut out = Vec::new();
    let mut start = from;
    while start <= to {
        let mut end = (start + WINDOW - 1).min(to);
        if end < to {
            if let Some(blank) = (start + WINDOW / 2..=end)
                .rev()
                .find(|&i| lines.get(i).is_some_and(|l| l.trim().is_empty()))
            {
                end = blank;
            }
        }
        out.push(Region {
            start: start as u32 + 1,
            end: end as u32 + 1,
            symbol: symbol.to_string(),
            kind,
            more: false,
        });
        start = end + 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn regions(path: &str, text: &str) -> Vec<Region> {
        regions_and_references(path, text).0
    }

    fn shape(path: &str, text: &str) -> Vec<(u32, u32, String, &'static str)> {
        regions(path, text)
            .into_iter()
            .map(|r| (r.start, r.end, r.symbol, r.kind))
            .collect()
    }

    fn r(s: u32, e: u32, sym: &str, kind: &'static str) -> (u32, u32, String, &'static str) {
        (s, e, sym.to_string(), kind)
    }

    /// Each definition's name with its first and last line (1-based), sorted.
    fn span_lines(src: &str, lang: Lang) -> Vec<(String, usize, usize)> {
        let mut v: Vec<_> = spans(&lex(src.as_bytes(), lang), lang)
            .into_iter()
            .map(|s| (s.name, s.start + 1, s.end + 1))
            .collect();
        v.sort();
        v
    }

    fn span_of(src: &str, lang: Lang, name: &str) -> (usize, usize) {
        let s = span_lines(src, lang).into_iter().find(|s| s.0 == name);
        s.map(|s| (s.1, s.2)).expect(name)
    }

    fn covers_every_line_once(path: &str, text: &str) {
        let regions = regions(path, text);
        let mut next = 1;
        for r in &regions {
            assert_eq!(r.start, next, "{path}: {regions:?}");
            assert!(r.end >= r.start);
            next = r.end + 1;
        }
        assert_eq!(next as usize, line_count(text) + 1, "{path}: {regions:?}");
    }

    #[test]
    fn python_definitions_with_their_decorators_and_comments() {
        let src = "import os\n\n# Loads it.\n@cache\ndef load(path):\n    return open(path)\n\n\nclass Store:\n    def get(self):\n        pass\n\nX = 1\n";
        assert_eq!(
            shape("a.py", src),
            [
                r(1, 2, "", "lines"),
                r(3, 6, "load", "function"),
                r(7, 8, "", "lines"),
                r(9, 11, "Store", "class"),
                r(12, 13, "", "lines")
            ]
        );
        covers_every_line_once("a.py", src);
    }

    #[test]
    fn rust_items_and_a_long_impl_cut_along_its_methods() {
        let mut src = String::from("use std::fmt;\n\n/// A thing.\n#[derive(Debug)]\npub struct Thing {\n    x: u32,\n}\n\nimpl Thing {\n    pub fn new() -> Self {\n        Thing { x: 0 }\n    }\n\n");
        src.push_str("    /// Grows it.\n    pub fn grow(&mut self) {\n");
        for _ in 0..90 {
            src.push_str("        self.x += 1;\n");
        }
        src.push_str("    }\n}\n\nfn main() {}\n");
        let got = shape("t.rs", &src);
        assert_eq!(got[0], r(1, 2, "", "lines"));
        assert_eq!(got[1], r(3, 7, "Thing", "struct"));
        assert_eq!(got[2], r(8, 8, "", "lines"));
        assert_eq!(got[3], r(9, 9, "Thing", "impl"), "the impl's head");
        assert_eq!(got[4], r(10, 12, "new", "function"));
        assert_eq!(got[5], r(13, 13, "Thing", "impl"));
        assert_eq!(
            got[6],
            r(14, 53, "grow", "function"),
            "the doc comment goes with the method, a long one's in windows"
        );
        assert_eq!(got[7], r(54, 93, "grow", "function"));
        assert_eq!(got[8], r(94, 106, "grow", "function"));
        let more: Vec<bool> = regions("t.rs", &src).iter().map(|r| r.more).collect();
        assert_eq!(
            more[3..9],
            [false, false, true, false, true, true],
            "only a definition's first piece defines it"
        );
        assert_eq!(
            got[9],
            r(107, 107, "Thing", "impl"),
            "the impl's closing brace"
        );
        assert_eq!(*got.last().unwrap(), r(109, 109, "main", "function"));
        covers_every_line_once("t.rs", &src);
    }

    #[test]
    fn java_types_methods_and_constructors() {
        let src = "package a;\n\nimport java.util.List;\n\n/** A store. */\n@Deprecated\npublic final class Store<T> {\n  private final List<T> items = new ArrayList<>(4);\n\n  public Store(int n) {\n    init(n);\n  }\n\n  @Override\n  public <R> List<R> map(Function<T, R> f,\n      int limit) throws IOException {\n    return items.stream().map(f).toList();\n  }\n\n  enum Mode {\n    FAST(\"f\"),\n    SLOW(\"s\");\n  }\n\n  interface Sink {\n    void put(String s);\n  }\n}\n\nrecord Point(int x, int y) {}\n";
        assert_eq!(
            shape("a/Store.java", src),
            [
                r(1, 4, "", "lines"),
                r(5, 28, "Store", "class"),
                r(29, 29, "", "lines"),
                r(30, 30, "Point", "class"),
            ]
        );
        let defs = crate::tasks::files::definitions("a/Store.java", src);
        assert_eq!(
            defs,
            ["Mode", "Point", "Sink", "Store", "map", "put"],
            "no call, field or enum constant"
        );
        covers_every_line_once("a/Store.java", src);
    }

    #[test]
    fn a_long_java_class_cut_at_methods_whose_body_opens_below() {
        let step = "        step();\n";
        let src = format!(
            "public class Parser {{\n    public Token next()\n        throws IOException\n    {{\n{}    }}\n\n    int size() {{ return n; }}\n\n    void close() throws IOException\n    {{\n{}    }}\n}}\n",
            step.repeat(60),
            step.repeat(30)
        );
        let got = shape("a/Parser.java", &src);
        assert_eq!(got[0], r(1, 1, "Parser", "class"));
        assert_eq!(got[1], r(2, 65, "next", "function"));
        assert_eq!(got[3], r(67, 67, "size", "function"));
        assert_eq!(got[5], r(69, 101, "close", "function"));
        covers_every_line_once("a/Parser.java", &src);
    }

    #[test]
    fn csharp_types_and_members_in_a_namespace_with_their_attributes() {
        let src = "using System;\n\nnamespace Shop.Carts\n{\n    [Serializable]\n    public sealed partial class Cart<T> : IDisposable where T : class\n    {\n        private readonly List<T> items = new List<T>();\n\n        public Cart(int n) : base()\n        {\n            Init(n);\n        }\n\n        public async Task<IList<R>> MapAsync<R>(Func<T, R> f)\n        {\n            return await Task.FromResult(items.Select(f).ToList());\n        }\n\n        public int Count => items.Count;\n\n        public override string ToString() => \"cart\";\n    }\n\n    public record struct Point(int X, int Y);\n}\n";
        assert_eq!(
            shape("Shop/Cart.cs", src),
            [
                r(1, 4, "", "lines"),
                r(5, 23, "Cart", "class"),
                r(24, 24, "", "lines"),
                r(25, 25, "Point", "class"),
                r(26, 26, "", "lines"),
            ],
            "a namespace is no definition, as a package is none"
        );
        let defs = crate::tasks::files::definitions("Shop/Cart.cs", src);
        assert_eq!(
            defs,
            ["Cart", "MapAsync", "Point", "ToString"],
            "no call, field, property or attribute"
        );
        covers_every_line_once("Shop/Cart.cs", src);
    }

    #[test]
    fn c_functions_with_their_type_above_and_no_macro_call_or_preprocessor_line() {
        let src = "#include \"server.h\"\n#define MAX(a, b) ((a) > (b) ? (a) : (b))\n\nstruct point {\n    int x, y;\n};\nstruct point origin;\n\nstatic int\nparse(const char *s)\n{\n    return atoi(s);\n}\n\nREDIS_STATIC char *dup_name(robj *o) {\n    o->free(o);\n    help(o,\n        \"usage: robj dup(name)\",\n        NULL);\n}\n\nSTATIC_ASSERT(sizeof(int) == 4);\nint main(int argc, char **argv);\n";
        assert_eq!(
            shape("src/t.c", src),
            [
                r(1, 3, "", "lines"),
                r(4, 6, "point", "struct"),
                r(7, 9, "", "lines"),
                r(10, 13, "parse", "function"),
                r(14, 14, "", "lines"),
                r(15, 20, "dup_name", "function"),
                r(21, 22, "", "lines"),
                r(23, 23, "main", "function"),
            ]
        );
        assert_eq!(
            crate::tasks::files::definitions("src/t.c", src),
            ["dup_name", "main", "parse", "point"],
            "no call through a pointer, no string's words, no variable of a struct"
        );
        covers_every_line_once("src/t.c", src);
    }

    #[test]
    fn cpp_classes_templates_and_qualified_methods_in_a_namespace() {
        let src = "namespace fmt {\ntemplate <typename T>\nclass FMT_API buffer : public base<T> {\n public:\n  explicit buffer(size_t n) : size_(n) {}\n  [[nodiscard]] auto size() const noexcept -> size_t { return size_; }\n  virtual void grow(size_t n) = 0;\n private:\n  size_t size_;\n};\nenum class color : int { red };\n}  // namespace fmt\n\nvoid fmt::buffer::clear() {\n  size_ = 0;\n}\n";
        let defs = crate::tasks::files::definitions("include/fmt/b.h", src);
        assert_eq!(
            defs,
            ["buffer", "clear", "color", "grow", "size"],
            "no macro, attribute or base class"
        );
        assert_eq!(
            shape("include/fmt/b.h", src),
            [
                r(1, 2, "", "lines"),
                r(3, 10, "buffer", "class"),
                r(11, 11, "color", "enum"),
                r(12, 13, "", "lines"),
                r(14, 16, "clear", "function")
            ]
        );
        covers_every_line_once("include/fmt/b.h", src);
    }

    #[test]
    fn kotlin_swift_and_php_definitions_by_their_keywords() {
        let kt = "package okhttp3\n\n@Suppress(\"x\")\ndata class Url internal constructor(val s: String) {\n  fun <T> List<T>.second(): T = this[1]\n\n  override fun toString(): String {\n    return s\n  }\n\n  companion object {\n    @JvmStatic fun String.toUrl(): Url = Url(this)\n  }\n}\n";
        assert_eq!(
            crate::tasks::files::definitions("okhttp/Url.kt", kt),
            ["Url", "second", "toString", "toUrl"]
        );
        assert_eq!(shape("okhttp/Url.kt", kt)[1], r(3, 14, "Url", "class"));
        let swift = "import Foundation\n\nopen class Session: @unchecked Sendable {\n    public convenience init(queue: DispatchQueue = .main) {\n        self.init()\n    }\n\n    @discardableResult\n    open func request<P: Encodable>(_ p: P) -> Request {\n        perform { $0.run() }\n    }\n}\n\nextension Session: RequestDelegate {\n    class func shared() -> Session { Session() }\n}\n";
        assert_eq!(
            crate::tasks::files::definitions("Source/Session.swift", swift),
            ["Session", "init", "request", "shared"]
        );
        assert_eq!(
            shape("Source/Session.swift", swift)[3],
            r(14, 16, "Session", "impl")
        );
        let php = "<?php\n\nnamespace Composer;\n\n# A note.\nfinal class Installer implements InstallerInterface\n{\n    public function __construct(private IOInterface $io) {}\n\n    protected static function &paths(array $a): array\n    {\n        return array_map(function ($p) { return $p; }, $a);\n    }\n}\n";
        assert_eq!(
            crate::tasks::files::definitions("src/Installer.php", php),
            ["Installer", "__construct", "paths"],
            "no closure"
        );
        assert_eq!(
            shape("src/Installer.php", php)[1],
            r(5, 14, "Installer", "class")
        );
        for (path, src) in [
            ("okhttp/Url.kt", kt),
            ("Source/Session.swift", swift),
            ("src/Installer.php", php),
        ] {
            covers_every_line_once(path, src);
        }
    }

    #[test]
    fn ruby_definitions_by_indentation_to_their_end() {
        let rb = r#"# frozen_string_literal: true

module RuboCop
  module Cop
    # Checks the style.
    class Style::Cart < Base
      MSG = <<~MSG
        def not_a_method
      end
      MSG

      def total(items)
        items.sum { |i| i.price } if items.any?
      rescue StandardError
        0
      end

      def self.for(user) = new(user)

      private def valid?
        true
      end

      class << self
        def <=>(other)
          puts <<EOS
end
EOS
          1
        end
      end
    end
  end
end
"#;
        assert_eq!(
            crate::tasks::files::definitions("lib/cart.rb", rb),
            ["<=>", "Cart", "for", "not_a_method", "total", "valid"],
            "`class << self` is no class (a raw line's names are read without the lexer)"
        );
        assert_eq!(
            shape("lib/cart.rb", rb),
            [
                r(1, 4, "", "lines"),
                r(5, 32, "Cart", "class"),
                r(33, 34, "", "lines")
            ]
        );
        let at = |name: &str| span_of(rb, Lang::Ruby, name);
        assert_eq!(
            at("total"),
            (12, 16),
            "the rescue is the method's, its end too"
        );
        assert_eq!(at("for"), (18, 18), "an endless method is one line");
        assert_eq!(at("valid"), (20, 22));
        assert_eq!(
            at("<=>"),
            (25, 30),
            "a heredoc's lines at any indent are inside"
        );
        assert!(
            !span_lines(rb, Lang::Ruby)
                .iter()
                .any(|s| s.0 == "not_a_method"),
            "nor does a heredoc's line define anything"
        );
        covers_every_line_once("lib/cart.rb", rb);
    }

    #[test]
    fn scala_definitions_by_indentation_to_their_closing_brace() {
        let scala = r#"package cats.data

/** A chain. */
sealed abstract class Chain[+A] {

  /**
   * The head.
   */
  def headOption: Option[A] = uncons.map(_._1)

  final def ++[A2 >: A](c: Chain[A2]): Chain[A2] =
    concat(c)

  @tailrec
  private[data] def take(
      count: Long
  ): Chain[A] = {
    if (count <= 0) {
      Chain.nil
    } else {
      val usage = """take:
the first n
"""
      this
    }
  }
  lazy val size: Long = length
}

object Chain {
  final private[data] case class Wrap[A](seq: Seq[A]) extends Chain[A]
  def one[A](a: A): Chain[A] =
    Wrap(a :: Nil)
}
"#;
        assert_eq!(
            crate::tasks::files::definitions("core/Chain.scala", scala),
            ["++", "Chain", "Wrap", "headOption", "one", "take"],
            "a `val` and a package are none"
        );
        assert_eq!(
            shape("core/Chain.scala", scala),
            [
                r(1, 2, "", "lines"),
                r(3, 28, "Chain", "class"),
                r(29, 29, "", "lines"),
                r(30, 34, "Chain", "class")
            ]
        );
        let at = |name: &str| span_of(scala, Lang::Scala, name);
        assert_eq!(at("headOption"), (9, 9), "not the doc comment below it");
        assert_eq!(at("++"), (11, 12), "a body of one indented expression");
        assert_eq!(
            at("take"),
            (15, 26),
            "its parameters, `}} else {{` and a string at column 0 are inside; its `}}` ends it"
        );
        assert_eq!(at("Wrap"), (31, 31));
        covers_every_line_once("core/Chain.scala", scala);
    }

    #[test]
    fn elixir_definitions_by_indentation_to_their_end() {
        let ex = r#"defmodule Shop.Cart do
  @moduledoc """
  A cart.

  def not_a_function(x)
  """

  alias Shop.Item

  @doc "The total."
  @spec total(t) :: integer
  def total(cart) do
    Enum.sum(cart.items)
  rescue
    _ -> 0
  end

  def empty?(%{items: []}), do: true
  def empty?(_cart), do: false

  defp price(item),
    do: item.price

  defmacro unquote(:name)(x), do: x

  defimpl String.Chars, for: Shop.Cart do
    def to_string(cart), do: "cart"
  end
end
"#;
        assert_eq!(
            crate::tasks::files::definitions("lib/shop/cart.ex", ex),
            [
                "Cart",
                "empty",
                "not_a_function",
                "price",
                "to_string",
                "total"
            ],
            "a raw line's names are read without the lexer; `unquote(…)` names none"
        );
        assert_eq!(shape("lib/shop/cart.ex", ex), [r(1, 29, "Cart", "class")]);
        let at = |name: &str| span_of(ex, Lang::Elixir, name);
        assert_eq!(
            at("total"),
            (12, 16),
            "the rescue is the function's, its end too"
        );
        assert_eq!(at("price"), (21, 22), "a `do:` on the line below");
        assert_eq!(at("Cart"), (1, 29));
        assert_eq!(
            span_lines(ex, Lang::Elixir)
                .iter()
                .filter(|s| s.0 == "empty" || s.0 == "Cart")
                .map(|s| (s.1, s.2))
                .collect::<Vec<_>>(),
            [(1, 29), (26, 28), (18, 18), (19, 19)],
            "the module; the implementation for it; one line a clause"
        );
        assert!(!span_lines(ex, Lang::Elixir)
            .iter()
            .any(|s| s.0 == "not_a_function" || s.0 == "unquote"));
        covers_every_line_once("lib/shop/cart.ex", ex);
    }

    #[test]
    fn lua_definitions_by_indentation_to_their_end() {
        let lua = r#"local M = {}

--[[
function M.not_a_function()
end
]]

--- Sums a cart.
function M.total(cart)
  local sum = 0
  for _, item in ipairs(cart) do
    sum = sum + item.price
  end
  return sum
end

local function price(item) return item.price end

M.handlers = {
  add = function(cart, item)
    table.insert(cart, item)
  end,
}

vim.schedule(function()
  M.total({})
end)

function Cart:clear()
  self.items = {}
end

return M
"#;
        assert_eq!(
            crate::tasks::files::definitions("lua/shop/cart.lua", lua),
            ["add", "clear", "not_a_function", "price", "total"]
        );
        let at = |name: &str| span_of(lua, Lang::Lua, name);
        assert_eq!(at("total"), (9, 15), "its `end`'s, not the loop's");
        assert_eq!(at("price"), (17, 17));
        assert_eq!(at("add"), (20, 22), "a table's field, to its `end,`");
        assert_eq!(at("clear"), (29, 31));
        assert!(
            !span_lines(lua, Lang::Lua)
                .iter()
                .any(|s| s.0 == "not_a_function"),
            "a block comment defines nothing; nor does a function passed to a call"
        );
        assert_eq!(span_lines(lua, Lang::Lua).len(), 4);
        assert_eq!(
            shape("lua/shop/cart.lua", lua)[1],
            r(8, 15, "total", "function"),
            "its doc comment leads into it"
        );
        covers_every_line_once("lua/shop/cart.lua", lua);
    }

    #[test]
    fn haskell_definitions_from_their_signature_through_their_equations() {
        let hs = r#"module Shop.Cart (total, Cart (..)) where

import qualified Data.Map as M

{-
total :: not a signature
-}

-- | A cart.
data Cart = Cart
  { items :: [Item]
  }

-- | The total.
total :: Cart -> Int
total (Cart []) = 0
total (Cart xs) = sum (map price xs)
  where
    price = itemPrice

empty
  :: Cart
empty = Cart []

instance Show Cart where
  show c = "cart"

instance Monoid.Semigroup Cart where
  a <> b = Cart (items a ++ items b)

(<+>) :: Cart -> Cart -> Cart
x <+> y = x <> y

a `merge` b = a <+> b
"#;
        assert_eq!(
            crate::tasks::files::definitions("src/Shop/Cart.hs", hs),
            ["<+>", "Cart", "empty", "merge", "total"],
            "top-level declarations, read from raw lines (not those in a `{{- -}}` that have no `=` or `::`)"
        );
        let at = |name: &str| span_of(hs, Lang::Haskell, name);
        assert_eq!(
            at("total"),
            (15, 19),
            "its signature, equations and `where`"
        );
        assert_eq!(at("empty"), (21, 23), "a signature on lines of its own");
        assert_eq!(at("<+>"), (31, 32));
        assert_eq!(at("merge"), (34, 34));
        assert_eq!(at("show"), (26, 26), "an instance's method");
        assert_eq!(at("<>"), (29, 29));
        assert_eq!(
            span_lines(hs, Lang::Haskell)
                .iter()
                .filter(|s| s.0 == "Cart")
                .map(|s| (s.1, s.2))
                .collect::<Vec<_>>(),
            [(10, 12), (25, 26), (28, 29)],
            "the type, and its instances by the type (`Monoid.Semigroup` is one class)"
        );
        assert!(
            !span_lines(hs, Lang::Haskell)
                .iter()
                .any(|s| s.0 == "price" || s.0 == "M"),
            "a `where`'s binding is its function's; an import defines nothing"
        );
        covers_every_line_once("src/Shop/Cart.hs", hs);
    }

    #[test]
    fn zig_perl_and_r_definitions_by_braces() {
        let zig = r#"const std = @import("std");

/// A point.
pub const Point = packed struct(u32) {
    x: u16,
    y: u16,

    pub fn init(x: u16) Point {
        return .{ .x = x, .y = 0 };
    }
};

fn alloc(a: std.mem.Allocator) error{OutOfMemory}!*Point {
    return a.create(Point);
}

const Error = error{
    Full,
};

test "init" {
    _ = Point.init(1);
}
"#;
        assert_eq!(
            crate::tasks::files::definitions("src/point.zig", zig),
            ["Point", "alloc", "init"]
        );
        let at = |name: &str| span_of(zig, Lang::Zig, name);
        assert_eq!(at("Point"), (4, 11));
        assert_eq!(at("init"), (8, 10));
        assert_eq!(at("alloc"), (13, 15), "an error set's braces open no body");
        assert_eq!(
            span_lines(zig, Lang::Zig).len(),
            3,
            "an error set and a test are none"
        );
        covers_every_line_once("src/point.zig", zig);

        let perl = r#"package Shop::Cart;
use Mojo::Base -base;

=head1 NAME

sub not_a_sub { }

=cut

sub total {
  my $self = shift;
  return sum map { $_->price } @{$self->items};
}

sub Shop::Cart::empty { !@{shift->items} }

my $helper = sub { 1 };
1;
"#;
        assert_eq!(
            crate::tasks::files::definitions("lib/Shop/Cart.pm", perl),
            ["empty", "not_a_sub", "total"],
            "a raw line's names are read without the lexer"
        );
        assert_eq!(span_of(perl, Lang::Perl, "total"), (10, 13));
        assert_eq!(span_of(perl, Lang::Perl, "empty"), (15, 15));
        assert_eq!(
            span_lines(perl, Lang::Perl).len(),
            2,
            "POD defines nothing, nor does an anonymous sub"
        );
        covers_every_line_once("lib/Shop/Cart.pm", perl);

        let r = r#"#' Totals a cart.
cart_total <- function(cart) {
  sum(cart$price)
}

mutate.data.frame = function(.data, ...) {
  NULL
}

Cart <- R6::R6Class("Cart", public = list(
  add = function(item) {
    invisible(self)
  }
))

double <- \(x) x * 2
"#;
        assert_eq!(
            crate::tasks::files::definitions("R/cart.R", r),
            ["add", "cart_total", "double", "mutate.data.frame"],
            "a dot is part of an R name"
        );
        let at = |name: &str| span_of(r, Lang::R, name);
        assert_eq!(at("cart_total"), (2, 4));
        assert_eq!(at("mutate.data.frame"), (6, 8));
        assert_eq!(at("add"), (11, 13), "an R6 class's member");
        assert_eq!(at("double"), (16, 16));
        assert_eq!(
            shape("R/cart.R", r)[0],
            (1, 4, "cart_total".to_string(), "function"),
            "its roxygen comment leads into it"
        );
        covers_every_line_once("R/cart.R", r);
    }

    #[test]
    fn julia_definitions_by_indentation_to_their_end() {
        let jl = r#"module Shapes

"""
    area(c)

function not_a_function(x)
"""
area(c::Circle) = π * c.r^2

#=
function commented(x)
end
=#

function Base.show(io::IO, c::Circle)
    if c.r > 0
        print(io, "circle")
    end
end

Base.@kwdef mutable struct Circle{T} <: Shape
    r::T = 1
    Circle(r) = new{typeof(r)}(r)
end

is_big(c)::Bool = c.r == 10 || c.r > 100
check(c) == true
x = f(y)

end
"#;
        assert_eq!(
            crate::tasks::files::definitions("src/shapes.jl", jl),
            [
                "Circle",
                "area",
                "commented",
                "is_big",
                "not_a_function",
                "show"
            ],
            "a raw line's names are read without the lexer; `==` and a call's value are none"
        );
        let at = |name: &str| span_of(jl, Lang::Julia, name);
        assert_eq!(at("area"), (8, 8));
        assert_eq!(at("show"), (15, 19), "its `end`'s, not its `if`'s");
        assert_eq!(
            span_lines(jl, Lang::Julia)
                .iter()
                .filter(|s| s.0 == "Circle")
                .map(|s| (s.1, s.2))
                .collect::<Vec<_>>(),
            [(21, 24), (23, 23)],
            "a struct after a macro, and its inner constructor"
        );
        assert_eq!(at("is_big"), (26, 26));
        assert_eq!(
            shape("src/shapes.jl", jl)[1],
            r(3, 8, "area", "function"),
            "its docstring leads into it"
        );
        assert_eq!(span_lines(jl, Lang::Julia).len(), 5, "a module is none");
        covers_every_line_once("src/shapes.jl", jl);
    }

    #[test]
    fn elm_reads_as_haskell_and_crystal_as_ruby() {
        let elm = r#"module Main exposing (main)

import Html exposing (Html)

type alias Model =
    { count : Int }

view : Model -> Html Msg
view model =
    Html.text (String.fromInt model.count)
"#;
        assert_eq!(
            span_lines(elm, Lang::Haskell),
            [("Model".to_string(), 5, 6), ("view".to_string(), 8, 10)]
        );
        assert_eq!(lang_of("src/Main.elm"), Some(Lang::Haskell));
        assert_eq!(lang_of("src/cart.cr"), Some(Lang::Ruby));
        covers_every_line_once("src/Main.elm", elm);
    }

    #[test]
    fn ocaml_f_sharp_erlang_and_lisp_definitions_by_indentation() {
        let ml = r#"(* Carts. *)
module Cart =
struct
  type 'a t = { items : 'a list }

  let rec total cart =
    let sum = List.fold_left ( + ) 0 in
    sum cart.items

  and ( +: ) cart item = { items = item :: cart.items }
end

let empty = { Cart.items = [] }
"#;
        let at = |name: &str| span_of(ml, Lang::Ml, name);
        assert_eq!(
            at("Cart"),
            (2, 11),
            "its `struct` on a line of its own stays inside"
        );
        assert_eq!(at("t"), (4, 4));
        assert_eq!(at("total"), (6, 8), "not its local `let`");
        assert_eq!(at("+:"), (10, 10));
        assert_eq!(at("empty"), (13, 13));
        assert_eq!(span_lines(ml, Lang::Ml).len(), 5);
        covers_every_line_once("lib/cart.ml", ml);

        let fs = r#"module Shop.Cart

type Cart(items: int list) =
    member this.Total = List.sum items
    static member Empty = Cart([])

let inline total (cart: Cart) =
    let tax = 0
    cart.Total + tax
"#;
        assert_eq!(
            crate::tasks::files::definitions("src/Cart.fs", fs),
            ["Cart", "Empty", "Total", "total"],
            "a file's heading `module` is none"
        );
        assert_eq!(span_of(fs, Lang::Ml, "Cart"), (3, 5));
        assert_eq!(span_of(fs, Lang::Ml, "Total"), (4, 4));
        assert_eq!(span_of(fs, Lang::Ml, "total"), (7, 9));
        covers_every_line_once("src/Cart.fs", fs);

        let erl = r#"-module(cart).
-export([total/1]).

%% The total.
total([]) ->
    0;
total([Item | Rest]) ->
    price(Item) + total(Rest).

price(#{price := P}) -> P.
"#;
        assert_eq!(
            crate::tasks::files::definitions("src/cart.erl", erl),
            ["price", "total"]
        );
        assert_eq!(
            span_of(erl, Lang::Erlang, "total"),
            (5, 8),
            "a function's clauses are one definition"
        );
        assert_eq!(span_of(erl, Lang::Erlang, "price"), (10, 10));
        assert_eq!(shape("src/cart.erl", erl)[1], r(4, 8, "total", "function"));
        covers_every_line_once("src/cart.erl", erl);

        let clj = r#"(ns shop.cart)

;; The total.
(defn ^:private cart-total
  [cart]
  (reduce + (map :price cart)))

(def tax 0.2)

(defrecord Cart [items])
"#;
        assert_eq!(
            crate::tasks::files::definitions("src/shop/cart.clj", clj),
            ["Cart", "cart-total"],
            "a value's `def` is none"
        );
        assert_eq!(span_of(clj, Lang::Lisp, "cart-total"), (4, 6));
        assert_eq!(span_of(clj, Lang::Lisp, "Cart"), (10, 10));
        let scheme = "(define (cart-total cart)\n  (apply + cart))\n";
        assert_eq!(
            span_lines(scheme, Lang::Lisp),
            [("cart-total".to_string(), 1, 2)]
        );
        covers_every_line_once("src/shop/cart.clj", clj);
    }

    #[test]
    fn pascal_ada_vhdl_and_visual_basic_definitions_to_their_end() {
        let pas = r#"unit Carts;

interface

type
  TCart = class(TObject)
  private
    FItems: TList;
  public
    function Total: Currency;
  end;
  TCartRef = class of TCart;

implementation

{ The sum of the items. }
function TCart.Total: Currency;
var
  I: Integer;
begin
  Result := 0;
end;

end.
"#;
        assert_eq!(
            crate::tasks::files::definitions("src/Carts.pas", pas),
            ["TCart", "Total"],
            "a class reference is none"
        );
        let spans = span_lines(pas, Lang::Pascal);
        assert_eq!(
            spans,
            [
                ("TCart".to_string(), 6, 11),
                ("Total".to_string(), 10, 10),
                ("Total".to_string(), 17, 22)
            ],
            "its sections and its body stay inside, to its `end`"
        );
        covers_every_line_once("src/Carts.pas", pas);

        let ada = r#"package body Shop.Carts is

   function Total (C : Cart) return Money
   is
      Sum : Money := 0;
   begin
      return Sum;
   exception
      when others => return 0;
   end Total;

   package Money_IO is new Ada.Text_IO.Float_IO (Money);
end Shop.Carts;
"#;
        assert_eq!(span_of(ada, Lang::Ada, "Carts"), (1, 13));
        assert_eq!(
            span_of(ada, Lang::Ada, "Total"),
            (3, 10),
            "its `is`, `begin` and `exception` stay inside"
        );
        assert_eq!(span_lines(ada, Lang::Ada).len(), 2, "an instance is none");
        covers_every_line_once("src/shop-carts.adb", ada);

        let vhdl = r#"entity uart is
  port (clk : in std_logic);
end entity;

architecture rtl of uart is
  signal busy : std_logic;
begin
  tx : process (clk)
  begin
    busy <= clk;
  end process;
end architecture rtl;
"#;
        assert_eq!(
            span_lines(vhdl, Lang::Vhdl),
            [
                ("tx".to_string(), 8, 11),
                ("uart".to_string(), 1, 3),
                ("uart".to_string(), 5, 12)
            ],
            "an architecture is named by its entity"
        );
        covers_every_line_once("rtl/uart.vhd", vhdl);

        let vb = r#"Imports System

Public Class Cart
    Private ReadOnly items As New List(Of Item)

    ' The sum of the items.
    Public Function Total() As Decimal
        If items.Count = 0 Then
            Return 0
        End If
        Return items.Sum(Function(i) i.Price)
    End Function

    Public Property Get Count() As Integer
End Class
"#;
        assert_eq!(
            crate::tasks::files::definitions("Cart.vb", vb),
            ["Cart", "Count", "Total"]
        );
        assert_eq!(span_of(vb, Lang::Basic, "Cart"), (3, 15));
        assert_eq!(span_of(vb, Lang::Basic, "Total"), (7, 12));
        covers_every_line_once("Cart.vb", vb);
    }

    #[test]
    fn verilog_fortran_vim_lean_and_coffeescript_definitions() {
        let sv = r#"module alu #(
  parameter int W = 32
) (
  input  logic [W-1:0] a_i,
  output logic [W-1:0] y_o
);
`ifdef FAST
  localparam bit F = 1'b1;
`endif
  function automatic logic [W-1:0] twice(input logic [W-1:0] x);
    return x << 1;
  endfunction
  assign y_o = twice(a_i);
endmodule
"#;
        assert_eq!(
            span_lines(sv, Lang::Verilog),
            [("alu".to_string(), 1, 14), ("twice".to_string(), 10, 12)],
            "its port list's `);` and a preprocessor's line stay inside"
        );
        covers_every_line_once("rtl/alu.sv", sv);

        let f90 = r#"module carts
implicit none
#include "carts.inc"
contains

!> The sum of the items.
pure function total(items) result(s)
real, intent(in) :: items(:)
real :: s
integer :: i
do i = 1, size(items)
  s = s + items(i)
end do
end function total

subroutine show(c)
type(cart), intent(in) :: c
end subroutine
end module carts
"#;
        assert_eq!(
            crate::tasks::files::definitions("src/carts.f90", f90),
            ["carts", "show", "total"],
            "a variable's `type(cart)` is none"
        );
        assert_eq!(
            span_lines(f90, Lang::Fortran),
            [
                ("carts".to_string(), 1, 19),
                ("show".to_string(), 16, 18),
                ("total".to_string(), 7, 14)
            ],
            "a unit ends at its `end`, not at a line indented less nor at a loop's end"
        );
        covers_every_line_once("src/carts.f90", f90);

        let vim = r#"" Carts.
function! s:Total(items) abort
  return eval(join(a:items, '+'))
endfunction

function carts#Show(cart) abort
  echo s:Total(a:cart)
endf
"#;
        assert_eq!(
            span_lines(vim, Lang::Vim),
            [("Show".to_string(), 6, 8), ("Total".to_string(), 2, 4)]
        );
        covers_every_line_once("autoload/carts.vim", vim);

        let lean = r#"namespace Cart

/-- The sum of the prices. -/
@[simp] protected def Cart.total (c : Cart) : Nat :=
  c.items.foldl (· + ·) 0

theorem total_nil : total [] = 0 := by
  simp

instance : Inhabited Cart := ⟨[]⟩

end Cart
"#;
        assert_eq!(
            span_lines(lean, Lang::Lean),
            [("total".to_string(), 4, 5), ("total_nil".to_string(), 7, 8)],
            "an instance with no name is none"
        );
        covers_every_line_once("Shop/Cart.lean", lean);

        let coffee = r#"### The carts. ###
class Cart extends Base
  # The sum.
  total: (items) ->
    items.reduce ((a, b) -> a + b), 0

  @empty = => new Cart

exports.show = (cart) -> console.log cart.total()
"#;
        assert_eq!(
            span_lines(coffee, Lang::Coffee),
            [
                ("Cart".to_string(), 2, 7),
                ("empty".to_string(), 7, 7),
                ("show".to_string(), 9, 9),
                ("total".to_string(), 4, 5)
            ]
        );
        covers_every_line_once("src/cart.coffee", coffee);
    }

    #[test]
    fn gdscript_definitions() {
        let gd = r#"class_name Cart
extends Node

signal emptied
enum State { OPEN, PAID }

@rpc("any_peer")
func total(items: Array,
		tax := 0.0) -> float:
	var sum := 0.0
	for i in items:
		sum += i.price
	return sum


class Line extends RefCounted:
	static func of(price: float) -> Line:
		return Line.new()
"#;
        assert_eq!(
            crate::tasks::files::definitions("src/cart.gd", gd),
            ["Line", "State", "of", "total"],
            "no `class_name`, no `signal`"
        );
        assert_eq!(
            span_lines(gd, Lang::GdScript),
            [
                ("Line".to_string(), 16, 18),
                ("State".to_string(), 5, 5),
                ("of".to_string(), 17, 18),
                ("total".to_string(), 8, 13)
            ],
            "a wrapped parameter list stays inside"
        );
        covers_every_line_once("src/cart.gd", gd);
    }

    #[test]
    fn component_definitions_are_their_scripts() {
        let vue = r#"<template>
  <div class="cart" @click="add(item)">
    class names are listed here {
    <p>{{ total() }}</p>
  </div>
</template>

<script setup lang="ts">
import { ref } from 'vue'
const items = ref<string[]>([])

/** Adds one. */
function add(item: string) {
  items.value.push(`${item} }`)
}

const total = () => {
  return items.value.length
}
</script>

<style scoped>
  div {
    margin: 0;
  }
</style>
"#;
        assert_eq!(
            crate::tasks::files::definitions("src/Cart.vue", vue),
            ["add", "total"],
            "no definition in the template or the styles"
        );
        assert_eq!(
            span_lines(vue, Lang::Component),
            [("add".to_string(), 13, 15), ("total".to_string(), 17, 19)]
        );
        let r = regions("src/Cart.vue", vue);
        let add = r.iter().find(|r| r.symbol == "add").expect("add");
        assert_eq!(
            (add.start, add.end),
            (12, 15),
            "its comment, not the tag above it"
        );
        covers_every_line_once("src/Cart.vue", vue);

        let astro = "---\nimport Card from './Card.astro'\nexport function title(s: string) {\n  return s\n}\n---\n<Card title={title('x')} />\n<script>\n  class Menu extends HTMLElement {\n    open() {\n      this.hidden = false\n    }\n  }\n</script>\n";
        assert_eq!(
            span_lines(astro, Lang::Component),
            [
                ("Menu".to_string(), 9, 13),
                ("open".to_string(), 10, 12),
                ("title".to_string(), 3, 5)
            ]
        );
        covers_every_line_once("src/Page.astro", astro);

        let options = "<script>\nexport default defineComponent({\n  data() {\n    return { on: false }\n  },\n  methods: {\n    toggle(event) {\n      this.$emit('toggle', {\n        value: this.on\n      })\n    }\n  }\n})\n</script>\n";
        assert_eq!(
            span_lines(options, Lang::Component),
            [
                ("data".to_string(), 3, 5),
                ("default".to_string(), 2, 13),
                ("toggle".to_string(), 7, 11)
            ],
            "a call's object is no method"
        );
    }

    #[test]
    fn shell_and_powershell_definitions() {
        let sh = r#"#!/usr/bin/env bash
# Counts what `$#` says: no comment.
cart_count() {
  local n=${#items[@]}
  echo "$n items: $(printf '%s' "${items[@]}" | awk '{ print $1 }')"
}

function cart::show-all {
  cat <<-End-Of-Usage
	usage: show { all }
	End-Of-Usage
  case "$1" in
    \{*) echo brace ;;
  esac
}

function cart_total()
{
  awk 'BEGIN {
    t = 0
  }'
}
"#;
        assert_eq!(
            crate::tasks::files::definitions("bin/cart.sh", sh),
            ["cart::show-all", "cart_count", "cart_total"]
        );
        assert_eq!(
            span_lines(sh, Lang::Shell),
            [
                ("cart::show-all".to_string(), 8, 15),
                ("cart_count".to_string(), 3, 6),
                ("cart_total".to_string(), 17, 22)
            ],
            "no brace of a string, a heredoc, `${{#`, `\\{{` or a substitution in a string counts"
        );
        covers_every_line_once("bin/cart.sh", sh);

        let ps = r#"<# The carts. { #>
function Get-CartTotal {
    param([string] $Name)
    Write-Host "Total of $($Name.Trim()) is `"{0}`"" -f 'it''s {'
    $text = @"
    } not code {
"@
}

class Cart : Base {
    [int] $Count
    static [Cart] Empty() { return [Cart]::new() }
    [decimal] Total([int] $tax)
    {
        return 0
    }
}

Function global:Show-Cart($c) { $c }
"#;
        assert_eq!(
            crate::tasks::files::definitions("Carts.psm1", ps),
            ["Cart", "Get-CartTotal", "Show-Cart"]
        );
        assert_eq!(
            span_lines(ps, Lang::PowerShell),
            [
                ("Cart".to_string(), 10, 17),
                ("Empty".to_string(), 12, 12),
                ("Get-CartTotal".to_string(), 2, 8),
                ("Show-Cart".to_string(), 19, 19),
                ("Total".to_string(), 13, 16)
            ],
            "a block comment's, a here-string's and an escaped string's braces count for nothing"
        );
        covers_every_line_once("Carts.psm1", ps);
    }

    #[test]
    fn dart_definitions_are_typed_as_java_s_and_a_call_in_a_body_is_none() {
        let dart = r#"import 'package:flutter/material.dart';

int twice(int x) => x * 2;

/// The counter's page.
class CounterPage extends StatelessWidget {
  const CounterPage({super.key});

  factory CounterPage.empty() => const CounterPage();

  int get size => 1;

  @override
  Future<Widget?> build<T>(
    BuildContext context, {
    bool dense = false,
  }) async {
    return Padding(
      child: Text('x'),
    );
  }
}

extension Doubled on int {
  int doubled() => this * 2;
}

mixin class Tapped {
  static OrderedSet<int> Function() factory = () {
    return OrderedSet();
  };
}
"#;
        assert_eq!(
            crate::tasks::files::definitions("lib/counter_page.dart", dart),
            [
                "CounterPage",
                "Doubled",
                "Tapped",
                "build",
                "doubled",
                "size",
                "twice"
            ],
            "a raw line reads no constructor, nor a function type's `Function`"
        );
        assert_eq!(
            shape("lib/counter_page.dart", dart),
            [
                r(1, 2, "", "lines"),
                r(3, 3, "twice", "function"),
                r(4, 4, "", "lines"),
                r(5, 22, "CounterPage", "class"),
                r(23, 23, "", "lines"),
                r(24, 26, "Doubled", "impl"),
                r(27, 27, "", "lines"),
                r(28, 32, "Tapped", "class")
            ]
        );
        assert_eq!(
            span_lines(dart, Lang::Dart),
            [
                ("CounterPage".into(), 6, 22),
                ("CounterPage".into(), 7, 7),
                ("Doubled".into(), 24, 26),
                ("Tapped".into(), 28, 32),
                ("build".into(), 14, 21),
                ("doubled".into(), 25, 25),
                ("empty".into(), 9, 9),
                ("size".into(), 11, 11),
                ("twice".into(), 3, 3)
            ],
            "no `Padding`, `Text` or `OrderedSet` call, no `Function` type"
        );
        covers_every_line_once("lib/counter_page.dart", dart);
    }

    #[test]
    fn any_text_of_a_language_with_definitions_is_cut_into_regions_covering_it_once() {
        // Pieces of every grammar's definition lines, shuffled: no index past a line's tokens,
        // no region out of order, in any language.
        const PIECES: &[&str] = &[
            "class",
            "struct",
            "enum",
            "fun",
            "func",
            "function",
            "def",
            "fn",
            "init",
            "template",
            "namespace",
            "public",
            "static",
            "FMT_API",
            "operator",
            "x",
            "Foo",
            "(",
            ")",
            "{",
            "}",
            "[",
            "]",
            "<",
            ">",
            "::",
            "->",
            "=>",
            "=",
            ";",
            ":",
            "*",
            "&",
            "@",
            "#",
            "\"",
            "/*",
            "*/",
            "//",
            " ",
            "\n",
            "\n    ",
            "where",
            "extension",
            "record",
            "end",
            "<<~E",
            "\nE",
            "rescue",
            "object",
            "trait",
            "\"\"\"",
            "get",
            "=>",
            ".",
            "?",
            "mixin",
            "defmodule",
            "defimpl",
            "for:",
            "local",
            "--[[",
            "]]",
            "instance",
            "data",
            "`",
            "{-",
            "-}",
            "\nf",
            "sub",
            "\n=head1",
            "\n=cut",
            "<-",
            "error{",
            "#=",
            "=#",
            "@",
            "let",
            "struct",
            "(defn",
            "member",
            "procedure",
            "begin",
            "is",
            "subroutine",
            "contains",
            "endmodule",
            "endfunction",
            "End",
            "Sub",
            "theorem",
            "process",
            "TFoo",
            "\n\n",
            "$(",
            "${",
            "<<-E",
            "'",
            "\\",
            "@\"",
            "\n\"@",
            "<#",
            "#>",
            "[int]",
            "Get-Foo",
            "\n<script>",
            "\n</script>",
            "\n---",
            "export",
            "default",
            "defineComponent",
        ];
        let paths = [
            "a.py", "a.rs", "a.go", "a.ts", "a.js", "A.java", "A.cs", "a.c", "a.hpp", "A.kt",
            "A.swift", "a.php", "a.rb", "A.scala", "a.dart", "a.ex", "a.lua", "A.hs", "a.zig",
            "a.pm", "a.R", "a.jl", "a.pas", "a.adb", "a.vhd", "a.sv", "a.f90", "a.vb", "a.vim",
            "A.lean", "a.coffee", "a.sh", "a.ps1", "a.gd", "A.vue", "A.svelte", "A.astro",
        ];
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for round in 0..2000 {
            let mut text = String::new();
            for _ in 0..(round % 80) {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                text.push_str(PIECES[(seed % PIECES.len() as u64) as usize]);
                text.push(' ');
            }
            for path in paths {
                covers_every_line_once(path, &text);
                crate::tasks::files::definitions(path, &text);
            }
        }
    }

    #[test]
    fn go_and_typescript_definitions() {
        let go = "package x\n\n// Run runs.\nfunc Run() {\n}\n\ntype S struct {\n\tA int\n}\n";
        assert_eq!(
            shape("x.go", go),
            [
                r(1, 2, "", "lines"),
                r(3, 5, "Run", "function"),
                r(6, 6, "", "lines"),
                r(7, 9, "S", "struct")
            ]
        );
        let ts = "import x from 'y';\n\nexport class Cart {\n  total(): number {\n    return 1;\n  }\n}\n\nexport const add = (a: number) => {\n  return a;\n};\n";
        assert_eq!(
            shape("c.ts", ts),
            [
                r(1, 2, "", "lines"),
                r(3, 7, "Cart", "class"),
                r(8, 8, "", "lines"),
                r(9, 11, "add", "function")
            ]
        );
        covers_every_line_once("x.go", go);
        covers_every_line_once("c.ts", ts);
    }

    #[test]
    fn files_without_definitions_in_windows_ended_at_blank_lines() {
        let mut md = String::new();
        for i in 0..100 {
            md.push_str(if i % 30 == 29 { "\n" } else { "text\n" });
        }
        let got = shape("README.md", &md);
        assert_eq!(
            got[0],
            r(1, 30, "", "lines"),
            "ended at the blank line 30, in the window's second half"
        );
        assert!(got.iter().all(|g| g.1 - g.0 < WINDOW as u32));
        covers_every_line_once("README.md", &md);
        covers_every_line_once("a.py", "x = 1");
        assert!(regions("a.py", "").is_empty());
    }
}
