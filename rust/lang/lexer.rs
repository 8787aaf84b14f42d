//! The lexer: each line of a source file split into its code and its comments, by the comment
//! and string syntax of its language (Python's, Elixir's and Julia's triple-quoted strings,
//! their docstrings, count as comments, as do Perl's POD and Ruby's `=begin`; other strings,
//! heredocs and here-strings included, as neither). Annotations are read from the comments,
//! definitions from the code.

use super::Lang;

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
    pub fn code_blank(&self) -> bool {
        self.code.iter().all(|b| b.is_ascii_whitespace())
    }
    pub fn comment_blank(&self) -> bool {
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
    /// The byte that escapes the next one in a string: `\\`, or PowerShell's backtick.
    escape: u8,
    /// The shells' and PowerShell's rules: a line comment opens only where a word starts
    /// (`$#`, `${#list[@]}` and `a#b` are code); `escape` escapes a byte in code too
    /// (`grep \"ok\"`); a `"` string holds code in `$( )` and `${ }`, itself with strings
    /// (`"$(type "$cmd" | awk '{print $4}')"`).
    shell: bool,
    /// Strings in whole lines after the one that opens them (`heredoc`).
    heredocs: Heredocs,
    /// Documentation in whole lines, from a line that starts with the first (then a letter,
    /// for a lone `=`) to one that starts with the second: Perl's POD (`=head1` … `=cut`),
    /// Ruby's `=begin` … `=end`.
    pod: Option<(&'static [u8], &'static [u8])>,
}

/// Which strings a language writes in whole lines after an opener (`Syntax::heredocs`).
#[derive(Clone, Copy, PartialEq)]
enum Heredocs {
    No,
    /// Ruby's and Perl's: `<<~EOS`, `<<-EOS`, `<<EOS` (quoted or not) make the lines after this
    /// one a string, up to the line that is only `EOS`.
    Ruby,
    /// The shells': `<<EOS`, `<<-EOS`, `<< 'EOS'`, `<<"EOS"`, up to the line that is only `EOS`.
    Shell,
    /// PowerShell's here-strings: `@"` or `@'` ending a line, up to the line that starts with
    /// `"@` or `'@`.
    PowerShell,
}

/// No comments, no strings: what every syntax below starts from.
const PLAIN: Syntax = Syntax {
    line: &[],
    block: None,
    quotes: b"",
    long: &[],
    long_is_comment: false,
    rust: false,
    escape: b'\\',
    shell: false,
    heredocs: Heredocs::No,
    pod: None,
};

fn syntax(lang: Lang) -> Syntax {
    const C_BLOCK: Option<(&[u8], &[u8])> = Some((b"/*", b"*/"));
    match lang {
        Lang::Python | Lang::GdScript => Syntax {
            line: &[b"#"],
            quotes: b"\"'",
            long: &[(b"\"\"\"", true), (b"'''", true)],
            long_is_comment: true,
            ..PLAIN
        },
        Lang::Rust => Syntax {
            line: &[b"//"],
            block: C_BLOCK,
            long: &[(b"\"", true)],
            rust: true,
            ..PLAIN
        },
        Lang::Go => Syntax {
            line: &[b"//"],
            block: C_BLOCK,
            quotes: b"\"'",
            long: &[(b"`", false)],
            ..PLAIN
        },
        Lang::TypeScript | Lang::JavaScript => Syntax {
            line: &[b"//"],
            block: C_BLOCK,
            quotes: b"\"'",
            long: &[(b"`", true)],
            ..PLAIN
        },
        Lang::Java => Syntax {
            line: &[b"//"],
            block: C_BLOCK,
            quotes: b"\"'",
            long: &[(b"\"\"\"", true)],
            ..PLAIN
        },
        // C#'s raw strings; Kotlin's, Scala's and Swift's multi-line ones (Swift's have escapes).
        Lang::CSharp | Lang::Kotlin | Lang::Scala => Syntax {
            line: &[b"//"],
            block: C_BLOCK,
            quotes: b"\"'",
            long: &[(b"\"\"\"", false)],
            ..PLAIN
        },
        Lang::Dart => Syntax {
            line: &[b"//"],
            block: C_BLOCK,
            quotes: b"\"'",
            long: &[(b"\"\"\"", true), (b"'''", true)],
            ..PLAIN
        },
        Lang::Swift => Syntax {
            line: &[b"//"],
            block: C_BLOCK,
            quotes: b"\"",
            long: &[(b"\"\"\"", true)],
            ..PLAIN
        },
        Lang::Php => Syntax {
            line: &[b"//", b"#"],
            block: C_BLOCK,
            quotes: b"\"'",
            ..PLAIN
        },
        Lang::C | Lang::Slash => Syntax {
            line: &[b"//"],
            block: C_BLOCK,
            quotes: b"\"'",
            ..PLAIN
        },
        Lang::Hash => Syntax {
            line: &[b"#"],
            quotes: b"\"'",
            ..PLAIN
        },
        Lang::Ruby => Syntax {
            heredocs: Heredocs::Ruby,
            pod: Some((b"=begin", b"=end")),
            ..syntax(Lang::Hash)
        },
        Lang::Perl => Syntax {
            pod: Some((b"=", b"=cut")),
            ..syntax(Lang::Ruby)
        },
        Lang::R => syntax(Lang::Hash),
        // `'` is no quote: it is Julia's adjoint (`A'`).
        Lang::Julia => Syntax {
            block: Some((b"#=", b"=#")),
            quotes: b"\"",
            long: &[(b"\"\"\"", true)],
            long_is_comment: true,
            ..syntax(Lang::Hash)
        },
        Lang::Zig => Syntax {
            block: None,
            ..syntax(Lang::C)
        },
        // `@doc """` and `@moduledoc """` are the docs, read as Python's docstrings are.
        Lang::Elixir => Syntax {
            long: &[(b"\"\"\"", true), (b"'''", true)],
            long_is_comment: true,
            ..syntax(Lang::Hash)
        },
        Lang::Lua => Syntax {
            block: Some((b"--[[", b"]]")),
            ..syntax(Lang::Dash)
        },
        // `'` is no quote: it ends names (`foldl'`, `x'`).
        Lang::Haskell => Syntax {
            block: Some((b"{-", b"-}")),
            quotes: b"\"",
            ..syntax(Lang::Dash)
        },
        Lang::Dash => Syntax {
            line: &[b"--"],
            block: C_BLOCK,
            quotes: b"\"'",
            ..PLAIN
        },
        // `'` is no quote: it ends names (`h'`), as in Haskell.
        Lang::Lean => Syntax {
            block: Some((b"/-", b"-/")),
            quotes: b"\"",
            ..syntax(Lang::Dash)
        },
        Lang::Fortran => Syntax {
            line: &[b"!"],
            ..syntax(Lang::Hash)
        },
        // `'` is no quote: it marks an attribute (`X'Length`, `clk'event`).
        Lang::Ada | Lang::Vhdl => Syntax {
            quotes: b"\"",
            ..syntax(Lang::Dash)
        },
        // `'` is no quote: it is a literal's base (`8'hFF`).
        Lang::Verilog => Syntax {
            quotes: b"\"",
            ..syntax(Lang::C)
        },
        // `###` opens a block comment before `#` a line's; `"""` strings span lines.
        Lang::Coffee => Syntax {
            block: Some((b"###", b"###")),
            long: &[(b"\"\"\"", true), (b"'''", true)],
            ..syntax(Lang::Hash)
        },
        Lang::Basic => Syntax {
            line: &[b"'"],
            quotes: b"\"",
            ..syntax(Lang::Hash)
        },
        Lang::Pascal => Syntax {
            line: &[b"//"],
            block: Some((b"{", b"}")),
            quotes: b"'",
            ..syntax(Lang::Hash)
        },
        // A `''` string spans lines; `'` alone is no quote (`x'` is a name).
        Lang::Nix => Syntax {
            block: C_BLOCK,
            quotes: b"\"",
            long: &[(b"''", false)],
            ..syntax(Lang::Hash)
        },
        // `"` starts a comment; a string in `"` reads as one, which blanks it from the code alike.
        Lang::Vim => Syntax {
            line: &[b"\""],
            quotes: b"'",
            ..syntax(Lang::Hash)
        },
        Lang::Ml => Syntax {
            line: &[b"//"],
            block: Some((b"(*", b"*)")),
            quotes: b"\"",
            ..syntax(Lang::Dash)
        },
        Lang::Lisp => Syntax {
            line: &[b";"],
            quotes: b"\"",
            ..syntax(Lang::Hash)
        },
        Lang::Erlang => Syntax {
            line: &[b"%"],
            quotes: b"\"",
            ..syntax(Lang::Hash)
        },
        // Strings span lines (an awk program in `'`), and a `'` one escapes nothing.
        Lang::Shell => Syntax {
            quotes: b"",
            long: &[(b"'", false), (b"\"", true)],
            shell: true,
            heredocs: Heredocs::Shell,
            ..syntax(Lang::Hash)
        },
        // As the shells'; a `'` string doubles a quote to hold one (`'it''s'`): read as two
        // strings, alike.
        Lang::PowerShell => Syntax {
            block: Some((b"<#", b"#>")),
            escape: b'`',
            heredocs: Heredocs::PowerShell,
            ..syntax(Lang::Shell)
        },
        Lang::Markdown | Lang::Markup | Lang::Component => Syntax {
            block: Some((b"<!--", b"-->")),
            ..PLAIN
        },
        Lang::Rst | Lang::Text | Lang::Json | Lang::Other => PLAIN,
    }
}

enum State {
    Code,
    Block,
    /// Inside whole lines of documentation, ended by a line that starts with this.
    Pod(&'static [u8]),
    /// Inside heredocs, each ended by its end's line (`ends_heredoc`), in the order they opened.
    Heredoc(Vec<Vec<u8>>),
    Str {
        end: Vec<u8>,
        /// The byte that escapes the next one, if any does.
        escape: Option<u8>,
        multiline: bool,
        comment: bool,
    },
}

pub fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

/// Whether `text` holds `what`, in any case.
pub fn holds_any_case(text: &[u8], what: &[u8]) -> bool {
    text.windows(what.len())
        .any(|w| w.eq_ignore_ascii_case(what))
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

/// The bytes that may open a comment or a string in code: any other byte is code, and runs of
/// them are copied at once rather than tried against every opener (most of a file's bytes).
fn openers(sx: &Syntax) -> [bool; 256] {
    let mut at = [false; 256];
    let firsts = sx.line.iter().chain(sx.block.iter().map(|b| &b.0));
    for t in firsts.chain(sx.long.iter().map(|l| &l.0)) {
        at[t[0] as usize] = true;
    }
    for &q in sx.quotes {
        at[q as usize] = true;
    }
    if sx.rust {
        at[b'\'' as usize] = true;
        at[b'r' as usize] = true;
    }
    if sx.shell {
        at[sx.escape as usize] = true;
        for b in *b"(){}" {
            at[b as usize] = true;
        }
    }
    match sx.heredocs {
        Heredocs::No => {}
        Heredocs::Ruby | Heredocs::Shell => at[b'<' as usize] = true,
        Heredocs::PowerShell => at[b'@' as usize] = true,
    }
    at
}

/// A Ruby heredoc's opener at `i` (`<<~EOS`, `<<-'EOS'`, `<<EOS`): (its length, the word that
/// ends it). A bare `<<` wants an uppercase word, and a space before it or no operand there
/// (`1<<BITS` shifts, as `list << ITEM` pushes); `<<~` and `<<-` open one wherever they stand.
fn ruby_heredoc(s: &[u8], i: usize) -> Option<(usize, Vec<u8>)> {
    let rest = s.get(i..)?.strip_prefix(b"<<")?;
    let marked = matches!(rest.first(), Some(b'~' | b'-'));
    let rest = &rest[usize::from(marked)..];
    let quote = rest
        .first()
        .filter(|q| matches!(q, b'\'' | b'"' | b'`'))
        .copied();
    let word = &rest[usize::from(quote.is_some())..];
    let n = word
        .iter()
        .take_while(|&&b| is_ident(b) && b != b'$')
        .count();
    let end = &word[..n];
    if n == 0 || end[0].is_ascii_digit() {
        return None;
    }
    let len = 2 + usize::from(marked) + n + if quote.is_some() { 2 } else { 0 };
    match quote {
        Some(q) if word.get(n) != Some(&q) => None,
        Some(_) => Some((len, end.to_vec())),
        None if marked => Some((len, end.to_vec())),
        None => {
            let operand = s[..i]
                .iter()
                .rev()
                .find(|b| !b.is_ascii_whitespace())
                .is_some_and(|&b| is_ident(b) || matches!(b, b')' | b']' | b'}'));
            let upper = end.iter().all(|b| !b.is_ascii_lowercase());
            let spaced = i > 0 && s[i - 1] == b' ';
            (upper && (spaced || !operand)).then(|| (len, end.to_vec()))
        }
    }
}

/// A shell heredoc's opener at `i` (`<<EOS`, `<<-EOS`, `<< 'EOS'`, `<<"EOS"`): (its length, the
/// word that ends it). Not a here-string (`<<<`), and a bare word after `<<` with no space
/// before it is a shift unless upper case (`$((x<<n))`).
fn shell_heredoc(s: &[u8], i: usize) -> Option<(usize, Vec<u8>)> {
    let rest = s.get(i..)?.strip_prefix(b"<<")?;
    if rest.first() == Some(&b'<') || (i > 0 && s[i - 1] == b'<') {
        return None;
    }
    let dash = usize::from(rest.first() == Some(&b'-'));
    let spaces = rest[dash..]
        .iter()
        .take_while(|b| matches!(b, b' ' | b'\t'))
        .count();
    let at = dash + spaces;
    let quote = rest
        .get(at)
        .filter(|q| matches!(q, b'\'' | b'"' | b'\\'))
        .copied();
    let word = &rest[at + usize::from(quote.is_some())..];
    // Any word, `End-Of-Usage` too: up to a blank or a byte the shell reads apart.
    let n = word
        .iter()
        .take_while(|&&b| !b.is_ascii_whitespace() && !b";&|<>()'\"`$".contains(&b))
        .count();
    let end = &word[..n];
    if n == 0 || end[0].is_ascii_digit() {
        return None;
    }
    let len = 2
        + at
        + n
        + match quote {
            Some(b'\\') => 1,
            Some(q) if word.get(n) == Some(&q) => 2,
            Some(_) => return None,
            None => 0,
        };
    let spaced = i == 0 || s[i - 1] == b' ' || s[i - 1] == b'\t';
    let upper = end.iter().all(|b| !b.is_ascii_lowercase());
    (quote.is_some() || dash == 1 || spaced || upper).then(|| (len, end.to_vec()))
}

/// A PowerShell here-string's opener at `i`: `@"` or `@'` with nothing after it on the line
/// but blanks: (its length, what starts the line that ends it).
fn here_string(s: &[u8], i: usize) -> Option<(usize, Vec<u8>)> {
    let q = *s.get(i + 1).filter(|q| matches!(q, b'"' | b'\''))?;
    (s[i] == b'@' && s[i + 2..].iter().all(u8::is_ascii_whitespace)).then(|| (2, vec![q, b'@']))
}

/// The heredoc opener of `kind` at `i` of `s`, if one is there: (its length, its end).
fn heredoc(kind: Heredocs, s: &[u8], i: usize) -> Option<(usize, Vec<u8>)> {
    match kind {
        Heredocs::No => None,
        Heredocs::Ruby => ruby_heredoc(s, i),
        Heredocs::Shell => shell_heredoc(s, i),
        Heredocs::PowerShell => here_string(s, i),
    }
}

/// Whether line `s` ends a heredoc whose end is `end`: a line that is only its word, or for a
/// here-string (`"@`) one that starts with it.
fn ends_heredoc(s: &[u8], end: &[u8]) -> bool {
    if matches!(end.first(), Some(b'"' | b'\'')) {
        s.trim_ascii_start().starts_with(end)
    } else {
        s.trim_ascii() == end
    }
}

/// Whether a shell word ends before byte `b`, so that a `#` after it opens a comment.
fn word_ends(b: u8) -> bool {
    matches!(
        b,
        b' ' | b'\t' | b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>'
    )
}

/// Inside a `"` string again, after a substitution in it closed.
fn in_quotes(sx: &Syntax) -> State {
    State::Str {
        end: b"\"".to_vec(),
        escape: Some(sx.escape),
        multiline: true,
        comment: false,
    }
}

/// The place of the first byte of `s` from `i` on that `stop` says stops a run (`s.len()` if none).
fn run_end(s: &[u8], i: usize, stop: impl Fn(u8) -> bool) -> usize {
    s[i..]
        .iter()
        .position(|&b| stop(b))
        .map_or(s.len(), |n| i + n)
}

/// Leading spaces and tabs.
fn indent_of(s: &[u8]) -> usize {
    s.iter().take_while(|&&b| b == b' ' || b == b'\t').count()
}

/// The lines of `text`, each split into code and comments by the syntax of `lang`.
pub fn lex(text: &[u8], lang: Lang) -> Vec<Line> {
    lex_with::<true>(text, lang)
}

/// `lex`; without `RUNS`, one byte at a time (the test's reference for the runs copied at once).
fn lex_with<const RUNS: bool>(text: &[u8], lang: Lang) -> Vec<Line> {
    if lang == Lang::Component {
        return lex_component::<RUNS>(text);
    }
    let sx = syntax(lang);
    let opens = openers(&sx);
    let mut state = State::Code;
    // The substitutions open in `"` strings (`Syntax::shell`), innermost last: the
    // bracket that closes each, and how many of its opening bracket are open inside it.
    let mut subs: Vec<(u8, usize)> = Vec::new();
    let mut out = Vec::new();
    for raw in text.split(|&b| b == b'\n') {
        let s = raw.strip_suffix(b"\r").unwrap_or(raw);
        let mut code = vec![b' '; s.len()];
        let mut comment = vec![b' '; s.len()];
        let starts_in_code = matches!(state, State::Code);
        let pod = match (&state, sx.pod) {
            (State::Code, Some((open, close)))
                if s.starts_with(open)
                    && (open.len() > 1 || s.get(1).is_some_and(u8::is_ascii_alphabetic)) =>
            {
                state = State::Pod(close);
                true
            }
            (State::Pod(close), _) => {
                if s.starts_with(close) {
                    state = State::Code;
                }
                true
            }
            _ => false,
        };
        if pod {
            out.push(Line {
                code: vec![b' '; s.len()],
                comment: s.to_vec(),
                starts_in_code,
                indent: indent_of(s),
            });
            continue;
        }
        if let State::Heredoc(ends) = &mut state {
            // The whole line is the string's, its last line too.
            if ends_heredoc(s, &ends[0]) {
                ends.remove(0);
                if ends.is_empty() {
                    state = State::Code;
                }
            }
            out.push(Line {
                code: vec![b' '; s.len()],
                comment: vec![b' '; s.len()],
                starts_in_code,
                indent: indent_of(s),
            });
            continue;
        }
        let mut docs: Vec<Vec<u8>> = Vec::new();
        let mut i = 0;
        while i < s.len() {
            match &state {
                State::Code => {
                    let j = if RUNS {
                        run_end(s, i, |b| opens[b as usize])
                    } else {
                        i
                    };
                    if j > i {
                        code[i..j].copy_from_slice(&s[i..j]);
                        i = j;
                        continue;
                    }
                    if let Some((close, open)) = subs.last_mut() {
                        if matches!(s[i], b'(' | b')' | b'{' | b'}') {
                            let opener = if *close == b')' { b'(' } else { b'{' };
                            if s[i] == opener {
                                *open += 1;
                            } else if s[i] == *close && *open > 0 {
                                *open -= 1;
                            } else if s[i] == *close {
                                subs.pop();
                                state = in_quotes(&sx);
                            }
                            code[i] = s[i];
                            i += 1;
                            continue;
                        }
                    }
                    // The escaped byte is blanked: `\{` opens no group.
                    if sx.shell && s[i] == sx.escape {
                        code[i] = s[i];
                        i += 2;
                        continue;
                    }
                    let rest = &s[i..];
                    // A block first: Lua's `--[[` opens one where `--` is a line's.
                    if let Some((open, _)) = sx.block.filter(|(open, _)| rest.starts_with(open)) {
                        state = State::Block;
                        i += open.len();
                        continue;
                    }
                    if sx.line.iter().any(|t| rest.starts_with(t))
                        && (!sx.shell || i == 0 || word_ends(s[i - 1]))
                    {
                        comment[i..].copy_from_slice(rest);
                        break;
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
                                escape: None,
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
                            escape: esc.then_some(sx.escape),
                            multiline: true,
                            comment: sx.long_is_comment,
                        };
                        i += d.len();
                        continue;
                    }
                    if let Some((n, end)) = heredoc(sx.heredocs, s, i) {
                        code[i..i + n].copy_from_slice(&s[i..i + n]);
                        docs.push(end);
                        i += n;
                        continue;
                    }
                    if sx.quotes.contains(&s[i]) {
                        state = State::Str {
                            end: vec![s[i]],
                            escape: Some(sx.escape),
                            multiline: false,
                            comment: false,
                        };
                        i += 1;
                        continue;
                    }
                    code[i] = s[i];
                    i += 1;
                }
                State::Heredoc(_) | State::Pod(_) => unreachable!("their lines are taken whole"),
                State::Block => {
                    let (_, close) = sx.block.expect("block state implies block syntax");
                    let j = if RUNS {
                        run_end(s, i, |b| b == close[0])
                    } else {
                        i
                    };
                    if j > i {
                        comment[i..j].copy_from_slice(&s[i..j]);
                        i = j;
                        continue;
                    }
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
                    escape,
                    comment: as_comment,
                    ..
                } => {
                    let subbing = sx.shell && end == b"\"";
                    let j = if RUNS {
                        run_end(s, i, |b| {
                            b == end[0] || Some(b) == *escape || (subbing && b == b'$')
                        })
                    } else {
                        i
                    };
                    if j > i {
                        if *as_comment {
                            comment[i..j].copy_from_slice(&s[i..j]);
                        }
                        i = j;
                        continue;
                    }
                    if subbing && matches!(s.get(i..i + 2), Some(b"$(" | b"${")) {
                        subs.push((if s[i + 1] == b'(' { b')' } else { b'}' }, 0));
                        code[i..i + 2].copy_from_slice(&s[i..i + 2]);
                        state = State::Code;
                        i += 2;
                    } else if Some(s[i]) == *escape {
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
        if !docs.is_empty() && matches!(state, State::Code) {
            state = State::Heredoc(docs);
        }
        out.push(Line {
            code,
            comment,
            starts_in_code,
            indent: indent_of(s),
        });
    }
    out
}

/// A component's script: the lines of its opening tag (or of Astro's first `---`), of its
/// code and of its end, 0-based: `open..code.start` hold the tag, `code` the script, and
/// `code.end` the closing line (the line count when nothing closes it).
#[derive(Debug, PartialEq)]
pub struct Script {
    pub open: usize,
    pub code: std::ops::Range<usize>,
}

/// The scripts of a component (`Lang::Component`), as HTML ends them: a `<script …>` tag that
/// starts its line (after any indent) opens one on the line after the tag's `>`, and the first
/// line holding `</script` (in any case) ends it, whatever the script's strings say. A script
/// on one line (`<script src="…"></script>`) holds no line of code. An Astro component's
/// frontmatter is one: the lines between a first line `---` and the next `---` line.
pub fn scripts(text: &[u8]) -> Vec<Script> {
    let lines: Vec<&[u8]> = text
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .collect();
    let mut out = Vec::new();
    let mut i = 0;
    if lines[0].trim_ascii_end() == b"---" {
        if let Some(k) = (1..lines.len()).find(|&k| lines[k].trim_ascii_end() == b"---") {
            out.push(Script {
                open: 0,
                code: 1..k,
            });
            i = k + 1;
        }
    }
    while i < lines.len() {
        let l = lines[i].trim_ascii_start();
        let tag = l.len() >= 7
            && l[..7].eq_ignore_ascii_case(b"<script")
            && l.get(7)
                .is_none_or(|&b| b == b'>' || b.is_ascii_whitespace());
        if !tag {
            i += 1;
            continue;
        }
        let Some((gt, at)) =
            (i..lines.len()).find_map(|k| memchr::memchr(b'>', lines[k]).map(|at| (k, at)))
        else {
            break;
        };
        if holds_any_case(&lines[gt][at + 1..], b"</script") {
            i = gt + 1;
            continue;
        }
        let end = (gt + 1..lines.len())
            .find(|&k| holds_any_case(lines[k], b"</script"))
            .unwrap_or(lines.len());
        out.push(Script {
            open: i,
            code: gt + 1..end,
        });
        i = end + 1;
    }
    out
}

/// A component's lines: its scripts lexed as TypeScript; the rest (a template, styles) as
/// markup, for its `<!-- -->` comments, with no code but a script's tag and end, so no
/// definition or name is read from a template and a script's first definition takes no
/// template line as its comment.
fn lex_component<const RUNS: bool>(text: &[u8]) -> Vec<Line> {
    let mut starts = vec![0];
    starts.extend(memchr::memchr_iter(b'\n', text).map(|i| i + 1));
    let n = starts.len();
    // The end of the last line, as if a newline followed it.
    starts.push(text.len() + 1);
    // Lines [a, b) of the text, lexed on their own as `lang`.
    let lex_lines = |a: usize, b: usize, lang: Lang| -> Vec<Line> {
        if a >= b {
            return Vec::new();
        }
        lex_with::<RUNS>(&text[starts[a]..starts[b] - 1], lang)
    };
    let mut out = Vec::with_capacity(n);
    let markup = |out: &mut Vec<Line>, a: usize, b: usize, keep: &dyn Fn(usize) -> bool| {
        for (k, mut line) in lex_lines(a, b, Lang::Markup).into_iter().enumerate() {
            if !keep(a + k) {
                line.code.fill(b' ');
            }
            out.push(line);
        }
    };
    let mut at = 0;
    for s in scripts(text) {
        let end = s.code.end;
        markup(&mut out, at, s.code.start, &|k| k >= s.open);
        out.extend(lex_lines(s.code.start, end, Lang::TypeScript));
        markup(&mut out, end.min(n), (end + 1).min(n), &|_| true);
        at = (end + 1).min(n);
    }
    markup(&mut out, at, n, &|_| false);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ruby_heredocs_are_strings_to_their_word_and_shifts_are_code() {
        let src = "x = 1<<BITS\nlist << ITEM\nputs <<EOS, <<~'SQL'\n  # no comment\nEOS\nSELECT\n  SQL\ny = 2 # note\n";
        let lines = lex(src.as_bytes(), Lang::Ruby);
        let code: Vec<String> = lines
            .iter()
            .map(|l| String::from_utf8_lossy(&l.code).trim_end().to_string())
            .collect();
        assert_eq!(
            code,
            [
                "x = 1<<BITS",
                "list << ITEM",
                "puts <<EOS, <<~'SQL'",
                "",
                "",
                "",
                "",
                "y = 2",
                ""
            ]
        );
        assert!(lines[3].comment_blank(), "a heredoc's `#` opens no comment");
        assert_eq!(
            lines.iter().map(|l| l.starts_in_code).collect::<Vec<_>>(),
            [true, true, true, false, false, false, false, true, true]
        );
        assert_eq!(String::from_utf8_lossy(&lines[7].comment).trim(), "# note");
    }

    /// Each line's code and comment, trimmed.
    fn split(src: &str, lang: Lang) -> Vec<(String, String)> {
        let text = |b: &[u8]| String::from_utf8_lossy(b).trim().to_string();
        lex(src.as_bytes(), lang)
            .iter()
            .map(|l| (text(&l.code), text(&l.comment)))
            .collect()
    }

    #[test]
    fn lua_s_block_comments_haskell_s_primes_and_elixir_s_docs() {
        let pair = |c: &str, m: &str| (c.to_string(), m.to_string());
        assert_eq!(
            split("--[[ off\nf() ]] x = 1 -- one\n-- [[ a line's\n", Lang::Lua),
            [
                pair("", "off"),
                pair("x = 1", "f()          -- one"),
                pair("", "-- [[ a line's"),
                pair("", "")
            ],
            "a block's delimiters are neither code nor comment, as C's are"
        );
        assert_eq!(
            split(
                "go' x = foldl' f x -- note\n{- a\nb -} y = \"--\"\n",
                Lang::Haskell
            ),
            [
                pair("go' x = foldl' f x", "-- note"),
                pair("", "a"),
                pair("y =", "b"),
                pair("", "")
            ],
            "a prime opens no string, and `--` in a string no comment"
        );
        assert_eq!(
            split(
                "  @doc \"\"\"\n  Adds # two.\n  \"\"\"\n  def add(a), do: a # ok\n",
                Lang::Elixir
            ),
            [
                pair("@doc", ""),
                pair("", "Adds # two."),
                pair("", ""),
                pair("def add(a), do: a", "# ok"),
                pair("", "")
            ],
            "a doc's heredoc is read as a comment, as a Python docstring is"
        );
    }

    #[test]
    fn perl_s_pod_and_ruby_s_begin_end_are_comments_in_whole_lines() {
        let pair = |c: &str, m: &str| (c.to_string(), m.to_string());
        assert_eq!(
            split(
                "my $x = 1;\n=head1 NAME\nsub f { }\n=cut\nsub g { } # ok\n  =head2 no\n",
                Lang::Perl
            ),
            [
                pair("my $x = 1;", ""),
                pair("", "=head1 NAME"),
                pair("", "sub f { }"),
                pair("", "=cut"),
                pair("sub g { }", "# ok"),
                pair("=head2 no", ""),
                pair("", "")
            ],
            "POD opens at a line's start only"
        );
        assert_eq!(
            split("=begin\ndef f\n=end\nx == 1\n=> y\n", Lang::Ruby),
            [
                pair("", "=begin"),
                pair("", "def f"),
                pair("", "=end"),
                pair("x == 1", ""),
                pair("=> y", ""),
                pair("", "")
            ],
            "`=>` at a line's start opens nothing in Ruby"
        );
    }

    #[test]
    fn fortran_basic_pascal_nix_vim_and_lean_comments() {
        let pair = |c: &str, m: &str| (c.to_string(), m.to_string());
        let first = |src: &str, lang| split(src, lang).remove(0);
        assert_eq!(
            first("print *, \"Hi!\" ! greet", Lang::Fortran),
            pair("print *,", "! greet")
        );
        assert_eq!(
            first("s = \"it's\" ' note", Lang::Basic),
            pair("s =", "' note")
        );
        assert_eq!(
            split("x := 'a{'; { note\nmore } y := 1; // end\n", Lang::Pascal),
            [
                pair("x :=     ;", "note"),
                pair("y := 1;", "more           // end"),
                pair("", "")
            ],
            "a brace in a string opens no comment"
        );
        assert_eq!(
            split(
                "s = ''\n  # not a comment\n''; x' = 1; /* a */ # b\n",
                Lang::Nix
            ),
            [
                pair("s =", ""),
                pair("", ""),
                pair("; x' = 1;", "a    # b"),
                pair("", "")
            ],
            "a '' string spans lines, and a prime opens none"
        );
        assert_eq!(
            first("let s = 'a\"b' \" note", Lang::Vim),
            pair("let s =", "\" note")
        );
        assert_eq!(
            split("theorem t' : x := rfl -- q\n/- a\nb -/ def f\n", Lang::Lean),
            [
                pair("theorem t' : x := rfl", "-- q"),
                pair("", "a"),
                pair("def f", "b"),
                pair("", "")
            ],
        );
    }

    #[test]
    fn shell_words_escapes_substitutions_and_heredocs() {
        let pair = |c: &str, m: &str| (c.to_string(), m.to_string());
        assert_eq!(
            split(
                "n=$# m=${#a[@]} a#b # note\ngrep \\\"ok\\\" \\{x;# c\nawk '{\n}' \"$(type \"$c\" | tr '{' x)\"\n",
                Lang::Shell
            ),
            [
                pair("n=$# m=${#a[@]} a#b", "# note"),
                pair("grep \\ ok\\  \\ x;", "# c"),
                pair("awk", ""),
                pair("$(type      | tr     x)", ""),
                pair("", "")
            ],
            "`#` inside a word is code; an escaped byte is blanked; a `'` string spans lines; \
             a `\"` string's substitution is code with strings of its own"
        );
        assert_eq!(
            split(
                "cat <<-'End-Of-It' >f\n\t{ it's\n\tEnd-Of-It\nx=$((1<<n))\n",
                Lang::Shell
            ),
            [
                pair("cat <<-'End-Of-It' >f", ""),
                pair("", ""),
                pair("", ""),
                pair("x=$((1<<n))", ""),
                pair("", "")
            ],
            "a heredoc's word may hold `-`; a shift is none"
        );
        assert_eq!(
            split(
                "<# a\n#> $s = \"a`\"{\" + 'it''s' # n\n$t = @'\n{\n'@\n",
                Lang::PowerShell
            ),
            [
                pair("", "a"),
                pair("$s =        +", "# n"),
                pair("$t = @'", ""),
                pair("", ""),
                pair("", ""),
                pair("", "")
            ],
            "PowerShell's block comments, backtick escapes and here-strings"
        );
    }

    #[test]
    fn a_components_scripts_end_where_html_ends_them() {
        let svelte = "<script context=\"module\">\n  export const x = 1\n</script>\n<script\n  lang=\"ts\"\n>\n  let s = \"</SCRIPT>\"\n  let t = 2\n</script>\n<script src=\"a.js\"></script>\n<p>{x}</p>\n  <script>\n  go()\n";
        let got = scripts(svelte.as_bytes());
        let want = [(0, 1..2), (3, 6..6), (11, 12..14)];
        assert_eq!(got, want.map(|(open, code)| Script { open, code }));
        let astro = "---\nimport A from './A.astro'\n---\n<A />\n<script>\ninit()\n</script>\n";
        let want = [(0, 1..2), (4, 5..6)];
        assert_eq!(
            scripts(astro.as_bytes()),
            want.map(|(open, code)| Script { open, code })
        );
        assert!(scripts(b"<scripts>\nx\n</scripts>\n<p>---</p>\n").is_empty());
    }

    #[test]
    fn a_components_scripts_are_typescript_and_its_markup_no_code() {
        let src = "<template>\n  <!-- @spec A -->\n  <b>{{ f() }} // no comment</b>\n</template>\n<script setup lang=\"ts\">\n// @spec B\nconst s = '<!--'\nfunction f() { return 1 }\n</script>\n<style>\na { b: c }\n</style>";
        let lines = lex(src.as_bytes(), Lang::Component);
        let code: Vec<String> = lines
            .iter()
            .map(|l| String::from_utf8_lossy(&l.code).trim().to_string())
            .collect();
        let comment: Vec<String> = lines
            .iter()
            .map(|l| String::from_utf8_lossy(&l.comment).trim().to_string())
            .collect();
        assert_eq!(
            code,
            [
                "",
                "",
                "",
                "",
                "<script setup lang=\"ts\">",
                "",
                "const s =",
                "function f() { return 1 }",
                "</script>",
                "",
                "",
                ""
            ]
        );
        assert_eq!(comment[1], "@spec A");
        assert_eq!(comment[2], "");
        assert_eq!(comment[5], "// @spec B");
    }

    #[test]
    fn runs_copied_at_once_lex_as_byte_by_byte() {
        const PIECES: &[&str] = &[
            "a", "r", "b", " ", "\t", "\n", "\r\n", "\\", "#", "//", "/*", "*/", "/", "*", "\"",
            "'", "\"\"\"", "'''", "`", "r#\"", "\"#", "r\"", "--", "<!--", "-->", "x'", "'\\n'",
            "é", "'é'", "<<~A", "<<B", "<<-'A'", "A", "1<<B", "--[[", "]]", "{-", "-}", "\n=head1",
            "\n=cut", "\n=begin", "\n=end", "#=", "=#", "(*", "*)", ";", "%", "!", "{", "}", "''",
            "/-", "-/", "$(", "${", ")", "<<-E-F", "\nE-F", "@\"", "\n\"@", "<#", "#>", "<script",
            "</script", ">", "---", " lang=ts",
        ];
        let langs = [
            Lang::Python,
            Lang::Rust,
            Lang::TypeScript,
            Lang::JavaScript,
            Lang::Go,
            Lang::Java,
            Lang::CSharp,
            Lang::C,
            Lang::Dart,
            Lang::Kotlin,
            Lang::Swift,
            Lang::Php,
            Lang::Ruby,
            Lang::Scala,
            Lang::Elixir,
            Lang::Lua,
            Lang::Haskell,
            Lang::Zig,
            Lang::Perl,
            Lang::R,
            Lang::Julia,
            Lang::Ml,
            Lang::Lisp,
            Lang::Erlang,
            Lang::Hash,
            Lang::Slash,
            Lang::Dash,
            Lang::Fortran,
            Lang::Basic,
            Lang::Pascal,
            Lang::Nix,
            Lang::Vim,
            Lang::Lean,
            Lang::Ada,
            Lang::Vhdl,
            Lang::Verilog,
            Lang::Coffee,
            Lang::Shell,
            Lang::PowerShell,
            Lang::GdScript,
            Lang::Markdown,
            Lang::Markup,
            Lang::Component,
            Lang::Text,
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for round in 0..3000 {
            let mut text = String::new();
            for _ in 0..(round % 60) {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                text.push_str(PIECES[(seed % PIECES.len() as u64) as usize]);
            }
            for lang in langs {
                let (got, want) = (
                    lex(text.as_bytes(), lang),
                    lex_with::<false>(text.as_bytes(), lang),
                );
                assert_eq!(got.len(), want.len());
                assert_eq!(got.len(), text.split('\n').count(), "{lang:?} {text:?}");
                for (g, w) in got.iter().zip(&want) {
                    assert!(
                        g.code == w.code
                            && g.comment == w.comment
                            && g.starts_in_code == w.starts_in_code
                            && g.indent == w.indent,
                        "{lang:?} {text:?}"
                    );
                }
            }
        }
    }
}
