//! The words of code and of a task, as the lexical index counts them.
//!
//! A word is a run of ASCII letters, digits and `_`. Each is split on `_` and on case
//! (`parseHTTPResponse` is `parse`, `http`, `response`; digits stay with the part before
//! them: `utf8`, `http2`; an acronym keeps its plural: `URLs`), lower-cased and lightly
//! stemmed (plural `s`, `ies`, then `ing`, `ed`, then `er`, a doubled last consonant
//! undoubled), so `Parsing configs` in a task finds `parse_config` in code and `parser`
//! meets `parse`. A word of several parts also counts joined (`file_path` and `FilePath`
//! are `file`, `path` and `filepath`), so a task's `filepath` finds them and its `file
//! path` does too. Parts shorter than two letters, pure numbers, parts over 40 bytes
//! (hashes, base64), common English function words and a few keywords are dropped. The
//! same function reads code, comments, docstrings, paths and the task, so both sides
//! always agree.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// Words too common in code or prose to say anything about a task: English function words
/// (articles, pronouns, auxiliaries, conjunctions, prepositions that are not also common
/// names in code, like `before`, `after`, `up`, `each`), then keywords and the verbs of
/// commit subjects.
const STOPWORDS: &[&str] = &[
    "a",
    "an",
    "and",
    "are",
    "as",
    "at",
    "be",
    "but",
    "by",
    "can",
    "do",
    "for",
    "from",
    "has",
    "have",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "no",
    "not",
    "of",
    "on",
    "or",
    "so",
    "that",
    "the",
    "then",
    "there",
    "these",
    "this",
    "those",
    "to",
    "was",
    "we",
    "were",
    "when",
    "which",
    "will",
    "with",
    "would",
    "you",
    "your",
    "also",
    "all",
    "any",
    "should",
    "now",
    "am",
    "been",
    "being",
    "did",
    "does",
    "doing",
    "had",
    "having",
    "he",
    "she",
    "her",
    "hers",
    "him",
    "his",
    "me",
    "my",
    "our",
    "ours",
    "us",
    "they",
    "them",
    "their",
    "theirs",
    "what",
    "who",
    "whom",
    "whose",
    "why",
    "how",
    "where",
    "while",
    "because",
    "than",
    "too",
    "very",
    "just",
    "may",
    "might",
    "must",
    "could",
    "shall",
    "nor",
    "yet",
    "though",
    "although",
    "whether",
    "either",
    "neither",
    "such",
    "same",
    "own",
    "itself",
    "themselves",
    "here",
    "via",
    "per",
    "onto",
    "upon",
    "within",
    "without",
    "etc",
    "eg",
    "ie",
    "instead",
    "rather",
    "already",
    "still",
    "about",
    "against",
    "during",
    "through",
    "until",
    "use",
    "used",
    "using",
    "self",
    "fn",
    "def",
    "let",
    "var",
    "const",
    "pub",
    "mut",
    "return",
    "import",
    "true",
    "false",
    "none",
    "null",
    "nil",
    "else",
    "elif",
    "crate",
    "super",
    "impl",
    "func",
    "function",
    "package",
    "static",
    "void",
    "this",
    "new",
    "end",
    "get",
    "set",
    "make",
    "add",
    "fix",
    "fixes",
    "fixed",
    "change",
    "changes",
    "update",
    "support",
    "allow",
];

const MAX_PART: usize = 40;

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Each word of `text` (a run of ASCII letters, digits and `_`) with its byte offset.
pub fn words(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let bytes = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() && !is_word_byte(bytes[i]) {
            i += 1;
        }
        if i >= bytes.len() {
            return None;
        }
        let start = i;
        while i < bytes.len() && is_word_byte(bytes[i]) {
            i += 1;
        }
        Some((start, &text[start..i]))
    })
}

/// Call `f` with each part of one word, split on `_` and on case, as it is written.
pub fn each_part<'a>(word: &'a str, mut f: impl FnMut(&'a str)) {
    let b = word.as_bytes();
    let mut start: Option<usize> = None;
    for (i, &c) in b.iter().enumerate() {
        if c == b'_' {
            if let Some(s) = start.take() {
                f(&word[s..i]);
            }
            continue;
        }
        let Some(s) = start else {
            start = Some(i);
            continue;
        };
        let prev = b[i - 1];
        // aB: a new part at B; ABc: a new part at B (the end of an acronym), unless `c` is
        // a lone plural `s` (`URLs`); 2B: at B.
        let plural =
            b.get(i + 1) == Some(&b's') && !b.get(i + 2).is_some_and(|n| n.is_ascii_lowercase());
        let boundary = c.is_ascii_uppercase()
            && (prev.is_ascii_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_ascii_uppercase()
                    && i > s + 1
                    && b.get(i + 1).is_some_and(|n| n.is_ascii_lowercase())
                    && !plural));
        if boundary {
            f(&word[s..i]);
            start = Some(i);
        }
    }
    if let Some(s) = start {
        f(&word[s..]);
    }
}

/// The parts of one word, split on `_` and on case, as they are written.
pub fn parts(word: &str) -> Vec<&str> {
    let mut out = Vec::new();
    each_part(word, |p| out.push(p));
    out
}

/// A light stemmer, in place: the plural off, then a verb ending (`ing`, `ed`), then an
/// agent's `er`, so `configs`, `parsing`, `parsed`, `parser` and `parsers` meet `config`
/// and `parse` (whose final `e` is also dropped, as `pars`); a doubled consonant left at
/// the end is undoubled (`formatting`, `formatter`: `format`), unless `l`, `s` or `z`
/// (`called`, `passed`) or the stem would be two letters (`added`).
fn stem_in_place(s: &mut String) {
    let n = s.len();
    if n > 4 && s.ends_with("ies") {
        s.truncate(n - 3);
        s.push('y');
    } else if n > 4 && s.ends_with("sses") {
        s.truncate(n - 2);
    } else if n > 3
        && s.ends_with('s')
        && !s.ends_with("ss")
        && !s.ends_with("us")
        && !s.ends_with("is")
    {
        s.truncate(n - 1);
    }
    let n = s.len();
    let mut cut = false;
    if n > 5 && s.ends_with("ing") {
        s.truncate(n - 3);
        cut = true;
    } else if n > 4 && s.ends_with("ed") && !s.ends_with("eed") {
        s.truncate(n - 2);
        cut = true;
    }
    let n = s.len();
    if n > 5 && s.ends_with("er") && !s.ends_with("eer") {
        s.truncate(n - 2);
        cut = true;
    }
    let b = s.as_bytes();
    let n = b.len();
    if cut
        && n > 3
        && b[n - 1] == b[n - 2]
        && !matches!(
            b[n - 1],
            b'a' | b'e' | b'i' | b'o' | b'u' | b'l' | b's' | b'z'
        )
    {
        s.pop();
    }
    if s.len() > 3 && s.ends_with('e') {
        s.pop();
    }
}

/// (Asked for every part of every word read, so hashed with `Fnv`: the table is fixed, and a
/// word made to collide with its entries costs a probe of it, no more.)
fn stopword(w: &str) -> bool {
    static SET: std::sync::LazyLock<WordSet<'static>> =
        std::sync::LazyLock::new(|| STOPWORDS.iter().copied().collect());
    SET.contains(w)
}

/// The term of a part into `buf` (cleared first); false when the part is dropped.
fn term_into(part: &str, buf: &mut String) -> bool {
    if part.len() < 2 || part.len() > MAX_PART || part.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    buf.clear();
    buf.extend(part.bytes().map(|b| b.to_ascii_lowercase() as char));
    if stopword(buf) {
        return false;
    }
    stem_in_place(buf);
    true
}

/// The term a part of a word counts as, or None when it is dropped.
pub fn term(part: &str) -> Option<String> {
    let mut buf = String::new();
    term_into(part, &mut buf).then_some(buf)
}

/// Call `f` with each term of `text`, in order, and after the terms of a word of several
/// parts the term of its parts joined (buffers reused: no allocation per term).
pub fn each_term(text: &str, mut f: impl FnMut(&str)) {
    let mut bufs = TermBufs::default();
    for (_, w) in words(text) {
        word_terms(w, &mut bufs, &mut f);
    }
}

/// The buffers `word_terms` reuses.
#[derive(Default)]
pub struct TermBufs {
    term: String,
    joined: String,
}

/// Call `f` with each term of one word (of `words`), as `each_term` does for each word.
pub fn word_terms(w: &str, bufs: &mut TermBufs, mut f: impl FnMut(&str)) {
    if w.len() > 4 * MAX_PART {
        return;
    }
    let TermBufs { term, joined } = bufs;
    joined.clear();
    let mut parts = 0;
    each_part(w, |p| {
        parts += 1;
        joined.push_str(p);
        if term_into(p, term) {
            f(term);
        }
    });
    if parts > 1 && term_into(joined, term) {
        f(term);
    }
}

/// Call `f` with the term of each part of one word (`expand_union_aliases`: `expand`,
/// `union`, `alias`), the dropped parts left out; not the joined term (buffer reused).
pub fn each_part_term(word: &str, mut f: impl FnMut(&str)) {
    let mut buf = String::with_capacity(MAX_PART);
    each_part(word, |p| {
        if term_into(p, &mut buf) {
            f(&buf);
        }
    });
}

/// Every term of `text`, in order, with repeats.
pub fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    each_term(text, |t| out.push(t.to_string()));
    out
}

/// FNV-1a, for a task's words looked up by every word and name of every region of the top
/// files (tens of thousands a question): std's SipHash, which resists keys chosen to collide,
/// cost more than the rest of region scoring. Such a table holds the task's words only, so
/// words made to collide with them cost a probe of that small table, no more.
#[derive(Default)]
pub struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

/// A task's words, hashed with `Fnv`.
pub type WordSet<'a> = HashSet<&'a str, BuildHasherDefault<Fnv>>;
/// Names a task writes, owned, hashed with `Fnv`.
pub type NameSet = HashSet<String, BuildHasherDefault<Fnv>>;
/// A task's words and what each stands for, hashed with `Fnv`.
pub type WordMap<'a, V> = HashMap<&'a str, V, BuildHasherDefault<Fnv>>;

/// The names a task mentions that could be definitions: each word of three bytes or more
/// as written, and whether it looks like code (`snake_case`, `camelCase`, a digit, or
/// written in backticks or before `(`) rather than a plain English word.
pub fn identifiers(task: &str) -> Vec<(String, bool)> {
    let bytes = task.as_bytes();
    let mut out: Vec<(String, bool)> = Vec::new();
    let mut at_place: HashMap<&str, usize> = HashMap::new(); // a word's place in `out`
    for (at, w) in words(task) {
        if w.len() < 3 || w.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let inner_upper = w.bytes().skip(1).any(|b| b.is_ascii_uppercase())
            && w.bytes().any(|b| b.is_ascii_lowercase());
        let quoted = at > 0 && bytes[at - 1] == b'`';
        let called = bytes.get(at + w.len()) == Some(&b'(');
        let pathy = (at > 0 && matches!(bytes[at - 1], b':' | b'.'))
            || matches!(bytes.get(at + w.len()), Some(b':' | b'.'))
                && bytes
                    .get(at + w.len() + 1)
                    .is_some_and(|b| is_word_byte(*b) || *b == b':');
        let code = w.contains('_')
            || inner_upper
            || w.bytes().any(|b| b.is_ascii_digit())
            || quoted
            || called
            || pathy;
        match at_place.get(w) {
            Some(&i) => out[i].1 |= code,
            None => {
                at_place.insert(w, out.len());
                out.push((w.to_string(), code));
            }
        }
    }
    out
}

/// Whether the task's first line announces a release: a version number (`3.1.2`, `v1.11.0`)
/// with the word `version` or `release` ("Version 0.25.0", "start version 3.1.2"), or a
/// version number alone, the marks around it aside ("0.74.0", "v4.3.6": fzf's and zod's
/// release commits; "- 1.16.4": alembic's). Such a commit changes the file holding the
/// version, which shares at most `version` with the task.
pub fn names_a_release(task: &str) -> bool {
    let first = task.lines().next().unwrap_or("");
    if is_version_number(first.trim_matches(|c: char| !c.is_alphanumeric())) {
        return true;
    }
    let said = [term("version"), term("release")];
    words(first).any(|(_, w)| term(w).is_some_and(|t| said.contains(&Some(t))))
        && first
            .split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '(' | ')' | '`'))
            .any(is_version_number)
}

/// `3.1.2`, `v1.11.0`, `2.0.0-rc1`, `2.34.0.dev1`, `1.0.0rc2`: three or more runs of digits
/// joined by dots, before a pre-release's or a build's tail. Two (`1.24`) is most often a
/// toolchain's version ("bump minimum Go version to 1.24"), not a release.
fn is_version_number(w: &str) -> bool {
    let w = w.trim_end_matches(['.', ':', '!', '+']);
    let w = w.strip_prefix(['v', 'V']).unwrap_or(w);
    let w = w.split('-').next().unwrap_or(w);
    // PEP 440's tails (`.dev1`, `.post2`, `rc1`, `a1`) start at the first letter, a build's
    // (`+build.5`) at its `+`.
    let tail = w.find(|c: char| c.is_ascii_alphabetic() || c == '+');
    let w = w[..tail.unwrap_or(w.len())].trim_end_matches('.');
    let mut n = 0;
    for p in w.split('.') {
        if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
            return false;
        }
        n += 1;
    }
    n >= 3
}

/// The file paths a task names, as written: words with a `/` or a file name's extension
/// (`tasks/rank.rs`, `_core.pyi`, `docs/`; a name of at least four bytes), trimmed of quotes, brackets and the punctuation
/// that ends a sentence; a trailing `/` is kept off. Each once, in the task's order.
pub fn paths(task: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    for w in task.split(|c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '`' | '\'' | '"' | '(' | ')' | '[' | ']' | '<' | '>' | ',' | ';'
            )
    }) {
        let w = w
            .trim_end_matches(['.', ':', '!', '?'])
            .trim_start_matches("./")
            .trim_end_matches('/');
        let name = w.rsplit('/').next().unwrap_or(w);
        let ext = name.rsplit_once('.');
        let file_like = ext.is_some_and(|(stem, ext)| {
            !stem.is_empty()
                && (1..=5).contains(&ext.len())
                && ext.bytes().all(|b| b.is_ascii_alphanumeric())
                && ext.bytes().any(|b| b.is_ascii_alphabetic())
        });
        let pathy = w.contains('/') && !w.contains("://");
        let plain = w
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'.' | b'_' | b'-'));
        if (file_like || pathy) && plain && name.len() >= 4 && seen.insert(w) {
            out.push(w);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_task_is_read_in_linear_time() {
        // 200,000 distinct words and paths (a pasted log): a pass per word over the words
        // before it took minutes here; a set takes a moment.
        let task: String = (0..100_000)
            .map(|i| format!("word_{i}x a/b{i}.py "))
            .collect();
        let found = identifiers(&task);
        assert_eq!(
            found.len(),
            100_000 + 99_990,
            "word_i, and b10 to b99999 (names of three bytes or more)"
        );
        assert!(
            found.iter().all(|(_, code)| *code),
            "each has a `_` or a digit: code"
        );
        assert_eq!(paths(&task).len(), 100_000);
    }

    #[test]
    fn paths_named_in_a_task() {
        assert_eq!(
            paths("Fix `tasks/rank.rs` and _core.pyi (see python/repoctx/cli.py). Then src/, e.g. https://x.io/a.md"),
            ["tasks/rank.rs", "_core.pyi", "python/repoctx/cli.py"]
        );
        assert!(
            paths("Version 1.2 is out: v2.0 and 3.14.").is_empty(),
            "numbers are not file names"
        );
    }

    #[test]
    fn words_split_on_case_and_underscores() {
        assert_eq!(parts("parse_config"), ["parse", "config"]);
        assert_eq!(parts("parseHTTPResponse"), ["parse", "HTTP", "Response"]);
        assert_eq!(parts("HTTPServer"), ["HTTP", "Server"]);
        assert_eq!(parts("__init__"), ["init"]);
        assert_eq!(parts("utf8_decode"), ["utf8", "decode"]);
        assert_eq!(parts("http2Client"), ["http2", "Client"]);
        assert_eq!(parts("TaskIndex"), ["Task", "Index"]);
        assert_eq!(parts("x"), ["x"]);
    }

    #[test]
    fn terms_are_lowered_stemmed_and_filtered() {
        assert_eq!(
            terms("fn parse_config(configs: &[Config]) -> Self"),
            ["pars", "config", "parseconfig", "config", "config"]
        );
        assert_eq!(
            terms("Parsing the configs, parsed"),
            ["pars", "config", "pars"]
        );
        assert_eq!(terms("parser"), ["pars"]);
        assert_eq!(terms("a 12 x9 ab"), ["x9", "ab"]);
        assert_eq!(
            terms("libraries classes status"),
            ["library", "class", "status"]
        );
        // Overlong parts (hashes) say nothing.
        assert!(terms(&"f".repeat(60)).is_empty());
        // Non-ASCII letters separate words.
        assert_eq!(terms("größe_wert"), ["gr", "wert", "ewert"]);
    }

    #[test]
    fn people_s_words_meet_the_code_s() {
        // Plurals of acronyms, agents' `er`, doubled consonants.
        assert_eq!(parts("parseURLs"), ["parse", "URLs"]);
        assert_eq!(parts("URLsFor"), ["URLs", "For"]);
        assert_eq!(
            parts("HTTPServer"),
            ["HTTP", "Server"],
            "an acronym before a word is still cut"
        );
        for (a, b) in [
            ("URLs", "url"),
            ("parser", "parse"),
            ("parsers", "parsing"),
            ("formatter", "format"),
            ("formatting", "formatted"),
            ("running", "run"),
            ("filtering", "filter"),
            ("servers", "serve"),
        ] {
            assert_eq!(terms(a), terms(b), "{a} / {b}");
        }
        for (a, b) in [
            ("added", "ad"),
            ("called", "cal"),
            ("passed", "pas"),
            ("order", "ord"),
            ("user", "us"),
        ] {
            assert_ne!(terms(a), terms(b), "{a} / {b}");
        }
        // A word of several parts counts joined too, so both ways of writing it meet.
        assert_eq!(terms("file_path"), ["fil", "path", "filepath"]);
        assert_eq!(terms("FilePath"), terms("file_path"));
        assert!(terms("filepath")
            .iter()
            .all(|t| terms("filePath").contains(t)));
        // Function words are dropped; names that are also code are not.
        assert_eq!(
            terms("what would they do about it, before and after each step"),
            ["befor", "after", "each", "step"]
        );
    }

    #[test]
    fn task_and_code_meet_on_the_same_terms() {
        let code = terms("def load_yaml_files(paths):\n    \"\"\"Read every YAML file.\"\"\"");
        for t in terms("Loading YAML file paths") {
            assert!(code.contains(&t), "{t} not in {code:?}");
        }
    }

    #[test]
    fn a_release_is_a_version_number_alone_or_with_version_or_release() {
        for yes in [
            "Version 0.25.0 (#2801)",
            "start version 3.1.2",
            "release version 3.1.0",
            "Released v1.11.0, the releases page",
            "Release 2.0.0-rc1\n\nNotes",
            "0.74.0",
            "v4.3.6\n",
            "- 1.16.4",
            "v2.34.0.dev1",
            "1.0.0rc2",
            "Release 1.2.3+build.5",
        ] {
            assert!(names_a_release(yes), "{yes}");
        }
        for no in [
            "Bump pflag to 1.0.8",
            "Check the version of the server",
            "fix version 3 parser",
            "release notes\n\nversion 1.2.3",
            "version 1.2.x",
            "0.74.0 and more",
            "chore: bump minimum Go version to 1.24",
            "\nv1.2.3",
            "- 1.16 and 1.17",
            "1.2.x",
            "version 1.2.dev3",
        ] {
            assert!(!names_a_release(no), "{no}");
        }
    }

    #[test]
    fn identifiers_tell_code_from_words() {
        let ids =
            identifiers("Fix `render` so parse_config and TaskIndex::query() handle the cache");
        let code: Vec<&str> = ids
            .iter()
            .filter(|(_, c)| *c)
            .map(|(n, _)| n.as_str())
            .collect();
        let plain: Vec<&str> = ids
            .iter()
            .filter(|(_, c)| !*c)
            .map(|(n, _)| n.as_str())
            .collect();
        assert_eq!(code, ["render", "parse_config", "TaskIndex", "query"]);
        assert_eq!(plain, ["Fix", "and", "handle", "the", "cache"]);
    }
}
