//! The import graph: each file's imports (read by the one grammar per language,
//! rust/lang/imports.rs) resolved to files of the repository where a file answers to them.
//!
//! Every file gets a module path from its own path: `src/pkg/util.py` is `src pkg util`
//! (`__init__` left out), `crates/x/src/rules/mod.rs` is `crates x rules` (`src`, `lib`,
//! `main` and `mod` left out), `web/src/cart/index.ts` is `web src cart`, and a Go file
//! is its directory. An import is a list of segments (`a.b.c`, `crate::a::b`, `./cart`,
//! `example.com/m/pkg`), with relative forms (`.`, `..`, `crate`, `self`, `super`) first
//! made absolute from the importing file. It resolves to the file whose module path ends
//! with the longest run of its leading segments (trailing ones may name a class or a
//! function inside the module): at least two segments must meet, or the whole import when
//! it has one segment and the file sits beside the importer. Imports of packages outside
//! the repository resolve to nothing.

use crate::lang::imports::Import;
use foldhash::fast::RandomState;
use hashbrown::HashTable;
use std::hash::BuildHasher;

/// The module path of a file, as imports name it; empty when no import can name it.
pub fn module_path(path: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    module_path_into(path, &mut parts);
    parts
}

/// `module_path` into `parts` (cleared first): `resolve` reads the module path of every
/// candidate of every import of the tree, and allocating each was most of its cost.
fn module_path_into<'a>(path: &'a str, parts: &mut Vec<&'a str>) {
    parts.clear();
    let Some((stem, ext)) = path.rsplit_once('.') else {
        return;
    };
    if ext.contains('/') {
        return;
    }
    parts.extend(stem.split('/'));
    match ext {
        "py" | "pyi" => {
            if parts.last() == Some(&"__init__") {
                parts.pop();
            }
        }
        "rs" => {
            if matches!(parts.last(), Some(&"lib") | Some(&"main") | Some(&"mod")) {
                parts.pop();
            }
            parts.retain(|p| *p != "src");
        }
        "ts" | "tsx" | "js" | "jsx" | "mjs" | "cjs" | "mts" | "cts" => {
            if parts.last() == Some(&"index") {
                parts.pop();
            }
        }
        "go" => {
            parts.pop();
        }
        _ => parts.clear(),
    }
}

/// Files by the last segment of their module path: a table of file numbers hashed by that
/// segment, each read from its file's path when the table grows (tasks/paths.rs's way). A map
/// from each segment to a list of files held a copy of the segment and a list of its own for
/// nearly every file (two allocations, about 100 bytes a file on the synthetic tree).
///
/// Hashes are foldhash's, seeded per process: a repository cannot choose names that collide.
#[derive(Default)]
pub struct Modules {
    ids: HashTable<u32>,
    keys: RandomState,
}

/// The last segment of a file's module path, if an import can name it.
fn last_segment(path: &str) -> Option<&str> {
    module_path(path).last().copied()
}

impl Modules {
    /// Room for `n` more files.
    pub fn reserve<'p>(&mut self, n: usize, path_of: impl Fn(u32) -> &'p str) {
        let keys = &self.keys;
        self.ids
            .reserve(n, |&held| keys.hash_one(last_segment(path_of(held))));
    }

    /// Hold file `id` at `path`; `path_of` reads a held number's path.
    pub fn add<'p>(&mut self, id: u32, path: &str, path_of: impl Fn(u32) -> &'p str) {
        let Some(last) = last_segment(path) else {
            return;
        };
        let hash = self.keys.hash_one(Some(last));
        if self.ids.find(hash, |&held| held == id).is_none() {
            let keys = &self.keys;
            self.ids
                .insert_unique(hash, id, |&held| keys.hash_one(last_segment(path_of(held))));
        }
    }

    pub fn remove(&mut self, id: u32, path: &str) {
        if let Some(last) = last_segment(path) {
            let hash = self.keys.hash_one(Some(last));
            if let Ok(entry) = self.ids.find_entry(hash, |&held| held == id) {
                entry.remove();
            }
        }
    }

    pub fn heap_bytes(&self) -> usize {
        self.ids.allocation_size()
    }

    /// The files an import of `from` names (several for a Go package), at most `MAX_EACH`.
    pub fn resolve<'a>(
        &self,
        from: &str,
        import: &Import,
        path_of: &dyn Fn(u32) -> Option<&'a str>,
    ) -> Vec<u32> {
        let Some(segs) = absolute(from, import) else {
            return Vec::new();
        };
        let from_dir = from.rsplit_once('/').map_or("", |(d, _)| d);
        let mut m: Vec<&str> = Vec::new();
        for k in (1..=segs.len()).rev() {
            // Files whose segment only shares the hash meet none of `want` (met 0): not enough.
            let cands = self
                .ids
                .iter_hash(self.keys.hash_one(Some(segs[k - 1].as_str())));
            let want = &segs[..k];
            let mut best: Vec<(usize, usize, &str, u32)> = Vec::new(); // (met, extra, path, id)
            for &id in cands {
                let Some(p) = path_of(id) else { continue };
                if p == from {
                    continue;
                }
                module_path_into(p, &mut m);
                let met = m
                    .iter()
                    .rev()
                    .zip(want.iter().rev())
                    .take_while(|(a, b)| **a == b.as_str())
                    .count();
                let beside = p.rsplit_once('/').map_or("", |(d, _)| d) == from_dir;
                let enough = met >= 2
                    || (met == k && segs.len() == 1 && beside)
                    || (met == k && relative(import));
                if enough {
                    let extra = m.len() - met;
                    best.push((met, extra, p, id));
                }
            }
            if !best.is_empty() {
                let top = best.iter().map(|b| b.0).max().unwrap_or(0);
                best.retain(|b| b.0 == top);
                // Ties by path, never by number: numbers depend on the order files were seen.
                best.sort_unstable_by(|a, b| a.1.cmp(&b.1).then_with(|| a.2.cmp(b.2)));
                let go = matches!(import, Import::Go(_));
                return best
                    .into_iter()
                    .take(if go { MAX_EACH } else { 1 })
                    .map(|b| b.3)
                    .collect();
            }
        }
        Vec::new()
    }
}

/// A Go package's files at most, as neighbours of one import.
pub const MAX_EACH: usize = 5;

fn relative(import: &Import) -> bool {
    match import {
        Import::Python(level, _) => *level > 0,
        Import::Js(s) => s.starts_with('.'),
        Import::Rust(segs) => matches!(
            segs.first().map(String::as_str),
            Some("crate" | "self" | "super")
        ),
        Import::Go(_) => false,
    }
}

/// The import's segments, made absolute from the importing file `from`; None when it
/// leaves the repository (`..` above the root).
pub fn absolute(from: &str, import: &Import) -> Option<Vec<String>> {
    let dir: Vec<&str> = from
        .rsplit_once('/')
        .map_or(Vec::new(), |(d, _)| d.split('/').collect());
    let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<String>>();
    match import {
        Import::Python(level, name) => {
            let mut out = if *level > 0 {
                let up = level - 1;
                if up > dir.len() {
                    return None;
                }
                owned(&dir[..dir.len() - up])
            } else {
                Vec::new()
            };
            out.extend(name.split('.').filter(|s| !s.is_empty()).map(String::from));
            (!out.is_empty()).then_some(out)
        }
        Import::Js(spec) => {
            if spec.starts_with('.') {
                let mut out = owned(&dir);
                for part in spec.split('/') {
                    match part {
                        "." | "" => {}
                        ".." => {
                            out.pop()?;
                        }
                        p => out.push(p.to_string()),
                    }
                }
                if let Some(last) = out.last_mut() {
                    for ext in [".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs"] {
                        if let Some(s) = last.strip_suffix(ext) {
                            *last = s.to_string();
                            break;
                        }
                    }
                    if last == "index" {
                        out.pop();
                    }
                }
                (!out.is_empty()).then_some(out)
            } else {
                let out: Vec<String> = spec
                    .split('/')
                    .filter(|s| !s.is_empty() && !s.starts_with('@'))
                    .map(String::from)
                    .collect();
                (!out.is_empty()).then_some(out)
            }
        }
        Import::Rust(segs) => {
            let module = module_path(from);
            // The module of this file, and the crate it belongs to (its path before `src/`).
            let crate_lib = match from.find("src/") {
                Some(i) if i == 0 || from.as_bytes()[i - 1] == b'/' => {
                    format!("{}lib.rs", &from[..i + 4])
                }
                _ => String::new(),
            };
            let crate_root = module_path(&crate_lib);
            let mut out: Vec<String> = Vec::new();
            let mut rest = segs.as_slice();
            match rest.first().map(String::as_str) {
                Some("crate") => {
                    out = owned(&crate_root);
                    rest = &rest[1..];
                }
                Some("self") | Some("super") => {
                    out = owned(&module);
                    while let Some(s) = rest.first() {
                        match s.as_str() {
                            "self" => {}
                            "super" => {
                                out.pop()?;
                            }
                            _ => break,
                        }
                        rest = &rest[1..];
                    }
                }
                _ => {}
            }
            out.extend(rest.iter().cloned());
            (!out.is_empty()).then_some(out)
        }
        Import::Go(path) => {
            let out: Vec<String> = path
                .split('/')
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect();
            (!out.is_empty()).then_some(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(paths: &[&str]) -> (Modules, Vec<String>) {
        let mut m = Modules::default();
        for (i, p) in paths.iter().enumerate() {
            m.add(i as u32, p, |id| paths[id as usize]);
        }
        (m, paths.iter().map(|s| s.to_string()).collect())
    }

    fn resolved(paths: &[&str], from: &str, import: Import) -> Vec<String> {
        let (m, owned) = table(paths);
        let path_of = |id: u32| owned.get(id as usize).map(String::as_str);
        m.resolve(from, &import, &path_of)
            .into_iter()
            .map(|i| owned[i as usize].clone())
            .collect()
    }

    #[test]
    fn a_go_package_links_to_its_first_files_by_path_whatever_their_numbers() {
        let files: Vec<String> = (0..8).map(|i| format!("svc/api/f{i}.go")).collect();
        let mut m = Modules::default();
        for (i, p) in files.iter().enumerate().rev() {
            m.add(100 - i as u32, p, |id| &files[100 - id as usize]); // numbered and added backwards
        }
        let path_of = |id: u32| files.get(100 - id as usize).map(String::as_str);
        let got: Vec<String> = m
            .resolve(
                "svc/db/c.go",
                &Import::Go("example.com/m/svc/api".into()),
                &path_of,
            )
            .into_iter()
            .filter_map(|id| path_of(id).map(String::from))
            .collect();
        assert_eq!(got, files[..MAX_EACH]);
    }

    #[test]
    fn module_paths() {
        assert_eq!(module_path("src/pkg/util.py"), ["src", "pkg", "util"]);
        assert_eq!(module_path("pkg/__init__.py"), ["pkg"]);
        assert_eq!(
            module_path("crates/x/src/rules/mod.rs"),
            ["crates", "x", "rules"]
        );
        assert_eq!(module_path("crates/x/src/lib.rs"), ["crates", "x"]);
        assert_eq!(module_path("web/cart/index.ts"), ["web", "cart"]);
        assert_eq!(module_path("svc/api/h.go"), ["svc", "api"]);
        assert!(module_path("README.md").is_empty());
    }

    /// Files come and go (numbers reused, the table growing past its first size): every
    /// import resolves as in a table made afresh from the files held at the end.
    #[test]
    fn resolves_as_a_fresh_table_after_files_came_and_went() {
        let mut paths: Vec<Option<String>> = Vec::new();
        let mut m = Modules::default();
        let mut free = Vec::new();
        let mut next = crate::testing::numbers(11);
        for _ in 0..3000 {
            let p = format!("p{}/m{}.py", next(6), next(40));
            match paths.iter().position(|q| q.as_deref() == Some(p.as_str())) {
                Some(id) if next(3) == 0 => {
                    m.remove(id as u32, &p);
                    paths[id] = None;
                    free.push(id);
                }
                Some(_) => {}
                None => {
                    let id = free.pop().unwrap_or_else(|| {
                        paths.push(None);
                        paths.len() - 1
                    });
                    let held = &paths;
                    m.add(id as u32, &p, |i| held[i as usize].as_deref().unwrap_or(""));
                    paths[id] = Some(p);
                }
            }
        }
        let mut fresh = Modules::default();
        for (id, p) in paths.iter().enumerate() {
            if let Some(p) = p {
                fresh.add(id as u32, p, |i| paths[i as usize].as_deref().unwrap_or(""));
            }
        }
        let path_of = |id: u32| paths.get(id as usize).and_then(|p| p.as_deref());
        for d in 0..6 {
            for n in 0..40 {
                let import = Import::Python(0, format!("p{d}.m{n}"));
                let got = m.resolve("q/x.py", &import, &path_of);
                assert_eq!(got, fresh.resolve("q/x.py", &import, &path_of), "{d} {n}");
                let held = paths
                    .iter()
                    .flatten()
                    .any(|p| *p == format!("p{d}/m{n}.py"));
                assert_eq!(got.len(), held as usize, "{d} {n}");
            }
        }
    }

    #[test]
    fn python_absolute_relative_and_names_inside_modules() {
        let files = [
            "src/shop/cart.py",
            "src/shop/__init__.py",
            "src/shop/pay/stripe.py",
            "other/cart.py",
            "tools/os.py",
        ];
        assert_eq!(
            resolved(
                &files,
                "src/shop/app.py",
                Import::Python(0, "shop.cart.Cart".into())
            ),
            ["src/shop/cart.py"]
        );
        assert_eq!(
            resolved(&files, "src/shop/app.py", Import::Python(1, "cart".into())),
            ["src/shop/cart.py"]
        );
        assert_eq!(
            resolved(
                &files,
                "src/shop/pay/x.py",
                Import::Python(2, "cart.total".into())
            ),
            ["src/shop/cart.py"]
        );
        assert_eq!(
            resolved(
                &files,
                "src/shop/app.py",
                Import::Python(0, "shop.pay.stripe".into())
            ),
            ["src/shop/pay/stripe.py"]
        );
        // One segment meets only a file beside the importer: `import os` is not tools/os.py.
        assert!(resolved(&files, "src/shop/app.py", Import::Python(0, "os".into())).is_empty());
        assert_eq!(
            resolved(&files, "tools/run.py", Import::Python(0, "os".into())),
            ["tools/os.py"]
        );
        assert!(
            resolved(&files, "a.py", Import::Python(3, "x".into())).is_empty(),
            "above the root"
        );
    }

    #[test]
    fn rust_crate_self_super_and_other_crates() {
        let files = [
            "crates/lint/src/lib.rs",
            "crates/lint/src/rules/mod.rs",
            "crates/lint/src/rules/unused.rs",
            "crates/ast/src/nodes.rs",
        ];
        let r = |from: &str, segs: &[&str]| {
            resolved(
                &files,
                from,
                Import::Rust(segs.iter().map(|s| s.to_string()).collect()),
            )
        };
        assert_eq!(
            r(
                "crates/lint/src/lib.rs",
                &["crate", "rules", "unused", "check"]
            ),
            ["crates/lint/src/rules/unused.rs"]
        );
        assert_eq!(
            r("crates/lint/src/rules/unused.rs", &["super", "Rule"]),
            ["crates/lint/src/rules/mod.rs"]
        );
        assert_eq!(
            r("crates/lint/src/rules/mod.rs", &["self", "unused"]),
            ["crates/lint/src/rules/unused.rs"]
        );
        assert_eq!(
            r("crates/lint/src/lib.rs", &["ast", "nodes", "Expr"]),
            ["crates/ast/src/nodes.rs"]
        );
        assert!(r("crates/lint/src/lib.rs", &["std", "collections", "HashMap"]).is_empty());
    }

    #[test]
    fn js_relative_specifiers_and_go_packages() {
        let files = [
            "web/src/cart/index.ts",
            "web/src/api.ts",
            "svc/api/a.go",
            "svc/api/b.go",
            "svc/db/c.go",
        ];
        assert_eq!(
            resolved(&files, "web/src/app.ts", Import::Js("./cart".into())),
            ["web/src/cart/index.ts"]
        );
        assert_eq!(
            resolved(&files, "web/src/cart/x.ts", Import::Js("../api.js".into())),
            ["web/src/api.ts"]
        );
        assert!(resolved(&files, "web/src/app.ts", Import::Js("react".into())).is_empty());
        assert_eq!(
            resolved(
                &files,
                "svc/db/c.go",
                Import::Go("example.com/m/svc/api".into())
            ),
            ["svc/api/a.go", "svc/api/b.go"]
        );
    }
}
