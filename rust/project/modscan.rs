//! The module scan behind `repoctx project init|scan`: for each module
//! directory, its key files by role and the import specifiers of its sources.
//!
//! Each module is walked once (gitignore-aware, hidden names and the fixed
//! skip list pruned, symlinks not followed, other modules' directories left to
//! them); source files are then read in parallel, at most `HEAD_BYTES` each,
//! since imports sit at the top. Results come back per module, never per file.

use crate::lang::imports::{self, Import};
use crate::lang::kind_of;
use crate::tree::ignore::{self as ignore_rules, Tree};
use crate::tree::walk::SKIP_DIRS;
use ignore::WalkState;
use rayon::prelude::*;
use std::collections::BTreeSet;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Imports are at the head of a file; reading further costs time for nothing.
const HEAD_BYTES: u64 = 16 * 1024;
const MAX_ENTRY: usize = 2;
const MAX_CONFIG: usize = 2;
const MAX_CORE: usize = 3;
const MAX_TEST: usize = 2;

/// Entry points, best first; found at most `ENTRY_DEPTH` directories below the module.
const ENTRY_NAMES: &[&str] = &[
    "__main__.py",
    "main.py",
    "cli.py",
    "app.py",
    "server.py",
    "manage.py",
    "main.rs",
    "lib.rs",
    "main.go",
    "index.ts",
    "index.tsx",
    "index.js",
    "index.mjs",
    "main.ts",
    "main.js",
    "server.ts",
    "server.js",
    "app.ts",
    "app.js",
    "__init__.py",
];
const ENTRY_DEPTH: usize = 2;

/// Configuration, best first; found at the module's top or one level below.
const CONFIG_NAMES: &[&str] = &[
    "pyproject.toml",
    "Cargo.toml",
    "package.json",
    "go.mod",
    "setup.py",
    "setup.cfg",
    "tsconfig.json",
    "settings.py",
    "config.py",
    "config.ts",
    "config.js",
    "Dockerfile",
];

#[derive(Debug, Default, PartialEq)]
pub struct ModuleScan {
    /// Source files of a programming language (not docs or data).
    pub code_files: u32,
    /// (repo-relative path, role) with role in entry, config, core, test; in that order.
    pub key_files: Vec<(String, &'static str)>,
    /// Sorted, unique: "py:a.b", "js:spec", "rs:crate", "go:path", or "mod:N" for a relative
    /// import that lands in module N.
    pub imports: Vec<String>,
    /// The module directory, or one above it, is ignored by the gitignore rules.
    pub ignored: bool,
}

struct FileInfo {
    rel: String,  // relative to the repository root, with `/`
    depth: usize, // directories between the module and the file
    name: String,
    size: u64,
}

/// A file of a programming language, by the one table (crate::lang::FileKind::code).
fn is_code(name: &str) -> bool {
    kind_of(name).code
}

fn is_test(f: &FileInfo) -> bool {
    crate::lang::is_test_path(&f.rel)
}

fn rank(names: &[&str], name: &str) -> usize {
    names.iter().position(|n| *n == name).unwrap_or(names.len())
}

fn is_config(f: &FileInfo) -> bool {
    f.depth <= 1
        && (CONFIG_NAMES.contains(&f.name.as_str())
            || (f.depth == 0
                && [".config.js", ".config.ts", ".config.mjs", ".config.cjs"]
                    .iter()
                    .any(|s| f.name.ends_with(s))))
}

fn is_entry(f: &FileInfo) -> bool {
    ENTRY_NAMES.contains(&f.name.as_str())
        && (f.depth <= ENTRY_DEPTH || (f.name == "main.go" && f.depth <= 3))
}

fn pick(
    mut cands: Vec<&FileInfo>,
    max: usize,
    role: &'static str,
    out: &mut Vec<(String, &'static str)>,
) {
    cands.retain(|f| !out.iter().any(|(p, _)| *p == f.rel));
    out.extend(cands.into_iter().take(max).map(|f| (f.rel.clone(), role)));
}

fn key_files(files: &[FileInfo]) -> Vec<(String, &'static str)> {
    let mut out = Vec::new();
    let mut entries: Vec<&FileInfo> = files
        .iter()
        .filter(|f| is_entry(f) && !is_test(f))
        .collect();
    entries.sort_by(|a, b| {
        (a.depth, rank(ENTRY_NAMES, &a.name), &a.rel).cmp(&(
            b.depth,
            rank(ENTRY_NAMES, &b.name),
            &b.rel,
        ))
    });
    pick(entries, MAX_ENTRY, "entry", &mut out);
    let mut configs: Vec<&FileInfo> = files.iter().filter(|f| is_config(f)).collect();
    configs.sort_by(|a, b| {
        (a.depth, rank(CONFIG_NAMES, &a.name), &a.rel).cmp(&(
            b.depth,
            rank(CONFIG_NAMES, &b.name),
            &b.rel,
        ))
    });
    pick(configs, MAX_CONFIG, "config", &mut out);
    // The largest sources carry most of a module's logic; ties go to the smaller path.
    let by_size =
        |a: &&FileInfo, b: &&FileInfo| b.size.cmp(&a.size).then_with(|| a.rel.cmp(&b.rel));
    let mut core: Vec<&FileInfo> = files
        .iter()
        .filter(|f| is_code(&f.name) && !is_test(f))
        .collect();
    core.sort_by(by_size);
    pick(core, MAX_CORE, "core", &mut out);
    let mut tests: Vec<&FileInfo> = files
        .iter()
        .filter(|f| is_code(&f.name) && is_test(f))
        .collect();
    tests.sort_by(by_size);
    pick(tests, MAX_TEST, "test", &mut out);
    out
}

/// `a/b/../c` → `a/c`; None when it climbs above the repository root.
fn normalize(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            _ => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

fn parent(rel: &str) -> &str {
    rel.rfind('/').map(|i| &rel[..i]).unwrap_or("")
}

fn join(dir: &str, rest: &str) -> String {
    if dir.is_empty() {
        rest.to_string()
    } else {
        format!("{dir}/{rest}")
    }
}

/// Import specifiers of one file's head, read by the shared grammar (crate::lang::imports):
/// "py:a.b", "js:spec", "rs:crate", "go:path", or "path:dir/x" for a relative import,
/// resolved against the file's directory. Paths inside the same crate are left out.
pub fn imports_of(rel: &str, text: &str) -> Vec<String> {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let Some(g) = kind_of(name).imports else {
        return Vec::new();
    };
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for import in imports::of_lines(g, text, &lines) {
        match import {
            Import::Python(0, module) => out.push(format!("py:{module}")),
            Import::Python(level, module) => {
                let mut dir = parent(rel);
                for _ in 1..level {
                    dir = parent(dir);
                }
                if let Some(p) = normalize(&join(dir, &module.replace('.', "/"))) {
                    out.push(format!("path:{p}"));
                }
            }
            Import::Js(spec) => {
                if spec.starts_with("./") || spec.starts_with("../") || spec == "." || spec == ".."
                {
                    if let Some(p) = normalize(&join(parent(rel), &spec)) {
                        out.push(format!("path:{p}"));
                    }
                } else {
                    out.push(format!("js:{spec}"));
                }
            }
            Import::Rust(segs) => {
                let first = segs[0].as_str();
                if !matches!(first, "crate" | "self" | "super")
                    && !imports::RUST_BUILTIN.contains(&first)
                {
                    out.push(format!("rs:{first}"));
                }
            }
            Import::Go(path) => out.push(format!("go:{path}")),
        }
    }
    out
}

fn read_head(path: &Path) -> Option<String> {
    let mut buf = Vec::new();
    File::open(path)
        .ok()?
        .take(HEAD_BYTES)
        .read_to_end(&mut buf)
        .ok()?;
    Some(String::from_utf8_lossy(&buf).into_owned())
}

/// The deepest module whose directory holds `path` (both repository-relative).
fn owner(dirs: &[String], path: &str) -> Option<usize> {
    dirs.iter()
        .enumerate()
        .filter(|(_, d)| d.is_empty() || path == d.as_str() || path.starts_with(&format!("{d}/")))
        .max_by_key(|(_, d)| d.len())
        .map(|(i, _)| i)
}

/// One walker thread's files, handed over once when the thread is done with them.
struct Collector<'a> {
    items: Vec<FileInfo>,
    out: &'a Mutex<Vec<FileInfo>>,
}

impl Drop for Collector<'_> {
    fn drop(&mut self) {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        out.append(&mut self.items);
    }
}

fn list_files(
    root: &Path,
    dir: &str,
    others: Arc<Vec<PathBuf>>,
    rules: Arc<Tree>,
) -> Vec<FileInfo> {
    let abs = if dir.is_empty() {
        root.to_path_buf()
    } else {
        root.join(dir)
    };
    // The ignore rules come from `rules`, shared by every module's walk: each file read once.
    let walker = ignore_rules::lister(&abs)
        .filter_entry(move |e| {
            let is_dir = e.file_type().is_some_and(|t| t.is_dir());
            if e.depth() == 0 {
                return true;
            }
            let name = e.file_name().to_string_lossy();
            let kept = !is_dir
                || (!SKIP_DIRS.contains(&name.as_ref()) && !others.iter().any(|o| o == e.path()));
            kept && !rules.ignores(e.path(), is_dir)
        })
        .build_parallel();
    let found = Mutex::new(Vec::new());
    walker.run(|| {
        let abs = &abs;
        let mut collector = Collector {
            items: Vec::new(),
            out: &found,
        };
        Box::new(move |entry| {
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            let Ok(inner) = entry.path().strip_prefix(abs) else {
                return WalkState::Continue;
            };
            let inner = inner.to_string_lossy().replace('\\', "/");
            collector.items.push(FileInfo {
                rel: join(dir, &inner),
                depth: inner.matches('/').count(),
                name: entry.file_name().to_string_lossy().into_owned(),
                size: entry.metadata().map(|m| m.len()).unwrap_or(0),
            });
            WalkState::Continue
        })
    });
    let mut files = found.into_inner().unwrap_or_else(|e| e.into_inner());
    files.sort_by(|a, b| a.rel.cmp(&b.rel));
    files
}

/// Scan each module directory (repository-relative, "" for the root).
pub fn scan_modules(root: &Path, dirs: &[String]) -> Vec<ModuleScan> {
    let dirs: Vec<String> = dirs
        .iter()
        .map(|d| normalize(d).unwrap_or_default())
        .collect();
    let rules = Arc::new(Tree::new(root));
    dirs.par_iter()
        .enumerate()
        .map(|(i, dir)| {
            let ignored = !dir.is_empty() && rules.prunes(&root.join(dir));
            // Modules nested inside this one are scanned as themselves.
            let others: Vec<PathBuf> = dirs
                .iter()
                .enumerate()
                .filter(|(j, d)| {
                    *j != i && d.len() > dir.len() && owner(std::slice::from_ref(dir), d).is_some()
                })
                .map(|(_, d)| root.join(d))
                .collect();
            let files = list_files(root, dir, Arc::new(others), rules.clone());
            let code_files = files.iter().filter(|f| is_code(&f.name)).count() as u32;
            let found: BTreeSet<String> = files
                .par_iter()
                .filter(|f| is_code(&f.name))
                .flat_map_iter(|f| {
                    read_head(&root.join(&f.rel))
                        .map(|t| imports_of(&f.rel, &t))
                        .unwrap_or_default()
                })
                .collect();
            let imports = found
                .into_iter()
                .filter_map(|s| match s.strip_prefix("path:") {
                    Some(p) => owner(&dirs, p)
                        .filter(|&m| m != i)
                        .map(|m| format!("mod:{m}")),
                    None => Some(s),
                })
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            ModuleScan {
                code_files,
                key_files: key_files(&files),
                imports,
                ignored,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TempTree;

    #[test]
    fn python_imports_absolute_and_relative() {
        let got = imports_of(
            "src/app/auth/views.py",
            "import os, app.users as u\nfrom app.billing import x\nfrom ..users import y\nfrom . import z\n  from .models import M\n",
        );
        assert_eq!(
            got,
            // `from a import b` may name a submodule: the longest known prefix is kept by the caller.
            [
                "py:os",
                "py:app.users",
                "py:app.billing.x",
                "path:src/app/users/y",
                "path:src/app/auth/z",
                "path:src/app/auth/models/M"
            ]
        );
    }

    #[test]
    fn js_imports_cover_import_export_require_and_dynamic() {
        let text = "import a from '@acme/ui';\nimport './side.css'\nexport { b } from \"../lib/b\";\nconst c = require('lodash');\nconst d = await import(`./d`);\n} from 'react';\n// import x from 'nope'\nconst reimport = 1;\n";
        assert_eq!(
            imports_of("packages/web/src/index.ts", text),
            [
                "js:@acme/ui",
                "path:packages/web/src/side.css",
                "path:packages/web/lib/b",
                "js:lodash",
                "path:packages/web/src/d",
                "js:react"
            ]
        );
    }

    #[test]
    fn rust_and_go_imports() {
        assert_eq!(
            imports_of("a/src/lib.rs", "use std::fs;\npub use core_types::Thing;\npub(crate) use crate::x;\nextern crate serde;\nuse ::log;\n"),
            ["rs:core_types", "rs:serde", "rs:log"]
        );
        assert_eq!(
            imports_of("cmd/x/main.go", "package main\nimport \"fmt\"\nimport (\n\t\"example.com/m/internal/auth\"\n\tdb \"example.com/m/internal/db\"\n)\n"),
            ["go:fmt", "go:example.com/m/internal/auth", "go:example.com/m/internal/db"]
        );
    }

    #[test]
    fn relative_paths_never_climb_above_the_root() {
        assert_eq!(
            imports_of("a.js", "import x from '../../out'"),
            Vec::<String>::new()
        );
        assert_eq!(normalize("a/./b/../c"), Some("a/c".into()));
    }

    #[test]
    fn key_files_by_role_and_nested_modules_left_out() {
        let dir = TempTree::new("modscan");
        dir.write("app/__init__.py", "from .core import run\n");
        dir.write("app/__main__.py", "import app\n");
        dir.write("app/core.py", "x = 1\n".repeat(50));
        dir.write("app/small.py", "from lib import y\n");
        dir.write("app/tests/test_core.py", "import app\n");
        dir.write("app/settings.py", "DEBUG = True\n");
        dir.write("app/node_modules/dep/index.js", "require('x')\n");
        dir.write("app/lib/__init__.py", "import json\n");
        dir.write("out/gen.py", "");
        dir.write(".gitignore", "out/\n");
        let scans = scan_modules(&dir, &["app".into(), "app/lib".into(), "out".into()]);
        let app = &scans[0];
        assert_eq!(app.code_files, 6);
        assert_eq!(
            app.key_files,
            [
                ("app/__main__.py".to_string(), "entry"),
                ("app/__init__.py".to_string(), "entry"),
                ("app/settings.py".to_string(), "config"),
                ("app/core.py".to_string(), "core"),
                ("app/small.py".to_string(), "core"),
                ("app/tests/test_core.py".to_string(), "test"),
            ]
        );
        // `from .core import run` stays inside the module: no dependency on itself.
        assert_eq!(app.imports, ["py:app", "py:lib.y"]);
        assert_eq!(scans[1].code_files, 1);
        assert_eq!(scans[1].imports, ["py:json"]);
        assert!(scans[2].ignored && !app.ignored);
    }
}
