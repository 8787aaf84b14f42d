//! Annotations in source comments, with the function or class around them.
//!
//! The grammar is `<prefix><kind> <ID>[.<anchor>|/<test-name>]`, e.g. `@spec SPEC-012`,
//! `@spec SPEC-012.token-refresh`, `@decision DEC-003`, `@norm NORM-001`,
//! `@test SPEC-001/login-success`. Only text inside comments counts (Python's
//! triple-quoted strings count as comments, other strings never do). A file is
//! lexed only when a multi-pattern search finds `<prefix><kind>` in its bytes, so
//! a tree without annotations costs a read per file and nothing more.
//!
//! The lexer and the definitions come from `lang` (lexer, spans): an annotation in the
//! comment block right above a definition (decorators and attributes may sit between)
//! belongs to that definition; otherwise to the innermost definition around its line.

use crate::lang::lexer::{is_ident, lex};
use crate::lang::spans::{enclosing, spans};
use crate::lang::Lang;
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
            found(src, Lang::TypeScript),
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
            Lang::Slash,
            "contextia:",
            &finder("contextia:"),
        );
        assert_eq!(custom.len(), 1);
        assert_eq!(custom[0].target, "SPEC-9");
    }

    #[test]
    fn a_components_template_comments_and_script_comments() {
        let src = "<template>\n  <!-- @spec SPEC-1 -->\n  <p>@spec SPEC-2</p>\n</template>\n<script>\n// @spec SPEC-3\nfunction pay() {\n  return 1 // @norm NORM-1\n}\n</script>\n";
        assert_eq!(
            found(src, Lang::Component),
            vec![
                row(2, "spec SPEC-1", "", ""),
                row(6, "spec SPEC-3", "function", "pay"),
                row(8, "norm NORM-1", "function", "pay"),
            ]
        );
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
}
