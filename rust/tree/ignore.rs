//! Ignore files (gitignore syntax) read and matched the way git does it, at git's cost.
//!
//! git splits a file into lines and, for each path it meets, tries the lines from the
//! last one up, each with a literal compare or its wildcard matcher: nothing is compiled,
//! so a file of 50,000 lines costs a split and whatever the paths ask. The `ignore` crate
//! compiles every file into one regex set instead, tens of microseconds and kilobytes a
//! line: a hostile file of 50,000 `**/x/**` lines took 1.5 s and 400 MB each time a walk
//! met it. So the walks here use these matchers, with git's semantics (the differential
//! test checks them against `git check-ignore`) and two limits of their own:
//! - a scan reads at most `MAX_SCAN_BYTES` of ignore files in all (a parsed byte costs
//!   about as much memory as git's), what comes past that is not applied (git reads none
//!   of a file past 100 MB);
//! - a line longer than `MAX_LINE` bytes is not applied (longer than any path can be);
//! - at most `MAX_GLOBS` wildcard lines of a file apply: a path is tried against each of
//!   them, as git tries it against every line; the literal lines (`name`, `/a/path`,
//!   `*.ext`) are looked up in tables instead, so there may be any number of them.
//!
//! A line repeated is kept once, at its last place: that copy is the one that can
//! decide, and the copies decide alike. What is not applied is said once per process on
//! stderr, naming the file.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, RwLock};

pub const MAX_SCAN_BYTES: u64 = 4 * 1024 * 1024;
pub const MAX_LINE: usize = 4096;
pub const MAX_GLOBS: usize = 1000;

/// One step of a wildcard pattern. `/` is only ever matched by a literal `/`, `**/`
/// (`AnyDirs`: zero or more whole directories) and a trailing `/**` (`AnyRest`).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Tok {
    Lit(u8),
    One,
    Class(u16),
    Star,
    AnyDirs,
    AnyRest,
}

#[derive(Debug, PartialEq)]
enum Kind {
    Exact(Box<[u8]>),
    /// `*` then a literal, matched against a name: a suffix compare.
    Suffix(Box<[u8]>),
    /// An exact or suffix pattern once it is in its `Rules`' tables.
    Indexed,
    Everything,
    /// `needle`: the longest literal run, which a path must contain (checked first: most
    /// paths fail there).
    Glob {
        toks: Box<[Tok]>,
        classes: Box<[[u64; 4]]>,
        prefix: usize,
        needle: Box<[u8]>,
    },
}

#[derive(Debug)]
struct Pattern {
    negated: bool,
    dir_only: bool,
    /// Has a `/` before its end: matched against the path from the file's directory;
    /// otherwise against the last component, at any depth.
    anchored: bool,
    kind: Kind,
}

/// git's rule: trailing spaces go unless the last one is escaped with a backslash.
fn trim_trailing_spaces(line: &[u8]) -> &[u8] {
    let (mut i, mut space_from) = (0, None);
    while i < line.len() {
        match line[i] {
            b' ' => {
                space_from.get_or_insert(i);
            }
            b'\\' => {
                i += 1;
                space_from = None;
            }
            _ => space_from = None,
        }
        i += 1;
    }
    &line[..space_from.unwrap_or(line.len())]
}

type ByteTest = fn(u8) -> bool;

const POSIX_CLASSES: &[(&[u8], ByteTest)] = &[
    (b"alnum", |c| c.is_ascii_alphanumeric()),
    (b"alpha", |c| c.is_ascii_alphabetic()),
    (b"blank", |c| c == b' ' || c == b'\t'),
    (b"cntrl", |c| c.is_ascii_control()),
    (b"digit", |c| c.is_ascii_digit()),
    (b"graph", |c| c.is_ascii_graphic()),
    (b"lower", |c| c.is_ascii_lowercase()),
    (b"print", |c| c.is_ascii_graphic() || c == b' '),
    (b"punct", |c| c.is_ascii_punctuation()),
    (b"space", |c| c.is_ascii_whitespace() || c == 0x0b),
    (b"upper", |c| c.is_ascii_uppercase()),
    (b"xdigit", |c| c.is_ascii_hexdigit()),
];

/// A bracket expression from just after its `[`: the set of bytes it matches and where it
/// ends, or None when git would never match it (no closing `]`, an unknown `[:class:]`).
fn class(p: &[u8], mut i: usize) -> Option<([u64; 4], usize)> {
    let mut set = [0u64; 4];
    let mut add = |c: u8| set[(c >> 6) as usize] |= 1 << (c & 63);
    let negated = matches!(p.get(i), Some(b'!' | b'^'));
    if negated {
        i += 1;
    }
    let mut prev: Option<u8> = None;
    let mut first = true;
    loop {
        let c = *p.get(i)?;
        if c == b']' && !first {
            break;
        }
        first = false;
        if c == b'\\' {
            i += 1;
            let e = *p.get(i)?;
            add(e);
            prev = Some(e);
        } else if c == b'-' && prev.is_some() && p.get(i + 1).is_some_and(|&n| n != b']') {
            i += 1;
            let mut hi = p[i];
            if hi == b'\\' {
                i += 1;
                hi = *p.get(i)?;
            }
            for b in prev.unwrap()..=hi {
                add(b);
            }
            prev = None;
        } else if let Some(name) = posix_name(&p[i..]) {
            let (_, test) = POSIX_CLASSES.iter().find(|(n, _)| *n == name)?;
            (0..=255u8).filter(|&b| test(b)).for_each(&mut add);
            i += name.len() + 3;
            prev = None;
        } else {
            add(c);
            prev = Some(c);
        }
        i += 1;
    }
    if negated {
        set.iter_mut().for_each(|w| *w = !*w);
    }
    Some((set, i + 1))
}

/// The name in `[:name:]` at the start of `p`, as git reads it: up to the first `]`,
/// which must follow a `:` (otherwise the `[` is an ordinary member).
fn posix_name(p: &[u8]) -> Option<&[u8]> {
    let rest = p.strip_prefix(b"[:")?;
    let close = rest.iter().position(|&c| c == b']')?;
    rest[..close].strip_suffix(b":")
}

fn parse(line: &[u8]) -> Option<Pattern> {
    let mut p = trim_trailing_spaces(line);
    if p.is_empty() || p[0] == b'#' {
        return None;
    }
    let negated = p[0] == b'!';
    if negated {
        p = &p[1..];
    }
    let dir_only = p.last() == Some(&b'/');
    if dir_only {
        p = &p[..p.len() - 1];
    }
    let anchored = p.contains(&b'/');
    if anchored && p[0] == b'/' {
        p = &p[1..];
    }
    if p.is_empty() {
        return None;
    }
    let (mut toks, mut classes) = (Vec::new(), Vec::new());
    let mut i = 0;
    while i < p.len() {
        match p[i] {
            b'\\' => {
                toks.push(Tok::Lit(*p.get(i + 1)?));
                i += 2;
            }
            b'?' => {
                toks.push(Tok::One);
                i += 1;
            }
            b'[' => {
                let (set, end) = class(p, i + 1)?;
                toks.push(Tok::Class(u16::try_from(classes.len()).ok()?));
                classes.push(set);
                i = end;
            }
            b'*' => {
                let mut j = i;
                while j < p.len() && p[j] == b'*' {
                    j += 1;
                }
                // Two or more stars that are a whole component span directories.
                let whole =
                    j - i >= 2 && (i == 0 || p[i - 1] == b'/') && (j == p.len() || p[j] == b'/');
                if !whole {
                    if toks.last() != Some(&Tok::Star) {
                        toks.push(Tok::Star);
                    }
                    i = j;
                } else if !anchored {
                    return Some(Pattern {
                        negated,
                        dir_only,
                        anchored,
                        kind: Kind::Everything,
                    });
                } else if j == p.len() {
                    toks.push(Tok::AnyRest);
                    i = j;
                } else {
                    toks.push(Tok::AnyDirs);
                    i = j + 1;
                }
            }
            c => {
                toks.push(Tok::Lit(c));
                i += 1;
            }
        }
    }
    let lit = |t: &[Tok]| {
        t.iter()
            .map(|t| if let Tok::Lit(c) = t { Some(*c) } else { None })
            .collect::<Option<Vec<u8>>>()
    };
    let kind = if let Some(bytes) = lit(&toks) {
        Kind::Exact(bytes.into())
    } else if let (false, Some((Tok::Star, rest))) = (anchored, toks.split_first()) {
        match lit(rest) {
            Some(bytes) => Kind::Suffix(bytes.into()),
            None => glob(toks, classes),
        }
    } else {
        glob(toks, classes)
    };
    Some(Pattern {
        negated,
        dir_only,
        anchored,
        kind,
    })
}

fn glob(toks: Vec<Tok>, classes: Vec<[u64; 4]>) -> Kind {
    let prefix = toks.iter().take_while(|t| matches!(t, Tok::Lit(_))).count();
    let runs = toks.split(|t| !matches!(t, Tok::Lit(_)));
    let longest = runs.max_by_key(|r| r.len()).unwrap_or_default();
    let needle = longest
        .iter()
        .map(|t| if let Tok::Lit(c) = t { *c } else { 0 })
        .collect();
    Kind::Glob {
        toks: toks.into(),
        classes: classes.into(),
        prefix,
        needle,
    }
}

fn has(set: &[u64], i: usize) -> bool {
    set[i >> 6] & (1 << (i & 63)) != 0
}

fn put(set: &mut [u64], i: usize) {
    set[i >> 6] |= 1 << (i & 63);
}

/// Whether `toks` match all of `text`: the set of positions in the pattern that the text
/// read so far can reach, advanced a byte at a time (no backtracking, so no pattern costs
/// more than its length times the text's).
fn glob_match(toks: &[Tok], classes: &[[u64; 4]], text: &[u8]) -> bool {
    let n = toks.len();
    let words = (n + 1).div_ceil(64);
    // Most patterns are short: their four sets fit on the stack.
    let (mut small, mut large) = ([0u64; 8], Vec::new());
    let all: &mut [u64] = if words <= 2 {
        &mut small[..4 * words]
    } else {
        large.resize(4 * words, 0);
        &mut large
    };
    let (at, rest) = all.split_at_mut(words);
    let (inside, rest) = rest.split_at_mut(words);
    let (next_at, next_inside) = rest.split_at_mut(words);
    // `at`: before token i; `inside`: within a directory name an AnyDirs at i is passing over.
    let (mut at, mut inside, mut next_at, mut next_inside) = (at, inside, next_at, next_inside);
    // What can be skipped without reading a byte (a star, `**/` or `/**` matching nothing),
    // in rising order so that runs of them are skipped together.
    let close = |at: &mut [u64]| {
        for w in 0..words {
            let mut bits = at[w];
            while bits != 0 {
                let i = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if i < n && matches!(toks[i], Tok::Star | Tok::AnyDirs | Tok::AnyRest) {
                    put(at, i + 1);
                    if !(i + 1).is_multiple_of(64) {
                        bits |= 1 << ((i + 1) % 64);
                    }
                }
            }
        }
    };
    put(at, 0);
    close(at);
    for &c in text {
        next_at.fill(0);
        next_inside.fill(0);
        for w in 0..words {
            let mut live = at[w] | inside[w];
            while live != 0 {
                let i = w * 64 + live.trailing_zeros() as usize;
                live &= live - 1;
                if i < n && has(at, i) {
                    match toks[i] {
                        Tok::Lit(b) if b == c => put(next_at, i + 1),
                        Tok::One if c != b'/' => put(next_at, i + 1),
                        Tok::Class(k) if c != b'/' && has(&classes[k as usize], c as usize) => {
                            put(next_at, i + 1)
                        }
                        Tok::Star if c != b'/' => put(next_at, i),
                        Tok::AnyRest => put(next_at, i),
                        Tok::AnyDirs if c == b'/' => put(next_at, i),
                        Tok::AnyDirs => put(next_inside, i),
                        _ => {}
                    }
                }
                if has(inside, i) {
                    put(
                        if c == b'/' {
                            &mut *next_at
                        } else {
                            &mut *next_inside
                        },
                        i,
                    );
                }
            }
        }
        close(next_at);
        std::mem::swap(&mut at, &mut next_at);
        std::mem::swap(&mut inside, &mut next_inside);
        if at.iter().chain(inside.iter()).all(|&w| w == 0) {
            return false;
        }
    }
    has(at, n)
}

impl Pattern {
    fn matches(&self, rel: &[u8], is_dir: bool) -> bool {
        if self.dir_only && !is_dir {
            return false;
        }
        let text = if self.anchored {
            rel
        } else {
            rel.rsplit(|&c| c == b'/').next().unwrap_or(rel)
        };
        match &self.kind {
            Kind::Exact(lit) => text == &lit[..],
            Kind::Suffix(lit) => text.ends_with(lit),
            Kind::Indexed => false,
            Kind::Everything => true,
            Kind::Glob {
                toks,
                classes,
                prefix,
                needle,
            } => {
                let lead = toks[..*prefix]
                    .iter()
                    .map(|t| if let Tok::Lit(c) = t { *c } else { 0 });
                text.len() >= *prefix
                    && text.iter().zip(lead).all(|(a, b)| *a == b)
                    && memchr::memmem::find(text, needle).is_some()
                    && glob_match(toks, classes, text)
            }
        }
    }
}

/// Literal patterns by the bytes a path (or a part of it) must equal, each with its lines in order.
type Lines = HashMap<Box<[u8]>, Vec<u32>>;

/// The patterns of one ignore file (or of a file and the config's list), for the paths
/// below the directory it sits in.
#[derive(Debug)]
pub struct Rules {
    base: PathBuf,
    patterns: Vec<Pattern>,
    /// The literal patterns by what they must equal (a name, or the path from `base`) and
    /// the `*literal` ones by their suffix, each with its lines in order: such a line costs
    /// a path no check, however many there are.
    by_name: Lines,
    by_path: Lines,
    by_suffix: Vec<(usize, Lines)>,
    /// The wildcard patterns, tried one by one from the last, as git tries every line.
    scanned: Vec<u32>,
}

impl Rules {
    /// The rules of `sources` (each a name for warnings and its text, later ones over
    /// earlier ones) for paths under `base`; None when no line holds a pattern.
    pub fn parse(base: &Path, sources: &[(&str, &str)]) -> Option<Arc<Rules>> {
        let mut lines: Vec<&[u8]> = Vec::new();
        for (name, text) in sources {
            let text = text.strip_prefix('\u{feff}').unwrap_or(text);
            let before = lines.len();
            lines.extend(text.lines().map(|l| trim_trailing_spaces(l.as_bytes())));
            let long = lines[before..]
                .iter()
                .filter(|l| l.len() > MAX_LINE)
                .count();
            if long > 0 {
                warn(format!(
                    "{name}: {long} line(s) longer than {MAX_LINE} bytes are not applied"
                ));
            }
        }
        // Each line's last copy, in order.
        let mut seen = HashSet::new();
        let mut kept: Vec<&[u8]> = lines
            .into_iter()
            .rev()
            .filter(|l| l.len() <= MAX_LINE && seen.insert(*l))
            .collect();
        kept.reverse();
        let mut patterns: Vec<Pattern> = kept.into_iter().filter_map(parse).collect();
        let wild = |p: &Pattern| matches!(p.kind, Kind::Glob { .. } | Kind::Everything);
        let globs = patterns.iter().filter(|p| wild(p)).count();
        if globs > MAX_GLOBS {
            let names: Vec<&str> = sources.iter().map(|(n, _)| *n).collect();
            warn(format!(
                "{}: its last {} wildcard pattern(s) are not applied: at most {MAX_GLOBS} apply from a file",
                names.join(", "),
                globs - MAX_GLOBS
            ));
            let mut left = MAX_GLOBS;
            patterns.retain(|p| {
                let keep = !wild(p) || left > 0;
                left -= usize::from(wild(p) && keep);
                keep
            });
        }
        if patterns.is_empty() {
            return None;
        }
        let mut rules = Rules {
            base: base.to_path_buf(),
            patterns: Vec::new(),
            by_name: HashMap::new(),
            by_path: HashMap::new(),
            by_suffix: Vec::new(),
            scanned: Vec::new(),
        };
        let mut by_suffix: HashMap<usize, Lines> = HashMap::new();
        for (i, mut p) in patterns.into_iter().enumerate() {
            let i = i as u32;
            match std::mem::replace(&mut p.kind, Kind::Indexed) {
                Kind::Exact(lit) if p.anchored => rules.by_path.entry(lit).or_default().push(i),
                Kind::Exact(lit) => rules.by_name.entry(lit).or_default().push(i),
                Kind::Suffix(lit) => by_suffix
                    .entry(lit.len())
                    .or_default()
                    .entry(lit)
                    .or_default()
                    .push(i),
                other => {
                    p.kind = other;
                    rules.scanned.push(i);
                }
            }
            rules.patterns.push(p);
        }
        rules.by_suffix = by_suffix.into_iter().collect();
        rules.by_suffix.sort_by_key(|(len, _)| *len);
        Some(Arc::new(rules))
    }

    /// What the last line that speaks of `path` says: Some(true) ignored, Some(false)
    /// re-included (`!`), None when no line matches it.
    pub fn matched(&self, path: &Path, is_dir: bool) -> Option<bool> {
        self.matched_rel(&self.rel(path)?, is_dir)
    }

    /// `path` from the directory the rules sit in, `/`-separated; None when it is not below it.
    pub fn rel<'p>(&self, path: &'p Path) -> Option<Cow<'p, [u8]>> {
        let rel = path.strip_prefix(&self.base).ok()?;
        Some(crate::tree::paths::slashed(
            rel.as_os_str().as_encoded_bytes(),
        ))
    }

    /// `matched` of a path given from the rules' directory (`rel`'s form), for a caller that
    /// makes many paths below one directory and would otherwise split each one from the root.
    pub fn matched_rel(&self, rel: &[u8], is_dir: bool) -> Option<bool> {
        if rel.is_empty() {
            return None;
        }
        let name = rel.rsplit(|&c| c == b'/').next().unwrap_or(rel);
        // The last line that matches decides: the last of each table's lines that holds
        // for this kind of path, then any later wildcard line.
        let applies = |i: &&u32| is_dir || !self.patterns[**i as usize].dir_only;
        let last =
            |ids: Option<&Vec<u32>>| ids.and_then(|ids| ids.iter().rev().find(applies).copied());
        let mut best = last(self.by_name.get(name)).max(last(self.by_path.get(rel)));
        for (len, table) in self
            .by_suffix
            .iter()
            .take_while(|(len, _)| *len <= name.len())
        {
            best = best.max(last(table.get(&name[name.len() - len..])));
        }
        for &i in self.scanned.iter().rev().take_while(|&&i| Some(i) > best) {
            if self.patterns[i as usize].matches(rel, is_dir) {
                best = Some(i);
                break;
            }
        }
        best.map(|i| !self.patterns[i as usize].negated)
    }
}

/// What one scan may still read of ignore files (`MAX_SCAN_BYTES` in all), shared by its threads.
pub struct Budget(AtomicU64);

impl Budget {
    pub fn new() -> Budget {
        Budget(AtomicU64::new(MAX_SCAN_BYTES))
    }

    /// Take up to `want` bytes; what was granted.
    fn take(&self, want: u64) -> u64 {
        let mut left = self.0.load(Ordering::Relaxed);
        loop {
            let granted = want.min(left);
            match self.0.compare_exchange(
                left,
                left - granted,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return granted,
                Err(now) => left = now,
            }
        }
    }
}

/// Read an ignore file within `budget`: None when it is absent or unreadable (no rules);
/// when the budget runs out in it, its lines up to there.
pub fn read(path: &Path, budget: &Budget) -> Option<String> {
    // Through the confined layer, beneath the file's own directory: a link in its place that
    // leads out of it is not followed (git follows none), a FIFO cannot hang the walk (not
    // opened for a blocking read), and only a regular file is read.
    let dir = crate::tree::fs::Root::open(path.parent()?).ok()?;
    read_beneath(&dir, Path::new(path.file_name()?), path, budget)
}

/// `rel` read beneath `dir` within `budget` (`path` names it in a warning).
fn read_beneath(
    dir: &crate::tree::fs::Root,
    rel: &Path,
    path: &Path,
    budget: &Budget,
) -> Option<String> {
    let left = budget.0.load(Ordering::Relaxed);
    let mut buf = dir.read_head(rel, left + 1).ok()?;
    let granted = budget.take(buf.len() as u64) as usize;
    if granted < buf.len() {
        buf.truncate(granted);
        buf.truncate(buf.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1));
        warn(format!(
            "{}: only its first {} bytes are read: a scan reads at most {} MiB of ignore files",
            path.display(),
            buf.len(),
            MAX_SCAN_BYTES >> 20
        ));
    }
    // git matches bytes; a pattern with a byte that is not UTF-8 keeps its place and matches nothing.
    Some(
        String::from_utf8(buf)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
    )
}

/// The rules of `.git/info/exclude` of the repository whose top is `top`, read beneath `top`'s
/// handle: when `.git` or `.git/info` is a link that leads out of the repository, the file is
/// not read (docs/security.md: git metadata is read inside the root).
pub fn exclude_of(top: &Path, budget: &Budget) -> Option<Arc<Rules>> {
    let rel = Path::new(".git").join("info").join("exclude");
    let path = top.join(&rel);
    let text = read_beneath(&crate::tree::fs::Root::open(top).ok()?, &rel, &path, budget)?;
    Rules::parse(top, &[(&path.display().to_string(), &text)])
}

/// The rules of the ignore file `file`, for the paths under `base`.
pub fn from_file(base: &Path, file: &Path, budget: &Budget) -> Option<Arc<Rules>> {
    let text = read(file, budget)?;
    Rules::parse(base, &[(&file.display().to_string(), &text)])
}

/// The rules that hold at the root: `.contextignore` with the config's `ignore` patterns
/// (over every other rule), and `.git/info/exclude` (under every `.gitignore`).
pub struct RootRules {
    pub priority: Option<Arc<Rules>>,
    pub exclude: Option<Arc<Rules>>,
}

pub fn root_rules(root: &Path, config_patterns: &[String], budget: &Budget) -> RootRules {
    let contextignore = root.join(".contextignore");
    let text = read(&contextignore, budget).unwrap_or_default();
    let name = contextignore.display().to_string();
    let config = config_patterns.join("\n");
    let config_name = format!("{} (ignore)", crate::tree::names::CONFIG_FILE);
    RootRules {
        priority: Rules::parse(root, &[(&name, &text), (&config_name, &config)]),
        exclude: exclude_of(root, budget),
    }
}

/// The `ignore` crate's walker as every listing beside the table walk uses it: none of the
/// crate's own ignore sources (the rules of this module decide, as git matches them), hidden
/// entries skipped, links not followed.
pub fn lister(path: &Path) -> ignore::WalkBuilder {
    let mut walker = ignore::WalkBuilder::new(path);
    walker
        .standard_filters(false)
        .hidden(true)
        .follow_links(false);
    walker
}

/// The `.gitignore` rules of a tree for a walker that meets entries in any order (the
/// `ignore` crate's parallel walker, told not to read ignore files itself, asks from its
/// `filter_entry`): each directory's file is read once, on first use, and kept to the
/// end of the walk (such a walker does not say when it is done with a directory: the
/// scan's budget bounds what is kept).
pub struct Tree {
    root: PathBuf,
    exclude: Option<Arc<Rules>>,
    dirs: RwLock<HashMap<PathBuf, Option<Arc<Rules>>>>,
    budget: Budget,
}

impl Tree {
    /// For a directory that may sit inside a repository: the rules from the repository's top
    /// (the nearest directory at or above it that holds `.git`) down, as git applies them.
    pub fn above(dir: &Path) -> Tree {
        Tree::new(
            dir.ancestors()
                .find(|a| a.join(".git").exists())
                .unwrap_or(dir),
        )
    }

    pub fn new(root: &Path) -> Tree {
        let budget = Budget::new();
        let exclude = exclude_of(root, &budget);
        Tree {
            root: root.to_path_buf(),
            exclude,
            dirs: RwLock::new(HashMap::new()),
            budget,
        }
    }

    fn rules_of(&self, dir: &Path) -> Option<Arc<Rules>> {
        if let Some(r) = self.dirs.read().unwrap_or_else(|e| e.into_inner()).get(dir) {
            return r.clone();
        }
        let rules = from_file(dir, &dir.join(".gitignore"), &self.budget);
        self.dirs
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(dir.to_path_buf(), rules.clone());
        rules
    }

    /// Whether `path` (below the root) is ignored: the deepest `.gitignore` that speaks of
    /// it decides, else `.git/info/exclude`.
    pub fn ignores(&self, path: &Path, is_dir: bool) -> bool {
        let rules = path
            .ancestors()
            .skip(1)
            .take_while(|d| d.starts_with(&self.root))
            .filter_map(|d| self.rules_of(d));
        decides(rules.chain(self.exclude.clone()), path, is_dir)
    }

    /// The rules `ignores` consults for an entry of directory `dir` (at or below the root), in
    /// its order (`decides`): each `.gitignore` from `dir`'s up to the root's, then
    /// `.git/info/exclude`. Looked up once for a directory whose entries are all asked of,
    /// rather than each ancestor's by its path again for every entry.
    pub fn chain(&self, dir: &Path) -> Vec<Arc<Rules>> {
        dir.ancestors()
            .take_while(|d| d.starts_with(&self.root))
            .filter_map(|d| self.rules_of(d))
            .chain(self.exclude.clone())
            .collect()
    }

    /// Whether a walk from the root never reaches directory `dir`: it or one above it is ignored.
    pub fn prunes(&self, dir: &Path) -> bool {
        dir.ancestors()
            .take_while(|a| *a != self.root && a.starts_with(&self.root))
            .any(|a| self.ignores(a, true))
    }
}

/// Whether `path` is ignored by `chain`, rules in the order they are consulted: the first that
/// speaks of it decides.
pub fn decides<R: AsRef<Rules>>(
    chain: impl IntoIterator<Item = R>,
    path: &Path,
    is_dir: bool,
) -> bool {
    chain
        .into_iter()
        .find_map(|r| r.as_ref().matched(path, is_dir))
        .unwrap_or(false)
}

static WARNED: LazyLock<Mutex<HashSet<String>>> = LazyLock::new(|| Mutex::new(HashSet::new()));

/// Say on stderr, once per process, what of an ignore file is not applied: its rules are
/// then not git's, and a person would otherwise never learn why a directory shows.
fn warn(message: String) {
    if WARNED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(message.clone())
    {
        eprintln!("repoctx: warning: {message}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TempTree;

    fn ignored(rules: &str, path: &str, is_dir: bool) -> Option<bool> {
        let base = Path::new("/r");
        Rules::parse(base, &[("f", rules)]).and_then(|r| r.matched(&base.join(path), is_dir))
    }

    #[test]
    fn git_semantics() {
        let yes = |rules: &str, path: &str| {
            assert_eq!(ignored(rules, path, false), Some(true), "{rules:?} {path}")
        };
        let no = |rules: &str, path: &str| {
            assert_ne!(ignored(rules, path, false), Some(true), "{rules:?} {path}")
        };
        yes("foo", "a/b/foo");
        no("/foo", "a/foo");
        yes("/foo", "foo");
        yes("a/foo", "a/foo");
        no("a/foo", "x/a/foo");
        yes("*.log", "x/y.log");
        no("*.log", "x.log/y");
        yes("**/x/**", "a/x/b/c");
        no("**/x/**", "a/x");
        yes("a/**/b", "a/b");
        yes("a/**/b", "a/x/y/b");
        no("a/**/b", "ab");
        yes("a/**", "a/x/y");
        no("a/**", "a");
        yes("**", "any/thing");
        yes("/**", "any/thing");
        yes("***/deep", "a/b/deep");
        yes("a**b", "axxb");
        no("a**b", "ax/xb");
        yes("a?c", "abc");
        no("a?c", "a/c");
        yes("[[:digit:]]x", "1x");
        yes("[]a]y", "]y");
        yes("[!a]z", "bz");
        no("[!a]z", "az");
        yes("[a-c]q", "bq");
        no("[a-c]q", "dq");
        no("[unclosed", "[unclosed");
        yes("\\!bang", "!bang");
        yes("\\#hash", "#hash");
        yes("sp\\ ", "sp ");
        yes("trail   ", "trail");
        yes("f\r\n", "f");
        assert_eq!(ignored("d/", "d", false), None);
        assert_eq!(ignored("d/", "d", true), Some(true));
        assert_eq!(ignored("*\n!keep", "keep", false), Some(false));
        assert_eq!(ignored("!keep\n*", "keep", false), Some(true));
    }

    #[test]
    fn repeated_lines_are_kept_once_at_their_last_place_and_long_lines_are_not_applied() {
        let r = Rules::parse(Path::new("/r"), &[("f", "a\n**\n# c\n\n!b\na\n**  \nb/\n")]).unwrap();
        assert_eq!(r.patterns.len(), 4);
        assert!(r.patterns[0].negated && r.by_name[&b"a"[..]] == [1] && r.scanned == [2]);
        let long = format!("{}\nshort\n", "a".repeat(MAX_LINE + 1));
        assert_eq!(
            Rules::parse(Path::new("/r"), &[("f", &long)])
                .unwrap()
                .patterns
                .len(),
            1
        );
    }

    #[test]
    fn table_lines_and_wildcard_lines_keep_git_precedence() {
        let rules = "*.log\n!keep.log\nbuild/\n/top\na/b\nx*\n!x1\n";
        assert_eq!(ignored(rules, "d/keep.log", false), Some(false));
        assert_eq!(ignored(rules, "d/other.log", false), Some(true));
        assert_eq!(ignored(rules, "d/build", false), None);
        assert_eq!(ignored(rules, "d/build", true), Some(true));
        assert_eq!(ignored(rules, "top", false), Some(true));
        assert_eq!(ignored(rules, "d/top", false), None);
        assert_eq!(ignored(rules, "a/b", false), Some(true));
        assert_eq!(ignored(rules, "x1", false), Some(false));
        assert_eq!(ignored(&format!("{rules}x1\n"), "x1", false), Some(true));
        assert_eq!(ignored("x1\nx*\n!x1\n", "x1", false), Some(false));
    }

    #[test]
    fn wildcard_lines_past_the_limit_are_not_applied_and_literal_ones_have_none() {
        let text: String = (0..MAX_GLOBS + 10)
            .map(|i| format!("w{i}?\nlit{i}\n"))
            .collect();
        let r = Rules::parse(Path::new("/r"), &[("f", &text)]).unwrap();
        assert_eq!(r.scanned.len(), MAX_GLOBS);
        assert_eq!(
            r.matched(Path::new(&format!("/r/w{}x", MAX_GLOBS - 1)), false),
            Some(true)
        );
        assert_eq!(
            r.matched(Path::new(&format!("/r/w{}x", MAX_GLOBS)), false),
            None
        );
        assert_eq!(
            r.matched(Path::new(&format!("/r/lit{}", MAX_GLOBS + 9)), false),
            Some(true)
        );
    }

    #[test]
    fn an_ignore_file_that_is_a_fifo_or_a_directory_holds_no_rules() {
        let t = TempTree::new("ignore-fifo");
        let budget = Budget::new();
        assert!(read(&t.mkdir(".gitignore"), &budget).is_none());
        #[cfg(unix)] // no FIFOs in Windows' file system
        assert!(read(&t.fifo("fifo"), &budget).is_none());
    }

    #[test]
    #[cfg(unix)] // /dev/zero
    fn an_ignore_file_linked_out_of_its_directory_holds_no_rules() {
        let dir = TempTree::with("ignore-link", &[("outside", "*.py\n")]);
        dir.mkdir("repo");
        crate::tree::os::symlink(dir.join("outside"), dir.join("repo/.gitignore")).unwrap();
        crate::tree::os::symlink("/dev/zero", dir.join("repo/.contextignore")).unwrap();
        let budget = Budget::new();
        assert!(read(&dir.join("repo/.gitignore"), &budget).is_none());
        assert!(read(&dir.join("repo/.contextignore"), &budget).is_none());
    }

    #[test]
    fn long_wildcard_patterns_answer_without_backtracking() {
        // A backtracking matcher takes exponential time on these.
        let pattern = format!("{}x\n", "*?".repeat(1000));
        assert_eq!(ignored(&pattern, &"ab".repeat(1000), false), None);
        assert_eq!(
            ignored(&pattern, &format!("{}x", "ab".repeat(1000)), false),
            Some(true)
        );
        assert_eq!(
            ignored("a*a*a*a*a*a*a*a*a*a*a*b\n", &"a".repeat(3000), false),
            None
        );
    }
}
