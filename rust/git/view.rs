//! git's view of one root, kept between questions: the `Handle` callers hold.

use crate::git::answer::{Answer, CannotTell};
use crate::git::objects::Objects;
use crate::git::paths::{clean_path, join, os_path, under};
use crate::git::repo::{Repo, Stats};
use crate::git::status::Ask;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// git's view of one root, kept between questions.
pub struct Handle {
    root: PathBuf,
    state: Mutex<(Option<Repo>, Stats)>,
}

/// A scope ("." or "a/b", relative to the root) as a worktree-relative directory.
fn scope_dir(prefix: &[u8], scope: &str) -> Option<Vec<u8>> {
    let scope = scope.as_bytes();
    if scope == b"." {
        return Some(prefix.to_vec());
    }
    clean_path(scope).then(|| join(prefix, scope))
}

/// A worktree-relative directory as the root-relative name callers use ("." for the root).
fn scope_name(prefix: &[u8], dir: &[u8]) -> Option<Vec<u8>> {
    if dir == prefix {
        return Some(b".".to_vec());
    }
    if prefix.is_empty() {
        return Some(dir.to_vec());
    }
    dir.strip_prefix(prefix)
        .and_then(|r| r.strip_prefix(b"/"))
        .map(<[u8]>::to_vec)
}

impl Handle {
    pub fn new(root: &Path) -> Handle {
        Handle {
            root: root.to_path_buf(),
            state: Mutex::new((None, Stats::default())),
        }
    }

    /// Run `f` on the repository (opened, or opened again when it changed); any error or
    /// panic: None, and the repository is forgotten.
    fn with<T>(&self, f: impl FnOnce(&mut Repo, &mut Stats) -> Answer<T>) -> Option<T> {
        let mut guard = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let (slot, stats) = &mut *guard;
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            if !slot.as_ref().is_some_and(Repo::still_holds) {
                *slot = None;
                stats.opens += 1;
                *slot = Some(Repo::open(&self.root)?);
            }
            f(slot.as_mut().unwrap(), stats)
        }));
        match result {
            Ok(Ok(v)) => Some(v),
            Ok(Err(CannotTell)) => None,
            Err(_) => {
                *slot = None;
                None
            }
        }
    }

    /// The commit checked out, as full hex; None outside a repository or before the first commit.
    pub fn head(&self) -> Option<String> {
        self.with(|repo, _| repo.head())
    }

    /// The directories among or under `scopes` (relative to the root, "." for it) holding a
    /// file that differs from `commit` or that git neither tracks nor ignores; None when git
    /// cannot tell.
    pub fn changed_dirs(&self, commit: &str, scopes: &[String]) -> Option<Vec<PathBuf>> {
        self.with(|repo, stats| {
            let prefix = repo.prefix.clone();
            let mut tops: Vec<Vec<u8>> = scopes
                .iter()
                .map(|s| scope_dir(&prefix, s))
                .collect::<Option<_>>()
                .ok_or(CannotTell)?;
            tops.sort();
            tops.dedup_by(|b, a| under(b, a)); // a scope inside another is covered by it
            let mut ask = Ask::new(repo, stats, commit)?;
            let mut out = BTreeSet::new();
            for top in &tops {
                ask.changed_below(top, &mut out)?;
            }
            Ok(out
                .iter()
                .filter_map(|d| scope_name(&prefix, d))
                .map(|d| os_path(&d))
                .collect())
        })
    }

    /// The scopes among `scopes` whose own files (those directly in them) are as at `commit`:
    /// `changed_dirs` asked only about the scopes themselves; None when git cannot tell.
    pub fn unchanged(&self, commit: &str, scopes: &[String]) -> Option<Vec<String>> {
        self.with(|repo, stats| {
            let prefix = repo.prefix.clone();
            let mut ask = Ask::new(repo, stats, commit)?;
            let mut out = Vec::new();
            for scope in scopes {
                // A scope that cannot be one (`..`, absolute) is never unchanged.
                if let Some(dir) = scope_dir(&prefix, scope) {
                    if !ask.dir_changed(&dir)? {
                        out.push(scope.clone());
                    }
                }
            }
            Ok(out)
        })
    }

    /// Run `f` on the repository's objects (another reader of git: git/history.rs), with
    /// `pack_cache` keeping decoded delta bases while it runs (dropped after); None when there
    /// is no sound repository, `f` answers None, or it panics.
    pub fn objects<T>(
        &self,
        pack_cache: impl Fn() -> Box<gix::odb::cache::PackCache> + Send + Sync + 'static,
        f: impl FnOnce(&Objects) -> Option<T>,
    ) -> Option<T> {
        self.with(|repo, _| {
            repo.repo.objects.set_pack_cache(pack_cache);
            let out = f(&Objects { repo });
            repo.repo.objects.unset_pack_cache();
            out.ok_or(CannotTell)
        })
    }

    /// What the handle has done so far.
    pub fn stats(&self) -> Stats {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn scopes() {
        assert_eq!(scope_dir(b"sub", "."), Some(b"sub".to_vec()));
        assert_eq!(scope_dir(b"sub", "a"), Some(b"sub/a".to_vec()));
        assert_eq!(scope_dir(b"", "../x"), None);
        assert_eq!(scope_name(b"sub", b"sub"), Some(b".".to_vec()));
        assert_eq!(scope_name(b"sub", b"sub/a"), Some(b"a".to_vec()));
        assert_eq!(scope_name(b"sub", b"subway"), None);
    }
}
