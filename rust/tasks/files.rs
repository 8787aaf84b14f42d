//! Which files the task index reads, and what it keeps of each: its terms (code, comments,
//! docstrings and its path), the names it defines, its imports as written and its
//! annotations. One directory is listed with one `read_dir`; files are read through the
//! confined layer (rust/tree/fs.rs), never through a link.

use super::terms;
use crate::artifacts::annotate;
use crate::lang::defs::line_def;
use crate::lang::imports::{self, Import};
use crate::lang::{kind_of, lang_of, lexer, Lang};
use crate::tree::ignore::{Rules, Tree};
use crate::tree::os::{Kind, PlainDir};
use crate::tree::walk::is_source_file;
use aho_corasick::AhoCorasick;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Files larger than this are not read (generated code, data, bundles).
pub const MAX_FILE_BYTES: u64 = 1 << 20;
/// Path terms count this many times each: a file named for a word is about it.
const PATH_WEIGHT: u32 = 3;
/// Names that are source by extension but never worth reading for a task.
const SKIP_NAMES: &[&str] = &[
    "package-lock.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "Cargo.lock",
    "poetry.lock",
    "go.sum",
];

/// What a file's metadata says of its content (the one key of tree/os.rs).
pub use crate::tree::os::Key as StatKey;

/// Of std's metadata or of the confined layer's (rust/tree/fs.rs).
pub fn stat_key(m: &impl crate::tree::os::Meta) -> StatKey {
    StatKey::of(m)
}

/// The ignore rules of the walk, applied to files: `.contextignore` and the config's
/// patterns first, then the nested `.gitignore` files and `.git/info/exclude`.
pub struct Ignore {
    pub priority: Option<Arc<Rules>>,
    pub tree: Tree,
}

impl Ignore {
    pub fn new(root: &Path, extra: &[String]) -> Ignore {
        let budget = crate::tree::ignore::Budget::new();
        let rules = crate::tree::ignore::root_rules(root, extra, &budget);
        Ignore {
            priority: rules.priority,
            tree: Tree::new(root),
        }
    }
}

/// Whether a file name is one the index reads: dotcontext's source files, and the files the
/// core reads a language of (`vitest.config.mts` is TypeScript, though not dotcontext's source).
pub fn wanted(name: &str) -> bool {
    !name.starts_with('.')
        && (is_source_file(name) || lang_of(name).is_some())
        && !SKIP_NAMES.contains(&name)
        && !name.ends_with(".min.js")
}

/// Which regular files of one directory (of the walk table) the index reads, past `wanted`:
/// those not too large and not ignored, by the priority rules, then the directory's chain
/// (`Tree::chain`): the walk's (`walk::KeptDir`), or looked up once, for the first file asked of.
pub struct DirFilter<'a> {
    priority: Option<&'a Rules>,
    abs: PathBuf,
    chain: Result<Vec<Arc<Rules>>, &'a Tree>,
    /// Where in `path` the path from each rule's directory starts, the priority rules' then the
    /// chain's (None: not below it), found with the first file asked of: a cold call's million
    /// files split from each rule's directory by `Path::strip_prefix` cost 3.5 % of its CPU.
    starts: Option<Vec<Option<usize>>>,
    /// The path from the root of the file asked of: the directory's and `/` (none at the root),
    /// then its name.
    path: Vec<u8>,
    dir: usize,
}

impl<'a> DirFilter<'a> {
    pub fn new(ignore: &'a Ignore, root: &Path, dir: &str) -> DirFilter<'a> {
        DirFilter::of(ignore.priority.as_deref(), root, dir, Err(&ignore.tree))
    }

    /// With the chain the walk found for directory `dir`.
    pub fn walked(
        priority: Option<&'a Rules>,
        root: &Path,
        dir: &str,
        chain: Vec<Arc<Rules>>,
    ) -> DirFilter<'a> {
        DirFilter::of(priority, root, dir, Ok(chain))
    }

    fn of(
        priority: Option<&'a Rules>,
        root: &Path,
        dir: &str,
        chain: Result<Vec<Arc<Rules>>, &'a Tree>,
    ) -> DirFilter<'a> {
        let (abs, path) = if dir == "." {
            (root.to_path_buf(), Vec::new())
        } else {
            (root.join(dir), format!("{dir}/").into_bytes())
        };
        DirFilter {
            priority,
            abs,
            chain,
            starts: None,
            dir: path.len(),
            path,
        }
    }

    /// Whether the index reads regular file `name` (one `wanted`) of `size` bytes.
    pub fn admits(&mut self, name: &str, size: u64) -> bool {
        if size > MAX_FILE_BYTES {
            return false;
        }
        let DirFilter {
            priority,
            abs,
            chain,
            starts,
            path,
            dir,
        } = self;
        if let Err(tree) = *chain {
            *chain = Ok(tree.chain(abs));
        }
        let chain = chain.as_deref().unwrap_or_default();
        let rules = || priority.iter().copied().chain(chain.iter().map(|r| &**r));
        let starts = starts.get_or_insert_with(|| {
            rules()
                .map(|r| start(&r.rel(abs)?, &path[..*dir]))
                .collect()
        });
        path.truncate(*dir);
        path.extend_from_slice(name.as_bytes());
        let verdict =
            |(r, s): (&Rules, &Option<usize>)| s.and_then(|s| r.matched_rel(&path[s..], false));
        !rules()
            .zip(starts.iter())
            .find_map(verdict)
            .unwrap_or(false)
    }
}

/// Where the path from a rule's directory starts in a file's path from the root, given the
/// directory's path from that rule's directory (`below`) and from the root and `/` (`dir`).
fn start(below: &[u8], dir: &[u8]) -> Option<usize> {
    if below.is_empty() {
        return Some(dir.len());
    }
    let head = dir.strip_suffix(b"/")?.strip_suffix(below)?;
    (head.is_empty() || head.ends_with(b"/")).then_some(head.len())
}

/// The files of directory `dir` (a scope of the walk table) the index reads, each handed to
/// `each` as (name, stat key) in the order the directory lists them. The directory is opened
/// beneath `top` (the root) and its entries stat-ed relative to it (on Windows read from the
/// listing itself: `PlainDir::entries_stat`): no path is allocated a file, since at a million
/// files the per-file paths and names the listing allocated were most of a load's frees.
pub fn list(
    top: &PlainDir,
    root: &Path,
    dir: &str,
    ignore: &Ignore,
    mut each: impl FnMut(&str, StatKey),
) {
    let rel = if dir == "." { "" } else { dir };
    let Some(handle) = top.open(rel.as_bytes()) else {
        return;
    };
    let mut filter = DirFilter::new(ignore, root, dir);
    handle.entries_stat(|name, kind, stat| {
        if kind.is_some_and(|k| k != Kind::File) {
            return; // links are never followed, directories are rows of their own
        }
        let Ok(name) = std::str::from_utf8(name) else {
            return;
        };
        if !wanted(name) {
            return;
        }
        let Some(st) = stat() else {
            return;
        };
        if st.kind() == Kind::File && filter.admits(name, st.size) {
            each(name, st.key());
        }
    });
}

/// What the index keeps of one file.
#[derive(Default)]
pub struct Facts {
    /// (term, count), sorted, and the number of terms counted.
    pub counts: Vec<(String, u32)>,
    pub len: u32,
    /// Every name the file defines (nested definitions too), sorted, unique.
    pub defs: Vec<String>,
    pub imports: Vec<Import>,
    /// (line, artifact id) of each annotation (`@spec SPEC-001.anchor` is SPEC-001).
    pub annotations: Vec<(u32, String)>,
}

/// Whether a file is code (of a programming language, by the one table) and not a test.
pub fn is_code_not_test(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    kind_of(name).code && !crate::lang::is_test_path(path)
}

/// A path without its name's extension (`src/a.b/c.rs` is `src/a.b/c`).
pub fn path_stem(path: &str) -> &str {
    match path.rsplit_once('.') {
        Some((s, ext)) if !ext.contains('/') => s,
        _ => path,
    }
}

/// The terms of a path: its directories and its name without the extension.
pub fn path_terms(path: &str) -> Vec<String> {
    terms::terms(path_stem(path))
}

/// (term, count) pairs of a text and of a path (each path term counting `PATH_WEIGHT` times),
/// sorted, and the number of terms counted.
pub fn count_terms(text: &str, path: &str) -> (Vec<(String, u32)>, u32) {
    let mut map: HashMap<String, u32> = HashMap::with_capacity(256);
    let mut len = 0u32;
    let mut add = |t: &str, n: u32| {
        len += n;
        match map.get_mut(t) {
            Some(c) => *c += n,
            None => {
                map.insert(t.to_string(), n);
            }
        }
    };
    terms::each_term(text, |t| add(t, 1));
    for t in path_terms(path) {
        add(&t, PATH_WEIGHT);
    }
    let mut v: Vec<(String, u32)> = map.into_iter().collect();
    v.sort_unstable();
    (v, len)
}

/// The names a file defines, by the definition lines of its language (lang::defs::line_def;
/// a component's in its scripts only).
pub fn definitions(path: &str, text: &str) -> Vec<String> {
    let Some(lang) = super::regions::code_lang(path) else {
        return Vec::new();
    };
    let scripts = (lang == Lang::Component).then(|| lexer::scripts(text.as_bytes()));
    let mut defs: Vec<String> = text
        .lines()
        .enumerate()
        .filter(|(i, _)| {
            scripts
                .as_ref()
                .is_none_or(|s| s.iter().any(|s| s.code.contains(i)))
        })
        .filter_map(|(_, l)| line_def(lang, l.as_bytes()))
        .map(|d| d.1)
        .collect();
    defs.sort_unstable();
    defs.dedup();
    defs
}

/// Read what the index keeps of `text`, the content of `path`.
pub fn facts(path: &str, text: &str, prefix: &str, finder: &AhoCorasick) -> Facts {
    let (counts, len) = count_terms(text, path);
    let mut f = Facts {
        counts,
        len,
        defs: definitions(path, text),
        ..Facts::default()
    };
    let name = path.rsplit('/').next().unwrap_or(path);
    if let Some(g) = kind_of(name).imports {
        let lines: Vec<&str> = text.lines().collect();
        f.imports = imports::of_lines(g, text, &lines);
    }
    if let Some(lang) = lang_of(path) {
        f.annotations = annotate::scan(text.as_bytes(), lang, prefix, finder)
            .into_iter()
            .map(|a| (a.line, artifact_id(&a.target).to_string()))
            .collect();
    }
    f
}

/// The artifact an annotation's target names: `SPEC-001.anchor` and `SPEC-001/test` are SPEC-001.
pub fn artifact_id(target: &str) -> &str {
    target.split(['.', '/']).next().unwrap_or(target)
}

/// The text of a file read through the confined layer, or None (gone, too large, a link
/// out, not UTF-8 text: a NUL byte in its first 8 KiB).
pub fn read_text(root: &crate::tree::fs::Root, path: &str) -> Option<String> {
    let bytes = root.read(Path::new(path), MAX_FILE_BYTES).ok()?;
    if memchr::memchr(0, &bytes[..bytes.len().min(8192)]).is_some() {
        return None;
    }
    Some(
        String::from_utf8(bytes)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TempTree;

    /// Each rule applied to a file's path from its own directory, as `Rules::matched` splits
    /// the whole path: anchored lines of the root's, a nested directory's and the priority
    /// rules, at the root and deeper, with and without rules in between.
    #[test]
    fn a_directory_s_filter_decides_as_each_rule_does_on_the_whole_path() {
        let tree = TempTree::with(
            "dir-filter",
            &[
                (
                    ".gitignore",
                    "/a/b/x.py\n/top.py\na/*.rs\n!/a/b/c/keep.py\n",
                ),
                ("a/.gitignore", "/b/y.py\nb/c/*.go\n/z.py\n"),
                ("a/b/c/d/.gitignore", "/w.py\n!/x.py\n"),
                (".contextignore", "/a/b/c/d/v.py\n/a/q.py\n"),
            ],
        );
        let root = tree.path();
        let ignore = Ignore::new(root, &[]);
        let names = [
            "x.py", "y.py", "z.py", "w.py", "v.py", "q.py", "top.py", "m.rs", "k.go", "keep.py",
        ];
        let mut ignored = Vec::new();
        for dir in [".", "a", "a/b", "a/b/c", "a/b/c/d", "e"] {
            let abs = if dir == "." {
                root.to_path_buf()
            } else {
                root.join(dir)
            };
            let chain = ignore.tree.chain(&abs);
            let mut filter = DirFilter::new(&ignore, root, dir);
            for name in names {
                let path = abs.join(name);
                let whole = match ignore
                    .priority
                    .as_ref()
                    .and_then(|r| r.matched(&path, false))
                {
                    Some(v) => v,
                    None => crate::tree::ignore::decides(&chain, &path, false),
                };
                assert_eq!(!filter.admits(name, 1), whole, "{dir}/{name}");
                ignored.extend(whole.then(|| format!("{dir}/{name}")));
            }
        }
        // (rules of every directory above decided something, so the comparison meant something)
        for path in [
            "./top.py", "a/z.py", "a/q.py", "a/m.rs", "a/b/x.py", "a/b/y.py",
        ] {
            assert!(ignored.contains(&path.to_string()), "{path}: {ignored:?}");
        }
        for path in ["a/b/c/k.go", "a/b/c/d/w.py", "a/b/c/d/v.py"] {
            assert!(ignored.contains(&path.to_string()), "{path}: {ignored:?}");
        }
        assert!(!ignored.contains(&"a/b/c/keep.py".to_string()));
    }

    #[test]
    fn facts_of_a_python_file() {
        let src = "\"\"\"Load settings.\"\"\"\nimport os\nfrom .util import read_file\n\n# @spec SPEC-004.loading\ndef load_settings(path):\n    def inner():\n        pass\n    return read_file(path)\n\nclass Settings:\n    pass\n";
        let f = facts("app/config_loader.py", src, "@", &annotate::finder("@"));
        assert_eq!(f.defs, ["Settings", "inner", "load_settings"]);
        assert_eq!(
            f.imports,
            [
                Import::Python(0, "os".into()),
                Import::Python(1, "util.read_file".into())
            ]
        );
        assert_eq!(f.annotations, [(5, "SPEC-004".to_string())]);
        let count = |t: &str| f.counts.iter().find(|(x, _)| x == t).map_or(0, |c| c.1);
        assert_eq!(
            count("set"),
            3,
            "docstring, def and class (settings, setting: set)"
        );
        assert_eq!(
            count("config"),
            PATH_WEIGHT,
            "the path's words count three times"
        );
        assert_eq!(count("app"), PATH_WEIGHT);
        assert_eq!(count("py"), 0, "the extension is no word of the path");
        assert_eq!(
            f.len as usize,
            f.counts.iter().map(|c| c.1 as usize).sum::<usize>()
        );
    }

    #[test]
    fn java_definitions_whose_body_opens_below_and_no_comment_s_words() {
        let src = "class Reader {\n    /**\n     * Reads the name(s)\n     */\n    public Token next()\n        throws IOException\n    {\n        // see close(x)\n        return read(0);\n    }\n\n    int size() { return n; }\n}\n";
        assert_eq!(
            definitions("io/Reader.java", src),
            ["Reader", "next", "size"]
        );
    }

    #[test]
    fn listing_skips_links_hidden_ignored_large_and_lock_files() {
        let t = TempTree::with(
            "task-files",
            &[
                (".gitignore", "*.gen.py\n"),
                ("a.py", "x = 1\n"),
                ("b.gen.py", "x = 1\n"),
                (".hidden.py", "x = 1\n"),
                ("Cargo.lock", "x"),
                ("notes.bin", "x"),
                ("sub/c.rs", "fn c() {}\n"),
            ],
        );
        t.write("big.py", vec![b'#'; MAX_FILE_BYTES as usize + 1]);
        crate::tree::os::symlink(t.path().join("a.py"), t.path().join("link.py")).unwrap();
        let ig = Ignore::new(t.path(), &[]);
        let top = PlainDir::top(t.path()).unwrap();
        let listed = |dir: &str, ig: &Ignore| {
            let mut out = Vec::new();
            list(&top, t.path(), dir, ig, |p, k| out.push((p.to_string(), k)));
            out.sort_unstable();
            out
        };
        let root = listed(".", &ig);
        assert_eq!(root.len(), 1);
        assert_eq!(root[0].0, "a.py");
        // The key of the stat relative to the directory is the key of std's stat of the path.
        let meta = std::fs::symlink_metadata(t.path().join("a.py")).unwrap();
        assert_eq!(root[0].1, StatKey::of(&meta));
        let sub: Vec<String> = listed("sub", &ig).into_iter().map(|(p, _)| p).collect();
        assert_eq!(sub, ["c.rs"]);
        assert!(listed("gone", &ig).is_empty());
        let ig = Ignore::new(t.path(), &["sub/".to_string(), "a.py".to_string()]);
        assert!(
            listed(".", &ig).is_empty(),
            "the config's patterns hold for files too"
        );
    }
}
