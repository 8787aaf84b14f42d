//! Comment and docstring text as a context file quotes it: first sentences, cut to a
//! length, boilerplate (licences, tool directives) passed over, and the header comments of
//! files in each comment syntax.

/// Longest purpose or doc kept: a first sentence longer than this is cut at a word, marked `…`.
pub const MAX_TEXT: usize = 300;

/// A trimmed text of at most MAX_TEXT characters (a longer one cut after a word, marked `…`),
/// or None when empty.
pub fn clean(s: &str) -> Option<String> {
    let t = s.trim();
    if t.is_empty() {
        return None;
    }
    if t.chars().count() <= MAX_TEXT {
        return Some(t.to_string());
    }
    let cut: String = t.chars().take(MAX_TEXT - 1).collect();
    let cut = match cut.rfind(' ') {
        Some(space) if space > cut.len() / 2 => &cut[..space],
        _ => &cut[..],
    };
    Some(format!(
        "{}…",
        cut.trim_end_matches(|c: char| c.is_whitespace() || ",;:".contains(c))
    ))
}

/// The first line of a paragraph (its lines given without comment markers), joined with the
/// lines after it until the sentence it began ends (`.`, `!` or `?` and a space; at a line's
/// end `:` too, and a closing bracket or quote after one) or the paragraph does: comments and
/// docstrings wrap their first sentence.
pub fn paragraph<'a>(lines: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let mut text = String::new();
    for line in lines {
        let t = line.trim();
        if t.is_empty() {
            break;
        }
        let joined = text.len();
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(t);
        if joined > 0 {
            // The sentence the first line began ends within this line: up to there.
            let rest = &text[joined..];
            if let Some(end) = rest.char_indices().find_map(|(i, c)| {
                (matches!(c, '.' | '!' | '?') && rest[i + 1..].starts_with(' ')).then_some(i + 1)
            }) {
                text.truncate(joined + end);
                break;
            }
        }
        let end = text.trim_end_matches([')', ']', '"', '\'', '`', '*']);
        if end.ends_with(['.', '!', '?', ':']) || text.chars().count() > MAX_TEXT {
            break;
        }
    }
    clean(&text)
}

/// Comment text that says nothing about the file: licences, tool directives, rulers.
pub fn is_boilerplate(s: &str) -> bool {
    let t = s.trim();
    if !t.chars().any(|c| c.is_alphanumeric()) {
        return true;
    }
    let l = t.to_ascii_lowercase();
    const NOISE: &[&str] = &[
        "copyright",
        "license",
        "licence",
        "spdx-",
        "all rights reserved",
        "-*-",
        "eslint-",
        "@ts-",
        "prettier-ignore",
        "noqa",
        "type: ignore",
        "pylint:",
        "mypy:",
        "ruff:",
        "go:build",
        "+build",
        "vim:",
        "@flow",
        "jshint",
        "istanbul ignore",
        "biome-ignore",
        "clippy::",
        "rustfmt::",
    ];
    NOISE.iter().any(|n| l.contains(n)) || l.starts_with("!/") || l.starts_with("#!")
}

/// Whitespace runs as one space, none inside brackets or before commas: `f( a ,b )` -> `f(a, b)`.
pub fn collapse_ws(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    for c in s.chars() {
        if c.is_whitespace() {
            space = !out.is_empty();
            continue;
        }
        if space && !matches!(c, ')' | ']' | ',') && !out.ends_with(['(', '[']) {
            out.push(' ');
        }
        space = false;
        if c == ')' && out.ends_with(',') {
            out.pop();
        }
        out.push(c);
    }
    out
}

pub fn ident(s: &str) -> &str {
    let b = s.as_bytes();
    let ascii = b
        .iter()
        .position(|&c| !(c.is_ascii_alphanumeric() || c == b'_' || c == b'$'))
        .unwrap_or(b.len());
    if ascii == b.len() || b[ascii] < 0x80 {
        return &s[..ascii];
    }
    let end = s
        .char_indices()
        .find(|&(_, c)| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    &s[..end]
}

/// Lines from `start` joined until a `stops` character at paren depth 0: the header
/// of a declaration that may wrap. Returns the text before the stop and its line.
pub fn header_at(lines: &[&str], start: usize, stops: &[char]) -> (String, usize) {
    let mut out = String::new();
    let mut depth = 0i32;
    for (j, line) in lines.iter().enumerate().skip(start).take(12) {
        for (k, ch) in line.char_indices() {
            match ch {
                '(' | '[' => depth += 1,
                ')' | ']' => depth -= 1,
                c if depth <= 0 && stops.contains(&c) => {
                    out.push_str(&line[..k]);
                    return (out, j);
                }
                _ => {}
            }
        }
        out.push_str(line);
        out.push(' ');
    }
    (out, start)
}

pub fn header(lines: &[&str], start: usize, stops: &[char]) -> String {
    header_at(lines, start, stops).0
}

/// `str::lines`, found with memchr: the scan of every line is the hot loop.
pub fn split_lines(text: &str) -> Vec<&str> {
    let mut out = Vec::with_capacity(text.len() / 32 + 1);
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', text.as_bytes()) {
        let line = &text[start..end];
        out.push(line.strip_suffix('\r').unwrap_or(line));
        start = end + 1;
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// Whether a line has a quote character: the cheap test before looking for strings in it.
pub fn has_quote(line: &str) -> bool {
    memchr::memchr3(b'"', b'\'', b'`', line.as_bytes()).is_some()
}

/// The first sentence of a doc comment gathered above line `i` by `prefix` (e.g. "///").
pub fn doc_above(lines: &[&str], i: usize, prefix: &str, skip_attrs: bool) -> Option<String> {
    let mut j = i;
    let mut doc = Vec::new(); // bottom up
    while j > 0 {
        let t = lines[j - 1].trim_start();
        if let Some(rest) = t.strip_prefix(prefix) {
            if !rest.starts_with('/') {
                doc.push(rest);
            }
        } else if !(skip_attrs && (t.starts_with("#[") || t.starts_with('@'))) {
            break;
        }
        j -= 1;
    }
    let first = *doc.last()?;
    if is_boilerplate(first) {
        return None;
    }
    paragraph(doc.into_iter().rev())
}

/// The comment lines from line `i` on that start with `mark`, without it (and without more
/// of its first character, as in `##` or `///`): the rest of a comment paragraph.
pub fn comment_lines<'a>(
    lines: &'a [&'a str],
    i: usize,
    mark: &'a str,
) -> impl Iterator<Item = &'a str> + 'a {
    let more = mark.chars().next().unwrap_or('#');
    lines[i..].iter().map_while(move |l| {
        l.trim()
            .strip_prefix(mark)
            .map(|r| r.trim_start_matches(more))
    })
}

/// The first sentence of a `/* … */` block (given with its delimiters).
pub fn block_comment_line(block: &[&str]) -> Option<String> {
    let text = |line: &str| {
        let t = line
            .trim()
            .trim_start_matches("/**")
            .trim_start_matches("/*!")
            .trim_start_matches("/*");
        t.trim_end_matches("*/")
            .trim_start_matches('*')
            .trim()
            .to_string()
    };
    for (k, line) in block.iter().enumerate() {
        let mut t = text(line);
        for tag in [
            "@fileoverview",
            "@file",
            "@overview",
            "@description",
            "@summary",
        ] {
            if let Some(rest) = t.strip_prefix(tag) {
                t = rest.trim().to_string();
            }
        }
        if t.starts_with('@') || t.is_empty() || is_boilerplate(&t) {
            continue;
        }
        let rest: Vec<String> = block[k + 1..]
            .iter()
            .map(|l| text(l))
            .take_while(|r| !r.starts_with('@'))
            .collect();
        return paragraph(std::iter::once(t.as_str()).chain(rest.iter().map(String::as_str)));
    }
    None
}

/// The header comment of a file in a language whose comments start with `mark`.
pub fn line_comment_header(lines: &[&str], mark: &str) -> Option<String> {
    for (i, line) in lines.iter().enumerate().take(60) {
        let t = line.trim();
        if t.is_empty() || t.starts_with("#!") || t == "---" {
            continue;
        }
        match t.strip_prefix(mark) {
            Some(rest) => {
                let rest = rest.trim_start_matches(mark.chars().next().unwrap_or('#'));
                if !is_boilerplate(rest) {
                    return paragraph(comment_lines(lines, i, mark));
                }
            }
            None => return None,
        }
    }
    None
}

/// The header comment of a C-like file: `//` lines or a `/* */` block before any code.
pub fn slash_header(lines: &[&str]) -> Option<String> {
    let mut i = 0;
    while i < lines.len() && i < 80 {
        let t = lines[i].trim();
        if t.is_empty() || t.starts_with("#!") || t.starts_with("'use ") || t.starts_with("\"use ")
        {
            i += 1;
            continue;
        }
        if t.starts_with("/*") {
            let start = i;
            while i < lines.len() && !lines[i].contains("*/") {
                i += 1;
            }
            let end = i.min(lines.len() - 1);
            if let Some(s) = block_comment_line(&lines[start..=end]) {
                return Some(s);
            }
            i += 1;
            continue;
        }
        if let Some(rest) = t.strip_prefix("//") {
            let rest = rest.trim_start_matches(['/', '!']);
            if !is_boilerplate(rest) {
                return paragraph(comment_lines(lines, i, "//").map(|r| r.trim_start_matches('!')));
            }
            i += 1;
            continue;
        }
        return None;
    }
    None
}

pub fn markdown_header(lines: &[&str]) -> Option<String> {
    let mut i = 0;
    if lines.first().map(|l| l.trim()) == Some("---") {
        i = 1;
        while i < lines.len() && lines[i].trim() != "---" {
            i += 1;
        }
        i += 1;
    }
    let mut fence = false;
    for (n, line) in lines.iter().skip(i).take(200).enumerate() {
        let t = line.trim();
        if t.starts_with("```") {
            fence = !fence;
            continue;
        }
        if fence
            || t.is_empty()
            || t.starts_with('<')
            || t.starts_with("[!")
            || t.starts_with("![")
            || t.starts_with("[![")
        {
            continue;
        }
        if t.starts_with('#') {
            let t = t
                .trim_start_matches('#')
                .trim()
                .trim_end_matches('#')
                .trim();
            if !t.is_empty() && !is_boilerplate(t) {
                return clean(t); // a heading is whole on its line
            }
        } else if !is_boilerplate(t) {
            return paragraph(lines[i + n..].iter().copied());
        }
    }
    None
}

pub fn rst_header(lines: &[&str]) -> Option<String> {
    lines
        .iter()
        .take(100)
        .map(|l| l.trim())
        .find(|t| t.chars().any(|c| c.is_alphanumeric()) && !t.starts_with(".."))
        .and_then(clean)
}
