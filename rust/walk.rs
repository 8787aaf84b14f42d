//! The parallel scan of a tree into one compact table of directories.
//!
//! Directories are pruned by gitignore rules (nested `.gitignore`,
//! `.git/info/exclude`, `.contextignore`, config patterns), dotcontext's fixed
//! skip list and hidden names; symlinks are never followed. Each directory row
//! carries its stat fingerprint and the byte size of its source files, and the
//! dotcontext rules for which directories are scopes are applied bottom-up.

use crate::fingerprint::{digest, entry_line, CONTEXT_FILE};
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::Match;
use rayon::prelude::*;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub const CONFIG_FILE: &str = ".context.config.yaml";

/// Directory names dotcontext never descends into.
pub const SKIP_DIRS: &[&str] = &[
    "node_modules", ".git", "dist", "build", ".next", ".nuxt", "__pycache__", ".venv", "venv",
    ".tox", ".mypy_cache", ".pytest_cache", "target", "vendor", ".cache", "coverage", ".turbo",
    ".vercel", ".svelte-kit",
];

const SOURCE_EXTENSIONS: &[&str] = &[
    "ts", "tsx", "js", "jsx", "mjs", "cjs", "py", "pyi", "rs", "go", "java", "kt", "kts", "c",
    "cpp", "cc", "h", "hpp", "cs", "rb", "php", "swift", "scala", "ex", "exs", "hs", "lua", "r",
    "sql", "sh", "bash", "zsh", "yaml", "yml", "json", "toml", "xml", "html", "css", "scss", "md",
    "mdx", "txt", "rst", "vue", "svelte", "tf", "hcl", "dockerfile", "graphql", "gql", "proto",
];

const MEANINGFUL_FILES: &[&str] = &[
    "Dockerfile", "docker-compose.yaml", "docker-compose.yml", "Makefile", "Cargo.toml", "go.mod",
    "pyproject.toml", "setup.py", "setup.cfg", "Gemfile", "Rakefile", "CMakeLists.txt",
];

/// Whether dotcontext counts a file name as source (for the token estimate).
pub fn is_source_file(name: &str) -> bool {
    if MEANINGFUL_FILES.contains(&name) {
        return true;
    }
    match name.rfind('.') {
        Some(i) => {
            let ext = name[i + 1..].to_ascii_lowercase();
            SOURCE_EXTENSIONS.contains(&ext.as_str())
        }
        None => false,
    }
}

pub struct Options {
    pub extra_ignore: Vec<String>,
    pub max_depth: usize,
    pub min_tokens: i64,
}

#[derive(Debug, Clone)]
pub struct DirRow {
    pub scope: String,
    pub fingerprint: String,
    pub source_bytes: u64,
    pub files: u32,
    pub has_context: bool,
    /// dotcontext's scan keeps a directory that has source files or a kept child.
    pub included: bool,
    /// Included and over the `min_tokens` threshold (or an ancestor of one, or the root).
    pub eligible: bool,
}

pub struct Table {
    pub rows: Vec<DirRow>,
    pub skipped: usize,
    pub unreadable: Vec<String>,
}

struct Subtree {
    rows: Vec<DirRow>,
    unreadable: Vec<String>,
    included: bool,
    kept: bool,
}

type Matchers = Vec<Arc<Gitignore>>;

fn build_matcher(root: &Path, files: &[PathBuf], lines: &[String]) -> Option<Arc<Gitignore>> {
    let mut b = GitignoreBuilder::new(root);
    let mut any = false;
    for f in files {
        if f.is_file() {
            // A malformed line is skipped by the builder's own rules; a read error means no rules.
            let _ = b.add(f);
            any = true;
        }
    }
    for l in lines {
        if b.add_line(None, l).is_ok() {
            any = true;
        }
    }
    if !any {
        return None;
    }
    b.build().ok().map(Arc::new)
}

fn is_ignored(priority: &Option<Arc<Gitignore>>, stack: &Matchers, path: &Path) -> bool {
    if let Some(m) = priority {
        match m.matched(path, true) {
            Match::Ignore(_) => return true,
            Match::Whitelist(_) => return false,
            Match::None => {}
        }
    }
    for m in stack.iter().rev() {
        match m.matched(path, true) {
            Match::Ignore(_) => return true,
            Match::Whitelist(_) => return false,
            Match::None => {}
        }
    }
    false
}

fn tokens(bytes: u64) -> i64 {
    bytes.div_ceil(4) as i64
}

struct Ctx {
    priority: Option<Arc<Gitignore>>,
    opts: Options,
}

fn scan_dir(ctx: &Ctx, abs: &Path, scope: &str, depth: usize, parent: &Matchers) -> Result<Subtree, std::io::Error> {
    let reader = fs::read_dir(abs)?;
    let mut lines = Vec::new();
    let mut source_bytes = 0u64;
    let mut source_files = 0u32;
    let mut has_context = false;
    let mut has_gitignore = false;
    let mut children: Vec<(std::ffi::OsString, String)> = Vec::new();
    for entry in reader {
        let Ok(entry) = entry else { continue };
        let Ok(ft) = entry.file_type() else { continue };
        let name = entry.file_name().to_string_lossy().into_owned();
        if ft.is_file() {
            if name == CONTEXT_FILE {
                has_context = true;
                continue;
            }
            if name == ".gitignore" {
                has_gitignore = true;
            }
            let Ok(meta) = entry.metadata() else { continue };
            lines.push(entry_line(&name, &meta));
            if name != CONFIG_FILE && is_source_file(&name) {
                source_files += 1;
                source_bytes += meta.len();
            }
        } else if ft.is_dir() && !name.starts_with('.') && !SKIP_DIRS.contains(&name.as_str()) {
            children.push((entry.file_name(), name));
        }
    }
    let mut stack = parent.clone();
    if has_gitignore {
        if let Some(m) = build_matcher(abs, &[abs.join(".gitignore")], &[]) {
            stack.push(m);
        }
    }
    let subtrees: Vec<(String, Result<Subtree, std::io::Error>)> = if depth < ctx.opts.max_depth {
        children
            .par_iter()
            .filter_map(|(os_name, name)| {
                let child_abs = abs.join(os_name);
                if is_ignored(&ctx.priority, &stack, &child_abs) {
                    return None;
                }
                let child_scope = if scope == "." { name.clone() } else { format!("{}/{}", scope, name) };
                let sub = scan_dir(ctx, &child_abs, &child_scope, depth + 1, &stack);
                Some((child_scope, sub))
            })
            .collect()
    } else {
        Vec::new()
    };

    let mut rows = Vec::new();
    let mut unreadable = Vec::new();
    let mut child_included = false;
    let mut child_kept = false;
    for (child_scope, sub) in subtrees {
        match sub {
            Ok(s) => {
                child_included |= s.included;
                child_kept |= s.kept;
                rows.extend(s.rows);
                unreadable.extend(s.unreadable);
            }
            Err(_) => unreadable.push(child_scope),
        }
    }
    let is_root = scope == ".";
    let included = is_root || source_files > 0 || child_included;
    let threshold = ctx.opts.min_tokens;
    let kept = included && (is_root || threshold <= 0 || tokens(source_bytes) >= threshold || child_kept);
    let files = lines.len() as u32;
    rows.push(DirRow {
        scope: scope.to_string(),
        fingerprint: digest(lines),
        source_bytes,
        files,
        has_context,
        included,
        eligible: kept,
    });
    Ok(Subtree { rows, unreadable, included, kept })
}

/// Scan `root` into a table sorted by scope bytes.
pub fn walk(root: &Path, opts: Options) -> Result<Table, std::io::Error> {
    let priority = build_matcher(root, &[root.join(".contextignore")], &opts.extra_ignore);
    let base: Matchers = build_matcher(root, &[root.join(".git").join("info").join("exclude")], &[])
        .into_iter()
        .collect();
    let ctx = Ctx { priority, opts };
    let sub = scan_dir(&ctx, root, ".", 0, &base)?;
    let mut rows = sub.rows;
    rows.sort_unstable_by(|a, b| a.scope.as_bytes().cmp(b.scope.as_bytes()));
    let skipped = rows.iter().filter(|r| r.included && !r.eligible).count();
    let mut unreadable = sub.unreadable;
    unreadable.sort();
    Ok(Table { rows, skipped, unreadable })
}
