//! The parallel scan of a tree into one compact table of directories.
//!
//! Directories are pruned by gitignore rules (nested `.gitignore`,
//! `.git/info/exclude`, `.contextignore`, config patterns) and by the tool and
//! vendored directories nobody edits by hand (`is_unwalked_dir`); symlinks are
//! never followed. Each directory row carries its stat fingerprint and the byte
//! size of its source files, and the dotcontext rules for which directories are
//! scopes are applied bottom-up. Hidden and `build` directories (dotcontext's
//! skip list) are walked for task context but are no scope: their rows (and those
//! beneath them) are `unscoped` and sort after every scope's row.

use crate::tree::count::FileCount;
use crate::tree::fingerprint::Lines;
use crate::tree::ignore::{self, Budget, Rules};
use crate::tree::listing::DirFiles;
use crate::tree::names::{CONFIG_FILE, CONTEXT_FILE};
use crate::tree::os::{now_ns, Key};
use crate::tree::paths::escape_name;
use rayon::prelude::*;
use std::collections::HashMap;
use std::ffi::OsString;
use std::fs;
use std::path::Path;
use std::sync::Arc;

/// Directory names dotcontext never descends into.
pub const SKIP_DIRS: &[&str] = &[
    "node_modules",
    ".git",
    "dist",
    "build",
    ".next",
    ".nuxt",
    "__pycache__",
    ".venv",
    "venv",
    ".tox",
    ".mypy_cache",
    ".pytest_cache",
    "target",
    "vendor",
    ".cache",
    "coverage",
    ".turbo",
    ".vercel",
    ".svelte-kit",
];

const SOURCE_EXTENSIONS: &[&str] = &[
    "ts",
    "tsx",
    "js",
    "jsx",
    "mjs",
    "cjs",
    "py",
    "pyi",
    "rs",
    "go",
    "java",
    "kt",
    "kts",
    "c",
    "cpp",
    "cc",
    "h",
    "hpp",
    "cs",
    "rb",
    "php",
    "swift",
    "scala",
    "ex",
    "exs",
    "hs",
    "lua",
    "r",
    "sql",
    "sh",
    "bash",
    "zsh",
    "yaml",
    "yml",
    "json",
    "toml",
    "xml",
    "html",
    "css",
    "scss",
    "md",
    "mdx",
    "txt",
    "rst",
    "vue",
    "svelte",
    "tf",
    "hcl",
    "dockerfile",
    "graphql",
    "gql",
    "proto",
];

const MEANINGFUL_FILES: &[&str] = &[
    "Dockerfile",
    "docker-compose.yaml",
    "docker-compose.yml",
    "Makefile",
    "Cargo.toml",
    "go.mod",
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "Gemfile",
    "Rakefile",
    "CMakeLists.txt",
];

/// Whether dotcontext counts a file name as source (for the token estimate).
pub fn is_source_file(name: &str) -> bool {
    if MEANINGFUL_FILES.contains(&name) {
        return true;
    }
    match name.rfind('.') {
        Some(i) => {
            let ext = &name[i + 1..];
            SOURCE_EXTENSIONS
                .iter()
                .any(|e| e.eq_ignore_ascii_case(ext))
        }
        None => false,
    }
}

/// Whether a directory name is never a scope (hidden or on the skip list).
pub fn is_skipped_dir(name: &str) -> bool {
    name.starts_with('.') || SKIP_DIRS.contains(&name)
}

/// Hidden directories of version control, of this tool, of editors and of the caches and
/// environments build tools keep in a project, which no walk enters: a repository without a
/// `.gitignore` for them would otherwise have thousands of generated files read for a task.
const TOOL_DIRS: &[&str] = &[
    ".hg",
    ".svn",
    ".jj",
    ".repoctx",
    ".idea",
    ".vscode",
    ".yarn",
    ".gradle",
    ".m2",
    ".npm",
    ".pnpm-store",
    ".parcel-cache",
    ".angular",
    ".docusaurus",
    ".expo",
    ".serverless",
    ".terraform",
    ".direnv",
    ".nox",
    ".eggs",
    ".hypothesis",
    ".ruff_cache",
    ".ipynb_checkpoints",
    ".dart_tool",
    ".stack-work",
    ".sass-cache",
];

/// Whether no walk enters a directory name: dotcontext's skip list (what package managers,
/// virtualenvs and caches write) and `TOOL_DIRS`, but not `build`: an output `build/` is
/// ignored by `.gitignore`, and a tracked one holds sources (a Cargo build script's modules).
pub fn is_unwalked_dir(name: &str) -> bool {
    (name != "build" && SKIP_DIRS.contains(&name)) || TOOL_DIRS.contains(&name) || is_git_dir(name)
}

/// Whether a name opens git's directory on some OS: `.git` in any case (APFS and NTFS ignore
/// case), with the trailing dots and spaces Windows drops, or its 8.3 name `GIT~1`.
fn is_git_dir(name: &str) -> bool {
    let name = name.trim_end_matches(['.', ' ']);
    name.eq_ignore_ascii_case(".git") || name.eq_ignore_ascii_case("git~1")
}

/// Whether directory `scope` is no scope: it or a directory above it is hidden or skipped.
pub fn is_unscoped(scope: &str) -> bool {
    scope != "." && scope.split('/').any(is_skipped_dir)
}

/// The table's order, by this key: the scopes' rows by their bytes, then the unscoped rows by
/// theirs (so the scopes' table is a prefix, as it was before unscoped rows were walked).
pub fn order_key(unscoped: bool, scope: &str) -> (bool, &[u8]) {
    (unscoped, scope.as_bytes())
}

#[derive(Clone)]
pub struct Options {
    pub extra_ignore: Vec<String>,
    pub max_depth: usize,
    pub min_tokens: i64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct DirRow {
    pub scope: String,
    pub fingerprint: String,
    pub source_bytes: u64,
    pub source_files: u32,
    pub files: u32,
    pub has_context: bool,
    /// mtime (ns) and size of `.context.yaml`, so a parsed copy can be reused while they hold.
    pub context_stat: (i64, u64),
    /// dotcontext's scan keeps a directory that has source files or a kept child.
    pub included: bool,
    /// Included and over the `min_tokens` threshold (or an ancestor of one, or the root).
    pub eligible: bool,
    /// No scope (`is_unscoped`): only task context reads its files.
    pub unscoped: bool,
}

impl DirRow {
    pub fn order_key(&self) -> (bool, &[u8]) {
        order_key(self.unscoped, &self.scope)
    }
}

/// A directory the scan had to leave out: its path (bytes that are not UTF-8 written
/// `\xNN`) and why. Its subtree is missing from the table, so people must be told.
pub type LeftOut = (String, String);

pub struct Table {
    pub rows: Vec<DirRow>,
    pub skipped: usize,
    pub unreadable: Vec<LeftOut>,
}

pub const NOT_UTF8: &str = "its name is not valid UTF-8";

pub fn child_scope(scope: &str, name: &str) -> String {
    if scope == "." {
        name.to_string()
    } else {
        format!("{}/{}", scope, name)
    }
}

/// What one directory holds, read with one `read_dir` and one stat per regular file.
struct Listing {
    row: DirRow,
    gitignore: Gitignore,
    children: Vec<OsString>,
    /// Its regular files named in UTF-8 (not `.context.yaml`), when the walk keeps them.
    kept: Option<DirFiles>,
}

/// What a directory's listing shows named `.gitignore`.
#[derive(Clone, Copy, PartialEq)]
enum Gitignore {
    None,
    File,
    /// A link: the walk prunes no directory by it, but the file filter has always read it
    /// (`ignore::Tree`, through the confined layer: only a link that stays in its directory).
    Link,
}

/// What a walk asked to keep them (`walk_keeping`) keeps: each directory's files (sorted by
/// scope) and the rules in force for them, and when the walk began: its stat keys are as fresh
/// as a listing begun then (the racy window is counted from `at`).
pub struct Kept {
    pub at: i64,
    /// `.contextignore` and the config's patterns, over every other rule.
    pub priority: Option<Arc<Rules>>,
    pub dirs: Vec<KeptDir>,
}

/// One directory's files as the walk listed them, with the rules `ignore::Tree::chain` would
/// find for them (read once by the walk, not again by the file filter).
pub struct KeptDir {
    pub scope: String,
    pub files: DirFiles,
    pub chain: Vec<Arc<Rules>>,
}

fn mtime_ns(meta: &fs::Metadata) -> i64 {
    crate::tree::os::Meta::stat(meta).mtime_ns()
}

fn read_listing(abs: &Path, scope: &str, keep: bool) -> std::io::Result<Listing> {
    let mut lines = Lines::default();
    let mut row = DirRow {
        scope: scope.to_string(),
        fingerprint: String::new(),
        source_bytes: 0,
        source_files: 0,
        files: 0,
        has_context: false,
        context_stat: (0, 0),
        included: false,
        eligible: false,
        unscoped: is_unscoped(scope),
    };
    let mut gitignore = Gitignore::None;
    let mut children = Vec::new();
    let mut kept = keep.then(DirFiles::default);
    for entry in fs::read_dir(abs)? {
        let Ok(entry) = entry else { continue };
        let Ok(ft) = entry.file_type() else { continue };
        // Named once: its bytes borrowed as text when they are UTF-8 (a million names a walk).
        let os_name = entry.file_name();
        let name = os_name.to_string_lossy();
        if ft.is_file() {
            // A file removed between readdir and stat is skipped, as a racing writer would leave it.
            let Ok(meta) = entry.metadata() else { continue };
            if name == CONTEXT_FILE {
                row.has_context = true;
                row.context_stat = (mtime_ns(&meta), meta.len());
                if let Some(k) = &mut kept {
                    k.set_context(Key::of(&meta));
                }
                continue;
            }
            if let (Some(k), Some(utf8)) = (&mut kept, os_name.to_str()) {
                k.push(utf8, Key::of(&meta));
            }
            if name == ".gitignore" {
                gitignore = Gitignore::File;
            }
            lines.push(&name, &meta);
            if name != CONFIG_FILE && is_source_file(&name) {
                row.source_files += 1;
                row.source_bytes += meta.len();
            }
        } else if ft.is_dir() && !is_unwalked_dir(&name) {
            children.push(entry.file_name());
        } else if ft.is_symlink() && name == ".gitignore" {
            gitignore = Gitignore::Link;
        }
    }
    row.files = lines.len() as u32;
    row.fingerprint = lines.digest();
    if let Some(k) = &mut kept {
        k.shrink();
    }
    Ok(Listing {
        row,
        gitignore,
        children,
        kept,
    })
}

/// The row of one directory on its own (for a change inside a known directory).
pub fn read_row(abs: &Path, scope: &str) -> std::io::Result<DirRow> {
    read_listing(abs, scope, false).map(|l| l.row)
}

/// The rules in force at a directory: `.git/info/exclude`, then each `.gitignore` down to it.
type Matchers = Vec<Arc<Rules>>;

/// The rules in force at a directory for its subdirectories and, when the walk keeps them,
/// for its files: the same, and a `.gitignore` that is a link (`Gitignore::Link`).
#[derive(Clone, Default)]
struct InForce {
    dirs: Matchers,
    files: Matchers,
}

fn is_ignored(priority: &Option<Arc<Rules>>, stack: &Matchers, path: &Path) -> bool {
    ignore::decides(priority.iter().chain(stack.iter().rev()), path, true)
}

/// Called with each directory just before it is read (to place a watch on it first).
pub type OnDir<'a> = &'a (dyn Fn(&Path, &str) + Sync);

struct Ctx<'a> {
    priority: Option<Arc<Rules>>,
    budget: &'a Budget,
    max_depth: usize,
    on_dir: Option<OnDir<'a>>,
    /// Whether each directory's files are kept (`walk_keeping`).
    keep: bool,
    /// Told each directory's count of files as it is listed.
    count: Option<&'a FileCount>,
}

/// What a walk of a subtree found: rows, directories left out, and the files kept.
#[derive(Default)]
struct Found {
    rows: Vec<DirRow>,
    bad: Vec<LeftOut>,
    kept: Vec<KeptDir>,
}

fn scan_dir(ctx: &Ctx, abs: &Path, scope: &str, depth: usize, parent: &InForce, out: &mut Found) {
    if let Some(hook) = ctx.on_dir {
        hook(abs, scope);
    }
    let listing = match read_listing(abs, scope, ctx.keep) {
        Ok(l) => l,
        Err(e) => {
            out.bad.push((scope.to_string(), e.to_string()));
            return;
        }
    };
    if let Some(count) = ctx.count {
        count.add(listing.row.files.into());
    }
    let mut rules = parent.clone();
    let own = match listing.gitignore {
        Gitignore::Link if !ctx.keep => None,
        Gitignore::None => None,
        _ => ignore::from_file(abs, &abs.join(".gitignore"), ctx.budget),
    };
    if listing.gitignore == Gitignore::File {
        rules.dirs.extend(own.clone());
    }
    if ctx.keep {
        rules.files.extend(own);
    }
    out.rows.push(listing.row);
    out.kept.extend(listing.kept.map(|files| KeptDir {
        scope: scope.to_string(),
        files,
        chain: rules.files.iter().rev().cloned().collect(),
    }));
    if depth >= ctx.max_depth {
        return;
    }
    let parts: Vec<Found> = listing
        .children
        .par_iter()
        .filter_map(|os_name| {
            let child_abs = abs.join(os_name);
            if is_ignored(&ctx.priority, &rules.dirs, &child_abs) {
                return None;
            }
            // Scopes are UTF-8 strings everywhere else (JSON, YAML, MCP); such a directory
            // cannot be one, so it is left out and named, not renamed.
            let Some(name) = os_name.to_str() else {
                let path = child_scope(scope, &escape_name(os_name));
                return Some(Found {
                    bad: vec![(path, NOT_UTF8.to_string())],
                    ..Found::default()
                });
            };
            let child_scope = child_scope(scope, name);
            let mut found = Found::default();
            scan_dir(ctx, &child_abs, &child_scope, depth + 1, &rules, &mut found);
            Some(found)
        })
        .collect();
    for part in parts {
        out.rows.extend(part.rows);
        out.bad.extend(part.bad);
        out.kept.extend(part.kept);
    }
}

/// How many rows of a table in `order_key`'s order are the scopes' (the rest are unscoped).
pub fn scoped(rows: &[DirRow]) -> usize {
    rows.partition_point(|r| !r.unscoped)
}

pub fn parent_scope(scope: &str) -> &str {
    scope.rsplit_once('/').map_or(".", |(p, _)| p)
}

/// dotcontext's rules over a table in `order_key`'s order: a directory is included
/// when it has source files or an included child, and eligible (kept) when it
/// is the root, meets `min_tokens`, or has a kept child; an unscoped one is neither.
/// Returns the skipped count.
pub fn apply_rules(rows: &mut [DirRow], min_tokens: i64) -> usize {
    let n = scoped(rows);
    let rows = &mut rows[..n];
    let index: HashMap<&str, usize> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| (r.scope.as_str(), i))
        .collect();
    // A prefix sorts before its extensions, so reverse byte order visits children before parents.
    let mut child_included = vec![false; rows.len()];
    let mut child_kept = vec![false; rows.len()];
    let mut parents = vec![None; rows.len()];
    for (i, r) in rows.iter().enumerate() {
        if r.scope != "." {
            parents[i] = index.get(parent_scope(&r.scope)).copied();
        }
    }
    drop(index);
    for i in (0..rows.len()).rev() {
        let r = &mut rows[i];
        let is_root = r.scope == ".";
        r.included = is_root || r.source_files > 0 || child_included[i];
        let tokens = r.source_bytes.div_ceil(4) as i64;
        r.eligible =
            r.included && (is_root || min_tokens <= 0 || tokens >= min_tokens || child_kept[i]);
        if let Some(p) = parents[i] {
            child_included[p] |= r.included;
            child_kept[p] |= r.eligible;
        }
    }
    rows.iter().filter(|r| r.included && !r.eligible).count()
}

/// The rules that hold at the root: `.contextignore` and config patterns (over any
/// `.gitignore`), and `.git/info/exclude` at the bottom of the stacks.
fn root_rules(root: &Path, opts: &Options, budget: &Budget) -> (Option<Arc<Rules>>, InForce) {
    let rules = ignore::root_rules(root, &opts.extra_ignore, budget);
    let base: Matchers = rules.exclude.into_iter().collect();
    let files = base.clone();
    (rules.priority, InForce { dirs: base, files })
}

/// Scan `root` into a table in `order_key`'s order.
pub fn walk(root: &Path, opts: &Options, on_dir: Option<OnDir>) -> std::io::Result<Table> {
    scan(root, opts, on_dir, false, None).map(|(table, _)| table)
}

/// `walk`, keeping each directory's files as it listed them (`Kept`), and adding each one's
/// count of files to `count` as it goes (closing it is the caller's).
pub fn walk_keeping(
    root: &Path,
    opts: &Options,
    count: Option<&FileCount>,
) -> std::io::Result<(Table, Kept)> {
    let (table, mut kept) = scan(root, opts, None, true, count)?;
    kept.dirs.sort_unstable_by(|a, b| a.scope.cmp(&b.scope));
    Ok((table, kept))
}

fn scan(
    root: &Path,
    opts: &Options,
    on_dir: Option<OnDir>,
    keep: bool,
    count: Option<&FileCount>,
) -> std::io::Result<(Table, Kept)> {
    let at = now_ns(); // before any stat: the racy window of the files kept counts from here
    fs::read_dir(root)?; // the root itself must be readable: that failure is global
    let budget = Budget::new();
    let (priority, base) = root_rules(root, opts, &budget);
    let ctx = Ctx {
        priority,
        budget: &budget,
        max_depth: opts.max_depth,
        on_dir,
        keep,
        count,
    };
    let mut found = Found::default();
    scan_dir(&ctx, root, ".", 0, &base, &mut found);
    let Ctx { priority, .. } = ctx;
    let Found {
        mut rows,
        bad: mut unreadable,
        kept,
    } = found;
    rows.sort_unstable_by(|a, b| a.order_key().cmp(&b.order_key()));
    let skipped = apply_rules(&mut rows, opts.min_tokens);
    unreadable.sort();
    let table = Table {
        rows,
        skipped,
        unreadable,
    };
    let kept = Kept {
        at,
        priority,
        dirs: kept,
    };
    Ok((table, kept))
}

/// The rows (unsorted, before `apply_rules`) and left-outs of directory `scope` and its
/// subtree, as `walk` would find them given that `scope`'s parent is in its table; empty
/// when `walk` would not reach `scope` (gone, a link, ignored, unwalked or too deep).
pub fn walk_subtree(
    root: &Path,
    opts: &Options,
    scope: &str,
    on_dir: Option<OnDir>,
) -> (Vec<DirRow>, Vec<LeftOut>) {
    let abs = root.join(scope);
    let depth = scope.split('/').count();
    let name = scope.rsplit('/').next().unwrap_or(scope);
    let is_dir = fs::symlink_metadata(&abs).is_ok_and(|m| m.is_dir());
    if !is_dir || depth > opts.max_depth || is_unwalked_dir(name) {
        return (Vec::new(), Vec::new());
    }
    let budget = Budget::new();
    let (priority, mut rules) = root_rules(root, opts, &budget);
    // The `.gitignore` of every ancestor, as scan_dir stacks them on the way down.
    let parts: Vec<&str> = scope.split('/').collect();
    for k in 0..depth {
        let dir = if k == 0 {
            root.to_path_buf()
        } else {
            root.join(parts[..k].join("/"))
        };
        let file = dir.join(".gitignore");
        if fs::symlink_metadata(&file).is_ok_and(|m| m.is_file()) {
            rules.dirs.extend(ignore::from_file(&dir, &file, &budget));
        }
    }
    if is_ignored(&priority, &rules.dirs, &abs) {
        return (Vec::new(), Vec::new());
    }
    let ctx = Ctx {
        priority,
        budget: &budget,
        max_depth: opts.max_depth,
        on_dir,
        keep: false,
        count: None,
    };
    let mut found = Found::default();
    scan_dir(&ctx, &abs, scope, depth, &rules, &mut found);
    (found.rows, found.bad)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::testing::TempTree;
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;

    fn opts() -> Options {
        Options {
            extra_ignore: vec![],
            max_depth: 10,
            min_tokens: 0,
        }
    }

    #[test]
    fn a_directory_named_in_bytes_that_are_not_utf8_is_left_out_and_named() {
        let root = TempTree::with("walk", &[(".gitignore", "y*/\n")]);
        let odd = Path::new("a").join(OsStr::from_bytes(b"x\xe9"));
        root.mkdir(odd.join("deep"));
        root.write(odd.join("m.py"), "x");
        // Ignored ones are not worth a word, whatever their names.
        root.mkdir(OsStr::from_bytes(b"y\xff"));
        let table = walk(&root, &opts(), None).unwrap();
        let scopes: Vec<&str> = table.rows.iter().map(|r| r.scope.as_str()).collect();
        assert_eq!(scopes, [".", "a"]);
        assert_eq!(
            table.unreadable,
            [("a/x\\xe9".to_string(), NOT_UTF8.to_string())]
        );
    }
    #[test]
    fn hidden_and_build_directories_are_walked_unscoped_after_the_scopes() {
        let root = TempTree::with(
            "walk",
            &[
                ("src/a.rs", "x"),
                ("docs/.vitepress/config/zh.ts", "x"),
                ("build/mapping.rs", "x"),
                (".git/hooks/h.py", "x"),
                (".idea/w.py", "x"),
                (".gradle/caches/k.java", "x"),
                ("node_modules/p/i.js", "x"),
            ],
        );
        let table = walk(&root, &opts(), None).unwrap();
        let rows: Vec<(&str, bool, bool)> = table
            .rows
            .iter()
            .map(|r| (r.scope.as_str(), r.unscoped, r.included))
            .collect();
        // `docs` holds only a hidden directory: its source makes no scope of it.
        assert_eq!(
            rows,
            [
                (".", false, true),
                ("docs", false, false),
                ("src", false, true),
                ("build", true, false),
                ("docs/.vitepress", true, false),
                ("docs/.vitepress/config", true, false),
            ]
        );
    }

    #[test]
    fn the_running_count_of_a_walk_is_its_tables_count_of_files() {
        let root = TempTree::with(
            "walk-count",
            &[
                (".gitignore", "gen/\n"),
                ("a/m.py", "x"),
                ("a/b/n.rs", "x"),
                ("a/b/.context.yaml", "version: 1\n"),
                ("gen/skipped.py", "x"),
                (".hidden/h.py", "x"),
                ("node_modules/p/i.js", "x"),
                ("README.md", "x"),
            ],
        );
        let count = FileCount::default();
        let (table, _) = walk_keeping(&root, &opts(), Some(&count)).unwrap();
        let files: u64 = table.rows.iter().map(|r| u64::from(r.files)).sum();
        assert_eq!(
            files, 5,
            "the context file, ignored and unwalked directories not counted"
        );
        // Not closed: a reader of the count goes on at once up to it, and waits past it.
        assert!(count.reaches(files));
        std::thread::scope(|s| {
            let further = s.spawn(|| count.reaches(files + 1));
            std::thread::sleep(std::time::Duration::from_millis(50));
            assert!(
                !further.is_finished(),
                "the count is no more than the table's"
            );
            count.close(Some(files));
            assert!(!further.join().unwrap());
        });
    }

    #[test]
    fn a_kept_listing_has_the_stat_key_of_a_context_file_never_of_a_link() {
        let root = TempTree::with(
            "walk-context-key",
            &[("a/.context.yaml", "version: 1\n"), ("b/m.py", "x")],
        );
        std::os::unix::fs::symlink("../a/.context.yaml", root.join("b/.context.yaml")).unwrap();
        let (_, kept) = walk_keeping(&root, &opts(), None).unwrap();
        let context: Vec<(&str, Option<Key>)> = kept
            .dirs
            .iter()
            .map(|d| (d.scope.as_str(), d.files.context()))
            .collect();
        let meta = fs::symlink_metadata(root.join("a/.context.yaml")).unwrap();
        assert_eq!(
            context,
            [(".", None), ("a", Some(Key::of(&meta))), ("b", None)]
        );
    }

    #[test]
    fn a_kept_directory_s_rules_decide_for_its_files_as_the_tree_s_chain() {
        let root = TempTree::with(
            "walk-kept-rules",
            &[
                (".gitignore", "*.log\n!keep.log\n"),
                ("a/.gitignore", "gen_*\n"),
                ("a/b/rules", "!gen_ok\n*.tmp\nc/\n"),
                ("a/b/c/m.py", "x"),
                ("d/m.py", "x"),
                ("outside", "*.py\n"),
            ],
        );
        std::os::unix::fs::symlink("rules", root.join("a/b/.gitignore")).unwrap();
        std::os::unix::fs::symlink("../outside", root.join("d/.gitignore")).unwrap();
        let (_, kept) = walk_keeping(&root, &opts(), None).unwrap();
        let scopes: Vec<&str> = kept.dirs.iter().map(|d| d.scope.as_str()).collect();
        // A `.gitignore` that is a link prunes no directory (`a/b/c` is walked) ...
        assert_eq!(scopes, [".", "a", "a/b", "a/b/c", "d"]);
        let tree = ignore::Tree::new(&root);
        let names = ["m.py", "x.log", "keep.log", "gen_a", "gen_ok", "t.tmp", "c"];
        let mut ignored = Vec::new();
        for d in &kept.dirs {
            let dir = root.join(&d.scope);
            let chain = tree.chain(&dir);
            for name in names {
                let path = dir.join(name);
                let walked = ignore::decides(&d.chain, &path, false);
                assert_eq!(walked, ignore::decides(&chain, &path, false), "{path:?}");
                ignored.extend(walked.then(|| format!("{}/{name}", d.scope)));
            }
        }
        // ... but holds for files, as the tree's chain has it; a link out is never read.
        assert!(ignored.contains(&"a/b/c/t.tmp".to_string()));
        assert!(!ignored.contains(&"a/b/gen_ok".to_string()));
        assert!(!ignored.contains(&"d/m.py".to_string()));
    }

    #[test]
    fn git_s_directory_is_never_walked_under_any_name_an_os_opens_it_by() {
        for name in [".git", ".GIT", ".Git", ".git.", ".git ", "GIT~1", "git~1"] {
            assert!(is_unwalked_dir(name), "{name}");
        }
        for name in [
            ".github",
            ".gitlab",
            "git",
            ".git-hooks",
            ".vitepress",
            "build",
        ] {
            assert!(!is_unwalked_dir(name), "{name}");
        }
    }
}
